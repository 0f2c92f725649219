"""The metric registry: one table maps names to :class:`Metric` objects.

The CLI (`evalkit metrics`), the runner and the notebooks read this table; no
other place hard-codes metric names.

Examples
--------
>>> from evalkit.metrics import REGISTRY, get_metric
>>> get_metric("relevance").better
'higher'
>>> "hallucination" in REGISTRY
True
"""
from __future__ import annotations

from evalkit.metrics.base import Metric, Score, VerdictRole
from evalkit.metrics.registry import RegistryView, register_metric, unregister_metric
from evalkit.metrics.stats import AnchorSupport, CheckPasses, KeywordHits, NovelTokens

# every implementation is named "evalkit.metrics.<module>:<function>" and imported on first use: reading the
# registry (the CLI's help, the verdict, a summary of saved results) imports no metric's code
_M = "evalkit.metrics."
_EV = _M + "evidence:"  # the readers of details into typed evidence
_NO_EVIDENCE = _M + "base:NoEvidence"
_JUDGED = _M + "judged:"  # the judged metrics' detail records  # the details of a metric whose value is its whole evidence
_WORKED = _M + "worked:"  # the worked arithmetic of one row, in Markdown
# the summary scorers' sub-score columns (evalkit.metrics.summarization.scorers.SCORE_KEYS, checked equal by the tests)
_SUMMARY_SCORE_KEYS = ("coverage_score", "alignment_score", "hallucination_score", "relevance_score",
                       "bias_toxicity_score")
_TOK = ("tokenizer",)

_HALLUCINATION_ROLE = VerdictRole(order=0, flag="above", outcome="FAIL", threshold="hallucination_fail",
                                  on_threshold=((0.5, "one unsupported anchor of two gives exactly 0.5 and passes"),))
