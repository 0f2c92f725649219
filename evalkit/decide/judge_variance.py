"""How much of a judged metric's number is the judge's noise: summaries of repeated judge runs.

With ``judge.repeats: k`` every judged row keeps each repeat's value in ``<metric>_details["repeats"]`` (its
value is their mean). From those, per metric:

- ``mean``: the mean over rows of each row's mean over its determined repeats (the metric column's mean);
- a **two-level bootstrap** interval: resample rows with replacement, then, within each drawn row, resample its
  repeats with replacement; the statistic is the mean of the resampled row means. The rows-only interval
  (rows resampled, each row at its mean) is computed from the same row draws, so it is what an interval
  that ignores the judge shows; with a deterministic judge the two are equal;
- ``judge_share``: the share of the variance that lies within rows, between repeats of the same question:
  ``SS_within / SS_total`` over the rows with two or more determined repeats (0: the judge always agrees with
  itself; 1: the rows differ only by the judge's noise);
- Krippendorff's ``alpha`` (interval metric), repeats as coders and rows as units:
  ``alpha = 1 - D_o / D_e`` with ``D_o = (1/n) sum_u 2 m_u SS_u / (m_u - 1)`` and ``D_e = 2 SS / (n - 1)``, over
  the n values of units with ``m_u >= 2`` values (``SS_u`` and ``SS`` are sums of squared deviations from the
  unit's and the pooled mean). 1: the repeats agree perfectly.

Undefined numbers are ``None`` (no row with two repeats; no variation at all), never NaN.

Examples
--------
>>> v = np.array([[1.0, 2.0], [3.0, 3.0]])
>>> round(judge_variance_share(v), 6), round(krippendorff_alpha_interval(v), 6)  # 2/11 and 8/11
(0.181818, 0.727273)
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from evalkit.base.data import DetailsError, details_of_cell

CHUNK = 256  # bootstrap resamples drawn per block (bounds memory at CHUNK x rows x repeats)


@dataclass(frozen=True)
class JudgeVariance:
    """One metric's repeated-judge summary (see the module docstring for each number)."""

    metric: str
    rows: int  # rows with at least one determined repeat
    undetermined_rows: int  # rows with none (errors, undetermined values)
    repeats: int  # the most repeats a row has
    mean: float
    ci_low: float
    ci_high: float
    rows_ci_low: float
    rows_ci_high: float
    judge_share: float | None
    alpha: float | None
    confidence: float
    n_resamples: int
    seed: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _row_repeats(details: Any, value: Any, metric: str, row: Any) -> list[float]:
    """One row's repeat values (NaN for an undetermined repeat); the value alone when there were no repeats."""
    try:
        details = details_of_cell(details)
    except DetailsError as e:
        raise ValueError(f"row {row!r}, column {metric}_details: {e}") from None
    reps = details.get("repeats")
    if reps is None:
        reps = [] if value is None or pd.isna(value) else [value]
    out = []
    for v in reps:
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float, np.number))):
            raise ValueError(f"row {row!r}, column {metric}_details: repeat value {v!r} is not a number "
                             f"(judge variance needs a numeric metric)")
        out.append(np.nan if v is None else float(v))
    return out


def repeat_matrix(df: pd.DataFrame, metric: str) -> np.ndarray:
    """Rows x repeats of ``metric`` from ``<metric>_details["repeats"]`` (NaN where a repeat is missing).

    >>> df = pd.DataFrame({"m": [1.5, 3.0], "m_details": ['{"repeats": [1, 2]}', '{"repeats": [3, null]}']})
    >>> repeat_matrix(df, "m").tolist()
    [[1.0, 2.0], [3.0, nan]]
    """
    col = f"{metric}_details"
    if col not in df.columns:
        raise KeyError(f"judge variance: no column {col!r} (score {metric!r} with evalkit.evaluate first)")
    values = df[metric] if metric in df.columns else pd.Series([None] * len(df), index=df.index)
    rows = [_row_repeats(d, v, metric, i) for i, d, v in zip(df.index, df[col], values)]
    k = max((len(r) for r in rows), default=0)
    return np.array([r + [np.nan] * (k - len(r)) for r in rows], dtype=float).reshape(len(rows), k)


def _determined(values: np.ndarray) -> np.ndarray:
    """The rows with at least one determined repeat, each row's determined values moved to its front."""
    values = np.asarray(values, dtype=float)
    values = values[(~np.isnan(values)).any(axis=1)] if values.size else values.reshape(0, 0)
    order = np.argsort(np.isnan(values), axis=1, kind="stable")
    return np.take_along_axis(values, order, axis=1)


def row_means(values: np.ndarray) -> np.ndarray:
    """Each row's mean over its determined repeats (rows with none are dropped)."""
    v = _determined(values)
    return np.nanmean(v, axis=1) if len(v) else np.empty(0)


