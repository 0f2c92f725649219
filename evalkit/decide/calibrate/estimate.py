"""Estimates a paper can stand on: the rate (or mean) of a human label per system, from labels on some rows and
metric scores on every row, with an interval that is valid whatever the metric's quality.

Prediction-powered inference (Angelopoulos et al., Science 2023) with power tuning (PPI++, Angelopoulos, Duchi
and Zrnic 2024), computed by ``ppi-python``, the authors' package: the label's mean is the mean of a prediction
of the label on every row, corrected by the prediction's error on the labelled rows; power tuning weighs the
prediction by how much it helps, so the interval is never much wider than the labels' own and narrower the
better the metric predicts the label.

The prediction is a model of the label from the scores (``using``; logistic regression for a binary label,
linear regression otherwise), fitted on the labelled rows *out of fold* (cross-fitting, ``K`` folds): each
labelled row is predicted by a model that never saw it, each unlabelled row by the mean of the ``K`` models. A
score therefore needs no threshold and may point either way (``hallucination`` against ``correct``).

Beside the PPI estimate, every result carries the ``labels_only`` interval (the labelled rows alone, the
classical CLT interval) and the ``metric_only`` mean (the prediction's mean on every row, with the interval a
reader would draw if the metric were the truth: it ignores the metric's error and is shown to be compared, not
trusted). Validity needs the labelled rows to be a random sample of the rows: either a uniform one, or a draw
with known probabilities (``label_next(..., mode="estimate")``, which favours rows whose label is least certain;
each drawn row is weighted by 1/probability, and rows labelled before the draw count exactly). Labels chosen
near a threshold (``label_next``'s ``selection`` "closest to the threshold ...") are refused unless a draw
followed them. The draws' estimate (:func:`drawn_mean`) is written here: ppi-python's sample weights describe one
independent sample, and a study's draws come one after another, each from the rows the earlier ones left, with
the rows known before it counted exactly; one uniform draw reduces to ppi-python's PPI point estimate (tested).

Examples
--------
>>> import numpy as np, pandas as pd
>>> rng = np.random.default_rng(0)
>>> y = rng.random(400) < 0.3
>>> score = np.clip(0.6 * y + rng.normal(0.2, 0.2, 400), 0, 1)
>>> label = np.where(rng.random(400) < 0.25, np.where(y, "Y", "N"), None)  # a quarter of rows labelled
>>> df = pd.DataFrame({"system": "a", "hallucination": score, "hallucinated": label})
>>> [e] = estimate(df, "hallucinated", ["hallucination"], positive="Y")
>>> e.group, e.ppi.n, e.labels_only.n, e.metric_only.n
('a', 400, 94, 400)
>>> e.ppi.high - e.ppi.low < e.labels_only.high - e.labels_only.low  # the metric bought a narrower interval
True
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from evalkit.decide.calibrate.core import CalibrationError
from evalkit.decide.calibrate.labels import binary_labels

log = logging.getLogger(__name__)

RANDOM = "a uniform random sample"
MIN_LABELLED = 10  # below this many labels in a group, no CLT interval (PPI's or the labels' own) is honest
FOLDS = 10
METHOD = ("PPI++ (prediction-powered inference with power tuning; Angelopoulos et al., Science 2023; "
          "Angelopoulos, Duchi & Zrnic 2024), computed with ppi-python")


class EstimateError(CalibrationError):
    """An estimate that cannot be made honestly (too few labels, labels not drawn at random, no score)."""


@dataclass(frozen=True)
class Interval:
    """A point estimate, its interval at the run's level, and the rows it rests on."""

    estimate: float
    low: float
    high: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high, "n": self.n}


@dataclass(frozen=True)
class Estimate:
    """One group's (a system's, or a paired difference's) estimate by the three methods."""

    group: str
    ppi: Interval
    labels_only: Interval
    metric_only: Interval
    labelled: int
    rows: int
    design: str = RANDOM  # how the labelled rows were chosen, in words

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "labelled": self.labelled, "rows": self.rows, "design": self.design,
                "ppi": self.ppi.to_dict(),
                "labels_only": self.labels_only.to_dict(), "metric_only": self.metric_only.to_dict()}


