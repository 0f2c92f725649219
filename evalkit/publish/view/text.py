"""Evidence you can see, as text: a :class:`~evalkit.publish.view.model.RowView` for a console (``print(evalkit.show(...))``)
and one row's verdict and metrics in words (the quick start's notebook).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

from evalkit.metrics import REGISTRY, Metric
from evalkit.publish.view.model import Highlight, RowView, value_cell

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


def row_text(v: RowView) -> str:
    lines = [f"{v.label}: {v.verdict or 'no verdict'}" + (f" ({v.verdict_rule})" if v.verdict_rule else "")]
    lines.append(f"question: {v.question}")
    lines.append(f"answer: {answer_text(v.answer, v.highlights) if v.answer is not None else '(none)'}")
    for h in (*v.highlights, *v.unlocated):
        lines.append(f"  {h.sign}{h.ref} {h.explanation()}")
    if v.rules:
        lines.append(f"verdict rules ({v.profile} profile):")
        for r in v.rules:
            state = {True: "fired", False: "not fired", None: f"not checked ({r.note})"}[r.fired]
            value = "" if r.metric is None else f" value {value_cell(r.value)}"
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


def triad_in_words(row: Mapping[str, Any]) -> str:
    """One row's verdict and its metrics in plain words (Markdown): the sentence each metric's registry entry
    gives (``Metric.in_words``), in the order the verdict checks their rules, from the row's value and count
    columns.

    >>> print(triad_in_words({"verdict": "FAIL", "verdict_rule": "hallucination 0.667 > 0.5", "hallucination": 2 / 3,
    ...                       "hallucination_supported": 1, "hallucination_anchors": 3, "relevance": 0.084}))
    **FAIL** by rule `hallucination 0.667 > 0.5`. The contexts support 1 of the 3 numbers, dates and claims in the answer, so hallucination is 0.67 (the share unsupported). Relevance to the question is 0.08 on 0..1.
    """
    said = [f"**{row.get('verdict')}** by rule `{row.get('verdict_rule')}`."]
    spoken = [m for m in (REGISTRY.get(n) for n in REGISTRY) if m is not None and m.in_words]
    spoken.sort(key=lambda m: m.verdict_role.order if m.verdict_role else float("inf"))  # stable: registry order
    said += [s for s in (_in_words(row, m) for m in spoken) if s]
    return " ".join(said)


def _in_words(row: Mapping[str, Any], m: Metric) -> str | None:
    """``m``'s sentence for this row, or None when its value or counts are missing, or it counted nothing."""
    value = row.get(m.name)
    if not _present(value):
        return None
    counts: dict[str, int] = {}
    for field in m.stats.field_names() if m.stats is not None else ():
        v = row.get(f"{m.name}_{field}")
        if not _present(v):
            return None
        counts[field] = int(v)
    if counts and not counts[m.stats.field_names()[1]]:  # the whole: nothing was counted
        return None
    return m.in_words.format(value=float(value), **counts)


def _present(v: Any) -> bool:
    return v is not None and not pd.isna(v)
