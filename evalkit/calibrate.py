"""Threshold calibration against human labels: ROC/PR, thresholds by criterion, bootstrap CIs, agreement.

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
>>> s = np.array([0.1, 0.2, 0.35, 0.8, 0.9, 0.7]); y = np.array([0, 0, 0, 1, 1, 1])
>>> r = calibrate(s, y, criterion="youden", n_resamples=200, seed=0)
>>> r.roc_auc.estimate, r.threshold
(1.0, 0.7)
"""
from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.metrics import average_precision_score, cohen_kappa_score, roc_auc_score

from .aggregate import json_ready
from .thresholds import Threshold

SMALL_N = 30
SMALL_CLASS = 5


class CalibrationError(ValueError):
    """Calibration cannot be done as asked (one class only, unreachable criterion, bad input)."""


@dataclass(frozen=True)
class Interval:
    """A point estimate with a percentile bootstrap interval (``low``/``high`` None when not estimable)."""

    estimate: float | None
    low: float | None
    high: float | None
    level: float = 0.95

    def __str__(self) -> str:
        if self.estimate is None:
            return "n/a"
        if self.low is None:
            return f"{self.estimate:.3f}"
        return f"{self.estimate:.3f} [{self.low:.3f}, {self.high:.3f}]"


@dataclass(frozen=True)
class OperatingPoint:
    """Confusion-matrix statistics at one threshold, each with a bootstrap interval."""

    threshold: float
    precision: Interval
    recall: Interval
    f1: Interval
    fpr: Interval
    tp: Interval
    fp: Interval
    tn: Interval
    fn: Interval


@dataclass(frozen=True)
class CalibrationResult:
    """Everything :func:`calibrate` measured. ``to_dict()`` gives the JSON summary."""

    n: int
    n_pos: int
    direction: str
    criterion: str
    roc_auc: Interval
    pr_auc: Interval
    threshold: float | None
    threshold_ci: Interval
    threshold_samples: tuple[float, ...]
    at_threshold: OperatingPoint | None
    protocol: str
    n_resamples: int
    seed: int
    reported_on: str = "all rows"
    subgroups: tuple[dict, ...] = field(default_factory=tuple)

    def to_dict(self, samples: bool = False) -> dict[str, Any]:
        d = asdict(self)
        if not samples:
            d.pop("threshold_samples")
        return json_ready(d)


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------


def _label_missing(v: Any) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def _seen(values: Sequence[Any], k: int = 6) -> str:
    uniq = sorted({repr(v) for v in values})
    return ", ".join(uniq[:k]) + (f", ... ({len(uniq)} distinct)" if len(uniq) > k else "")


def binary_labels(values: Sequence[Any], *, positive: Any = None, column: str = "label") -> list[bool | None]:
    """Human labels as True/False (None where missing), refusing anything that is not binary.

    Accepted: booleans, the numbers 0/1, the strings "true"/"false" (any case), or any two values
    with ``positive`` naming the positive one (``positive="yes"``). Continuous values, three or more
    classes, or a ``positive`` value no row has are refused with the column and the values seen.

    Examples
    --------
    >>> binary_labels([True, False, None])
    [True, False, None]
    >>> binary_labels(["yes", "no", "Yes"], positive="yes")
    [True, False, True]
    >>> binary_labels([0.2, 0.9], column="human_score")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalkit.calibrate.CalibrationError: column 'human_score' is not a binary label: values seen 0.2, 0.9; ...
    """
    vals = [None if _label_missing(v) else (v.item() if hasattr(v, "item") else v) for v in values]
    present = [v for v in vals if v is not None]
    if positive is not None:
        key = str(positive).strip().lower()
        norm = [None if v is None else str(v).strip().lower() for v in vals]
        classes = {v for v in norm if v is not None}
        if len(classes) > 2:
            raise CalibrationError(f"column {column!r} has {len(classes)} classes ({_seen(present)}); "
                                   f"calibration needs two: map the others first")
        if key not in classes and present:
            raise CalibrationError(f"column {column!r}: no row has the positive value {positive!r} "
                                   f"(values seen: {_seen(present)})")
        return [None if v is None else v == key for v in norm]
    out: list[bool | None] = []
    for v in vals:
        if v is None:
            out.append(None)
        elif isinstance(v, bool):
            out.append(v)
        elif isinstance(v, (int, float)) and v in (0, 1):
            out.append(bool(v))
        elif isinstance(v, str) and v.strip().lower() in ("true", "false"):
            out.append(v.strip().lower() == "true")
        else:
            raise CalibrationError(f"column {column!r} is not a binary label: values seen {_seen(present)}; "
                                   f"use booleans or 0/1, or name the positive value (--positive VALUE)")
    return out


