"""The row decision through evalkit.evaluate (issue 25): made once by the runner, stored in its columns, and
read by every metric, the verdict and evalkit.show; an empty, a German and a Chinese answer each get one
outcome with one reason everywhere."""
import json

import pandas as pd
import pytest

import evalkit
from evalkit.publish.view.html import evidence_html
from evalkit.publish.view.model import rule_checks
from evalkit.metrics import REGISTRY
from evalkit.decide.pipeline import evaluate_to_file
from evalkit.text import DECISION_COLUMNS

# written out here, independently of the registry's english_only flags (which the test below compares with it)
ENGLISH_ONLY = frozenset({"relevance", "completeness", "hallucination", "grounding_risk", "keyword_coverage",
                          "answer_completeness", "source_citation", "dont_know", "novel_token_rate", "support",
                          "unsupported_facts", "reference_conflict", "answers_question", "question_coverage"})

CONTEXT = "The plants are in Ghent and Lyon. The base premium for Territory 118 is $604 per year."
QUESTION = "Where are the plants, and what is the base premium for Territory 118?"
TRUTH = "The plants are in Ghent and Lyon; the base premium is $604 per year."
ROWS = pd.DataFrame({
    "id": ["en", "empty", "none", "de", "zh", "refusal"],
    "question": [QUESTION] * 6,
    "answer": ["The plants are in Ghent and Lyon, and the base premium for Territory 118 is $604 per year.",
               "   ", None,
               "Die Werke befinden sich in Gent und Lyon, und die Grundprämie beträgt 604 Dollar pro Jahr.",
               "工厂位于根特和里昂，第118区的基本保费为每年604美元。",
               "I'm sorry, I couldn't find information about that in our documentation."],
    "contexts": [[CONTEXT]] * 6,
    "ground_truth": [TRUTH] * 6,
})
METRICS = ["relevance", "completeness", "hallucination", "grounding_risk", "exact_match", "keyword_coverage",
           "number_match", "answer_completeness", "source_citation", "dont_know", "answer_length", "novel_token_rate",
           "unsupported_facts", "reference_conflict", "answers_question", "question_coverage"]


@pytest.fixture(scope="module")
def scored():
    return evalkit.evaluate(ROWS, METRICS, progress=False).set_index("id", drop=False)


def _reason(row, metric):
    return json.loads(row[f"{metric}_details"]).get("reason")


def test_the_decision_is_stored_once_per_row(scored):
    assert list(scored.columns[:len(ROWS.columns) + len(DECISION_COLUMNS)][-len(DECISION_COLUMNS):]) == \
        list(DECISION_COLUMNS)
    assert scored["answer_empty"].tolist() == [False, True, True, False, False, False]
    assert scored["abstained"].tolist() == [False, False, False, False, False, True]
    assert scored["answer_language"].tolist()[3:5] == ["de", "zh"]
    assert scored.loc["refusal", "abstained_reason"] == "declines: i could not find"


@pytest.mark.parametrize("row_id", ["empty", "none"])
def test_an_empty_answer_is_one_failure_everywhere(scored, row_id):
    row = scored.loc[row_id]
    for m in METRICS:
        assert pd.isna(row[m]) and _reason(row, m) == "empty answer", m
    assert (row["verdict"], row["verdict_rule"]) == ("FAIL", "empty answer")
    assert not row["abstained"]  # an empty answer is not an abstention
    checks = {c.rule: c for c in rule_checks(row)}
    assert checks["FAIL if the answer is empty"].decided and not checks["ABSTAIN if the answer declines to answer"].fired
    assert "the answer is empty" in evidence_html(row)


@pytest.mark.parametrize("row_id,code", [("de", "de"), ("zh", "zh")])
def test_a_non_english_answer_is_undetermined_by_the_english_only_metrics(scored, row_id, code):
    row = scored.loc[row_id]
    reason = f"not English (detected: {code})"
    for m in METRICS:
        if m in ENGLISH_ONLY:
            assert pd.isna(row[m]) and _reason(row, m) == reason, m
            assert 'not English: undetermined' in REGISTRY[m].empty_policy, m
        else:  # numbers, lengths, equality read any language
            assert not pd.isna(row[m]), m
    if code == "de":  # "604" is stated; a number glued to CJK characters ("604美元") is not read yet
        assert row["number_match"] == 1.0
    assert (row["verdict"], row["verdict_rule"]) == ("UNDETERMINED", reason)
    checks = {c.rule: c for c in rule_checks(row)}
    assert checks["UNDETERMINED if the answer is not in English"].decided
    assert f"detected: {code}" in evidence_html(row)


