import pandas as pd
import pytest
import yaml

from evalkit.base.config import VerdictThresholds
from evalkit.decide.profiles import ProfileError, thresholds_from_profile
from evalkit.decide.verdict import apply_verdicts, rules_for, verdict

SEED = VerdictThresholds(named="seed")  # the seed's triad rules, exact; the default profile is evalkit


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
    assert verdict(0.55, 0.9, 0.9, VerdictThresholds(named="seed", hallucination_fail=0.6))[0] == "PASS"


def test_profile_direction_is_respected(tmp_path):
    # calibrated against "hallucinated" with direction lower: a LOW relevance points at a hallucination,
    # so the rule flags relevance <= 0.33 (inclusive, as calibration counted it)
    p = tmp_path / "profile.yaml"
    p.write_text(yaml.safe_dump({"metrics": {"relevance": {"threshold": 0.33, "direction": "lower"}}}))
    t = thresholds_from_profile(str(p), SEED)
    assert t.relevance_fail == 0.33 and t.hallucination_fail == 0.5
    assert verdict(0.0, 0.33, 0.9, t) == ("FAIL", "relevance 0.330 <= 0.33")
    assert verdict(0.0, 0.34, 0.9, t) == ("PASS", "all checks passed")


def test_default_rules_are_the_seeds_strict_ones():
    assert [str(r) for r in rules_for(SEED)] == ["hallucination > 0.5", "relevance < 0.1", "completeness < 0.6"]


def test_abstention_is_its_own_outcome():
    assert verdict(1.0, 0.0, 0.0, abstained=True) == ("ABSTAIN", "the answer declines to answer")
    df = pd.DataFrame({"answer": ["I don't know; the documents do not mention a speed limit.",
                                  "The discount is not available in Territory 118; the premium is $604."],
                       "hallucination": [0.0, 0.0], "relevance": [0.5, 0.5], "completeness": [1.0, 1.0]})
    assert apply_verdicts(df, SEED)[0]["verdict"].tolist() == ["ABSTAIN", "PASS"]


def test_profile_for_any_metric_with_a_direction(tmp_path):
    p = tmp_path / "profile.yaml"
    p.write_text(yaml.safe_dump({"metrics": {"grounding_risk": {"threshold": 0.4, "flag": "above",
                                                                "inclusive": True}}}))
    t = thresholds_from_profile(p, SEED)
    assert [str(r) for r in rules_for(t)] == ["hallucination > 0.5", "grounding_risk >= 0.4", "relevance < 0.1",
                                              "completeness < 0.6"]
    df = pd.DataFrame({"hallucination": [0.0, 0.0, 0.0], "grounding_risk": [0.39, 0.4, None], "relevance": [0.9] * 3,
                       "completeness": [1.0] * 3})
    out, notes = apply_verdicts(df, t)
    assert out["verdict"].tolist() == ["PASS", "FAIL", "UNDETERMINED"] and notes == []
    assert out["verdict_rule"].tolist() == ["all checks passed", "grounding_risk 0.400 >= 0.4",
                                            "grounding_risk missing"]
    # the same profile on results without a grounding_risk column: said, not silently dropped
    out, notes = apply_verdicts(df.drop(columns=["grounding_risk"]), t)
    assert out["verdict"].tolist() == ["PASS"] * 3 and "names 'grounding_risk'" in notes[0]


def test_profile_errors_name_the_problem(tmp_path):
    p = tmp_path / "profile.yaml"
    p.write_text(yaml.safe_dump({"metrics": {"answer_class": {"threshold": 0.4}}}))
    with pytest.raises(ProfileError, match="'answer_class', which is not a registered metric with a direction"):
        thresholds_from_profile(p)
    p.write_text(yaml.safe_dump({"metrics": {"grounding_risk": {"threshold": "high"}}}))
    with pytest.raises(ProfileError, match=r"profile.yaml: metrics.grounding_risk.threshold: must be a finite number"):
        thresholds_from_profile(p)
    with pytest.raises(ProfileError, match="no such threshold profile"):
        thresholds_from_profile(tmp_path / "nope.yaml")
    with pytest.raises(ProfileError, match="the verdict needs the columns completeness"):
        apply_verdicts(pd.DataFrame({"hallucination": [0.1], "relevance": [0.5]}), SEED)


