"""``evaluate()``: run registered metrics over a dataset with batching, shared resources,
progress and per-row errors.

Output columns, per metric ``m``: ``m`` (the value; nullable float/boolean/string)
and ``m_details`` (JSON evidence). Then ``verdict``/``verdict_rule`` when the triad
ran, and ``error``: None, or ``"metric: ErrorType: message"`` entries joined by
" | " for every metric that failed on that row. No row is ever dropped.
"""
from __future__ import annotations

import json
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from .config import EvalConfig
from .data import DataError, canonicalize, load
from .metrics import DEFAULT_METRICS, OPTIONAL_DEFAULTS, REGISTRY, Metric, Score, get_metric
from .verdict import verdict

log = logging.getLogger("evalkit")
CHUNK = 256
TRIAD = ("hallucination", "relevance", "completeness")


@dataclass
class Resources:
    """Shared, lazily-loaded resources for one evaluate() call (loaded once, used by many metrics)."""

    config: EvalConfig
    context_index: dict = field(default_factory=dict)
    _nlp: Any = None
    _judge: Any = None
    _encoder: Any = None
    _bert: Any = None

    @property
    def nlp(self):
        if self._nlp is None:
            from .nlp import NlpPipeline

            self._nlp = NlpPipeline(self.config.spacy_model, self.config.batch_size)
        return self._nlp

    @property
    def judge(self):
        if self._judge is None:
            from .judge import make_judge

            self._judge = make_judge(self.config.judge)
        return self._judge

    @property
    def encoder(self):
        if self._encoder is None:
            from .encoders import get_encoder

            self._encoder = get_encoder(self.config.embedding_model)
        return self._encoder

    @property
    def encoder_or_none(self):
        from .encoders import available

        return self.encoder if available() else None

    @property
    def bert_scorer(self):
        if self._bert is None:
            from .encoders import get_bert_scorer

            self._bert = get_bert_scorer(self.config.bertscore_model, self.config.bertscore_layers)
        return self._bert


def judge_configured(config: EvalConfig) -> bool:
    from .judge import JudgeConfig

    return JudgeConfig.resolve(config.judge).configured


def resource_problem(metric: Metric, config: EvalConfig) -> str | None:
    """Why ``metric`` cannot run with this configuration (None when it can)."""
    wants_judge = "judge" in metric.resources or config.metric_params.get(metric.name, {}).get("provider") == "judge"
    if wants_judge and not judge_configured(config):
        from .judge import NOT_CONFIGURED

        return NOT_CONFIGURED
    if "ragas" in metric.resources:
        from .judge.ragas_adapter import RAGAS_INSTALL, available as ragas_available

        if not ragas_available():
            return RAGAS_INSTALL
    if "encoder" in metric.resources:
        from .encoders import INSTALL_HINT, available

        if not available():
            return INSTALL_HINT
    return None


def _metric_params(metric: Metric, config: EvalConfig, rules: Any) -> dict[str, Any]:
    available: dict[str, Any] = dict(config.params_for(metric.name))
    available["spacy_model"] = config.spacy_model
    available["hedges"] = config.lexicon("hedges")
    available["phrases"] = config.lexicon("dont_know_phrases")
    available["short_tokens"] = config.lexicon("dont_know_short_tokens")
    available["short_chars"] = config.lexicon("short_answer_chars")
    available["indicators"] = config.lexicon("citation_indicators")
    available["rules"] = rules
    unknown = set(config.metric_params.get(metric.name, {})) - set(metric.params)
    if unknown:
        raise ValueError(f"config metric_params.{metric.name}: unknown parameter(s) {sorted(unknown)}; "
                         f"{metric.name} accepts {list(metric.params)}")
    return {k: available[k] for k in metric.params if k in available}


def _to_json(details: Mapping[str, Any]) -> str:
    return json.dumps(details, ensure_ascii=False, default=str)  # insertion order: deterministic, and keeps the
    # strict metric order of the summary scorers


def _check_score(metric: Metric, s: Any) -> Score:
    if not isinstance(s, Score):
        raise TypeError(f"{metric.name} returned {type(s).__name__}, expected Score")
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


def _run_metric(metric: Metric, inputs: dict[str, list], params: dict[str, Any], resources: Resources,
                ids: Sequence[str], on_error: str, bar) -> tuple[list[Score | None], list[str | None]]:
    n = len(ids)
    fn_params = {k: v for k, v in params.items() if k in _fn_params(metric)}
    scores: list[Score | None] = [None] * n
    errors: list[str | None] = [None] * n
    # relevance with dataset-wide IDF must see the whole column at once
    chunk = n if params.get("idf_scope") == "dataset" else CHUNK
    for start in range(0, n, max(chunk, 1)):
        stop = min(start + chunk, n)
        part = {k: v[start:stop] for k, v in inputs.items()}
        res = None
        if metric.batch is not None:
            try:
                res = metric.batch(part, params, resources)
                if len(res) != stop - start:
                    raise RuntimeError(f"{metric.name} batch returned {len(res)} results for {stop - start} rows")
            except Exception:  # the batch as a whole failed: isolate the failing row(s) with the row function
                res = None
        for i in range(start, stop):
            try:
                if res is None:
                    s = metric.fn(**{k: v[i - start] for k, v in part.items()}, **fn_params)
                else:
                    s = res[i - start]
                    if isinstance(s, Exception):  # the batch isolated this row's failure itself
                        raise s
                scores[i] = _check_score(metric, s)
            except Exception as e:  # recorded per row, never silently NaN
                if on_error == "raise":
                    raise type(e)(f"metric {metric.name!r} failed on row id={ids[i]!r}: {e}") from e
                errors[i] = f"{metric.name}: {type(e).__name__}: {e}"
        if bar is not None:
            bar.update(stop - start)
    return scores, errors


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
        cand = [REGISTRY[n] for n in DEFAULT_METRICS + OPTIONAL_DEFAULTS]
        cand = [m for m in cand if m.derived or set(m.needs) <= cols]
        cand = [m for m in cand if resource_problem(m, config) is None]
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
    return chosen