def label_values(values: Sequence[Any], target: str, positive: Any = None) -> tuple[np.ndarray, str]:
    """The label as floats (NaN where missing) and what its mean is: a rate of the positive class for a binary
    label, else the mean of a numeric label.

    >>> label_values(["Y", "N", None, "Y"], "hallucinated", positive="Y")[1]
    "rate of hallucinated = 'Y'"
    >>> label_values([4, 2, None], "grade")
    (array([ 4.,  2., nan]), 'mean of grade')
    """
    present = [v for v in values if not _missing(v)]
    numeric = all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in present)
    if positive is None and numeric and not set(present) <= {0, 1}:
        return np.array([np.nan if _missing(v) else float(v) for v in values]), f"mean of {target}"
    # a random sample may hold no row of the positive class (its rate is then near 0): not an error here
    flags = binary_labels(values, positive=positive, column=target, require_positive=False)
    what = f"rate of {target} = {positive!r}" if positive is not None else f"rate of {target}"
    return np.array([np.nan if f is None else float(f) for f in flags]), what


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA or v is pd.NaT


def refuse_non_random(frame: pd.DataFrame) -> None:
    """Labels chosen for being near a threshold are not a random sample: a PPI (or labels-only) interval from them
    would be biased, so they are refused, naming how many and what to do."""
    if "selection" not in frame.columns:
        return
    from evalkit.decide.calibrate.active import chosen_by_threshold

    near = chosen_by_threshold(frame["selection"])
    if near.any():
        raise EstimateError(f"{int(near.sum())} labelled rows were chosen near a threshold (column 'selection'), not "
                            "at random: a rate estimated from them is biased. Draw the rows to label with known "
                            "probabilities (label_next(..., mode='estimate'): the labels so far are then known "
                            "exactly and the draw estimates the rest) or leave those rows out")


def cross_fitted(X: np.ndarray, y: np.ndarray, labelled: np.ndarray, binary: bool, seed: int = 0,
                 folds: int = FOLDS) -> np.ndarray:
    """A prediction of the label for every row: labelled rows out of fold, unlabelled rows the folds' mean."""
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.model_selection import KFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    idx = np.flatnonzero(labelled)
    pred = np.empty(len(y))
    unlabelled = np.zeros((int((~labelled).sum()), 0))
    for train, test in KFold(n_splits=min(folds, len(idx)), shuffle=True, random_state=seed).split(idx):
        tr, te = idx[train], idx[test]
        if binary and len(np.unique(y[tr])) < 2:  # a fold that saw one class predicts it
            fit = lambda Z, c=float(y[tr][0]): np.full(len(Z), c)  # noqa: E731
        else:
            # newton-cholesky: on a few hundred rows and a few scores, several times faster than lbfgs
            fitter = LogisticRegression(solver="newton-cholesky") if binary else LinearRegression()
            model = make_pipeline(StandardScaler(), fitter)
            model.fit(X[tr], y[tr].astype(int) if binary else y[tr])
            fit = (lambda Z, m=model: m.predict_proba(Z)[:, 1]) if binary else model.predict
        pred[te] = fit(X[te])
        if (~labelled).any():
            unlabelled = np.column_stack([unlabelled, fit(X[~labelled])])
    if (~labelled).any():
        pred[~labelled] = unlabelled.mean(axis=1)
    return pred


def ppi_interval(y: np.ndarray, pred: np.ndarray, labelled: np.ndarray, alpha: float) -> Interval:
    """PPI++ (power-tuned) on the labelled rows' labels and predictions and the unlabelled rows' predictions."""
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    Y, Yhat, Yhat_u = y[labelled], pred[labelled], pred[~labelled]
    if not len(Yhat_u):  # every row labelled: the labels' own interval is the answer
        return labels_only_interval(Y, alpha, n=len(y))
    # a constant prediction (folds that each saw one class) carries nothing; power tuning would divide 0 by 0
    lam = 0.0 if np.ptp(pred) == 0 else None
    low, high = ppi_mean_ci(Y, Yhat, Yhat_u, alpha=alpha, lam=lam)
    est = ppi_mean_pointestimate(Y, Yhat, Yhat_u, lam=lam)
    return Interval(float(np.ravel(est)[0]), float(np.ravel(low)[0]), float(np.ravel(high)[0]), len(y))


