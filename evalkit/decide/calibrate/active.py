"""Active labelling for a calibration study: which rows to label next, and the labels file that records them.

A calibration study's cost is its human labels. The threshold is decided by the rows whose scores lie near it:
a row far above or below is almost surely on its side, and its label moves the chosen threshold little. So
:func:`label_next` spends most of a batch on unlabelled rows near the current threshold (uncertainty sampling,
Lewis & Gale 1994; Settles 2009, section 3.1), spread over the scores there (one row per stratum of the nearest
candidates, so a batch is not ten copies of one score), and a random share on rows drawn uniformly from all
unlabelled ones, so that the labelled set keeps covering the whole score range and nothing far from the current
threshold is left unseen (the "epsilon" of exploration in Settles 2009, section 6.3).

The selection depends on the score only, never on a label: at every score the labelled rows hold the two
classes in the proportion the data holds them. The labelled set as a whole does not: it over-represents the
scores near the threshold, so precision, recall, AUC and prevalence computed on it describe those rows, not a
random sample of the data, and the chosen threshold leans toward where the labels crowd. Use active labels to
find and narrow the threshold; report its precision and recall on a random sample (the random share's rows,
marked in the labels file's ``selection`` column, or a fresh random batch). ``evalkit calibrate --labels`` says
how many of the labels were chosen near the threshold.

For a rate, ``label_next(..., mode="estimate")`` draws instead: each unlabelled row independently, with a known
probability that is higher where the labels so far leave the label least certain (active statistical inference,
Zrnic & Candes 2024). Each drawn row carries its probability and its draw (``probability``, ``draw``, ``pool``,
``drawn``; the labeler writes them into the labels file), and ``evalkit estimate`` weights each drawn label by
1/probability, so the estimate stays unbiased; labels from before a draw (near a threshold or not) count exactly.

A labels file is a CSV with the columns ``id, label, labeller, timestamp`` (and ``system`` where ids repeat across
systems; one row per labelled answer; a later row for the same answer replaces an earlier one), read by
:func:`read_labels` and joined onto results on ``id`` (and ``system``) by :func:`join_labels`
(``evalkit calibrate --labels labels.csv``).

Examples
--------
>>> import pandas as pd
>>> df = pd.DataFrame({"id": [f"r{i}" for i in range(100)], "s": [i / 100 for i in range(100)]})
>>> picked = label_next(df, score="s", n=4, threshold=0.455, random_share=0.0, seed=0)
>>> len(picked), bool(picked["s"].between(0.40, 0.51).all())  # one from each stratum of the 12 nearest
(4, True)
>>> label_next(df, score="s", n=4, threshold=0.455, random_share=0.5, seed=0)["why"].tolist()[-1]
'random share (keeps the whole range covered)'
"""
from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from evalkit.decide.calibrate.core import CalibrationError, flagged_direction, select_threshold
from evalkit.decide.calibrate.labels import binary_labels

LABEL_COLUMNS = ("id", "label", "labeller", "timestamp")
SYSTEM = "system"  # the labels file's optional column: ids that repeat across systems are told apart by it
# how a row chosen for its score's distance to the threshold is marked in a labels file's `selection` (files
# written before the wording said how close carry the first)
BY_THRESHOLD = ("near the threshold", "closest to the threshold")
MODES = ("threshold", "estimate")
DRAWN = "drawn for the estimate"  # how label_next(mode="estimate") marks a row in `selection`
DESIGN_COLUMNS = ("probability", "draw", "pool", "drawn")  # a drawn row's design, kept in the labels file
NEAR_POOL = 3  # candidates near the threshold per row picked there: the batch is stratified over that pool
MIN_PER_CLASS = 2  # labelled rows of each class before the threshold is chosen from labels


