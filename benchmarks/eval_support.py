"""ROC AUC of ``support`` against ``hallucinated`` on the development splits, every group held out, beside trivial
baselines.

Groups: each SummEdits domain, each HaluEval task (QA, dialogue, summarization). The second training stage
(``train_support.py --stage dev``) runs once per fold with that fold's groups left out (``FOLDS``), and each
group is scored here by the model of the fold that held it out, so every number is a held-out one. The first
stage (``--stage base``) never reads a development file, so its model can be scored on every group.

``support`` is higher-is-better, so it is read as "lower means hallucinated"; answer length as "longer means
hallucinated", the absent-token rate as "higher means hallucinated" (directions fixed a priori). The aggregation
over an answer's claims (the weakest, or their mean) is chosen leave-one-group-out: for each group, the one with
the higher median AUC over the other groups. Intervals: 95% percentile bootstrap, clustered by HaluEval item or
SummEdits document, seed 0.

    .venv/bin/python benchmarks/eval_support.py score --model /tmp/support_fold0 --groups halueval_summarization \\
        summedits/ectsum --name fold0
    .venv/bin/python benchmarks/eval_support.py report --runs fold0 fold1 ... --out benchmarks/results/support.json
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

SCORES = Path("/tmp/support_eval")
TASKS = ("summedits", "halueval_summarization", "halueval_qa", "halueval_dialogue")
DOMAINS = ("ectsum", "news", "podcast", "qmsumm", "sales_call", "sales_email", "samsum", "scitldr")
# fold k leaves out one SummEdits domain and (k < 3) one HaluEval task: every group is held out exactly once
FOLDS = [[f"summedits/{d}"] + ([t] if k < 3 else [])
         for k, (d, t) in enumerate(zip(DOMAINS, ["halueval_summarization", "halueval_qa", "halueval_dialogue"]
                                        + [None] * 5))]
ALL_GROUPS = [g for f in FOLDS for g in f]
AGGREGATIONS = ("min", "mean")
BASELINES = (("answer_length", "higher"), ("novel_token_rate", "higher"))


def rows_of(groups: list[str]) -> list[dict]:
    from support_data import dev_rows

    return [r for t in TASKS for r in dev_rows(t) if r["group"] in groups]


def baselines(rows: list[dict]) -> list[dict]:
    """Answer length and the absent-token rate, from evalkit's own registry metrics."""
    import pandas as pd

    import evalkit

    df = pd.DataFrame({"question": [r.get("question") or "" for r in rows],
                       "answer": [r["answer"] or "" for r in rows],
                       "contexts": [r["contexts"] if isinstance(r["contexts"], list) else [r["contexts"]]
                                    for r in rows]})
    base = evalkit.evaluate(df, [m for m, _ in BASELINES], progress=False)
    return [{m: (None if pd.isna(base.loc[i, m]) else float(base.loc[i, m])) for m, _ in BASELINES}
            for i in range(len(rows))]


def score(model_dir: str | None, groups: list[str], name: str, limit: int | None,
          per_group: int | None = None) -> Path:
    """Score ``groups``' rows with one model, one thread, recording each claim's probability and the CPU time."""
    import torch

    from evalkit.metrics.support import SupportModel, get_support_model, support_score

    torch.set_num_threads(1)
    model = get_support_model() if model_dir is None else SupportModel(model_dir)
    rows = rows_of(groups)
    if per_group:  # the ablation's smaller evaluation: the first rows of each group (HaluEval items stay whole)
        seen: dict[str, int] = {}
        rows = [r for r in rows if seen.setdefault(r["group"], 0) < per_group and not seen.__setitem__(
            r["group"], seen[r["group"]] + 1)]
    if limit:
        rows = rows[:limit]
    feats = baselines(rows)
    out, t_start = [], time.time()
    for r, f in zip(rows, feats):
        ctx = r["contexts"] if isinstance(r["contexts"], list) else [r["contexts"]]
        t0 = time.process_time()
        s = support_score(r["answer"], ctx, r.get("question"), model=model)
        cpu = time.process_time() - t0
        d = s.details
        out.append({"id": r["id"], "task": r["task"], "group": r["group"], "cluster": r["cluster"],
                    "hallucinated": bool(r["hallucinated"]), "support": s.value,
                    "claims": [c["probability"] for c in d.get("sentences", [])],
                    "reason": None if s.value is not None else d.get("reason"),
                    "windows": d.get("windows"), "windows_capped": d.get("windows_capped", 0),
                    "pairs": d.get("pairs_checked"), "cpu_ms": round(cpu * 1000, 2), **f})
        if len(out) % 200 == 0:
            print(f"{name}: {len(out)}/{len(rows)} rows, {time.time() - t_start:.0f}s", flush=True)
    path = SCORES / f"{name}.json"
    SCORES.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"model": model.signature(), "groups": groups, "rows": out}))
    print(f"{name}: {len(out)} rows in {time.time() - t_start:.0f}s -> {path}", flush=True)
    return path


def aggregated(row: dict, how: str) -> float | None:
    if not row["claims"]:
        return None
    return min(row["claims"]) if how == "min" else statistics.fmean(row["claims"])


def auc(rows: list[dict], values: list[float | None], direction: str, resamples: int):
    import numpy as np

    from evalkit.decide.calibrate import roc_auc

    keep = [(r, v) for r, v in zip(rows, values) if v is not None]
    if len({r["hallucinated"] for r, _ in keep}) < 2:
        return None
    return roc_auc(np.array([v for _, v in keep], dtype=float), np.array([r["hallucinated"] for r, _ in keep]),
                   direction, n_resamples=resamples, seed=0, groups=[r["cluster"] for r, _ in keep])