def labels_only_interval(Y: np.ndarray, alpha: float, n: int | None = None) -> Interval:
    from ppi_py import classical_mean_ci

    low, high = classical_mean_ci(Y, alpha=alpha)
    return Interval(float(Y.mean()), float(np.ravel(low)[0]), float(np.ravel(high)[0]), len(Y) if n is None else n)


def metric_only_interval(pred: np.ndarray, alpha: float) -> Interval:
    """The prediction's mean on every row, with a CLT interval as if the prediction were the label."""
    from scipy.stats import norm

    half = norm.ppf(1 - alpha / 2) * pred.std(ddof=1) / np.sqrt(len(pred)) if len(pred) > 1 else np.nan
    return Interval(float(pred.mean()), float(pred.mean() - half), float(pred.mean() + half), len(pred))


def _one(group: str, y: np.ndarray, pred: np.ndarray, alpha: float, design: np.ndarray | None = None) -> Estimate:
    labelled = ~np.isnan(y)
    n_lab = int(labelled.sum())
    if design is not None:
        return _one_drawn(group, y, pred, alpha, design)
    if n_lab < MIN_LABELLED:
        raise EstimateError(f"{group}: {n_lab} labelled rows; an interval needs at least {MIN_LABELLED} "
                            "(label more rows at random)")
    return Estimate(group, ppi_interval(y, pred, labelled, alpha), labels_only_interval(y[labelled], alpha),
                    metric_only_interval(pred, alpha), n_lab, len(y))


def _one_drawn(group: str, y: np.ndarray, pred: np.ndarray, alpha: float, design: np.ndarray) -> Estimate:
    """A group's estimates when its labels come from draws with known probabilities (``label_next(...,
    mode="estimate")``; ``design``: see :func:`drawn_design_of`): the prediction's mean on every row, corrected by
    the draws' estimates of its mean error (:func:`drawn_mean`); labels_only is the same with a constant
    prediction, the labels' weighted mean. The interval's quantile is Student's t with (drawn rows - 1) degrees
    of freedom, not the normal's: the variance is estimated from the draws' few rows (a survey's usual small-sample
    choice; at 50 labels 2.5% wider than the normal's, at 400 0.3%)."""
    from scipy.stats import t as student

    drawn = ~np.isnan(design[:, 0])
    if drawn.sum() < MIN_LABELLED:
        raise EstimateError(f"{group}: {int(drawn.sum())} rows drawn for the estimate; an interval needs at least "
                            f"{MIN_LABELLED} (draw more: label_next(..., mode='estimate'))")
    z = student.ppf(1 - alpha / 2, int(drawn.sum()) - 1)
    labelled = ~np.isnan(y)
    n_lab = int(labelled.sum())
    weight = np.where(drawn, 1 / np.where(drawn, design[:, 0], 1.0), 1.0)[labelled]
    constant = np.full(len(y), float(np.average(y[labelled], weights=weight)))
    found = []
    for f, rows in ((pred, len(y)), (constant, n_lab)):
        c, v = drawn_mean(y - f, design)
        est, var = f.mean() + c, v + f.var(ddof=1) / len(f)  # the second term as ppi-python counts it
        found.append(Interval(float(est), float(est - z * np.sqrt(var)), float(est + z * np.sqrt(var)), rows))
    design_words = drawn_design(int((labelled & ~drawn).sum()), int(drawn.sum()),
                                int(np.unique(design[drawn, 1]).size))
    return Estimate(group, found[0], found[1], metric_only_interval(pred, alpha), n_lab, len(y), design_words)


