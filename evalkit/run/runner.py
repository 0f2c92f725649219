"""``score()``: run registered metrics over a dataset with batching, shared resources, progress and per-row
errors (:func:`evalkit.evaluate` is ``score()`` followed by the verdict, in :mod:`evalkit.decide.pipeline`).

Output columns: the row decision about the answer, made once (:func:`evalkit.text.decide_answer`) and read by
every metric, the verdict and :func:`evalkit.show`: ``answer_empty``, ``abstained``, ``abstained_reason``,
``answer_language``. Per metric ``m``: ``m`` (the value; nullable float/boolean/string)
and ``m_details`` (its details record, :class:`evalkit.metrics.base.Details`, checked against the type the registry
declares and serialised here, once, as JSON; read back by :func:`evalkit.base.data.details_of_cell` and the registry's
evidence readers). Then (added by :func:`evalkit.evaluate`) ``verdict``/``verdict_rule`` when the
triad ran, and ``error``: None, or ``"metric: ErrorType: message"`` entries joined by
" | " for every metric that failed on that row. No row is ever dropped.
"""
from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence

import pandas as pd

from evalkit.base.config import PARAM_LEXICONS, VERDICT_COLUMNS, EvalConfig
from evalkit.text import DECISION_COLUMNS
from evalkit.base.data import DataError, RowError, canonicalize, details_cell, error_cell, is_missing, load
from evalkit.metrics import (DEFAULT_METRICS, OPTIONAL_DEFAULTS, REGISTRY, RENAMED, Metric, Score, get_metric,
                      verdict_roles)
from evalkit.metrics.base import BatchFn, Repeated, Undetermined
from evalkit.run.resources import Resources, resource_problem, shipped_models, wants_judge

log = logging.getLogger("evalkit")
CHUNK = 256


def _metric_params(metric: Metric, config: EvalConfig, resources: Resources) -> dict[str, Any]:
    available: dict[str, Any] = dict(config.params_for(metric.name))
    available.update({param: config.lexicon(key) for param, key in PARAM_LEXICONS.items()})
    available["spacy_model"] = config.spacy_model
    if "rules" in metric.resources:
        available["rules"] = resources.get("rules")
    if "method" in metric.params:  # a declared switch: resolved once per run, recorded in the signature
        from evalkit.metrics.judged import resolve_method

        available["method"] = resolve_method(available.get("method", "auto"))
    return {k: available[k] for k in metric.params if k in available}


def _check_score(metric: Metric, s: Any) -> Score:
    if not isinstance(s, Score):
        raise TypeError(f"{metric.name} returned {type(s).__name__}, expected Score")
    if s.stats is not None and not (metric.stats is not None and isinstance(s.stats, metric.stats)):
        raise TypeError(f"{metric.name} returned stats {s.stats!r}; its registry entry declares "
                        f"{getattr(metric.stats, '__name__', None)}")
    declared = metric.details
    details = s.details.inner if isinstance(s.details, Repeated) else s.details
    if declared is not None and not isinstance(details, (declared, Undetermined)):
        raise TypeError(f"{metric.name} returned details of type {type(details).__name__}; its registry entry "
                        f"declares {declared.__name__}")
    v = s.value
    if v is None:
        return s
    if metric.kind == "bool":
        if not isinstance(v, bool):
            raise TypeError(f"{metric.name} returned {v!r}, expected a bool")
    elif metric.kind == "score":
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
            raise TypeError(f"{metric.name} returned {v!r}, expected a number (None for undetermined, never NaN)")
        lo, hi = metric.range
        if not lo - 1e-9 <= v <= hi + 1e-9:
            raise ValueError(f"{metric.name} returned {v!r}, outside its range [{lo}, {hi}]")
    return s


