"""Worked examples on the reader's own rows: which rows to show, and the arithmetic behind their values.

:func:`example_rows` picks, from scored results, a typical row (the median score), a failing one (the worst
score on the metric's bad side) and the row nearest the verdict's threshold; :func:`examples_markdown` works
through each with the arithmetic its registry entry names (``Metric.worked``: a built-in's lives in its metric's
module beside its declaration; a user's metric may bring its own), so this module names no metric.

Examples
--------
>>> import pandas as pd
>>> res = pd.DataFrame({"question": ["What is the base premium?"], "answer": ["The base premium is $604."],
...                     "relevance": [0.688]})
>>> print(examples_markdown(res, "relevance")[0].splitlines()[0])
#### typical: relevance = 0.688
"""
from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from evalkit.metrics import REGISTRY
from evalkit.metrics.base import NoWorkedExample
from evalkit.text.markdown import quote


def example_rows(results: pd.DataFrame, metric: str, threshold: float | None = None) -> dict[str, Any]:
    """Index labels of up to three rows of ``results`` worth working through for ``metric``: ``typical`` (the
    median score), ``failing`` (the worst score: the lowest for a higher-is-better metric, else the highest)
    and ``on the threshold`` (nearest ``threshold``, when given). Rows without a score are skipped; a row
    that would repeat an earlier pick is not shown twice."""
    if metric not in results.columns:
        return {}
    s = pd.to_numeric(results[metric], errors="coerce").dropna()
    if s.empty:
        return {}
    higher = REGISTRY[metric].better == "higher"
    order = s.sort_values(kind="mergesort")
    picks = {"typical": order.index[len(order) // 2], "failing": order.index[0] if higher else order.index[-1]}
    if threshold is not None:
        picks["on the threshold"] = (s - threshold).abs().sort_values(kind="mergesort").index[0]
    out: dict[str, Any] = {}
    for name, idx in picks.items():
        if idx not in out.values():
            out[name] = idx
    return out


def examples_markdown(results: pd.DataFrame, metric: str, threshold: float | None = None,
                      params: Mapping[str, Any] | None = None) -> list[str]:
    """The worked examples of ``metric`` on :func:`example_rows`' picks, one Markdown block each: the row, its
    texts, and the arithmetic that gives its value (its registry entry's ``worked``; none for a metric without
    one), with the run's settings (``params``: ``EvalConfig.params_for(metric)``: the tokenizer, the stop-word
    list). When the arithmetic cannot be shown under those settings, the one block says why."""
    params = dict(params or {})
    worked = REGISTRY[metric].worked if metric in REGISTRY else None
    out = []
    for name, i in example_rows(results, metric, threshold).items():
        row = results.loc[i]
        who = " · ".join(f"{c} {quote(row[c], 60)}" for c in ("id", "system") if c in results.columns)
        head = (f"#### {name}: {metric} = {float(row[metric]):.3f}" + (f" ({who})" if who else "") + "\n\n"
                f"**Question:** {quote(row.get('question'))}\n\n**Answer:** {quote(row.get('answer'))}\n\n")
        try:
            body = worked(row, params, metric) if worked is not None else ""
        except NoWorkedExample as e:
            return [str(e)]
        out.append(head + body)
    return out
