"""Evidence you can see, as text: a :class:`~evalkit.view.model.RowView` for a console (``print(evalkit.show(...))``)
and one row's verdict and triad in words (the quick start's notebook).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

from .model import Highlight, RowView, _value_cell

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
