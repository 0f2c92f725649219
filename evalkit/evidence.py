"""Evidence you can see: one scored row as HTML, with what each metric checked and each verdict rule.

``show(results, row_id)`` returns a :class:`RowView`; in a notebook it renders as HTML (``_repr_html_``), in a
console as text (``str``). The answer is printed with every anchor the hallucination metric checked (numbers,
dates, times, entities, subject-verb-object claims; for summaries, the Twin-Lock/Judge-Lock claims):
unsupported ones marked red and numbered ``✗n``, partly supported ones amber ``~n``, supported ones
underlined green ``✓n``. Hovering an anchor (``title=``) shows the context snippet that
supported it or, for an unsupported one, the closest context sentence the grounding detector aligned with
its answer sentence; the same text is listed beside the answer. Below come the verdict's rules in the order
the verdict checks them (value, threshold, fired or not, which rule decided) and every metric on its
registry scale with its direction and evidence. :func:`evidence_html` is the short form for a report's
failing-examples section: only the rule that fired and its evidence.

Nothing here computes a score: values and evidence are read from the results; which rule fires is decided
by :func:`evalkit.verdict.verdict_for`, the verdict's own function. All text from the data is HTML-escaped;
the styles are written into each element's ``style`` attribute (no ``<style>`` block, which an untrusted notebook
strips; no script, no external asset).

Examples
--------
>>> import pandas as pd
>>> df = pd.DataFrame({"id": ["q1"], "question": ["Premium?"], "answer": ["It is $640 & rising."],
...                    "hallucination": [1.0], "hallucination_details": ['{"anchors": [{"type": "number", '
...                    '"text": "$640", "supported": false, "evidence": null}]}']})
>>> view = show(df, "q1")
>>> print(str(view).splitlines()[2])
answer: It is [$640]✗1 & rising.
>>> '<mark class="ek-bad"' in view._repr_html_() and "&amp; rising" in view._repr_html_()
True
"""
from __future__ import annotations

import dataclasses
import html
import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .config import VerdictThresholds
from .metrics import REGISTRY, Metric
from .thresholds import Threshold
from .verdict import rules_for, verdict_for
from .data import is_missing
from .text import AnswerDecision

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
        """``(what was found, the context text checked)``."""
        if self.supported:
            return "supported; context", self.evidence
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
class ClaimSupport:
    """One claim the support model checked: its text, P(its best window supports it), that window's text, and
    whether it is the weakest claim (the one that sets ``support``)."""

    claim: str
    probability: float
    window: str
    weakest: bool


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

    def _repr_html_(self) -> str:
        return _row_html(self)

    def to_page(self, title: str | None = None) -> str:
        """A complete HTML document holding this view (for a file or a browser)."""
        return page(_row_html(self), title or f"evalkit evidence: {self.label}")

    def __str__(self) -> str:
        return _row_text(self)

    def _repr_pretty_(self, printer, cycle: bool) -> None:  # IPython's plain-text display: the readable view
        printer.text(_row_text(self))


# ---------------------------------------------------------------------------------------------------------
# reading the results

def _text(v: Any) -> str | None:
    return None if is_missing(v) else str(v)


def details_of(row: Mapping[str, Any], metric: str) -> dict[str, Any]:
    """The row's ``<metric>_details`` as a dict (stored as JSON text; already a dict after some readers)."""
    raw = row.get(f"{metric}_details")
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str) and raw.strip():
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            return {"reason": f"unreadable evidence: {raw[:80]}"}
        return parsed if isinstance(parsed, dict) else {}
    return {}


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


_CUT_FIELDS = tuple(f.name for f in dataclasses.fields(VerdictThresholds) if f.name != "profile")