def drawn_mean(r: np.ndarray, design: np.ndarray) -> tuple[float, float]:
    """The mean over all rows of ``r`` (known on labelled rows, NaN elsewhere) from estimate draws, and its
    variance. Draw k was taken from the M_k rows not labelled before it; it estimates their mean of ``r`` by the
    weighted (Hajek) mean of its rows, m_k = sum(r / p) / sum(1 / p), and the whole mean as

        c_k = (sum of r over the rows labelled before draw k + M_k m_k) / N,

    with the linearised variance of Poisson sampling v_k = (M_k / N)^2 sum((1 - p)(r - m_k)^2 / p^2) / sum(1 / p)^2
    (Sarndal, Swensson & Wretman 1992, sections 3.3 and 5.7) times n_k / (n_k - 1), n_k the draw's rows: m_k is
    fitted on the same rows, and without the factor a pilot draw of a dozen rows understates its variance as a
    variance with ddof=0 does (at 50 labels the interval then covered 0.936-0.941 of 2,000 studies in six of
    the 12 development cells, nominal 0.95; with it and :func:`_one_drawn`'s t quantile 0.947-0.965). The draws are
    combined in proportion to their sizes,
    c = sum w_k c_k, v = sum w_k^2 v_k: each draw's error has mean zero given the draws before it, so the errors
    are uncorrelated (a martingale, as in active statistical inference, Zrnic & Candes 2024, with batches). One
    uniform draw with nothing labelled before gives the mean of ``r`` on the drawn rows, PPI's correction.

    >>> nan = float("nan")  # rows: known before the draw, unlabelled, drawn with p .5, drawn with p .25
    >>> c, v = drawn_mean(np.array([1.0, nan, 0.0, 1.0]), np.array([[nan, -1], [nan, nan], [.5, 0], [.25, 0]]))
    >>> round(c, 4), round(v, 4)  # by hand: m = (0 / .5 + 1 / .25) / 6 = 2/3; c = (1 + 3 * 2/3) / 4
    (0.75, 0.0694)
    >>> # v = (3/4)^2 (.5 (2/3)^2 / .25 + .75 (1/3)^2 / .0625) / 36 * 2 / (2 - 1) = .5625 * (20/9) / 36 * 2
    """
    prob, rnd = design[:, 0], design[:, 1]
    drawn = ~np.isnan(prob)
    draws = np.unique(rnd[drawn])
    sizes = np.array([(rnd == k).sum() for k in draws], float)
    c = v = 0.0
    for k, w in zip(draws, sizes / sizes.sum()):
        mine = rnd == k
        before = ~np.isnan(rnd) & (rnd < k)  # known when draw k was taken: labels from before, earlier draws
        rd, pd_ = r[mine], prob[mine]
        m = (rd / pd_).sum() / (1 / pd_).sum()
        share = (len(r) - before.sum()) / len(r)
        c += w * (r[before].sum() / len(r) + share * m)
        small = len(rd) / (len(rd) - 1) if len(rd) > 1 else 1.0  # m was fitted on these rows (see above)
        v += w ** 2 * share ** 2 * ((1 - pd_) * (rd - m) ** 2 / pd_ ** 2).sum() / (1 / pd_).sum() ** 2 * small
    return float(c), float(v)


def drawn_design(known: int, drawn: int, draws: int) -> str:
    """The labels' design in words, for labels from estimate draws."""
    return (f"{drawn} drawn for the estimate in {draws} draw(s) with known probabilities (weighted by "
            f"1/probability), {known} labelled before the first draw (counted exactly)")


def _scores(frame: pd.DataFrame, using: Sequence[str]) -> np.ndarray:
    missing = [c for c in using if c not in frame.columns]
    if missing:
        raise EstimateError(f"no score column {missing[0]!r}; columns: {sorted(map(str, frame.columns))}")
    X = frame[list(using)].apply(pd.to_numeric, errors="coerce").to_numpy(float)
    for j, col in enumerate(using):
        lost = np.isnan(X[:, j]) & frame[col].notna().to_numpy()
        if lost.any():
            raise EstimateError(f"column {col!r} is not a score: {int(lost.sum())} of its values are not numbers "
                                f"(e.g. {str(frame[col][lost].iloc[0])[:40]!r}); --using takes numeric score columns")
    return X


def with_labels(results: pd.DataFrame, labels: Any, target: str) -> pd.DataFrame:
    """``results`` with a labels file's labels (a CSV path as the labeler writes it, or a frame with ``id`` and
    ``label``) in column ``target``, joined on id (and system), with how each row was chosen (``selection`` and an
    estimate draw's columns) brought along for :func:`estimate` to refuse or weight by."""
    from evalkit.decide.calibrate.active import DESIGN_COLUMNS, as_labels, join_labels

    source = str(labels) if not isinstance(labels, pd.DataFrame) else "labels"
    return join_labels(results, as_labels(labels), target, source=source, carry=("selection", *DESIGN_COLUMNS))


