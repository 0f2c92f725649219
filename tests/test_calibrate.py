import json

import pandas as pd
import yaml
import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from evalkit.decide.calibrate import (CalibrationError, calibrate, cohen_kappa, krippendorff_alpha, pr_auc,
                               profile_entry, rank_correlation, roc_auc, select_threshold, write_profile)
from evalkit.base.config import VerdictThresholds
from evalkit.decide.profiles import thresholds_from_profile
from evalkit.decide.verdict import verdict

# scores 10..1 with one negative at 6: precision/recall at each threshold are known by hand
S = np.array([10, 9, 8, 7, 6, 5, 4, 3, 2, 1], dtype=float)
Y = np.array([1, 1, 1, 1, 0, 1, 0, 0, 0, 0])
SEP_S = np.array([0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9])
SEP_Y = np.array([0, 0, 0, 0, 1, 1, 1, 1])


def _random(n=400, seed=1):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return y * 0.6 + rng.normal(0, 0.5, n), y


def test_auc_equals_sklearn():
    s, y = _random()
    assert roc_auc(s, y, n_resamples=10).estimate == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert pr_auc(s, y, n_resamples=10).estimate == pytest.approx(average_precision_score(y, s), abs=1e-12)
    assert roc_auc(-s, y, "lower", n_resamples=10).estimate == pytest.approx(roc_auc_score(y, s), abs=1e-12)


def test_bootstrap_identical_for_same_seed_and_different_otherwise():
    s, y = _random()
    a = calibrate(s, y, n_resamples=200, seed=7)
    b = calibrate(s, y, n_resamples=200, seed=7)
    c = calibrate(s, y, n_resamples=200, seed=8)
    assert json.dumps(a.to_dict(samples=True)) == json.dumps(b.to_dict(samples=True))
    assert a.roc_auc != c.roc_auc
    assert a.roc_auc.low < a.roc_auc.estimate < a.roc_auc.high


@pytest.mark.parametrize("criterion,expected", [
    ("youden", 7.0), ("f1", 5.0), ("precision>=0.9", 7.0), ("precision>=0.8", 5.0),
    ("recall>=1.0", 5.0), ("recall>=0.8", 7.0), ("cost:fp=1,fn=10", 5.0), ("cost:fp=10,fn=1", 7.0),
])
def test_criteria_known_by_construction(criterion, expected):
    # t=7: TP4 FP0 -> P 1.0, R 0.8, FPR 0.0, J 0.8, F1 0.889
    # t=5: TP5 FP1 -> P 0.833, R 1.0, FPR 0.2, J 0.8, F1 0.909
    # Youden ties at 0.8 and keeps the strictest threshold (7); F1 prefers 5
    assert select_threshold(S, Y, criterion) == expected
    assert select_threshold(-S, Y, criterion, direction="lower") == -expected


@pytest.mark.parametrize("criterion", ["youden", "f1", "precision>=1.0", "recall>=1.0", "cost"])
def test_separable_data_threshold_is_the_gap(criterion):
    assert select_threshold(SEP_S, SEP_Y, criterion) == 0.6


def test_unreachable_and_bad_criteria():
    with pytest.raises(CalibrationError, match="no threshold reaches precision"):
        select_threshold(np.array([1.0, 1.0]), np.array([0, 1]), "precision>=0.9")
    with pytest.raises(CalibrationError, match="unknown criterion"):
        select_threshold(S, Y, "accuracy")


def test_operating_point_and_threshold_stability():
    r = calibrate(S, Y, criterion="f1", n_resamples=300, seed=0)
    op = r.at_threshold
    assert (op.tp.estimate, op.fp.estimate, op.tn.estimate, op.fn.estimate) == (5, 1, 4, 0)
    assert op.precision.estimate == pytest.approx(5 / 6) and op.recall.estimate == 1.0
    assert len(r.threshold_samples) > 200 and r.threshold_ci.low <= r.threshold <= r.threshold_ci.high


def test_input_validation():
    with pytest.raises(CalibrationError, match="single class"):
        calibrate([0.1, 0.2], [1, 1])
    with pytest.raises(CalibrationError, match="row 1 has 'maybe'"):
        calibrate([0.1, 0.2], [1, "maybe"])
    with pytest.raises(CalibrationError, match="score is missing at row 0"):
        calibrate([None, 0.2], [1, 0])


def test_split_protocols():
    s, y = _random(400)
    seeded = calibrate(s, y, split="seeded", n_resamples=50, seed=3)
    assert "seeded split" in seeded.protocol and seeded.reported_on == "200 held-out rows"
    col = ["calibration"] * 200 + ["test"] * 200
    by_col = calibrate(s, y, split=col, n_resamples=50)
    assert by_col.protocol == "split column" and by_col.at_threshold.tp.estimate + by_col.at_threshold.fn.estimate == y[200:].sum()
    same = calibrate(s, y, n_resamples=50)
    assert "optimistic" in same.protocol


