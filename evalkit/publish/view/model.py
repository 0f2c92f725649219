"""Evidence you can see, the model: one scored row read into a typed view, :class:`RowView` (:func:`row_view`).

The view holds the answer with every anchor the hallucination metric checked (numbers, dates, times, entities,
subject-verb-object claims; for summaries, the Twin-Lock/Judge-Lock claims), each supported, partly supported or
not, with the context snippet that supported it or the closest context sentence the grounding detector aligned
with its answer sentence; the verdict's rules in the order the verdict checks them (value, threshold, fired or
not, which rule decided); every metric on its registry scale with its direction and evidence; and the support
detector's claims with the passage each was checked against. :mod:`evalkit.publish.view.html` and
:mod:`evalkit.publish.view.text` draw it; :func:`evalkit.publish.view.show.show` (``evalkit.show``) returns one that draws itself.

Nothing here computes a score: values and evidence are read from the results; which rule fires is decided
by :func:`evalkit.decide.verdict.verdict_for`, the verdict's own function.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from evalkit.base.config import VerdictThresholds
from evalkit.base.data import error_of, is_missing
from evalkit.metrics import REGISTRY, Metric
from evalkit.metrics.evidence import AlignedSentence, Anchor, ClaimSupport, Evidence, details_of, evidence_of
from evalkit.text import AnswerDecision
from evalkit.base.thresholds import Threshold
from evalkit.decide.verdict import profile_held_by, rules_for, verdict_for

ABSTAIN_RULE = "ABSTAIN if the answer declines to answer"
EMPTY_RULE = "FAIL if the answer is empty"
LANGUAGE_RULE = "UNDETERMINED if the answer is not in English"
VERDICT_CLASS = {"PASS": "ek-pass", "WARN": "ek-warn", "FAIL": "ek-fail", "ABSTAIN": "ek-abstain",
                 "UNDETERMINED": "ek-undetermined"}
# when anchors overlap (a number inside a claim), the piece they share takes the worst one's colour
SEVERITY = ("ek-ok", "ek-part", "ek-bad")


# ---------------------------------------------------------------------------------------------------------
# what one row holds
@dataclass(frozen=True)
class Highlight:
    """One anchor located in the answer: ``answer[start:end]``; ``ref`` is its number in the list."""

    ref: int
    start: int
    end: int
    type: str
    text: str
    supported: bool
    evidence: str | None  # the context text that supported it (or partly did; None when nothing did)
    closest: str | None  # the context sentence aligned with the anchor's answer sentence (grounding detector)
    status: str = ""  # the scorer's own word when it has one ("Partially", "Unsupported")

    @property
    def css_class(self) -> str:
        return "ek-ok" if self.supported else ("ek-part" if self.status == "Partially" else "ek-bad")

    @property
    def sign(self) -> str:
        return "✓" if self.supported else ("~" if self.status == "Partially" else "✗")

    def context_note(self) -> tuple[str, str | None]:
        """``(what was found, the context text checked)``; a scorer that says why in words (``status``: "in the
        context £230 goes with non-members") is quoted with the sentence it checked."""
        if self.supported:
            return ("supported; context", self.evidence) if self.evidence or not self.status else (
                f"supported: {self.status}", None)  # "stated in the question or counted by the answer's list"
        if self.status not in ("", "Partially", "Unsupported"):
            return self.status + ("; context sentence checked" if self.evidence else ""), self.evidence
        state = f"{self.status.lower()} supported" if self.status == "Partially" else "not found in the contexts"
        if self.evidence:
            return f"{state}; closest context", self.evidence
        if self.closest:
            return f"{state}; closest context sentence checked", self.closest
        return "not found in any context", None

    def explanation(self) -> str:
        """One line: what was checked and against which context text."""
        state, ctx = self.context_note()
        return f"{self.type} “{self.text}”: {state}" + (f": “{ctx}”" if ctx else "")


@dataclass(frozen=True)
class RuleCheck:
    """One verdict rule on this row: the value it read, whether it fired, whether it decided the verdict."""

    outcome: str
    rule: str  # "hallucination > 0.5"
    metric: str | None
    value: float | None
    fired: bool | None  # None: the value is missing, so the rule could not be checked
    decided: bool
    note: str = ""


@dataclass(frozen=True)
class MetricView:
    """One metric's value on its registry scale, its direction, and the evidence keys it declares."""

    name: str
    value: Any
    shown: str  # the value formatted for its scale, or "undetermined"
    reads_as: str
    direction: str
    evidence: tuple[tuple[str, str], ...]
    reason: str | None


@dataclass(frozen=True)
class RowView:
    """One row of scored results, ready to display (``_repr_html_`` in notebooks, ``str`` in a console)."""

    label: str
    question: str | None
    answer: str | None
    ground_truth: str | None
    contexts: tuple[str, ...]
    highlights: tuple[Highlight, ...]
    unlocated: tuple[Highlight, ...]  # anchors whose text was not found verbatim in the answer
    verdict: str | None
    verdict_rule: str | None
    rules: tuple[RuleCheck, ...]
    metrics: tuple[MetricView, ...]
    notes: tuple[str, ...]
    support: tuple[ClaimSupport, ...] = ()  # the support detector's claims, when the run scored it
    profile: str = "seed"  # the named verdict profile whose rules decided


# ---------------------------------------------------------------------------------------------------------
# reading the results

def text_or_none(v: Any) -> str | None:
    return None if is_missing(v) else str(v)


def _contexts(v: Any) -> tuple[str, ...]:
    if isinstance(v, str):
        return (v,)
    if isinstance(v, (list, tuple, np.ndarray)):
        return tuple(str(c) for c in v if not is_missing(c))
    return ()


def find_row(results: pd.DataFrame, row_id: Any, system: str | None = None) -> tuple[int, pd.Series]:
    """``(position, row)`` for the row whose ``id`` is ``row_id`` (and ``system``, when ids repeat across
    systems); without an ``id`` column, ``row_id`` is a position. KeyError names the id and the row count."""
    n = len(results)
    if "id" not in results.columns:
        if isinstance(row_id, (int, np.integer)) and not isinstance(row_id, bool) and 0 <= row_id < n:
            return int(row_id), results.iloc[int(row_id)]
        raise KeyError(f"no row {row_id!r}: the results have no 'id' column, so pass a position from 0 to {n - 1} "
                       f"({n} rows)")
    mask = (results["id"].astype(str) == str(row_id)).to_numpy().copy()
    if system is not None and "system" in results.columns:
        mask &= (results["system"].astype(str) == str(system)).to_numpy()
    hits = np.flatnonzero(mask)
    where = f" and system {system!r}" if system is not None else ""
    if len(hits) == 0:
        examples = ", ".join(repr(x) for x in pd.unique(results["id"].astype(str))[:3])
        raise KeyError(f"no row with id {row_id!r}{where} among the {n} rows (ids look like {examples})")
    if len(hits) > 1:
        systems = results["system"].iloc[hits].astype(str).tolist() if "system" in results.columns else []
        hint = f"; pass system= one of {systems}" if systems else ""
        raise KeyError(f"id {row_id!r}{where} names {len(hits)} of the {n} rows (positions {hits.tolist()}){hint}")
    return int(hits[0]), results.iloc[int(hits[0])]


_CUT_FIELDS = tuple(f.name for f in dataclasses.fields(VerdictThresholds) if f.name not in ("profile", "named"))


def thresholds_of(results: pd.DataFrame) -> VerdictThresholds:
    """The thresholds the results were scored with (``attrs["evalkit"]``), else the defaults under the named profile
    whose metrics the results hold (:func:`evalkit.decide.verdict.profile_held_by`)."""
    saved = ((results.attrs.get("evalkit") or {}).get("config") or {}).get("thresholds")
    if not isinstance(saved, Mapping):
        return profile_held_by(results.columns)
    cuts = {k: (None if saved[k] is None else float(saved[k])) for k in _CUT_FIELDS if k in saved}
    profile = tuple(Threshold(**r) for r in saved.get("profile") or () if isinstance(r, Mapping))
    return VerdictThresholds(**cuts, profile=profile, named=str(saved.get("named") or "seed"))


# ---------------------------------------------------------------------------------------------------------
# the metrics' typed evidence (each read by the reader its registry entry names)
def row_evidence(row: Mapping[str, Any]) -> list[Evidence]:
    """The typed evidence of every metric this row holds details of, in registry order (the first metric
    holding a kind of evidence is the one shown: the hallucination metric's anchors before a summary scorer's)."""
    return [evidence_of(row, name) for name in REGISTRY
            if f"{name}_details" in row and REGISTRY.get(name).evidence is not None]


def _closest_sentences(evidence: Sequence[Evidence]) -> tuple[AlignedSentence, ...]:
    """The answer's sentences with their aligned context sentences, from the first detector that aligned them."""
    return next((e.aligned for e in evidence if e.aligned), ())


def _closest_for(answer: str, start: int, aligned: Sequence[AlignedSentence]) -> str | None:
    """The context sentence aligned with the answer sentence that holds position ``start`` (None: none)."""
    cursor = 0
    for a in aligned:
        at = answer.find(a.sentence, cursor) if a.sentence else -1
        if at < 0:
            continue
        cursor = at + len(a.sentence)
        if at <= start < cursor:
            return a.evidence or None
    return None


def highlights(row: Mapping[str, Any], prefer: str | None = None, *, evidence: Sequence[Evidence] | None = None,
               only: bool = False) -> tuple[tuple[Highlight, ...], tuple[Highlight, ...]]:
    """The anchors a metric checked, located in the answer, and those whose text could not be found.

    ``prefer``'s anchors when it has any (the metric whose rule is being shown), else the first metric's in
    registry order (the hallucination metric's, else a summary scorer's claims), read through the metrics'
    evidence readers (:mod:`evalkit.metrics.evidence`). Anchors come
    in text order (``evalkit.metrics.anchors.extract_anchors``), so each is searched from the previous one's
    start: a claim and a number inside it overlap, a repeated number maps to its own mention. ``evidence``: the
    row's :func:`row_evidence` when the caller has read it already. ``only``: ``prefer``'s anchors even when it
    has none (the profile's metric found nothing to mark; another metric's marks would contradict its verdict).
    """
    answer = text_or_none(row.get("answer")) or ""
    evidence = row_evidence(row) if evidence is None else evidence
    own = evidence_of(row, prefer).anchors if prefer is not None else None
    anchors: tuple[Anchor, ...] = own if own is not None and (own or only) else next(
        (e.anchors for e in evidence if e.anchors), ())
    aligned = _closest_sentences(evidence)
    found, lost, cursor = [], [], 0
    for ref, a in enumerate(anchors, start=1):
        text = a.text
        at = answer.find(text, cursor) if text else -1
        if at < 0 and text:
            at = answer.find(text)
        h = Highlight(ref, max(at, 0), max(at, 0) + len(text) if at >= 0 else 0, a.kind, text, a.supported,
                      text_or_none(a.evidence), None if a.supported or at < 0 else _closest_for(answer, at, aligned),
                      a.status)
        if at >= 0:
            found.append(h)
            cursor = at
        else:
            lost.append(h)
    return tuple(found), tuple(lost)


# ---------------------------------------------------------------------------------------------------------
# the verdict's rules and the metrics
def row_decision(row: Mapping[str, Any], *, evidence: Sequence[Evidence] | None = None) -> AnswerDecision:
    """The row decision the runner stored (empty, abstained, language); for results saved before it was
    stored, the abstention as the stored verdict or the first metric's evidence recorded it (never re-read
    from the answer; ``evidence``: the row's :func:`row_evidence` when the caller has read it already)."""
    stored = AnswerDecision.from_columns(row)
    if stored is not None:
        return stored
    if text_or_none(row.get("verdict")) is not None:
        return AnswerDecision(False, row.get("verdict") == "ABSTAIN")
    said = [e.abstention for e in (row_evidence(row) if evidence is None else evidence) if e.abstention is not None]
    return AnswerDecision(False, bool(said and said[0]))


def missing_reason(row: Mapping[str, Any], metric: str) -> str | None:
    """Why ``metric`` has no value on this row: its own reason, else its entry in the ``error`` column."""
    err = error_of(row.get("error"), metric)
    if err is not None:
        return f"error: {err.type}: {err.message}"
    return details_of(row, metric).get("reason")


def rule_checks(row: Mapping[str, Any], thresholds: VerdictThresholds | None = None, *,
                evidence: Sequence[Evidence] | None = None) -> tuple[RuleCheck, ...]:
    """Every verdict rule on this row, in the verdict's order, with its value and whether it fired
    (``evidence``: the row's :func:`row_evidence` when the caller has read it already).

    The rule that decided is the one :func:`evalkit.decide.verdict.verdict_for` reports (first match wins; a missing
    value stops the verdict as UNDETERMINED); rules after it are shown with their values but did not decide.
    """
    rules = [r for r in rules_for(thresholds) if r.metric in row]
    d = row_decision(row, evidence=evidence)
    values = {r.metric: row.get(r.metric) for r in rules}
    outcome, decided_by = verdict_for(values, rules, abstained=d.abstained, empty=d.empty, language=d.language)
    out = []
    if d.empty:  # shown only when they apply: every other row would list two rows that never fire
        out.append(RuleCheck("FAIL", EMPTY_RULE, None, None, True, True, "a failure of the system, not an abstention"))
    elif not d.english:
        out.append(RuleCheck("UNDETERMINED", LANGUAGE_RULE, None, None, True, True, f"detected: {d.language}"))
    abstained = d.abstained or bool(out)  # a row decided above: no metric rule decides it
    out.append(RuleCheck("ABSTAIN", ABSTAIN_RULE, None, None, d.abstained, d.abstained))
    for r in rules:
        v = values[r.metric]
        if is_missing(v):
            out.append(RuleCheck(r.outcome, str(r), r.metric, None, None, decided_by == f"{r.metric} missing",
                                 missing_reason(row, r.metric) or "no value"))
            continue
        fired = r.flags(float(v))
        out.append(RuleCheck(r.outcome, str(r), r.metric, float(v), fired,
                             not abstained and fired and decided_by == r.describe(float(v))))
    return tuple(out)


def _shown(m: Metric | None, v: Any) -> str:
    if is_missing(v):
        return "undetermined"
    if isinstance(v, (bool, np.bool_)) or (m is not None and m.kind == "bool"):
        return "true" if bool(v) else "false"
    if isinstance(v, (int, float, np.number)):
        hi = m.range[1] if m is not None and m.range else 1.0
        digits = 3 if hi <= 1 else (2 if hi <= 10 else 1)
        return f"{float(v):.{digits}f}"
    return str(v)


def evidence_text(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return ", ".join(json.dumps(x, ensure_ascii=False) if isinstance(x, (dict, list)) else str(x) for x in v) \
            or "none"
    if isinstance(v, float):
        return f"{v:.3f}"
    return json.dumps(v, ensure_ascii=False) if isinstance(v, dict) else str(v)


def value_cell(v: float | None) -> str:
    return "missing" if v is None else f"{v:.3f}"


def metric_views(row: Mapping[str, Any], names: Sequence[str]) -> tuple[MetricView, ...]:
    """Each metric's value on its registry scale, direction and declared evidence (plus extra columns)."""
    out = []
    for name in names:
        m = REGISTRY.get(name)
        v = row.get(name)
        d = details_of(row, name)
        keys = list(m.evidence_keys) if m else []
        ev = [(k, evidence_text(d[k])) for k in keys if k in d]
        ev += [(k, _shown(m, row.get(f"{name}_{k}"))) for k in (m.extra_columns if m else ())
               if f"{name}_{k}" in row]
        out.append(MetricView(name, None if is_missing(v) else v, _shown(m, v), m.reads_as if m else "",
                              m.better if m else "none", tuple(ev), missing_reason(row, name) if is_missing(v) else None))
    return tuple(out)


def _metric_names(results: pd.DataFrame, metrics: Sequence[str] | None) -> list[str]:
    if metrics is not None:
        unknown = [m for m in metrics if m not in results.columns]
        if unknown:
            raise KeyError(f"metrics {unknown} are not columns of these results; scored: "
                           f"{[m for m in REGISTRY if m in results.columns]}")
        return list(metrics)
    ran = (results.attrs.get("evalkit") or {}).get("metrics")
    names = list(ran) if ran else list(REGISTRY)
    return [m for m in names if m in results.columns]


def row_label(row: Mapping[str, Any], position: int | None) -> str:
    parts = [] if position is None else [f"row {position}"]
    for col in ("id", "system"):
        if col in row and not is_missing(row[col]):
            parts.append(f"{col} {row[col]}")
    return ", ".join(parts)


def row_view(results: pd.DataFrame, row_id: Any, metrics: Sequence[str] | None = None, *,
         system: str | None = None, thresholds: VerdictThresholds | None = None) -> RowView:
    """The evidence of one scored row: answer with anchors marked, the verdict's rules, the metrics.

    Parameters
    ----------
    results : DataFrame from :func:`evalkit.evaluate` (or ``evalkit score``'s saved file).
    row_id : the row's ``id`` value, or its position when the results have no ``id`` column.
    metrics : metric columns to list (default: every metric the run scored).
    system : picks the row when ids repeat across systems.
    thresholds : the verdict's thresholds (default: those stored in ``results.attrs``, else the defaults).

    Returns
    -------
    RowView, which renders as HTML in a notebook and as text with ``print``.

    Raises
    ------
    KeyError : no row has that id (the message names it and the row count), or several do.
    """
    position, row = find_row(results, row_id, system)
    evidence = row_evidence(row)  # each metric's details read once, for the marks, the decision and the claims
    thresholds = thresholds or thresholds_of(results)
    # the answer is marked by the metric the verdict's profile reads (the evalkit profile's facts, not the seed's
    # anchors beside them: a newcomer read the seed's ✗ on a row the evalkit profile PASSed)
    marking = _marking_metric(row, thresholds)
    found, lost = highlights(row, marking, evidence=evidence, only=marking is not None)
    has_verdict = text_or_none(row.get("verdict")) is not None
    rules = rule_checks(row, thresholds, evidence=evidence) if has_verdict else ()
    notes = _verdict_notes(row, rules) if has_verdict else ("no verdict: the triad (hallucination, relevance, "
                                                            "completeness) was not scored",)
    return RowView(row_label(row, position), text_or_none(row.get("question")), text_or_none(row.get("answer")),
                   text_or_none(row.get("ground_truth")), _contexts(row.get("contexts")), found, lost,
                   text_or_none(row.get("verdict")), text_or_none(row.get("verdict_rule")), rules,
                   metric_views(row, _metric_names(results, metrics)), notes, support_claims(row, evidence=evidence),
                   thresholds.named)


def _marking_metric(row: Mapping[str, Any], thresholds: VerdictThresholds) -> str | None:
    """The first metric of the named profile in force that marks spans of the answer and that this row holds
    (None: the registry order decides, as for a calibrated profile)."""
    from evalkit.metrics import verdict_roles

    if thresholds.named not in ("seed", "evalkit"):
        return None
    return next((name for name, _ in verdict_roles(thresholds.named) if f"{name}_details" in row
                 and REGISTRY.get(name).evidence is not None), None)


def support_claims(row: Mapping[str, Any], *, evidence: Sequence[Evidence] | None = None) -> tuple[ClaimSupport, ...]:
    """The support detector's evidence for a row: every claim with its best window and probability, the
    weakest marked (empty when the run did not score a claim-checking metric or it is undetermined;
    ``evidence``: the row's :func:`row_evidence` when the caller has read it already)."""
    return next((e.claims for e in (row_evidence(row) if evidence is None else evidence) if e.claims), ())


def _verdict_notes(row: Mapping[str, Any], rules: Sequence[RuleCheck]) -> tuple[str, ...]:
    """A note when the stored verdict is not the one these thresholds give (scored with other thresholds)."""
    decided = [r for r in rules if r.decided]
    stored = row.get("verdict")
    expected = decided[0].outcome if decided else "PASS"
    if decided and decided[0].fired is None:
        expected = "UNDETERMINED"
    if stored != expected:
        return (f"the stored verdict is {stored} ({row.get('verdict_rule')}) but these thresholds give {expected}: "
                "the results were scored with other thresholds; pass thresholds= to show those",)
    return ()


