"""#39, labelling that keeps estimates valid: `label_next(..., mode="estimate")` draws rows with known inclusion
probabilities (Poisson sampling, favouring uncertain rows), the labeler records them, and `estimate` weights each
drawn label by 1/probability while the rows labelled before the draw count exactly.

Expected values come from hand formulas (probabilities proportional to weights, the self-normalised weighted
mean), from ppi-python called directly on the same inputs, from the empirical frequency of each row's draw, and
from the coverage on a simulated population whose true rate is known."""
import csv
import json

import numpy as np
import pandas as pd
import pytest

from evalkit.decide.calibrate.active import inclusion_probabilities, label_next
from evalkit.decide.calibrate.estimate import EstimateError, _one_drawn, estimate, paired_difference
from evalkit.cli import main
from evalkit.publish.lab import labeler

DESIGN = ["selection", "probability", "draw", "pool", "drawn"]


def _population(seed: int, n: int = 400, systems=("a",), rates=(0.3,)) -> pd.DataFrame:
    """Systems answering the same questions; the score predicts the label (AUC about 0.9)."""
    rng = np.random.default_rng(seed)
    parts = []
    for system, rate in zip(systems, rates):
        y = rng.random(n) < rate
        parts.append(pd.DataFrame({"id": [f"q{i}" for i in range(n)], "system": system,
                                   "truth": np.where(y, "Y", "N"),
                                   "s": np.clip(0.35 * y + rng.normal(0.35, 0.18, n), 0, 1)}))
    df = pd.concat(parts, ignore_index=True)
    df["label"] = None
    for c in DESIGN:
        df[c] = None
    return df


def _label(df: pd.DataFrame, picked: pd.DataFrame) -> pd.DataFrame:
    """A careful labeller labels every picked row; the row keeps how it was chosen (as the labeler records it)."""
    out = df.copy()
    out.loc[picked.index, "label"] = out.loc[picked.index, "truth"]
    out.loc[picked.index, "selection"] = picked["why"].to_numpy()
    for c in DESIGN[1:]:
        if c in picked.columns:
            out.loc[picked.index, c] = picked[c].to_numpy()
    return out


