"""What a small judged run costs before its first row: ``answer_relevance`` (judge + the packaged MiniLM encoder)
beside ``faithfulness`` (judge only) on 5 rows of the sample against the scripted judge server, each in a fresh
process, measured side by side in one run; then the same call again in the same process, which loads nothing.

The difference between the two first calls is the encoder's fixed cost (PyTorch, transformers, the model); the
second calls show it is paid once per process. Prints a Markdown table::

    python benchmarks/bench_fixed_cost.py [--repeats 3]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import json, sys, time
t0 = time.perf_counter()
import evalkit
from evalkit.testing import ScriptedJudgeServer
rows = evalkit.load(sys.argv[2]).head(5)
out = {"import_and_load_s": time.perf_counter() - t0}
with ScriptedJudgeServer() as srv:
    cfg = {"judge": {"base_url": srv.url, "model": "scripted", "cache_path": None}}
    for call in ("first_call_s", "second_call_s"):
        t = time.perf_counter()
        scored = evalkit.evaluate(rows, [sys.argv[1]], cfg, progress=False)
        out[call] = time.perf_counter() - t
out["scored"] = int(scored[sys.argv[1]].notna().sum())
print(json.dumps(out))
"""


def _one(metric: str) -> dict:
    r = subprocess.run([sys.executable, "-c", CHILD, metric, str(ROOT / "data" / "sample_rag.jsonl")],
                       capture_output=True, text=True, check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    runs: dict[str, list[dict]] = {"faithfulness": [], "answer_relevance": []}
    for _ in range(args.repeats):  # interleaved, so a busy moment weighs on both
        for metric in runs:
            runs[metric].append(_one(metric))
    print(f"5 rows of the sample, scripted judge on 127.0.0.1, median of {args.repeats} fresh processes\n")
    print("| metric | rows scored | first call | second call, same process |\n|---|---:|---:|---:|")
    med = {m: {k: statistics.median(r[k] for r in rs) for k in ("first_call_s", "second_call_s")}
           for m, rs in runs.items()}
    for m, rs in runs.items():
        print(f"| {m} | {rs[0]['scored']} | {med[m]['first_call_s']:.1f} s | {med[m]['second_call_s']:.1f} s |")
    extra = med["answer_relevance"]["first_call_s"] - med["faithfulness"]["first_call_s"]
    print(f"\nthe encoder's fixed cost (first-call difference): {extra:.1f} s; answer_relevance's second call / "
          f"faithfulness's: {med['answer_relevance']['second_call_s'] / med['faithfulness']['second_call_s']:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