def thresholds_of(results: pd.DataFrame) -> VerdictThresholds:
    """The thresholds the results were scored with (``attrs["evalkit"]``), else the defaults."""
    saved = ((results.attrs.get("evalkit") or {}).get("config") or {}).get("thresholds")
    if not isinstance(saved, Mapping):
        return VerdictThresholds()
    cuts = {k: (None if saved[k] is None else float(saved[k])) for k in _CUT_FIELDS if k in saved}
    profile = tuple(Threshold(**r) for r in saved.get("profile") or () if isinstance(r, Mapping))
    return VerdictThresholds(**cuts, profile=profile)


# ---------------------------------------------------------------------------------------------------------
# anchors -> highlights
def _closest_sentences(row: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(answer sentence, aligned context sentence) pairs from the grounding detector's evidence."""
    sents = details_of(row, "grounding_risk").get("sentences") or []
    return [(s.get("sentence") or "", s.get("evidence") or "") for s in sents if isinstance(s, Mapping)]


def _closest_for(answer: str, start: int, pairs: list[tuple[str, str]]) -> str | None:
    cursor = 0
    for sentence, evidence in pairs:
        at = answer.find(sentence, cursor) if sentence else -1
        if at < 0:
            continue
        cursor = at + len(sentence)
        if at <= start < cursor:
            return evidence or None
    return None


SUMMARY_SCORERS = ("twin_lock", "judge_lock")


def _summary_anchors(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A summary scorer's claims as anchors (claim, then the unsupported numbers/names inside it)."""
    for metric in SUMMARY_SCORERS:
        claims = (details_of(row, metric).get("hallucination") or {}).get("claims")
        if not isinstance(claims, list):
            continue
        out = []
        for c in (c for c in claims if isinstance(c, Mapping)):
            text, label = str(c.get("text") or ""), str(c.get("label") or "")
            evidence = "; ".join(map(str, c.get("evidence") or [])) or None
            out.append({"type": f"claim ({metric})", "text": text, "supported": label == "Supported",
                        "evidence": evidence, "status": label})
            out += [{"type": f"anchor ({metric})", "text": str(a), "supported": False, "evidence": None}
                    for a in c.get("unsupported_anchors") or [] if str(a) != text.rstrip(".!? ")]
        return out
    return []


def highlights(row: Mapping[str, Any]) -> tuple[tuple[Highlight, ...], tuple[Highlight, ...]]:
    """The anchors a metric checked, located in the answer, and those whose text could not be found.

    The hallucination metric's anchors, else a summary scorer's claims (Twin-Lock, Judge-Lock). Anchors come
    in text order (``evalkit.metrics.anchors.extract_anchors``), so each is searched from the previous one's
    start: a claim and a number inside it overlap, a repeated number maps to its own mention.
    """
    answer = _text(row.get("answer")) or ""
    anchors = [a for a in details_of(row, "hallucination").get("anchors") or [] if isinstance(a, Mapping)] \
        or _summary_anchors(row)
    pairs = _closest_sentences(row)
    found, lost, cursor = [], [], 0
    for ref, a in enumerate(anchors, start=1):
        text = str(a.get("text") or "")
        at = answer.find(text, cursor) if text else -1
        if at < 0 and text:
            at = answer.find(text)
        supported = bool(a.get("supported"))
        h = Highlight(ref, max(at, 0), max(at, 0) + len(text) if at >= 0 else 0, str(a.get("type") or "anchor"),
                      text, supported, _text(a.get("evidence")),
                      None if supported or at < 0 else _closest_for(answer, at, pairs), str(a.get("status") or ""))
        if at >= 0:
            found.append(h)
            cursor = at
        else:
            lost.append(h)
    return tuple(found), tuple(lost)


# ---------------------------------------------------------------------------------------------------------
# the verdict's rules and the metrics
def row_decision(row: Mapping[str, Any]) -> AnswerDecision:
    """The row decision the runner stored (empty, abstained, language); for results saved before it was
    stored, the abstention as the stored verdict or hallucination's details recorded it (never re-read from
    the answer)."""
    stored = AnswerDecision.from_columns(row)
    if stored is not None:
        return stored
    if _text(row.get("verdict")) is not None:
        return AnswerDecision(False, row.get("verdict") == "ABSTAIN")
    return AnswerDecision(False, bool(details_of(row, "hallucination").get("abstention")))


def _reason(row: Mapping[str, Any], metric: str) -> str | None:
    """Why ``metric`` has no value on this row: its own reason, else its entry in the ``error`` column."""
    errors = _text(row.get("error")) or ""
    for part in errors.split(" | "):
        if part.startswith(f"{metric}: "):
            return "error: " + part[len(metric) + 2:]
    return details_of(row, metric).get("reason")


def rule_checks(row: Mapping[str, Any], thresholds: VerdictThresholds | None = None) -> tuple[RuleCheck, ...]:
    """Every verdict rule on this row, in the verdict's order, with its value and whether it fired.

    The rule that decided is the one :func:`evalkit.verdict.verdict_for` reports (first match wins; a missing
    value stops the verdict as UNDETERMINED); rules after it are shown with their values but did not decide.
    """
    rules = [r for r in rules_for(thresholds) if r.metric in row]
    d = row_decision(row)
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
                                 _reason(row, r.metric) or "no value"))
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