def _pilot_then_draw(pop: pd.DataFrame, seed: int, pilot: int = 20, n: int = 60) -> pd.DataFrame:
    """A study that first labels rows near a threshold (biased for a rate), then draws twice for the estimate."""
    df = _label(pop, label_next(pop, score="s", n=pilot, threshold=0.5, random_share=0.0, seed=seed))
    df = _label(df, label_next(df, score="s", n=n // 3, label="label", positive="Y", mode="estimate", seed=seed))
    return _label(df, label_next(df, score="s", n=n - n // 3, label="label", positive="Y", mode="estimate",
                                 seed=1000 + seed))


# --- the draw ---------------------------------------------------------------------------------------------------

def test_probabilities_are_proportional_to_the_weights_and_at_most_one():
    # by hand: 1 * [1, 3] / 4 = [.25, .75]; mixed half with the uniform [.5, .5]: [.375, .625]
    assert inclusion_probabilities(np.array([1.0, 3.0]), 1, 0.5) == pytest.approx([0.375, 0.625])
    # 3 * [1, 1, 1, 7] / 10 = [.3, .3, .3, 2.1]: the last capped at 1, the other 2 shared by three rows
    assert inclusion_probabilities(np.array([1.0, 1, 1, 7]), 3, 0.0) == pytest.approx([2 / 3, 2 / 3, 2 / 3, 1])
    with pytest.raises(Exception, match="cannot draw 5 of 4 rows"):
        inclusion_probabilities(np.ones(4), 5, 0.0)


def test_a_draw_before_any_label_is_uniform_and_records_its_design():
    pop = _population(1, n=200)
    drawn = label_next(pop, score="s", n=40, mode="estimate", seed=3)
    assert set(drawn["probability"]) == {40 / 200}
    assert drawn["why"].str.startswith("drawn for the estimate (probability 0.2)").all()
    assert set(drawn["pool"]) == {200} and set(drawn["drawn"]) == {len(drawn)} and drawn["draw"].nunique() == 1
    again = label_next(pop, score="s", n=40, mode="estimate", seed=3)
    assert again.index.tolist() == drawn.index.tolist()  # the same seed draws the same rows


def test_each_row_is_drawn_as_often_as_its_probability_says():
    """The stated probabilities are the real ones: over 2,000 draws each row's frequency is within 0.04 of its
    probability (binomial sd at most 0.012), and uncertain rows (scores near where the label flips) get more."""
    # scores evenly over 0..1, the label flipping at 0.5 (symmetric, so the least certain score is 0.5), and
    # 16 labels so far spread over the range
    s = np.linspace(0, 1, 60)
    df = pd.DataFrame({"id": [f"q{i}" for i in range(60)], "s": s, "label": None, "selection": None})
    spread = np.arange(1, 60, 4)
    df.loc[spread, "label"] = np.where((s[spread] > 0.5) ^ np.isin(spread, [25, 37]), "Y", "N")
    seen, probs = np.zeros(len(df)), {}
    for seed in range(2000):
        d = label_next(df, score="s", n=10, label="label", positive="Y", mode="estimate", seed=seed)
        seen[d.index] += 1
        probs.update(zip(d.index, d["probability"]))  # a row's probability is the same in every draw
    pool = df.index[df["label"].isna()]
    assert set(probs) == set(pool) and sum(probs.values()) == pytest.approx(10)
    assert max(abs(seen[i] / 2000 - probs[i]) for i in pool) < 0.04
    assert seen[df["label"].notna().to_numpy()].sum() == 0  # labelled rows are never drawn again
    prob = pd.Series(probs)
    assert prob.max() > 1.3 * prob.min()  # not uniform: the labels so far say where the label is uncertain
    near = df.loc[pool, "s"].sub(0.5).abs()
    assert prob[near.nsmallest(5).index].mean() > prob[near.nlargest(5).index].mean()


# --- the weighted estimate --------------------------------------------------------------------------------------

def test_draws_are_combined_by_the_weighted_means_by_hand():
    """Two draws on 8 rows, computed here term by term: draw k estimates the mean of y - f over the rows not
    labelled before it by the 1/p-weighted mean m_k of its rows, c_k = (sum of y - f over the rows known before
    it + M_k m_k) / N with variance (M_k / N)^2 sum((1 - p)(y - f - m_k)^2 / p^2) / sum(1 / p)^2 times
    n_k / (n_k - 1) (m_k is fitted on the draw's own n_k rows); the draws are weighted by their sizes (2 and 3
    rows); the prediction's mean is added, with var(f) / N; the quantile is Student's t with 5 - 1 degrees of
    freedom (2.776445, from a t table), five rows drawn."""
    nan = np.nan
    y = np.array([1, 0, 1, nan, 0, 1, nan, 0], float)
    f = np.array([.8, .3, .6, .2, .1, .7, .5, .4])
    #              known  d0   d0   -    d1   d1   -    d1
    prob = np.array([nan, .5, .25, nan, .4, .5, nan, .8])
    rnd = np.array([-1, 0, 0, nan, 1, 1, nan, 1])
    r = y - f
    m0 = (r[1] / .5 + r[2] / .25) / (1 / .5 + 1 / .25)
    c0 = (r[0] + 7 * m0) / 8
    v0 = (7 / 8) ** 2 * (.5 * (r[1] - m0) ** 2 / .25 + .75 * (r[2] - m0) ** 2 / .0625) / 6 ** 2 * 2 / 1
    m1 = (r[4] / .4 + r[5] / .5 + r[7] / .8) / (1 / .4 + 1 / .5 + 1 / .8)
    c1 = (r[0] + r[1] + r[2] + 5 * m1) / 8
    v1 = (5 / 8) ** 2 * (.6 * (r[4] - m1) ** 2 / .16 + .5 * (r[5] - m1) ** 2 / .25
                         + .2 * (r[7] - m1) ** 2 / .64) / (1 / .4 + 1 / .5 + 1 / .8) ** 2 * 3 / 2
    est = f.mean() + 0.4 * c0 + 0.6 * c1
    half = 2.776445 * np.sqrt(0.16 * v0 + 0.36 * v1 + f.var(ddof=1) / 8)
    import evalkit.decide.calibrate.estimate as E

    old, E.MIN_LABELLED = E.MIN_LABELLED, 3  # eight rows: below the floor a real study needs
    try:
        e = E._one_drawn("a", y, f, 0.05, np.column_stack([prob, rnd]))
    finally:
        E.MIN_LABELLED = old
    assert e.ppi.estimate == pytest.approx(est) and e.ppi.high == pytest.approx(est + half, rel=1e-5)
    assert e.design.startswith("5 drawn for the estimate in 2 draw(s)") and "1 labelled before" in e.design


def test_a_single_uniform_draw_is_ppi_pythons_estimate():
    """With one uniform draw (probability n / N for every row, nothing labelled before), the draw's estimate is
    ppi-python's PPI point estimate without power tuning: mean(f) over all rows + mean(y - f) over the drawn."""
    from ppi_py import ppi_mean_pointestimate

    pop = _population(9, n=300)
    df = _label(pop, label_next(pop, score="s", n=60, mode="estimate", seed=4))
    [e] = estimate(df, "label", ["s"], positive="Y")
    labelled = df["label"].notna().to_numpy()
    from evalkit.decide.calibrate.estimate import cross_fitted

    y = df["label"].map({"Y": 1.0, "N": 0.0}).to_numpy(float)
    f = cross_fitted(df[["s"]].to_numpy(float), y, labelled, True, 0)
    want = ppi_mean_pointestimate(y[labelled], f[labelled], f, lam=1)[0]
    assert e.ppi.estimate == pytest.approx(want)


def test_a_pilot_near_the_threshold_then_a_draw_covers_the_true_rate():
    """120 studies (2 systems of 400 rows): 20 labels near a threshold, then about 60 drawn for the estimate in
    two draws.
    The weighted PPI interval covers each system's true rate and the difference in >= 90% of studies (nominal
    95%) and its mean is within 0.01 of the truth."""
    pop = _population(7, systems=("a", "b"), rates=(0.3, 0.4))
    truth = pop.assign(y=pop["truth"].eq("Y")).groupby("system")["y"].mean()
    hit, est = {"a": [], "b": [], "a - b": []}, []
    for seed in range(120):
        df = _pilot_then_draw(pop, seed)
        for e in estimate(df, "label", ["s"], positive="Y", seed=seed):
            hit[e.group].append(e.ppi.low <= truth[e.group] <= e.ppi.high)
            if e.group == "a":
                est.append(e.ppi.estimate)
        d = paired_difference(df, "label", ["s"], "a", "b", positive="Y", seed=seed)
        hit["a - b"].append(d.ppi.low <= truth["a"] - truth["b"] <= d.ppi.high)
    share = {g: np.mean(v) for g, v in hit.items()}
    assert min(share.values()) >= 0.9, share
    assert abs(np.mean(est) - truth["a"]) < 0.01, (np.mean(est), truth["a"])


def test_a_draw_left_unfinished_or_followed_by_other_labels_is_refused():
    pop = _population(3, n=200)
    df = _pilot_then_draw(pop, 0, pilot=10, n=40)
    unfinished = df.copy()
    last = unfinished.index[unfinished["probability"].notna()][-1]
    unfinished.loc[last, ["label", "selection"] + DESIGN[1:]] = None
    with pytest.raises(EstimateError, match=r"1 of the \d+ rows of draw d\d+-\d+-\d+ have no label: label every drawn"):
        estimate(unfinished, "label", ["s"], positive="Y")
    after = _label(df, label_next(df, score="s", n=3, label="label", positive="Y", threshold=0.5,
                                  random_share=0.0, seed=1))
    with pytest.raises(EstimateError, match="so 10 were labelled before it, but 13 labels lie outside it and the draws after it"):
        estimate(after, "label", ["s"], positive="Y")
    same_rows = _label(pop, label_next(pop, score="s", n=20, mode="estimate", seed=1))
    same_rows = _label(same_rows, label_next(pop, score="s", n=20, mode="estimate", seed=2))  # from the same pool
    with pytest.raises(EstimateError, match="draws d1-200-\\d+, d2-200-\\d+ were both taken from the same unlabelled"):
        estimate(same_rows, "label", ["s"], positive="Y")
    with pytest.raises(Exception, match="mode must be one of 'threshold', 'estimate'"):
        label_next(pop, score="s", mode="random")


def test_a_second_draw_after_a_pilot_draw_is_combined_with_it():
    pop = _population(4, n=300)
    pilot = _label(pop, label_next(pop, score="s", n=30, mode="estimate", seed=0))
    both = _label(pilot, label_next(pilot, score="s", n=50, label="label", positive="Y", mode="estimate", seed=1))
    [e] = estimate(both, "label", ["s"], positive="Y")
    assert e.labelled == both["label"].notna().sum() and e.rows == 300
    assert f"{e.labelled} drawn for the estimate in 2 draw(s)" in e.design and "0 labelled before" in e.design


def test_the_near_threshold_refusal_points_to_the_draw():
    df = _label(_population(3, n=200), label_next(_population(3, n=200), score="s", n=30, threshold=0.5,
                                                  random_share=0.0, seed=0))
    with pytest.raises(EstimateError, match=r"label_next\(\.\.\., mode='estimate'\)"):
        estimate(df, "label", ["s"], positive="Y")


# --- from the labeler's file to the command ----------------------------------------------------------------------

def test_labeler_records_the_draw_and_the_command_weights_by_it(tmp_path, capsys):
    pop = _population(5, n=150)
    results = pop[["id", "system", "s"]].assign(question="q?", answer="x")
    results.to_csv(tmp_path / "results.csv", index=False)
    rows = label_next(results, score="s", n=30, mode="estimate", seed=2)
    out = tmp_path / "labels.csv"
    lab = labeler(rows, out=out, labels=("Y", "N"), labeller="ann")
    truth = dict(zip(pop["id"], pop["truth"]))
    while lab.current is not None:
        lab.record(truth[rows["id"].iloc[lab.current]])
    written = list(csv.DictReader(out.open()))
    assert len(written) == len(rows) and {"probability", "draw", "pool", "drawn"} <= set(written[0])
    assert {float(r["probability"]) for r in written} == {30 / 150}
    assert main(["estimate", str(tmp_path / "results.csv"), "--labels", str(out), "--target", "human",
                 "--positive", "Y", "--using", "s", "--json", str(tmp_path / "e.json")]) == 0
    got = json.loads((tmp_path / "e.json").read_text())["estimates"][0]
    joined = results.assign(human=results["id"].map({r["id"]: r["label"] for r in written}),
                            **{c: results["id"].map({r["id"]: r[c] for r in written}) for c in DESIGN})
    [e] = estimate(joined, "human", ["s"], positive="Y")  # the file joined here, by hand
    assert got["ppi"]["estimate"] == pytest.approx(e.ppi.estimate) and got["labelled"] == len(rows)
    [from_file] = estimate(results, "human", ["s"], positive="Y", labels=out)  # the Python road to the same file
    assert from_file.ppi.estimate == pytest.approx(e.ppi.estimate) and "drawn for the estimate" in from_file.design
    assert "ppi" in capsys.readouterr().out
