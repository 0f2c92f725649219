"""Paired comparison of systems on the same questions: bootstrap CI of mean differences and McNemar's test.

Rows are paired explicitly with ``pair_on``: ``"id"`` (the default when the data has ids),
``"question"`` (the question text, the default without ids), or any column. Only items both
systems answered are used and the table says how many pairs that was. Groups (``by``) with fewer
than ``min_pairs`` pairs are flagged ``small`` and their p-values are not findings. Across the
metrics of one table, Holm's step-down adjustment of the bootstrap p-values is given beside the raw
ones (per group).

Examples
--------
>>> import pandas as pd
>>> df = pd.DataFrame({"id": ["q1", "q2", "q3", "q1", "q2", "q3"], "system": ["a"] * 3 + ["b"] * 3,
...                    "score": [0.2, 0.4, 0.6, 0.5, 0.7, 0.9]})
>>> t = compare_systems(df, ["score"], "a", "b", n_resamples=200, min_pairs=2)
>>> round(float(t.loc[0, "diff"]), 3), int(t.loc[0, "n_pairs"])
(0.3, 3)
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd
from scipy.stats import binomtest

MIN_PAIRS = 10


class CompareError(ValueError):
    """The comparison cannot be made as asked (no system column, unknown system, nothing paired)."""


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


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (None stays None), monotone and capped at 1.

    >>> holm([0.125, 0.5, 0.25, None])
    [0.375, 0.5, 0.5, None]
    """
    idx = [i for i, p in enumerate(pvalues) if p is not None and p == p]
    order = sorted(idx, key=lambda i: pvalues[i])
    out: list[float | None] = [None] * len(pvalues)
    running, m = 0.0, len(order)
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(pvalues[i])))
        out[i] = running
    return out


def default_pair_on(results: pd.DataFrame) -> str:
    """``id`` when the data has its own ids, else the question text."""
    has_ids = "id" in results.columns and not results["id"].astype(str).str.fullmatch(r"row-\d+").all()
    return "id" if has_ids else "question"


def _pairs(results: pd.DataFrame, col: str, a: str, b: str, pair_on: str) -> pd.DataFrame:
    d = results[results["system"].isin([a, b])].pivot_table(index=pair_on, columns="system", values=col,
                                                            aggfunc="first", dropna=False)
    return d.dropna() if set(d.columns) >= {a, b} else pd.DataFrame(columns=[a, b])


def _check_inputs(results: pd.DataFrame, system_a: str, system_b: str, pair_on: str) -> None:
    if "system" not in results.columns:
        raise CompareError("comparison needs a 'system' column naming which system gave each answer")
    systems = sorted(set(results["system"].dropna()))
    if system_a == system_b:  # every difference would be 0 with an interval of width 0: not a comparison
        others = [s for s in systems if s != system_a]
        raise CompareError(f"--a and --b name the same system {system_a!r}; compare it with another one"
                           + (f" (systems: {others})" if others else ""))
    for s in (system_a, system_b):
        if s not in systems:
            raise CompareError(f"system {s!r} not in the data (systems: {systems})")
    if pair_on not in results.columns:
        raise CompareError(f"cannot pair on {pair_on!r}: no such column (use --pair-on id, question or a column)")
    for s in (system_a, system_b):
        keys = results.loc[results["system"] == s, pair_on]
        dup = keys[keys.duplicated()]
        if len(dup):
            raise CompareError(f"pairing on {pair_on!r} needs one answer per system per item; system {s!r} has "
                               f"{len(dup)} repeated {pair_on} value(s), e.g. {dup.iloc[0]!r}")
    shared = set(results.loc[results["system"] == system_a, pair_on]) & set(
        results.loc[results["system"] == system_b, pair_on])
    if not shared:
        raise CompareError(f"no pairs: rows are paired by {pair_on!r}, and no {pair_on} value has an answer from "
                           f"both {system_a!r} and {system_b!r}; pair on another column with --pair-on "
                           f"(e.g. question) or give both systems' answers the same ids")