class MetricError(RuntimeError):
    """A metric failed on one row and ``evaluate(on_error="raise")`` stopped there.

    ``metric`` and ``row_id`` name the culprit; the original exception is ``__cause__`` (its type
    is kept, e.g. a ``json.JSONDecodeError`` stays one).

    Examples
    --------
    >>> try:
    ...     try:
    ...         int("x")
    ...     except ValueError as e:
    ...         raise MetricError("relevance", "q07", f"{type(e).__name__}: {e}") from e
    ... except MetricError as err:
    ...     print(err.metric, err.row_id, type(err.__cause__).__name__)
    relevance q07 ValueError
    """

    def __init__(self, metric: str, row_id: str, message: str = ""):
        self.metric, self.row_id, self.message = metric, row_id, message
        super().__init__(f"metric {metric!r} failed on row id={row_id!r}" + (f": {message}" if message else ""))

    def __reduce__(self):  # picklable across processes (papermill, multiprocessing)
        return MetricError, (self.metric, self.row_id, self.message)


def _rows(inputs: Mapping[str, Sequence[Any]]) -> int:
    return len(next(iter(inputs.values()))) if inputs else 0


def _take(inputs: Mapping[str, Sequence[Any]], idx: Sequence[int]) -> dict[str, list]:
    return {k: [v[i] for i in idx] for k, v in inputs.items()}


def _rowwise(metric: Metric) -> BatchFn:
    """The batch function of a metric that declares none: its row function on every row."""
    accepted = _fn_params(metric)

    def batch(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any], resources: Any) -> list:
        kw = {k: v for k, v in params.items() if k in accepted}
        out: list[Score | Exception] = []
        for i in range(_rows(inputs)):
            try:
                out.append(metric.fn(**{k: v[i] for k, v in inputs.items()}, **kw))
            except Exception as e:  # recorded for this row by the runner
                out.append(e)
        return out

    return batch


def _whole_column(params: Mapping[str, Any]) -> bool:
    """Does the metric compute a statistic over the whole column (so rows must not be scored apart)?"""
    return params.get("idf_scope") == "dataset"


def _call(batch: BatchFn, metric: Metric, part: dict[str, list], params: Mapping[str, Any],
          resources: "Resources") -> list[Score | Exception] | Exception:
    """One call of the batch function: one result (a Score, or an exception for that row) per row, or the
    exception the call raised."""
    k = _rows(part)
    try:
        res = list(batch(part, params, resources))
    except Exception as e:  # the caller isolates the failing row(s)
        return e
    if len(res) != k:
        return RuntimeError(f"{metric.name} batch returned {len(res)} results for {k} rows")
    return res


def _score_part(batch: BatchFn, metric: Metric, part: dict[str, list], params: Mapping[str, Any],
                resources: "Resources", whole: bool) -> list[Score | Exception]:
    """Score ``part`` with the batch function; when the call fails, find the failing rows by calling the
    same function, with the same params and resources, on one-row slices.

    A whole-column metric (``idf_scope: dataset``) is then re-run once on the rows that passed, so its
    statistic still spans the data set (minus the failed rows) instead of silently becoming per-row.
    """
    res = _call(batch, metric, part, params, resources)
    k = _rows(part)
    if not isinstance(res, Exception):
        return res
    if k <= 1:
        return [res] * k
    single = [_score_part(batch, metric, _take(part, [i]), params, resources, False)[0] for i in range(k)]
    if not whole:
        return single
    ok = [i for i, r in enumerate(single) if not isinstance(r, Exception)]
    if len(ok) == k:  # it fails only as a whole: every row says why
        return [res] * k
    out: list[Score | Exception] = list(single)
    if ok:
        rerun = _call(batch, metric, _take(part, ok), params, resources)
        for j, i in enumerate(ok):
            out[i] = rerun if isinstance(rerun, Exception) else rerun[j]
    return out


def _run_metric(metric: Metric, inputs: dict[str, list], params: dict[str, Any], resources: Resources,
                ids: Sequence[str], on_error: str, bar) -> tuple[list[Score | None], list[RowError | None]]:
    """Every row of one metric through its batch function (one execution path; see :func:`_score_part`)."""
    n = len(ids)
    batch = metric.batch or _rowwise(metric)
    whole = _whole_column(params)
    scores: list[Score | None] = [None] * n
    errors: list[RowError | None] = [None] * n
    decided = _decided_rows(metric, inputs)
    for i, s in decided.items():
        scores[i] = s
    todo = [i for i in range(n) if i not in decided]  # rows the metric itself scores
    chunk = max(len(todo), 1) if whole else CHUNK
    for start in range(0, len(todo), chunk):
        rows = todo[start:start + chunk]
        part = _take(inputs, rows)
        for i, r in zip(rows, _score_part(batch, metric, part, params, resources, whole)):
            try:
                if isinstance(r, Exception):
                    raise r
                scores[i] = _check_score(metric, r)
            except Exception as e:  # recorded per row, never silently NaN
                if on_error == "raise":
                    raise MetricError(metric.name, ids[i], f"{type(e).__name__}: {e}") from e
                errors[i] = RowError(metric.name, type(e).__name__, str(e))
        if bar is not None:
            bar.update(len(rows))
    if bar is not None and decided:
        bar.update(len(decided))
    return scores, errors


