"""Calibration itself: ROC/PR, threshold criteria, seeded bootstrap intervals, the honest protocol."""
from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from sklearn.metrics import average_precision_score, roc_auc_score

from evalkit.decide.aggregate import json_ready
from evalkit.base.thresholds import Threshold
from evalkit.decide.calibrate.errors import CalibrationError  # noqa: F401 - raised here, and imported from here by callers


SMALL_N = 30
SMALL_CLASS = 5


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
    choice_rows: int = 0       # rows the threshold was chosen on
    choice_flagged: int = 0    # of those, how many the threshold flags (all or none: a rule that says nothing)
    guarantee: dict | None = None  # a threshold chosen by risk control: its statement and assumption

    def to_dict(self, samples: bool = False) -> dict[str, Any]:
        d = asdict(self)
        if not samples:
            d.pop("threshold_samples")
        return json_ready(d)




def flagged_direction(score: str) -> str | None:
    """The side of a registered metric's score that flags the bad answer: ``"lower"`` for a metric whose registry
    entry says higher is better (support, relevance), ``"higher"`` for one where lower is better (hallucination);
    None for a column the registry does not know (a plain CSV's score) or a metric without a better side.

    >>> flagged_direction("support"), flagged_direction("hallucination"), flagged_direction("my_score")
    ('lower', 'higher', None)
    """
    from evalkit.metrics import REGISTRY

    m = REGISTRY.get(score)
    if m is None or m.better not in ("higher", "lower"):
        return None
    return "lower" if m.better == "higher" else "higher"


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

    The comparison is :class:`evalkit.base.thresholds.Threshold`'s, the one the verdict applies.
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


def interval_of(est: float | None, samples: Sequence[float], level: float) -> Interval:
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
    return interval_of(est, samples, level)


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
    ivs = [interval_of(None if isinstance(e, float) and math.isnan(e) else e, c, level) for e, c in zip(est, cols)]
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


MIN_PER_CLASS = 5  # fewer labels of a class give an AUC and a threshold that are not statistics (3 labels: AUC 0 [0, 0])