# Scores on and around the threshold, labels chosen so that youden picks 0.5 (by hand: at 0.5 TPR 5/5 and
# FPR 1/5, J = 0.8; at 0.8 J = 0.4; at 0.3 J = 0.6). Four rows sit exactly on it.
EDGE_S = [0.0, 0.1, 0.2, 0.3, 0.5, 0.5, 0.5, 0.5, 0.8, 0.9]
EDGE_Y = [False, False, False, False, True, True, True, False, True, True]


def test_profile_reproduces_calibrations_confusion_matrix_on_the_threshold(tmp_path):
    from evalkit.decide.calibrate import calibrate_frame, profile_entry, write_profile
    from evalkit.cli import main

    df = pd.DataFrame({"id": [f"r{i}" for i in range(10)], "answer": ["An answer."] * 10, "hallucination": EDGE_S,
                       "relevance": [0.9] * 10, "completeness": [1.0] * 10, "hallucinated": EDGE_Y})
    tc = calibrate_frame(df, "hallucination", "hallucinated", n_resamples=50)
    assert tc.result.threshold == 0.5
    at = {k: getattr(tc.result.at_threshold, k).estimate for k in ("tp", "fp", "tn", "fn")}
    assert at == {"tp": 5, "fp": 1, "tn": 4, "fn": 0}  # every row at 0.5 counted as flagged
    prof = tmp_path / "profile.yaml"
    write_profile(prof, {"hallucination": profile_entry(tc.result, "hallucination", "hallucinated")},
                  dataset_sha256=None)
    res = tmp_path / "results.parquet"
    df.to_parquet(res)
    assert main(["verdict", str(res), "--thresholds", str(prof), "--profile", "seed",
                 "-o", str(tmp_path / "v.parquet")]) == 0
    v = pd.read_parquet(tmp_path / "v.parquet")
    failed, truth = v["verdict"].eq("FAIL"), v["hallucinated"]
    assert {"tp": int((failed & truth).sum()), "fp": int((failed & ~truth).sum()),
            "tn": int((~failed & ~truth).sum()), "fn": int((~failed & truth).sum())} == at
    assert v.loc[4, "verdict_rule"] == "hallucination 0.500 >= 0.5"
    # without the profile the seed's strict rule leaves all four rows at 0.5 passing
    assert apply_verdicts(df, SEED)[0]["verdict"].eq("FAIL").sum() == 2


def test_unrounded_threshold_round_trips(tmp_path):
    from evalkit.decide.calibrate import calibrate, profile_entry, write_profile

    s = [1 / 3, 1 / 3, 0.1, 0.9, 0.05, 0.2]
    y = [True, True, False, True, False, False]
    r = calibrate(s, y, criterion="youden", n_resamples=20, min_per_class=3)  # six rows: a worked example
    assert r.threshold == 1 / 3
    p = tmp_path / "p.yaml"
    write_profile(p, {"hallucination": profile_entry(r, "hallucination", "h")}, dataset_sha256=None)
    rule = thresholds_from_profile(p).profile[0]
    assert rule.value == 1 / 3 and rule.flags(1 / 3)


@pytest.mark.parametrize("text,message", [
    # a quoted "false" is a string: read as true by bool(), it would flip the rule at the boundary
    ("metrics:\n  hallucination: {threshold: 0.5, flag: above, inclusive: 'false'}\n",
     r"metrics.hallucination.inclusive: must be true or false"),
    ("metrics:\n  hallucination: {threshold: 5.0, flag: above}\n",
     r"metrics.hallucination.threshold: 5.0 is outside hallucination's scale 0..1"),
    ("metrics:\n  hallucination: {threshold: -1, flag: above}\n", r"-1 is outside hallucination's scale 0..1"),
    ("metrics:\n  hallucination: {threshold: 0.5, flag: above, direction: lower}\n",
     r"direction 'lower' contradicts flag 'above'"),
    ("evalkit_profile: 7\nmetrics:\n  hallucination: {threshold: 0.5}\n", r"evalkit_profile: unknown version 7"),
    ("metrics:\n  hallucination: {threshold: 0.5}\n  hallucination: {threshold: 0.9}\n",
     r"duplicate key 'hallucination' \(first at line 2, again at line 3\)"),
])
def test_hand_edited_profiles_are_checked_key_by_key(tmp_path, text, message):
    p = tmp_path / "profile.yaml"
    p.write_text(text)
    with pytest.raises(ProfileError, match=message) as e:
        thresholds_from_profile(p)
    assert str(p) in str(e.value)


