"""Evidence you can see, drawn as HTML: a :class:`~evalkit.publish.view.model.RowView` (``evalkit.show``) and the report's
failing-example fragment (:func:`evidence_html`). All text from the data is HTML-escaped; the styles are written
into each element's ``style`` attribute (no ``<style>`` block, which an untrusted notebook strips; no script, no
external asset).

>>> row = {"question": "Q?", "answer": "A <b>", "verdict": "FAIL", "verdict_rule": "relevance 0.050 < 0.1",
...        "relevance": 0.05, "relevance_details": '{"cosine": 0.1, "jaccard": 0.0}'}
>>> "A &lt;b&gt;" in evidence_html(row)
True
"""
from __future__ import annotations

import html
from typing import Any, Mapping, Sequence

import pandas as pd

from evalkit.base.data import is_missing
from evalkit.text.markdown import NO_MATHS
from evalkit.metrics import REGISTRY
from evalkit.publish.view.model import (SEVERITY, VERDICT_CLASS, ClaimSupport, Highlight, MetricView, RowView,
                    RuleCheck, evidence_text, row_label, missing_reason, text_or_none, value_cell, evidence_of, highlights,
                    metric_views, row_decision, row_evidence)

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
        value = ("yes" if r.fired else "no") if r.metric is None else value_cell(r.value)
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


def row_html(v: RowView, compact: bool = False) -> str:
    """The row's card: verdict, texts with anchors marked, the support model's claims, the verdict's rules and the
    metrics. ``compact`` (the labeller's card) keeps what a person reads to label a row open (verdict, question,
    answer, anchors, contexts) and folds the rest under one summary, so the card stays short."""
    notes = "".join(f'<p class="ek-note">{_e(n)}</p>' for n in v.notes)
    rules = (f"<h4>verdict rules of the {html.escape(v.profile)} profile, in the order they are checked</h4>"
             f"{rules_html(v.rules)}") if v.rules else ""
    rest = f"{support_html(v.support)}{rules}{notes}<h4>metrics</h4>{metrics_html(v.metrics)}"
    if compact:
        claims = " and the support model's claims" if v.support else ""
        rest = (f"<details><summary>the verdict's rules, {len(v.metrics)} metric{'s' if len(v.metrics) != 1 else ''}"
                f"{claims}</summary>{rest}</details>")
    return styled(f'<div class="ek-show {NO_MATHS}">{_head_html(v.label, v.verdict, v.verdict_rule)}'
                  f"{_texts_html(v)}{rest}</div>")


def styled(fragment: str) -> str:
    """An ``ek-show`` fragment with :data:`CSS` written into its elements' ``style`` attributes: no ``<style>``
    block, so the view keeps its look in an untrusted notebook (JupyterLab strips ``<style>`` there)."""
    from evalkit.publish.inline_css import inline

    return inline(fragment, CSS)


# ---------------------------------------------------------------------------------------------------------
# the report's failing-examples fragment
def _fired_metric(row: Mapping[str, Any], rule: str | None) -> str | None:
    """The metric a rule names: ``rule`` itself when it is one, else the first word of ``verdict_rule``."""
    text = rule or text_or_none(row.get("verdict_rule")) or ""
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
    answer = text_or_none(row.get("answer")) or ""
    return text_block(_e(answer), answer, label)


def _rule_evidence_html(row: Mapping[str, Any], metric: str) -> str:
    """The evidence of one metric's rule, by the kind its evidence reader gives: the marked answer for a metric
    that checks anchors (hallucination, the summary scorers), the missing question keywords for one that looks
    for them (completeness), else its value with its declared evidence keys."""
    evidence = evidence_of(row, metric)
    # every failing example starts with its question: an answer judged without it cannot be read
    question = f'<div class="ek-text"><b>question</b> {_e(row.get("question"))}</div>' if text_or_none(row.get("question")) \
        else ""
    # the evalkit profile's checks give each unsupported fact's reason in words (their details' ``unsupported``):
    # the report lists them whole, a long answer's last clause included; their marks are evalkit.show's
    if evidence.anchors is not None and REGISTRY.get(metric).family != "checks":
        found, lost = highlights(row, prefer=metric)
        plain = text_or_none(row.get("answer")) or ""
        return (f'{question}{text_block(answer_html(plain, found), plain)}'
                f'{_anchor_list_html((*found, *lost), only_unsupported=True)}')
    answer = _answer_block(row, "answer")
    if evidence.missing_keywords is not None:
        missing = ", ".join(_e(k) for k in evidence.missing_keywords) or "none"
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
    verdict, fired = text_or_none(row.get("verdict")), text_or_none(row.get("verdict_rule"))
    metric = _fired_metric(row, rule)
    d = row_decision(row)
    if d.empty and rule is None:
        body = "<p>the answer is empty: a failure of the system (not an abstention); every metric is undetermined</p>"
    elif not d.english and rule is None:
        body = (f'{_answer_block(row)}<p>the answer is not in English (detected: '
                f'{_e(d.language)}): the English-only metrics are undetermined</p>')
    elif verdict == "ABSTAIN" and rule is None:
        matched = list(d.matched) or next((list(e.declined) for e in row_evidence(row) if e.declined), [])
        body = (f'{_answer_block(row)}<p>declining phrase matched: '
                f'<b>{_e(evidence_text(matched or []))}</b></p>')
    elif metric is None:
        body = _answer_block(row)
    elif is_missing(row.get(metric)):
        body = f"<p>{_e(metric)} has no value on this row: {_e(missing_reason(row, metric) or 'no reason recorded')}</p>"
    else:
        body = _rule_evidence_html(row, metric)
    return styled(f'<div class="ek-show {NO_MATHS}">{_head_html(row_label(row, None), verdict, fired)}{body}</div>')


