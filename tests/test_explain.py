"""Worked examples: the registry names each metric's arithmetic (``Metric.worked``), and the arithmetic shown is
the one a person computes by hand."""
from __future__ import annotations

import json
import math

import pandas as pd

from evalkit.publish import explain
from evalkit.metrics import REGISTRY, anchors, lexical
from evalkit.metrics.registry import register_metric, scoped


def test_the_triad_declares_its_worked_arithmetic_beside_its_metric():
    assert REGISTRY["relevance"].worked is lexical.relevance_worked
    assert REGISTRY["completeness"].worked is lexical.completeness_worked
    assert REGISTRY["hallucination"].worked is anchors.hallucination_worked
    assert REGISTRY["exact_match"].worked is None


def test_relevance_worked_example_by_hand():
    # after English stop words, Q has {base, premium} and R {604, base, premium}; smooth IDF over the pair:
    # base and premium are in both texts (idf 1), "604" in one (idf 1 + ln(3/2))
    idf_604 = 1 + math.log(3 / 2)
    r_norm = math.sqrt(1 + 1 + idf_604 ** 2)
    cosine = 2 * (1 / math.sqrt(2)) * (1 / r_norm)
    jaccard = 4 / 6  # {base, is, premium, the} of {base, is, premium, the, what, 604}
    res = pd.DataFrame({"question": ["What is the base premium?"], "answer": ["The base premium is $604."],
                        "relevance": [(cosine + jaccard) / 2]})
    [block] = explain.examples_markdown(res, "relevance")
    assert f"**S_Jaccard = 4 / 6 = {jaccard:.3f}**" in block
    assert f"**S_cos = {cosine:.3f}**" in block
    assert f"relevance = ({cosine:.3f} + {jaccard:.3f}) / 2 = **{(cosine + jaccard) / 2:.3f}**" in block


def test_a_dataset_idf_leaves_the_arithmetic_out_with_one_note():
    res = pd.DataFrame({"question": ["Q one?", "Q two?"], "answer": ["a one", "a two"], "relevance": [0.1, 0.9]})
    out = explain.examples_markdown(res, "relevance", params={"idf_scope": "dataset"})
    assert out == ["relevance was scored with `idf_scope: dataset` (IDF fitted on the whole data set): the worked "
                   "arithmetic below is shown for the pair scope only, so it is left out here."]


def test_completeness_worked_example_counts_keywords():
    # keywords of the question (sklearn stop words removed): capital, france; the answer names one
    res = pd.DataFrame({"question": ["What is the capital of France?"], "answer": ["The capital is large."],
                        "completeness": [0.5]})
    [block] = explain.examples_markdown(res, "completeness")
    assert "**completeness = 1 / 2 = 0.500**" in block
    assert "- missing: france" in block


def test_a_users_metric_brings_its_own_worked_arithmetic_and_anchors():
    details = {"anchors": [{"type": "number", "text": "79", "supported": False, "evidence": None},
                           {"type": "entity", "text": "Tolva 30", "supported": True, "evidence": "The Tolva 30 costs"}],
               "ngram_overlap": 0.5, "p_drift": 0.0}
    res = pd.DataFrame({"question": ["How much?"], "answer": ["The Tolva 30 costs 79 euros."],
                        "price_check": [0.5], "price_check_details": [json.dumps(details)],
                        "plain": [0.5]})
    with scoped():
        register_metric("price_check", lambda answer: 0.5, better="lower", range=(0, 1),
                        evidence="evalkit.metrics.evidence:anchor_evidence", worked="evalkit.metrics.anchors:hallucination_worked")
        register_metric("plain", lambda answer: 0.5, better="lower", range=(0, 1))
        [block] = explain.examples_markdown(res, "price_check")
        [bare] = explain.examples_markdown(res, "plain")
    assert "| number | 79 | no |  |" in block
    assert "| entity | Tolva 30 | yes | The Tolva 30 costs |" in block
    assert "S_claims = unsupported / anchors = 1 / 2 = 0.500" in block
    assert "**price_check = max = 0.500**" in block
    assert bare.endswith("**Answer:** The Tolva 30 costs 79 euros.\n\n")  # no arithmetic for a metric without one
