"""The metric registry's overlays: metrics registered beside the built-ins, and the rules that keep them from
surprising anyone (see :mod:`evalkit.metrics.custom`).

Two layers, for two kinds of registration:

* a Python function given to :func:`register_metric` is registered for the process (the user asked for it, once);
* a config's custom metrics belong to the run: they are this *thread's* config metrics, set when a run's config is
  activated (or a results file's definitions read), so two runs in two threads each score and read their own, and
  neither loading a config nor reading a results file changes what another thread sees.

Light on purpose: the registry is read by every run and by ``import evalkit``'s core, and none of this imports a
metric's implementation.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any, Callable, Iterator, Mapping, MutableMapping, Sequence

from evalkit.metrics.base import Metric, Score

CUSTOM_FAMILY = "custom"  # a config's judged metric
PYTHON_FAMILY = "python"  # a function given to register_metric

class _Overlay(dict):
    """The registered metrics, counting its changes: a config validated and activated at change N is still
    active while the count is N (:func:`overlay_state`)."""

    changes = 0

    def _changed(self) -> None:
        self.changes += 1

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self._changed()

    def __delitem__(self, key):
        super().__delitem__(key)
        self._changed()

    def clear(self):
        super().clear()
        self._changed()

    def update(self, *args, **kwargs):
        super().update(*args, **kwargs)
        self._changed()

    def pop(self, *args):
        out = super().pop(*args)
        self._changed()
        return out


_lock = threading.Lock()
_overlay: _Overlay = _Overlay()  # the process's Python registrations
_local = threading.local()  # .metrics: this thread's config metrics (an _Overlay)


def _thread_config() -> _Overlay:
    """This thread's config metrics: those of the run it is doing, or of the results it read."""
    metrics = getattr(_local, "metrics", None)
    if metrics is None:
        metrics = _local.metrics = _Overlay()
    return metrics


def _registered_now() -> dict[str, Metric]:
    """Every registration this thread sees: the process's, then its own config metrics."""
    with _lock:
        return {**_overlay, **_thread_config()}


_view: "RegistryView | None" = None  # the one view, set when evalkit.metrics makes it


def _builtins() -> Mapping[str, Metric]:
    """The built-in metrics (read from their modules' declarations on first use)."""
    return _view.builtin if _view is not None else MappingProxyType({})


# ---------------------------------------------------------------------------
# The registry view and its overlay
# ---------------------------------------------------------------------------


class RegistryView(MutableMapping):
    """The built-in metrics followed by the registered ones (read like a dict; built-ins cannot be replaced).

    The built-ins are each metric module's declarations (its ``METRICS``), collected by ``declared()`` on the first
    read: importing :mod:`evalkit.metrics` imports no metric module, and reading the registry imports the metric
    modules but none of the heavy libraries their metrics run on (scikit-learn, spaCy, PyTorch load when a metric
    runs).

    Writing (``REGISTRY[name] = metric``, as ``monkeypatch.setitem`` does) registers in the overlay; deleting
    removes from it. Iteration order: built-ins in declaration order, then registrations in order."""

    def __init__(self, declared: Callable[[], Mapping[str, Metric]]):
        global _view
        self._declared = declared
        self._table: Mapping[str, Metric] | None = None
        self._loading = threading.RLock()
        self._busy = False
        _view = self

    @property
    def builtin(self) -> Mapping[str, Metric]:
        if self._table is None:
            with self._loading:
                if self._table is None:
                    if self._busy:  # a metric module read the registry while its declarations were being collected
                        raise RuntimeError("the metric registry was read while its declarations were being "
                                           "collected: a metric module may not read REGISTRY when it is imported")
                    self._busy = True
                    try:
                        self._table = MappingProxyType(dict(self._declared()))
                    finally:
                        self._busy = False
        return self._table

    def __getitem__(self, name: str) -> Metric:
        if name in self.builtin:
            return self.builtin[name]
        return _registered_now()[name]

    def __iter__(self) -> Iterator[str]:
        return iter([*self.builtin, *(n for n in _registered_now() if n not in self.builtin)])

    def __len__(self) -> int:
        return len(self.builtin) + len([n for n in _registered_now() if n not in self.builtin])

    def __contains__(self, name: object) -> bool:
        return name in self.builtin or name in _registered_now()

    def __setitem__(self, name: str, metric: Metric) -> None:
        if name in self.builtin:
            raise ValueError(f"{name!r} is a built-in metric; built-ins cannot be replaced (choose another name)")
        with _lock:
            _overlay[name] = metric

    def __delitem__(self, name: str) -> None:
        if name in self.builtin:
            raise ValueError(f"{name!r} is a built-in metric; built-ins cannot be removed")
        mine = _thread_config()
        if name in mine:
            del mine[name]
            return
        with _lock:
            del _overlay[name]

    def in_family(self, *families: str) -> tuple[str, ...]:
        """Names of the metrics of these families, in registry order: the one way a module outside the registry
        lists metrics of a kind (a new summary scorer or judged metric then reaches every such list).

        >>> from evalkit.metrics import REGISTRY
        >>> REGISTRY.in_family("summary")
        ('twin_lock', 'judge_lock')
        """
        return tuple(n for n in self if self[n].family in families)

    def __repr__(self) -> str:
        return f"RegistryView({list(self)})"


