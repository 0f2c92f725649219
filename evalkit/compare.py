"""Paired comparison of systems on the same questions: bootstrap CI of mean differences and McNemar's test.

Rows are paired by ``id`` (the question); only questions both systems answered are used, and the
table says how many pairs that was.

Examples
--------
>>> import pandas as pd
>>> df = pd.DataFrame({"id": ["q1", "q2", "q3", "q1", "q2", "q3"], "system": ["a"] * 3 + ["b"] * 3,
...                    "score": [0.2, 0.4, 0.6, 0.5, 0.7, 0.9]})
>>> t = compare_systems(df, ["score"], "a", "b", n_resamples=200)
>>> round(float(t.loc[0, "diff"]), 3), int(t.loc[0, "n_pairs"])
(0.3, 3)
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from scipy.stats import binomtest


def paired_bootstrap(a: np.ndarray, b: np.ndarray, *, n_resamples: int = 2000, seed: int = 0,
                     level: float = 0.95) -> tuple[float, float, float, float]:
    """Mean of ``b - a`` with a percentile bootstrap CI over pairs, and a two-sided bootstrap p-value."""
    d = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, len(d), (n_resamples, len(d)))].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, 1 - (1 - level) / 2])
    # p: how often the resampled mean falls on the other side of zero (two-sided, +1 smoothing)
    p = min(1.0, 2 * (min((means <= 0).sum(), (means >= 0).sum()) + 1) / (n_resamples + 1))
    return float(d.mean()), float(lo), float(hi), float(p)


def mcnemar(a: Sequence[bool], b: Sequence[bool]) -> dict[str, float]:
    """Exact McNemar test on paired binary outcomes (e.g. correct/wrong): discordant pairs only."""
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    only_a, only_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
    n = only_a + only_b
    p = float(binomtest(only_a, n, 0.5).pvalue) if n else 1.0
    return {"only_a": only_a, "only_b": only_b, "both": int(np.sum(a & b)), "neither": int(np.sum(~a & ~b)), "p_value": p}


def _pairs(results: pd.DataFrame, col: str, a: str, b: str) -> pd.DataFrame:
    d = results[results["system"].isin([a, b])].pivot_table(index="id", columns="system", values=col, aggfunc="first",
                                                            dropna=False)
    return d.dropna() if set(d.columns) >= {a, b} else pd.DataFrame(columns=[a, b])


def compare_systems(results: pd.DataFrame, metrics: Sequence[str], system_a: str, system_b: str, *,
                    by: str | None = None, n_resamples: int = 2000, seed: int = 0,
                    binary: Sequence[str] = ()) -> pd.DataFrame:
    """A tidy paired-comparison table, one row per metric (and per ``by`` group).

    Columns: ``metric``, [``by``], ``system_a``, ``system_b``, ``n_pairs``, ``mean_a``, ``mean_b``,
    ``diff`` (b - a), ``low``, ``high`` (95% paired bootstrap CI), ``p_bootstrap``, and, for the
    ``binary`` columns (e.g. ``correct``), McNemar's ``only_a``, ``only_b``, ``p_mcnemar``.
    """
    if "system" not in results.columns:
        raise ValueError("comparison needs a 'system' column")
    for s in (system_a, system_b):
        if s not in set(results["system"]):
            raise ValueError(f"system {s!r} not in the data (systems: {sorted(set(results['system']))})")
    groups = [(None, results)] if by is None else list(results.groupby(by, sort=True))
    rows = []
    for gv, g in groups:
        for m in list(metrics) + [c for c in binary if c not in metrics]:
            if m not in g.columns:
                raise ValueError(f"column {m!r} not in results")
            col = g[m].astype("Float64") if g[m].dtype == bool or str(g[m].dtype) == "boolean" else g[m]
            pr = _pairs(g.assign(**{m: col}), m, system_a, system_b)
            row = {"metric": m, "system_a": system_a, "system_b": system_b, "n_pairs": len(pr)}
            if by is not None:
                row[by] = gv
            if len(pr):
                a, b = pr[system_a].astype(float).to_numpy(), pr[system_b].astype(float).to_numpy()
                diff, lo, hi, p = paired_bootstrap(a, b, n_resamples=n_resamples, seed=seed)
                row.update({"mean_a": a.mean(), "mean_b": b.mean(), "diff": diff, "low": lo, "high": hi, "p_bootstrap": p})
                if m in binary:
                    mc = mcnemar(a.astype(bool), b.astype(bool))
                    row.update({"only_a": mc["only_a"], "only_b": mc["only_b"], "p_mcnemar": mc["p_value"]})
            rows.append(row)
    cols = ["metric"] + ([by] if by else []) + ["system_a", "system_b", "n_pairs", "mean_a", "mean_b", "diff", "low",
                                                 "high", "p_bootstrap", "only_a", "only_b", "p_mcnemar"]
    return pd.DataFrame(rows).reindex(columns=cols)
