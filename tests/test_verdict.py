import pytest
import yaml

from evalkit.config import Thresholds
from evalkit.verdict import thresholds_from_profile, verdict


@pytest.mark.parametrize("h,r,c,expected", [
    (0.6, 0.05, 0.1, "FAIL"),     # hallucination wins over everything
    (0.5, 0.05, 0.9, "FAIL"),     # 0.5 is not > 0.5: relevance rule fires
    (0.5, 0.1, 0.59, "WARN"),     # 0.1 is not < 0.1
    (0.0, 0.9, 0.6, "PASS"),      # 0.6 is not < 0.6
    (0.51, 0.9, 1.0, "FAIL"),
])
def test_precedence_and_edges(h, r, c, expected):
    assert verdict(h, r, c)[0] == expected


def test_rule_that_fired_is_named():
    assert verdict(0.0, 0.05, 0.1)[1] == "relevance 0.050 < 0.1"


def test_missing_input_is_undetermined_not_compared():
    assert verdict(None, 0.9, 0.9) == ("UNDETERMINED", "hallucination missing")
    assert verdict(0.0, float("nan"), 0.9) == ("UNDETERMINED", "relevance missing")
    assert verdict(0.9, None, None)[0] == "FAIL"  # an earlier rule can still decide


def test_seed_threshold_variant():
    assert verdict(0.55, 0.9, 0.9)[0] == "FAIL"
    assert verdict(0.55, 0.9, 0.9, Thresholds(hallucination_fail=0.6))[0] == "PASS"


def test_profile_round_trips_into_thresholds(tmp_path):
    p = tmp_path / "profile.yaml"
    p.write_text(yaml.safe_dump({"metrics": {"hallucination": {"threshold": 0.33, "direction": "lower"}}}))
    t = thresholds_from_profile(str(p))
    assert t == Thresholds(hallucination_fail=0.33)
    assert verdict(0.4, 0.9, 0.9, t)[0] == "FAIL" and verdict(0.3, 0.9, 0.9, t)[0] == "PASS"