def test_profile_on_the_scale_boundary_is_accepted(tmp_path):
    """0 and 1 are on hallucination's 0..1 scale: accepted exactly, with the inclusive flag kept as written."""
    p = tmp_path / "profile.yaml"
    p.write_text("evalkit_profile: 2\nmetrics:\n  hallucination: {threshold: 1, flag: above, inclusive: false}\n")
    rule = thresholds_from_profile(p).profile[0]
    assert (rule.value, rule.flag, rule.inclusive) == (1, "above", False)


def test_the_row_decision_comes_before_every_metric_rule():
    """Issue 25: an empty answer FAILs, a non-English one is UNDETERMINED, whatever the triad says."""
    assert verdict(0.0, 1.0, 1.0, empty=True) == ("FAIL", "empty answer")
    assert verdict(0.0, 1.0, 1.0, language="zh") == ("UNDETERMINED", "not English (detected: zh)")
    assert verdict(0.0, 1.0, 1.0, language="en") == ("PASS", "all checks passed")
    assert verdict(0.9, 0.0, 0.0, abstained=True, language=None) == ("ABSTAIN", "the answer declines to answer")


def test_apply_verdicts_reads_the_stored_decision_not_the_answer():
    triad = {"hallucination": [0.0] * 3, "relevance": [0.9] * 3, "completeness": [1.0] * 3}
    stored = pd.DataFrame({**triad, "answer": ["I don't know.", "x", "y"],  # the answer text is not re-read
                           "answer_empty": [True, False, False], "abstained": [False, True, False],
                           "abstained_reason": [None, "declines: x", None], "answer_language": [None, "en", "de"]})
    out, notes = apply_verdicts(stored, SEED)
    assert out["verdict"].tolist() == ["FAIL", "ABSTAIN", "UNDETERMINED"]
    assert notes == ['1 empty answer (verdict FAIL, rule "empty answer"); 1 answer not in English (de 1): the '
                     "English-only metrics and the verdict are UNDETERMINED on it"]
    # results saved before the decision was stored: it is made from the answer, by the same function
    old = pd.DataFrame({**triad, "answer": ["", "The documents do not say.", "Die Werke sind in Gent und Lyon."]})
    assert apply_verdicts(old, SEED)[0]["verdict_rule"].tolist() == ["empty answer", "the answer declines to answer",
                                                               "not English (detected: de)"]


# --- the opt-in support rule ------------------------------------------------------------------------------------

def test_support_fail_is_opt_in_and_strict():
    import pandas as pd

    from evalkit.base.config import EvalConfig, VerdictThresholds
    from evalkit.decide.verdict import apply_verdicts

    df = pd.DataFrame({"answer": ["a", "b", "c"], "hallucination": [0.0, 0.0, 0.0], "relevance": [0.5, 0.5, 0.5],
                       "completeness": [1.0, 1.0, 1.0], "support": [0.2, 0.3, 0.9]})
    off, _ = apply_verdicts(df.copy(), SEED)
    assert off["verdict"].tolist() == ["PASS"] * 3  # not set: no support rule at all
    on, _ = apply_verdicts(df.copy(), VerdictThresholds(named="seed", support_fail=0.3))
    # 0.2 < 0.3 fails; 0.3 sits on the threshold and the rule is strict, so it passes; 0.9 passes
    assert on["verdict"].tolist() == ["FAIL", "PASS", "PASS"]
    assert on.loc[0, "verdict_rule"].startswith("support 0.200 < 0.3")
    cfg = EvalConfig.from_dict({"thresholds": {"support_fail": 0.3}})
    assert cfg.thresholds.support_fail == 0.3
    assert EvalConfig.from_dict({"thresholds": {"support_fail": None}}).thresholds.support_fail is None