def _prepare(scores: Sequence[float], labels: Sequence[Any], direction: str) -> tuple[np.ndarray, np.ndarray]:
    if direction not in ("higher", "lower"):
        raise CalibrationError(f"direction must be 'higher' or 'lower', got {direction!r}")
    s = np.asarray([np.nan if v is None else v for v in scores], dtype=float)
    y_raw = list(labels)
    if len(s) != len(y_raw):
        raise CalibrationError(f"scores and labels differ in length ({len(s)} vs {len(y_raw)})")
    bad = [i for i, v in enumerate(y_raw) if v is None or (isinstance(v, float) and math.isnan(v))
           or v not in (0, 1, True, False)]
    if bad:
        raise CalibrationError(f"labels must be binary (0/1 or True/False); row {bad[0]} has {y_raw[bad[0]]!r}")
    if np.isnan(s).any():
        i = int(np.flatnonzero(np.isnan(s))[0])
        raise CalibrationError(f"score is missing at row {i}: drop or impute undetermined rows explicitly "
                               f"({int(np.isnan(s).sum())} missing)")
    y = np.asarray(y_raw, dtype=int)
    return s, y


def _oriented(s: np.ndarray, direction: str) -> np.ndarray:
    return s if direction == "higher" else -s


# ---------------------------------------------------------------------------
# Curves and criteria
# ---------------------------------------------------------------------------


def confusion_at(s: np.ndarray, y: np.ndarray, threshold: float, direction: str = "higher") -> dict[str, int]:
    """TP/FP/TN/FN when predicting positive for ``score >= t`` (or ``<= t`` with direction 'lower').

    The comparison is :class:`evalkit.thresholds.Threshold`'s, the one the verdict applies.
    """
    pred = Threshold.from_direction("score", threshold, direction).flags_array(s)
    tp = int(np.sum(pred & (y == 1)))
    fp = int(np.sum(pred & (y == 0)))
    return {"tp": tp, "fp": fp, "tn": int(np.sum(y == 0)) - fp, "fn": int(np.sum(y == 1)) - tp}


