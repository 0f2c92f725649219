"""Threshold profiles: the rule calibration chose, written for the verdict to apply."""
from __future__ import annotations

from dataclasses import asdict
from typing import Any, Mapping


from ..aggregate import json_ready
from ..safeio import write_text
from ..thresholds import Threshold
from .core import CalibrationResult


def profile_entry(result: CalibrationResult, metric: str, label: str, positive: Any = None) -> dict[str, Any]:
    """One metric's entry in a threshold profile: the rule (exact value, flagged side, inclusive) and
    the evidence it was chosen on (with ``positive``, the label class it flags). The value is written
    unrounded so that rows sitting exactly on the threshold are flagged by the verdict as they were
    counted by calibration."""
    rule = Threshold.from_direction(metric, result.threshold, result.direction)
    at = result.at_threshold
    evidence = json_ready({"criterion": result.criterion, "label": label,
                           **({"positive": str(positive)} if positive is not None else {}),
                           "threshold_ci": [result.threshold_ci.low, result.threshold_ci.high],
                           "roc_auc": asdict(result.roc_auc), "n": result.n, "n_pos": result.n_pos,
                           "confusion": {k: getattr(at, k).estimate for k in ("tp", "fp", "tn", "fn")} if at else None,
                           "protocol": result.protocol, "reported_on": result.reported_on,
                           "n_resamples": result.n_resamples, "seed": result.seed})
    return {"threshold": float(rule.value), "flag": rule.flag, "inclusive": rule.inclusive,
            "direction": result.direction, **evidence}


def write_profile(path, entries: Mapping[str, dict[str, Any]], *, dataset_sha256: str | None,
                  source: str | None = None, date: str | None = None) -> None:
    """Write a YAML threshold profile ``{metrics: {name: entry}}`` that the verdict and CLI consume
    (``evalkit verdict RESULTS --thresholds profile.yaml``; :func:`evalkit.verdict.thresholds_from_profile`).

    ``calibrated_on`` names the table the thresholds were chosen on (``source``) and its SHA-256
    (``dataset_sha256``: the hash of that file, a results table or a plain score/label table).
    """
    import datetime

    import yaml

    from .._version import __version__

    doc = {"evalkit_profile": 2, "evalkit_version": __version__,
           "calibrated_on": {"file": source, "sha256": dataset_sha256},
           "date": date or datetime.date.today().isoformat(), "metrics": dict(entries)}
    write_text(path, yaml.safe_dump(doc, sort_keys=False))  # atomic: a kill leaves the old profile or the new