def estimate(results: pd.DataFrame, target: str, using: Sequence[str], *, positive: Any = None,
             by: str | None = "system", alpha: float = 0.05, seed: int = 0, labels: Any = None) -> list[Estimate]:
    """The label's rate (or mean) per group (``by``; None: all rows as one) by PPI++, labels only and metric only.
    With ``labels`` (a labels CSV or frame), its labels become the ``target`` column first (:func:`with_labels`).

    Rows with a missing score in ``using`` are left out (they are counted in the error). See the module.
    """
    if labels is not None:
        results = with_labels(results, labels, target)
    frame, y, pred, design = _prepared(results, target, using, positive, seed)
    if by is None or by not in frame.columns:
        return [_one("all rows", y, pred, alpha, design)]
    groups = frame[by].astype(str).to_numpy()
    found, short = [], []
    for g in sorted(set(groups)):
        try:
            mine = groups == g
            found.append(_one(g, y[mine], pred[mine], alpha, None if design is None else design[mine]))
        except EstimateError as e:  # a group short of labels gets no interval; the others still do
            short.append(str(e))
    if not found:
        raise EstimateError("; ".join(short))
    for reason in short:
        log.warning("no estimate for %s", reason)
    return found


def paired_difference(results: pd.DataFrame, target: str, using: Sequence[str], a: str, b: str, *,
                      positive: Any = None, by: str = "system", pair_on: str = "id", alpha: float = 0.05,
                      seed: int = 0) -> Estimate:
    """``a`` minus ``b`` over the questions both answered (paired on ``pair_on``).

    ppi-python estimates one mean; the difference of two systems labelled on different random rows is its
    two-sample form (PPI, Angelopoulos et al. 2023, section on differences): the paired predictions' mean
    difference over every pair, corrected by each system's mean prediction error on its own labelled rows,

        D = mean_pairs(f_a - f_b) + mean_La(Y_a - f_a) - mean_Lb(Y_b - f_b),
        Var D = var(f_a - f_b) / N + var(Y_a - f_a) / n_a + var(Y_b - f_b) / n_b,

    with the cross-fitted prediction f (well calibrated, so no power tuning is applied here). labels_only is the
    difference of the two labelled means (Welch's CLT interval); metric_only the predictions' paired mean.
    """
    frame, y, pred, design = _prepared(results, target, using, positive, seed)
    ia, ib = _pairs(frame, a, b, by, pair_on)
    da, db = (None, None) if design is None else (design[ia], design[ib])
    for s, side, d in ((a, ia, da), (b, ib, db)):
        n = int((~np.isnan(y[side]) if d is None else ~np.isnan(d[:, 0])).sum())
        if n < MIN_LABELLED:
            raise EstimateError(f"{s}: {n} {'labelled' if d is None else 'drawn'} rows among the pairs; an interval "
                                f"needs at least {MIN_LABELLED} (label more rows at random)")
    return paired_interval(f"{a} - {b}", y[ia], pred[ia], y[ib], pred[ib], alpha, da, db)


def paired_interval(group: str, ya: np.ndarray, fa: np.ndarray, yb: np.ndarray, fb: np.ndarray,
                    alpha: float, da: np.ndarray | None = None, db: np.ndarray | None = None) -> Estimate:
    """The paired difference's three estimates from each pair's labels (NaN: unlabelled) and predictions (and,
    for labels from estimate draws, each side's design: see :func:`_side_mean`).

    >>> nan = float("nan")
    >>> e = paired_interval("a - b", np.array([1, nan, 0, 1]), np.array([.8, .6, .2, .7]),
    ...                     np.array([nan, 0, 0, 1]), np.array([.3, .1, .4, .9]), 0.05)
    >>> round(e.ppi.estimate, 4)  # mean(fa - fb) + mean(ya - fa | labelled) - mean(yb - fb | labelled)
    0.3833
    """
    from scipy.stats import norm

    z = norm.ppf(1 - alpha / 2)
    fd = fa - fb
    (ca, va), (cb, vb) = _side_mean(ya - fa, da), _side_mean(yb - fb, db)
    est = fd.mean() + ca - cb
    half = z * np.sqrt(fd.var(ddof=1) / len(fd) + va + vb)
    (ma, wa), (mb, wb) = _side_mean(ya, da), _side_mean(yb, db)
    lab, lab_half = ma - mb, z * np.sqrt(wa + wb)
    n_lab = int((~np.isnan(ya)).sum() + (~np.isnan(yb)).sum())
    design = RANDOM
    if da is not None:
        drawn = [~np.isnan(d[:, 0]) for d in (da, db)]
        known = sum(int((~np.isnan(y) & ~d).sum()) for y, d in zip((ya, yb), drawn))
        design = drawn_design(known, int(sum(d.sum() for d in drawn)),
                              int(np.unique(np.concatenate([da[drawn[0], 1], db[drawn[1], 1]])).size))
    return Estimate(group, Interval(float(est), float(est - half), float(est + half), len(fd)),
                    Interval(float(lab), float(lab - lab_half), float(lab + lab_half), n_lab),
                    metric_only_interval(fd, alpha), n_lab, 2 * len(fd), design)