def threshold_table(s: np.ndarray, y: np.ndarray, direction: str = "higher") -> dict[str, np.ndarray]:
    """Counts and rates at every distinct score used as a threshold (strictest first)."""
    o = _oriented(s, direction)
    order = np.argsort(-o, kind="mergesort")
    o_sorted, y_sorted = o[order], y[order]
    last = np.r_[np.flatnonzero(np.diff(o_sorted)), len(o_sorted) - 1]  # last index of each distinct value
    tp = np.cumsum(y_sorted)[last]
    fp = (last + 1) - tp
    P, N = int(y.sum()), int(len(y) - y.sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(tp + fp > 0, tp / np.maximum(tp + fp, 1), 1.0)
        recall = tp / P if P else np.zeros_like(tp, dtype=float)
        fpr = fp / N if N else np.zeros_like(fp, dtype=float)
        f1 = np.where(precision + recall > 0, 2 * precision * recall / np.maximum(precision + recall, 1e-300), 0.0)
    thr = o_sorted[last] if direction == "higher" else -o_sorted[last]
    return {"threshold": thr, "tp": tp, "fp": fp, "tn": N - fp, "fn": P - tp, "precision": precision,
            "recall": recall, "fpr": fpr, "f1": f1}


_CRIT = re.compile(r"^(precision|recall)\s*>=\s*([0-9.]+)$")


def parse_criterion(criterion: str) -> tuple[str, dict[str, float]]:
    """'youden', 'f1', 'precision>=0.9', 'recall>=0.8', 'cost' or 'cost:fp=1,fn=5' -> (kind, args)."""
    c = criterion.replace(" ", "").lower()
    if c in ("youden", "f1"):
        return c, {}
    m = _CRIT.match(c)
    if m:
        x = float(m.group(2))
        if not 0 <= x <= 1:
            raise CalibrationError(f"criterion {criterion!r}: the target must be in [0, 1]")
        return m.group(1), {"target": x}
    if c.startswith("cost"):
        args = {"fp": 1.0, "fn": 1.0}
        if ":" in c:
            for part in c.split(":", 1)[1].split(","):
                k, _, v = part.partition("=")
                if k not in ("fp", "fn") or not v:
                    raise CalibrationError(f"criterion {criterion!r}: expected cost:fp=X,fn=Y")
                args[k] = float(v)
        return "cost", args
    raise CalibrationError(f"unknown criterion {criterion!r}; use youden, f1, precision>=X, recall>=X or cost:fp=X,fn=Y")


def select_threshold(s: np.ndarray, y: np.ndarray, criterion: str = "youden", direction: str = "higher") -> float:
    """The threshold that optimises ``criterion`` (ties: the strictest threshold).

    * ``youden``: max TPR - FPR; ``f1``: max F1;
    * ``precision>=X``: the loosest threshold (max recall) whose precision >= X;
    * ``recall>=X``: the strictest threshold (max precision) whose recall >= X;
    * ``cost:fp=a,fn=b``: min a*FP + b*FN.
    """
    kind, args = parse_criterion(criterion)
    t = threshold_table(s, y, direction)
    if kind == "youden":
        i = int(np.argmax(t["recall"] - t["fpr"]))
    elif kind == "f1":
        i = int(np.argmax(t["f1"]))
    elif kind == "precision":
        ok = np.flatnonzero(t["precision"] >= args["target"] - 1e-12)
        if not len(ok):
            raise CalibrationError(f"no threshold reaches precision >= {args['target']}")
        i = int(ok[np.argmax(t["recall"][ok])])  # first max = strictest among equal recalls
    elif kind == "recall":
        ok = np.flatnonzero(t["recall"] >= args["target"] - 1e-12)
        if not len(ok):
            raise CalibrationError(f"no threshold reaches recall >= {args['target']}")
        i = int(ok[np.argmax(t["precision"][ok])])
    else:
        i = int(np.argmin(args["fp"] * t["fp"] + args["fn"] * t["fn"]))
    return float(t["threshold"][i])


# ---------------------------------------------------------------------------
# Bootstrap
# ---------------------------------------------------------------------------


def bootstrap_indices(y: np.ndarray, n_resamples: int, seed: int, groups: Sequence[Any] | None = None):
    """Yield resampled index arrays: stratified by class, or clustered by ``groups``."""
    rng = np.random.default_rng(seed)
    if groups is not None:
        g = np.asarray(groups, dtype=object)
        uniq, inv = np.unique(g.astype(str), return_inverse=True)
        members = [np.flatnonzero(inv == k) for k in range(len(uniq))]
        for _ in range(n_resamples):
            pick = rng.integers(0, len(uniq), len(uniq))
            yield np.concatenate([members[k] for k in pick])
        return
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    for _ in range(n_resamples):
        yield np.concatenate([rng.choice(pos, len(pos)) if len(pos) else pos,
                              rng.choice(neg, len(neg)) if len(neg) else neg])


def _interval(est: float | None, samples: Sequence[float], level: float) -> Interval:
    vals = np.asarray([v for v in samples if v is not None and not math.isnan(v)], dtype=float)
    if est is None or not len(vals):
        return Interval(est, None, None, level)
    a = (1 - level) / 2
    return Interval(float(est), float(np.quantile(vals, a)), float(np.quantile(vals, 1 - a)), level)


def bootstrap_ci(stat: Callable[[np.ndarray, np.ndarray], float], s: np.ndarray, y: np.ndarray, *,
                 n_resamples: int = 1000, seed: int = 0, level: float = 0.95,
                 groups: Sequence[Any] | None = None) -> Interval:
    """Percentile bootstrap interval of ``stat(s, y)``; resamples with a single class are skipped."""
    est = stat(s, y)
    samples = []
    for idx in bootstrap_indices(y, n_resamples, seed, groups):
        yy = y[idx]
        if yy.min() == yy.max():
            continue
        samples.append(stat(s[idx], yy))
    return _interval(est, samples, level)


def _auc(direction: str):
    return lambda s, y: float(roc_auc_score(y, _oriented(s, direction)))


def _ap(direction: str):
    return lambda s, y: float(average_precision_score(y, _oriented(s, direction)))


def roc_auc(scores, labels, direction: str = "higher", **boot) -> Interval:
    """ROC AUC (equal to ``sklearn.metrics.roc_auc_score``) with a bootstrap CI."""
    s, y = _prepare(scores, labels, direction)
    if not len(y) or y.min() == y.max():
        return Interval(None, None, None)
    return bootstrap_ci(_auc(direction), s, y, **boot)


def pr_auc(scores, labels, direction: str = "higher", **boot) -> Interval:
    """PR AUC as average precision (equal to ``sklearn.metrics.average_precision_score``) with a bootstrap CI."""
    s, y = _prepare(scores, labels, direction)
    if not len(y) or y.min() == y.max():
        return Interval(None, None, None)
    return bootstrap_ci(_ap(direction), s, y, **boot)


def operating_point(s: np.ndarray, y: np.ndarray, threshold: float, direction: str, *, n_resamples: int,
                    seed: int, level: float = 0.95, groups=None) -> OperatingPoint:
    def stats(ss, yy):
        c = confusion_at(ss, yy, threshold, direction)
        p = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else float("nan")
        r = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else float("nan")
        f = 2 * p * r / (p + r) if p == p and r == r and p + r > 0 else 0.0
        fpr = c["fp"] / (c["fp"] + c["tn"]) if c["fp"] + c["tn"] else float("nan")
        return [p, r, f, fpr, c["tp"], c["fp"], c["tn"], c["fn"]]

    est = stats(s, y)
    samples = [stats(s[idx], y[idx]) for idx in bootstrap_indices(y, n_resamples, seed + 1, groups)]
    cols = list(zip(*samples)) if samples else [[]] * 8
    ivs = [_interval(None if isinstance(e, float) and math.isnan(e) else e, c, level) for e, c in zip(est, cols)]
    return OperatingPoint(float(threshold), *ivs)


# ---------------------------------------------------------------------------
# The public entry point
# ---------------------------------------------------------------------------


def seeded_split(y: np.ndarray, seed: int, fraction: float = 0.5, groups: Sequence[Any] | None = None) -> np.ndarray:
    """Boolean mask of the calibration part: stratified by class, or by whole groups when given."""
    rng = np.random.default_rng(seed)
    mask = np.zeros(len(y), dtype=bool)
    if groups is not None:
        g = np.asarray([str(v) for v in groups])
        uniq = np.unique(g)
        chosen = set(rng.permutation(uniq)[: int(round(len(uniq) * fraction))])
        return np.array([v in chosen for v in g])
    for cls in (0, 1):
        idx = np.flatnonzero(y == cls)
        rng.shuffle(idx)
        mask[idx[: int(round(len(idx) * fraction))]] = True
    return mask


def calibrate(scores: Sequence[float], labels: Sequence[Any], *, direction: str = "higher",
              criterion: str = "youden", n_resamples: int = 1000, seed: int = 0, level: float = 0.95,
              groups: Sequence[Any] | None = None, split: Sequence[Any] | str | None = None,
              split_fraction: float = 0.5, subgroups: Mapping[str, Sequence[Any]] | None = None,
              min_group: int = SMALL_N) -> CalibrationResult:
    """Calibrate one score against binary labels.

    Parameters
    ----------
    scores, labels : sequences of equal length (labels 0/1 or bool; no missing values).
    direction : 'higher' if higher scores indicate the positive label, else 'lower'.
    criterion : 'youden', 'f1', 'precision>=X', 'recall>=X', or 'cost:fp=a,fn=b'.
    n_resamples, seed, level : bootstrap settings (percentile intervals).
    groups : optional cluster ids (e.g. documents) for a clustered bootstrap and split.
    split : None (choose and report on all rows; the result says so), 'seeded' (a seeded
        stratified/grouped split of ``split_fraction`` for choosing, the rest for reporting),
        or a per-row sequence of 'calibration'/'test' (also 'train'/'dev' and 'eval'/'holdout').
    subgroups : {name: per-row group labels}, e.g. {"question_type": [...]}; each group gets
        AUC and the operating point at the chosen threshold; small groups are flagged.

    Returns
    -------
    CalibrationResult
    """
    s, y = _prepare(scores, labels, direction)
    if y.min() == y.max():
        raise CalibrationError(f"labels have a single class ({int(y[0])}) across {len(y)} rows: nothing to calibrate")
    boot = {"n_resamples": n_resamples, "seed": seed, "level": level}
    if split is None:
        choose = report = np.ones(len(y), dtype=bool)
        protocol, reported_on = "threshold chosen and reported on the same rows (optimistic)", "all rows"
    else:
        if isinstance(split, str):
            if split != "seeded":
                raise CalibrationError(f"split must be None, 'seeded' or a per-row column, got {split!r}")
            choose = seeded_split(y, seed, split_fraction, groups)
            protocol = f"seeded split (seed {seed}, {split_fraction:.0%} to choose{', by group' if groups is not None else ''})"
        else:
            vals = np.asarray([str(v).lower() for v in split])
            if len(vals) != len(y):
                raise CalibrationError("split column length differs from scores")
            known = {"calibration", "train", "dev", "test", "eval", "holdout"}
            unknown = sorted(set(vals) - known)
            if unknown:
                raise CalibrationError(f"split values must be calibration/train/dev or test/eval/holdout; got {unknown}")
            choose = np.isin(vals, ["calibration", "train", "dev"])
            protocol = "split column"
        report = ~choose
        reported_on = f"{int(report.sum())} held-out rows"
        for part, name in ((choose, "calibration"), (report, "test")):
            if not part.any() or y[part].min() == y[part].max():
                raise CalibrationError(f"the {name} part of the split has a single class or no rows")
    g = np.asarray(groups, dtype=object) if groups is not None else None
    sc, yc, gc = s[choose], y[choose], (g[choose] if g is not None else None)
    sr, yr, gr = s[report], y[report], (g[report] if g is not None else None)
    thr = select_threshold(sc, yc, criterion, direction)
    thr_samples = []
    for idx in bootstrap_indices(yc, n_resamples, seed + 2, gc):
        if yc[idx].min() == yc[idx].max():
            continue
        try:
            thr_samples.append(select_threshold(sc[idx], yc[idx], criterion, direction))
        except CalibrationError:
            continue
    roc = bootstrap_ci(_auc(direction), sr, yr, groups=gr, **boot)
    ap = bootstrap_ci(_ap(direction), sr, yr, groups=gr, **boot)
    op = operating_point(sr, yr, thr, direction, n_resamples=n_resamples, seed=seed, level=level, groups=gr)
    subs = []
    for name, vals in (subgroups or {}).items():
        vals = np.asarray([str(v) for v in vals], dtype=object)
        for gv in sorted(set(vals[report])):
            m = report & (vals == gv)
            ys, ss = y[m], s[m]
            n_pos = int(ys.sum())
            small = m.sum() < min_group or n_pos < SMALL_CLASS or (m.sum() - n_pos) < SMALL_CLASS
            entry = {"by": name, "group": gv, "n": int(m.sum()), "n_pos": n_pos, "small": bool(small)}
            if ys.min() != ys.max():
                entry["roc_auc"] = asdict(bootstrap_ci(_auc(direction), ss, ys, **boot))
            else:
                entry["roc_auc"] = asdict(Interval(None, None, None, level))
            c = confusion_at(ss, ys, thr, direction)
            entry.update(c)
            entry["note"] = "small group: interval wide, do not over-read" if small else ""
            subs.append(entry)
    return CalibrationResult(
        n=int(len(y)), n_pos=int(y.sum()), direction=direction, criterion=criterion, roc_auc=roc, pr_auc=ap,
        threshold=thr, threshold_ci=_interval(thr, thr_samples, level), threshold_samples=tuple(thr_samples),
        at_threshold=op, protocol=protocol, n_resamples=n_resamples, seed=seed, reported_on=reported_on,
        subgroups=tuple(subs))


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

    def summary_lines(self) -> list[str]:
        """A short human summary: AUC, threshold, precision/recall at it, protocol, rows used/excluded."""
        r, at = self.result, self.result.at_threshold
        rule = Threshold.from_direction(self.score, r.threshold, r.direction)
        lines = [f"{self.score} vs {self.label}: n={self.n_used} used ({r.n_pos} positive), "
                 f"{self.n_excluded} excluded{f' ({self.excluded_reason})' if self.n_excluded else ''}",
                 f"ROC AUC {r.roc_auc}   PR AUC {r.pr_auc}",
                 f"threshold ({r.criterion}): flag {rule.operator} {r.threshold:.6g}, 95% bootstrap interval "
                 f"[{_fmt(r.threshold_ci.low)}, {_fmt(r.threshold_ci.high)}]"]
        if at is not None:
            lines.append(f"at the threshold: precision {at.precision}, recall {at.recall}, F1 {at.f1}")
        lines.append(f"protocol: {r.protocol}; reported on {r.reported_on}")
        return lines


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3g}"


