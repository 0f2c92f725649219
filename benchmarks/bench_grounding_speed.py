"""Throughput of the `grounding_risk` metric end to end (parse, features, trees) on real bench rows.

    python benchmarks/bench_grounding_speed.py [--qa 1000] [--summaries 200]

Short QA answers (HaluEval QA) and summary pairs (HaluEval summarization), each through
``evalkit.evaluate(..., ["grounding_risk"])`` with a fresh spaCy cache; the spaCy pipeline and the model
are loaded before timing.
"""
from __future__ import annotations

import argparse
import time

import evalkit
from evalkit.metrics.grounding import load_model
from evalkit.base.nlp import load_pipeline

from common import load_task


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--qa", type=int, default=1000)
    ap.add_argument("--summaries", type=int, default=200)
    args = ap.parse_args()
    load_pipeline(), load_model()
    for task, n, unit in (("halueval_qa", args.qa, "short QA answers"),
                          ("halueval_summarization", args.summaries, "summary pairs")):
        df = load_task(task, n)
        t0 = time.perf_counter()
        out = evalkit.evaluate(df[["id", "question", "answer", "contexts"]], ["grounding_risk"], progress=False)
        secs = time.perf_counter() - t0
        assert out["error"].isna().all()
        print(f"{task}: {len(df)} {unit} in {secs:.1f}s = {len(df) / secs:.1f}/s; {1000 * secs / len(df):.0f} s per 1,000")


if __name__ == "__main__":
    main()
