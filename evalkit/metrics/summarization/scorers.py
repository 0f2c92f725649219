"""Registry entry points of the summary scorers: the summary is the answer, the article the joined contexts.

A label provider (offline or judge) labels the pair; :func:`~evalkit.metrics.summarization.arithmetic.twin_lock`
or :func:`~evalkit.metrics.summarization.arithmetic.judge_lock` scores the labels; the registry's value is the
mean of the five scores.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from evalkit.metrics.base import Details, FrozenMap, Metric, Score, Undetermined, freeze
from evalkit.metrics.evidence import Anchor, Evidence, records_in, texts_in
from evalkit.metrics.summarization.arithmetic import ORDER, judge_lock, overall, twin_lock
from evalkit.metrics.summarization.labels_judge import JudgeLabeler
from evalkit.metrics.summarization.labels_offline import OfflineLabeler

SCORE_KEYS = tuple(f"{k}_score" for k in ORDER)
PROVIDERS = ("offline", "judge")


def make_labeler(provider: str, judge: Any = None, nlp: Any = None,
                 context_index: dict | None = None) -> OfflineLabeler | JudgeLabeler:
    """The label provider called ``provider``: ``"offline"`` (needs ``nlp``, or loads the default spaCy
    pipeline) or ``"judge"`` (needs a configured ``judge``).

    Create one per run and pass it to every row: building the offline labeler loads spaCy and VADER.

    Examples
    --------
    >>> make_labeler("gpt")
    Traceback (most recent call last):
    ...
    ValueError: summary labels provider must be 'offline' or 'judge', got 'gpt'
    """
    if provider == "offline":
        return OfflineLabeler(nlp, context_index)
    if provider == "judge":
        if judge is None:
            from evalkit.judge.client import NOT_CONFIGURED, JudgeNotConfigured

            raise JudgeNotConfigured(NOT_CONFIGURED)
        return JudgeLabeler(judge)
    raise ValueError(f"summary labels provider must be 'offline' or 'judge', got {provider!r}")


@dataclass(frozen=True, eq=False)
class SummaryDetails(Details):
    """A summary scorer's evidence on one row: the variant, each of the five metrics' objects (score, band, caps
    and what they were computed from: claims, key points, QAG answers), Judge-Lock's evidence spans, who gave
    the labels, each metric's score, and the reason when a metric's labels were malformed (no value)."""

    _optional = frozenset({"evidence_spans", "reason"})
    variant: str
    coverage: FrozenMap
    alignment: FrozenMap
    hallucination: FrozenMap
    relevance: FrozenMap
    bias_toxicity: FrozenMap
    provider: Any
    coverage_score: float | None
    alignment_score: float | None
    hallucination_score: float | None
    relevance_score: float | None
    bias_toxicity_score: float | None
    evidence_spans: tuple[str, ...] | None = None
    reason: str | None = None

    # saved in the scorer's own order: the five objects, Judge-Lock's spans, then who labelled and the scores
    def _keys(self) -> list[str]:
        present = super()._keys()
        head = ["variant", *ORDER] + (["evidence_spans"] if "evidence_spans" in present else [])
        return head + [k for k in present if k not in head]


def _lock(variant: str, answer: str | None, contexts: Sequence[str] | None, labeler: Any) -> Score:
    article = "\n\n".join(c for c in (contexts or []) if c)
    if not (answer or "").strip():  # the same outcome as every metric's (evalkit.metrics.guard)
        return Score(None, Undetermined("empty answer"))
    if not article.strip():
        return Score(None, Undetermined("empty article"))
    labels = labeler.labels(article, answer, variant)
    result = (twin_lock if variant == "twin" else judge_lock)(labels)
    value = overall(result)
    reason = None if value is not None else "; ".join(f"{k}: {result[k]['error']}" for k in ORDER
                                                      if "error" in result[k])
    spans = result.get("evidence_spans")
    details = SummaryDetails(result["variant"], **{k: freeze(result[k]) for k in ORDER},
                             provider=freeze(labels.get("provider", {})),
                             **{f"{k}_score": result[k].get("score") for k in ORDER},
                             evidence_spans=None if spans is None else tuple(spans), reason=reason)
    return Score(value, details)


def twin_lock_score(answer: str | None, contexts: Sequence[str] | None, *, provider: str = "offline", judge=None,
                    nlp=None, labeler=None) -> Score:
    """Twin-Lock on a summary (the answer) of its article (the joined contexts): the mean of the five
    0..10 scores, with every metric's object in the details (see :func:`twin_lock`).

    ``labeler`` (from :func:`make_labeler`) is reused when given; otherwise one is built for this call
    from ``provider``, ``judge`` and ``nlp``, which costs a spaCy and VADER load per call.

    Empty policy: undetermined for an empty summary (reason "empty answer") or article; undetermined (with
    the reasons) when any metric's labels are malformed.

    Examples
    --------
    >>> article = ["The city council approved a budget of 12 million dollars on Monday. The budget funds two new "
    ...            "schools and a library. Critics said the plan ignores road repairs."]
    >>> s = twin_lock_score("The council approved a 12 million dollar budget for two schools and a library.", article)
    >>> s.value, s.details["coverage_score"], s.details["hallucination_score"], s.details["relevance_score"]
    (8.15, 7.76, 10.0, 5.0)
    """
    return _lock("twin", answer, contexts, labeler or make_labeler(provider, judge, nlp))


def judge_lock_score(answer: str | None, contexts: Sequence[str] | None, *, provider: str = "offline", judge=None,
                     nlp=None, labeler=None) -> Score:
    """Judge-Lock on a summary (the answer) of its article (the joined contexts); see :func:`judge_lock`.

    Empty policy: as :func:`twin_lock_score`.

    Examples
    --------
    >>> article = ["The city council approved a budget of 12 million dollars on Monday. The budget funds two new "
    ...            "schools and a library. Critics said the plan ignores road repairs."]
    >>> s = judge_lock_score("The council approved a 12 million dollar budget for two schools and a library.", article)
    >>> s.value is None, s.details["coverage"]["error"]  # Judge-Lock needs 4 to 7 key points; this article has 3
    (True, 'coverage: expected 4-7 key points, got 3')
    """
    return _lock("judge", answer, contexts, labeler or make_labeler(provider, judge, nlp))


def _lock_batch(variant: str):
    def batch(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None = None,
              resources: Any = None) -> list:
        provider = (params or {}).get("provider", "offline")
        if hasattr(resources, "labeler"):  # the runner's: created once per run, signed in the run signature
            labeler = resources.labeler(provider)
        else:
            labeler = make_labeler(provider, getattr(resources, "judge", None) if provider == "judge" else None,
                                   getattr(resources, "nlp", None))
        out = []
        for a, c in zip(inputs["answer"], inputs["contexts"]):
            try:
                out.append(_lock(variant, a, c, labeler))
            except Exception as e:  # recorded per row
                out.append(e)
        return out

    return batch


twin_lock_batch, judge_lock_batch = _lock_batch("twin"), _lock_batch("judge")


def summary_claim_evidence(details: Mapping[str, Any], metric: str) -> Evidence:
    """A summary scorer's claims as anchors: each claim with its label, then the numbers and names inside it
    that the document does not support.

    >>> e = summary_claim_evidence({"hallucination": {"claims": [{"text": "Sales rose 5%.", "label": "Unsupported",
    ...     "evidence": [], "unsupported_anchors": ["5%"]}]}}, "twin_lock")
    >>> [(a.kind, a.text, a.supported, a.status) for a in e.anchors]
    [('claim (twin_lock)', 'Sales rose 5%.', False, 'Unsupported'), ('anchor (twin_lock)', '5%', False, '')]
    """
    part = details.get("hallucination")
    out: list[Anchor] = []
    for c in records_in(part.get("claims") if isinstance(part, Mapping) else None):
        text, label = str(c.get("text") or ""), str(c.get("label") or "")
        evidence = "; ".join(texts_in(c.get("evidence"))) or None
        out.append(Anchor(f"claim ({metric})", text, label == "Supported", evidence, label))
        out += [Anchor(f"anchor ({metric})", a, False) for a in texts_in(c.get("unsupported_anchors"))
                if a != text.rstrip(".!? ")]
    return Evidence(anchors=tuple(out))


# ---------------------------------------------------------------------------------------------------------------
# The declarations: this module's metrics as the registry lists them (evalkit.metrics collects METRICS)
# ---------------------------------------------------------------------------------------------------------------
METRICS = (
    Metric("twin_lock", twin_lock_score, needs=("answer", "contexts"), better="higher", range=(0.0, 10.0),
           batch=twin_lock_batch, resources=("nlp",), params=("provider",), details=SummaryDetails,
           family="summary", extra_columns=SCORE_KEYS,
           formula="Twin-Lock summary scores (coverage, alignment, hallucination, relevance, bias & toxicity), "
                   "each 0..10; value = their mean",
           empty_policy="undetermined for an empty summary/article or malformed labels",
           evidence=summary_claim_evidence),
    Metric("judge_lock", judge_lock_score, needs=("answer", "contexts"), better="higher", range=(0.0, 10.0),
           batch=judge_lock_batch, resources=("nlp",), params=("provider",), details=SummaryDetails,
           family="summary", extra_columns=SCORE_KEYS,
           formula="Judge-Lock: the Twin-Lock scores with QAG and stricter caps, each 0..10; value = their mean",
           empty_policy="undetermined for an empty summary/article or malformed labels",
           evidence=summary_claim_evidence),
)