NO_CONTEXTS = "no contexts given (null): a context-based metric cannot judge this row"


def _decided_rows(metric: Metric, inputs: Mapping[str, Sequence[Any]]) -> dict[int, Score]:
    """Rows whose outcome is settled before the metric runs: undetermined, with the reason.

    A null ``contexts`` cell means no passages were given (an empty list means nothing was retrieved, which
    the metric judges itself).
    """
    if "contexts" not in metric.needs or "contexts" not in inputs:
        return {}
    return {i: Score(None, Undetermined(NO_CONTEXTS)) for i, c in enumerate(inputs["contexts"]) if c is None}


def _fn_params(metric: Metric) -> set[str]:
    import inspect

    return set(inspect.signature(metric.fn).parameters)


def _column(metric: Metric, values: list[Any]) -> pd.Series:
    if metric.kind == "score":
        return pd.Series([None if v is None else float(v) for v in values], dtype="Float64")
    if metric.kind == "bool":
        return pd.Series(values, dtype="boolean")
    return pd.Series(values, dtype=object)


def _with_components(metrics: list[Metric]) -> list[Metric]:
    """Derived metrics need their components first: add any that are missing, in order."""
    out: list[Metric] = []
    for m in metrics:
        if m.derived:
            out += [REGISTRY[c] for c in m.needs if REGISTRY[c] not in out and REGISTRY[c] not in metrics]
        if m not in out:
            out.append(m)
    return out


def resolve_metrics(names: Iterable[str] | None, columns: Iterable[str],
                    config: EvalConfig | None = None) -> list[Metric]:
    """The metrics to run, in order.

    With ``names=None``: every default metric whose inputs exist, plus the judged and embedding
    metrics when a judge is configured / the embed extra is installed. Metrics that need a judge
    or an encoder that is not there are skipped with one warning that says how to provide it
    (never scored as 0 or 100).
    """
    cols = set(columns)
    config = config or EvalConfig()
    if names is None:
        # the named verdict profile's metrics run whenever the verdict does (the evalkit profile's are not defaults)
        profile = tuple(n for n, _ in verdict_roles(config.thresholds.named) if n not in DEFAULT_METRICS)
        cand = [REGISTRY[n] for n in profile + DEFAULT_METRICS + OPTIONAL_DEFAULTS]
        cand += [REGISTRY[s.name] for s in config.custom_metrics if s.name in REGISTRY]  # defined to be run
        cand = [m for m in cand if m.derived or set(m.needs) <= cols]
        cand = [m for m in cand if resource_problem(m, config) is None]
        # an optional derived metric (ragas_score) is left out quietly when its components are: nobody asked
        cand = [m for m in cand if not m.derived or all(REGISTRY[c] in cand for c in m.needs)]
    else:
        cand = _with_components([get_metric(n) for n in names])
        for m in cand:
            missing = [c for c in m.needs if c not in cols] if not m.derived else []
            if missing:
                raise DataError(f"metric {m.name!r} needs column{'s' if len(missing) > 1 else ''} "
                                f"{', '.join(repr(c) for c in missing)}, which the data does not have")
        problems: dict[str, list[str]] = {}
        for m in cand:
            p = resource_problem(m, config)
            if p:
                problems.setdefault(p, []).append(m.name)
        for p, ms in problems.items():
            log.warning("skipped %s: %s", ", ".join(ms), p)
        cand = [m for m in cand if resource_problem(m, config) is None]
    chosen = []
    for m in cand:  # a derived metric runs only if all of its components do
        if m.derived and not all(c in [x.name for x in chosen] for c in m.needs):
            log.warning("skipped %s: its components %s are not all available", m.name, ", ".join(m.needs))
            continue
        chosen.append(m)
    if names is not None and not chosen:  # nothing would be scored: say so before any work, never exit 0
        why = "; ".join(f"{', '.join(ms)}: {p}" for p, ms in problems.items()) or "see the warnings above"
        raise DataError(f"none of the requested metrics can run ({why})")
    return chosen