def _numeric_scores(df: pd.DataFrame, score: str) -> pd.Series:
    col = pd.to_numeric(df[score], errors="coerce")
    bad = df[score].notna() & col.isna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise CalibrationError(f"column {score!r} must hold numbers; row {i + 1} has {df[score].iloc[i]!r}")
    if col.notna().sum() == 0:
        raise CalibrationError(f"column {score!r} has no values ({len(col)} rows, all missing): nothing to calibrate")
    return col.astype(float)


def _need_columns(df: pd.DataFrame, cols: Sequence[str], what: str) -> None:
    for c in cols:
        if c not in df.columns:
            raise CalibrationError(f"no column {c!r} for {what} (columns: {', '.join(map(str, df.columns))})")


def calibrate_frame(df: pd.DataFrame, score: str, label: str, *, positive: Any = None, direction: str = "higher",
                    criterion: str = "youden", split: str | None = None, by: Sequence[str] = (),
                    groups: str | None = None, n_resamples: int = 1000, seed: int = 0) -> TableCalibration:
    """Calibrate a score column against a label column of any table (results file or a plain CSV).

    Rows whose score or label is missing are excluded and counted. ``split`` is None (same rows,
    stated as optimistic), ``'seeded'`` or the name of a column with calibration/test values; ``by``
    names subgroup columns; ``groups`` a cluster column for the bootstrap (e.g. a document id).

    Examples
    --------
    >>> df = pd.DataFrame({"s": [0.1, 0.2, 0.35, 0.8, 0.9, 0.7, None], "y": ["no", "no", "no", "yes", "yes", "yes", "no"]})
    >>> tc = calibrate_frame(df, "s", "y", positive="yes", n_resamples=50)
    >>> tc.result.threshold, tc.n_used, tc.n_excluded
    (0.7, 6, 1)
    """
    _need_columns(df, [score, label], "calibration")
    _need_columns(df, list(by), "--by")
    extra = [c for c in (groups, split) if c and c != "seeded"]
    _need_columns(df, extra, "the split/group option")
    s = _numeric_scores(df, score)
    y = pd.Series(binary_labels(df[label].tolist(), positive=positive, column=label), index=df.index, dtype=object)
    ok = s.notna() & y.notna()
    reason = "score or label missing"
    res = calibrate(s[ok].tolist(), [bool(v) for v in y[ok]], direction=direction, criterion=criterion,
                    n_resamples=n_resamples, seed=seed,
                    split=df.loc[ok, split].tolist() if split and split != "seeded" else split,
                    groups=df.loc[ok, groups].tolist() if groups else None,
                    subgroups={c: df.loc[ok, c].tolist() for c in by})
    return TableCalibration(score, label, res, int(ok.sum()), int((~ok).sum()), reason, positive)


