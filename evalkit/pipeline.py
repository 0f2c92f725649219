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
             on_error: str = "record", progress: bool | None = None, engine: Any = None,
             scheduler: str | None = None, chunk_size: int | None = None, parts_dir: str | Path | None = None,
             resume: bool = True, columns: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Score every row of ``data`` (:func:`evalkit.runner.score`, whose parameters these are), then add
    ``verdict`` and ``verdict_rule`` when the triad (hallucination, relevance, completeness) was scored.

    With any of ``engine`` ('local', 'dask' with ``scheduler`` ``tcp://HOST:PORT`` or ``local:N``, or an engine
    object), ``chunk_size`` or ``parts_dir``, rows are scored in chunks by :func:`evalkit.stream.score_chunks`
    (checkpointed in ``parts_dir`` and resumed when ``resume``; ``data`` may then also be a directory or glob of
    Parquet/JSONL files, read with ``columns``); the scores are the same as in one piece.

    Returns the scored rows (same order, none dropped) with the verdict columns before ``error``;
    ``attrs["evalkit"]`` holds the run's metrics, config and signature.
    """
    config = as_config(config)
    if engine is None and chunk_size is None and parts_dir is None:
        out = score(data, metrics, config, on_error=on_error, progress=progress)
    else:
        from .engine import make_engine
        from .stream import DEFAULT_CHUNK, score_chunks

        with make_engine(engine, scheduler) as runner_engine:
            out = score_chunks(data, metrics, config, parts_dir=parts_dir, chunk_size=chunk_size or DEFAULT_CHUNK,
                               resume=resume, columns=columns, on_error=on_error, engine=runner_engine,
                               progress=progress)
    if not all(m in out.attrs["evalkit"]["metrics"] for m in TRIAD):
        return out
    attrs = out.attrs["evalkit"]
    out, notes = apply_verdicts(out, config.thresholds, lexicons=config.lexicons)
    for note in notes:
        log.warning("%s", note)
    out = out[[c for c in out.columns if c != "error"] + ["error"]]
    out.attrs["evalkit"] = attrs
    return out
