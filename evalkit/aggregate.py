"""Aggregation: per-system (and per-question-type) summary tables from per-row scores.

Means are taken over determined rows only, and every cell says how many rows were
undetermined (metric returned None) or errored, so a NaN never hides inside a mean.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import pandas as pd

from .metrics import REGISTRY


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


def summary(results: pd.DataFrame, by: Sequence[str] | str | None = "system",
            metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """A tidy summary: one row per group x metric.

    Columns: group keys, ``metric``, ``kind``, ``n`` (rows), ``n_determined``,
    ``n_undetermined``, ``mean`` (scores; share of True for booleans),
    ``count_true`` and ``pct_true`` (booleans only), ``counts`` (labels: JSON of label -> count).

    Parameters
    ----------
    results : output of :func:`evalkit.evaluate`.
    by : column(s) to group by, e.g. ``"system"`` or ``["system", "question_type"]``;
         None for the whole dataset. Missing grouping columns are ignored.

    Examples
    --------
    >>> import evalkit
    >>> res = evalkit.evaluate("data/sample_rag.jsonl", ["exact_match"], progress=False)  # doctest: +SKIP
    >>> summary(res, by="system").columns.tolist()[:3]  # doctest: +SKIP
    ['system', 'metric', 'kind']
    """
    keys = [by] if isinstance(by, str) else list(by or [])
    keys = [k for k in keys if k in results.columns]
    metrics = list(metrics or scored_metrics(results))
    groups = results.groupby(keys, dropna=False, sort=True) if keys else [((), results)]
    rows = []
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        for m in metrics:
            kind = REGISTRY[m].kind
            col = g[m]
            det = col.dropna()
            row = dict(zip(keys, key))
            row.update({"metric": m, "kind": kind, "n": len(col), "n_determined": len(det),
                        "n_undetermined": len(col) - len(det)})
            if kind == "label":
                import json

                counts = {str(k): int(v) for k, v in det.value_counts().sort_index().items()}
                row.update({"mean": None, "count_true": None, "pct_true": None,
                            "counts": json.dumps(counts, sort_keys=True)})
            elif kind == "bool":
                t = int(det.astype(bool).sum())
                row.update({"mean": t / len(det) if len(det) else None, "count_true": t,
                            "pct_true": 100 * t / len(det) if len(det) else None})
            else:
                row.update({"mean": float(det.astype(float).mean()) if len(det) else None,
                            "count_true": None, "pct_true": None})
            rows.append(row)
    return pd.DataFrame(rows)


def wide(summary_df: pd.DataFrame, by: Sequence[str] | str | None = "system") -> pd.DataFrame:
    """Pivot :func:`summary` to one row per group and one column per metric mean."""
    keys = [by] if isinstance(by, str) else list(by or [])
    keys = [k for k in keys if k in summary_df.columns]
    if not keys:
        return summary_df.set_index("metric")[["mean"]].T
    return summary_df.pivot_table(index=keys, columns="metric", values="mean", sort=True)


_EVIDENCE_KEYS = ("reason", "unsupported", "missing", "found", "matched", "cosine", "jaccard", "ngram_overlap",
                  "p_drift", "is_correct")


def evidence_table(results: pd.DataFrame, metric: str, *, rows=None, n: int | None = None,
                   columns: Sequence[str] = ("id", "system", "question", "answer")) -> pd.DataFrame:
    """The rows' values of ``metric`` beside the readable parts of their evidence (one column per key).

    ``rows`` selects by index labels or a boolean mask; ``n`` keeps the first n.
    """
    import json

    d = results if rows is None else results.loc[rows]
    if n is not None:
        d = d.head(n)
    keep = [c for c in columns if c in d.columns]
    out = d[keep + [metric]].copy()
    details = d[f"{metric}_details"].map(lambda s: json.loads(s) if isinstance(s, str) else {})
    for key in _EVIDENCE_KEYS:
        vals = details.map(lambda x: x.get(key))
        if vals.notna().any():
            out[key] = vals.map(lambda v: ", ".join(map(str, v)) if isinstance(v, list)
                                else ("" if not isinstance(v, dict) and pd.isna(v) else v))
    return out


def disagreements(results: pd.DataFrame, metric: str, label: str, threshold: float, direction: str = "higher"):
    """Rows where the metric at ``threshold`` disagrees with a binary human label.

    Returns ``(false_positives, false_negatives)``: flagged by the metric but not by the label, and the reverse.
    ``direction='higher'`` flags ``score >= threshold``.
    """
    d = results.dropna(subset=[metric, label])
    s = d[metric].astype(float)
    flagged = s >= threshold if direction == "higher" else s <= threshold
    truth = d[label].astype(bool)
    return d[flagged & ~truth], d[~flagged & truth]
