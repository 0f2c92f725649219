"""PASS / WARN / FAIL verdict from the triad, with the rule that fired.

Rules, in order (first match wins):

1. FAIL  if hallucination > ``hallucination_fail`` (default 0.5)
2. FAIL  if relevance < ``relevance_fail`` (default 0.1)
3. WARN  if completeness < ``completeness_warn`` (default 0.6)
4. PASS  otherwise.

A rule whose input is missing (None/NaN: the metric was undetermined or failed on
the row) is never compared with its threshold: the verdict is UNDETERMINED and
the rule column names the missing input. The seed names 0.6 as hallucination's
FAIL threshold in its metric section but uses 0.5 in its verdict logic; evalkit
defaults to 0.5 (set ``thresholds.hallucination_fail: 0.6`` to follow the other).

Examples
--------
>>> verdict(0.7, 0.9, 1.0)
('FAIL', 'hallucination 0.700 > 0.5')
>>> verdict(0.0, 0.5, 0.5)
('WARN', 'completeness 0.500 < 0.6')
>>> verdict(None, 0.5, 0.9)
('UNDETERMINED', 'hallucination missing')
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import yaml

from .config import Thresholds

VERDICTS = ("PASS", "WARN", "FAIL", "UNDETERMINED")


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or str(v) == "<NA>"


def verdict(hallucination: float | None, relevance: float | None, completeness: float | None,
            thresholds: Thresholds | None = None) -> tuple[str, str]:
    """Hierarchical verdict for one row: ``(verdict, rule that fired)``."""
    t = thresholds or Thresholds()
    if _missing(hallucination):
        return "UNDETERMINED", "hallucination missing"
    if hallucination > t.hallucination_fail:
        return "FAIL", f"hallucination {hallucination:.3f} > {t.hallucination_fail:g}"
    if _missing(relevance):
        return "UNDETERMINED", "relevance missing"
    if relevance < t.relevance_fail:
        return "FAIL", f"relevance {relevance:.3f} < {t.relevance_fail:g}"
    if _missing(completeness):
        return "UNDETERMINED", "completeness missing"
    if completeness < t.completeness_warn:
        return "WARN", f"completeness {completeness:.3f} < {t.completeness_warn:g}"
    return "PASS", "all checks passed"


_PROFILE_KEYS = {"hallucination": "hallucination_fail", "relevance": "relevance_fail",
                 "completeness": "completeness_warn"}


def thresholds_from_profile(profile: Mapping[str, Any] | str, base: Thresholds | None = None) -> Thresholds:
    """Apply a calibrated threshold profile (dict or YAML path) on top of ``base``.

    A profile has ``metrics: {metric_name: {threshold: x, direction: ...}, ...}`` (as written
    by :func:`evalkit.calibrate.write_profile`); metrics that drive the verdict
    (hallucination, relevance, completeness) replace the corresponding threshold.
    """
    if isinstance(profile, str) or hasattr(profile, "read_text"):
        from pathlib import Path

        profile = yaml.safe_load(Path(profile).read_text(encoding="utf-8"))
    base = base or Thresholds()
    values = base.as_dict()
    for metric, entry in (profile.get("metrics") or {}).items():
        if metric in _PROFILE_KEYS:
            values[_PROFILE_KEYS[metric]] = float(entry["threshold"])
    return Thresholds(**values)
