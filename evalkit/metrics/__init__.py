"""The metric registry: one table maps names to :class:`Metric` objects.

The CLI (`evalkit metrics`), the runner and the notebooks read this table; no
other place hard-codes metric names.

Examples
--------
>>> from evalkit.metrics import REGISTRY, get_metric
>>> get_metric("relevance").direction
'higher'
>>> "hallucination" in REGISTRY
True
"""
from __future__ import annotations

from .anchors import hallucination, hallucination_batch
from .base import Metric, Score
from .baselines import answer_length, novel_token_rate
from .factchecks import fact_checks, fact_checks_batch
from .lexical import completeness, completeness_batch, relevance, relevance_batch
from .reference import (answer_completeness, dont_know, exact_match, keyword_coverage, number_match,
                        source_citation)

_TOK = ("tokenizer",)
_REGISTRY_LIST = [
    Metric("relevance", relevance, needs=("question", "answer"), direction="higher", range=(0.0, 1.0),
           batch=relevance_batch, params=("idf_scope", "tokenizer"), family="triad",
           description="(TF-IDF cosine + token Jaccard) / 2 of question and answer",
           empty_policy="0.0 for an empty question or answer"),
    Metric("completeness", completeness, needs=("question", "answer"), direction="higher", range=(0.0, 1.0),
           batch=completeness_batch, params=("stop_list", "tokenizer"), family="triad",
           description="share of the question's keywords present in the answer",
           empty_policy="1.0 when the question has no keywords"),
    Metric("hallucination", hallucination, needs=("answer", "contexts"), direction="lower", range=(0.0, 1.0),
           batch=hallucination_batch, resources=("nlp",), params=("spacy_model", "hedges", "window"), family="triad",
           description="max(unsupported anchors / anchors, 0.2 if n-gram overlap with contexts < 0.2)",
           empty_policy="0.0 for an empty answer; no contexts: anchors unsupported"),
    Metric("exact_match", exact_match, needs=("answer", "ground_truth"), direction="higher", range=(0.0, 1.0),
           kind="bool", family="reference", description="equal after lower-casing and whitespace normalisation",
           empty_policy="undetermined without ground truth"),
    Metric("keyword_coverage", keyword_coverage, needs=("answer", "ground_truth"), direction="higher",
           range=(0.0, 1.0), params=("stop_list",), family="reference",
           description="share of the expected answer's phrases/numbers/words found",
           empty_policy="undetermined without ground truth; 1.0 with no keywords"),
    Metric("number_match", number_match, needs=("answer", "ground_truth"), direction="higher", range=(0.0, 1.0),
           family="reference", description="share of the expected numeric values stated",
           empty_policy="undetermined without ground truth or numbers in it"),
    Metric("answer_completeness", answer_completeness, needs=("answer", "ground_truth"), direction="higher",
           range=(0.0, 1.0), params=("stop_list",), family="reference",
           description="(min(answer words / expected words, 1) + keyword_coverage) / 2",
           empty_policy="undetermined without ground truth"),
    Metric("source_citation", source_citation, needs=("answer",), direction="higher", range=(0.0, 1.0),
           params=("indicators",), family="reference", description="min(distinct source indicators / 3, 1)",
           empty_policy="0.0 for an empty answer"),
    Metric("dont_know", dont_know, needs=("answer",), direction="none", range=(0.0, 1.0), kind="bool",
           params=("phrases", "short_tokens", "short_chars"), family="reference",
           description="the answer declines (uncertainty phrase or short non-answer)",
           empty_policy="True for an empty answer"),
    Metric("fact_checks", fact_checks, needs=("answer",), optional=("id", "question_type"), direction="higher",
           range=(0.0, 1.0), batch=fact_checks_batch, params=("rules",), family="reference",
           description="mean of the per-question YAML checks (fact_score); is_correct in details",
           empty_policy="undetermined when no rule applies"),
    Metric("answer_length", answer_length, needs=("answer",), direction="none", range=(0.0, float("inf")),
           family="baseline", description="word tokens in the answer (trivial baseline)",
           empty_policy="0 for an empty answer"),
    Metric("novel_token_rate", novel_token_rate, needs=("answer", "contexts"), direction="lower", range=(0.0, 1.0),
           family="baseline", description="share of answer tokens absent from the contexts (trivial baseline)",
           empty_policy="undetermined for an empty answer"),
]
REGISTRY: dict[str, Metric] = {m.name: m for m in _REGISTRY_LIST}
DEFAULT_METRICS = ("relevance", "completeness", "hallucination", "exact_match", "keyword_coverage",
                   "number_match", "answer_completeness", "source_citation", "dont_know", "fact_checks")


def get_metric(name: str) -> Metric:
    """The registered metric called ``name`` (KeyError lists the known names)."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known metrics: {', '.join(REGISTRY)}") from None


__all__ = ["REGISTRY", "DEFAULT_METRICS", "Metric", "Score", "get_metric", "relevance", "completeness",
           "hallucination", "exact_match", "keyword_coverage", "number_match", "answer_completeness",
           "source_citation", "dont_know", "fact_checks", "answer_length", "novel_token_rate"]