def _side_mean(r: np.ndarray, design: np.ndarray | None) -> tuple[float, float]:
    """The mean of ``r`` over all of one side's rows, known where labelled (NaN elsewhere), and its variance:
    labelled at random (``design`` None), the labelled rows' mean and var / n; from estimate draws,
    :func:`drawn_mean`."""
    if design is not None:
        return drawn_mean(r, design)
    labelled = ~np.isnan(r)
    return float(r[labelled].mean()), float(r[labelled].var(ddof=1) / labelled.sum())


def _pairs(frame: pd.DataFrame, a: str, b: str, by: str, pair_on: str) -> tuple[np.ndarray, np.ndarray]:
    """Positions of a's and b's rows of each shared ``pair_on`` value, in the same order."""
    for col in (by, pair_on):
        if col not in frame.columns:
            raise EstimateError(f"no column {col!r} to pair the systems on")
    side = {s: frame.assign(_pos=np.arange(len(frame)))[frame[by].astype(str) == s] for s in (a, b)}
    for s, rows in side.items():
        if rows.empty:
            raise EstimateError(f"no rows of system {s!r} in column {by!r}")
    keys = side[a][[pair_on, "_pos"]].astype({pair_on: str}).merge(
        side[b][[pair_on, "_pos"]].astype({pair_on: str}), on=pair_on, suffixes=("_a", "_b"))
    if keys.empty:
        raise EstimateError(f"systems {a!r} and {b!r} share no {pair_on!r}: nothing to pair")
    return keys["_pos_a"].to_numpy(), keys["_pos_b"].to_numpy()


def hidden_labels(frame: pd.DataFrame, label: str, n: int, seed: int = 0) -> pd.DataFrame:
    """``frame`` with ``label`` kept on ``n`` rows drawn at random and emptied elsewhere: a study that labelled
    only that many (to see what an estimate from ``n`` labels would have said, on data labelled throughout).

    >>> int(hidden_labels(pd.DataFrame({"y": [1, 0, 1, 0]}), "y", 2, seed=0)["y"].notna().sum())
    2
    """
    keep = np.zeros(len(frame), bool)
    keep[np.random.default_rng(seed).choice(len(frame), n, replace=False)] = True
    return frame.assign(**{label: frame[label].astype(object).where(keep, None)})


def width_study(frame: pd.DataFrame, label: str, using: Sequence[str], labels: Sequence[int], *, seeds: int = 5,
                positive: Any = None, alpha: float = 0.05) -> pd.DataFrame:
    """The interval width of PPI and of the labels alone for studies of each number of random ``labels`` (``seeds``
    draws each; all rows as one group): rows ``labels``, ``method``, ``width``, ``seed``. Draws with too few labels
    of a group are left out."""
    rows = []
    for n in labels:
        for seed in range(seeds):
            try:
                [e] = estimate(hidden_labels(frame, label, n, seed), label, using, positive=positive, by=None,
                               alpha=alpha, seed=seed)
            except EstimateError:
                continue
            rows += [{"labels": n, "method": m, "width": getattr(e, m).high - getattr(e, m).low, "seed": seed}
                     for m in ("ppi", "labels_only")]
    return pd.DataFrame(rows, columns=["labels", "method", "width", "seed"])


@dataclass(frozen=True)
class Plan:
    """How many random labels a group needs for a PPI interval of the asked width, from a pilot's labels."""

    group: str
    width: float
    pilot: int  # labelled rows so far
    rows: int
    ppi_corr: float  # the correlation of the prediction with the label on the pilot (Broska et al. 2024)
    labels_ppi: int | None  # None: not reachable even with every row labelled
    labels_only: int | None
    width_now: float  # the PPI interval's width from the pilot's labels (an estimate too, noisy for a small pilot)

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "width": self.width, "pilot": self.pilot, "rows": self.rows,
                "ppi_corr": self.ppi_corr, "labels_ppi": self.labels_ppi, "labels_only": self.labels_only,
                "width_now": self.width_now}