def _evidence_value(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return ", ".join(json.dumps(x, ensure_ascii=False) if isinstance(x, (dict, list)) else str(x) for x in v) \
            or "none"
    if isinstance(v, float):
        return f"{v:.3f}"
    return json.dumps(v, ensure_ascii=False) if isinstance(v, dict) else str(v)


def metric_views(row: Mapping[str, Any], names: Sequence[str]) -> tuple[MetricView, ...]:
    """Each metric's value on its registry scale, direction and declared evidence (plus extra columns)."""
    out = []
    for name in names:
        m = REGISTRY.get(name)
        v = row.get(name)
        d = details_of(row, name)
        keys = list(m.evidence_keys) if m else []
        keys += ["fired"] if name == "grounding_risk" else []
        ev = [(k, _evidence_value(d[k])) for k in keys if k in d]
        ev += [(k, _shown(m, row.get(f"{name}_{k}"))) for k in (m.extra_columns if m else ())
               if f"{name}_{k}" in row]
        out.append(MetricView(name, None if is_missing(v) else v, _shown(m, v), m.reads_as if m else "",
                              m.direction if m else "none", tuple(ev), _reason(row, name) if is_missing(v) else None))
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


def _label(row: Mapping[str, Any], position: int | None) -> str:
    parts = [] if position is None else [f"row {position}"]
    for col in ("id", "system"):
        if col in row and not is_missing(row[col]):
            parts.append(f"{col} {row[col]}")
    return ", ".join(parts)


def show(results: pd.DataFrame, row_id: Any, metrics: Sequence[str] | None = None, *,
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
    found, lost = highlights(row)
    has_verdict = _text(row.get("verdict")) is not None
    rules = rule_checks(row, thresholds or thresholds_of(results)) if has_verdict else ()
    notes = _verdict_notes(row, rules) if has_verdict else ("no verdict: the triad (hallucination, relevance, "
                                                            "completeness) was not scored",)
    return RowView(_label(row, position), _text(row.get("question")), _text(row.get("answer")),
                   _text(row.get("ground_truth")), _contexts(row.get("contexts")), found, lost,
                   _text(row.get("verdict")), _text(row.get("verdict_rule")), rules,
                   metric_views(row, _metric_names(results, metrics)), notes, support_claims(row))


def support_claims(row: Mapping[str, Any]) -> tuple[ClaimSupport, ...]:
    """The support detector's evidence for a row: every claim with its best window and probability, the
    weakest marked (empty when the run did not score ``support`` or it is undetermined)."""
    d = details_of(row, "support")
    claims = d.get("sentences") or []
    weakest = d.get("weakest")
    return tuple(ClaimSupport(str(c.get("sentence", "")), float(c.get("probability", 0.0)), str(c.get("window_text", "")),
                              i == weakest) for i, c in enumerate(claims))


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


# ---------------------------------------------------------------------------------------------------------
# HTML
CSS = """
.ek-show{font:14px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d1d1f;background:#fff;
 max-width:100%;box-sizing:border-box;overflow-wrap:anywhere;padding:8px 0}
.ek-show div,.ek-show table,.ek-show td,.ek-show th,.ek-show details{box-sizing:border-box}
.ek-show h4{margin:14px 0 4px;font-size:13px;text-transform:uppercase;letter-spacing:.04em;color:#555}
.ek-show .ek-head{display:flex;flex-wrap:wrap;gap:8px;align-items:baseline;margin-bottom:6px}
.ek-show .ek-badge{font-weight:700;padding:1px 8px;border-radius:3px;color:#fff}
.ek-show .ek-pass{background:#2e7d32}.ek-show .ek-warn{background:#b26a00}.ek-show .ek-fail{background:#c62828}
.ek-show .ek-abstain{background:#616161}.ek-show .ek-undetermined{background:#6a1b9a}
.ek-show .ek-text{margin:2px 0 8px;padding:6px 10px;background:#f7f7f8;border-left:3px solid #ccc;white-space:pre-wrap}
.ek-show mark{color:inherit;padding:0 1px;border-radius:2px}
.ek-show mark.ek-bad{background:#ffd6d6;border-bottom:2px solid #c62828}
.ek-show mark.ek-ok{background:#e2f3e2;border-bottom:2px dotted #2e7d32}
.ek-show sup.ek-ref{font-size:10px;font-weight:700;margin:0 2px}
.ek-show mark.ek-part{background:#fff0c2;border-bottom:2px dashed #b26a00}
.ek-show sup.ek-ref.ek-bad{color:#c62828}.ek-show sup.ek-ref.ek-ok{color:#2e7d32}.ek-show sup.ek-ref.ek-part{color:#b26a00}
.ek-show ol.ek-anchors{margin:4px 0 8px;padding-left:0;list-style:none}
.ek-show ol.ek-anchors li{margin:3px 0;padding-left:2.2em;text-indent:-2.2em}
.ek-show .ek-ctx{color:#444;font-style:italic}
.ek-show table{border-collapse:collapse;width:100%;table-layout:fixed;margin:4px 0 8px}
.ek-show th,.ek-show td{border-bottom:1px solid #e0e0e0;padding:3px 6px;text-align:left;vertical-align:top}
.ek-show th{background:#f2f2f4;font-weight:600}
.ek-show td.ek-num{text-align:right;font-variant-numeric:tabular-nums}
.ek-show tr.ek-decided td{background:#fff3cd;font-weight:600}
.ek-show .ek-note{color:#6a1b9a}
.ek-show details summary{cursor:pointer;color:#333}
.ek-show details.ek-long summary{white-space:pre-wrap}
"""


def page(fragment: str, title: str) -> str:
    """A standalone HTML document around a fragment (UTF-8, a viewport, no external assets)."""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)}</title></head>\n<body style=\"margin:16px\">\n{fragment}\n</body></html>\n")