# ---------------------------------------------------------------------------
# Graded scores and agreement
# ---------------------------------------------------------------------------


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
    return {"spearman": _interval(float(spearmanr(x, r).statistic), sp, level),
            "kendall": _interval(float(kendalltau(x, r).statistic), kt, level)}


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
    return _interval(est, samples, level)


def krippendorff_alpha(ratings, level_of_measurement: str = "nominal") -> float:
    """Krippendorff's alpha for several raters: ``ratings`` is raters x items (None/NaN = missing)."""
    import krippendorff

    data = np.asarray([[np.nan if v is None else v for v in row] for row in ratings], dtype=float)
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level_of_measurement))


# ---------------------------------------------------------------------------
# Threshold profiles
# ---------------------------------------------------------------------------


def profile_entry(result: CalibrationResult, metric: str, label: str) -> dict[str, Any]:
    """One metric's entry in a threshold profile: the rule (exact value, flagged side, inclusive) and
    the evidence it was chosen on. The value is written unrounded so that rows sitting exactly on
    the threshold are flagged by the verdict as they were counted by calibration."""
    rule = Threshold.from_direction(metric, result.threshold, result.direction)
    at = result.at_threshold
    evidence = json_ready({"criterion": result.criterion, "label": label,
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
    from pathlib import Path

    import yaml

    from ._version import __version__

    doc = {"evalkit_profile": 2, "evalkit_version": __version__,
           "calibrated_on": {"file": source, "sha256": dataset_sha256},
           "date": date or datetime.date.today().isoformat(), "metrics": dict(entries)}
    Path(path).write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
