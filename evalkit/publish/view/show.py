"""``evalkit.show(results, row_id)``: one scored row's evidence, drawn as HTML in a notebook and as text in a
console (the typed view of :mod:`evalkit.publish.view.model`, rendered by :mod:`evalkit.publish.view.html` and
:mod:`evalkit.publish.view.text`).

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
from typing import Any, Sequence

import pandas as pd

from evalkit.base.config import VerdictThresholds
from evalkit.publish.view.html import page, row_html
from evalkit.publish.view.model import RowView, row_view
from evalkit.publish.view.text import row_text


@dataclasses.dataclass(frozen=True)
class ShownRow(RowView):
    """A :class:`~evalkit.publish.view.model.RowView` that draws itself: HTML in a notebook (``_repr_html_``), text with
    ``print``, a whole page with :meth:`to_page`."""

    def _repr_html_(self) -> str:
        return row_html(self)

    def compact_html(self) -> str:
        """The short card the labeller shows: the texts open, rules, metrics and claims folded."""
        return row_html(self, compact=True)

    def to_page(self, title: str | None = None) -> str:
        """A complete HTML document holding this view (for a file or a browser)."""
        return page(row_html(self), title or f"evalkit evidence: {self.label}")

    def __str__(self) -> str:
        return row_text(self)

    def _repr_pretty_(self, printer, cycle: bool) -> None:  # IPython's plain-text display: the readable view
        printer.text(row_text(self))


def show(results: pd.DataFrame, row_id: Any, metrics: Sequence[str] | None = None, *,
         system: str | None = None, thresholds: VerdictThresholds | None = None) -> ShownRow:
    """The evidence of one scored row (:func:`evalkit.publish.view.model.row_view`: the answer with anchors marked, the
    verdict's rules, the metrics, the support detector's claims), drawn in a notebook or printed."""
    v = row_view(results, row_id, metrics, system=system, thresholds=thresholds)
    return ShownRow(**{f.name: getattr(v, f.name) for f in dataclasses.fields(RowView)})
