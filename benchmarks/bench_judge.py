"""Judged metrics on N rows against the scripted judge server: HTTP calls, seconds, cached re-run seconds; and the
four RAGAS-style metrics' calls per row with three contexts a row, the way they asked before #29 (faithfulness in
two calls, context precision one call per context) beside the way they ask now (faithfulness one call; the
contexts one call, shared by context precision and context recall; answer relevance one call).

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

RAGAS4 = ["faithfulness", "context_precision", "context_recall", "answer_relevance"]


def calls_before_29(df, url: str) -> int:
    """HTTP calls of the four metrics on ``df`` as they were asked before #29, replayed through the same client
    and in-memory cache (identical questions are asked once, as in a run): faithfulness' statements, then their
    verdicts; one ``context_relevance`` call per context; context recall; the questions of answer relevance."""
    from evalkit.judge import OpenAIJudge, load_prompts
    from evalkit.base.config import JudgeConfig

    P, judge = load_prompts(), OpenAIJudge(JudgeConfig(base_url=url, model="scripted", cache_path=None))
    before = judge.usage()
    for r in df.itertuples():
        ctxs = [c for c in r.contexts if c and c.strip()]
        stm = judge.complete(P["faithfulness_statements"], {"question": r.question, "answer": r.answer}).data
        if stm["statements"]:
            numbered = "\n".join(f"{i}. {s}" for i, s in enumerate(stm["statements"], start=1))
            judge.complete(P["faithfulness_verdicts"], {"context": "\n\n".join(ctxs), "statements": numbered})
        for c in ctxs:
            judge.complete(P["context_relevance"], {"question": r.question, "reference": r.ground_truth, "context": c})
        judge.complete(P["context_recall"], {"question": r.question, "context": "\n\n".join(ctxs),
                                             "reference": r.ground_truth})
        judge.complete(P["answer_questions"], {"answer": r.answer, "n": 3})
    judge.close()
    return int(sum(u.get("http_calls", 0) for u in judge.usage().values()) - sum(
        u.get("http_calls", 0) for u in before.values()))


def calls_per_row() -> None:
    """Before and after #29 on the sample's 84 rows with three contexts each (tests/judge/three_contexts.py), as
    they are (two systems answer each question) and with every row's question and reference made distinct."""
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "judge"))
    from three_contexts import three_context_rows

    shared = three_context_rows()
    distinct = shared.copy()
    for col in ("question", "ground_truth"):
        distinct[col] = distinct[col] + " (" + distinct["system"] + ")"
    print(f"\n{', '.join(RAGAS4)}: HTTP calls per row, 3 contexts a row, {len(shared)} rows")
    print(f"  {'rows':<44}{'before #29':>11}{'now':>8}")
    for label, df in (("sample (42 questions x 2 systems)", shared),
                      ("every question and reference distinct", distinct)):
        with ScriptedJudgeServer() as srv:
            old = calls_before_29(df, srv.url)
        with ScriptedJudgeServer() as srv:
            evalkit.evaluate(df, RAGAS4, {"judge": {"base_url": srv.url, "model": "scripted", "cache_path": None}},
                             progress=False)
            new = srv.requests
        print(f"  {label:<44}{old / len(df):>11.2f}{new / len(df):>8.2f}")


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
    calls_per_row()


if __name__ == "__main__":
    main()