# ---------------------------------------------------------------------------------------------------------
# the named profiles (issue 38): seed exact, evalkit on its three checks
def test_named_profiles_apply_their_own_rules():
    assert [str(r) for r in rules_for(SEED)] == \
        ["hallucination > 0.5", "relevance < 0.1", "completeness < 0.6"]  # the seed's, unchanged
    assert rules_for(VerdictThresholds()) == rules_for(VerdictThresholds(named="evalkit"))  # the default
    assert [str(r) for r in rules_for(VerdictThresholds(named="evalkit"))] == \
        ["unsupported_facts > 0", "reference_conflict > 0", "answers_question < 0.5", "question_coverage < 1"]
    df = pd.DataFrame({"unsupported_facts": [0.0, 0.25, 0.0, 0.0, 0.0, 0.0, 0.0],
                       "reference_conflict": [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
                       "answers_question": [1.0, 1.0, 0.0, 0.5, 1.0, 1.0, 1.0],
                       "question_coverage": [1.0, 1.0, 1.0, 1.0, 0.5, 1.0, 0.99]})
    # by hand: all pass; one unsupported fact of four fails; not answering fails; 0.5 is not below 0.5; half covered
    # warns; another value in place of the reference's fails; anything short of all of it warns
    assert apply_verdicts(df, VerdictThresholds(named="evalkit"))[0]["verdict"].tolist() == \
        ["PASS", "FAIL", "FAIL", "PASS", "WARN", "FAIL", "WARN"]
    with pytest.raises(ProfileError, match="the verdict needs the columns hallucination, relevance, completeness"):
        apply_verdicts(df, SEED)  # the seed profile reads other columns


def test_profile_key_in_a_config_and_its_errors():
    from evalkit.base.config import ConfigError, EvalConfig, VERDICT_PROFILES
    from evalkit.cli import DEFAULT_PROFILE_NAME, VERDICT_PROFILE_NAMES

    assert VERDICT_PROFILE_NAMES == VERDICT_PROFILES  # --help spells them without importing the config
    assert EvalConfig().thresholds.named == DEFAULT_PROFILE_NAME == "evalkit"  # the default reads real answers
    cfg = EvalConfig.from_dict({"profile": "evalkit", "thresholds": {"coverage_warn": 0.5}})
    assert (cfg.thresholds.named, cfg.thresholds.coverage_warn) == ("evalkit", 0.5)
    assert cfg.thresholds.as_dict() == {"unsupported_fail": 0.0, "conflict_fail": 0.0, "answers_fail": 0.5,
                                        "coverage_warn": 0.5}
    with pytest.raises(ConfigError, match="profile must be one of seed, evalkit, got 'careful'"):
        EvalConfig.from_dict({"profile": "careful"})
    with pytest.raises(ConfigError, match=r"thresholds has unknown key\(s\) \['named'\]"):
        EvalConfig.from_dict({"thresholds": {"named": "evalkit"}})  # the profile is named by its own key


def test_score_and_verdict_commands_take_the_profile(tmp_path, capsys):
    import json

    from evalkit.cli import main

    rows = [{"user_input": "How heavy is the Orvo T2?", "retrieved_contexts": ["The Orvo T2 weighs 2.4 kg. The Orvo T3 "
                                                                              "weighs 3.1 kg."],
             "response": answer} for answer in ("It weighs 2,400 grams.", "3.1 kg.")]
    data = tmp_path / "answers.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "r.parquet"
    assert main(["score", str(data), "-o", str(out), "--profile", "evalkit",
                 "--metrics", "unsupported_facts,reference_conflict,answers_question,question_coverage"]) == 0
    res = pd.read_parquet(out)
    # 2,400 g = 2.4 kg, the T2's; 3.1 kg is the T3's weight given for the T2
    assert res["verdict"].tolist() == ["PASS", "FAIL"]
    assert res["verdict_rule"].tolist()[1] == "unsupported_facts 1.000 > 0"
    profile = tmp_path / "p.yaml"
    profile.write_text(yaml.safe_dump({"metrics": {}}))
    again = tmp_path / "r2.parquet"
    assert main(["verdict", str(out), "--thresholds", str(profile), "--profile", "evalkit", "-o", str(again)]) == 0
    assert pd.read_parquet(again)["verdict"].tolist() == ["PASS", "FAIL"]


def test_a_calibrated_profile_keeps_the_named_profile():
    base = VerdictThresholds(named="evalkit", coverage_warn=0.5)
    t = thresholds_from_profile({"metrics": {"answers_question": {"threshold": 0.7, "flag": "below",
                                                                  "inclusive": False}}}, base)
    # the named profile and its other cut values stay; the rule on one of its metrics sets that metric's value
    assert (t.named, t.answers_fail, t.coverage_warn, t.unsupported_fail) == ("evalkit", 0.7, 0.5, 0.0)
    assert [str(r) for r in rules_for(t)] == ["unsupported_facts > 0", "reference_conflict > 0",
                                              "answers_question < 0.7", "question_coverage < 0.5"]
