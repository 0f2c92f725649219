"""The typed evidence readers (evalkit.metrics.evidence) and the registry's wiring of them into the evidence view.

Details are typed by hand below; the expected records are read off them, never produced by the readers."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from evalkit.metrics import REGISTRY
from evalkit.metrics.evidence import (AlignedSentence, Anchor, ClaimSupport, Evidence, anchor_evidence,
                                      claim_support_evidence, summary_claim_evidence)
from evalkit.publish.view.html import evidence_html
from evalkit.publish.view.model import evidence_of, highlights, row_decision, support_claims


def test_every_reader_the_registry_names_resolves_and_reads_nothing_as_nothing():
    readers = {name: REGISTRY.get(name).evidence for name in REGISTRY.builtin if REGISTRY.get(name).evidence}
    # the metrics whose details the view reads; a metric losing its reader would lose its evidence on screen
    assert set(readers) == {"completeness", "hallucination", "dont_know", "grounding_risk", "support",
                            "twin_lock", "judge_lock", "unsupported_facts"}
    for name, reader in readers.items():
        assert isinstance(reader({}, name), Evidence)
        # malformed details (text where records belong, records that are not objects, a number where texts
        # belong, a claim without a probability) read as nothing, never as an error that would stop the view
        bad = reader({"anchors": "x", "sentences": [1, "a", {"probability": None}], "facts": "x",
                      "hallucination": [], "missing": 3, "matched": None}, name)
        assert bad.claims == () and bad.aligned == () and not bad.anchors and not bad.missing_keywords
        assert bad.declined == ()


def test_anchor_records_keep_kind_text_verdict_and_evidence():
    details = {"abstention": False, "anchors": [
        {"type": "number", "text": "$640", "supported": False, "evidence": None},
        {"type": "entity", "text": "Territory 118", "supported": True, "evidence": "Territory 118 is"},
        "not a record"]}
    assert anchor_evidence(details, "hallucination") == Evidence(
        anchors=(Anchor("number", "$640", False, None, ""), Anchor("entity", "Territory 118", True, "Territory 118 is")),
        abstention=False)


def test_texts_given_as_tuples_or_one_string_are_read():
    # details built in memory (tuples) or written by hand (one string where a list belongs)
    e = summary_claim_evidence({"hallucination": {"claims": ({"text": "A rose.", "label": "Partially",
                                                              "evidence": "A rose 2%.",
                                                              "unsupported_anchors": ("5%",)},)}}, "twin_lock")
    assert e.anchors == (Anchor("claim (twin_lock)", "A rose.", False, "A rose 2%.", "Partially"),
                         Anchor("anchor (twin_lock)", "5%", False))


def test_a_summary_claim_does_not_repeat_itself_as_its_own_anchor():
    claims = [{"text": "Taxes jump 5 percent.", "label": "Unsupported", "evidence": [],
               "unsupported_anchors": ["Taxes jump 5 percent", "5 percent"]}]
    e = summary_claim_evidence({"hallucination": {"claims": claims}}, "judge_lock")
    assert e.anchors == (Anchor("claim (judge_lock)", "Taxes jump 5 percent.", False, None, "Unsupported"),
                         Anchor("anchor (judge_lock)", "5 percent", False))


def test_the_weakest_claim_is_marked():
    d = {"sentences": [{"sentence": "A.", "probability": 0.9, "window_text": "A."},
                       {"sentence": "X.", "probability": None, "window_text": "A."},  # nothing to show: left out
                       {"sentence": "B.", "probability": 0.2, "window_text": "C."}], "weakest": 2}
    assert claim_support_evidence(d, "support").claims == (ClaimSupport("A.", 0.9, "A.", False),
                                                           ClaimSupport("B.", 0.2, "C.", True))


def _row(**cells):
    return pd.Series({k: (json.dumps(v) if k.endswith("_details") else v) for k, v in cells.items()})


def test_the_view_takes_the_first_metric_holding_anchors_in_registry_order():
    answer = "Sales rose 5% in May."
    halluc = {"anchors": [{"type": "number", "text": "5%", "supported": False, "evidence": None}]}
    twin = {"hallucination": {"claims": [{"text": "Sales rose 5% in May.", "label": "Supported", "evidence": ["x"],
                                          "unsupported_anchors": []}]}}
    both = _row(answer=answer, hallucination=0.5, hallucination_details=halluc, twin_lock=7.0,
                twin_lock_details=twin)
    assert [(h.text, h.start, h.type) for h in highlights(both)[0]] == [("5%", 11, "number")]
    # no anchors from the hallucination metric: the summary scorer's claims are shown
    none = _row(answer=answer, hallucination=0.0, hallucination_details={"anchors": []}, twin_lock=7.0,
                twin_lock_details=twin)
    assert [(h.text, h.start, h.type, h.supported) for h in highlights(none)[0]] == [
        ("Sales rose 5% in May.", 0, "claim (twin_lock)", True)]


def test_the_closest_context_sentence_comes_from_the_aligning_detector():
    answer = "Sales rose 5% in May. Costs fell."
    row = _row(answer=answer, hallucination=0.5,
               hallucination_details={"anchors": [{"type": "number", "text": "5%", "supported": False}]},
               grounding_risk=0.7,
               grounding_risk_details={"sentences": [{"sentence": "Sales rose 5% in May.", "evidence": "Sales rose 3%."},
                                                     {"sentence": "Costs fell.", "evidence": "Costs fell."}]})
    (h,), _ = highlights(row)
    assert h.closest == "Sales rose 3%."
    assert evidence_of(row, "grounding_risk").aligned[0] == AlignedSentence("Sales rose 5% in May.", "Sales rose 3%.")


def test_claims_and_abstention_are_read_through_the_registry():
    row = _row(answer="B.", support=0.2,
               support_details={"sentences": [{"sentence": "B.", "probability": 0.2, "window_text": "C."}],
                                "weakest": 0, "abstention": False})
    assert support_claims(row) == (ClaimSupport("B.", 0.2, "C.", True),)
    # results saved before the row decision was stored: the abstention the metrics' details recorded
    old = _row(answer="I don't know.", hallucination=0.0,
               hallucination_details={"abstention": True, "matched": ["i don't know"], "anchors": []})
    assert row_decision(old).abstained is True
    assert row_decision(_row(answer="B.", support=0.2, support_details={"abstention": False})).abstained is False


@pytest.mark.parametrize("missing, shown", [(["capital"], "<b>capital</b>"), ([], "<b>none</b>")])
def test_a_keyword_metric_shows_the_missing_keywords(missing, shown):
    row = _row(question="What is the capital of France?", answer="Paris.", completeness=0.5,
               completeness_details={"keywords": ["capital", "france"], "missing": missing},
               verdict="WARN", verdict_rule="completeness 0.500 < 0.6")
    assert f"question keywords missing from the answer: {shown}" in evidence_html(row)


def test_a_users_metric_shows_its_own_anchors_under_its_own_rule():
    import evalkit
    from evalkit.metrics.evidence import anchor_evidence
    from evalkit.metrics.registry import scoped

    def month_check(answer):  # flags the month as unsupported, by hand
        return evalkit.Score(1.0, {"anchors": [{"type": "month", "text": "May", "supported": False}]})

    with scoped():
        evalkit.register_metric("month_check", month_check, better="lower", range=(0, 1),
                                evidence=anchor_evidence)
        row = _row(answer="Sales rose 5% in May.", verdict="FAIL", verdict_rule="month_check 1.000 > 0.5",
                   hallucination=0.5,
                   hallucination_details={"anchors": [{"type": "number", "text": "5%", "supported": False}]},
                   month_check=1.0, month_check_details=month_check("Sales rose 5% in May.").details)
        assert [(h.text, h.start) for h in highlights(row, prefer="month_check")[0]] == [("May", 17)]
        assert [(h.text, h.start) for h in highlights(row)[0]] == [("5%", 11)]  # registry order otherwise
        page = evidence_html(row, rule="month_check")
        assert ">May</mark>" in page and ">5%</mark>" not in page
        assert ">5%</mark>" in evidence_html(row, rule="hallucination")


def test_the_detector_lists_what_fired():
    from evalkit.publish.view.model import metric_views

    row = _row(answer="A.", grounding_risk=0.8,
               grounding_risk_details={"fired": ["number(s) not in the context: A."], "matched": []})
    (view,) = metric_views(row, ["grounding_risk"])
    assert ("fired", "number(s) not in the context: A.") in view.evidence


# --- a row in words (each metric's sentence from its registry entry) ------------------------------------------

def test_a_row_in_words_follows_the_verdicts_order():
    from evalkit.publish.view.text import triad_in_words

    row = {"verdict": "WARN", "verdict_rule": "completeness 0.500 < 0.6", "relevance": 0.25, "completeness": 0.5,
           "completeness_matched": 1.0, "completeness_expected": 2.0,  # counts read back as floats
           "hallucination": 0.0, "hallucination_supported": 2, "hallucination_anchors": 2}
    assert triad_in_words(row) == (
        "**WARN** by rule `completeness 0.500 < 0.6`. The contexts support 2 of the 2 numbers, dates and claims in "
        "the answer, so hallucination is 0.00 (the share unsupported). Relevance to the question is 0.25 on 0..1. "
        "The answer mentions 1 of the question's 2 keywords (completeness 0.50).")


def test_a_row_in_words_leaves_out_what_counted_nothing_or_is_missing():
    from evalkit.publish.view.text import triad_in_words

    row = {"verdict": "PASS", "verdict_rule": "all checks passed", "relevance": 0.0,
           "completeness": 1.0, "completeness_matched": 0, "completeness_expected": 0,  # no keywords in the question
           "hallucination": 0.0, "hallucination_supported": 0, "hallucination_anchors": 0,  # nothing to check
           "support": float("nan")}
    # relevance 0.0 is a value, and is said
    assert triad_in_words(row) == ("**PASS** by rule `all checks passed`. Relevance to the question is 0.00 on 0..1.")
    assert triad_in_words({"verdict": "FAIL", "verdict_rule": "r", "completeness": 0.5}) == "**FAIL** by rule `r`."