@contextmanager
def scoped() -> Iterator[None]:
    """Registrations made inside the block are undone at its end (the overlay is restored as it was).

    >>> from evalkit.metrics import REGISTRY
    >>> with scoped():
    ...     _ = register_metric("words", lambda answer: float(len(answer.split())), needs=("answer",),
    ...                         better="none", range=(0, float("inf")))
    ...     "words" in REGISTRY
    True
    >>> "words" in REGISTRY
    False
    """
    mine = _thread_config()
    with _lock:
        saved, saved_mine = dict(_overlay), dict(mine)
    try:
        yield
    finally:
        with _lock:
            _overlay.clear()
            _overlay.update(saved)
        mine.clear()
        mine.update(saved_mine)


def columns_written(metric: Metric) -> set[str]:
    """The result columns a metric writes: its value, ``<name>_details``, its extra and statistic columns (the
    rule :func:`evalkit.run.runner.output_columns` applies to the whole registry)."""
    out = {metric.name, f"{metric.name}_details", *(f"{metric.name}_{k}" for k in metric.extra_columns)}
    if metric.stats is not None:
        out |= set(metric.stats.columns(metric.name))
    return out


def _name_problem(metric: Metric, others: Sequence[Metric]) -> str | None:
    """Why ``metric`` may not be registered beside ``others`` (the metrics that stay): None when it may.

    Its columns may not be a canonical input or a fixed output (answer, verdict, error, ...) nor a column another
    metric writes (``faithfulness_details``): the run would overwrite one with the other."""
    from evalkit.base.config import reserved_columns

    builtin = _builtins()
    if metric.name in builtin:
        return f"{metric.name!r} is a built-in metric; choose another name"
    if metric.name in reserved_columns():
        return (f"{metric.name!r} is a column every run reads or writes (an input, the row decision, the verdict or "
                "the errors); its scores would overwrite it: choose another name")
    mine = columns_written(metric)
    for other in [*builtin.values(), *others]:
        if other.name != metric.name and (clash := mine & columns_written(other)):
            return (f"{metric.name!r} would write column(s) {sorted(clash)}, which metric {other.name!r} writes too; "
                    "choose another name")
    return None


def replace_config_metrics(new: Sequence[Metric]) -> tuple[int, str] | None:
    """Make ``new`` this thread's config metrics (those it had before are dropped); a Python registration is
    never replaced. Returns None, or the index of the first metric refused and why (then nothing changed)."""
    mine = _thread_config()
    with _lock:
        kept = list(_overlay.values())
    for i, m in enumerate(new):
        old = _overlay.get(m.name)
        problem = _name_problem(m, kept + list(new[:i])) or (
            f"{m.name!r} is already a metric ({old.family}: {old.formula[:60]}); choose another name"
            if old is not None else None)
        if problem:
            return i, problem
    mine.clear()
    mine.update({m.name: m for m in new})
    return None


def register(metric: Metric, *, replace_ok: Callable[[Metric], bool]) -> Metric:
    """Register ``metric`` beside the built-ins (a config metric for this thread, any other for the process); one
    already registered under its name is replaced when ``replace_ok(old)`` (else :class:`ValueError`, as for a name
    whose columns clash)."""
    now = _registered_now()
    problem = _name_problem(metric, list(now.values()))
    if problem:
        raise ValueError(problem)
    old = now.get(metric.name)
    if old is not None and old is not metric and not replace_ok(old):
        raise ValueError(f"a metric {metric.name!r} is already registered ({old.family}); pass replace=True "
                         "to replace it, or choose another name")
    if metric.family == CUSTOM_FAMILY:
        _thread_config()[metric.name] = metric
    else:
        with _lock:
            _overlay[metric.name] = metric
    return metric


