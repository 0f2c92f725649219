"""Calibration of a score column against a label column of any table."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from evalkit.base.thresholds import Threshold
from evalkit.decide.calibrate.core import MIN_PER_CLASS, CalibrationError, CalibrationResult, calibrate, flagged_direction
from evalkit.decide.calibrate.guarantee import SIDE
from evalkit.decide.calibrate.labels import binary_labels, parse_positive


@dataclass(frozen=True)
class TableCalibration:
    """:func:`calibrate_frame`'s result: the calibration plus which rows it used and why others were not."""

    score: str
    label: str
    result: CalibrationResult
    n_used: int
    n_excluded: int
    excluded_reason: str
    positive: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {"score": self.score, "label": self.label, "positive": self.positive, "n_used": self.n_used, "excluded_undetermined":
                self.n_excluded, "excluded_reason": self.excluded_reason, **self.result.to_dict()}

    @property
    def flagged_class(self) -> str:
        """Which label rows are the positive (flagged) class, in words: ``faithful == 'N'``, ``likert <= 2``."""
        pos = parse_positive(self.positive)
        if pos is None:
            return f"{self.label} is True/1"
        return f"{self.label} {pos.op} {pos.value:g}" if pos.op else f"{self.label} == {pos.value!r}"

    def warnings(self) -> list[str]:
        """Signs that the positive class is the wrong one: the score ranks it lower than the other (ROC AUC < 0.5)."""
        auc = self.result.roc_auc.estimate
        if auc is None or auc >= 0.5:
            return []
        return [f"warning: the score ranks your positive class lower (ROC AUC {auc:.3f}): is --positive the "
                f"bad-answer class? (flagged = positive, here {self.flagged_class}; or is --direction wrong?)"]

    def useless_rule(self) -> str | None:
        """Why the chosen threshold says nothing (it flags every row, or none, it was chosen on), else None."""
        r = self.result
        if r.threshold is None or 0 < r.choice_flagged < r.choice_rows:
            return None
        rule = Threshold.from_direction(self.score, r.threshold, r.direction)
        return (f"the threshold {self.score} {rule.operator} {r.threshold:.6g} flags "
                f"{'all' if r.choice_flagged else 'none'} of the {r.choice_rows} rows it was chosen on")

    def summary_lines(self) -> list[str]:
        """A short human summary: warnings first, then AUC, threshold, precision/recall at it, protocol, rows used/excluded."""
        r, at = self.result, self.result.at_threshold
        rule = Threshold.from_direction(self.score, r.threshold, r.direction)
        lines = [*self.warnings(), f"{self.score} vs {self.label}: n={self.n_used} used ({r.n_pos} positive), "
                 f"{self.n_excluded} excluded{f' ({self.excluded_reason})' if self.n_excluded else ''}",
                 f"ROC AUC {r.roc_auc}   PR AUC {r.pr_auc}",
                 f"threshold ({r.criterion}): flag {rule.operator} {r.threshold:.6g}, 95% bootstrap interval "
                 f"[{_fmt(r.threshold_ci.low)}, {_fmt(r.threshold_ci.high)}]" if r.guarantee is None else
                 f"threshold: flag {rule.operator} {r.threshold:.6g}, chosen so that {r.guarantee['statement']}; "
                 f"assumes the rows it is used on are exchangeable with those it was chosen on"]
        if at is not None:
            lines.append(f"at the threshold: precision {at.precision}, recall {at.recall}, F1 {at.f1}")
        if at is not None and r.guarantee is not None:
            lines.append(realised_line(r.guarantee, {k: getattr(at, k).estimate for k in ("tp", "fp", "tn", "fn")},
                                       r.reported_on))
        lines.append(f"protocol: {r.protocol}; reported on {r.reported_on}")
        useless = self.useless_rule()
        if useless:
            lines.append(f"warning: {useless}: check --positive and --direction")
        n_neg = self.n_used - r.n_pos
        if min(r.n_pos, n_neg) < SMALL_CLASS:
            lines.append(f"note: a small sample ({r.n_pos} positive, {n_neg} negative; under {SMALL_CLASS} of a class): "
                         "the intervals are wide and, with a handful of rows, can collapse to a point; read them as not "
                         "yet measured and label more rows (evalkit.label_next)")
        return lines


SMALL_CLASS = 30  # fewer positives or negatives than this: an interval says little


