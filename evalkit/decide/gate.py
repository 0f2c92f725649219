"""A gate for CI: does each system's mean stay on the right side of every threshold rule?

:func:`check` reads scored results and threshold rules (a profile written by ``evalkit calibrate``, or rules by
hand) and, per system, compares the system's **mean** of each rule's metric with the rule, using the rule's own
comparison (:meth:`evalkit.base.thresholds.Threshold.flags`, the one the verdict applies to rows): a mean on the
flagged side fails. Each mean comes with its seeded bootstrap 95% interval, shown beside it, so a reader sees
whether a failure is clear or a matter of noise. With ``max_fail_share`` the share of FAIL verdicts per system is
checked too (it fails above that share). A rule with no determined value for a system fails (nothing shows that
the system meets it). ``evalkit check`` prints the failing rules and exits 1 when any fails.

Examples
--------
>>> import pandas as pd
>>> from evalkit.base.thresholds import Threshold
>>> df = pd.DataFrame({"system": ["a", "a", "b", "b"], "faithfulness": [90.0, 80.0, 40.0, 60.0]})
>>> res = check(df, [Threshold("faithfulness", 70.0, flag="below", inclusive=False)], n_resamples=200)
>>> res.passed, [(r.system, r.value) for r in res.failing]
(False, [('b', 50.0)])
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from evalkit.decide.aggregate import mean_interval
from evalkit.base.thresholds import Threshold


@dataclass(frozen=True)
class RuleCheck:
    """One rule for one system: ``value`` (the mean, or the FAIL share) with its interval, and whether it passed.
    ``n`` is the number of determined rows the value is computed from."""

    system: str
    rule: str
    value: float | None
    low: float | None
    high: float | None
    n: int
    passed: bool

    def to_dict(self) -> dict[str, Any]:
        return {"system": self.system, "rule": self.rule, "value": self.value, "low": self.low, "high": self.high,
                "n": self.n, "passed": self.passed}


@dataclass(frozen=True)
class CheckResult:
    """Every rule checked for every system (``checks``); ``passed`` when none failed."""

    checks: tuple[RuleCheck, ...]

    @property
    def failing(self) -> tuple[RuleCheck, ...]:
        return tuple(c for c in self.checks if not c.passed)

    @property
    def passed(self) -> bool:
        return not self.failing

    def table(self, only_failing: bool = True) -> str:
        """The checks (the failing ones by default) as a plain-text table whose columns are aligned to their
        longest cell, so a long rule never runs into the value beside it.

        >>> c = RuleCheck("rag-b", "hallucination must not be >= 0.166667", 0.3222, 0.1778, 0.4806, 42, False)
        >>> print(CheckResult((c,)).table())
        system    rule                                   value [95% interval]       n  result
        --------  -------------------------------------  -----------------------  ---  --------
        rag-b     hallucination must not be >= 0.166667  0.3222 [0.1778, 0.4806]   42  FAIL
        """
        from tabulate import tabulate

        rows = [(c.system, c.rule, "no value" if c.value is None else f"{c.value:.4g}" + (
            f" [{c.low:.4g}, {c.high:.4g}]" if c.low is not None else ""), c.n, "pass" if c.passed else "FAIL")
                for c in (self.failing if only_failing else self.checks)]
        return tabulate(rows, headers=("system", "rule", "value [95% interval]", "n", "result"), tablefmt="simple",
                        disable_numparse=True, colalign=("left", "left", "left", "right", "left"))

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "checks": [c.to_dict() for c in self.checks]}


def _systems(results: pd.DataFrame, by: str | None) -> list[tuple[str, pd.DataFrame]]:
    if by is None:
        return [("all", results)]
    if by not in results.columns:
        raise ValueError(f"the results have no {by!r} column to check per system (choose one with --by, or '' "
                         f"to check all rows together)")
    return [(str(k), g) for k, g in results.groupby(by, sort=True, dropna=False)]


def check(results: pd.DataFrame, rules: Sequence[Threshold], *, by: str | None = "system",
          max_fail_share: float | None = None, n_resamples: int = 1000, seed: int = 0) -> CheckResult:
    """Check every system of ``results`` (grouped by the column ``by``; None: all rows as one) against ``rules``.

    Parameters
    ----------
    results : scored results (one row per answer); the rules' metric columns, and ``verdict`` with ``max_fail_share``.
    rules : threshold rules (e.g. :func:`evalkit.decide.profiles.thresholds_from_profile` (...).profile); a rule fails for a
        system when its mean (over determined rows) is on the rule's flagged side, or when it has no value.
    max_fail_share : in 0..1; also fail a system whose share of FAIL verdicts is above it.
    n_resamples, seed : the seeded bootstrap of each mean's interval.

    Raises
    ------
    ValueError
        A rule names a metric the results lack, ``by`` is not a column, or ``verdict`` is missing with
        ``max_fail_share``.
    """
    missing = sorted({r.metric for r in rules} - set(results.columns))
    if missing:
        raise ValueError(f"the rules name {missing}, which these results do not have (they have "
                         f"{[c for c in results.columns if not c.endswith('_details')][:12]})")
    if max_fail_share is not None:
        if not 0.0 <= max_fail_share <= 1.0:
            raise ValueError(f"max_fail_share must be in 0..1, got {max_fail_share!r}")
        if "verdict" not in results.columns:
            raise ValueError("the results have no verdict column: score the triad (hallucination, relevance, "
                             "completeness) to get verdicts, or leave out --max-fail-share")
    if not rules and max_fail_share is None:
        raise ValueError("nothing to check: give threshold rules (--thresholds) or --max-fail-share")
    out = []
    for system, g in _systems(results, by):
        for r in rules:
            x = pd.to_numeric(g[r.metric], errors="coerce").dropna().to_numpy(dtype=float)
            if not len(x):
                out.append(RuleCheck(system, f"mean {r.metric} must not be {r.operator} {r.value:g}", None, None,
                                     None, 0, False))
                continue
            mean = float(np.mean(x))
            low, high = mean_interval(x, n_resamples=n_resamples, seed=seed)
            out.append(RuleCheck(system, f"mean {r.metric} must not be {r.operator} {r.value:g}", mean, low, high,
                                 len(x), not r.flags(mean)))
        if max_fail_share is not None:
            v = g["verdict"].dropna()
            v = v[v != "UNDETERMINED"]
            fails = (v == "FAIL").to_numpy(dtype=float)
            share = float(fails.mean()) if len(fails) else None
            low, high = mean_interval(fails, n_resamples=n_resamples, seed=seed) if len(fails) else (None, None)
            out.append(RuleCheck(system, f"share of FAIL verdicts must not be > {max_fail_share:g}", share, low, high,
                                 len(fails), share is not None and share <= max_fail_share))
    return CheckResult(tuple(out))