def test_subgroups_flag_small_groups():
    s, y = _random(200)
    g = ["big"] * 190 + ["tiny"] * 10
    r = calibrate(s, y, n_resamples=50, subgroups={"kind": g})
    by = {e["group"]: e for e in r.subgroups}
    assert by["big"]["small"] is False and by["tiny"]["small"] is True and "small group" in by["tiny"]["note"]


def test_grouped_bootstrap_runs_and_differs():
    s, y = _random(200)
    groups = np.repeat(np.arange(20), 10)
    a = roc_auc(s, y, n_resamples=200, seed=0, groups=groups)
    b = roc_auc(s, y, n_resamples=200, seed=0)
    assert a.estimate == b.estimate and (a.low, a.high) != (b.low, b.high)


def test_rank_correlation_kappa_alpha():
    x = np.arange(30, dtype=float)
    rc = rank_correlation(x, x ** 2, n_resamples=100)
    assert rc["spearman"].estimate == pytest.approx(1.0) and rc["kendall"].estimate == pytest.approx(1.0)
    k = cohen_kappa([1, 1, 0, 0, 1, 0], [1, 1, 0, 0, 1, 0], n_resamples=50)
    assert k.estimate == pytest.approx(1.0)
    assert cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1], n_resamples=20).estimate == pytest.approx(-1.0)
    # two raters agreeing perfectly on nominal data -> alpha 1; one disagreement lowers it
    assert krippendorff_alpha([[1, 2, 3, 1], [1, 2, 3, 1]]) == pytest.approx(1.0)
    assert krippendorff_alpha([[1, 2, 3, 1], [1, 2, 3, 2]]) < 1.0


def test_profile_round_trips_into_verdict(tmp_path):
    r = calibrate(SEP_S, SEP_Y, criterion="youden", n_resamples=50, min_per_class=4)
    p = tmp_path / "profile.yaml"
    write_profile(p, {"hallucination": profile_entry(r, "hallucination", "hallucinated")}, dataset_sha256="ab" * 32,
                  date="2026-01-01")
    t = thresholds_from_profile(str(p), VerdictThresholds(named="seed"))  # the seed's rule on hallucination
    assert t.hallucination_fail == 0.6 and [str(r) for r in t.profile] == ["hallucination >= 0.6"]
    assert verdict(0.6, 0.9, 0.9, t)[0] == "FAIL" and verdict(0.55, 0.9, 0.9, t)[0] == "PASS"
    import yaml

    doc = yaml.safe_load(p.read_text())
    assert doc["calibrated_on"] == {"file": None, "sha256": "ab" * 32} and doc["date"] == "2026-01-01"
    entry = doc["metrics"]["hallucination"]
    assert {"threshold", "flag", "inclusive", "direction", "criterion", "threshold_ci", "roc_auc"} <= set(entry)
    assert (entry["flag"], entry["inclusive"]) == ("above", True)


# seven rows, scores rising; N (unfaithful) at 0.4, 0.7, 0.8. With N positive, positive-over-negative pairs by
# hand: 0.4 beats 3 of the 4 Y rows, 0.7 and 0.8 beat all 4 -> AUC 11/12; with Y positive the ranking flips: 1/12.
# Youden with N positive: t=0.4 gives TPR 3/3, FPR 1/4 -> J 0.75, the best (t=0.7: 2/3 - 0 = 0.667).
POL_S = [0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8]
POL_Y = ["Y", "Y", "Y", "N", "Y", "N", "N"]
POL_LIKERT = [5, 4, 3, 2, 4, 1, 2]           # by hand: <= 2 exactly where POL_Y is N
POL_BAD = [0, 0, 0, 1, 0, 1, 1]


def test_positive_as_comparison_for_ordinal_labels():
    from evalkit.decide.calibrate import binary_labels, parse_positive

    assert binary_labels([1, 2, 3, 4, 5, None], positive="<=2") == [True, True, False, False, False, None]
    assert binary_labels([1, 2, 3, 4, 5], positive="<3") == [True, True, False, False, False]
    assert binary_labels([1.0, 4.0, 5.0], positive=">=4") == [False, True, True]
    assert binary_labels(["1", "2", "1"], positive="==1") == [True, False, True]
    assert binary_labels([0.0, 1.0], positive="1") == [False, True]  # a value matches numerically, too
    assert str(parse_positive(" <= 2 ")) == "<= 2" and parse_positive("Y").op is None
    with pytest.raises(CalibrationError, match=r"row 2 has 'x': the comparison --positive '<= 2' needs numeric"):
        binary_labels([1, "x"], positive="<=2", column="likert")
    with pytest.raises(CalibrationError, match="no row has a value < 1"):
        binary_labels([1, 2, 3], positive="<1")
    with pytest.raises(CalibrationError, match=r"5 classes .*--positive '<3' where low scores are bad"):
        binary_labels([1, 2, 3, 4, 5], positive="1", column="likert")


