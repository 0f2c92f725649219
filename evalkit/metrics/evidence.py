"""Typed evidence: what a metric's details say about the answer, read once into frozen records.

A metric's registry entry names the reader of its details (``Metric.evidence``, a ``"module:function"`` of this
module, chosen by the *shape* of the details: anchors, summary claims, claims with their best passage, sentences
aligned with the context, question keywords, declining phrases). The evidence view (:mod:`evalkit.publish.view`) asks
the registry for these records, so it never needs to know which metric keeps which key.

Readers are pure and total: a missing or malformed part of the details reads as "nothing recorded", never an
error, since the view also shows results saved by older versions.

>>> e = anchor_evidence({"anchors": [{"type": "number", "text": "1947", "supported": False, "evidence": None}]},
...                     "hallucination")
>>> e.anchors
(Anchor(kind='number', text='1947', supported=False, evidence=None, status=''),)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from evalkit.base.data import DetailsError, details_of_cell


@dataclass(frozen=True)
class Anchor:
    """A span of the answer a metric checked: its kind, text, verdict, the context text that supported it (or
    partly did; None when nothing did) and the scorer's own word for the verdict when it has one."""

    kind: str
    text: str
    supported: bool
    evidence: str | None = None
    status: str = ""


@dataclass(frozen=True)
class ClaimSupport:
    """One claim the support model checked: its text, P(its best window supports it), that window's text, and
    whether it is the weakest claim (the one that sets the value)."""

    claim: str
    probability: float
    window: str
    weakest: bool


@dataclass(frozen=True)
class AlignedSentence:
    """An answer sentence and the context sentence a detector aligned with it."""

    sentence: str
    evidence: str


@dataclass(frozen=True)
class Evidence:
    """One metric's evidence on one row.

    ``anchors`` is None for a metric that checks no spans of the answer (a tuple, maybe empty, for one that
    does); ``missing_keywords`` likewise for one that looks for the question's keywords. ``abstention`` is None
    when the details do not say.
    """

    anchors: tuple[Anchor, ...] | None = None
    claims: tuple[ClaimSupport, ...] = ()
    aligned: tuple[AlignedSentence, ...] = ()
    missing_keywords: tuple[str, ...] | None = None
    declined: tuple[str, ...] = ()
    abstention: bool | None = None


def _records(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, (list, tuple)) else []


def _strings(value: Any) -> tuple[str, ...]:
    """A list of texts as a tuple; one text as a tuple of one; anything else (None, a number) as nothing."""
    if isinstance(value, str):
        return (value,) if value else ()
    return tuple(str(v) for v in value if v is not None) if isinstance(value, (list, tuple)) else ()


def _probability(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
    return float(value) if ok else None


def _abstention(details: Mapping[str, Any]) -> bool | None:
    value = details.get("abstention")
    return None if value is None else bool(value)


def anchor_evidence(details: Mapping[str, Any], metric: str) -> Evidence:
    """The anchors (numbers, dates, names, ...) a metric checked against the contexts, in answer order.

    >>> anchor_evidence({"abstention": True, "matched": ["i don't know"], "anchors": []}, "m")
    Evidence(anchors=(), claims=(), aligned=(), missing_keywords=None, declined=("i don't know",), abstention=True)
    """
    anchors = tuple(Anchor(str(a.get("type") or "anchor"), str(a.get("text") or ""), bool(a.get("supported")),
                           None if a.get("evidence") is None else str(a["evidence"]), str(a.get("status") or ""))
                    for a in _records(details.get("anchors")))
    return Evidence(anchors=anchors, declined=_strings(details.get("matched")), abstention=_abstention(details))


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
    for c in _records(part.get("claims") if isinstance(part, Mapping) else None):
        text, label = str(c.get("text") or ""), str(c.get("label") or "")
        evidence = "; ".join(_strings(c.get("evidence"))) or None
        out.append(Anchor(f"claim ({metric})", text, label == "Supported", evidence, label))
        out += [Anchor(f"anchor ({metric})", a, False) for a in _strings(c.get("unsupported_anchors"))
                if a != text.rstrip(".!? ")]
    return Evidence(anchors=tuple(out))


def claim_support_evidence(details: Mapping[str, Any], metric: str) -> Evidence:
    """Every claim with its best window and probability, the weakest marked (a claim recorded without a
    probability is left out: there is nothing to show for it).

    >>> claim_support_evidence({"sentences": [{"sentence": "A.", "probability": 0.9, "window_text": "A. B."}],
    ...                         "weakest": 0}, "support").claims
    (ClaimSupport(claim='A.', probability=0.9, window='A. B.', weakest=True),)
    """
    weakest = details.get("weakest")
    claims = tuple(ClaimSupport(str(c.get("sentence") or ""), p, str(c.get("window_text") or ""), i == weakest)
                   for i, c in enumerate(_records(details.get("sentences")))
                   if (p := _probability(c.get("probability"))) is not None)
    return Evidence(claims=claims, declined=_strings(details.get("matched")), abstention=_abstention(details))


def aligned_sentence_evidence(details: Mapping[str, Any], metric: str) -> Evidence:
    """Each answer sentence with the context sentence aligned with it.

    >>> aligned_sentence_evidence({"sentences": [{"sentence": "A.", "evidence": "B."}]}, "m").aligned
    (AlignedSentence(sentence='A.', evidence='B.'),)
    """
    aligned = tuple(AlignedSentence(str(s["sentence"]), str(s.get("evidence") or ""))
                    for s in _records(details.get("sentences")) if s.get("sentence"))
    return Evidence(aligned=aligned, declined=_strings(details.get("matched")), abstention=_abstention(details))


def keyword_evidence(details: Mapping[str, Any], metric: str) -> Evidence:
    """The question's keywords the answer lacks.

    >>> keyword_evidence({"keywords": ["paris", "capital"], "missing": ["capital"]}, "m").missing_keywords
    ('capital',)
    """
    return Evidence(missing_keywords=_strings(details.get("missing")))


def decline_evidence(details: Mapping[str, Any], metric: str) -> Evidence:
    """The declining phrases that matched the answer.

    >>> decline_evidence({"matched": ["not sure"]}, "m").declined
    ('not sure',)
    """
    return Evidence(declined=_strings(details.get("matched")))


def details_of(row: Mapping[str, Any], metric: str) -> dict[str, Any]:
    """The row's ``<metric>_details`` as a dict (saved as JSON text; already a dict after some readers); an
    unreadable cell reads as a reason, so a view of an old or damaged file still draws.

    >>> details_of({"relevance_details": '{"matched": 2}'}, "relevance")
    {'matched': 2}
    """
    raw = row.get(f"{metric}_details")
    try:
        return details_of_cell(raw)
    except DetailsError:
        return {"reason": f"unreadable evidence: {str(raw)[:80]}"}


def evidence_of(row: Mapping[str, Any], metric: str) -> Evidence:
    """What ``metric``'s details on this row say, as typed records, through the reader its registry entry names
    (empty when it has no reader or no details)."""
    from evalkit.metrics import REGISTRY

    m = REGISTRY.get(metric)
    reader = m.evidence if m is not None else None
    return Evidence() if reader is None else reader(details_of(row, metric), metric)