def read_labels(path: str | Path) -> pd.DataFrame:
    """A labels CSV (``id, label, labeller, timestamp``, optionally ``system``) as a frame with one row per
    answer (the last one wins).

    Errors name the file, and the line where one applies: a missing column, an empty id or label.
    """
    path = Path(path)
    if not path.exists():
        raise CalibrationError(f"{path}: labels file not found")
    text = path.read_text(encoding="utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text)))
    header = next(csv.reader(io.StringIO(text)), [])
    missing = [c for c in ("id", "label") if c not in header]
    if missing:
        raise CalibrationError(f"{path}: labels file lacks column(s) {missing} (expected {', '.join(LABEL_COLUMNS)})")
    for line, r in enumerate(rows, start=2):
        for c in ("id", "label"):
            if not (r.get(c) or "").strip():
                raise CalibrationError(f"{path}: line {line}: empty {c}")
    out = pd.DataFrame(rows, columns=list(dict.fromkeys([*header, *LABEL_COLUMNS])))
    kept = out.drop_duplicates(_key_columns(out), keep="last").reset_index(drop=True)
    kept.attrs["relabelled"] = len(out) - len(kept)  # answers labelled more than once (the last label kept)
    return kept


def relabelled_note(labels: pd.DataFrame) -> str | None:
    """One line when the labels file labels some answer more than once (its last label is the one used)."""
    n = int(labels.attrs.get("relabelled", 0))
    return None if not n else (f"{n} answer(s) are labelled more than once in the labels file; the last label of "
                                "each is used")


def _key_columns(labels: pd.DataFrame) -> list[str]:
    return ["id", SYSTEM] if SYSTEM in labels.columns and labels[SYSTEM].fillna("").astype(str).ne("").any() \
        else ["id"]


def row_keys(df: pd.DataFrame, by_system: bool) -> list[str]:
    """Each row's key in a labels file: its id, and its system where ``by_system``."""
    ids = df["id"].astype(str)
    return (ids + "\t" + df[SYSTEM].astype(str)).tolist() if by_system else ids.tolist()


def join_labels(df: pd.DataFrame, labels: pd.DataFrame, column: str, *, source: str = "labels",
                carry: Sequence[str] = ()) -> pd.DataFrame:
    """``df`` with ``column`` holding each row's label from ``labels``, joined on ``id`` (and ``system`` when the
    labels file has that column); rows without one are unlabelled (None). Each of the ``carry`` columns the
    labels file has comes along too (``selection`` and an estimate draw's ``DESIGN_COLUMNS``, for ``estimate``).

    A label for an answer ``df`` lacks is an error naming it (a typo would otherwise be a label silently lost),
    and so are ids that repeat across systems when the labels file has no ``system`` column."""
    if "id" not in df.columns:
        raise CalibrationError("the results have no id column to join labels on")
    if column in df.columns and df[column].notna().any():
        raise CalibrationError(f"{source}: the results already hold labels in column {column!r}; name a new column "
                               "for the file's labels (e.g. --label human), so that neither set replaces the other")
    by_system = _key_columns(labels) == ["id", SYSTEM]
    if by_system and SYSTEM not in df.columns:
        raise CalibrationError(f"{source}: has a system column but the results have none")
    keys = row_keys(df, by_system)
    if len(set(keys)) < len(keys):
        raise CalibrationError(f"{source}: ids repeat in the results (across systems?) and the labels file has no "
                               "system column to tell them apart; add one (evalkit.labeler writes it)")
    known = set(keys)
    theirs = row_keys(labels, by_system)
    unknown = [k for k in theirs if k not in known]
    if unknown:
        raise CalibrationError(f"{source}: {len(unknown)} labelled answer(s) not in the results, e.g. "
                               f"{unknown[0].replace(chr(9), ' / ')!r}")
    out = df.copy()
    for col, name in [("label", column), *[(c, c) for c in carry if c in labels.columns]]:
        if name != column and name in df.columns:
            raise CalibrationError(f"{source}: the results already have a column {name!r}, which the labels file's "
                                   "would replace")
        by_key = dict(zip(theirs, labels[col]))
        out[name] = pd.Series([by_key.get(k) for k in keys], index=out.index, dtype=object)
    return out


def chosen_by_threshold(selection: pd.Series) -> pd.Series:
    """True where a labels file's ``selection`` says :func:`label_next` chose the row for its distance to a
    threshold (not at random)."""
    return selection.astype(str).str.startswith(BY_THRESHOLD)


def selection_note(labels: pd.DataFrame) -> str | None:
    """One line when some labels were chosen near a threshold by :func:`label_next` (the labels file's
    ``selection`` column): the statistics then describe a set crowded around the threshold."""
    if "selection" not in labels.columns:
        return None
    near = int(chosen_by_threshold(labels["selection"]).sum())
    if not near:
        return None
    return (f"{near} of {len(labels)} labels were chosen near the threshold (evalkit.label_next): precision, recall "
            "and AUC below describe rows crowded around it, not a random sample of the data; report those on a "
            "random sample (the labels with selection 'random share')")


def enough_of_each_class(y: np.ndarray, labelled: np.ndarray) -> bool:
    """Do the labelled rows hold ``MIN_PER_CLASS`` of each class (0/1 in ``y``)?"""
    return min(int(y[labelled].sum()), int((1 - y[labelled]).sum())) >= MIN_PER_CLASS


def current_threshold(scores: np.ndarray, labelled: np.ndarray, y: np.ndarray, direction: str,
                      criterion: str = "youden") -> float | None:
    """The threshold to label around: chosen on the labelled rows once each class has ``MIN_PER_CLASS`` of
    them; None before (nothing is known yet: the first batch spreads over the whole score range)."""
    if enough_of_each_class(y, labelled):
        return float(select_threshold(scores[labelled], y[labelled], criterion, direction))
    return None


def label_next(results: pd.DataFrame, *, score: str, n: int = 20, labels: Any = None, label: str | None = None,
               positive: Any = None, direction: str | None = None, threshold: float | None = None,
               random_share: float = 0.25, criterion: str = "youden", seed: int = 0,
               mode: str = "threshold") -> pd.DataFrame:
    """The ``n`` unlabelled rows whose labels would narrow the threshold's interval most (``mode="threshold"``), or
    about ``n`` rows drawn with known probabilities for an unbiased rate (``mode="estimate"``).

    ``mode="threshold"`` (the default) chooses rows near the threshold: good for the threshold, biased for any
    rate computed from the labels (``evalkit estimate`` refuses them). ``mode="estimate"`` is active statistical
    inference (Zrnic & Candes, ICML 2024): every unlabelled row is drawn independently with its own probability
    (Poisson sampling), higher where the label is least certain given the score, and each drawn row carries its
    probability (``probability``) so that ``evalkit estimate`` weights it by 1/probability; see
    :func:`draw_for_estimate`.

    Parameters
    ----------
    results : scored rows with ``id`` and the ``score`` column.
    labels : labels so far: a labels CSV path, a frame with ``id`` and ``label``, or None; or name a ``label``
        column of ``results`` (missing values are unlabelled).
    positive : the label class that is flagged (as in ``evalkit calibrate --positive``).
    direction : 'higher' or 'lower' (default: the metric's, from the registry; else 'higher').
    threshold : label around this threshold (default: :func:`current_threshold`; with too few labels of each
        class yet, the batch is spread over the whole score range instead).
    random_share : the share of the batch drawn uniformly from all unlabelled rows (0..1).
    seed : the draw's seed (the same inputs and seed give the same rows).
    mode : 'threshold' or 'estimate' (above).

    Returns
    -------
    The chosen rows of ``results`` (near-threshold ones first, by distance), with ``why`` (near the threshold,
    spread over the range, or the random share), ``distance`` (|score - threshold|) and the ``threshold``
    labelled around (NaN before there is one).
    """
    if mode not in MODES:
        raise CalibrationError(f"mode must be one of {', '.join(map(repr, MODES))}, got {mode!r}")
    if not 0.0 <= random_share <= 1.0:
        raise CalibrationError(f"random_share must be within 0..1, got {random_share}")
    if score not in results.columns:
        raise CalibrationError(f"no score column {score!r} in the results")
    direction = direction or flagged_direction(score) or "higher"
    df = results if labels is None else join_labels(results, as_labels(labels), label or "label")
    lab_col = label or ("label" if labels is not None else None)
    s = pd.to_numeric(df[score], errors="coerce").to_numpy(dtype=float)
    have = ~np.isnan(s)
    y_raw = df[lab_col].tolist() if lab_col in df.columns else [None] * len(df)
    yb = binary_labels(y_raw, positive=positive, column=lab_col or "label", require_positive=False) \
        if lab_col in df.columns else y_raw
    labelled = np.array([v is not None for v in yb]) & have
    y = np.array([int(bool(v)) if v is not None else 0 for v in yb])
    if mode == "estimate":
        return draw_for_estimate(df, s, labelled, y, n=n, uniform_share=random_share, seed=seed)
    if threshold is None:
        threshold = current_threshold(s[have], labelled[have], y[have], direction, criterion)
    pool = np.flatnonzero(have & ~labelled)
    picked, why = _pick(s, pool, threshold, n, random_share, seed)
    out = df.iloc[picked].copy()
    out["why"] = _how_close(s, pool, picked, why, threshold)
    out["distance"] = np.abs(s[picked] - threshold) if threshold is not None else np.nan
    out["threshold"] = np.nan if threshold is None else float(threshold)
    return out


def _pick(s: np.ndarray, pool: np.ndarray, t: float | None, n: int, random_share: float,
          seed: int) -> tuple[list[int], list[str]]:
    """Positions to label: ``n - random`` spread over the candidates' distinct scores, then the random share.

    Candidates are the rows of the distinct scores nearest ``t`` until they hold ``NEAR_POOL`` times the rows
    wanted and number at least one distinct score per pick where the pool has so many (all of the pool while
    there is no threshold). With at least as many distinct scores as picks, the
    distinct scores are cut into strata (one pick each, a random score of the stratum and a random row of it);
    with fewer (a score with many ties, such as 0), picks go round the distinct scores, nearest first, so the
    ties never take the whole batch."""
    rng = np.random.default_rng(seed)
    n = min(n, len(pool))
    n_random = int(math.floor(random_share * n + 0.5)) if t is not None else 0
    n_near = n - n_random
    values, counts = np.unique(s[pool], return_counts=True)
    if t is None:
        near_why, chosen = "spread over the score range (too few labels of each class for a threshold)", values
    else:
        near_why = BY_THRESHOLD[1]
        by_distance = values[np.argsort(np.abs(values - t), kind="mergesort")]
        held = np.cumsum(counts[np.argsort(np.abs(values - t), kind="mergesort")])
        # enough rows, and at least one distinct score per pick where there are so many (a mass of ties at
        # the nearest score must not be the only candidate)
        k = max(int(np.searchsorted(held, n_near * NEAR_POOL)) + 1, min(n_near, len(values)))
        chosen = np.sort(by_distance[:k])
    rows_of = {v: pool[s[pool] == v] for v in chosen}
    near: list[int] = []
    if n_near and len(chosen) >= n_near:
        for stratum in np.array_split(chosen, n_near):
            near.append(int(rng.choice(rows_of[rng.choice(stratum)])))
    elif n_near:
        ring = sorted(chosen, key=lambda v: (abs(v - t) if t is not None else 0.0, v))
        left = {v: list(rng.permutation(rows_of[v])) for v in ring}
        while len(near) < n_near and any(left.values()):
            for v in ring:
                if left[v] and len(near) < n_near:
                    near.append(int(left[v].pop()))
    rest = np.setdiff1d(pool, near)
    random = [int(i) for i in rng.choice(rest, size=min(n_random, len(rest)), replace=False)] if n_random else []
    if t is not None:
        near.sort(key=lambda i: (abs(s[i] - t), i))
    return near + random, [near_why] * len(near) + ["random share (keeps the whole range covered)"] * len(random)


def draw_for_estimate(df: pd.DataFrame, s: np.ndarray, labelled: np.ndarray, y: np.ndarray, *, n: int,
                      uniform_share: float = 0.25, seed: int = 0) -> pd.DataFrame:
    """About ``n`` of the unlabelled scored rows (the pool), each drawn independently with a known probability.

    The probabilities sum to ``n`` over the pool. A share ``uniform_share`` of ``n`` is spread evenly over the
    pool (so that no row's weight 1/probability is huge); the rest goes in proportion to sqrt(p (1 - p)), p the
    chance of the positive class at the row's score (a logistic fit on the labels so far), which is where a label
    corrects the metric most (Zrnic & Candes 2024, section 3). Before ``MIN_PER_CLASS`` labels of each class, every
    row of the pool gets ``n / pool``: a uniform random sample. A probability is at most 1 (the excess goes to
    the other rows).

    Each drawn row carries ``probability``, ``draw`` (the draw's id), ``pool`` (the pool's size) and ``drawn``
    (how many rows the draw took): ``evalkit estimate`` checks from them that every drawn row was labelled and
    that the rows labelled outside the draw are exactly those labelled before it.

    >>> df = pd.DataFrame({"id": [f"r{i}" for i in range(40)], "s": [i / 40 for i in range(40)]})
    >>> out = draw_for_estimate(df, df["s"].to_numpy(), np.zeros(40, bool), np.zeros(40, int), n=10, seed=1)
    >>> out["probability"].unique().tolist(), int(out["pool"].iloc[0])  # no labels yet: 10 / 40 for every row
    ([0.25], 40)
    """
    pool = np.flatnonzero(~np.isnan(s) & ~labelled)
    if n < 1 or not len(pool):
        raise CalibrationError(f"nothing to draw: n={n}, {len(pool)} unlabelled rows with a score")
    p = inclusion_probabilities(_uncertainty(s, labelled, y, pool), min(n, len(pool)), uniform_share)
    hit = np.random.default_rng(seed).random(len(pool)) < p
    picked = pool[hit]
    out = df.iloc[picked].copy()
    out["why"] = [f"{DRAWN} (probability {q:.4g})" for q in p[hit]]
    out["probability"] = p[hit]
    out["draw"] = f"d{seed}-{len(pool)}-{int(hit.sum())}"
    out["pool"] = len(pool)
    out["drawn"] = int(hit.sum())
    out["distance"] = np.nan
    out["threshold"] = np.nan
    return out


def _uncertainty(s: np.ndarray, labelled: np.ndarray, y: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """sqrt(p (1 - p)) at each pool row's score from a logistic fit on the labelled rows; ones (uniform) before
    the labels hold ``MIN_PER_CLASS`` of each class."""
    if not enough_of_each_class(y, labelled):
        return np.ones(len(pool))
    from sklearn.linear_model import LogisticRegression

    # the score standardised over every scored row, so that the fit's default regularisation does not flatten a
    # score that spans a narrow range
    have = ~np.isnan(s)
    z = (s - s[have].mean()) / (s[have].std() or 1.0)
    fit = LogisticRegression().fit(z[labelled].reshape(-1, 1), y[labelled])
    p = fit.predict_proba(z[pool].reshape(-1, 1))[:, 1]
    return np.sqrt(p * (1 - p))


def inclusion_probabilities(weight: np.ndarray, n: int, uniform_share: float) -> np.ndarray:
    """Probabilities proportional to ``weight`` (mixed with a uniform share) that sum to ``n``, each at most 1.

    >>> inclusion_probabilities(np.array([1.0, 1.0, 2.0, 4.0]), 2, 0.0).tolist()  # 2 * w / 8
    [0.25, 0.25, 0.5, 1.0]
    >>> inclusion_probabilities(np.array([1.0, 1.0, 1.0, 9.0]), 2, 0.0).tolist()  # 1.5 capped: 1 left for 3 rows
    [0.3333333333333333, 0.3333333333333333, 0.3333333333333333, 1.0]
    """
    if not 0 < n <= len(weight):
        raise CalibrationError(f"cannot draw {n} of {len(weight)} rows")
    w = np.asarray(weight, float)
    if np.ptp(w) == 0:  # equal weights: a uniform sample, n / rows each (exactly, as a reader will check it)
        return np.full(len(w), n / len(w))
    w = (1 - uniform_share) * w / w.sum() + uniform_share / len(w)  # unequal weights >= 0: their sum is > 0
    p = np.zeros(len(w))
    full = np.zeros(len(w), bool)
    while True:  # cap at 1 and give the excess to the rows below it, until none is above
        left = n - full.sum()
        p[~full] = left * w[~full] / w[~full].sum()
        p[full] = 1.0
        over = ~full & (p >= 1)
        if not over.any():
            return p
        full |= over


def _how_close(s: np.ndarray, pool: np.ndarray, picked: list[int], why: list[str], t: float | None) -> list[str]:
    """Each threshold pick's reason with how close it is, in words true at any distance: its rank among the
    unlabelled rows by distance and the distance itself (a batch larger than the rows near the threshold reaches
    far from it, and says so)."""
    if t is None:
        return why
    dist = np.sort(np.abs(s[pool] - t))
    out = []
    for i, w in zip(picked, why):
        if w == BY_THRESHOLD[1]:
            d = abs(s[i] - t)
            w = f"{w} (rank {int(np.searchsorted(dist, d)) + 1} of {len(pool)} unlabelled rows, {d:.3f} away)"
        out.append(w)
    return out


def as_labels(labels: Any) -> pd.DataFrame:
    """Labels so far as a frame with ``id`` and ``label`` (one row per answer): a labels CSV path or a frame."""
    if isinstance(labels, (str, Path)):
        return read_labels(labels)
    if isinstance(labels, pd.DataFrame):
        if not {"id", "label"} <= set(labels.columns):
            raise CalibrationError("labels must have the columns id and label")
        return labels.drop_duplicates(_key_columns(labels), keep="last")
    raise CalibrationError("labels must be a labels CSV path or a frame with id and label")


def labels_csv(records: Sequence[dict[str, Any]]) -> str:
    """The labels file's text for ``records`` (each with ``id, label, labeller, timestamp``, and ``system`` where
    any record has one)."""
    extra = [k for r in records for k in r if k not in LABEL_COLUMNS and k != SYSTEM]
    cols = list(LABEL_COLUMNS) + ([SYSTEM] if any(not _blank(r.get(SYSTEM)) for r in records) else []) + \
        list(dict.fromkeys(extra))  # a file's own columns (notes, a second label) are kept
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for r in records:
        w.writerow({k: "" if _blank(r.get(k)) else r.get(k) for k in cols})
    return buf.getvalue()


def _blank(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and not v.strip())