def test_likert_comparison_equals_hand_mapped_binary():
    import pandas as pd

    from evalkit.decide.calibrate import calibrate_frame

    df = pd.DataFrame({"s": POL_S, "likert": POL_LIKERT, "bad": POL_BAD})
    lik = calibrate_frame(df, "s", "likert", positive="<=2", n_resamples=100, min_per_class=3)
    hand = calibrate_frame(df, "s", "bad", n_resamples=100, min_per_class=3)
    assert json.dumps(lik.result.to_dict(samples=True)) == json.dumps(hand.result.to_dict(samples=True))
    assert lik.result.roc_auc.estimate == pytest.approx(roc_auc_score(POL_BAD, POL_S)) == pytest.approx(11 / 12)
    assert lik.result.threshold == 0.4 and lik.flagged_class == "likert <= 2"
    assert lik.warnings() == [] and lik.useless_rule() is None


def test_wrong_positive_class_warns_first_and_the_rule_flags_everything():
    import pandas as pd

    from evalkit.decide.calibrate import calibrate_frame

    tc = calibrate_frame(pd.DataFrame({"s": POL_S, "faithful": POL_Y}), "s", "faithful", positive="Y",
                         n_resamples=50, min_per_class=3)
    assert tc.result.roc_auc.estimate == pytest.approx(1 / 12)
    lines = tc.summary_lines()
    assert lines[0].startswith("warning: the score ranks your positive class lower (ROC AUC 0.083): is --positive "
                               "the bad-answer class? (flagged = positive, here faithful == 'Y'")
    # every J = TPR - FPR is negative except at the loosest threshold (0.1), which flags all 7 rows
    assert tc.result.threshold == 0.1 and (tc.result.choice_flagged, tc.result.choice_rows) == (7, 7)
    assert tc.useless_rule() == "the threshold s >= 0.1 flags all of the 7 rows it was chosen on"


# ---------------------------------------------------------------------------------------------------------
# the direction comes from the registry (issue 38): support is higher-is-better, so a low support flags
def _support_table(tmp_path):
    # faithful answers have high support; the 4 unfaithful ones low: by hand, the flagged side is "support <= t"
    df = pd.DataFrame({"id": [f"r{i}" for i in range(12)],
                       "support": [0.95, 0.9, 0.88, 0.85, 0.8, 0.92, 0.97, 0.83, 0.1, 0.2, 0.3, 0.15],
                       "faithful": ["Y"] * 8 + ["N"] * 4})
    path = tmp_path / "r.csv"
    df.to_csv(path, index=False)
    return df, path


def test_calibrate_frame_reads_the_metrics_direction(tmp_path):
    from evalkit.decide.calibrate import calibrate_frame, flagged_direction

    df, _ = _support_table(tmp_path)
    assert (flagged_direction("support"), flagged_direction("hallucination"), flagged_direction("s")) == \
        ("lower", "higher", None)
    tc = calibrate_frame(df, "support", "faithful", positive="N", n_resamples=20, min_per_class=4)
    # flagged low: the four N rows (0.1..0.3) are separated from the eight Y rows (>= 0.8): AUC 1, threshold 0.3
    assert (tc.result.direction, tc.result.roc_auc.estimate, tc.result.threshold) == ("lower", 1.0, 0.3)
    assert calibrate_frame(df, "support", "faithful", positive="N", direction="higher",
                           n_resamples=20, min_per_class=4).result.roc_auc.estimate == 0.0  # what the old default gave


def test_calibrate_refuses_a_profile_that_flags_the_better_side(tmp_path, capsys):
    from evalkit.cli import main

    _, path = _support_table(tmp_path)
    out = tmp_path / "p.yaml"
    assert main(["calibrate", str(path), "--score", "support", "--label", "faithful", "--positive", "N",
                 "--direction", "higher", "-o", str(out), "--resamples", "20", "--min-per-class", "4"]) == 2
    assert "--direction higher flags the better side of support (higher is better" in capsys.readouterr().err
    assert not out.exists()
    assert main(["calibrate", str(path), "--score", "support", "--label", "faithful", "--positive", "N",
                 "-o", str(out), "--resamples", "20", "--min-per-class", "4"]) == 0
    entry = yaml.safe_load(out.read_text())["metrics"]["support"]
    assert (entry["flag"], entry["threshold"]) == ("below", 0.3)


@pytest.mark.parametrize("n_pos,refused", [(4, True), (5, False)])
def test_fewer_than_five_labels_of_a_class_are_refused(n_pos, refused, tmp_path, capsys):
    """At the boundary: 4 positive labels among 20 are refused with the counts and what to do; 5 are calibrated
    (3 labels once printed `AUC 0.000 [0.000, 0.000]` as if it were a finding)."""
    from evalkit.cli import main

    path = tmp_path / "few.csv"
    pd.DataFrame({"s": [i / 20 for i in range(20)], "bad": [1] * n_pos + [0] * (20 - n_pos)}).to_csv(path, index=False)
    rc = main(["calibrate", str(path), "--score", "s", "--label", "bad", "--resamples", "20"])
    err = capsys.readouterr().err
    if refused:
        assert rc == 2 and (f"labels have {n_pos} positive and {20 - n_pos} negative rows: a threshold and its "
                            "intervals need at least 5 of each class") in err
    else:
        assert rc == 0 and "need at least" not in err