def score(data: pd.DataFrame | str | Path, metrics: Sequence[str] | None = None,
          config: EvalConfig | Mapping[str, Any] | str | Path | None = None, *,
          on_error: str = "record", progress: bool | Callable[[str], None] | None = None,
          strict_columns: bool = False) -> pd.DataFrame:
    """Score every row of ``data`` with the chosen metrics (the verdict is the next step on the road:
    :func:`evalkit.evaluate` is this plus :func:`evalkit.decide.verdict.apply_verdicts`).

    Parameters
    ----------
    data : DataFrame (canonical or ragas-named) or a path for :func:`evalkit.load`.
    metrics : list of registry names; default: every default metric whose inputs exist.
    config : EvalConfig, dict, or YAML path.
    on_error : 'record' (default: the row's ``error`` column says why) or 'raise'.
    progress : show a progress bar; default: only on an interactive terminal or notebook. A callable instead
        receives one line per metric scored (its name, its place in the run, rows, seconds, rows with errors).
    strict_columns : an input column named like an output (``hallucination``, ``verdict``, ``error``, ...) is
        an error instead of being kept as ``input_<name>`` with a warning.

    Returns
    -------
    DataFrame: the input rows (same order, none dropped) plus score, ``*_details``
    and ``error`` columns. ``df.attrs["evalkit"]`` holds the metric list, the config,
    ``signature`` (a dict of everything that produced the numbers: versions, data and config hashes,
    the signature of every resource loaded, resolved method switches) and ``signature_string``
    (the same on one line, to publish beside the numbers).

    Raises
    ------
    ConfigError
        A configuration value is invalid (before anything is scored).
    MetricError
        With ``on_error='raise'``: the first row a metric failed on; the original exception is its cause.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"question": ["What is the premium?"], "answer": ["The premium is $604."]})
    >>> out = score(df, ["relevance", "completeness"], progress=False)
    >>> round(float(out.loc[0, "completeness"]), 2)
    1.0
    >>> out.attrs["evalkit"]["signature"]["metrics"], out.attrs["evalkit"]["signature_string"][:7]
    (['relevance', 'completeness'], 'evalkit')
    """
    if on_error not in ("record", "raise"):
        raise ValueError("on_error must be 'record' or 'raise'")
    df, chosen, config = plan(data, metrics, config, strict_columns=strict_columns)
    resources = Resources(config)
    resources.load_eager(chosen)  # a bad rules file fails here, before any row is scored
    judged = [m.name for m in chosen if wants_judge(m, config)]
    if any(resources.own_judge(m) is None for m in judged):  # a dead endpoint, a wrong key or model: one line,
        log.info("judge preflight: %s", resources.judge.preflight())  # before scoring
    for m in judged:  # each metric's own judge too
        if resources.own_judge(m) is not None:
            log.info("judge preflight (%s): %s", m, resources.judge_for(m).preflight())
    out, all_errors, methods = score_all(chosen, df, config, resources, on_error, progress)
    names = [m.name for m in chosen]
    out["error"] = pd.Series([error_cell(e) for e in all_errors], dtype=object)
    out.attrs["evalkit"] = _run_meta(df, names, config, resources, methods)
    return out


# columns every run may write beside the metrics' own (the row decision's, the verdict's, the row's errors)
FIXED_OUTPUT_COLUMNS = (*DECISION_COLUMNS, *VERDICT_COLUMNS)


class InputColumnsRenamed(UserWarning):
    """Input columns named like evalkit's outputs were kept under ``input_<name>``."""


