"""Typed details (issue 26, item 1): the triad returns frozen records, declared in the registry and checked by the
runner, serialised once into ``<metric>_details`` as the JSON object they read as.

Expected values are written by hand (the TF-IDF arithmetic of a two-sentence pair; the anchors a reader finds by
looking at the texts), never read back from the function under test.
"""
from __future__ import annotations

import dataclasses
import json
import math

import pandas as pd
import pytest

import evalkit
from evalkit.base.data import details_cell
from evalkit.metrics import REGISTRY
from evalkit.metrics.anchors import AnchorCheck, HallucinationDetails, hallucination
from evalkit.metrics.base import Metric, Score, Undetermined
from evalkit.metrics.lexical import CompletenessDetails, RelevanceDetails, completeness, relevance
from evalkit.run.runner import _check_score


def test_the_registry_declares_the_detail_types():
    from evalkit.metrics import reference as ref
    from evalkit.metrics.base import NoEvidence

    declared = {"relevance": RelevanceDetails, "completeness": CompletenessDetails,
                "hallucination": HallucinationDetails, "exact_match": NoEvidence, "keyword_coverage": ref.KeywordMatch,
                "number_match": ref.KeywordMatch, "answer_completeness": ref.LengthAndKeywords,
                "source_citation": ref.SourcesFound, "dont_know": ref.DeclineDetails}
    assert {name: REGISTRY[name].details for name in declared} == declared


def test_reference_records_save_as_their_json():
    from evalkit.metrics.reference import answer_completeness, dont_know, exact_match, number_match

    assert details_cell(exact_match("42", "42").details) == "{}"
    # 604.00 states $604; -0.133% is not 0.133% (the sign is part of the value)
    assert json.loads(details_cell(number_match("It costs 604.00 and fell 0.133%", "$604; change -0.133%").details)) \
        == {"matched": ["$604"], "missing": ["-0.133%"]}
    # 4 answer words of 7 expected (territory 118 pays 604 a 0.305 increase); keywords Territory 118, $604, 0.305%,
    # pays, increase: 3 of 5 found
    s = answer_completeness("Territory 118 pays 604.", "Territory 118 pays $604, a 0.305% increase.")
    assert json.loads(details_cell(s.details)) == {"length_ratio": round(4 / 7, 6), "keyword_coverage": 0.6,
                                                   "missing": ["0.305%", "increase"]}
    assert dict(dont_know("The premium is $604.").details) == {"matched": ()}
    assert dict(number_match("It costs 5.", "no numbers here").details) == {"reason": "ground truth has no numbers"}


def test_records_are_frozen():
    d = completeness("What is the capital of France?", "Paris is the capital.").details
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.missing = ()


def test_relevance_is_saved_as_the_json_it_reads_as():
    s = relevance("What is the base premium?", "The base premium is $604.")
    # by hand: Q {base, premium} at 1/sqrt(2) each; R {604, base, premium} with idf(604) = 1 + ln(3/2)
    cosine = 2 / math.sqrt(2) / math.sqrt(2 + (1 + math.log(1.5)) ** 2)
    assert json.loads(details_cell(s.details)) == {"cosine": round(cosine, 6), "jaccard": 0.666667, "idf_scope": "pair"}
    empty_question = relevance("", "An answer.").details
    assert (empty_question.cosine, empty_question.reason) == (0.0, "empty question")
    # the order results saved before typed records wrote: a row scored without comparing says why first
    assert details_cell(empty_question) == '{"reason": "empty question", "cosine": 0.0, "jaccard": 0.0}'


def test_a_declining_answer_saves_its_decision_before_its_anchors():
    s = hallucination("I don't know; the documents do not say.", ["Trucks pay $40."])
    assert list(json.loads(details_cell(s.details))) == ["abstention", "reason", "matched", "anchors", "s_claims",
                                                        "p_drift", "unsupported"]
    assert s.details.abstention is True and s.details.anchors == ()