_RELEVANCE_ROLE = VerdictRole(order=2, flag="below", outcome="FAIL", threshold="relevance_fail")
_COMPLETENESS_ROLE = VerdictRole(order=3, flag="below", outcome="WARN", threshold="completeness_warn")
# the evalkit profile's rules (evalkit.metrics.checks): one unsupported fact fails the answer, an answer that does
# not answer the question fails, one that answers part of it warns
_FACTS_ROLE = VerdictRole(order=0, flag="above", outcome="FAIL", threshold="unsupported_fail", profile="evalkit")
_CONFLICT_ROLE = VerdictRole(order=1, flag="above", outcome="FAIL", threshold="conflict_fail", profile="evalkit")
_ANSWERS_ROLE = VerdictRole(order=2, flag="below", outcome="FAIL", threshold="answers_fail", profile="evalkit")
_COVERAGE_ROLE = VerdictRole(order=3, flag="below", outcome="WARN", threshold="coverage_warn", profile="evalkit")
_RAGAS_EMPTY = "ragas raises on empty inputs (row error); NaN -> undetermined"
# the row decision's guards (evalkit.metrics.guard): an empty answer is undetermined in every metric that reads it;
# the English-only ones (english_only=True) are also undetermined for an answer in another language
_NOT_EN = '; not English: undetermined ("not English (detected: de)")'
_REGISTRY_LIST = [
    Metric("relevance", _M + "lexical:relevance", needs=("question", "answer"), better="higher", range=(0.0, 1.0),
           batch=_M + "lexical:relevance_batch", params=("idf_scope", "tokenizer"), family="triad",
           formula="(TF-IDF cosine + token Jaccard of question and answer) / 2; IDF fitted on the pair "
                   "(idf_scope: dataset fits it on every row)",
           empty_policy="undetermined for an empty answer" + _NOT_EN + "; 0.0 for an empty question",
           verdict_role=_RELEVANCE_ROLE,
           evidence_keys=("cosine", "jaccard"), details=_M + "lexical:RelevanceDetails",
           worked=_WORKED + "relevance_worked",
           in_words="Relevance to the question is {value:.2f} on 0..1.",
           english_only=True),
    Metric("completeness", _M + "lexical:completeness", needs=("question", "answer"), better="higher", range=(0.0, 1.0),
           batch=_M + "lexical:completeness_batch", params=("stop_list", "tokenizer"), stats=KeywordHits, family="triad",
           formula="question keywords found in the answer / question keywords",
           empty_policy="undetermined for an empty answer" + _NOT_EN + "; 1.0 when the question has no keywords",
           verdict_role=_COMPLETENESS_ROLE,
           evidence_keys=("missing", "matched"), evidence=_EV + "keyword_evidence",
           details=_M + "lexical:CompletenessDetails", worked=_WORKED + "completeness_worked",
           in_words="The answer mentions {matched} of the question's {expected} keywords (completeness {value:.2f}).",
           english_only=True),
    Metric("hallucination", _M + "anchors:hallucination", needs=("answer", "contexts"), better="lower", range=(0.0, 1.0),
           batch=_M + "anchors:hallucination_batch", resources=("nlp",),
           params=("spacy_model", "hedges", "window", "phrases", "short_tokens", "short_chars", "anchors", "aliases"),
           stats=AnchorSupport,
           family="triad",
           formula="max(unsupported anchors / anchors, 0.2 if n-gram overlap with contexts < 0.2)",
           empty_policy="undetermined for an empty answer" + _NOT_EN + "; 0.0 for an abstention (the row's "
                        "abstained decision); no contexts: anchors unsupported",
           verdict_role=_HALLUCINATION_ROLE, evidence_keys=("unsupported", "matched", "ngram_overlap", "p_drift"),
           evidence=_EV + "anchor_evidence", details=_M + "anchors:HallucinationDetails",
           worked=_WORKED + "hallucination_worked",
           in_words="The contexts support {supported} of the {anchors} numbers, dates and claims in the answer, so "
                    "hallucination is {value:.2f} (the share unsupported).",
           english_only=True),
    Metric("unsupported_facts", _M + "checks:unsupported_facts", needs=("question", "answer", "contexts"),
           better="lower", range=(0.0, 1.0), batch=_M + "checks:unsupported_facts_batch", resources=("nlp",),
           family="checks", verdict_role=_FACTS_ROLE, details=_M + "checks:FactDetails",
           formula="unsupported facts / facts: amounts (pint units, number words, rates), dates, names bound to the "
                   "same item as in the context, yes/no polarity, and clauses whose content words the contexts "
                   "lack",
           empty_policy="undetermined for an empty answer" + _NOT_EN + "; 0.0 for an abstention; no contexts: "
                        "every fact unsupported",
           evidence_keys=("unsupported",),
           in_words="{value:.2f} of the answer's facts are not supported by the contexts.",
           english_only=True),
    Metric("answers_question", _M + "checks:answers_question", needs=("question", "answer"), optional=("contexts",),
           better="higher", range=(0.0, 1.0), batch=_M + "checks:answers_question_batch", resources=("nlp",),
           family="checks", verdict_role=_ANSWERS_ROLE, details=_M + "checks:AnswersDetails",
           formula="1 if the answer gives the kind of answer the question asks for (an amount of its dimension, a "
                   "count, a date, a frequency, a name, yes/no) or says what the context sentence answering the "
                   "question says; 0.5 for the latter alone on a typed question; else 0",
           empty_policy="undetermined for an empty answer" + _NOT_EN + "; 1.0 for an abstention (judged apart)",
           evidence_keys=("reason", "found"),
           in_words="Whether it answers the question asked: {value:.1f} (1 yes, 0.5 partly, 0 no).",
           english_only=True),
    Metric("question_coverage", _M + "checks:question_coverage", needs=("question", "answer"),
           optional=("ground_truth", "contexts"), better="higher", range=(0.0, 1.0), batch=_M + "checks:question_coverage_batch",
           resources=("nlp",), family="checks", verdict_role=_COVERAGE_ROLE, details=_M + "checks:CoverageDetails",
           formula="the reference's amounts, dates and names (else content words) stated in the answer / all of "
                   "them; without a reference, the question's asks answered / asks",
           empty_policy="undetermined for an empty answer" + _NOT_EN + "; 1.0 for an abstention and a one-part "
                        "question without a reference",
           evidence_keys=("missing",),
           in_words="It covers {value:.2f} of what the question asks.",
           english_only=True),
    Metric("reference_conflict", _M + "checks:reference_conflict", needs=("question", "answer"),
           optional=("ground_truth",), better="lower", range=(0.0, 1.0),
           batch=_M + "checks:reference_conflict_batch", resources=("nlp",), family="checks",
           verdict_role=_CONFLICT_ROLE, details=_M + "checks:ConflictDetails",
           formula="1 if, for some kind of value (an amount's dimension, dates, item codes), the answer states none "
                   "of the reference's and states another, or it has content words of its own and states nothing of "
                   "the reference; else 0",
           empty_policy="undetermined for an empty answer" + _NOT_EN + "; 0.0 for an abstention and without a "
                        "reference (nothing to contradict)",
           evidence_keys=("conflicts",),
           in_words="It contradicts the reference: {value:.0f} (1 yes, 0 no).",
           english_only=True),
    Metric("exact_match", _M + "reference:exact_match", needs=("answer", "ground_truth"), better="higher", range=(0.0, 1.0),
           kind="bool", details=_NO_EVIDENCE, family="reference",
           formula="answer equals the ground truth after lower-casing and whitespace normalisation",
           empty_policy="undetermined for an empty answer or without ground truth"),
    Metric("keyword_coverage", _M + "reference:keyword_coverage", needs=("answer", "ground_truth"), better="higher",
           range=(0.0, 1.0), params=("stop_list",), stats=KeywordHits, details=_M + "reference:KeywordMatch",
           family="reference",
           formula="the ground truth's phrases, numbers and 4+ letter words found in the answer / all of them",
           empty_policy="undetermined for an empty answer" + _NOT_EN + ", or without ground truth; 1.0 with no "
                        "keywords",
           evidence_keys=("missing", "matched"), english_only=True),
    Metric("number_match", _M + "reference:number_match", needs=("answer", "ground_truth"), better="higher", range=(0.0, 1.0),
           stats=KeywordHits, details=_M + "reference:KeywordMatch", family="reference",
           formula='the ground truth\'s numeric values stated in the answer / its values '
                                       '("$604" matches "604.00"; "-0.133%" does not match "0.133%")',
           empty_policy="undetermined for an empty answer, without ground truth or numbers in it",
           evidence_keys=("missing", "matched")),
    Metric("answer_completeness", _M + "reference:answer_completeness", needs=("answer", "ground_truth"), better="higher",
           range=(0.0, 1.0), params=("stop_list",), details=_M + "reference:LengthAndKeywords", family="reference",
           formula="(min(answer words / ground-truth words, 1) + keyword_coverage) / 2",
           empty_policy="undetermined for an empty answer" + _NOT_EN + ", or without ground truth",
           evidence_keys=("missing",), english_only=True),
    Metric("source_citation", _M + "reference:source_citation", needs=("answer",), better="higher", range=(0.0, 1.0),
           params=("indicators",), details=_M + "reference:SourcesFound", family="reference",
           formula="min(distinct source indicators / 3, 1), matched as whole words",
           empty_policy="undetermined for an empty answer" + _NOT_EN, evidence_keys=("found",), english_only=True),
    Metric("dont_know", _M + "reference:dont_know", needs=("answer",), better="none", range=(0.0, 1.0), kind="bool",
           params=("phrases", "short_tokens", "short_chars"), details=_M + "reference:DeclineDetails",
           family="reference",
           formula="the answer declines: an uncertainty phrase, a short non-answer, or the shape of a refusal "
                   "(the documents do not say, I could not find); the row's abstained decision, as stored by the "
                   "runner",
           empty_policy="undetermined for an empty answer (not an abstention)" + _NOT_EN, evidence_keys=("matched",),
           evidence=_EV + "decline_evidence", english_only=True),
    Metric("fact_checks", _M + "factchecks:fact_checks", needs=("answer",), optional=("id", "question_type"), better="higher",
           range=(0.0, 1.0), batch=_M + "factchecks:fact_checks_batch", params=("rules",), resources=("rules",),
           stats=CheckPasses, details=_M + "factchecks:FactCheckDetails",
           family="reference",
           formula="mean of the per-question YAML checks the experiment names (fact_checks:); "
                   "is_correct in fact_checks_is_correct",
           empty_policy="undetermined for an empty answer or when no rule applies", extra_columns=("is_correct",),
           evidence_keys=("is_correct",)),
    Metric("faithfulness", _M + "judged:faithfulness", needs=("question", "answer", "contexts"), better="higher",
           range=(0.0, 100.0), batch=_M + "judged:faithfulness_batch", resources=("judge",), details=_JUDGED + "FaithfulnessDetails",
           family="judged",
           formula="judge: claims of the answer supported by the contexts / claims x 100",
           empty_policy="undetermined for an empty answer; 100 with no claims; 0 with claims but no contexts",
           cites=("es2024ragas",)),
    Metric("context_precision", _M + "judged:context_precision", needs=("question", "contexts"), optional=("ground_truth", "answer"),
           better="higher", range=(0.0, 100.0), batch=_M + "judged:context_precision_batch", resources=("judge",),
           details=_JUDGED + "ContextPrecisionDetails",
           family="judged", formula="judge: useful contexts / contexts x 100 (average precision@k in the details)",
           empty_policy="0 with no contexts",
           cites=("es2024ragas",)),
    Metric("context_recall", _M + "judged:context_recall", needs=("question", "contexts", "ground_truth"), better="higher",
           range=(0.0, 100.0), batch=_M + "judged:context_recall_batch", resources=("judge",), details=_JUDGED + "ContextRecallDetails",
           family="judged",
           formula="judge: ground-truth statements attributable to the contexts / statements x 100",
           empty_policy="undetermined without ground truth; 0 with no contexts; 100 with no statements",
           cites=("es2024ragas",)),
    Metric("answer_relevance", _M + "judged:answer_relevance", needs=("question", "answer"), better="higher",
           range=(0.0, 100.0), batch=_M + "judged:answer_relevance_batch", resources=("judge",),
           params=("n_questions", "method"), details=_JUDGED + "AnswerRelevanceDetails",
           family="judged",
           formula="judge: mean cosine of n_questions (3) questions generated from the answer with the question "
                   "x 100 (method: embedding), or a rubric x 100 (method: rubric); auto is resolved once per "
                   "run, in the signature",
           empty_policy="undetermined for an empty answer",
           cites=("es2024ragas",)),
    Metric("ragas_score", _M + "judged:ragas_score", needs=("faithfulness", "context_precision", "context_recall", "answer_relevance"),
           better="higher", range=(0.0, 100.0), params=("weights",), details=_JUDGED + "RagasScoreDetails",
           family="judged", derived=True,
           formula="0.3 faithfulness + 0.2 context precision + 0.2 context recall + 0.3 answer relevance, "
                   "missing parts excluded and weights renormalised",
           empty_policy="undetermined only when every component is missing",
           cites=("es2024ragas",)),
    Metric("factual_accuracy", _M + "judged:factual_accuracy", needs=("question", "answer", "ground_truth"), better="higher",
           range=(0.0, 100.0), batch=_M + "judged:factual_accuracy_batch", resources=("judge",), details=_JUDGED + "FactualAccuracyDetails",
           family="judged",
           extra_columns=("grade",),
           formula="G-Eval: (0.5 correctness + 0.3 completeness + 0.2 consistency) x 10; letter grade "
                   "(A >= 80, B >= 60, C >= 40, D >= 20, else E) in factual_accuracy_grade",
           empty_policy="undetermined for an empty answer or without ground truth",
           cites=("liu2023geval",)),
    Metric("answer_class", _M + "judged:answer_class", needs=("question", "answer", "ground_truth"), better="none", range=None,
           kind="label", batch=_M + "judged:answer_class_batch", resources=("judge",), params=("phrases",), details=_JUDGED + "AnswerClassDetails",
           family="judged",
           formula="DON'T KNOW (uncertainty rule: the row's abstained decision), else the judge's CORRECT / WRONG",
           empty_policy="undetermined for an empty answer or without ground truth",
           evidence_keys=("matched",)),
    Metric("semantic_similarity", _M + "embedding:semantic_similarity", needs=("answer", "ground_truth"), better="higher",
           range=(0.0, 100.0), batch=_M + "embedding:semantic_similarity_batch", resources=("encoder",),
           details=_NO_EVIDENCE, family="embedding",
           formula="cosine of answer and ground-truth embeddings x 100, clipped at 0",
           empty_policy="undetermined for an empty answer; 0 for an empty ground truth",
           cites=("reimers2019sbert", "wang2020minilm")),
    Metric("bert_score_f1", _M + "embedding:bert_score_f1", needs=("answer", "ground_truth"), better="higher", range=(0.0, 100.0),
           batch=_M + "embedding:bert_score_batch", resources=("bertscore",), details=_NO_EVIDENCE,
           family="embedding",
           formula="BERTScore F1 x 100 (bert-score; packaged MiniLM by default)",
           empty_policy="undetermined for an empty answer; 0 for an empty ground truth",
           cites=("zhang2020bertscore", "wang2020minilm")),
    Metric("answer_length", _M + "baselines:answer_length", needs=("answer",), better="none", range=(0.0, float("inf")),
           details=_NO_EVIDENCE,
           family="baseline", unit="words", formula="word tokens in the answer (trivial baseline)",
           empty_policy="undetermined for an empty answer"),
    Metric("novel_token_rate", _M + "baselines:novel_token_rate", needs=("answer", "contexts"), better="lower", range=(0.0, 1.0),
           stats=NovelTokens, details=_M + "baselines:NovelTokensFound",
           family="baseline",
           formula="answer tokens absent from the contexts / answer tokens (trivial baseline)",
           empty_policy="undetermined for an empty answer" + _NOT_EN, english_only=True),
    Metric("grounding_risk", _M + "grounding:grounding_risk", needs=("answer", "contexts"), optional=("question",),
           better="lower", range=(0.0, 1.0), batch=_M + "grounding:grounding_batch",
           resources=("nlp", "encoder", "grounding_model", "support_model"),
           params=("align", "phrases", "short_tokens", "short_chars"),
           details=_M + "grounding:GroundingDetails",
           family="detector", unit="probability",
           formula="calibrated probability of hallucination: gradient-boosted trees, monotone in every evidence "
                   "feature (more unsupported evidence never lowers it), on sentence-evidence, mismatch and "
                   "substitution features and the support model's P(supported) of the weakest claim; answer "
                   "length is no input; Platt-scaled",
           empty_policy="undetermined for an empty answer" + _NOT_EN + " or no contexts; 0.0 for an abstention",
           evidence_keys=("matched", "fired"), evidence=_EV + "aligned_sentence_evidence", english_only=True),
    Metric("support", _M + "support:support_score", needs=("answer", "contexts"), optional=("question",), better="higher",
           range=(0.0, 1.0), resources=("encoder", "support_model"), params=("phrases", "short_tokens", "short_chars"),
           details=_M + "support:SupportDetails",
           family="detector", unit="probability",
           formula="min over the answer's claims (its sentences; a span of <= 5 words: the question + the span) of "
                   "max over context windows (4 sentences, stride 3, <= 80 word pieces; the 2 sharing most of the "
                   "claim's content words) of P(window supports claim), from the shipped MiniLM cross-encoder",
           empty_policy="undetermined for an empty answer" + _NOT_EN + ", an abstention or no contexts",
           evidence_keys=("weakest", "windows_capped"), evidence=_EV + "claim_support_evidence",
           cites=("laban2022summac", "wang2020minilm"), english_only=True),
    Metric("twin_lock", _M + "summarization:twin_lock_score", needs=("answer", "contexts"), better="higher", range=(0.0, 10.0),
           batch=_M + "summarization:twin_lock_batch", resources=("nlp",), params=("provider",), details=_M + "summarization.scorers:SummaryDetails",
           family="summary", extra_columns=_SUMMARY_SCORE_KEYS,
           formula="Twin-Lock summary scores (coverage, alignment, hallucination, relevance, bias & toxicity), "
                   "each 0..10; value = their mean",
           empty_policy="undetermined for an empty summary/article or malformed labels",
           evidence=_EV + "summary_claim_evidence"),
    Metric("judge_lock", _M + "summarization:judge_lock_score", needs=("answer", "contexts"), better="higher", range=(0.0, 10.0),
           batch=_M + "summarization:judge_lock_batch", resources=("nlp",), params=("provider",), details=_M + "summarization.scorers:SummaryDetails",
           family="summary", extra_columns=_SUMMARY_SCORE_KEYS,
           formula="Judge-Lock: the Twin-Lock scores with QAG and stricter caps, each 0..10; value = their mean",
           empty_policy="undetermined for an empty summary/article or malformed labels",
           evidence=_EV + "summary_claim_evidence"),
    Metric("ragas_faithfulness", _M + "ragas:faithfulness_row", needs=("question", "answer", "contexts"), better="higher", range=(0.0, 1.0),
           batch=_M + "ragas:faithfulness_rows", resources=("judge", "ragas"), details=_M + "ragas:RagasDetails",
           family="ragas",
           formula="ragas' own Faithfulness on the configured judge endpoint", empty_policy=_RAGAS_EMPTY,
           cites=("es2024ragas",)),
    Metric("ragas_context_precision", _M + "ragas:context_precision_row", needs=("question", "contexts", "ground_truth"), better="higher",
           range=(0.0, 1.0), batch=_M + "ragas:context_precision_rows", resources=("judge", "ragas"), details=_M + "ragas:RagasDetails",
           family="ragas",
           formula="ragas' own ContextPrecision with reference, on the configured judge endpoint",
           empty_policy=_RAGAS_EMPTY,
           cites=("es2024ragas",)),
    Metric("ragas_context_recall", _M + "ragas:context_recall_row", needs=("question", "contexts", "ground_truth"), better="higher",
           range=(0.0, 1.0), batch=_M + "ragas:context_recall_rows", resources=("judge", "ragas"), details=_M + "ragas:RagasDetails",
           family="ragas",
           formula="ragas' own ContextRecall on the configured judge endpoint", empty_policy=_RAGAS_EMPTY,
           cites=("es2024ragas",)),
]
# the built-ins (immutable) followed by metrics registered for this process: a config's custom judged metrics
# and register_metric()'s functions (evalkit.metrics.custom says why a view and what may replace what)
REGISTRY: RegistryView = RegistryView({m.name: m for m in _REGISTRY_LIST})
# old names still accepted (with a MetricRenamedWarning) and what they now mean
RENAMED = {"grounding": "grounding_risk"}