def output_columns() -> set[str]:
    """Every column name a run can write: each registered metric's value, details, extra and statistic
    columns, and the fixed ones. An input column of one of these names would be overwritten."""
    names = set(FIXED_OUTPUT_COLUMNS)
    for m in REGISTRY.values():
        names |= {m.name, f"{m.name}_details", *(f"{m.name}_{k}" for k in m.extra_columns)}
        if m.stats is not None:
            names |= set(m.stats.columns(m.name))
    return names


def inputs_of(results: pd.DataFrame) -> pd.DataFrame:
    """``results`` without the columns a run writes (metric values, details, the row decision, the verdict, the
    errors): the inputs, to score again with other metrics without their old outputs read as inputs.

    >>> r = pd.DataFrame({"question": ["q"], "answer": ["a"], "relevance": [0.5], "verdict": ["PASS"], "mine": [1]})
    >>> list(inputs_of(r).columns)
    ['question', 'answer', 'mine']
    """
    written = output_columns()
    return results[[c for c in results.columns if c not in written]].copy()  # no attrs: a new run's inputs


def protect_input_columns(df: pd.DataFrame, *, strict: bool = False) -> pd.DataFrame:
    """Keep the user's columns that collide with outputs, renamed ``input_<name>`` (one warning names them);
    with ``strict`` refuse them instead. Nothing evalkit writes can then overwrite or be read as the user's.

    >>> import warnings
    >>> df = pd.DataFrame({"question": ["q"], "answer": ["a"], "verdict": ["MINE"]})
    >>> with warnings.catch_warnings(record=True):
    ...     list(protect_input_columns(df).columns)
    ['question', 'answer', 'input_verdict']
    """
    written = output_columns()  # once: it walks the whole registry
    clash = [c for c in df.columns if c in written]
    if not clash:
        return df
    src = df.attrs.get("source") or ""
    where = f"{src}: " if src and not src.startswith("<") else ""
    if strict:
        raise ValueError(f"{where}input column(s) {clash} have the names of evalkit "
                         "outputs; rename them (or drop --strict to keep them as input_<name>)")
    renamed = {c: f"input_{c}" for c in clash}
    taken = [v for v in renamed.values() if v in df.columns]
    if taken:
        raise ValueError(f"{where}input columns {clash} collide with outputs, and "
                         f"{taken} exist too; rename them")
    import warnings

    warnings.warn(f"{where}input column(s) {clash} have the names of evalkit outputs; "
                  f"kept as {list(renamed.values())}", InputColumnsRenamed, stacklevel=3)
    attrs = dict(df.attrs)
    out = df.rename(columns=renamed)
    out.attrs.update(attrs)
    return out


def as_config(config: EvalConfig | Mapping[str, Any] | str | Path | None) -> EvalConfig:
    """A validated EvalConfig from a YAML path, a dict, None (the defaults) or an EvalConfig.

    Validating and activating a config is done once: the returned config remembers the state of the registered
    metrics it left, and passing it again (``evaluate`` hands it to ``score``, ``evalkit score`` to every chunk)
    returns it as it is while nothing was registered or dropped since, in this process."""
    from evalkit.metrics.custom import activate
    from evalkit.metrics.registry import overlay_state

    if isinstance(config, EvalConfig) and getattr(config, _CHECKED_AT, None) == overlay_state():
        return config
    if isinstance(config, (str, Path)):
        config, source = EvalConfig.from_yaml(config), str(config)
    elif config is None or isinstance(config, Mapping):
        config, source = EvalConfig.from_dict(config), "config"
    else:  # built in code or by dataclasses.replace: from_dict's checks have not run
        source = "config"
    # per-metric parameters are checked against the registry here, before anything is scored
    config.validate(source, registry=REGISTRY, renamed=RENAMED)
    # the config's custom metrics are registered like built-ins for the run, and an earlier run's config metrics
    # dropped, also when this config defines none (evalkit.metrics.custom says how)
    from evalkit.base.config import ConfigError

    try:
        activate(config)
    except ConfigError as e:
        raise ConfigError(f"{source}: {e}") from None
    # not a field: equality, hashing and dataclasses.replace (a new config, checked again) ignore it
    object.__setattr__(config, _CHECKED_AT, overlay_state())
    return config


