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
from .embedding import bert_score_batch, bert_score_f1, semantic_similarity, semantic_similarity_batch
from .factchecks import fact_checks, fact_checks_batch
from .grounding import grounding_batch, grounding_score
from .judged import (answer_class, answer_relevance, context_precision, context_recall, factual_accuracy,
                     faithfulness, ragas_score, threaded)
from .lexical import completeness, completeness_batch, relevance, relevance_batch
from .summary import SCORE_KEYS, judge_lock_batch, judge_lock_score, twin_lock_batch, twin_lock_score
from .reference import (answer_completeness, dont_know, exact_match, keyword_coverage, number_match,
                        source_citation)

from ..judge.ragas_adapter import _make as _ragas

_TOK = ("tokenizer",)
_RF, _RFB = _ragas("faithfulness", ("question", "answer", "contexts"))
_RP, _RPB = _ragas("context_precision", ("question", "contexts", "ground_truth"))
_RR, _RRB = _ragas("context_recall", ("question", "contexts", "ground_truth"))
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
           batch=hallucination_batch, resources=("nlp",),
           params=("spacy_model", "hedges", "window", "phrases", "short_tokens", "short_chars"), family="triad",
           description="max(unsupported anchors / anchors, 0.2 if n-gram overlap with contexts < 0.2)",
           empty_policy="0.0 for an empty answer or an abstention; no contexts: anchors unsupported"),
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
           empty_policy="undetermined when no rule applies", extra_columns=("is_correct",)),
    Metric("faithfulness", faithfulness, needs=("question", "answer", "contexts"), direction="higher",
           range=(0.0, 100.0), batch=threaded(faithfulness), resources=("judge",), family="judged",
           description="judge: claims of the answer supported by the contexts / claims x 100",
           empty_policy="100 with no claims; 0 with claims but no contexts"),
    Metric("context_precision", context_precision, needs=("question", "contexts"), optional=("ground_truth", "answer"),
           direction="higher", range=(0.0, 100.0), batch=threaded(context_precision), resources=("judge",),
           family="judged", description="judge: useful contexts / contexts x 100 (AP@k in details)",
           empty_policy="0 with no contexts"),
    Metric("context_recall", context_recall, needs=("question", "contexts", "ground_truth"), direction="higher",
           range=(0.0, 100.0), batch=threaded(context_recall), resources=("judge",), family="judged",
           description="judge: ground-truth statements attributable to the contexts / statements x 100",
           empty_policy="undetermined without ground truth; 0 with no contexts; 100 with no statements"),
    Metric("answer_relevance", answer_relevance, needs=("question", "answer"), direction="higher",
           range=(0.0, 100.0), batch=threaded(answer_relevance, uses_encoder=True), resources=("judge",),
           params=("n_questions", "method"), family="judged",
           description="judge: generated questions' mean cosine with the question x 100 (method: embedding) "
                       "or rubric x 100 (method: rubric); auto is resolved once per run, in the signature",
           empty_policy="0 for an empty answer"),
    Metric("ragas_score", ragas_score, needs=("faithfulness", "context_precision", "context_recall", "answer_relevance"),
           direction="higher", range=(0.0, 100.0), params=("weights",), family="judged", derived=True,
           description="0.3 faithfulness + 0.2 context precision + 0.2 context recall + 0.3 answer relevance, "
                       "missing parts excluded and weights renormalised",
           empty_policy="undetermined only when every component is missing"),
    Metric("factual_accuracy", factual_accuracy, needs=("question", "answer", "ground_truth"), direction="higher",
           range=(0.0, 100.0), batch=threaded(factual_accuracy), resources=("judge",), family="judged",
           extra_columns=("grade",),
           description="G-Eval: 0.5 correctness + 0.3 completeness + 0.2 consistency (x 10); letter grade",
           empty_policy="undetermined without ground truth; 0 for an empty answer"),
    Metric("answer_class", answer_class, needs=("question", "answer", "ground_truth"), direction="none", range=None,
           kind="label", batch=threaded(answer_class), resources=("judge",), params=("phrases",), family="judged",
           description="DON'T KNOW (uncertainty rule) else the judge's CORRECT / WRONG",
           empty_policy="DON'T KNOW for an empty answer; undetermined without ground truth"),
    Metric("semantic_similarity", semantic_similarity, needs=("answer", "ground_truth"), direction="higher",
           range=(0.0, 100.0), batch=semantic_similarity_batch, resources=("encoder",), family="embedding",
           description="cosine of answer and ground-truth embeddings x 100, clipped at 0",
           empty_policy="0 for empty inputs"),
    Metric("bert_score_f1", bert_score_f1, needs=("answer", "ground_truth"), direction="higher", range=(0.0, 100.0),
           batch=bert_score_batch, resources=("encoder",), family="embedding",
           description="BERTScore F1 x 100 (bert-score; packaged MiniLM by default)",
           empty_policy="0 for empty inputs"),
    Metric("answer_length", answer_length, needs=("answer",), direction="none", range=(0.0, float("inf")),
           family="baseline", description="word tokens in the answer (trivial baseline)",
           empty_policy="0 for an empty answer"),
    Metric("novel_token_rate", novel_token_rate, needs=("answer", "contexts"), direction="lower", range=(0.0, 1.0),
           family="baseline", description="share of answer tokens absent from the contexts (trivial baseline)",
           empty_policy="undetermined for an empty answer"),
    Metric("grounding", grounding_score, needs=("answer", "contexts"), direction="lower", range=(0.0, 1.0),
           batch=grounding_batch, resources=("nlp",), params=("align", "phrases", "short_tokens", "short_chars"),
           family="detector",
           description="calibrated probability of hallucination: sentence evidence + mismatch features, learned",
           empty_policy="undetermined for an empty answer or no contexts; 0.0 for an abstention"),
    Metric("twin_lock", twin_lock_score, needs=("answer", "contexts"), direction="higher", range=(0.0, 10.0),
           batch=twin_lock_batch, resources=("nlp",), params=("provider",), family="summary", extra_columns=SCORE_KEYS,
           description="Twin-Lock summary scores (coverage, alignment, hallucination, relevance, bias) 0..10; value = mean",
           empty_policy="undetermined for an empty summary/article or malformed labels"),
    Metric("judge_lock", judge_lock_score, needs=("answer", "contexts"), direction="higher", range=(0.0, 10.0),
           batch=judge_lock_batch, resources=("nlp",), params=("provider",), family="summary", extra_columns=SCORE_KEYS,
           description="Judge-Lock summary scores with QAG and stricter caps, 0..10; value = mean",
           empty_policy="undetermined for an empty summary/article or malformed labels"),
    Metric("ragas_faithfulness", _RF, needs=("question", "answer", "contexts"), direction="higher", range=(0.0, 1.0),
           batch=_RFB, resources=("judge", "ragas"), family="ragas",
           description="ragas' own Faithfulness (0..1) on the configured judge endpoint",
           empty_policy="ragas raises on empty inputs (row error); NaN -> undetermined"),
    Metric("ragas_context_precision", _RP, needs=("question", "contexts", "ground_truth"), direction="higher",
           range=(0.0, 1.0), batch=_RPB, resources=("judge", "ragas"), family="ragas",
           description="ragas' own ContextPrecision with reference (0..1)",
           empty_policy="ragas raises on empty inputs (row error); NaN -> undetermined"),
    Metric("ragas_context_recall", _RR, needs=("question", "contexts", "ground_truth"), direction="higher",
           range=(0.0, 1.0), batch=_RRB, resources=("judge", "ragas"), family="ragas",
           description="ragas' own ContextRecall (0..1)",
           empty_policy="ragas raises on empty inputs (row error); NaN -> undetermined"),
]
REGISTRY: dict[str, Metric] = {m.name: m for m in _REGISTRY_LIST}
DEFAULT_METRICS = ("relevance", "completeness", "hallucination", "grounding", "exact_match", "keyword_coverage",
                   "number_match", "answer_completeness", "source_citation", "dont_know", "fact_checks")
# run by default when their resource is available (a configured judge; the embed extra)
OPTIONAL_DEFAULTS = ("faithfulness", "context_precision", "context_recall", "answer_relevance", "ragas_score",
                     "factual_accuracy", "answer_class", "semantic_similarity", "bert_score_f1")


def get_metric(name: str) -> Metric:
    """The registered metric called ``name`` (KeyError lists the known names)."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known metrics: {', '.join(REGISTRY)}") from None


__all__ = ["REGISTRY", "DEFAULT_METRICS", "Metric", "Score", "get_metric", "relevance", "completeness",
           "hallucination", "exact_match", "keyword_coverage", "number_match", "answer_completeness",
           "source_citation", "dont_know", "fact_checks", "answer_length", "novel_token_rate", "faithfulness",
           "context_precision", "context_recall", "answer_relevance", "ragas_score", "factual_accuracy",
           "answer_class", "semantic_similarity", "bert_score_f1", "twin_lock", "judge_lock", "grounding"]