def _e(v: Any) -> str:
    return html.escape("" if v is None else str(v), quote=True)


def answer_html(answer: str, marks: Sequence[Highlight]) -> str:
    """The answer with each located anchor wrapped in ``<mark>`` (overlaps split into segments, an
    unsupported anchor's colour winning) and a numbered ``✗n``/``✓n`` after each anchor's end."""
    cuts = sorted({0, len(answer), *(h.start for h in marks), *(h.end for h in marks)})
    out = []
    for a, b in zip(cuts, cuts[1:]):
        over = [h for h in marks if h.start <= a and b <= h.end]
        piece = _e(answer[a:b])
        if over:
            cls = max((h.css_class for h in over), key=SEVERITY.index)
            title = "\n".join(h.explanation() for h in over)
            piece = f'<mark class="{cls}" title="{_e(title)}">{piece}</mark>'
        out.append(piece)
        for h in (h for h in marks if h.end == b):
            out.append(f'<sup class="ek-ref {h.css_class}" title="{_e(h.explanation())}">{h.sign}{h.ref}</sup>')
    return "".join(out)


def _anchor_list_html(marks: Sequence[Highlight], only_unsupported: bool = False) -> str:
    items = []
    for h in marks:
        if only_unsupported and h.supported:
            continue
        state, ctx = h.context_note()
        ctx_html = f': <span class="ek-ctx">{_e(ctx)}</span>' if ctx else ""
        items.append(f'<li><sup class="ek-ref {h.css_class}">{h.sign}{h.ref}</sup> {_e(h.type)} '
                     f'<mark class="{h.css_class}">{_e(h.text)}</mark>: <b>{_e(state)}</b>{ctx_html}</li>')
    if not items:
        return ""
    if len(items) <= ANCHORS_SHOWN + 2:
        return f'<ol class="ek-anchors">{"".join(items)}</ol>'
    # a long answer can hold hundreds of anchors: the first ones show, the rest are one click away
    return (f'<ol class="ek-anchors">{"".join(items[:ANCHORS_SHOWN])}</ol><details><summary>{len(items) - ANCHORS_SHOWN}'
            f' more</summary><ol class="ek-anchors">{"".join(items[ANCHORS_SHOWN:])}</ol></details>')