class MetricRenamedWarning(DeprecationWarning):
    """An old metric name was used; the warning names the new one (``evalkit`` prints it as a note)."""

# grounding_risk reads the support model (the embed extra): without it the default run leaves it out, as it
# leaves out a metric whose columns the data lacks
DEFAULT_METRICS = ("relevance", "completeness", "hallucination", "grounding_risk", "exact_match", "keyword_coverage",
                   "number_match", "answer_completeness", "source_citation", "dont_know", "fact_checks")
# run by default when their resource is available (a configured judge; the embed extra)
OPTIONAL_DEFAULTS = ("faithfulness", "context_precision", "context_recall", "answer_relevance", "ragas_score",
                     "factual_accuracy", "answer_class", "semantic_similarity", "bert_score_f1", "support")


def verdict_roles(profile: str = "seed") -> tuple:
    """The ``(metric, VerdictRole)`` pairs of a named verdict profile, in the order the verdict checks them.

    >>> [name for name, _ in verdict_roles("seed")]
    ['hallucination', 'relevance', 'completeness']
    >>> [name for name, _ in verdict_roles("evalkit")]
    ['unsupported_facts', 'reference_conflict', 'answers_question', 'question_coverage']
    """
    return tuple(sorted(((m.name, m.verdict_role) for m in REGISTRY.values()
                         if m.verdict_role is not None and m.verdict_role.profile == profile),
                        key=lambda pair: pair[1].order))


