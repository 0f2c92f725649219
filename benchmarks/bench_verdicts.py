"""The verdict against careful readers (issue 38): both named profiles on the golden corpus and on HaluEval QA.

    python benchmarks/bench_verdicts.py                      # held-out third + 1,000 HaluEval QA dev rows
    python benchmarks/bench_verdicts.py --split dev --halueval 0

Scores through ``evalkit.evaluate`` (the path a user takes) with ``profile: seed`` and ``profile: evalkit``, and
writes ``benchmarks/results/verdicts.md``: agreement, the confusion table (expected -> verdict) and agreement per
kind of answer on ``tests/golden/verdicts/<split>.jsonl`` and on ``tests/golden/elsewhere/<split>.jsonl``
(answers written the way RAG systems write, by writers who never saw the checks), and the share of HaluEval QA dev answers FAILed, by
label, on a seeded random sample of ``../shared/bench/halueval_qa_dev.jsonl`` (development data only), and the
CPU per row of each profile's metrics and of the default metric set with the evalkit profile's checks added
(``--cpu N`` rows of the golden dev split, alternated rounds in one process).
"""
from __future__ import annotations

import argparse
import json
import random
from collections import Counter, defaultdict
from pathlib import Path

import pandas as pd

import evalkit
from evalkit.base.config import EvalConfig
from evalkit.metrics import verdict_roles

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "verdicts"
ELSEWHERE = ROOT / "tests" / "golden" / "elsewhere"
HALUEVAL = ROOT.parent / "shared" / "bench" / "halueval_qa_dev.jsonl"
PROFILES = {p: [name for name, _ in verdict_roles(p)] for p in ("seed", "evalkit")}  # the registry's roles
VERDICTS = ("PASS", "WARN", "FAIL", "ABSTAIN", "UNDETERMINED")


def verdicts(df: pd.DataFrame, profile: str) -> list[str]:
    cfg = EvalConfig.from_dict({"profile": profile})
    return evalkit.evaluate(df, PROFILES[profile], cfg, progress=False)["verdict"].tolist()


