"""#39, first part: `evalkit estimate` — the rate of a human label from labels on a random sample and scores on
every row, by PPI++ (ppi-python), beside the labels-only interval and the metric-only mean.

Expected values come from hand formulas (the Wald interval, PPI++'s closed-form power tuning for a mean, the
two-sample PPI difference) and from the coverage on simulated populations whose true rate is known."""
import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from evalkit.decide.calibrate.estimate import (EstimateError, estimate, labels_only_interval, paired_difference,
                                        paired_interval, ppi_interval)
from evalkit.cli import main


def _population(seed: int, n_rows: int = 1000, rate: float = 0.3, strength: float = 0.5):
    """Two systems answering the same questions; the score predicts the label (AUC about 0.95 at 0.5)."""
    rng = np.random.default_rng(seed)
    rows = []
    for system, r in (("a", rate), ("b", rate + 0.1)):
        y = rng.random(n_rows) < r
        rows.append(pd.DataFrame({"id": [f"q{i}" for i in range(n_rows)], "system": system, "hallucinated": y,
                                  "hallucination": np.clip(strength * y + rng.normal(0.25, 0.2, n_rows), 0, 1)}))
    return pd.concat(rows, ignore_index=True)


def _labelled_at_random(df: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    keep = np.zeros(len(df), bool)
    keep[rng.choice(len(df), n, replace=False)] = True
    out = df.copy()
    out["human"] = np.where(keep, np.where(df["hallucinated"], "Y", "N"), None)
    return out


def test_labels_only_is_the_wald_interval():
    y = np.array([1, 0, 0, 1, 1, 0, 0, 0, 1, 0], float)
    iv = labels_only_interval(y, 0.05)
    # by hand: p = 4/10, sd = sqrt(p(1 - p)) = 0.4899 (ppi-python's classical interval divides by n), half-width
    # 1.96 * 0.4899 / sqrt(10) = 0.3036
    assert (iv.estimate, iv.n) == (0.4, 10)
    assert iv.low == pytest.approx(0.4 - 0.3036, abs=1e-4) and iv.high == pytest.approx(0.4 + 0.3036, abs=1e-4)


def test_ppi_interval_is_the_power_tuned_formula():
    """PPI++ for a mean by hand (Angelopoulos, Duchi & Zrnic 2024, example 6.1): lambda = cov(Y, f) / ((1 + n/N)
    var(f)), estimate lambda mean(f_U) + mean(Y - lambda f_L), variance lambda^2 var(f_U)/N + var(Y - lambda f_L)/n."""
    rng = np.random.default_rng(5)
    N_all, n = 600, 80
    y_all = (rng.random(N_all) < 0.35).astype(float)
    f_all = np.clip(0.55 * y_all + rng.normal(0.2, 0.15, N_all), 0, 1)
    labelled = np.zeros(N_all, bool)
    labelled[:n] = True
    y = np.where(labelled, y_all, np.nan)
    Y, fL, fU = y_all[labelled], f_all[labelled], f_all[~labelled]
    N = len(fU)
    lam = np.cov(Y, fL, bias=True)[0, 1] / ((1 + n / N) * np.var(np.concatenate([fL, fU]), ddof=1))
    lam = min(max(lam, 0.0), 1.0)
    est = lam * fU.mean() + (Y - lam * fL).mean()
    half = norm.ppf(0.975) * np.sqrt(lam ** 2 * fU.var() / N + (Y - lam * fL).var() / n)
    iv = ppi_interval(y, f_all, labelled, 0.05)
    assert iv.estimate == pytest.approx(est, abs=1e-3)
    assert iv.low == pytest.approx(est - half, abs=2e-3) and iv.high == pytest.approx(est + half, abs=2e-3)


def test_paired_interval_is_the_two_sample_formula():
    nan = np.nan
    ya, fa = np.array([1, nan, 0, 1, 0, 1]), np.array([.8, .6, .2, .7, .1, .9])
    yb, fb = np.array([nan, 0, 0, 1, nan, 0]), np.array([.3, .1, .4, .9, .2, .3])
    e = paired_interval("a - b", ya, fa, yb, fb, 0.05)
    fd = fa - fb
    ra = np.array([1 - .8, 0 - .2, 1 - .7, 0 - .1, 1 - .9])
    rb = np.array([0 - .1, 0 - .4, 1 - .9, 0 - .3])
    est = fd.mean() + ra.mean() - rb.mean()
    half = 1.959964 * np.sqrt(fd.var(ddof=1) / 6 + ra.var(ddof=1) / 5 + rb.var(ddof=1) / 4)
    assert e.ppi.estimate == pytest.approx(est) and e.ppi.high == pytest.approx(est + half, rel=1e-5)
    assert e.labels_only.estimate == pytest.approx(3 / 5 - 1 / 4) and e.labelled == 9 and e.rows == 12


def test_coverage_on_a_population_with_a_known_rate():
    """80 studies of 100 random labels each (of 2,000 rows, two systems): the PPI interval covers each system's
    true rate and the true difference in >= 90% of them (nominal 95%), is narrower than the labels' own, and the
    metric-only interval, which ignores the metric's error, covers far less often."""
    pop = _population(11)
    truth = pop.groupby("system")["hallucinated"].mean()
    covered = {"a": 0, "b": 0, "a - b": 0, "metric_only": 0}
    ratio = []
    studies = 80
    for seed in range(studies):
        df = _labelled_at_random(pop, 100, seed)
        per = {e.group: e for e in estimate(df, "human", ["hallucination"], positive="Y", seed=seed)}
        for s in ("a", "b"):
            covered[s] += per[s].ppi.low <= truth[s] <= per[s].ppi.high
            ratio.append((per[s].ppi.high - per[s].ppi.low) / (per[s].labels_only.high - per[s].labels_only.low))
        covered["metric_only"] += per["a"].metric_only.low <= truth["a"] <= per["a"].metric_only.high
        d = paired_difference(df, "human", ["hallucination"], "a", "b", positive="Y", seed=seed)
        covered["a - b"] += d.ppi.low <= truth["a"] - truth["b"] <= d.ppi.high
    share = {k: v / studies for k, v in covered.items()}
    assert share["a"] >= 0.9 and share["b"] >= 0.9 and share["a - b"] >= 0.9, share
    assert share["metric_only"] < 0.8, share
    assert np.mean(ratio) < 0.8, np.mean(ratio)  # the metric buys at least a fifth of the interval's width


def test_a_useless_score_costs_no_width():
    """Power tuning: a score unrelated to the label leaves the interval about as wide as the labels' own."""
    rng = np.random.default_rng(3)
    df = _labelled_at_random(_population(4), 150, 0)
    df["noise"] = rng.random(len(df))
    ratios = [(e.ppi.high - e.ppi.low) / (e.labels_only.high - e.labels_only.low)
              for e in estimate(df, "human", ["noise"], positive="Y")]
    assert max(ratios) < 1.05, ratios


def test_refusals_say_what_is_wrong():
    df = _labelled_at_random(_population(2, n_rows=100), 15, 0)
    with pytest.raises(EstimateError, match=r"a: \d labelled rows; an interval needs at least 10"):
        estimate(df, "human", ["hallucination"], positive="Y")
    near = _labelled_at_random(_population(2, n_rows=100), 60, 0)
    near["selection"] = np.where(near["human"].notna(), "near the threshold 0.5", None)
    with pytest.raises(EstimateError, match="60 labelled rows were chosen near a threshold"):
        estimate(near, "human", ["hallucination"], positive="Y")
    with pytest.raises(EstimateError, match="no score column 'halucination'"):
        estimate(near.drop(columns="selection"), "human", ["halucination"], positive="Y")
    gaps = _labelled_at_random(_population(2, n_rows=100), 60, 0)
    gaps.loc[3, "hallucination"] = np.nan
    with pytest.raises(EstimateError, match="1 rows have no value for hallucination"):
        estimate(gaps, "human", ["hallucination"], positive="Y")


def test_a_numeric_label_is_estimated_as_a_mean():
    rng = np.random.default_rng(8)
    grade = rng.integers(1, 6, 400).astype(float)
    df = pd.DataFrame({"system": "a", "score": grade + rng.normal(0, 0.7, 400),
                       "grade": np.where(rng.random(400) < 0.2, grade, np.nan)})
    [e] = estimate(df, "grade", ["score"])
    assert e.ppi.low <= grade.mean() <= e.ppi.high and 1 < e.ppi.estimate < 5


def test_cli_prints_three_methods_and_writes_every_number(tmp_path, capsys):
    df = _labelled_at_random(_population(6, n_rows=150), 80, 1).drop(columns="hallucinated")
    df.to_csv(tmp_path / "study.csv", index=False)
    rc = main(["estimate", str(tmp_path / "study.csv"), "--target", "human", "--positive", "Y", "--using",
               "hallucination", "--a", "a", "--b", "b", "--json", str(tmp_path / "e.json")])
    out = capsys.readouterr().out
    assert rc == 0
    assert "estimate: rate of human = 'Y' (95% intervals; scores used: hallucination)" in out
    for group in ("a ", "b ", "a - b "):
        for method in ("ppi", "labels_only", "metric_only"):
            assert any(line.startswith(group) and method in line for line in out.splitlines()), (group, method)
    assert "of the labels-only width" in out and "ppi-python" in out
    saved = json.loads((tmp_path / "e.json").read_text())
    assert [e["group"] for e in saved["estimates"]] == ["a", "b", "a - b"]
    for e in saved["estimates"]:
        for method in ("ppi", "labels_only", "metric_only"):
            assert set(e[method]) == {"estimate", "low", "high", "n"}


@pytest.mark.parametrize("argv, message", [
    (["--a", "a"], "--a and --b go together"),
    (["--a", "a", "--b", "a"], "--a and --b name the same system 'a'"),
    (["--confidence", "95"], "argument --confidence: must be a level between 0.5 and 1"),
])
def test_cli_refuses_bad_options(tmp_path, capsys, argv, message):
    df = _labelled_at_random(_population(6, n_rows=60), 50, 1)
    df.to_csv(tmp_path / "s.csv", index=False)
    with pytest.raises(SystemExit) if "argument" in message else _no_raise():
        rc = main(["estimate", str(tmp_path / "s.csv"), "--target", "human", "--positive", "Y", "--using",
                   "hallucination", *argv])
        assert rc == 2
    assert message in capsys.readouterr().err


class _no_raise:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_the_plan_delivers_the_width_it_promises():
    """A pilot of 200 random labels (a small pilot's correlation is itself noisy: 40 labels planned 50 to 128 on
    four seeds) plans the labels for a 0.12-wide interval; studies of that many random labels (30 seeds) then get
    intervals 0.12 wide on average (within 15%), and the labels-only plan asks for more."""
    from evalkit.decide.calibrate.estimate import plan

    pop = _population(21, n_rows=1500)
    a = pop[pop["system"] == "a"].reset_index(drop=True)
    [p] = plan(_labelled_at_random(a, 200, 0), "human", ["hallucination"], 0.12, positive="Y")
    assert p.pilot == 200 and p.rows == 1500 and p.labels_ppi is not None and p.labels_ppi < p.labels_only
    widths = [e.ppi.high - e.ppi.low for seed in range(30)
              for e in estimate(_labelled_at_random(a, p.labels_ppi, 100 + seed), "human", ["hallucination"],
                                positive="Y", seed=seed)]
    assert np.mean(widths) == pytest.approx(0.12, rel=0.15), np.mean(widths)


def test_cli_plan_prints_labels_needed(tmp_path, capsys):
    df = _labelled_at_random(_population(6, n_rows=300), 60, 1)
    df.to_csv(tmp_path / "s.csv", index=False)
    rc = main(["estimate", str(tmp_path / "s.csv"), "--target", "human", "--positive", "Y", "--using",
               "hallucination", "--plan", "0.15", "--json", str(tmp_path / "p.json")])
    out = capsys.readouterr().out
    assert rc == 0 and "labels needed for a 95% interval 0.15 wide" in out
    saved = json.loads((tmp_path / "p.json").read_text())["plans"]
    assert [p["group"] for p in saved] == ["a", "b"]
    assert all(p["labels_ppi"] < p["labels_only"] for p in saved)


def test_a_group_short_of_labels_is_named_and_the_others_are_estimated(caplog):
    df = _labelled_at_random(_population(6, n_rows=200), 60, 1)
    df.loc[(df["system"] == "b") & df["human"].notna(), "human"] = None  # b keeps no label at all
    found = estimate(df, "human", ["hallucination"], positive="Y")
    assert [e.group for e in found] == ["a"]
    assert "no estimate for b: 0 labelled rows; an interval needs at least 10" in caplog.text


def test_a_text_column_is_not_a_score():
    df = _labelled_at_random(_population(6, n_rows=100), 60, 1).assign(answer="The fee is 40 euros.")
    with pytest.raises(EstimateError, match="column 'answer' is not a score: 200 of its values are not numbers"):
        estimate(df, "human", ["answer"], positive="Y")


def test_plan_refuses_a_width_a_rate_cannot_have_and_the_paired_difference(tmp_path, capsys):
    from evalkit.decide.calibrate.estimate import plan

    df = _labelled_at_random(_population(6, n_rows=300), 60, 1)
    with pytest.raises(EstimateError, match="a rate lies in 0..1: an interval 20 wide says nothing"):
        plan(df, "human", ["hallucination"], 20, positive="Y")
    df.to_csv(tmp_path / "s.csv", index=False)
    assert main(["estimate", str(tmp_path / "s.csv"), "--target", "human", "--positive", "Y", "--using",
                 "hallucination", "--plan", "0.2", "--a", "a", "--b", "b"]) == 2
    assert "--plan plans each system's labels; it does not plan the paired difference" in capsys.readouterr().err


def test_labels_that_all_agree_get_the_wilson_interval_not_a_point(tmp_path, capsys):
    """17 labels, all positive: the normal intervals collapse to [1, 1]; the Wilson interval by hand is
    (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n) = [0.816, 1.000]."""
    df = _labelled_at_random(_population(6, n_rows=100), 80, 1)
    a = (df["system"] == "a").to_numpy()
    labelled_a = np.flatnonzero(a & df["human"].notna().to_numpy())
    df.loc[a, "human"] = None
    df.loc[labelled_a[:17], "human"] = "Y"
    df.to_csv(tmp_path / "s.csv", index=False)
    assert main(["estimate", str(tmp_path / "s.csv"), "--target", "human", "--positive", "Y", "--using",
                 "hallucination"]) == 0
    out = capsys.readouterr().out
    assert "every labelled row has the same label" in out and "Wilson 95% interval is [0.816, 1.000]" in out


def test_a_random_sample_without_the_positive_class_is_an_estimate_not_an_error():
    df = _labelled_at_random(_population(6, n_rows=200), 40, 1)
    df.loc[df["human"] == "Y", "human"] = None  # the sample happened to draw no bad answer
    found = estimate(df, "human", ["hallucination"], positive="Y")
    assert all(e.labels_only.estimate == 0.0 for e in found)
    # every fold saw one class, so the prediction is constant: PPI is the labels' own, not 0 / 0
    assert all((e.ppi.estimate, e.ppi.low, e.ppi.high) == (0.0, 0.0, 0.0) for e in found)