def cell(iv) -> dict | None:
    return None if iv is None or iv.estimate is None else {"auc": iv.estimate, "low": iv.low, "high": iv.high}


def group_table(rows: list[dict], resamples: int) -> dict:
    """Per group: rows, AUC of each aggregation and of the baselines, CPU ms per row, capped rows."""
    out = {}
    for g in sorted({r["group"] for r in rows}):
        sub = [r for r in rows if r["group"] == g]
        ent = {"rows": len(sub), "undetermined": sum(r["support"] is None for r in sub),
               "clusters": len({r["cluster"] for r in sub}), "capped": sum(r["windows_capped"] > 0 for r in sub)}
        for how in AGGREGATIONS:
            ent[f"support_{how}"] = cell(auc(sub, [aggregated(r, how) for r in sub], "lower", resamples))
        for m, direction in BASELINES:
            ent[m] = cell(auc(sub, [r[m] for r in sub], direction, resamples))
        cpu = sorted(r["cpu_ms"] for r in sub if r["support"] is not None)
        ent["cpu_ms"] = {"mean": statistics.fmean(cpu), "median": statistics.median(cpu),
                         "p95": cpu[int(0.95 * (len(cpu) - 1))]} if cpu else None
        out[g] = ent
    return out


def choose_aggregation(table: dict) -> dict:
    """For each group, the aggregation with the higher median AUC over the *other* groups (leave-one-group-out)."""
    chosen = {}
    for g in table:
        med = {how: statistics.median([t[f"support_{how}"]["auc"] for h, t in table.items()
                                       if h != g and t[f"support_{how}"]] or [0.0]) for how in AGGREGATIONS}
        chosen[g] = max(AGGREGATIONS, key=lambda how: (med[how], how == "min"))
    return chosen


def report(runs: list[str], resamples: int, out: Path | None) -> dict:
    rows, models = [], {}
    for name in runs:
        d = json.loads((SCORES / f"{name}.json").read_text())
        rows += d["rows"]
        models[name] = {"model": d["model"], "groups": d["groups"]}
    table = group_table(rows, resamples)
    chosen = choose_aggregation(table)
    for g, how in chosen.items():
        table[g]["chosen"] = how
        table[g]["support"] = table[g][f"support_{how}"]
    dom = [table[f"summedits/{d}"]["support"]["auc"] for d in DOMAINS if f"summedits/{d}" in table]
    summary = {"runs": models, "groups": table,
               "summedits_median": statistics.median(dom) if dom else None,
               "summedits_worst": min(dom) if dom else None}
    if out is not None:
        out.write_text(json.dumps(summary, indent=1) + "\n")
    print(markdown(summary))
    return summary


def fmt(c: dict | None) -> str:
    return "n/a" if c is None else f"{c['auc']:.3f} [{c['low']:.3f}, {c['high']:.3f}]"


def markdown(summary: dict) -> str:
    lines = ["| group | rows (undet.) | support (chosen aggregation) | support, min | support, mean | answer length "
             "| absent-token rate | CPU ms/row mean (median, p95) | rows capped |",
             "|---|---|---|---|---|---|---|---|---|"]
    for g, t in summary["groups"].items():
        c = t["cpu_ms"]
        cpu = "n/a" if c is None else f"{c['mean']:.0f} ({c['median']:.0f}, {c['p95']:.0f})"
        lines.append(f"| {g} | {t['rows']} ({t['undetermined']}) | {fmt(t.get('support'))} ({t.get('chosen')}) | "
                     f"{fmt(t['support_min'])} | {fmt(t['support_mean'])} | {fmt(t['answer_length'])} | "
                     f"{fmt(t['novel_token_rate'])} | {cpu} | {t['capped']} |")
    if summary["summedits_median"] is not None:
        lines.append(f"\nSummEdits: median domain AUC {summary['summedits_median']:.3f}, worst "
                     f"{summary['summedits_worst']:.3f}.")
    return "\n".join(lines)


def with_window_sentences(n: int) -> None:
    """Make the metric's windows ``n`` sentences long for this process (a measurement of another window size; the
    shipped metric's size is the constant in ``evalkit/metrics/support.py``)."""
    import functools

    import evalkit.metrics.support as support

    support.context_windows = functools.partial(support.context_windows, n_sentences=n, stride=n - 1)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("score")
    s.add_argument("--model", default=None, help="a support model folder (default: the shipped one)")
    s.add_argument("--groups", nargs="+", default=ALL_GROUPS)
    s.add_argument("--name", required=True)
    s.add_argument("--limit", type=int, default=None)
    s.add_argument("--per-group", type=int, default=None, help="at most this many rows of each group")
    s.add_argument("--window-sentences", type=int, default=None, help="score with windows of N sentences "
                   "(stride N-1: the metric's one-sentence overlap) instead of the metric's (the window selection)")
    r = sub.add_parser("report")
    r.add_argument("--runs", nargs="+", required=True)
    r.add_argument("--resamples", type=int, default=1000)
    r.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.cmd == "score":
        if args.window_sentences:
            with_window_sentences(args.window_sentences)
        score(args.model, args.groups, args.name, args.limit, args.per_group)
    else:
        report(args.runs, args.resamples, args.out)


if __name__ == "__main__":
    main()
