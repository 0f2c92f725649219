"""ROC AUC of ``support`` against ``hallucinated`` on the development splits, beside trivial baselines.

The support model never saw these files (``support_data.py`` reads only the NLI pairs and HaluEval
summarization *train*), so every number here is held out: each SummEdits domain, each HaluEval task.
``support`` is higher-is-better, so it is read as "lower means hallucinated"; answer length as "longer means
hallucinated", the absent-token rate as "higher means hallucinated" (directions fixed a priori, from the registry).
Intervals: 95% percentile bootstrap, clustered by item (HaluEval) or document (SummEdits), seed 0.

    # score (one process per task group; each single-threaded), then write the table
    .venv/bin/python benchmarks/eval_support.py score --tasks halueval_summarization halueval_dialogue
    .venv/bin/python benchmarks/eval_support.py score --tasks summedits halueval_qa
    .venv/bin/python benchmarks/eval_support.py report
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

SCORES = Path("/tmp/support_eval")
OUT = HERE / "results" / "support.md"
ORDER = ["summedits", "halueval_summarization", "halueval_qa", "halueval_dialogue"]


def score(tasks: list[str], limit: int | None, model_dir: str | None = None) -> None:
    import torch

    import evalkit
    from common import load_task
    from evalkit.metrics.support import SupportModel, get_support_model, support_score as support

    torch.set_num_threads(1)
    model = get_support_model() if model_dir is None else SupportModel(model_dir)
    SCORES.mkdir(parents=True, exist_ok=True)
    for task in tasks:
        df = load_task(task, limit)
        base = evalkit.evaluate(df, ["answer_length", "novel_token_rate"], progress=False)
        rows = []
        t_task = time.time()
        for i, r in df.iterrows():
            t0 = time.process_time()
            s = support(r["answer"], r["contexts"], model=model)
            cpu = time.process_time() - t0
            d = s.details
            rows.append({"id": r["id"], "group": r["group"], "domain": r.get("domain") if "domain" in df else None,
                         "hallucinated": bool(r["hallucinated"]), "support": s.value,
                         "reason": None if s.value is not None else d.get("reason"),
                         "sentences": len(d.get("sentences", [])), "windows": d.get("windows"),
                         "windows_capped": d.get("windows_capped", 0), "cpu_ms": round(cpu * 1000, 2),
                         "answer_length": float(base.loc[i, "answer_length"]),
                         "novel_token_rate": None if base.loc[i, "novel_token_rate"] is None or
                         base["novel_token_rate"].isna()[i] else float(base.loc[i, "novel_token_rate"])})
            if len(rows) % 100 == 0:
                print(f"{task}: {len(rows)}/{len(df)} rows, {time.time() - t_task:.0f}s", flush=True)
        (SCORES / f"{task}.json").write_text(json.dumps({"model": model.signature(), "rows": rows}))
        print(f"{task}: done, {len(rows)} rows in {time.time() - t_task:.0f}s", flush=True)


def _auc(rows, key, direction, resamples):
    import numpy as np

    from evalkit.calibrate import roc_auc

    ok = [r for r in rows if r[key] is not None]
    if not ok:
        return None, 0
    iv = roc_auc(np.array([r[key] for r in ok], dtype=float), np.array([r["hallucinated"] for r in ok]),
                 direction, n_resamples=resamples, seed=0, groups=[r["group"] for r in ok])
    return iv, len(ok)


def _cell(iv) -> str:
    return "n/a" if iv is None or iv.estimate is None else f"{iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}]"


METRICS = [("support", "lower"), ("answer_length", "higher"), ("novel_token_rate", "higher")]
# grounding_risk on the same dev rows, from benchmarks/results/grounding.md (issue 18; grouped CV for HaluEval,
# leave-one-domain-out for SummEdits), not recomputed here
GROUNDING_RISK = {"summedits": "0.450 [0.383, 0.512]", "halueval_summarization": "0.780 [0.747, 0.812]",
                  "halueval_qa": "0.985 [0.982, 0.988]", "halueval_dialogue": "0.715 [0.684, 0.747]"}
GROUNDING_DOMAIN = {"ectsum": "0.597", "news": "0.513", "podcast": "0.454", "qmsumm": "0.353", "sales_call": "0.393",
                    "sales_email": "0.515", "samsum": "0.577", "scitldr": "0.346"}


def report(resamples: int) -> dict:
    data = {t: json.loads((SCORES / f"{t}.json").read_text()) for t in ORDER if (SCORES / f"{t}.json").exists()}
    out: dict = {"tasks": {}, "domains": {}}
    lines = ["### Development sets (every one held out from training)",
             "| task | rows (undetermined) | support | answer length | absent-token rate | grounding_risk "
             "(issue 18) | CPU ms/row mean (median, p95) |", "|---|---|---|---|---|---|---|"]
    for t, d in data.items():
        rows = d["rows"]
        cells = {}
        for key, direction in METRICS:
            iv, n = _auc(rows, key, direction, resamples)
            cells[key] = iv
            out["tasks"].setdefault(t, {})[key] = None if iv is None else \
                {"auc": iv.estimate, "low": iv.low, "high": iv.high, "n": n}
        cpu = sorted(r["cpu_ms"] for r in rows if r["support"] is not None)
        und = sum(r["support"] is None for r in rows)
        p95 = cpu[int(0.95 * (len(cpu) - 1))] if cpu else float("nan")
        out["tasks"][t]["cpu_ms_mean"] = statistics.fmean(cpu) if cpu else None
        lines.append(f"| {t} | {len(rows)} ({und}) | {_cell(cells['support'])} | {_cell(cells['answer_length'])} | "
                     f"{_cell(cells['novel_token_rate'])} | {GROUNDING_RISK.get(t, 'n/a')} | "
                     f"{statistics.fmean(cpu):.0f} ({statistics.median(cpu):.0f}, {p95:.0f}) |")
    if "summedits" in data:
        rows = data["summedits"]["rows"]
        lines += ["", "### SummEdits by domain (all held out: the model never saw SummEdits)",
                  "| domain | rows | documents | support | answer length | absent-token rate | grounding_risk "
                  "(issue 18, LODO) | windows capped (rows) |", "|---|---|---|---|---|---|---|---|"]
        aucs = {}
        for dom in sorted({r["domain"] for r in rows}):
            sub = [r for r in rows if r["domain"] == dom]
            cells = {k: _auc(sub, k, direction, resamples)[0] for k, direction in METRICS}
            aucs[dom] = cells["support"].estimate
            out["domains"][dom] = {k: None if v is None else {"auc": v.estimate, "low": v.low, "high": v.high}
                                   for k, v in cells.items()}
            lines.append(f"| {dom} | {len(sub)} | {len({r['group'] for r in sub})} | {_cell(cells['support'])} | "
                         f"{_cell(cells['answer_length'])} | {_cell(cells['novel_token_rate'])} | "
                         f"{GROUNDING_DOMAIN.get(dom, 'n/a')} | {sum(r['windows_capped'] > 0 for r in sub)} |")
        vals = [v for v in aucs.values() if v is not None]
        out["summedits_median"], out["summedits_worst"] = statistics.median(vals), min(vals)
        worst = min(aucs, key=lambda k: aucs[k] if aucs[k] is not None else 9)
        lines.append(f"\nSummEdits: median domain AUC {out['summedits_median']:.3f}, worst {out['summedits_worst']:.3f}"
                     f" ({worst}).")
    model = next(iter(data.values()))["model"] if data else "?"
    header = (f"ROC AUC vs `hallucinated`, 95% bootstrap clustered by item / document ({resamples} resamples, "
              f"seed 0). Model `{model}`.\n\n")
    text = header + "\n".join(lines) + "\n"
    (SCORES / "report.json").write_text(json.dumps(out, indent=1))
    (SCORES / "tables.md").write_text(text)
    print(text)
    return {"text": text, **out}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("score")
    s.add_argument("--tasks", nargs="+", default=ORDER)
    s.add_argument("--limit", type=int, default=None)
    s.add_argument("--model", default=None, help="a support model folder (default: the shipped one)")
    r = sub.add_parser("report")
    r.add_argument("--resamples", type=int, default=1000)
    args = ap.parse_args(argv)
    if args.cmd == "score":
        score(args.tasks, args.limit, args.model)
    else:
        report(args.resamples)


if __name__ == "__main__":
    main()