def evaluate(data: pd.DataFrame | str | Path, metrics: Sequence[str] | None = None,
             config: EvalConfig | Mapping[str, Any] | str | Path | None = None, *,
             on_error: str = "record", progress: bool | None = None) -> pd.DataFrame:
    """Score every row of ``data`` with the chosen metrics.

    Parameters
    ----------
    data : DataFrame (canonical or ragas-named) or a path for :func:`evalkit.load`.
    metrics : list of registry names; default: every default metric whose inputs exist.
    config : EvalConfig, dict, or YAML path.
    on_error : 'record' (default: the row's ``error`` column says why) or 'raise'.
    progress : show a progress bar; default: only on an interactive terminal or notebook.

    Returns
    -------
    DataFrame: the input rows (same order, none dropped) plus score, ``*_details``,
    verdict and ``error`` columns. ``df.attrs["evalkit"]`` holds the metric list and config.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"question": ["What is the premium?"], "answer": ["The premium is $604."]})
    >>> out = evaluate(df, ["relevance", "completeness"], progress=False)
    >>> round(float(out.loc[0, "completeness"]), 2)
    1.0
    """
    if on_error not in ("record", "raise"):
        raise ValueError("on_error must be 'record' or 'raise'")
    if isinstance(config, (str, Path)):
        config = EvalConfig.from_yaml(config)
    elif config is None or isinstance(config, Mapping):
        config = EvalConfig.from_dict(config)
    attrs = {}
    if isinstance(data, (str, Path)):
        df = load(data)
    else:
        attrs = dict(data.attrs)
        df = canonicalize(data)
    df = df.reset_index(drop=True)
    df.attrs.update({k: v for k, v in attrs.items() if k in ("source", "sha256")})
    chosen = resolve_metrics(metrics, df.columns, config)
    rules = None
    if any(m.name == "fact_checks" for m in chosen) and config.fact_checks:
        from .metrics.factchecks import load_rules

        rules = load_rules(config.fact_checks)
    resources = Resources(config)
    ids = df["id"].tolist()
    n = len(df)
    if progress is None:
        progress = sys.stderr.isatty() or "ipykernel" in sys.modules
    bar = None
    if progress and n:
        from tqdm.auto import tqdm

        bar = tqdm(total=n * len(chosen), desc="evalkit", unit="score")
    all_errors: list[list[str]] = [[] for _ in range(n)]
    out = df.copy()
    try:
        for m in chosen:
            if bar is not None:
                bar.set_postfix_str(m.name)
            src = out if m.derived else df
            inputs = {c: [None if _missing(v) else v for v in src[c].tolist()] if m.derived else src[c].tolist()
                      for c in m.needs}
            inputs.update({c: df[c].tolist() for c in m.optional if c in df.columns})
            params = _metric_params(m, config, rules)
            scores, errors = _run_metric(m, inputs, params, resources, ids, on_error, bar)
            out[m.name] = _column(m, [s.value if s is not None else None for s in scores])
            out[f"{m.name}_details"] = pd.Series([_to_json(s.details) if s is not None else None for s in scores],
                                                 dtype=object)
            for key in m.extra_columns:
                out[f"{m.name}_{key}"] = pd.Series([s.details.get(key) if s is not None else None for s in scores],
                                                   dtype=object)
            for i, e in enumerate(errors):
                if e:
                    all_errors[i].append(e)
    finally:
        if bar is not None:
            bar.close()
    names = [m.name for m in chosen]
    if all(t in names for t in TRIAD):
        vs = [verdict(_val(h), _val(r), _val(c), config.thresholds)
              for h, r, c in zip(out["hallucination"], out["relevance"], out["completeness"])]
        out["verdict"] = pd.Series([v for v, _ in vs], dtype=object)
        out["verdict_rule"] = pd.Series([r for _, r in vs], dtype=object)
    out["error"] = pd.Series([" | ".join(e) if e else None for e in all_errors], dtype=object)
    meta: dict[str, Any] = {"metrics": names, "config": config.as_dict()}
    if resources._judge is not None:
        from .judge import prompts_sha256

        j = resources._judge
        meta["judge"] = {"signature": j.signature(), "usage": j.usage(), "prompts": dict(sorted(j.prompts_used.items())),
                         "prompts_sha256": prompts_sha256(sorted(j.prompts_used)) if j.prompts_used else None}
    out.attrs["evalkit"] = meta
    return out


def _missing(v: Any) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and v != v)


def _val(v: Any) -> float | None:
    return None if v is None or v is pd.NA or (isinstance(v, float) and v != v) else float(v)
