"""Aggregation: per-system (and per-question-type) summary tables from per-row scores.

Means are taken over determined rows only, and every cell says how many rows were
undetermined (metric returned None) or errored, so a NaN never hides inside a mean.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import pandas as pd

from evalkit.base.data import error_of, is_missing
from evalkit.metrics import REGISTRY


def json_ready(obj: Any, ndigits: int = 10) -> Any:
    """Plain, deterministic JSON values: floats rounded to ``ndigits``, NaN -> None, numpy scalars ->
    Python, tuples -> lists, dict keys -> str. Used for metrics.json and calibration summaries.

    >>> import numpy as np
    >>> json_ready({"a": float("nan"), 1: (np.float64(0.123456789012345), np.int64(3))})
    {'a': None, '1': [0.123456789, 3]}
    """
    if isinstance(obj, dict):
        return {str(k): json_ready(v, ndigits) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_ready(v, ndigits) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, (str, bytes)):  # numpy scalar
        obj = obj.item()
    if isinstance(obj, float):
        return None if math.isnan(obj) else round(obj, ndigits)
    return obj


def scored_metrics(results: pd.DataFrame) -> list[str]:
    """Registered metric names that have a value column in ``results``."""
    return [m for m in REGISTRY if m in results.columns]


def summary_reads(column: str, by: Sequence[str] = ("system",)) -> bool:
    """Whether :func:`summary` (grouped ``by``) reads ``column``: grouping keys, ``error``, ``verdict``, metric
    values and their statistics columns. A summary of only these columns equals one of the whole results.

    >>> [c for c in ("system", "answer", "relevance", "relevance_details", "error") if summary_reads(c)]
    ['system', 'relevance', 'error']
    """
    if column in by or column in ("error", "verdict") or column in REGISTRY:
        return True
    return any(m.stats is not None and column in m.stats.columns(name) for name, m in REGISTRY.items())


def errored(results: pd.DataFrame, metric: str) -> pd.Series:
    """Boolean mask: rows whose ``error`` column names ``metric`` (the runner writes ``"metric: Type: message"``
    entries joined by ``" | "``).

    >>> errored(pd.DataFrame({"error": [None, "relevance: ValueError: x | hallucination: E: y"]}), "hallucination").tolist()
    [False, True]
    """
    if "error" not in results.columns:
        return pd.Series(False, index=results.index)
    return results["error"].map(lambda e: error_of(e, metric) is not None)


BOOTSTRAP_CELLS = 1_000_000  # resampled indices held at once: memory stays flat however many rows


def _bootstrap(n: int, statistic, *, n_resamples: int, seed: int, level: float,
               chunk: int) -> tuple[float | None, float | None]:
    """Percentile interval of ``statistic(index_matrix) -> one value per resample`` over rows resampled with
    replacement (seeded; at most ``chunk`` resamples, and at most ``BOOTSTRAP_CELLS`` indices, at a time, so
    memory does not grow with ``n``; the generator yields the same indices however they are cut)."""
    import numpy as np

    if n < 2 or n_resamples < 1:
        return None, None
    chunk = max(1, min(chunk, BOOTSTRAP_CELLS // n))
    rng = np.random.default_rng(seed)
    stats = np.concatenate([statistic(rng.integers(0, n, (min(chunk, n_resamples - i), n)))
                            for i in range(0, n_resamples, chunk)])
    stats = stats[~np.isnan(stats)]
    if not len(stats):
        return None, None
    a = (1 - level) / 2
    return float(np.quantile(stats, a)), float(np.quantile(stats, 1 - a))


def mean_interval(values, *, n_resamples: int = 1000, seed: int = 0, level: float = 0.95,
                  chunk: int = 200) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of a mean over rows (seeded; resampled in chunks so memory stays
    ``chunk * len(values)``). None, None for fewer than two values.

    >>> mean_interval([1.0, 1.0, 1.0])
    (1.0, 1.0)
    >>> lo, hi = mean_interval([0.0, 1.0] * 20, n_resamples=500)
    >>> lo < 0.5 < hi
    True
    """
    import numpy as np

    x = np.asarray(values, dtype=float)
    return _bootstrap(len(x), lambda idx: x[idx].mean(axis=1), n_resamples=n_resamples, seed=seed, level=level,
                      chunk=chunk)


