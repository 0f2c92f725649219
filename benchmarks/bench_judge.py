"""Judged metrics on N rows against the scripted judge server: HTTP calls, seconds, cached re-run seconds.

    python benchmarks/bench_judge.py [--rows 200] [--concurrency 4] [--latency 0.05]

The server answers with deterministic rules after ``--latency`` seconds per call (a stand-in for a
real model's latency), so the numbers measure evalkit's judge layer (HTTP, threads, cache), not an LLM.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import evalkit
from evalkit.testing import ScriptedJudgeServer

from common import ROOT

METRICS = ["faithfulness", "context_precision", "context_recall", "answer_relevance", "ragas_score",
           "factual_accuracy", "answer_class"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--latency", type=float, default=0.05, help="seconds the server waits before each reply")
    args = ap.parse_args()
    df = evalkit.load(ROOT / "data" / "sample_rag.jsonl")
    df = df.loc[[i % len(df) for i in range(args.rows)]].reset_index(drop=True)
    df["id"] = [f"r{i}" for i in range(len(df))]
    df["answer"] = [f"{a} (row {i})" for i, a in enumerate(df["answer"])]  # distinct prompts, no free cache hits
    df["answer"] = df["answer"] + " FAULT_STALL"  # the server sleeps --latency on every call
    with tempfile.TemporaryDirectory() as tmp, ScriptedJudgeServer(stall_seconds=args.latency) as srv:
        cfg = {"judge": {"base_url": srv.url, "model": "scripted", "concurrency": args.concurrency,
                         "cache_path": str(Path(tmp) / "judge.sqlite")}}
        t0 = time.perf_counter()
        out = evalkit.evaluate(df, METRICS, cfg, progress=False)
        first = time.perf_counter() - t0
        calls = srv.requests
        t0 = time.perf_counter()
        evalkit.evaluate(df, METRICS, cfg, progress=False)
        second = time.perf_counter() - t0
        usage = out.attrs["evalkit"]["judge"]["usage"]
    print(f"rows {len(df)}, metrics {', '.join(METRICS)}, concurrency {args.concurrency}, server latency {args.latency}s")
    print(f"first run: {calls} HTTP calls in {first:.1f}s ({calls / first:.0f} calls/s); errors: {int(out['error'].notna().sum())}")
    print(f"cached re-run: {srv.requests - calls} HTTP calls in {second:.2f}s")
    for m, u in sorted(usage.items()):
        print(f"  {m:<18} calls {int(u.get('http_calls', 0)):>5}  tokens {int(u.get('prompt_tokens', 0)):>7}+"
              f"{int(u.get('completion_tokens', 0)):<6}")


if __name__ == "__main__":
    main()