def plan(results: pd.DataFrame, target: str, using: Sequence[str], width: float, *, positive: Any = None,
         by: str | None = "system", alpha: float = 0.05, seed: int = 0) -> list[Plan]:
    """Labels needed per group for a PPI interval ``width`` wide (and for the labels alone), from the labels so far
    (a random pilot): ``ppi_py.ppi_mean_power`` with labels costing 1 and predictions next to nothing, the group's
    rows the most there can be."""
    if not width > 0:
        raise EstimateError(f"the interval width must be above 0, got {width!r}")
    frame, y, pred, design = _prepared(results, target, using, positive, seed)
    if design is not None and (np.nanmax(design[:, 0]) > np.nanmin(design[:, 0])
                               or (~np.isnan(y) & np.isnan(design[:, 0])).any() or np.nanmax(design[:, 1]) > 0):
        raise EstimateError("a plan takes a random pilot; these labels come from a weighted draw "
                            "(label_next(..., mode='estimate')): estimate from them instead, or plan from a random one")
    if set(np.unique(y[~np.isnan(y)])) <= {0.0, 1.0} and width >= 1:
        raise EstimateError(f"a rate lies in 0..1: an interval {width:g} wide says nothing (e.g. 0.1 for +-5 points)")
    if by is None or by not in frame.columns:
        return [_plan_one("all rows", y, pred, width, alpha)]
    groups = frame[by].astype(str).to_numpy()
    return [_plan_one(g, y[groups == g], pred[groups == g], width, alpha) for g in sorted(set(groups))]


def _plan_one(group: str, y: np.ndarray, pred: np.ndarray, width: float, alpha: float) -> Plan:
    from ppi_py import ppi_mean_power
    from scipy.stats import norm

    labelled = ~np.isnan(y)
    Y, Yhat = y[labelled], pred[labelled]
    if labelled.sum() < MIN_LABELLED or Y.std() == 0 or Yhat.std() == 0:
        raise EstimateError(f"{group}: a plan needs a pilot of at least {MIN_LABELLED} random labels that are not "
                            f"all the same (has {int(labelled.sum())})")
    effective = int(np.ceil((2 * norm.ppf(1 - alpha / 2) * Y.std(ddof=1) / width) ** 2))  # labels-only n
    needed = ppi_mean_power(Y, Yhat, cost_Y=1.0, cost_Yhat=1e-6, effective_n=max(1, effective), n_max=len(y))
    n_ppi = _enough(int(needed["n"]), float(needed["ppi_corr"]), len(y), effective)
    n_only = effective if effective <= len(y) else None
    now = ppi_interval(y, pred, labelled, alpha)
    return Plan(group, width, int(labelled.sum()), len(y), float(needed["ppi_corr"]), n_ppi, n_only,
                now.high - now.low)


def _enough(n: int, rho: float, rows: int, effective: int) -> int | None:
    """The fewest labels from ``n`` up whose PPI++ interval, the group's other rows unlabelled, is as narrow as
    ``effective`` labels alone: n / (1 - rho^2 (rows - n) / rows) >= effective (ppi-python's pair rounds its
    effective size down, by a label or two at small n); None when even every row labelled is not enough.

    >>> _enough(50, 0.8, 1000, 200), _enough(10, 0.0, 50, 60)  # by hand: k >= 72 + 0.128 k, so k >= 82.6
    (83, None)
    """
    for k in range(max(n, 1), rows + 1):
        if k / (1 - rho ** 2 * (rows - k) / rows) >= effective:
            return k
    return None