def test_each_hallucination_path_keeps_the_key_order_saved_results_have():
    # the orders the dict details of 313d316 wrote, typed out: an empty answer's reason first, a scored
    # answer's reason last
    from evalkit.metrics.anchors import hallucination_from_parsed

    # (the metric leaves an empty answer undetermined before it gets here; a caller of the parsed form does not)
    empty = json.loads(details_cell(hallucination_from_parsed("", None, None).details))
    assert list(empty) == ["reason", "abstention", "anchors", "s_claims", "ngram_overlap", "p_drift"]
    no_anchor = json.loads(details_cell(hallucination("Yes, certainly.", ["Trucks pay $40."]).details))
    assert list(no_anchor) == ["abstention", "anchors", "s_claims", "ngram_overlap", "p_drift", "unsupported",
                               "reason"]
    assert no_anchor["reason"] == "no anchors in the answer"


def test_a_reason_the_judge_or_ragas_left_out_is_saved_as_null():
    from types import SimpleNamespace

    from evalkit.metrics.judged import AnswerClassDetails, AnswerRelevanceDetails
    from evalkit.metrics.ragas import _one_score

    nan = _one_score(SimpleNamespace(value=float("nan"), reason=None))
    assert details_cell(nan.details) == '{"reason": "ragas returned NaN (e.g. no statements)", "ragas_reason": null}'
    assert nan.details["ragas_reason"] is None and "ragas_reason" in nan.details
    assert details_cell(_one_score(SimpleNamespace(value=0.5, reason=None)).details) == "{}"
    assert details_cell(AnswerRelevanceDetails("rubric", None)) == '{"method": "rubric", "reason": null}'
    assert details_cell(AnswerClassDetails("judge", reason=None)) == '{"rule": "judge", "reason": null}'
    assert details_cell(AnswerClassDetails("dont_know", matched=("no idea",))) == \
        '{"rule": "dont_know", "matched": ["no idea"]}'
    with pytest.raises(KeyError):
        AnswerClassDetails("dont_know", matched=())["reason"]


def test_anchors_are_records_that_read_as_the_saved_objects():
    s = hallucination("Revenue was $9 million in 2023.", ["Revenue was $5 million in 2023."])
    a = s.details.anchors
    assert all(isinstance(x, AnchorCheck) for x in a)
    assert [(x.type, x.text, x.supported) for x in a] == [("number", "$9 million", False), ("date", "2023", True)]
    saved = json.loads(details_cell(s.details))["anchors"]
    assert [(x["type"], x["text"], x["supported"]) for x in saved] == [("number", "$9 million", False),
                                                                      ("date", "2023", True)]


@pytest.mark.parametrize("answer", ["", "   ", "Der Zug fährt um acht Uhr ab und kommt um zehn Uhr an."])
def test_a_row_never_judged_is_undetermined_with_its_reason(answer):
    for fn in (lambda: relevance("When does the train leave?", answer),
               lambda: completeness("When does the train leave?", answer)):
        s = fn()
        assert s.value is None and isinstance(s.details, Undetermined)
        assert s.details.reason in ("empty answer", "not English (detected: de)")


def test_the_runner_refuses_details_of_another_type():
    m = Metric("typed", str, ("answer",), "higher", (0.0, 1.0), details=RelevanceDetails)
    _check_score(m, Score(0.5, RelevanceDetails(0.5, 0.5, "pair")))
    _check_score(m, Score(None, Undetermined("empty answer")))
    with pytest.raises(TypeError, match="typed returned details of type dict; its registry entry declares "
                                        "RelevanceDetails"):
        _check_score(m, Score(0.5, {"cosine": 0.5, "jaccard": 0.5}))


def test_evaluate_writes_each_record_once_as_json():
    import evalkit

    df = pd.DataFrame({"question": ["What is the base premium?"], "answer": ["The base premium is $604."],
                       "contexts": [["The base premium is $604 per year."]]})
    out = evalkit.evaluate(df, ["relevance", "completeness", "hallucination"], progress=False)
    assert json.loads(out.loc[0, "completeness_details"]) == {"keywords": ["base", "premium"],
                                                             "matched": ["base", "premium"], "missing": []}
    anchors = json.loads(out.loc[0, "hallucination_details"])["anchors"]
    assert [(a["text"], a["supported"]) for a in anchors] == [("$604", True)]


