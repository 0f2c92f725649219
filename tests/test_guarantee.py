"""#39 item 3: thresholds with a guarantee (Learn-then-Test through MAPIE). The guarantee is checked the only way
it can be: on a population whose true precision (or false-PASS rate) at every threshold is known, the chosen
threshold meets the target in at least 1 - delta of the calibration draws."""
import re

import numpy as np
import pandas as pd
import pytest
import yaml

from evalkit.decide.calibrate import CalibrationError
from evalkit.decide.calibrate.guarantee import guaranteed_threshold, parse_guarantee
from evalkit.cli import main


def _population(n=20000, seed=0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(int)
    return np.clip(0.45 * y + rng.normal(0.25, 0.2, n), 0, 1), y


# precision is asked of the flagged rows only (about a quarter): at 400 calibration rows 45 of 60 draws find no
# threshold that passes the test (Learn-then-Test is conservative), at 1,500 every draw finds one
@pytest.mark.parametrize("guarantee, realised, meets, size", [
    ("precision>=0.85", lambda s, y, t: y[s >= t].mean(), lambda v: v >= 0.85, 1500),
    ("false_pass<=0.1", lambda s, y, t: y[s < t].mean(), lambda v: v <= 0.1, 400),
])
def test_the_guarantee_holds_in_at_least_one_minus_delta_of_draws(guarantee, realised, meets, size):
    s, y = _population()
    draws, delta, held = 60, 0.1, 0
    for seed in range(draws):
        idx = np.random.default_rng(100 + seed).choice(len(y), size, replace=False)
        try:
            t = guaranteed_threshold(s[idx], y[idx], guarantee, delta=delta).threshold
        except CalibrationError:  # no threshold passed the test: nothing is claimed, so nothing is broken
            held += 1
            continue
        held += meets(realised(s, y, t))  # the population's own value at t: what future rows will see
    assert held / draws >= 1 - delta, held / draws


def test_a_lower_flagging_score_is_turned_the_right_way():
    s, y = _population(n=3000, seed=1)
    support = 1 - s  # a low support flags
    up = guaranteed_threshold(s, y, "precision>=0.85").threshold
    down = guaranteed_threshold(support, y, "precision>=0.85", direction="lower").threshold
    assert down == pytest.approx(1 - up)
    assert y[support <= down].mean() >= 0.85


def test_none_meets_it_says_so():
    s, y = _population(n=60, seed=2)
    with pytest.raises(CalibrationError, match=r"no threshold meets false_pass <= 0.01 with probability >= 0.9 on "
                                                r"these 60 rows"):
        guaranteed_threshold(s, y, "false_pass<=0.01")


@pytest.mark.parametrize("text, message", [
    ("precision<=0.9", "precision takes >= \\(a floor\\)"),
    ("fpr>=0.1", "fpr takes <= \\(a ceiling\\)"),
    ("accuracy>=0.9", "use precision>=X, recall>=X, fpr<=X or false_pass<=X"),
    ("recall>=1.5", "the level must be between 0 and 1"),
])
def test_malformed_guarantees_are_refused(text, message):
    with pytest.raises(CalibrationError, match=message):
        parse_guarantee(text)


def test_cli_writes_the_guarantee_into_the_profile_and_the_verdict_reads_it(tmp_path, capsys):
    s, y = _population(n=800, seed=3)
    pd.DataFrame({"hallucination": s, "relevance": 0.5, "completeness": 1.0,  # the seed triad the verdict reads
                  "hallucinated": np.where(y == 1, "Y", "N")}).to_csv(tmp_path / "c.csv", index=False)
    rc = main(["calibrate", str(tmp_path / "c.csv"), "--score", "hallucination", "--label", "hallucinated",
               "--positive", "Y", "--guarantee", "precision>=0.85", "--delta", "0.1", "--split", "seeded",
               "-o", str(tmp_path / "p.yaml")])
    out = capsys.readouterr().out
    assert rc == 0
    assert "chosen so that precision >= 0.85 with probability >= 0.9 (Learn-then-Test, MAPIE" in out
    assert "exchangeable" in out
    # the guaranteed measure as it came out on the held-out half, counted from its confusion matrix
    assert re.search(r"on 400 held-out rows: precision 0\.\d{3} \((\d+) of (\d+) flagged answers are bad; "
                     r"guaranteed >= 0.85\)", out), out
    entry = yaml.safe_load((tmp_path / "p.yaml").read_text())["metrics"]["hallucination"]
    assert "threshold_ci" not in entry  # a guaranteed threshold carries its guarantee, not a bootstrap interval
    assert entry["guarantee"]["measure"] == "precision" and entry["guarantee"]["delta"] == 0.1
    assert entry["guarantee"]["assumption"] == "calibration rows and future rows are exchangeable"
    assert main(["verdict", str(tmp_path / "c.csv"), "--thresholds", str(tmp_path / "p.yaml"), "-o",
                 str(tmp_path / "v.csv")]) == 0


def test_cli_exits_2_when_no_threshold_meets_it(tmp_path, capsys):
    s, y = _population(n=50, seed=4)
    pd.DataFrame({"hallucination": s, "hallucinated": y}).to_csv(tmp_path / "c.csv", index=False)
    rc = main(["calibrate", str(tmp_path / "c.csv"), "--score", "hallucination", "--label", "hallucinated",
               "--guarantee", "false_pass<=0.01"])
    assert rc == 2
    assert "no threshold meets false_pass <= 0.01" in capsys.readouterr().err


def test_cli_refuses_a_criterion_beside_a_guarantee(tmp_path, capsys):
    s, y = _population(n=200, seed=5)
    pd.DataFrame({"hallucination": s, "hallucinated": y}).to_csv(tmp_path / "c.csv", index=False)
    rc = main(["calibrate", str(tmp_path / "c.csv"), "--score", "hallucination", "--label", "hallucinated",
               "--guarantee", "false_pass<=0.2", "--criterion", "f1"])
    assert rc == 2
    assert "--criterion and --guarantee each choose the threshold: give one of them" in capsys.readouterr().err