def _prepared(results: pd.DataFrame, target: str, using: Sequence[str], positive: Any, seed: int):
    if target not in results.columns:
        raise EstimateError(f"no label column {target!r}; columns: {sorted(map(str, results.columns))}")
    if not using:
        raise EstimateError("name at least one score to predict the label with (--using)")
    y, _ = label_values(list(results[target]), target, positive)
    design = drawn_design_of(results, ~np.isnan(y))
    if design is None:  # with a draw, the rows labelled before it (near a threshold or not) are known exactly
        refuse_non_random(results[~np.isnan(y)])
    X = _scores(results, using)
    scored = ~np.isnan(X).any(axis=1)
    if not scored.all():
        raise EstimateError(f"{int((~scored).sum())} rows have no value for {', '.join(using)} (undetermined or "
                            "errored): drop them first, or choose scores every row has")
    binary = set(np.unique(y[~np.isnan(y)])) <= {0.0, 1.0}
    labelled = ~np.isnan(y)
    if labelled.sum() < MIN_LABELLED:
        raise EstimateError(f"{int(labelled.sum())} labelled rows in {target!r}; an estimate needs at least "
                            f"{MIN_LABELLED}")
    return results, y, cross_fitted(X, y, labelled, binary, seed), design


def drawn_design_of(frame: pd.DataFrame, labelled: np.ndarray) -> np.ndarray | None:
    """The design of labels drawn for the estimate (``label_next(..., mode="estimate")``: a label's ``selection``
    says so, its ``probability``, ``draw`` and ``pool`` record the draw), as an array of two columns: each row's
    probability in its draw (NaN for rows not drawn) and which draw it is known from (0, 1, ... in the order the
    draws were taken, i.e. by shrinking ``pool``; -1 for rows labelled before the first draw; NaN: unlabelled).
    None when no label came from a draw.

    The weights are only right for whole draws: every drawn row labelled, and the rows labelled before each draw
    exactly those its pool left out. Anything else is refused, saying what to do."""
    if "selection" not in frame.columns:
        return None
    from evalkit.decide.calibrate.active import DESIGN_COLUMNS, DRAWN

    drawn = labelled & frame["selection"].astype(str).str.startswith(DRAWN).to_numpy()
    if not drawn.any():
        return None
    missing = [c for c in DESIGN_COLUMNS if c not in frame.columns]
    if missing:
        raise EstimateError(f"{int(drawn.sum())} labels were drawn for the estimate but the column(s) {missing} that "
                            "record the draw are missing (keep the labels file's columns as the labeler wrote them)")
    prob = pd.to_numeric(frame["probability"], errors="coerce").to_numpy(float)
    bad = np.flatnonzero(drawn & ~((prob > 0) & (prob <= 1)))
    if len(bad):
        raise EstimateError(f"row {int(bad[0])}: probability {frame['probability'].iloc[bad[0]]!r} is not within "
                            "(0, 1]")
    rnd = np.where(labelled, -1.0, np.nan)
    for k, draw in enumerate(_draws_in_order(frame, drawn, labelled)):
        rnd[drawn & (frame["draw"].astype(str) == draw).to_numpy()] = k
    return np.column_stack([np.where(drawn, prob, np.nan), rnd])


def _draws_in_order(frame: pd.DataFrame, drawn: np.ndarray, labelled: np.ndarray) -> list[str]:
    """The draws' ids, first taken first (the largest pool), each checked whole and its pool consistent."""
    rows = frame.loc[drawn, ["draw", "pool", "drawn"]].astype(str).drop_duplicates("draw")
    rows = rows.assign(pool=rows["pool"].astype(float).astype(int), drawn=rows["drawn"].astype(float).astype(int))
    rows = rows.sort_values("pool", ascending=False)
    if rows["pool"].duplicated().any():
        twins = sorted(rows.loc[rows["pool"].duplicated(keep=False), "draw"])
        raise EstimateError(f"draws {', '.join(twins)} were both taken from the same unlabelled rows: the weights "
                            "hold for draws taken one after another; label one of them")
    ids = frame["draw"].astype(str).to_numpy()
    known = int((labelled & ~drawn).sum())  # labels from outside any draw: taken before the first one
    for draw, pool, size in rows[["draw", "pool", "drawn"]].itertuples(index=False):
        got = int((drawn & (ids == draw)).sum())
        if got != size:
            raise EstimateError(f"{size - got} of the {size} rows of draw {draw} have no label: label every drawn row "
                                "(evalkit.labeler resumes where it stopped); a row left out biases the estimate")
        if len(frame) - pool != known:
            raise EstimateError(f"draw {draw} was taken from {pool} unlabelled rows of {len(frame)}, so "
                                f"{len(frame) - pool} were labelled before it, but {known} labels lie outside it and "
                                "the draws after it: labels added between or after the draws (or a draw over other "
                                "rows than these results) break its probabilities")
        known += size
    return rows["draw"].tolist()
