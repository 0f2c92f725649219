"""Typed evidence: what a metric's details say about the answer, read once into frozen records.

A metric's declaration names the reader of its details (``Metric.evidence``). This module holds the records, the
readers of the two shapes several metrics (and a user's own, :func:`evalkit.metrics.register_metric`) share, anchors
and question keywords, and the small helpers a reader uses; a reader of one metric's own shape (a summary scorer's
claims, the support model's claims and windows, the detector's aligned sentences, the declining phrases) lives in
that metric's module beside its declaration. The evidence view (:mod:`evalkit.publish.view`) asks the registry for
these records, so it never needs to know which metric keeps which key.

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


def records_in(value: Any) -> list[Mapping[str, Any]]:
    """The mappings of a list (a details key holding records); anything else as none."""
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, (list, tuple)) else []


def texts_in(value: Any) -> tuple[str, ...]:
    """A list of texts as a tuple; one text as a tuple of one; anything else (None, a number) as nothing."""
    if isinstance(value, str):
        return (value,) if value else ()
    return tuple(str(v) for v in value if v is not None) if isinstance(value, (list, tuple)) else ()


def probability_in(value: Any) -> float | None:
    """A number as a float; a missing, boolean or NaN value as None."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
    return float(value) if ok else None


def abstention_in(details: Mapping[str, Any]) -> bool | None:
    """Whether the details say the answer abstained (None: they do not say)."""
    value = details.get("abstention")
    return None if value is None else bool(value)


def anchor_evidence(details: Mapping[str, Any], metric: str) -> Evidence:
    """The anchors (numbers, dates, names, ...) a metric checked against the contexts, in answer order.

    >>> anchor_evidence({"abstention": True, "matched": ["i don't know"], "anchors": []}, "m")
    Evidence(anchors=(), claims=(), aligned=(), missing_keywords=None, declined=("i don't know",), abstention=True)
    """
    anchors = tuple(Anchor(str(a.get("type") or "anchor"), str(a.get("text") or ""), bool(a.get("supported")),
                           None if a.get("evidence") is None else str(a["evidence"]), str(a.get("status") or ""))
                    for a in records_in(details.get("anchors")))
    return Evidence(anchors=anchors, declined=texts_in(details.get("matched")), abstention=abstention_in(details))





def keyword_evidence(details: Mapping[str, Any], metric: str) -> Evidence:
    """The question's keywords the answer lacks.

    >>> keyword_evidence({"keywords": ["paris", "capital"], "missing": ["capital"]}, "m").missing_keywords
    ('capital',)
    """
    return Evidence(missing_keywords=texts_in(details.get("missing")))



def details_of(row: Mapping[str, Any], metric: str) -> dict[str, Any]:
    """The row's ``<metric>_details`` as a dict (saved as JSON text; already a dict after some readers); an
    unreadable cell reads as a reason, so a view of an old or damaged file still draws.

    >>> details_of({"relevance_details": '{"matched": 2}'}, "relevance")
    {'matched': 2}
    """
    from evalkit.base.data import DetailsError, details_of_cell  # pandas: read when a row is, not with the registry

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


# readers that moved to their metric's module (a user's register_metric(evidence=...) may still name them here)
_MOVED = {"summary_claim_evidence": "evalkit.metrics.summarization.scorers",
          "claim_support_evidence": "evalkit.metrics.support", "aligned_sentence_evidence": "evalkit.metrics.grounding",
          "decline_evidence": "evalkit.metrics.reference"}


def __getattr__(name: str):
    if name in _MOVED:
        import importlib

        return getattr(importlib.import_module(_MOVED[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