def _compare_one(g: pd.DataFrame, m: str, system_a: str, system_b: str, pair_on: str, binary: Sequence[str],
                 n_resamples: int, seed: int) -> dict:
    col = g[m].astype("Float64") if g[m].dtype == bool or str(g[m].dtype) == "boolean" else g[m]
    pr = _pairs(g.assign(**{m: col}), m, system_a, system_b, pair_on)
    row = {"metric": m, "system_a": system_a, "system_b": system_b, "n_pairs": len(pr)}
    if len(pr):
        a, b = pr[system_a].astype(float).to_numpy(), pr[system_b].astype(float).to_numpy()
        diff, lo, hi, p = paired_bootstrap(a, b, n_resamples=n_resamples, seed=seed)
        row.update({"mean_a": a.mean(), "mean_b": b.mean(), "diff": diff, "low": lo, "high": hi, "p_bootstrap": p})
        if m in binary:
            mc = mcnemar(a.astype(bool), b.astype(bool))
            row.update({"only_a": mc["only_a"], "only_b": mc["only_b"], "p_mcnemar": mc["p_value"]})
    return row


def compare_systems(results: pd.DataFrame, metrics: Sequence[str], system_a: str, system_b: str, *,
                    by: str | None = None, n_resamples: int = 2000, seed: int = 0,
                    binary: Sequence[str] = (), positive: Any = None, pair_on: str | None = None,
                    min_pairs: int = MIN_PAIRS) -> pd.DataFrame:
    """A tidy paired-comparison table, one row per metric (and per ``by`` group).

    Columns: ``metric``, [``by``], ``system_a``, ``system_b``, ``n_pairs``, ``mean_a``, ``mean_b``,
    ``diff`` (b - a), ``low``, ``high`` (95% paired bootstrap CI), ``p_bootstrap``, ``p_holm`` (Holm
    across the metrics of the group), for the ``binary`` columns McNemar's ``only_a``, ``only_b``,
    ``p_mcnemar``; ``small`` (fewer than ``min_pairs`` pairs: not a finding) and ``note``.

    The ``binary`` columns are read as :func:`evalkit.decide.calibrate.binary_labels` reads a label: booleans
    or 0/1 as they are, or with ``positive`` naming the class counted as True (``"Y"``, ``"pass"``, or
    a comparison on an ordinal column such as ``">=4"``); ``mean_a``/``mean_b`` are that class's rates.

    Raises
    ------
    CompareError
        No ``system`` column, an unknown system, an absent ``pair_on`` column, repeated pairing
        keys within a system, or no item answered by both systems.
    """
    pair_on = pair_on or default_pair_on(results)
    _check_inputs(results, system_a, system_b, pair_on)
    for m in list(metrics) + list(binary):
        if m not in results.columns:
            raise CompareError(f"column {m!r} not in results")
    if by is not None and by not in results.columns:
        raise CompareError(f"--by {by!r}: no such column")
    if binary:  # Y/N or a Likert column needs `positive`; anything not binary is refused, naming the column
        from evalkit.decide.calibrate import binary_labels

        results = results.assign(**{c: pd.array(binary_labels(results[c].tolist(), positive=positive, column=c),
                                                dtype="boolean") for c in binary})
    groups = [(None, results)] if by is None else list(results.groupby(by, sort=True))
    rows = []
    for gv, g in groups:
        part = [_compare_one(g, m, system_a, system_b, pair_on, binary, n_resamples, seed)
                for m in list(metrics) + [c for c in binary if c not in metrics]]
        for r, adj in zip(part, holm([r.get("p_bootstrap") for r in part])):
            r["p_holm"] = adj
            r["small"] = r["n_pairs"] < min_pairs
            r["note"] = (f"only {r['n_pairs']} pairs (< {min_pairs}): p-values are not findings" if r["small"] else "")
            if by is not None:
                r[by] = gv
        rows += part
    cols = ["metric"] + ([by] if by else []) + ["system_a", "system_b", "n_pairs", "mean_a", "mean_b", "diff", "low",
                                                 "high", "p_bootstrap", "p_holm", "only_a", "only_b", "p_mcnemar",
                                                 "small", "note"]
    out = pd.DataFrame(rows).reindex(columns=cols)
    out.attrs["pair_on"] = pair_on
    return out