def golden(split: str, folder: Path = GOLDEN) -> tuple[list[dict], pd.DataFrame]:
    rows = [json.loads(line) for line in (folder / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()]
    df = pd.DataFrame({"id": [r["id"] for r in rows], "question": [r["user_input"] for r in rows],
                       "answer": [r["response"] for r in rows], "contexts": [r["retrieved_contexts"] for r in rows],
                       "ground_truth": [r.get("reference") for r in rows]})
    return rows, df


def golden_section(split: str, folder: Path = GOLDEN, title: str = "Golden corpus") -> list[str]:
    rows, df = golden(split, folder)
    got = {p: verdicts(df, p) for p in PROFILES}
    lines = [f"## {title}, {split} ({len(rows)} answers)", "", "| profile | agreement |", "|---|---|"]
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
    rows, df = _halueval_frame(n, seed)
    lines = [f"## HaluEval QA dev, {n} random rows (seed {seed})", "",
             "| profile | correct answers FAILed | hallucinated answers FAILed |", "|---|---|---|"]
    for p in PROFILES:
        v = verdicts(df, p)
        share = {h: sum(g == "FAIL" for g, r in zip(v, rows) if r["hallucinated"] == h)
                 / max(1, sum(r["hallucinated"] == h for r in rows)) for h in (False, True)}
        lines.append(f"| {p} | {share[False]:.3f} | {share[True]:.3f} |")
    return lines


def _halueval_frame(n: int, seed: int) -> tuple[list[dict], pd.DataFrame]:
    rows = [json.loads(line) for line in HALUEVAL.read_text(encoding="utf-8").splitlines()]
    random.Random(seed).shuffle(rows)
    rows = rows[:n]
    return rows, pd.DataFrame({"id": [r["id"] for r in rows], "question": [r["question"] for r in rows],
                               "answer": [r["answer"] for r in rows],
                               "contexts": [r["contexts"] if isinstance(r["contexts"], list) else [r["contexts"]]
                                            for r in rows]})


def _forget_text_caches() -> None:
    """Empty what a round would otherwise inherit from the round before it on the same rows: the caches of pure
    text readers (amounts by text, stems and rarity by word) and the support model's memos of scored pairs and
    word-piece counts (with them, every round after the first scored ``grounding_risk`` from memory and the
    default set looked ~6x cheaper than a fresh run)."""
    from evalkit.metrics.grounding import rarity
    from evalkit.metrics.support import get_support_model
    from evalkit.text.quantities import _read_quantities
    from evalkit.text.tokens import stem

    _read_quantities.cache_clear()
    stem.cache_clear()
    rarity.cache_clear()
    get_support_model()._memo.clear()
    get_support_model()._lengths.clear()


def cpu_section(n: int, seed: int, rounds: int = 3) -> list[str]:
    """CPU seconds per row of each profile's metrics, and of the default metric set with and without the evalkit
    profile's checks added (what a default run under ``profile: evalkit`` scores), alternated in one process so
    a busy machine weighs on every set alike; the median of ``rounds``."""
    import statistics
    import time

    from evalkit.metrics import DEFAULT_METRICS

    _, df = golden("dev")  # RAG rows with contexts and (mostly) a reference, as the default set reads them
    df = df.sample(n=min(n, len(df)), random_state=seed, replace=False)
    n = len(df)
    default = list(DEFAULT_METRICS)
    # name -> (metrics, profile); None: the metrics a user's run picks when it names none (the optional defaults
    # too, here the embedding metrics and support) and, under the evalkit profile, the profile's checks
    sets = {"seed profile (hallucination, relevance, completeness)": (PROFILES["seed"], "seed"),
            "evalkit profile (" + ", ".join(PROFILES["evalkit"]) + ")": (PROFILES["evalkit"], "evalkit"),
            "default set": (default, "seed"),
            "default set + the evalkit profile's checks": (default + PROFILES["evalkit"], "evalkit"),
            "default run, profile: seed (no metrics named)": (None, "seed"),
            "default run, profile: evalkit (no metrics named)": (None, "evalkit")}
    configs = {p: EvalConfig.from_dict({"profile": p}) for p in PROFILES}
    evalkit.evaluate(df.head(8), None, configs["evalkit"], progress=False)  # load every model once
    spent: dict[str, list[float]] = {k: [] for k in sets}
    for _ in range(rounds):
        for name, (metrics, profile) in sets.items():
            _forget_text_caches()  # each set is scored as a fresh run would: no reading cached by the one before
            start = time.process_time()
            evalkit.evaluate(df, metrics, configs[profile], progress=False)
            spent[name].append((time.process_time() - start) / n * 1000)
    per_row = {k: statistics.median(v) for k, v in spent.items()}
    lines = [f"## CPU per row, {n} rows of the golden dev split (median of {rounds} alternated rounds)", "",
             "| metric set | CPU ms per row |", "|---|---|"]
    lines += [f"| {k} | {v:.1f} |" for k, v in per_row.items()]
    names = list(sets)
    with_checks = per_row[names[3]] / per_row[names[2]]
    default_run = per_row[names[5]] / per_row[names[4]]
    lines += ["", f"The default set with the evalkit profile's checks costs {with_checks:.2f}x the CPU of the default "
              f"set alone; a run that names no metrics costs {default_run:.2f}x under `profile: evalkit` what it "
              f"costs under `profile: seed`."]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", default="heldout", choices=["heldout", "dev"])
    ap.add_argument("--halueval", type=int, default=1000, help="HaluEval QA dev rows to sample (0: none)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cpu", type=int, default=200, help="golden dev rows for the CPU comparison (0: none)")
    ap.add_argument("--no-elsewhere", dest="elsewhere", action="store_false",
                    help="leave out tests/golden/elsewhere/<split>.jsonl")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "verdicts.md"))
    args = ap.parse_args(argv)
    lines = ["# The verdict against careful readers", "", f"`python benchmarks/bench_verdicts.py --split {args.split} "
             f"--halueval {args.halueval} --seed {args.seed} --cpu {args.cpu}`", ""]
    lines += golden_section(args.split)
    if args.elsewhere:  # answers written the way RAG systems write, by writers who never saw the checks
        lines += [""] + golden_section(args.split, ELSEWHERE, "Answers written elsewhere (tests/golden/elsewhere)")
    if args.halueval:
        lines += [""] + halueval_section(args.halueval, args.seed)
    if args.cpu:
        lines += [""] + cpu_section(args.cpu, args.seed)
    text = "\n".join(lines) + "\n"
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
