"""ROC AUC of every deterministic metric against ``hallucinated`` on ../shared/bench, beside trivial baselines.

    python benchmarks/bench_validity.py [--resamples 1000] [--limit N] [--out benchmarks/results/validity.md]

Intervals are 95% percentile bootstraps clustered by item (HaluEval) or document (SummEdits).
Direction is fixed a priori from the registry (a lower-is-better score is read as "higher means
hallucinated"; answer length as "longer means hallucinated"), never tuned on this data.
Reference metrics are marked: on HaluEval the non-hallucinated answer *is* the ground truth.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


import evalkit
from evalkit.decide.calibrate import roc_auc

from common import TASKS, load_task, positive_direction

CONTEXT_METRICS = ["hallucination", "relevance", "completeness", "source_citation", "dont_know"]
REFERENCE_METRICS = ["exact_match", "keyword_coverage", "number_match", "answer_completeness"]
BASELINES = ["answer_length", "novel_token_rate"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--limit", type=int, default=None, help="rows per task (default: all)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "validity.md"))
    args = ap.parse_args()
    metrics = CONTEXT_METRICS + REFERENCE_METRICS + BASELINES
    raw = {}
    for task in TASKS:
        df = load_task(task, args.limit)
        t0 = time.perf_counter()
        res = evalkit.evaluate(df, metrics, progress=False)
        secs = time.perf_counter() - t0
        y = res["hallucinated"].astype(bool).to_numpy()
        raw[task] = {"rows": len(res), "seconds": round(secs, 1)}
        for m in metrics:
            col = res[m]
            ok = col.notna().to_numpy()
            s = col[ok].astype(float).to_numpy()
            iv = roc_auc(s, y[ok], positive_direction(m), n_resamples=args.resamples, seed=0,
                         groups=res.loc[ok, "group"].tolist())
            raw[task][m] = {"auc": iv.estimate, "low": iv.low, "high": iv.high, "n": int(ok.sum())}
        print(f"{task}: {len(res)} rows scored in {secs:.1f}s", flush=True)
    lines = ["| metric | kind | " + " | ".join(TASKS) + " |", "|---|---|" + "---|" * len(TASKS)]
    for m in metrics:
        kind = "baseline" if m in BASELINES else ("reference (leaks)" if m in REFERENCE_METRICS else "context")
        cells = []
        for task in TASKS:
            r = raw[task][m]
            cells.append("n/a" if r["auc"] is None else f"{r['auc']:.3f} [{r['low']:.3f}, {r['high']:.3f}]")
        lines.append(f"| {m} | {kind} | " + " | ".join(cells) + " |")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    header = (f"ROC AUC vs `hallucinated` (95% clustered bootstrap, {args.resamples} resamples, seed 0); "
              f"rows per task: " + ", ".join(f"{t} {raw[t]['rows']}" for t in TASKS) + "\n\n")
    out.write_text(header + "\n".join(lines) + "\n")
    out.with_suffix(".json").write_text(json.dumps(raw, indent=2, sort_keys=True))
    print(header + "\n".join(lines))


if __name__ == "__main__":
    main()