ANCHORS_SHOWN = 12


def _value_cell(v: float | None) -> str:
    return "missing" if v is None else f"{v:.3f}"


def rules_html(rules: Sequence[RuleCheck]) -> str:
    """The verdict's rules as a table: outcome, rule, value, fired, decided (the deciding row highlighted)."""
    head = "<tr><th style=\"width:12%\">outcome</th><th style=\"width:38%\">rule</th>" \
           "<th style=\"width:14%\">value</th><th style=\"width:14%\">fired</th><th>why</th></tr>"
    rows, reached = [], True
    for r in rules:
        fired = {True: "yes", False: "no", None: "not checked"}[r.fired]
        why = "decided the verdict" if r.decided else ("" if reached else "not reached: an earlier rule decided")
        reached = reached and not r.decided
        if r.fired is None:
            why = (why + ": " if why else "") + f"undetermined ({r.note})"
        value = ("yes" if r.fired else "no") if r.metric is None else _value_cell(r.value)
        decided = ' class="ek-decided"' if r.decided else ""
        rows.append(f'<tr{decided}><td>{_e(r.outcome)}</td><td>{_e(r.rule)}'
                    f'</td><td class="ek-num">{_e(value)}</td><td>{fired}</td><td>{_e(why)}</td></tr>')
    return f"<table>{head}{''.join(rows)}</table>"