def register_metric(name: str, fn: Callable[..., Any], *, better: str | None = None,
                    range: tuple[float, float] | None, needs: Sequence[str] = ("answer",), formula: str = "",
                    kind: str = "score", empty_policy: str = "", evidence: Callable[..., Any] | str | None = None,
                    worked: Callable[..., str] | str | None = None, replace: bool = False,
                    direction: str | None = None) -> Metric:
    """Register a plain Python function on strings as a metric, beside the built-ins.

    ``fn(**{column: value for column in needs}) -> float | bool | str | Score | None`` is called once per row;
    a plain value becomes ``Score(value)`` (None: undetermined). The runner checks the value against ``range``
    and records a failing row's exception in its ``error`` column, as for any metric.

    Parameters
    ----------
    name : registry name and output column (not a built-in's name).
    fn : the per-row function.
    better : which end is better: 'higher', 'lower' or 'none' (required).
    range : closed interval of the value, e.g. ``(0, 1)``; None for labels.
    needs : canonical columns it reads (question, answer, contexts, ground_truth, ...).
    formula : one line saying how the value is computed (``evalkit metrics`` prints it).
    kind : 'score', 'bool' or 'label'.
    evidence : the reader of its details into typed evidence, so ``evalkit.show`` marks what it checked: one of
        :mod:`evalkit.metrics.evidence`'s shared readers when its details have that shape (``anchor_evidence``: a
        list ``anchors`` of ``{"type", "text", "supported", "evidence"}``; ``keyword_evidence``: a list
        ``missing``), or a function ``(details, name) -> Evidence``.
    worked : the arithmetic behind one scored row's value in Markdown, ``(row, params, name) -> str``, so
        :func:`evalkit.publish.explain.examples_markdown` works through a typical, a failing and a borderline row.
    replace : replace an earlier registration of ``name`` (never a built-in).
    direction : the old name of ``better``.

    Returns
    -------
    The registered :class:`Metric`.

    Examples
    --------
    >>> import pandas as pd, evalkit
    >>> with scoped():
    ...     _ = evalkit.register_metric("shouting_rate", lambda answer: sum(c.isupper() for c in answer) / len(answer),
    ...                                 better="lower", range=(0, 1), needs=("answer",),
    ...                                 formula="upper-case letters / characters")
    ...     out = evalkit.evaluate(pd.DataFrame({"question": ["Q"], "answer": ["HI there"]}), ["shouting_rate"],
    ...                            progress=False)
    ...     float(out.loc[0, "shouting_rate"])
    0.25
    """
    better = _better_of(better, direction)
    if kind not in ("score", "bool", "label"):
        raise ValueError(f"kind must be 'score', 'bool' or 'label', got {kind!r}")
    if range is not None:
        if len(range) != 2 or not float(range[0]) < float(range[1]):
            raise ValueError(f"range must be (low, high) with low < high, got {range!r}")
        range = (float(range[0]), float(range[1]))
    elif kind == "score":
        raise ValueError("a score needs a range, e.g. range=(0, 1)")
    needs = tuple(needs)

    def row(**inputs: Any) -> Score:
        v = fn(**inputs)
        return v if isinstance(v, Score) else Score(v)

    row.__signature__ = _signature_of(needs)  # the runner passes exactly these columns
    if not isinstance(name, str) or not name:
        raise ValueError(f"register_metric: name must be a non-empty text, got {name!r}")
    metric = Metric(name, row, needs=needs, better=better, range=range, kind=kind, family=PYTHON_FAMILY,
                    formula=formula or f"{getattr(fn, '__qualname__', 'function')} (registered Python function)",
                    empty_policy=empty_policy or "as the function returns (None: undetermined)", evidence=evidence,
                    worked=worked)
    try:
        return register(metric, replace_ok=lambda old: replace)
    except ValueError as e:
        raise ValueError(f"register_metric: name: {e}") from None


def _better_of(better: str | None, direction: str | None) -> str:
    """``better``, or its old name ``direction``; one of them, and one of 'higher', 'lower', 'none'."""
    if better is not None and direction is not None and better != direction:
        raise ValueError(f"better={better!r} and direction={direction!r} disagree; direction is better's old name: "
                         "give better only")
    value = better if better is not None else direction
    if value not in ("higher", "lower", "none"):
        raise ValueError(f"better must be 'higher', 'lower' or 'none' (which end of the scale is better), got {value!r}")
    return value


def _signature_of(names: Sequence[str]):
    import inspect

    return inspect.Signature([inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY) for n in names])


def unregister_metric(name: str) -> None:
    """Remove a registered (never a built-in) metric; a name not registered is ignored."""
    _thread_config().pop(name, None)
    with _lock:
        _overlay.pop(name, None)


def overlay_state() -> tuple[int, int, int, int]:
    """This process and thread, and the number of changes made so far to the registrations they see: equal
    states mean the same registrations (another process or thread, a Dask worker's, never compares equal)."""
    import os

    with _lock:
        return os.getpid(), threading.get_ident(), _overlay.changes, _thread_config().changes


def registered() -> dict[str, Metric]:
    """The metrics registered now (beside the built-ins) as this thread sees them, by name."""
    return _registered_now()


__all__ = ["RegistryView", "register_metric", "unregister_metric", "scoped", "columns_written", "registered",
           "overlay_state", "replace_config_metrics", "register",
           "CUSTOM_FAMILY", "PYTHON_FAMILY"]
