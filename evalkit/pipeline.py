"""``evaluate()``: score, then the verdict. The two steps of the road in one call, for users and reports.

Scoring (:func:`evalkit.runner.score`) and the verdict (:func:`evalkit.verdict.apply_verdicts`) are separate
steps; this module sits after both, so neither imports the other. ``evalkit verdict`` re-applies the
second step to saved results.

Examples
--------
>>> import pandas as pd
>>> df = pd.DataFrame({"question": ["What is the premium?"], "answer": ["The premium is $604."],
...                    "contexts": [["The premium is $604 per year."]]})
>>> out = evaluate(df, ["relevance", "completeness", "hallucination"], progress=False)
>>> out.loc[0, "verdict"], list(out.columns[-3:])
('PASS', ['verdict', 'verdict_rule', 'error'])
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from .config import EvalConfig
from .runner import as_config, score
from .verdict import TRIAD, apply_verdicts

log = logging.getLogger("evalkit")


def evaluate(data: pd.DataFrame | str | Path, metrics: Sequence[str] | None = None,
             config: EvalConfig | Mapping[str, Any] | str | Path | None = None, *,
             on_error: str = "record", progress: bool | None = None) -> pd.DataFrame:
    """Score every row of ``data`` (:func:`evalkit.runner.score`, whose parameters these are), then add
    ``verdict`` and ``verdict_rule`` when the triad (hallucination, relevance, completeness) was scored.

    Returns the scored rows (same order, none dropped) with the verdict columns before ``error``;
    ``attrs["evalkit"]`` holds the run's metrics, config and signature.
    """
    config = as_config(config)
    out = score(data, metrics, config, on_error=on_error, progress=progress)
    if not all(m in out.attrs["evalkit"]["metrics"] for m in TRIAD):
        return out
    attrs = out.attrs["evalkit"]
    out, notes = apply_verdicts(out, config.thresholds, lexicons=config.lexicons)
    for note in notes:
        log.warning("%s", note)
    out = out[[c for c in out.columns if c != "error"] + ["error"]]
    out.attrs["evalkit"] = attrs
    return out