def metrics_html(views: Sequence[MetricView]) -> str:
    """The metrics as a table: name, value on its scale, scale and direction, evidence or the reason."""
    head = "<tr><th style=\"width:20%\">metric</th><th style=\"width:11%\">value</th>" \
           "<th style=\"width:24%\">scale</th><th>evidence</th></tr>"
    rows = []
    for m in views:
        ev = "; ".join(f"{k}: {v}" for k, v in m.evidence)
        if m.reason:
            ev = f"undetermined: {m.reason}" + (f"; {ev}" if ev else "")
        rows.append(f"<tr><td>{_e(m.name)}</td><td class=\"ek-num\">{_e(m.shown)}</td><td>{_e(m.reads_as)}</td>"
                    f"<td>{_e(ev)}</td></tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def _head_html(label: str, verdict: str | None, verdict_rule: str | None) -> str:
    badge = f'<span class="ek-badge {VERDICT_CLASS.get(verdict or "", "ek-undetermined")}">{_e(verdict)}</span>' \
        if verdict else ""
    rule = f"<span>{_e(verdict_rule)}</span>" if verdict_rule else ""
    return f'<div class="ek-head"><strong>{_e(label)}</strong>{badge}{rule}</div>'


def _texts_html(v: RowView) -> str:
    parts = []
    if v.question is not None:
        parts.append(f'<h4>question</h4><div class="ek-text">{_e(v.question)}</div>')
    if v.answer is not None:
        parts.append(f'<h4>answer</h4>{text_block(answer_html(v.answer, v.highlights), v.answer)}')
    else:
        parts.append('<h4>answer</h4><div class="ek-text"><i>no answer</i></div>')
    parts.append(_anchor_list_html(v.highlights))
    if v.unlocated:
        parts.append("<p>anchors not found verbatim in the answer text:</p>" + _anchor_list_html(v.unlocated))
    if v.ground_truth is not None:
        parts.append(f'<h4>ground truth</h4><div class="ek-text">{_e(v.ground_truth)}</div>')
    if v.contexts:
        body = "".join(f'<div class="ek-text">{_e(c)}</div>' for c in v.contexts)
        parts.append(f"<details><summary>contexts ({len(v.contexts)})</summary>{body}</details>")
    return "".join(parts)


def support_html(claims: Sequence[ClaimSupport]) -> str:
    """Each claim the support model checked, with P(supported) and the passage it was checked against; the
    weakest claim (which sets ``support``) underlined."""
    if not claims:
        return ""
    items = []
    for c in claims:
        text = f'<mark class="ek-bad">{_e(c.claim)}</mark>' if c.weakest else _e(c.claim)
        lead = "<b>weakest</b> " if c.weakest else ""
        items.append(f"<li>{lead}{text} &mdash; P(supported) {c.probability:.3f}<br>"
                     f'<span class="ek-ctx">passage checked: {_e(c.window)}</span></li>')
    return f'<h4>support: each claim and the passage checked</h4><ol class="ek-anchors">{"".join(items)}</ol>'


def _row_html(v: RowView) -> str:
    notes = "".join(f'<p class="ek-note">{_e(n)}</p>' for n in v.notes)
    rules = f"<h4>verdict rules, in the order they are checked</h4>{rules_html(v.rules)}" if v.rules else ""
    return styled(f'<div class="ek-show">{_head_html(v.label, v.verdict, v.verdict_rule)}'
                  f"{_texts_html(v)}{support_html(v.support)}{rules}{notes}<h4>metrics</h4>"
                  f"{metrics_html(v.metrics)}</div>")


def styled(fragment: str) -> str:
    """An ``ek-show`` fragment with :data:`CSS` written into its elements' ``style`` attributes: no ``<style>``
    block, so the view keeps its look in an untrusted notebook (JupyterLab strips ``<style>`` there)."""
    from .inline_css import inline

    return inline(fragment, CSS)


# ---------------------------------------------------------------------------------------------------------
# text
def answer_text(answer: str, marks: Sequence[Highlight]) -> str:
    """The answer with each unsupported anchor in ``[...]`` followed by ``✗n`` (supported ones left as is)."""
    out, at = [], 0
    for h in sorted((h for h in marks if not h.supported), key=lambda h: h.start):
        if h.start < at:  # inside an unsupported anchor already bracketed
            continue
        out += [answer[at:h.start], f"[{answer[h.start:h.end]}]{h.sign}{h.ref}"]
        at = h.end
    return "".join(out + [answer[at:]])


def _row_text(v: RowView) -> str:
    lines = [f"{v.label}: {v.verdict or 'no verdict'}" + (f" ({v.verdict_rule})" if v.verdict_rule else "")]
    lines.append(f"question: {v.question}")
    lines.append(f"answer: {answer_text(v.answer, v.highlights) if v.answer is not None else '(none)'}")
    for h in (*v.highlights, *v.unlocated):
        lines.append(f"  {h.sign}{h.ref} {h.explanation()}")
    if v.rules:
        lines.append("verdict rules:")
        for r in v.rules:
            state = {True: "fired", False: "not fired", None: f"not checked ({r.note})"}[r.fired]
            value = "" if r.metric is None else f" value {_value_cell(r.value)}"
            lines.append(f"  {r.outcome:<12} {r.rule}:{value} {state}" + ("  <- decided" if r.decided else ""))
    if v.support:
        lines.append("support: each claim, P(supported), the passage checked:")
        lines += [f"  {'* ' if c.weakest else '  '}{c.claim} -> {c.probability:.3f} [{c.window}]" for c in v.support]
    lines += [f"note: {n}" for n in v.notes]
    lines.append("metrics:")
    for m in v.metrics:
        ev = "; ".join(f"{k}: {x}" for k, x in m.evidence)
        why = f"  undetermined: {m.reason}" if m.reason else ""
        lines.append(f"  {m.name} {m.shown} ({m.reads_as}){why}" + (f"  [{ev}]" if ev else ""))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------
# the report's failing-examples fragment
def _fired_metric(row: Mapping[str, Any], rule: str | None) -> str | None:
    """The metric a rule names: ``rule`` itself when it is one, else the first word of ``verdict_rule``."""
    text = rule or _text(row.get("verdict_rule")) or ""
    first = text.split(" ", 1)[0] if text else ""
    return first if first in REGISTRY else None


LONG_TEXT_CHARS = 1200  # a text longer than this is folded: its start shows, the whole is one click away
PREVIEW_CHARS = 320


def text_block(inner_html: str, plain: str, label: str = "") -> str:
    """A text box (``ek-text``) holding ``inner_html``; a long text (over ``LONG_TEXT_CHARS`` characters) is
    folded into ``<details>`` whose summary shows its first ``PREVIEW_CHARS`` characters and its word count, so
    a 3,000-word answer costs the page a few lines until the reader asks for it.

    >>> text_block("short", "short")
    '<div class="ek-text">short</div>'
    >>> "<details" in text_block("x " * 700, "x " * 700) and "700 words" in text_block("x " * 700, "x " * 700)
    True
    """
    lead = f"<b>{_e(label)}</b> " if label else ""
    if len(plain) <= LONG_TEXT_CHARS:
        return f'<div class="ek-text">{lead}{inner_html}</div>'
    preview = _e(plain[:PREVIEW_CHARS].rstrip())
    return (f'<details class="ek-text ek-long"><summary>{lead}{preview}&hellip; <i>({len(plain.split()):,} words: '
            f'show all)</i></summary>{inner_html}</details>')


def _answer_block(row: Mapping[str, Any], label: str = "") -> str:
    answer = _text(row.get("answer")) or ""
    return text_block(_e(answer), answer, label)


def _rule_evidence_html(row: Mapping[str, Any], metric: str) -> str:
    """The evidence of one metric's rule: marked answer for hallucination, marked question keywords for
    completeness, the parts of relevance, the fired sentences of the detector, else its declared keys."""
    if metric == "hallucination" or metric in SUMMARY_SCORERS:
        found, lost = highlights(row)
        plain = _text(row.get("answer")) or ""
        return f'{text_block(answer_html(plain, found), plain)}{_anchor_list_html((*found, *lost), only_unsupported=True)}'
    question = f'<div class="ek-text"><b>question</b> {_e(row.get("question"))}</div>'
    answer = _answer_block(row, "answer")
    d = details_of(row, metric)
    if metric == "completeness":
        missing = ", ".join(_e(k) for k in d.get("missing") or []) or "none"
        return f"{question}{answer}<p>question keywords missing from the answer: <b>{missing}</b></p>"
    view = metric_views(row, [metric])[0]
    ev = "; ".join(f"{k}: {v}" for k, v in view.evidence) or "no evidence recorded"
    return f"{question}{answer}<p>{_e(metric)} {_e(view.shown)} ({_e(view.reads_as)}): {_e(ev)}</p>"


def evidence_html(row: pd.Series | Mapping[str, Any], rule: str | None = None) -> str:
    """The HTML fragment for a report's failing example: the verdict, the rule that fired, its evidence.

    ``row`` is one row of scored results (``results.loc[i]``); ``rule`` names the metric whose evidence to show
    (default: the one named by the row's ``verdict_rule``). An abstention shows the phrase that matched; an
    undetermined verdict shows why the metric has no value.

    >>> row = pd.Series({"question": "Q?", "answer": "A <b>", "verdict": "FAIL",
    ...                  "verdict_rule": "relevance 0.050 < 0.1", "relevance": 0.05,
    ...                  "relevance_details": '{"cosine": 0.1, "jaccard": 0.0}'})
    >>> "A &lt;b&gt;" in evidence_html(row), "cosine: 0.100" in evidence_html(row)
    (True, True)
    """
    verdict, fired = _text(row.get("verdict")), _text(row.get("verdict_rule"))
    metric = _fired_metric(row, rule)
    d = row_decision(row)
    if d.empty and rule is None:
        body = "<p>the answer is empty: a failure of the system (not an abstention); every metric is undetermined</p>"
    elif not d.english and rule is None:
        body = (f'{_answer_block(row)}<p>the answer is not in English (detected: '
                f'{_e(d.language)}): the English-only metrics are undetermined</p>')
    elif verdict == "ABSTAIN" and rule is None:
        matched = list(d.matched) or details_of(row, "dont_know").get("matched") or \
            details_of(row, "hallucination").get("matched")
        body = (f'{_answer_block(row)}<p>declining phrase matched: '
                f'<b>{_e(_evidence_value(matched or []))}</b></p>')
    elif metric is None:
        body = _answer_block(row)
    elif is_missing(row.get(metric)):
        body = f"<p>{_e(metric)} has no value on this row: {_e(_reason(row, metric) or 'no reason recorded')}</p>"
    else:
        body = _rule_evidence_html(row, metric)
    return styled(f'<div class="ek-show">{_head_html(_label(row, None), verdict, fired)}{body}</div>')


def triad_in_words(row: Mapping[str, Any]) -> str:
    """One row's verdict and triad in plain words, from its value and count columns (Markdown).

    >>> print(triad_in_words({"verdict": "FAIL", "verdict_rule": "hallucination 0.667 > 0.5", "hallucination": 2 / 3,
    ...                       "hallucination_supported": 1, "hallucination_anchors": 3, "relevance": 0.084}))
    **FAIL** by rule `hallucination 0.667 > 0.5`. The contexts support 1 of the 3 numbers, dates and claims in the answer, so hallucination is 0.67 (the share unsupported). Relevance to the question is 0.08 on 0..1.
    """
    said = [f"**{row.get('verdict')}** by rule `{row.get('verdict_rule')}`."]
    if _counted(row, "hallucination_anchors"):
        said.append(f"The contexts support {int(row['hallucination_supported'])} of the "
                    f"{int(row['hallucination_anchors'])} numbers, dates and claims in the answer, so hallucination "
                    f"is {row['hallucination']:.2f} (the share unsupported).")
    if _counted(row, "completeness_expected"):
        said.append(f"The answer mentions {int(row['completeness_matched'])} of the question's "
                    f"{int(row['completeness_expected'])} keywords (completeness {row['completeness']:.2f}).")
    if _counted(row, "relevance", zero_ok=True):
        said.append(f"Relevance to the question is {row['relevance']:.2f} on 0..1.")
    return " ".join(said)


def _counted(row: Mapping[str, Any], column: str, zero_ok: bool = False) -> bool:
    v = row.get(column)
    return v is not None and not pd.isna(v) and (zero_ok or v > 0)