def ratio_interval(part, whole, *, n_resamples: int = 1000, seed: int = 0, level: float = 0.95,
                   chunk: int = 200) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of a corpus ratio ``sum(part) / sum(whole)``, resampling rows (the
    unit that was sampled), not the counted things inside them; resamples whose whole is 0 are dropped.

    >>> ratio_interval([1, 2, 3], [2, 4, 6])  # every row is a half
    (0.5, 0.5)
    """
    import numpy as np

    p, w = np.asarray(part, dtype=float), np.asarray(whole, dtype=float)

    def share(idx):
        tot = w[idx].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(tot > 0, p[idx].sum(axis=1) / np.where(tot > 0, tot, 1), np.nan)

    return _bootstrap(len(p), share, n_resamples=n_resamples, seed=seed, level=level, chunk=chunk)


def micro_cell(results: pd.DataFrame, metric: str, *, n_resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The corpus (micro) value of a metric with typed statistics, on the metric's scale, with its interval.

    ``micro`` sums the statistics columns over the rows that have them (see :mod:`evalkit.metrics.stats`);
    None for a metric without statistics or when nothing was counted.

    >>> df = pd.DataFrame({"completeness": [1.0, 0.25], "completeness_matched": [1, 1],
    ...                    "completeness_expected": [1, 4]})
    >>> micro_cell(df, "completeness", n_resamples=0)["micro"]  # (1 + 1) / (1 + 4); the row mean is 0.625
    0.4
    """
    row: dict[str, Any] = {"micro": None, "micro_low": None, "micro_high": None}
    m = REGISTRY[metric]
    cols = m.stats.columns(metric) if m.stats is not None else ()
    if not cols or not all(c in results.columns for c in cols):
        return row
    counts = results[list(cols)].dropna().astype("int64")
    part, whole = counts[cols[0]].to_numpy(), counts[cols[1]].to_numpy()
    share = m.stats.micro(dict(zip(m.stats.field_names(), (int(part.sum()), int(whole.sum())))))
    if share is None:
        return row
    scale = m.range[1] if m.range and math.isfinite(m.range[1]) else 1.0
    lo, hi = ratio_interval(part, whole, n_resamples=n_resamples, seed=seed)
    if m.stats.COMPLEMENT and lo is not None:
        lo, hi = 1.0 - hi, 1.0 - lo
    row.update({"micro": scale * share, "micro_low": None if lo is None else scale * lo,
                "micro_high": None if hi is None else scale * hi})
    return row


def _cell(col: pd.Series, kind: str, n_error: int, n_resamples: int, seed: int) -> dict[str, Any]:
    """One group x metric: counts, and the mean (scores), share of True (booleans) or label counts, with a
    bootstrap interval of the mean over determined rows."""
    import json

    det = col.dropna()
    row: dict[str, Any] = {"kind": kind, "n": len(col), "n_determined": len(det), "n_error": n_error,
                           "n_undetermined": len(col) - len(det) - n_error,
                           "mean": None, "low": None, "high": None, "count_true": None, "pct_true": None, "counts": None}
    if kind == "label":  # labels have no mean: they are counted
        row["counts"] = json.dumps({str(k): int(v) for k, v in det.value_counts().sort_index().items()}, sort_keys=True)
        return row
    vals = det.astype(bool).astype(float) if kind == "bool" else det.astype(float)
    if kind == "bool":
        t = int(vals.sum())
        row.update({"count_true": t, "pct_true": 100 * t / len(det) if len(det) else None})
    row["mean"] = float(vals.mean()) if len(det) else None
    row["low"], row["high"] = mean_interval(vals.to_numpy(), n_resamples=n_resamples, seed=seed)
    return row


