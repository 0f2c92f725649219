"""Graded scores and agreement: rank correlation, Cohen's kappa, Krippendorff's alpha."""
from __future__ import annotations

import numpy as np
from sklearn.metrics import cohen_kappa_score

from evalkit.decide.calibrate.core import CalibrationError, Interval, interval_of


def rank_correlation(scores, ratings, *, n_resamples: int = 1000, seed: int = 0, level: float = 0.95) -> dict[str, Interval]:
    """Spearman's rho and Kendall's tau-b between a score and graded human ratings, with bootstrap CIs."""
    from scipy.stats import kendalltau, spearmanr

    x = np.asarray(scores, dtype=float)
    r = np.asarray(ratings, dtype=float)
    if len(x) != len(r) or np.isnan(x).any() or np.isnan(r).any():
        raise CalibrationError("scores and ratings must have equal length and no missing values")
    rng = np.random.default_rng(seed)
    sp, kt = [], []
    for _ in range(n_resamples):
        idx = rng.integers(0, len(x), len(x))
        if np.ptp(x[idx]) == 0 or np.ptp(r[idx]) == 0:
            continue
        sp.append(spearmanr(x[idx], r[idx]).statistic)
        kt.append(kendalltau(x[idx], r[idx]).statistic)
    return {"spearman": interval_of(float(spearmanr(x, r).statistic), sp, level),
            "kendall": interval_of(float(kendalltau(x, r).statistic), kt, level)}


def cohen_kappa(a, b, *, n_resamples: int = 1000, seed: int = 0, level: float = 0.95, weights=None) -> Interval:
    """Cohen's kappa between two labelings (e.g. a metric's verdict and a human label), with a bootstrap CI."""
    a, b = np.asarray([str(v) for v in a]), np.asarray([str(v) for v in b])
    est = float(cohen_kappa_score(a, b, weights=weights))
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(n_resamples):
        idx = rng.integers(0, len(a), len(a))
        if len(set(a[idx]) | set(b[idx])) < 2:
            continue
        samples.append(float(cohen_kappa_score(a[idx], b[idx], weights=weights)))
    return interval_of(est, samples, level)


def krippendorff_alpha(ratings, level_of_measurement: str = "nominal") -> float:
    """Krippendorff's alpha for several raters: ``ratings`` is raters x items (None/NaN = missing)."""
    import krippendorff

    data = np.asarray([[np.nan if v is None else v for v in row] for row in ratings], dtype=float)
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level_of_measurement))