def test_every_builtin_metric_declares_a_details_record():
    from evalkit.metrics.base import Details

    undeclared = [n for n in REGISTRY.builtin if not (isinstance(REGISTRY[n].details, type)
                                                      and issubclass(REGISTRY[n].details, Details))]
    assert undeclared == []


def test_repeats_save_flat_after_the_first_determined_repeats_details():
    from evalkit.metrics.judged import ClaimVerdict, FaithfulnessDetails, combine_repeats

    first = FaithfulnessDetails((ClaimVerdict("Rent is $604.", 1, "stated"),), 1, 1)
    s = combine_repeats([Score(None, Undetermined("empty answer")), Score(100.0, first), RuntimeError("timeout")])
    assert s.value == 100.0
    assert details_cell(s.details) == ('{"claims": [{"claim": "Rent is $604.", "verdict": 1, "reason": "stated"}], '
                                       '"supported": 1, "total": 1, "repeats": [null, 100.0, null], '
                                       '"repeat_errors": ["repeat 2: RuntimeError: timeout"]}')
    m = Metric("judged_twin", str, ("answer",), "higher", (0.0, 100.0), details=FaithfulnessDetails)
    _check_score(m, s)  # the runner reads the inner details' type through the repeats


def test_records_cross_to_a_worker_process():
    import pickle

    from evalkit.metrics.base import FrozenMap, freeze

    d = freeze({"verdicts": [{"context": 1, "verdict": 1}], "reason": "useful"})
    assert isinstance(d, FrozenMap) and d["verdicts"][0]["verdict"] == 1
    with pytest.raises(AttributeError):
        d.extra = 1
    s = hallucination("Revenue was $9 million.", ["Revenue was $5 million."])
    for record in (d, s.details):
        back = pickle.loads(pickle.dumps(record))
        assert details_cell(back) == details_cell(record)


def test_an_abstaining_answer_is_grounded_with_its_decision_first():
    from evalkit.metrics.grounding import grounding_risk

    s = grounding_risk("I don't know; the documents do not say.", ["Trucks pay $40."])
    assert s.value == 0.0
    assert list(json.loads(details_cell(s.details))) == ["abstention", "reason", "matched", "model", "align"]


def test_a_summary_scorer_saves_its_five_objects_then_its_scores():
    from evalkit.metrics.summarization import twin_lock_score

    s = twin_lock_score("Sales rose 5% in May.", ["Sales rose 5% in May, the company said."])
    keys = list(json.loads(details_cell(s.details)))
    assert keys[:6] == ["variant", "coverage", "alignment", "hallucination", "relevance", "bias_toxicity"]
    assert keys[6:12] == ["provider", "coverage_score", "alignment_score", "hallucination_score", "relevance_score",
                          "bias_toxicity_score"]
    assert s.details.hallucination_score == s.details["hallucination"]["score"]


def test_details_cells_are_parsed_by_one_loader_only():
    """Outside the loader (data.details_of_cell), no module or notebook parses a details cell itself."""
    import re
    from pathlib import Path

    root = Path(evalkit.__file__).parent
    parse = re.compile(r"json\.loads\([^)]*details")
    found = [f"{p.relative_to(root)}:{i}" for p in sorted(root.rglob("*.py")) if p.name != "data.py"
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if parse.search(line)]
    assert not found, f"details parsed outside data.details_of_cell: {found}"


def test_grounding_sentences_are_frozen_all_the_way_down():
    from evalkit.metrics.base import FrozenMap
    from evalkit.metrics.grounding import grounding_risk

    s = grounding_risk("Revenue was $9 million in 2023, said Alice Moreau.", ["Revenue was $5 million in 2023."])

    def mutable(x):
        if isinstance(x, (list, dict, set)):
            return True
        if isinstance(x, (tuple, FrozenMap)):
            return any(mutable(v) for v in (x.values() if isinstance(x, FrozenMap) else x))
        return False

    assert s.details.sentences and not mutable(s.details.sentences)
    lists = [k for k, v in s.details.sentences[0].items() if isinstance(v, tuple)]
    assert lists, "a sentence record holds sequences (missing entities, novel words): they must be tuples"
    with pytest.raises(AttributeError):
        s.details.sentences[0][lists[0]].append("x")