def summary(results: pd.DataFrame, by: Sequence[str] | str | None = "system",
            metrics: Sequence[str] | None = None, *, n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """A tidy summary: one row per group x metric.

    Columns: group keys, ``metric``, ``kind``, ``n`` (rows), ``n_determined`` (rows with a value),
    ``n_error`` (rows whose ``error`` column names the metric: it failed there),
    ``n_undetermined`` (rows where it ran and had nothing to judge; ``n = n_determined + n_error +
    n_undetermined``), ``mean`` (scores; share of True for booleans; None for labels), ``low`` and
    ``high`` (seeded percentile bootstrap 95% interval of the mean over rows; ``n_resamples=0`` skips it),
    ``count_true`` and ``pct_true`` (booleans only), ``counts`` (labels: JSON of label -> count);
    ``micro``, ``micro_low``, ``micro_high``: the corpus value summed from the metric's typed statistics
    (every counted anchor/keyword/check weighs the same, where ``mean`` weighs every row the same) with
    its row-resampled 95% interval, for metrics that declare statistics (None for the rest).

    Parameters
    ----------
    results : output of :func:`evalkit.evaluate`.
    by : column(s) to group by, e.g. ``"system"`` or ``["system", "question_type"]``;
         None for the whole dataset. Missing grouping columns are ignored.
    metrics : metric names (default: every registered metric with a column in ``results``).

    Examples
    --------
    >>> df = pd.DataFrame({"relevance": [0.5, None, None], "error": [None, "relevance: ValueError: x", None]})
    >>> summary(df, by=None)[["metric", "n", "n_determined", "n_error", "n_undetermined", "mean"]].to_dict("records")
    [{'metric': 'relevance', 'n': 3, 'n_determined': 1, 'n_error': 1, 'n_undetermined': 1, 'mean': 0.5}]
    """
    keys = [by] if isinstance(by, str) else list(by or [])
    keys = [k for k in keys if k in results.columns]
    metrics = list(metrics or scored_metrics(results))
    errors = {m: errored(results, m) for m in metrics}
    groups = results.groupby(keys, dropna=False, sort=True) if keys else [((), results)]
    rows = []
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        for m in metrics:
            row = {**dict(zip(keys, key)), "metric": m}
            row.update(_cell(g[m], REGISTRY[m].kind, int(errors[m].loc[g.index].sum()), n_resamples, seed))
            row.update(micro_cell(g, m, n_resamples=n_resamples, seed=seed))
            rows.append(row)
    return pd.DataFrame(rows)


def _label(metric: str) -> str:
    """A metric as a table row names it: with its registry scale and direction."""
    m = REGISTRY.get(metric)
    if m is None:
        return metric
    return f"{metric} ({m.reads_as})"


def _interval_text(values, lows, highs, fmt: str) -> list[str]:
    return ["" if v is None or v != v else fmt.format(v) + (f" [{fmt.format(lo)}, {fmt.format(hi)}]"
                                                             if lo is not None and lo == lo else "")
            for v, lo, hi in zip(values, lows, highs)]


def readable(summary_df: pd.DataFrame, by: str | None = "system", digits: int = 3) -> pd.DataFrame:
    """A summary a person reads: one row per metric (its scale and direction named), per group the mean with
    its 95% interval, the corpus (micro) value where the metric counts things, and the row counts
    ``n (undetermined, errors)``.

    >>> df = pd.DataFrame({"metric": ["relevance"], "n": [3], "n_undetermined": [1], "n_error": [0],
    ...                    "mean": [0.5], "low": [0.25], "high": [0.75]})
    >>> readable(df, by=None).to_dict("records")
    [{'metric': 'relevance (0..1, higher is better)', 'mean [95% CI]': '0.500 [0.250, 0.750]', 'n (undet., err.)': '3 (1, 0)'}]
    """
    d = summary_df[summary_df["mean"].notna()].copy()
    fmt = f"{{:.{digits}f}}"
    d["mean [95% CI]"] = _interval_text(d["mean"], d["low"], d["high"], fmt)
    cols = ["mean [95% CI]"]
    if "micro" in d.columns and d["micro"].notna().any():
        d["micro [95% CI]"] = _interval_text(d["micro"], d["micro_low"], d["micro_high"], fmt)
        cols.append("micro [95% CI]")
    d["n (undet., err.)"] = [f"{n} ({u}, {e})" for n, u, e in zip(d["n"], d["n_undetermined"], d["n_error"])]
    cols.append("n (undet., err.)")
    d["metric"] = [_label(m) for m in d["metric"]]
    if not by or by not in d.columns:
        return d[["metric", *cols]].reset_index(drop=True)
    # rows without a group value are a group of their own, named, and last (a NaN key cannot be sorted with text)
    d[by] = ["(missing)" if is_missing(g) else g for g in d[by]]
    out = d.pivot(index="metric", columns=by, values=cols)
    out.columns = [f"{g}: {c}" for c, g in out.columns]
    groups = sorted(d[by].unique(), key=lambda g: (g == "(missing)", str(g)))
    order = [f"{g}: {c}" for g in groups for c in cols]
    return out[order].reindex(list(dict.fromkeys(d["metric"])))


def wide(summary_df: pd.DataFrame, by: Sequence[str] | str | None = "system") -> pd.DataFrame:
    """Pivot :func:`summary` to one row per group and one column per metric mean."""
    keys = [by] if isinstance(by, str) else list(by or [])
    keys = [k for k in keys if k in summary_df.columns]
    if not keys:
        return summary_df.set_index("metric")[["mean"]].T
    return summary_df.pivot_table(index=keys, columns="metric", values="mean", sort=True)


def evidence_table(results: pd.DataFrame, metric: str, *, rows=None, n: int | None = None,
                   columns: Sequence[str] = ("id", "system", "question", "answer")) -> pd.DataFrame:
    """The rows' values of ``metric`` beside the readable parts of their evidence (one column per key).

    The keys shown are ``reason`` (why a value is undetermined) and the metric's declared
    ``evidence_keys`` (:class:`evalkit.metrics.base.Metric`), each where some row has it.
    ``rows`` selects by index labels or a boolean mask; ``n`` keeps the first n.

    >>> df = pd.DataFrame({"relevance": [0.25], "relevance_details": ['{"cosine": 0.5, "jaccard": 0.0}']})
    >>> evidence_table(df, "relevance").to_dict("records")
    [{'relevance': 0.25, 'cosine': 0.5, 'jaccard': 0.0}]
    """
    d = results if rows is None else results.loc[rows]
    if n is not None:
        d = d.head(n)
    keep = [c for c in columns if c in d.columns]
    out = d[keep + [metric]].copy()
    details = _details_column(d, metric)
    declared = REGISTRY[metric].evidence_keys if metric in REGISTRY else ()
    for key in ("reason", *declared):
        vals = details.map(lambda x: x.get(key))
        if vals.notna().any():
            out[key] = vals.map(lambda v: ", ".join(map(str, v)) if isinstance(v, list)
                                else ("" if not isinstance(v, dict) and pd.isna(v) else v))
    return out


def _details_column(d: pd.DataFrame, metric: str) -> pd.Series:
    """``<metric>_details`` read back as dicts; an unreadable cell names its row and column."""
    from evalkit.base.data import DetailsError, details_of_cell

    out = {}
    for label, cell in d[f"{metric}_details"].items():
        try:
            out[label] = details_of_cell(cell)
        except DetailsError as e:
            raise ValueError(f"row {label!r}, column {metric}_details: {e}") from None
    return pd.Series(out, index=d.index, dtype=object)


def disagreements(results: pd.DataFrame, rule, label: str, threshold: float | None = None,
                  direction: str = "higher"):
    """Rows where a threshold rule disagrees with a binary human label.

    ``rule`` is a :class:`evalkit.base.thresholds.Threshold` (e.g. one of the verdict's rules, so the rows
    shown are the ones the verdict flags), or a metric name with ``threshold`` and ``direction``
    (calibration's rule: ``direction='higher'`` flags ``score >= threshold``). Rows whose score or
    label is missing are left out. Returns ``(false_positives, false_negatives)``: flagged by the rule
    but not by the label, and the reverse.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"s": [0.2, 0.5, 0.9], "y": [True, False, True]})
    >>> fp, fn = disagreements(df, "s", "y", threshold=0.5)
    >>> fp.index.tolist(), fn.index.tolist()
    ([1], [0])
    """
    from evalkit.base.thresholds import Threshold

    if not isinstance(rule, Threshold):
        if threshold is None:
            raise ValueError("disagreements: pass a Threshold, or a metric name with threshold=")
        rule = Threshold.from_direction(rule, threshold, direction)
    d = results.dropna(subset=[rule.metric, label])
    flagged = pd.Series(rule.flags_array(d[rule.metric].astype(float).to_numpy()), index=d.index)
    truth = d[label].astype(bool)
    return d[flagged & ~truth], d[~flagged & truth]