def test_an_abstention_is_read_from_the_decision_everywhere(scored):
    row = scored.loc["refusal"]
    assert row["dont_know"] is True or row["dont_know"] == True  # noqa: E712 (nullable boolean)
    assert row["hallucination"] == 0.0 and json.loads(row["hallucination_details"])["abstention"] is True
    assert row["grounding_risk"] == 0.0
    assert (row["verdict"], row["verdict_rule"]) == ("ABSTAIN", "the answer declines to answer")
    assert "declining phrase matched: <b>i could not find</b>" in evidence_html(row)


def test_an_english_answer_is_scored(scored):
    row = scored.loc["en"]
    assert all(not pd.isna(row[m]) for m in METRICS if m != "exact_match")
    assert row["verdict"] == "PASS" and not row["abstained"] and row["answer_language"] == "en"


def test_the_summary_note_counts_the_rows(caplog):
    with caplog.at_level("WARNING", logger="evalkit"):
        evalkit.evaluate(ROWS, ["relevance", "completeness", "hallucination"], {"profile": "seed"}, progress=False)
    notes = [r.getMessage() for r in caplog.records if "not in English" in r.getMessage()]
    assert notes == ['2 empty answers (verdict FAIL, rule "empty answer"); 2 answers not in English (de 1, zh 1): '
                     "the English-only metrics and the verdict are UNDETERMINED on them"]


@pytest.mark.parametrize("to_file", [False, True])
def test_the_summary_note_counts_the_rows_of_every_chunk(tmp_path, caplog, to_file):
    """Review: with one row a chunk, each part said "1 empty answer" and the notes were deduplicated."""
    rows = ROWS.iloc[[0, 1, 2, 5]].reset_index(drop=True)  # 4 rows, 2 of them empty
    triad = ["relevance", "completeness", "hallucination"]
    with caplog.at_level("WARNING", logger="evalkit"):
        if to_file:
            evaluate_to_file(rows, tmp_path / "out.jsonl", triad, {"profile": "seed"}, chunk_size=1,
                             parts_dir=tmp_path / "parts", progress=False)
        else:
            evalkit.evaluate(rows, triad, {"profile": "seed"}, chunk_size=1, parts_dir=tmp_path / "parts",
                             progress=False)
    notes = [r.getMessage() for r in caplog.records if "empty answer" in r.getMessage()]
    assert notes == ['2 empty answers (verdict FAIL, rule "empty answer")']


def test_no_metric_decides_again_when_the_runner_decided(monkeypatch):
    """The runner's decision is the one the metrics read: a metric never calls the detector itself."""
    import evalkit.metrics.guard as guard
    import evalkit.run.runner as runner

    calls = []
    real = runner.answer_decisions

    def counted(df, config):
        out = real(df, config)
        calls.append(len(out))
        return out

    def refuse(*a, **k):
        raise AssertionError("a metric re-decided the row")

    monkeypatch.setattr(runner, "answer_decisions", counted)
    monkeypatch.setattr(guard, "decide_answer", refuse)
    out = evalkit.evaluate(ROWS, METRICS, progress=False)
    assert calls == [len(ROWS)] and out["verdict"].notna().all()


def test_the_english_only_metrics_are_registered_and_say_so():
    assert {n for n, m in REGISTRY.items() if m.english_only} == ENGLISH_ONLY
    for name in ENGLISH_ONLY:
        assert name in REGISTRY and "not English" in REGISTRY[name].empty_policy, name
    for name, m in REGISTRY.items():
        if "answer" in m.needs and not m.derived and not name.startswith("ragas_"):
            assert "empty answer" in m.empty_policy or "empty summary" in m.empty_policy, name


def test_a_metric_called_as_a_function_reads_its_language_rule_from_the_registry():
    from evalkit.metrics.guard import skipped
    from evalkit.metrics.lexical import completeness
    from evalkit.metrics.reference import exact_match
    from evalkit.text import decide_answer

    zh = ROWS.set_index("id").loc["zh", "answer"]
    assert completeness(QUESTION, zh).details["reason"] == "not English (detected: zh)"
    assert exact_match(zh, zh).value is True  # not English-only: compared as text
    with pytest.raises(KeyError):  # a misspelt name never switches the guard off quietly
        skipped(decide_answer(zh), "completness")