_CHECKED_AT = "_evalkit_checked_at"  # the registry's state when as_config validated and activated a config


class Plan(NamedTuple):
    """What a run will do, decided before any row is scored: the rows (canonical, input columns that collide
    with outputs kept under ``input_<name>``), the metrics in the order they run, and the validated config."""

    frame: pd.DataFrame
    metrics: list[Metric]
    config: EvalConfig


def plan(data: pd.DataFrame | str | Path, metrics: Sequence[str] | None = None,
         config: EvalConfig | Mapping[str, Any] | str | Path | None = None, *, strict_columns: bool = False) -> Plan:
    """The one planner of a run: :func:`score` (and so ``evaluate`` and every chunk of ``evalkit score``) and the
    dry run (:func:`evalkit.decide.pipeline.estimate`) start here, then differ only in the resources they give
    :func:`score_all` and in what they keep of its result."""
    config = as_config(config)
    df = protect_input_columns(_as_frame(data), strict=strict_columns)
    return Plan(df, resolve_metrics(metrics, df.columns, config), config)


def _as_frame(data: pd.DataFrame | str | Path) -> pd.DataFrame:
    """The canonical frame (a path is loaded; a frame is validated), its file's source and hash kept."""
    if isinstance(data, (str, Path)):
        return load(data).reset_index(drop=True)
    attrs = dict(data.attrs)
    df = canonicalize(data).reset_index(drop=True)
    df.attrs.update({k: v for k, v in attrs.items() if k in ("source", "sha256")})
    return df


def score_all(chosen: list[Metric], df: pd.DataFrame, config: EvalConfig, resources: Resources,
              on_error: str, progress: bool | Callable[[str], None] | None
              ) -> tuple[pd.DataFrame, list[list[RowError]], dict[str, str]]:
    """Run every chosen metric in order: the scored frame, each row's errors, the resolved method switches."""
    ids = df["id"].tolist()
    n = len(df)
    say = progress if callable(progress) else None  # one line per metric scored (a log without a terminal)
    if say is not None:
        progress = False
    elif progress is None:
        progress = shows_a_bar(sys.stderr)
    bar = None
    if progress and n:
        from tqdm.auto import tqdm

        bar = tqdm(total=n * len(chosen), desc="evalkit", unit="score")
    all_errors: list[list[RowError]] = [[] for _ in range(n)]
    methods: dict[str, str] = {}
    out = df.copy()
    decisions = answer_decisions(df, config)
    if decisions is not None:
        out = _with_decisions(out, decisions)
    try:
        for k, m in enumerate(chosen, 1):
            started = time.monotonic()
            if bar is not None:
                bar.set_postfix_str(m.name)
            src = out if m.derived else df
            inputs = {c: [None if is_missing(v) else v for v in src[c].tolist()] if m.derived else src[c].tolist()
                      for c in m.needs}
            inputs.update({c: df[c].tolist() for c in m.optional if c in df.columns})
            if decisions is not None and "answer" in inputs and "decision" in _fn_params(m):
                inputs["decision"] = decisions  # the row decision, made once: no metric re-reads the answer for it
            params = _metric_params(m, config, resources)
            if "method" in params:
                methods[m.name] = params["method"]
            scores, errors = _run_metric(m, inputs, params, resources.for_metric(m.name), ids, on_error, bar)
            out[m.name] = _column(m, [s.value if s is not None else None for s in scores])
            out[f"{m.name}_details"] = pd.Series([details_cell(s.details) if s is not None else None for s in scores],
                                                 dtype=object)
            for key in m.extra_columns:
                out[f"{m.name}_{key}"] = pd.Series([s.details.get(key) if s is not None else None for s in scores],
                                                   dtype=object)
            out = _with_stats(out, m, scores)
            for i, e in enumerate(errors):
                if e:
                    all_errors[i].append(e)
            if say is not None:
                failed = sum(bool(e) for e in errors)
                say(f"scored {m.name} ({k}/{len(chosen)}) on {n} rows in {time.monotonic() - started:.1f} s"
                    + (f", {failed} rows with errors" if failed else ""))
    finally:
        if bar is not None:
            bar.close()
    return out, all_errors, methods