def calibrate(scores: Sequence[float], labels: Sequence[Any], *, direction: str = "higher",
              criterion: str = "youden", n_resamples: int = 1000, seed: int = 0, level: float = 0.95,
              groups: Sequence[Any] | None = None, split: Sequence[Any] | str | None = None,
              split_fraction: float = 0.5, subgroups: Mapping[str, Sequence[Any]] | None = None,
              min_group: int = SMALL_N, guarantee: str | None = None, delta: float = 0.1,
              min_per_class: int = MIN_PER_CLASS) -> CalibrationResult:
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
    guarantee, delta : instead of ``criterion``, a threshold chosen by risk control on the choosing rows
        (:mod:`evalkit.decide.calibrate.guarantee`: ``precision>=X``, ``recall>=X``, ``fpr<=X``, ``false_pass<=X``, held
        with probability ``1 - delta``); it carries its guarantee, not a bootstrap interval.
    min_per_class : fewer labelled rows of either class are refused (default 5; lower it only for a worked
        example whose numbers are checked by hand).

    Returns
    -------
    CalibrationResult
    """
    s, y = _prepare(scores, labels, direction)
    _refuse_too_few(y, min_per_class)
    choose, protocol, reported_on = _protocol(y, split, seed, split_fraction, groups)
    report = ~choose if split is not None else choose
    g = np.asarray(groups, dtype=object) if groups is not None else None
    sc, yc, gc = s[choose], y[choose], (g[choose] if g is not None else None)
    sr, yr, gr = s[report], y[report], (g[report] if g is not None else None)
    held = None
    if guarantee is not None:
        from evalkit.decide.calibrate.guarantee import guaranteed_threshold

        held = guaranteed_threshold(sc, yc, guarantee, delta=delta, direction=direction)
        thr, thr_samples, criterion = held.threshold, [], f"guarantee: {held.statement}"
    else:
        thr = select_threshold(sc, yc, criterion, direction)
        thr_samples = _threshold_samples(sc, yc, gc, criterion, direction, n_resamples, seed)
    boot = {"n_resamples": n_resamples, "seed": seed, "level": level}
    roc = bootstrap_ci(_auc(direction), sr, yr, groups=gr, **boot)
    ap = bootstrap_ci(_ap(direction), sr, yr, groups=gr, **boot)
    op = operating_point(sr, yr, thr, direction, n_resamples=n_resamples, seed=seed, level=level, groups=gr)
    subs = [entry for name, vals in (subgroups or {}).items()
            for entry in _subgroup_entries(name, vals, report, s, y, thr, direction, boot, min_group)]
    return CalibrationResult(
        n=int(len(y)), n_pos=int(y.sum()), direction=direction, criterion=criterion, roc_auc=roc, pr_auc=ap,
        threshold=thr, threshold_ci=interval_of(thr, thr_samples, level), threshold_samples=tuple(thr_samples),
        at_threshold=op, protocol=protocol, n_resamples=n_resamples, seed=seed, reported_on=reported_on,
        subgroups=tuple(subs), choice_rows=int(len(yc)),
        choice_flagged=int(Threshold.from_direction("score", thr, direction).flags_array(sc).sum()),
        guarantee=held.to_dict() if held is not None else None)


def _refuse_too_few(y: np.ndarray, min_per_class: int = MIN_PER_CLASS) -> None:
    """A threshold needs both classes, and an interval needs some of each: fewer than ``MIN_PER_CLASS`` labels of
    a class is refused, saying how many there are and what to do."""
    if y.min() == y.max():
        raise CalibrationError(f"labels have a single class ({int(y[0])}) across {len(y)} rows: nothing to calibrate")
    n_pos, n_neg = int(y.sum()), int(len(y) - y.sum())
    if min(n_pos, n_neg) < min_per_class:
        raise CalibrationError(f"labels have {n_pos} positive and {n_neg} negative rows: a threshold and its "
                               f"intervals need at least {min_per_class} of each class; label more rows "
                               "(evalkit.label_next chooses which)")


def _protocol(y: np.ndarray, split, seed: int, fraction: float, groups) -> tuple[np.ndarray, str, str]:
    """Which rows choose the threshold, and the protocol's description: same rows, seeded split or a column."""
    if split is None:
        return np.ones(len(y), dtype=bool), "threshold chosen and reported on the same rows (optimistic)", "all rows"
    if isinstance(split, str):
        if split != "seeded":
            raise CalibrationError(f"split must be None, 'seeded' or a per-row column, got {split!r}")
        choose = seeded_split(y, seed, fraction, groups)
        protocol = f"seeded split (seed {seed}, {fraction:.0%} to choose{', by group' if groups is not None else ''})"
    else:
        vals = np.asarray([str(v).lower() for v in split])
        if len(vals) != len(y):
            raise CalibrationError("split column length differs from scores")
        unknown = sorted(set(vals) - {"calibration", "train", "dev", "test", "eval", "holdout"})
        if unknown:
            raise CalibrationError(f"split values must be calibration/train/dev or test/eval/holdout; got {unknown}")
        choose, protocol = np.isin(vals, ["calibration", "train", "dev"]), "split column"
    for part, name in ((choose, "calibration"), (~choose, "test")):
        if not part.any() or y[part].min() == y[part].max():
            raise CalibrationError(f"the {name} part of the split has a single class or no rows")
    return choose, protocol, f"{int((~choose).sum())} held-out rows"


def _threshold_samples(s: np.ndarray, y: np.ndarray, groups, criterion: str, direction: str, n_resamples: int,
                       seed: int) -> list[float]:
    """The threshold chosen on each bootstrap resample (resamples with one class, or none reaching the
    criterion, are skipped): the threshold's own uncertainty."""
    out = []
    for idx in bootstrap_indices(y, n_resamples, seed + 2, groups):
        if y[idx].min() == y[idx].max():
            continue
        try:
            out.append(select_threshold(s[idx], y[idx], criterion, direction))
        except CalibrationError:
            continue
    return out


def _subgroup_entries(name: str, vals, report: np.ndarray, s: np.ndarray, y: np.ndarray, thr: float,
                      direction: str, boot: Mapping[str, Any], min_group: int) -> list[dict[str, Any]]:
    """AUC and the confusion at the chosen threshold within each group of one subgroup column."""
    vals = np.asarray([str(v) for v in vals], dtype=object)
    out = []
    for gv in sorted(set(vals[report])):
        m = report & (vals == gv)
        ys, ss = y[m], s[m]
        n_pos = int(ys.sum())
        small = m.sum() < min_group or n_pos < SMALL_CLASS or (m.sum() - n_pos) < SMALL_CLASS
        entry = {"by": name, "group": gv, "n": int(m.sum()), "n_pos": n_pos, "small": bool(small)}
        entry["roc_auc"] = asdict(bootstrap_ci(_auc(direction), ss, ys, **boot) if ys.min() != ys.max()
                                  else Interval(None, None, None, boot["level"]))
        entry.update(confusion_at(ss, ys, thr, direction))
        entry["note"] = "small group: interval wide, do not over-read" if small else ""
        out.append(entry)
    return out
