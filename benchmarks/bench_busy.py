"""CPU of the support model beside a busy process, against a quiet run (issue 38: no spinning on a busy machine).

    python benchmarks/bench_busy.py                 # 40 HaluEval QA dev rows, 2 busy processes, 3 rounds
    python benchmarks/bench_busy.py --rows 20 --rounds 1

Each measurement is a fresh process that scores the same rows with the ``support`` metric and reports its own
CPU time (user + system) for the scoring alone; "busy" runs it while ``--hogs`` processes spin on the CPU. Two
threading modes side by side, alternated in each round: ``one-thread`` (what evalkit does: the model runs on one
intra-op thread) and ``torch-default`` (torch's thread count, the behaviour before). The ratio busy / quiet is
the cost of a busy machine; the target is at most 1.3x for one-thread.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HALUEVAL = ROOT.parent / "shared" / "bench" / "halueval_qa_dev.jsonl"

CHILD = r"""
import contextlib, json, sys, time
import pandas as pd
import evalkit.metrics.support as support
if sys.argv[2] == "torch-default":  # the behaviour before: torch's own thread count
    support.one_thread = lambda torch: contextlib.nullcontext()
from evalkit.metrics.support import get_support_model, support_score
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")][: int(sys.argv[3])]
model = get_support_model()
support_score("warm up", ["warm up the model."], model=model)
model._memo.clear()
start = time.process_time()
for r in rows:
    ctx = r["contexts"] if isinstance(r["contexts"], list) else [r["contexts"]]
    support_score(r["answer"], ctx, r["question"], model=model)
print(json.dumps({"cpu": time.process_time() - start}))
"""


def _hog(stop_at: float) -> None:
    x = 0
    while time.time() < stop_at:
        x += 1


def measure(mode: str, rows: int, busy: bool, hogs: int) -> float:
    procs = []
    if busy:
        stop_at = time.time() + 3600
        procs = [mp.Process(target=_hog, args=(stop_at,), daemon=True) for _ in range(hogs)]
        for p in procs:
            p.start()
    try:
        out = subprocess.run([sys.executable, "-c", CHILD, str(HALUEVAL), mode, str(rows)], capture_output=True,
                             text=True, check=True)
    finally:
        for p in procs:
            p.terminate()
            p.join()
    return json.loads(out.stdout.strip().splitlines()[-1])["cpu"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--hogs", type=int, default=2)
    args = ap.parse_args(argv)
    cpu: dict[tuple[str, bool], list[float]] = {}
    for _ in range(args.rounds):
        for mode in ("one-thread", "torch-default"):
            for busy in (False, True):
                cpu.setdefault((mode, busy), []).append(measure(mode, args.rows, busy, args.hogs))
    print(f"support on {args.rows} HaluEval QA dev rows, CPU seconds of the scoring (median of {args.rounds}); "
          f"busy = beside {args.hogs} spinning processes")
    print("| threading | quiet | busy | busy / quiet |\n|---|---|---|---|")
    for mode in ("one-thread", "torch-default"):
        q, b = statistics.median(cpu[(mode, False)]), statistics.median(cpu[(mode, True)])
        print(f"| {mode} | {q:.2f} | {b:.2f} | {b / q:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
