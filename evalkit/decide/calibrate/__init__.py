"""Threshold calibration against human labels: ROC/PR, thresholds by criterion, bootstrap CIs, agreement.

One module per concern: ``core`` (curves, criteria, bootstrap, :func:`calibrate`), ``labels`` (binary
human labels; the positive class as a value or an ordinal comparison such as ``<=2``), ``tables``
(:func:`calibrate_frame` on any table), ``agreement`` (rank correlation, kappa, alpha), ``profiles`` (the
threshold profile the verdict applies); all re-exported here.

Conventions
-----------
``labels`` are binary (True = the positive class, e.g. ``hallucinated``). ``direction`` says
which way the score points at the positive class: ``"higher"`` (default) predicts positive when
``score >= threshold``; ``"lower"`` predicts positive when ``score <= threshold``.

All resampling takes an explicit ``seed`` (``np.random.default_rng(seed)``), so the same call
gives the same intervals. Bootstrap is stratified (positives and negatives resampled separately,
class counts kept) or, with ``groups``, clustered (whole groups resampled, e.g. documents).

Examples
--------
>>> import numpy as np
>>> s = np.array([0.1, 0.15, 0.2, 0.3, 0.35, 0.8, 0.9, 0.7, 0.75, 0.95]); y = np.array([0] * 5 + [1] * 5)
>>> r = calibrate(s, y, criterion="youden", n_resamples=200, seed=0)
>>> r.roc_auc.estimate, r.threshold
(1.0, 0.7)
"""
from __future__ import annotations

from evalkit.decide.calibrate.core import (CalibrationError, flagged_direction, Interval, OperatingPoint, CalibrationResult, confusion_at,
                   threshold_table,
                   parse_criterion, select_threshold, bootstrap_indices, bootstrap_ci, roc_auc, pr_auc,
                   operating_point, seeded_split, calibrate, SMALL_N, SMALL_CLASS)
from evalkit.decide.calibrate.labels import LabelSuggestion, Positive, binary_labels, parse_positive, suggest_label
from evalkit.decide.calibrate.tables import TableCalibration, calibrate_frame
from evalkit.decide.calibrate.agreement import rank_correlation, cohen_kappa, krippendorff_alpha
from evalkit.decide.profiles import profile_entry, write_profile  # the profile format lives in evalkit.decide.profiles

__all__ = ["CalibrationError", "flagged_direction", "Interval", "OperatingPoint", "CalibrationResult", "confusion_at", "threshold_table",
           "parse_criterion", "select_threshold", "bootstrap_indices", "bootstrap_ci", "roc_auc", "pr_auc",
           "operating_point", "seeded_split", "calibrate", "SMALL_N", "SMALL_CLASS", "binary_labels",
           "Positive", "parse_positive", "LabelSuggestion", "suggest_label",
           "TableCalibration", "calibrate_frame", "rank_correlation", "cohen_kappa", "krippendorff_alpha",
           "profile_entry", "write_profile"]