def realised_line(guarantee: dict, confusion: dict, reported_on: str) -> str:
    """The guaranteed measure as it came out on the reported rows, counted from the confusion matrix.

    >>> realised_line({"measure": "false_pass", "level": 0.1}, {"tp": 40, "fp": 5, "tn": 81, "fn": 1}, "150 held-out rows")
    'on 150 held-out rows: false_pass 0.012 (1 of 82 answers let pass are bad; guaranteed <= 0.1)'
    """
    tp, fp, tn, fn = (int(confusion[k]) for k in ("tp", "fp", "tn", "fn"))
    part, whole, what = {"precision": (tp, tp + fp, "flagged answers are bad"),
                         "recall": (tp, tp + fn, "bad answers are flagged"),
                         "fpr": (fp, fp + tn, "good answers are flagged"),
                         "false_pass": (fn, fn + tn, "answers let pass are bad")}[guarantee["measure"]]
    side = SIDE[guarantee["measure"]]
    value = f"{part / whole:.3f}" if whole else "n/a"
    return (f"on {reported_on}: {guarantee['measure']} {value} ({part} of {whole} {what}; guaranteed {side} "
            f"{guarantee['level']:g})")


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3g}"


def _numeric_scores(df: pd.DataFrame, score: str) -> pd.Series:
    col = pd.to_numeric(df[score], errors="coerce")
    bad = df[score].notna() & col.isna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise CalibrationError(f"column {score!r} must hold numbers; row {i + 1} has {df[score].iloc[i]!r}")
    inf = np.isinf(col.to_numpy(dtype=float, na_value=np.nan))
    if inf.any():
        rows = [str(i + 1) for i in np.flatnonzero(inf)]
        raise CalibrationError(f"column {score!r} holds infinite values (row{'s' if len(rows) > 1 else ''} "
                               f"{', '.join(rows[:5])}{' ...' if len(rows) > 5 else ''}); a threshold needs finite "
                               "scores: fix or drop those rows")
    if col.notna().sum() == 0:
        raise CalibrationError(f"column {score!r} has no values ({len(col)} rows, all missing): nothing to calibrate")
    return col.astype(float)


def _need_columns(df: pd.DataFrame, cols: Sequence[str], what: str) -> None:
    for c in cols:
        if c not in df.columns:
            raise CalibrationError(f"no column {c!r} for {what} (columns: {', '.join(map(str, df.columns))})")


def calibrate_frame(df: pd.DataFrame, score: str, label: str, *, positive: Any = None, direction: str | None = None,
                    criterion: str = "youden", split: str | None = None, by: Sequence[str] = (),
                    groups: str | None = None, n_resamples: int = 1000, seed: int = 0, guarantee: str | None = None,
                    delta: float = 0.1, min_per_class: int = MIN_PER_CLASS) -> TableCalibration:
    """Calibrate a score column against a label column of any table (results file or a plain CSV).

    ``direction`` is the side of the score that flags the positive (bad) label; by default the metric's own, from
    the registry (support is higher-is-better, so a low support flags), and "higher" for a column the registry
    does not know. Rows whose score or label is missing are excluded and counted. ``split`` is None (same rows,
    stated as optimistic), ``'seeded'`` or the name of a column with calibration/test values; ``by``
    names subgroup columns; ``groups`` a cluster column for the bootstrap (e.g. a document id).

    Examples
    --------
    >>> df = pd.DataFrame({"s": [0.1, 0.2, 0.35, 0.8, 0.9, 0.7, None], "y": ["no", "no", "no", "yes", "yes", "yes", "no"]})
    >>> tc = calibrate_frame(df, "s", "y", positive="yes", n_resamples=50, min_per_class=3)  # 3 of each: a sketch
    >>> tc.result.threshold, tc.n_used, tc.n_excluded
    (0.7, 6, 1)
    """
    from evalkit.metrics import canonical_name

    if score not in df.columns:  # an old metric name (e.g. grounding) reads its renamed column
        score = canonical_name(score)
    _need_columns(df, [score, label], "calibration")
    _need_columns(df, list(by), "--by")
    extra = [c for c in (groups, split) if c and c != "seeded"]
    _need_columns(df, extra, "the split/group option")
    direction = direction or flagged_direction(score) or "higher"
    s = _numeric_scores(df, score)
    y = pd.Series(binary_labels(df[label].tolist(), positive=positive, column=label), index=df.index, dtype=object)
    ok = s.notna() & y.notna()
    reason = "score or label missing"
    res = calibrate(s[ok].tolist(), [bool(v) for v in y[ok]], direction=direction, criterion=criterion,
                    n_resamples=n_resamples, seed=seed,
                    split=df.loc[ok, split].tolist() if split and split != "seeded" else split,
                    groups=df.loc[ok, groups].tolist() if groups else None,
                    subgroups={c: df.loc[ok, c].tolist() for c in by}, guarantee=guarantee, delta=delta,
                    min_per_class=min_per_class)
    return TableCalibration(score, label, res, int(ok.sum()), int((~ok).sum()), reason, positive)
