"""Every piece of work once per call (CONVENTIONS 27): counted, not timed.

A review counted, in one ``evaluate(df, config=...)``: the config validated 3 times, custom metrics activated
twice, ``output_columns()`` rebuilt once per input column; and in ``evalkit score`` the verdict computed on every
pass over the parts. Each counter below wraps the real function and lets it run.
"""
from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

import evalkit
from evalkit.base.config import EvalConfig
from evalkit.decide import pipeline
from evalkit.metrics import custom
from evalkit.run import runner

ROWS = pd.DataFrame({
    "question": [f"What is the monthly fee of plan {i}?" for i in range(5)],
    "answer": [f"The monthly fee of plan {i} is {10 + i} euros." for i in range(5)],
    "contexts": [[f"Plan {i} costs {10 + i} euros a month."] for i in range(5)],
})
METRICS = ["relevance", "completeness", "hallucination"]


@pytest.fixture()
def calls(monkeypatch):
    counts: Counter[str] = Counter()

    def counted(owner, name):
        real = getattr(owner, name)

        def wrapper(*args, **kwargs):
            counts[name] += 1
            return real(*args, **kwargs)
        monkeypatch.setattr(owner, name, wrapper)
    counted(EvalConfig, "validate")
    counted(custom, "activate")
    counted(runner, "canonicalize")
    counted(runner, "output_columns")
    counted(pipeline, "apply_verdicts")
    return counts


def _config() -> EvalConfig:
    return EvalConfig.from_dict({"profile": "seed"})  # the triad's verdict: METRICS give one


def test_one_evaluate_call_does_each_piece_of_work_once(calls):
    config = _config()
    calls.clear()
    out = evalkit.evaluate(ROWS, METRICS, config=config, progress=False)
    assert out["verdict"].notna().all()  # the verdict was computed (the count below is of real work)
    assert dict(calls) == {"validate": 1, "activate": 1, "canonicalize": 1, "output_columns": 1,
                           "apply_verdicts": 1}


def test_a_streamed_score_validates_once_and_gives_each_part_one_verdict(calls, tmp_path):
    config = _config()
    calls.clear()
    written = pipeline.evaluate_to_file(ROWS, tmp_path / "out.parquet", METRICS, config, chunk_size=2,
                                        parts_dir=tmp_path / "parts", progress=False)
    assert written.rows == 5
    assert calls["validate"] == 1 and calls["activate"] == 1
    assert calls["apply_verdicts"] == 3  # parts of 2, 2 and 1 rows: one verdict each, though written in two passes
    back = pd.read_parquet(tmp_path / "out.parquet")
    assert back["verdict"].tolist() == evalkit.evaluate(ROWS, METRICS, config=config, progress=False)["verdict"].tolist()


def test_a_config_changed_after_checking_is_checked_again(calls):
    """The once-only rule keys on the registry's state: registering a metric between two runs re-checks the
    config (its parameters may name the new metric)."""
    config = _config()
    evalkit.evaluate(ROWS, METRICS, config=config, progress=False)
    from evalkit.metrics.registry import scoped

    calls.clear()
    with scoped():
        evalkit.register_metric("words", lambda answer: float(len(answer.split())), needs=("answer",),
                                direction="none", range=(0, float("inf")))
        evalkit.evaluate(ROWS, ["words"], config=config, progress=False)
    assert calls["validate"] == 1
