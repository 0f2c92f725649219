"""Thresholds with a guarantee: Learn-then-Test risk control (Angelopoulos, Bates, Candès, Jordan & Lei 2021),
computed with MAPIE's ``BinaryClassificationController`` (binary Hoeffding-Bentkus p-values, Bonferroni-Holm
over the candidate thresholds).

``precision>=0.9 with delta 0.1`` means: with probability at least 0.9 over the draw of the calibration rows, the
precision of the flag on new rows from the same distribution (exchangeable with them) is at least 0.9. Youden's
or F1's threshold carries no such statement. Supported: ``precision>=X`` (of the flagged class), ``recall>=X``,
``fpr<=X`` (flagged among the negatives) and ``false_pass<=X`` (positives, the bad answers, among the rows the
threshold lets pass: the verdict's false-PASS rate; controlled as negative predictive value >= 1 - X).

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> y = (rng.random(400) < 0.3).astype(int)
>>> s = np.clip(0.5 * y + rng.normal(0.25, 0.2, 400), 0, 1)
>>> g = guaranteed_threshold(s, y, "precision>=0.8", delta=0.1)
>>> round(g.threshold, 3), g.statement
(0.624, 'precision >= 0.8 with probability >= 0.9 (Learn-then-Test, MAPIE; rows exchangeable with the 400 calibration rows)')
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalkit.decide.calibrate.errors import CalibrationError

_GUARANTEE = re.compile(r"^(precision|recall|fpr|false_pass)(>=|<=)([0-9.]+)$")
SIDE = {"precision": ">=", "recall": ">=", "fpr": "<=", "false_pass": "<="}  # a floor or a ceiling
CANDIDATES = 50  # thresholds tested (quantiles of the scores): more costs power under the family-wise correction


@dataclass(frozen=True)
class Guarantee:
    """The loosest useful threshold whose ``measure`` meets ``level`` with probability ``1 - delta``."""

    measure: str
    level: float
    delta: float
    threshold: float
    rows: int
    valid: int  # candidate thresholds that pass the test
    tested: int

    @property
    def statement(self) -> str:
        return (f"{self.measure} {SIDE[self.measure]} {self.level:g} with probability >= {1 - self.delta:g} "
                f"(Learn-then-Test, MAPIE; rows exchangeable with the {self.rows} calibration rows)")

    def to_dict(self) -> dict[str, Any]:
        return {"measure": self.measure, "level": self.level,
                "spec": f"{self.measure}{SIDE[self.measure]}{self.level:g}",  # as --guarantee takes it
                "delta": self.delta, "threshold": self.threshold,
                "rows": self.rows, "valid_thresholds": self.valid, "tested_thresholds": self.tested,
                "statement": self.statement, "assumption": "calibration rows and future rows are exchangeable"}


def parse_guarantee(text: str) -> tuple[str, float]:
    """``'precision>=0.95'`` -> ``('precision', 0.95)``; anything else is refused naming what is accepted.

    >>> parse_guarantee("false_pass <= 0.05")
    ('false_pass', 0.05)
    >>> parse_guarantee("precision<=0.9")
    Traceback (most recent call last):
    ...
    evalkit.decide.calibrate.errors.CalibrationError: guarantee 'precision<=0.9': precision takes >= (a floor), e.g. precision>=0.9
    """
    m = _GUARANTEE.match(text.replace(" ", "").lower())
    if not m:
        raise CalibrationError(f"guarantee {text!r}: use precision>=X, recall>=X, fpr<=X or false_pass<=X")
    measure, side, value = m.group(1), m.group(2), float(m.group(3))
    if side != SIDE[measure]:
        kind = "a floor" if SIDE[measure] == ">=" else "a ceiling"
        raise CalibrationError(f"guarantee {text!r}: {measure} takes {SIDE[measure]} ({kind}), e.g. "
                               f"{measure}{SIDE[measure]}{0.9 if SIDE[measure] == '>=' else 0.05}")
    if not 0 < value < 1:
        raise CalibrationError(f"guarantee {text!r}: the level must be between 0 and 1")
    return measure, value


def _risk(measure: str, level: float):
    """MAPIE's risk object and target for the measure, and how the best valid threshold is chosen."""
    from mapie.risk_control import BinaryRisk, false_positive_rate, precision, recall

    if measure == "precision":
        return precision, level, "auto"  # MAPIE then keeps the valid threshold of highest recall
    if measure == "recall":
        return recall, level, "auto"
    if measure == "fpr":
        return false_positive_rate, level, "auto"
    false_pass = BinaryRisk(risk_occurrence=lambda y_true, y_pred: y_true.ravel() == 1,
                            risk_condition=lambda y_true, y_pred: y_pred.ravel() == 0, higher_is_better=False)
    return false_pass, level, "predicted_positive_fraction"  # the valid threshold that flags fewest rows


def guaranteed_threshold(scores, labels, guarantee: str, *, delta: float = 0.1, direction: str = "higher") -> Guarantee:
    """The threshold chosen by Learn-then-Test for ``guarantee`` at risk ``delta``: flags ``score >= t`` (``higher``)
    or ``score <= t`` (``lower``). :class:`CalibrationError` when no candidate threshold meets it."""
    from mapie.risk_control import BinaryClassificationController

    measure, level = parse_guarantee(guarantee)
    if not 0 < delta < 1:
        raise CalibrationError(f"delta must be between 0 and 1, got {delta!r}")
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels).astype(int)
    oriented = s if direction == "higher" else -s  # MAPIE flags predictions >= the parameter
    candidates = _candidates(oriented)
    risk, target, choice = _risk(measure, level)
    controller = BinaryClassificationController(
        predict_function=lambda X: np.column_stack([np.zeros(len(X)), np.asarray(X, dtype=float).ravel()]),
        risk=risk, target_level=target, confidence_level=1 - delta, best_predict_param_choice=choice,
        list_predict_params=candidates)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "no parameter found" is said below, in our words
        controller.calibrate(oriented.reshape(-1, 1), y)
    if controller.best_predict_param is None:
        raise CalibrationError(f"no threshold meets {measure} {SIDE[measure]} {level:g} with probability "
                               f">= {1 - delta:g} on these {len(y)} rows ({len(candidates)} thresholds tested): "
                               "label more rows, or ask for less")
    t = float(controller.best_predict_param)
    return Guarantee(measure, level, delta, t if direction == "higher" else -t, len(y),
                     int(len(controller.valid_predict_params)), len(candidates))


def _candidates(oriented: np.ndarray) -> np.ndarray:
    """Quantiles of the scores strictly above the smallest (a threshold at the minimum flags every row, and a
    risk conditioned on the rows it lets pass is then undefined)."""
    qs = np.unique(np.quantile(oriented, np.linspace(0, 1, CANDIDATES + 1)))
    return qs[qs > oriented.min()] if (qs > oriented.min()).any() else qs