def _caller_outside_evalkit() -> int:
    """``stacklevel`` of the nearest caller outside evalkit: the warning then names the user's line, and
    Python's default filters (DeprecationWarning shown for ``__main__`` only) show it in scripts and notebooks."""
    import sys
    from pathlib import Path

    package = str(Path(__file__).resolve().parents[1])
    frame, level = sys._getframe(2), 2  # 1 is canonical_name, which warns
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def canonical_name(name: str) -> str:
    """The registry name for ``name``: itself, or a renamed metric's new name with a :class:`MetricRenamedWarning`
    (a ``DeprecationWarning``).

    Examples
    --------
    >>> canonical_name("relevance")
    'relevance'
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     canonical_name("grounding")
    'grounding_risk'
    >>> issubclass(caught[0].category, DeprecationWarning)
    True
    >>> print(caught[0].message)
    metric 'grounding' is now called 'grounding_risk' (lower is better); the old name still works but will be removed
    """
    import warnings

    new = RENAMED.get(name)
    if new is None:
        return name
    warnings.warn(f"metric {name!r} is now called {new!r} ({REGISTRY[new].better} is better); the old name "
                  "still works but will be removed", MetricRenamedWarning, stacklevel=_caller_outside_evalkit())
    return new


def get_metric(name: str) -> Metric:
    """The registered metric called ``name`` (an old name gives the renamed metric and a MetricRenamedWarning;
    KeyError lists the known names)."""
    try:
        return REGISTRY[canonical_name(name)]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known metrics: {', '.join(REGISTRY)}") from None


_FUNCTIONS = {f: m for m, fs in {
    "anchors": ["hallucination"], "checks": ["answers_question", "question_coverage", "unsupported_facts"],
    "baselines": ["answer_length", "novel_token_rate"],
    "embedding": ["bert_score_f1", "semantic_similarity"], "factchecks": ["fact_checks"],
    "grounding": ["grounding_risk"], "lexical": ["completeness", "relevance"],
    "judged": ["answer_class", "answer_relevance", "context_precision", "context_recall", "factual_accuracy",
               "faithfulness", "ragas_score"],
    "summarization": ["judge_lock_score", "twin_lock_score"],
    "reference": ["answer_completeness", "dont_know", "exact_match", "keyword_coverage", "number_match",
                  "source_citation"],
    "support": ["support_score"]}.items() for f in fs}


def __getattr__(name: str):
    """The metric functions (``from evalkit.metrics import relevance``), imported on first use."""
    if name in _FUNCTIONS:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_FUNCTIONS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["REGISTRY", "verdict_roles", "register_metric", "unregister_metric", "DEFAULT_METRICS", "RENAMED", "Metric",
           "MetricRenamedWarning", "Score", "VerdictRole", "canonical_name", "get_metric", *_FUNCTIONS]
