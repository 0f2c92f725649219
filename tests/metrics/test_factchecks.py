from pathlib import Path

import pytest
import yaml

from evalkit.metrics.stats import CheckPasses
from evalkit.metrics.factchecks import CHECK_TYPES, FactCheckError, fact_checks, load_rules, parse_rules

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "data" / "fact_checks.yaml"


def rules(**kw):
    base = {"name": "r1", "applies_to": {"ids": ["q1"]}}
    base.update(kw)
    return parse_rules({"rules": [base]})


def test_example_file_exercises_every_check_type(sample_df):
    data = yaml.safe_load(RULES.read_text())
    used = {k for r in data["rules"] for k in r if k in CHECK_TYPES}
    assert used == set(CHECK_TYPES)
    ids = set(sample_df["id"])
    loaded = load_rules(RULES)
    assert all(r.ids <= ids for r in loaded.rules)
    assert any(r.question_types for r in loaded.rules) and any(r.list_pattern for r in loaded.rules)


def test_each_check_type():
    r = rules(must_contain=["Territory 118"], numbers=["$604", "-0.133%"], any_of=[["rose", "increase"]],
              forbid=["cannot calculate"])
    good = fact_checks("Territory 118 pays 604.00, an increase; -0.133% elsewhere.", id="q1", rules=r)
    assert good.value == 1.0 and good.details["is_correct"] is True and good.stats == CheckPasses(passed=5, checks=5)
    bad = fact_checks("I cannot calculate it. 0.133%", id="q1", rules=r)
    assert [c["passed"] for c in bad.details["checks"]] == [False, False, False, False, False]
    assert bad.value == 0.0


def test_list_items_in_markdown_list_and_regex():
    r = rules(list_items={"items": ["Rule C-1", "Rule C-2"], "pattern": r"Rule C-\d+", "min_count": 3})
    md = "Rules:\n- Rule C-1: factor\n* Rule C-3\n1. Rule C-2 discount"
    s = fact_checks(md, id="q1", rules=r)
    assert s.value == 1.0 and s.details["checks"][-1]["found"] == ("Rule C-1", "Rule C-2", "Rule C-3")
    prose = fact_checks("Rule C-1 and Rule C-2 apply.", id="q1", rules=r)  # not a list, only 2 matches
    assert [c["passed"] for c in prose.details["checks"]] == [False, False, False]


def test_is_correct_policies():
    r = rules(numbers=["1", "2", "3", "4"], is_correct={"min_fact_score": 0.75})
    assert fact_checks("1 2 3", id="q1", rules=r).details["is_correct"] is True
    assert fact_checks("1 2", id="q1", rules=r).details["is_correct"] is False
    r2 = rules(numbers=["5"], forbid=["maybe"], is_correct={"require": ["numbers"]})
    s = fact_checks("maybe 5", id="q1", rules=r2)
    assert s.value == 0.5 and s.details["is_correct"] is True


def test_question_type_rules_and_no_rule():
    r = parse_rules({"rules": [{"name": "t", "applies_to": {"question_types": ["summary"]}, "forbid": ["x"]}]})
    assert fact_checks("fine", id="zz", question_type="summary", rules=r).value == 1.0
    assert fact_checks("fine", id="zz", question_type="fact", rules=r).value is None
    assert fact_checks("fine", id="zz", rules=None).value is None


@pytest.mark.parametrize("rule,msg", [
    ({"name": "bad-nums", "applies_to": {"ids": ["q1"]}, "numbers": ["abc"]}, r"rule 'bad-nums' \(#1\): 'numbers' entry 'abc'"),
    ({"name": "bad-key", "applies_to": {"ids": ["q1"]}, "must_contian": ["x"]}, r"rule 'bad-key' \(#1\): unknown key"),
    ({"name": "no-target", "numbers": ["1"]}, r"rule 'no-target' \(#1\): 'applies_to'"),
    ({"name": "no-checks", "applies_to": {"ids": ["q1"]}}, r"rule 'no-checks' \(#1\): no checks"),
    ({"name": "bad-re", "applies_to": {"ids": ["q1"]}, "list_items": {"pattern": "Rule C-("}}, r"rule 'bad-re'.*not a valid regex"),
    ({"name": "bad-ic", "applies_to": {"ids": ["q1"]}, "forbid": ["x"], "is_correct": "most"}, r"rule 'bad-ic'.*is_correct"),
    ({"name": "bad-anyof", "applies_to": {"ids": ["q1"]}, "any_of": "x"}, r"rule 'bad-anyof'.*any_of"),
    ({"applies_to": {"ids": ["q1"]}, "forbid": ["x"]}, r"rule #1: missing 'name'"),
])
def test_malformed_rule_names_the_rule(rule, msg):
    with pytest.raises(FactCheckError, match=msg):
        parse_rules({"rules": [rule]}, "rules.yaml")


def test_malformed_yaml_file(tmp_path):
    p = tmp_path / "r.yaml"
    p.write_text("rules: [\n  - name: x\n")
    with pytest.raises(FactCheckError, match="invalid YAML"):
        load_rules(p)
    p.write_text("rules:\n  - name: dup\n    applies_to: {ids: [a]}\n    forbid: [x]\n  - name: dup\n    applies_to: {ids: [a]}\n    forbid: [y]\n")
    with pytest.raises(FactCheckError, match=r"rule 'dup' \(#2\): duplicate"):
        load_rules(p)


def test_sample_rules_separate_systems(sample_results):
    m = sample_results.groupby("system")["fact_checks"].mean()
    assert m["rag-a"] > 0.9 and m["rag-b"] < 0.5