def answer_decisions(df: pd.DataFrame, config: EvalConfig) -> list | None:
    """Every row's :class:`evalkit.text.AnswerDecision` (empty, abstained, language), made once with the
    configured lexicons; None when the data has no answer column."""
    from evalkit.text import decide_answer

    if "answer" not in df.columns:
        return None
    from evalkit.metrics.guard import DECLINE_KEYS

    kw = {param: config.lexicon(PARAM_LEXICONS[param]) for param in DECLINE_KEYS}
    return [decide_answer(None if is_missing(a) else a, **{k: v for k, v in kw.items() if v is not None})
            for a in df["answer"].tolist()]


def _with_decisions(out: pd.DataFrame, decisions: list) -> pd.DataFrame:
    """The row decisions as columns (:data:`evalkit.text.DECISION_COLUMNS`): ``answer_empty`` and ``abstained``
    (boolean), ``abstained_reason`` (what the abstention matched) and ``answer_language`` (ISO code, or
    missing when the answer is too short to tell). The verdict and :func:`evalkit.show` read these."""
    from evalkit.text import DECISION_COLUMNS

    cols = [d.to_columns() for d in decisions]
    for key in DECISION_COLUMNS:
        values = [c[key] for c in cols]
        out[key] = pd.Series(values, dtype="boolean" if key in ("answer_empty", "abstained") else object,
                             index=out.index)
    return out


def _with_stats(out: pd.DataFrame, metric: Metric, scores: list[Score | None]) -> pd.DataFrame:
    """The metric's typed sufficient statistics as nullable integer columns (<NA> where it errored)."""
    if metric.stats is None:
        return out
    for col, name in zip(metric.stats.columns(metric.name), metric.stats.field_names()):
        out[col] = pd.array([getattr(s.stats, name) if s is not None and s.stats is not None else None
                             for s in scores], dtype="Int64")
    return out


def shows_a_bar(stream) -> bool:
    """Whether a progress bar belongs on ``stream``: a terminal, or a running Jupyter kernel where tqdm can draw
    a widget (ipywidgets installed; without it tqdm would print text bars to the cell's stderr). Merely having
    imported ipykernel (a test run, papermill's parent) is not a notebook.

    >>> import io
    >>> shows_a_bar(io.StringIO())
    False
    """
    if stream.isatty():
        return True
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or not hasattr(shell, "kernel"):
        return False
    import importlib.util

    return importlib.util.find_spec("ipywidgets") is not None


def _run_meta(df: pd.DataFrame, names: list[str], config: EvalConfig, resources: Resources,
              methods: dict[str, str]) -> dict[str, Any]:
    """``attrs["evalkit"]``: metrics, config, judge usage, and the signature of what produced the numbers."""
    from evalkit.base.signature import build_signature, rows_sha256, sig_string

    meta: dict[str, Any] = {"metrics": names, "config": config.as_dict()}
    judges = resources.judges()
    if judges:
        import hashlib

        j = resources.loaded("judge")
        used = {k: v for jj in judges.values() for k, v in jj.prompts_used.items()}
        usage = {k: v for jj in judges.values() for k, v in jj.usage().items()}  # per metric: no key is shared
        # a custom metric's prompt is not a shipped file: hash the hashes (the same value prompts_sha256 gives)
        meta["judge"] = {"signature": j.signature() if j is not None else None, "usage": usage,
                         "prompts": dict(sorted(used.items())),
                         "prompts_sha256": hashlib.sha256("".join(v for _, v in sorted(used.items())).encode())
                         .hexdigest() if used else None}
        from evalkit.judge.costs import usage_total

        meta["judge"]["total"] = usage_total(usage)  # calls, tokens and cost over every metric
        if resources.metric_judges():
            meta["judge"]["per_metric"] = {m: jj.signature() for m, jj in resources.metric_judges().items()}
    sig = build_signature(config, df.attrs.get("sha256"), names, judge=meta.get("judge"),
                          resources=resources.signatures(), methods=methods, rows_sha256=rows_sha256(df),
                          models=shipped_models(names))
    meta["signature"] = sig
    meta["signature_string"] = sig_string(sig)
    return meta


