"""Result and metadata types shared by every metric (no metric logic here)."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Callable, ClassVar, Iterable, Iterator, Literal, Mapping, Sequence

Direction = Literal["higher", "lower", "none"]
Kind = Literal["score", "bool", "label"]


class Details(Mapping[str, Any]):
    """Base of a metric's typed details: what it checked and found on one row, as a frozen record.

    A subclass is a ``@dataclass(frozen=True, eq=False)`` whose fields are the evidence, in the order they are
    saved. It reads as the JSON object the runner writes once into ``<metric>_details``
    (:func:`evalkit.base.data.details_cell`), so a reader of saved results and a caller holding the record see the
    same keys; fields named in ``_optional`` are left out while None (a ``reason`` only when there is one),
    unless ``_kept()`` names them for this record (a judge's reason is saved even when the judge gave none).
    Equality is the mapping's: a record equals the dict it is saved as.

    >>> @dataclass(frozen=True, eq=False)
    ... class Found(Details):
    ...     _optional = frozenset({"reason"})
    ...     terms: tuple[str, ...]
    ...     reason: str | None = None
    >>> d = Found(("Lyon",))
    >>> dict(d), d["terms"], d.get("reason"), d == {"terms": ("Lyon",)}
    ({'terms': ('Lyon',)}, ('Lyon',), None, True)
    """

    _optional: ClassVar[frozenset[str]] = frozenset()

    def _kept(self) -> frozenset[str]:
        """The optional fields this record saves even while None (none by default)."""
        return frozenset()

    def _keys(self) -> list[str]:
        kept = self._kept()
        return [f.name for f in fields(self)
                if f.name not in self._optional or getattr(self, f.name) is not None or f.name in kept]

    def __getitem__(self, key: str) -> Any:
        # membership without listing every key (a subclass's _keys may reorder them, never add one)
        if isinstance(key, str) and key in self.__dataclass_fields__:
            value = getattr(self, key)
            if value is not None or key not in self._optional or key in self._kept():
                return value
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())


class FrozenMap(Mapping[str, Any]):
    """A read-only mapping for evidence whose keys are data, not a record's fields (a detector's features by
    name); picklable, unlike ``types.MappingProxyType``, so a record holding one crosses to a worker process.

    >>> m = FrozenMap({"support": 0.25})
    >>> m["support"], dict(m), m == {"support": 0.25}
    (0.25, {'support': 0.25}, True)
    """

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any]):
        object.__setattr__(self, "_data", dict(data))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"FrozenMap is read-only (cannot set {name!r})")

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"

    def __reduce__(self):
        return FrozenMap, (self._data,)


def freeze(value: Any) -> Any:
    """Evidence as a judge or a parser gave it, made read-only all the way down: a dict as a :class:`FrozenMap`,
    a list as a tuple (a record, a text or a number as it is).

    >>> freeze({"verdict": 1, "spans": ["a", "b"]})
    FrozenMap({'verdict': 1, 'spans': ('a', 'b')})
    """
    if isinstance(value, Details):
        return value
    if isinstance(value, Mapping):
        return FrozenMap({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


@dataclass(frozen=True, eq=False)
class Repeated(Details):
    """A metric's details over repeated judge calls: the first determined repeat's details, then every repeat's
    value (None: undetermined or failed) and the failed repeats' errors. It reads and saves as one flat object,
    the inner keys first (``{"claims": ..., "repeats": [80.0, None, 100.0]}``); the runner checks the inner
    details against the metric's declared type.

    >>> r = Repeated(Undetermined("no ground truth"), (None, None))
    >>> dict(r), r["reason"]
    ({'reason': 'no ground truth', 'repeats': (None, None)}, 'no ground truth')
    """

    inner: Mapping[str, Any]
    repeats: tuple[Any, ...]
    repeat_errors: tuple[str, ...] | None = None

    def _keys(self) -> list[str]:
        own = ["repeats"] + (["repeat_errors"] if self.repeat_errors else [])
        return [k for k in self.inner if k not in own] + own

    def __getitem__(self, key: str) -> Any:
        if key == "repeats" or (key == "repeat_errors" and self.repeat_errors):
            return getattr(self, key)
        if key in self.inner:
            return self.inner[key]
        raise KeyError(key)


@dataclass(frozen=True, eq=False)
class NoEvidence(Details):
    """The details of a metric whose value is its whole evidence (an exact match, a cosine): saved as ``{}``, or
    with the reason when the value was set without comparing (0 for an empty ground truth)."""

    _optional = frozenset({"reason"})
    reason: str | None = None


@dataclass(frozen=True, eq=False)
class Undetermined(Details):
    """Why a metric gives no value on a row: an empty answer, an answer in another language (``language``: the
    detected code), no contexts, no ground truth or nothing in it to compare.

    >>> dict(Undetermined("not English (detected: de)", "de"))
    {'reason': 'not English (detected: de)', 'language': 'de'}
    """

    _optional = frozenset({"language"})
    reason: str
    language: str | None = None


@dataclass(frozen=True, eq=False)
class Declined(Undetermined):
    """An answer that declines to answer, left undetermined by a metric that checks claims (there are none):
    the reason, and the declining phrases matched.

    >>> dict(Declined("an abstention makes no claim to check", matched=("i don't know",)))
    {'reason': 'an abstention makes no claim to check', 'abstention': True, 'matched': ("i don't know",)}
    """

    abstention: bool = True
    matched: tuple[str, ...] = ()


@dataclass(frozen=True)
class Score:
    """One metric's result on one row.

    ``value`` is a float/bool/label, or None when the metric is *undetermined*
    for this row (``details["reason"]`` says why; aggregates count such rows
    instead of averaging a NaN). ``details`` is the evidence (what was checked and found): a
    :class:`Details` record for a metric that declares its type (``Metric.details``), else a JSON-serialisable
    mapping. ``stats`` holds the row's typed sufficient statistics (e.g.
    :class:`evalkit.metrics.stats.AnchorSupport`) for metrics that declare them, from which
    corpus-level (micro) values are summed.
    """

    value: float | bool | str | None
    details: Mapping[str, Any] = field(default_factory=dict)
    stats: Any = None


BatchFn = Callable[[Mapping[str, Sequence[Any]], Mapping[str, Any], Any], list[Score]]


Flag = Literal["above", "below"]


@dataclass(frozen=True)
class VerdictRole:
    """The part a metric plays in the verdict (:mod:`evalkit.decide.verdict`): one rule, declared with the metric.

    Attributes
    ----------
    order : the verdict checks rules by ascending ``order`` (first match wins); a calibrated profile's
        rules on metrics without a role run at :data:`evalkit.decide.verdict.PROFILE_ORDER`.
    flag : 'above' or 'below': the side of the threshold that triggers the outcome.
    outcome : 'FAIL' or 'WARN'.
    threshold : the :class:`evalkit.base.config.VerdictThresholds` field that holds the cut value.
    inclusive : whether a value on the threshold triggers (the seed's rules are strict).
    on_threshold : ``(cut value, why)`` pairs: how a row comes to sit exactly on that cut value, said where the
        report counts the rows a strict rule lets through on its threshold.
    profile : the named verdict profile the rule belongs to: 'seed' (the seed documents' word-overlap triad,
        kept exact) or 'evalkit' (the default, validated against careful readers).
    """

    order: int
    flag: Flag
    outcome: Literal["FAIL", "WARN"]
    threshold: str
    inclusive: bool = False
    on_threshold: tuple[tuple[float, str], ...] = ()
    profile: str = "seed"


_LAZY_FIELDS = frozenset({"fn", "batch", "evidence", "worked", "details"})


def resolve(target: str) -> Callable[..., Any]:
    """The object a ``"package.module:attribute"`` string names, imported now.

    >>> resolve("math:sqrt")(9.0)
    3.0
    """
    import importlib

    module, _, attr = target.partition(":")
    if not module or not attr:
        raise ValueError(f"expected 'module:function', got {target!r}")
    return getattr(importlib.import_module(module), attr)



class NoWorkedExample(Exception):
    """A metric's arithmetic (``Metric.worked``) cannot be worked through under the run's settings; the message
    says why."""

@dataclass(frozen=True, eq=False)  # a metric is itself: comparing fields would import every lazy implementation
class Metric:
    """A registered metric: a pure per-row function plus what the runner, verdict, tables and plots read.

    Attributes
    ----------
    name : registry name, also the output column.
    fn : per-row function ``fn(**inputs, **params) -> Score`` on plain strings (a built-in's is declared beside
        it, in its module's ``METRICS``), or where to find it, ``"module:function"``, imported on first use.
    needs : canonical columns the metric reads (required).
    optional : canonical columns passed when present (e.g. ``question_type``).
    better : which end of the scale is better: 'higher', 'lower', or 'none' (labels). A rule's side that is
        flagged is another word, ``flag`` ('above'/'below', :class:`evalkit.base.thresholds.Threshold`).
    range : closed interval of the value, which is also the scale a person reads it on (0..1, 0..100,
        0..10: values are stored as shown, never rescaled for display); None for labels.
    kind : 'score', 'bool' or 'label'.
    batch : optional column-wise implementation giving the same numbers faster (a function or
        ``"module:function"``, as ``fn``).
    resources : shared resources it needs ('nlp', ...), loaded once by the runner.
    params : config keys it reads from ``EvalConfig.params_for(name)``.
    family : documentation grouping.
    formula : how the value is computed, in one line: the one place it is written (``evalkit metrics``
        and the README's tables print it).
    empty_policy : what the metric returns for empty/None inputs.
    extra_columns : detail keys also written as columns ``<name>_<key>`` (e.g. a letter grade).
    derived : True when ``needs`` names other metrics' output columns (the runner runs those first).
    unit : what one step of the value is, when the scale alone does not say (``"words"``, ``"probability"``).
    verdict_role : the rule the verdict applies to this metric, or None.
    evidence_keys : detail keys worth reading beside the value (:func:`evalkit.decide.aggregate.evidence_table`).
    in_words : one sentence saying a row's value in words (the quick start shows it beside the verdict): a format
        string over ``value`` and the fields of its ``stats`` (the row's ``<name>_<field>`` columns, as integers);
        said only when those are present and the counted whole is not zero. Empty: nothing said.
    evidence : the reader of its details into typed records (:mod:`evalkit.metrics.evidence`: anchors, claims,
        aligned sentences, ...), a function or ``"module:function"``; the evidence view reads a row through it.
    worked : the arithmetic behind one scored row's value, in Markdown (``worked(row, params, name) -> str``; the
        triad notebooks work through a typical, a failing and a borderline row with it), a function or
        ``"module:function"`` (a built-in's lives beside the metric); None: no worked examples.
    details : the :class:`Details` type of its ``Score.details`` (or ``"module:Class"``), checked by the runner on
        every row (:class:`Undetermined` is always allowed: a row it never judged); None: a plain mapping.
    stats : the :mod:`evalkit.metrics.stats` type of the row's sufficient statistics (``Score.stats``),
        written as integer columns ``<name>_<field>`` and summed to a micro value; None for none.
    english_only : its rules are English word lists or an English parser (stop words, question keywords,
        spaCy's English model, uncertainty phrases, source indicators), so an answer in another language is
        undetermined (:mod:`evalkit.metrics.guard`).
    cites : BibTeX keys of the publications the metric follows (its method, or the model it runs by default);
        the declaring module's ``REFERENCES`` holds their entries, and :mod:`evalkit.publish.paper` cites them in
        the methods paragraph.
    """

    name: str
    fn: Callable[..., Score]
    needs: tuple[str, ...]
    better: Direction
    range: tuple[float, float] | None
    kind: Kind = "score"
    optional: tuple[str, ...] = ()
    batch: BatchFn | None = None
    resources: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    family: str = ""
    formula: str = ""
    empty_policy: str = ""
    extra_columns: tuple[str, ...] = ()
    derived: bool = False
    unit: str = ""
    verdict_role: VerdictRole | None = None
    evidence_keys: tuple[str, ...] = ()
    evidence: Callable[[Mapping[str, Any], str], Any] | None = None
    worked: Callable[[Mapping[str, Any], Mapping[str, Any], str], str] | None = None
    in_words: str = ""
    details: type | None = None
    stats: type | None = None
    english_only: bool = False
    cites: tuple[str, ...] = ()

    def __getattribute__(self, name: str) -> Any:
        value = object.__getattribute__(self, name)
        if name in _LAZY_FIELDS and isinstance(value, str):
            return resolve(value)  # the module's function as it is now (an import after the first is a lookup)
        return value

    @property
    def display_scale(self) -> str:
        """The scale a person reads the value on: ``'0..1'``, ``'0..100'``, ``'0..10'``, ``'0 or more'``,
        ``'true/false'`` or ``'label'`` (a boolean's mean, the share of True, is read on 0..1).

        >>> Metric("m", str, (), "higher", (0.0, 100.0)).display_scale
        '0..100'
        """
        if self.kind == "bool":
            return "true/false"
        if self.range is None:
            return "label"
        lo, hi = self.range
        return f"{lo:g} or more" if hi == float("inf") else f"{lo:g}..{hi:g}"

    @property
    def reads_as(self) -> str:
        """Scale, unit and better side in words, as the README's tables show them.

        >>> Metric("risk", str, (), "lower", (0.0, 1.0), unit="probability").reads_as
        '0..1 probability, lower is better'
        """
        text = f"{self.display_scale} {self.unit}".strip()
        return text + (f", {self.better} is better" if self.better in ("higher", "lower") else "")

    @property
    def direction(self) -> Direction:
        """The old name of :attr:`better` (which end is better), kept for code written before the rename."""
        return self.better


def markdown_table(metrics: Iterable[Metric]) -> str:
    """The metrics as a Markdown table: family, metric, how its value reads, formula.

    ``evalkit metrics --markdown`` prints this for the registry; the README's table is that output.

    Examples
    --------
    >>> print(markdown_table([Metric("relevance", str, (), "higher", (0.0, 1.0), family="triad",
    ...                              formula="(cosine + Jaccard) / 2")]))
    | family | metric | value | formula |
    |---|---|---|---|
    | triad | `relevance` | 0..1, higher is better | (cosine + Jaccard) / 2 |
    """
    lines = ["| family | metric | value | formula |", "|---|---|---|---|"]
    for m in metrics:
        # a pipe inside a cell would end it early
        cells = (m.family, f"`{m.name}`", m.reads_as, m.formula.replace("|", "\\|"))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
