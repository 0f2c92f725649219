"""The verdict against careful readers (issue 38): both named profiles on the golden corpus and on HaluEval QA.

    python benchmarks/bench_verdicts.py                      # held-out third + 1,000 HaluEval QA dev rows
    python benchmarks/bench_verdicts.py --split dev --halueval 0

Scores through ``evalkit.evaluate`` (the path a user takes) with ``profile: seed`` and ``profile: evalkit``, and
writes ``benchmarks/results/verdicts.md``: agreement, the confusion table (expected -> verdict) and agreement per
kind of answer on ``tests/golden/verdicts/<split>.jsonl``, and the share of HaluEval QA dev answers FAILed, by
label, on a seeded random sample of ``../shared/bench/halueval_qa_dev.jsonl`` (development data only).
"""
from __future__ import annotations

import argparse
import json
import random
from collections import Counter, defaultdict
from pathlib import Path

import pandas as pd

import evalkit
from evalkit.config import EvalConfig
from evalkit.metrics import verdict_roles

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "verdicts"
HALUEVAL = ROOT.parent / "shared" / "bench" / "halueval_qa_dev.jsonl"
PROFILES = {p: [name for name, _ in verdict_roles(p)] for p in ("seed", "evalkit")}  # the registry's roles
VERDICTS = ("PASS", "WARN", "FAIL", "ABSTAIN", "UNDETERMINED")


def verdicts(df: pd.DataFrame, profile: str) -> list[str]:
    cfg = EvalConfig.from_dict({"profile": profile})
    return evalkit.evaluate(df, PROFILES[profile], cfg, progress=False)["verdict"].tolist()


def golden(split: str) -> tuple[list[dict], pd.DataFrame]:
    rows = [json.loads(line) for line in (GOLDEN / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()]
    df = pd.DataFrame({"id": [r["id"] for r in rows], "question": [r["user_input"] for r in rows],
                       "answer": [r["response"] for r in rows], "contexts": [r["retrieved_contexts"] for r in rows],
                       "ground_truth": [r.get("reference") for r in rows]})
    return rows, df


def golden_section(split: str) -> list[str]:
    rows, df = golden(split)
    got = {p: verdicts(df, p) for p in PROFILES}
    lines = [f"## Golden corpus, {split} ({len(rows)} answers)", "", "| profile | agreement |", "|---|---|"]
    lines += [f"| {p} | {sum(g == r['expected'] for g, r in zip(v, rows))}/{len(rows)} = "
              f"{sum(g == r['expected'] for g, r in zip(v, rows)) / len(rows):.3f} |" for p, v in got.items()]
    for p, v in got.items():
        conf = Counter((r["expected"], g) for g, r in zip(v, rows))
        lines += ["", f"Confusion, {p} (rows: expected, columns: verdict)", "",
                  "| expected | " + " | ".join(VERDICTS) + " |", "|---|" + "---|" * len(VERDICTS)]
        lines += [f"| {e} | " + " | ".join(str(conf[(e, g)]) for g in VERDICTS) + " |" for e in VERDICTS]
    kinds: dict[str, dict[str, list[int]]] = defaultdict(lambda: {p: [0, 0] for p in PROFILES})
    for p, v in got.items():
        for g, r in zip(v, rows):
            kinds[r["kind"]][p][0] += g == r["expected"]
            kinds[r["kind"]][p][1] += 1
    lines += ["", "| kind | " + " | ".join(PROFILES) + " |", "|---|" + "---|" * len(PROFILES)]
    lines += [f"| {k} | " + " | ".join(f"{a}/{n}" for a, n in kinds[k].values()) + " |" for k in sorted(kinds)]
    return lines


def halueval_section(n: int, seed: int) -> list[str]:
    rows = [json.loads(line) for line in HALUEVAL.read_text(encoding="utf-8").splitlines()]
    random.Random(seed).shuffle(rows)
    rows = rows[:n]
    df = pd.DataFrame({"id": [r["id"] for r in rows], "question": [r["question"] for r in rows],
                       "answer": [r["answer"] for r in rows],
                       "contexts": [r["contexts"] if isinstance(r["contexts"], list) else [r["contexts"]]
                                    for r in rows]})
    lines = [f"## HaluEval QA dev, {n} random rows (seed {seed})", "",
             "| profile | correct answers FAILed | hallucinated answers FAILed |", "|---|---|---|"]
    for p in PROFILES:
        v = verdicts(df, p)
        share = {h: sum(g == "FAIL" for g, r in zip(v, rows) if r["hallucinated"] == h)
                 / max(1, sum(r["hallucinated"] == h for r in rows)) for h in (False, True)}
        lines.append(f"| {p} | {share[False]:.3f} | {share[True]:.3f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", default="heldout", choices=["heldout", "dev"])
    ap.add_argument("--halueval", type=int, default=1000, help="HaluEval QA dev rows to sample (0: none)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "verdicts.md"))
    args = ap.parse_args(argv)
    lines = ["# The verdict against careful readers", "", f"`python benchmarks/bench_verdicts.py --split {args.split} "
             f"--halueval {args.halueval} --seed {args.seed}`", ""]
    lines += golden_section(args.split)
    if args.halueval:
        lines += [""] + halueval_section(args.halueval, args.seed)
    text = "\n".join(lines) + "\n"
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