def two_level_bootstrap(values: np.ndarray, n_resamples: int = 2000, confidence: float = 0.95,
                        seed: int = 0) -> tuple[tuple[float, float], tuple[float, float]]:
    """Percentile intervals of the mean of row means: ``(two_level, rows_only)``, each ``(low, high)``.

    Two-level: rows drawn with replacement, then each drawn row's repeats drawn with replacement (as many as it
    has). Rows only: the same row draws, each row at its mean. Seeded (``np.random.default_rng(seed)``).
    """
    v = _determined(values)
    if not len(v):
        raise ValueError("judge variance: no row has a determined value")
    n, counts, means = len(v), (~np.isnan(v)).sum(axis=1), np.nanmean(v, axis=1)
    rng = np.random.default_rng(seed)
    two, rows_only = [], []
    for start in range(0, n_resamples, CHUNK):
        b = min(CHUNK, n_resamples - start)
        drawn = rng.integers(0, n, size=(b, n))
        c = counts[drawn][..., None]
        picks = np.floor(rng.random((b, n, v.shape[1])) * c).astype(int)
        resampled = v[drawn[..., None], picks]
        inside = np.arange(v.shape[1]) < c  # only as many draws as the row has repeats
        two.append((np.where(inside, resampled, 0.0).sum(axis=2) / c[..., 0]).mean(axis=1))
        rows_only.append(means[drawn].mean(axis=1))
    tail = (1 - confidence) / 2
    q = [tail, 1 - tail]
    lo2, hi2 = np.quantile(np.concatenate(two), q)
    lo1, hi1 = np.quantile(np.concatenate(rows_only), q)
    return (float(lo2), float(hi2)), (float(lo1), float(hi1))


def _units(values: np.ndarray) -> list[np.ndarray]:
    """The determined values of each row that has two or more of them."""
    rows = (r[~np.isnan(r)] for r in np.asarray(values, dtype=float))
    return [r for r in rows if len(r) >= 2]


def judge_variance_share(values: np.ndarray) -> float | None:
    """``SS_within / SS_total`` over rows with two or more determined repeats; None when undefined."""
    units = _units(values)
    if not units:
        return None
    pooled = np.concatenate(units)
    total = float(((pooled - pooled.mean()) ** 2).sum())
    if total == 0:
        return None
    return float(sum(((u - u.mean()) ** 2).sum() for u in units)) / total


def krippendorff_alpha_interval(values: np.ndarray) -> float | None:
    """Krippendorff's alpha, interval metric, rows as units and repeats as coders; None when undefined
    (fewer than two pairable values, or no variation at all)."""
    units = _units(values)
    pooled = np.concatenate(units) if units else np.empty(0)
    n = len(pooled)
    if n < 2:
        return None
    expected = 2 * float(((pooled - pooled.mean()) ** 2).sum()) / (n - 1)
    if expected == 0:
        return None
    observed = sum(2 * len(u) * float(((u - u.mean()) ** 2).sum()) / (len(u) - 1) for u in units) / n
    return 1 - observed / expected


def metric_variance(df: pd.DataFrame, metric: str, *, n_resamples: int = 2000, confidence: float = 0.95,
                    seed: int = 0) -> JudgeVariance:
    """The repeated-judge summary of one metric of a results DataFrame."""
    values = repeat_matrix(df, metric)
    v = _determined(values)
    (lo, hi), (rlo, rhi) = two_level_bootstrap(values, n_resamples, confidence, seed)
    return JudgeVariance(metric, len(v), len(values) - len(v), values.shape[1], float(row_means(values).mean()),
                         lo, hi, rlo, rhi, judge_variance_share(values), krippendorff_alpha_interval(values),
                         confidence, n_resamples, seed)


def _numeric_repeats(cell: Any) -> bool | None:
    """Whether a details cell's repeats are numbers (None: the cell has no repeats)."""
    if not isinstance(cell, (str, Mapping)) or (isinstance(cell, str) and '"repeats"' not in cell):
        return None  # most cells: no repeats, no need to parse them
    reps = details_of_cell(cell).get("repeats")
    if reps is None:
        return None
    return all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in reps)


def repeated_metrics(df: pd.DataFrame) -> list[str]:
    """The numeric metrics of ``df`` whose details carry ``repeats`` (scored with ``judge.repeats`` > 1); a
    labelled metric (``answer_class``) keeps its repeats too, but has no variance to summarise.

    >>> repeated_metrics(pd.DataFrame({"a_details": ['{"repeats": [1, 2]}'], "b_details": ['{"repeats": ["X"]}']}))
    ['a']
    """
    out = []
    for col in (c for c in df.columns if c.endswith("_details")):
        kinds = (_numeric_repeats(d) for d in df[col])
        if next((k for k in kinds if k is not None), False):
            out.append(col[: -len("_details")])
    return out


def judge_variance(df: pd.DataFrame, metrics: Sequence[str] | None = None, *, n_resamples: int = 2000,
                   confidence: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """One row per metric (default: every metric scored with repeats): rows, repeats, mean, the two-level and
    rows-only bootstrap intervals, the judge's share of the variance and Krippendorff's alpha.

    Examples
    --------
    >>> import json
    >>> df = pd.DataFrame({"m": [1.5, 3.0, 5.0], "m_details": [json.dumps({"repeats": r}) for r in
    ...                                                         ([1, 2], [3, 3], [5, 5])]})
    >>> t = judge_variance(df, n_resamples=200)
    >>> r = t.iloc[0]
    >>> r["metric"], int(r["rows"]), int(r["repeats"]), round(float(r["mean"]), 4), round(float(r["alpha"]), 4)
    ('m', 3, 2, 3.1667, 0.9351)
    >>> round(72 / 77, 4)  # by hand: D_o = (2*2*0.5/1)/6 = 1/3, D_e = 2*(77/6)/5 = 77/15
    0.9351
    """
    names = list(metrics) if metrics is not None else repeated_metrics(df)
    rows = [metric_variance(df, m, n_resamples=n_resamples, confidence=confidence, seed=seed).to_dict()
            for m in names]
    return pd.DataFrame(rows, columns=list(JudgeVariance.__dataclass_fields__))
