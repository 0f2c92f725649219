"""Train, cross-validate and ship the detector behind `grounding_risk` (evalkit/resources/grounding_model.json).

    python benchmarks/train_grounding.py [--resamples 1000] [--limit N] [--check]

Data: the development splits in ../shared/bench (HaluEval QA / dialogue / summarization, SummEdits).
Protocol: 5-fold GroupKFold over the pooled tasks with groups = HaluEval item_id (both answers of an
item together) or SummEdits document, so no item or document falls on both sides. Out-of-fold
probabilities give per-task ROC AUC with clustered bootstrap 95% CIs, beside the seed `hallucination`
score and the trivial baselines (answer length; share of answer tokens absent from the context), AUC
within answer-length quintiles (so a length shortcut cannot pass for skill), expected calibration error,
and a feature-group ablation. The final model is fit on all rows and written as JSON; the run is seeded
and deterministic, so re-running rewrites the same file (``--check`` verifies that without writing).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import time

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold

import evalkit
from evalkit.calibrate import roc_auc
from evalkit.metrics.anchors import default_hedges
from evalkit.metrics.grounding import FEATURES, GROUPS, Evidence, answer_features
from evalkit.nlp import NlpPipeline
from evalkit.text import word_tokens

from common import BENCH, ROOT, TASKS, load_task

MODEL_PATH = ROOT / "evalkit" / "resources" / "grounding_model.json"
CACHE = ROOT / "benchmarks" / ".cache"
SEED = 0
PARAMS = {"max_iter": 300, "learning_rate": 0.05, "max_leaf_nodes": 15, "min_samples_leaf": 30,
          "l2_regularization": 1.0, "random_state": SEED}
TASK_WEIGHT_POWER = 0.5  # rows weighted by (1 / task size) ** 0.5, so QA's 4,000 rows do not drown the rest


def feature_code_sha256() -> str:
    """Hash of the code that computes the features, so a cache never outlives a change to it."""
    pkg = ROOT / "evalkit"
    parts = [*sorted((pkg / "text").glob("*.py")), pkg / "nlp.py", pkg / "metrics" / "grounding.py",
             pkg / "metrics" / "anchors.py", pkg / "metrics" / "lexical.py", pkg / "resources" / "lexicons.yaml"]
    return hashlib.sha256(b"".join(p.read_bytes() for p in parts)).hexdigest()


def features_for(task: str, limit: int | None, align: str = "lexical") -> pd.DataFrame:
    """Features of every row of a task (cached by the file's hash, the alignment and evalkit's feature list)."""
    df = load_task(task, limit)
    key = hashlib.sha256((df.attrs.get("sha256", "") + str(limit) + align + ",".join(FEATURES)
                          + feature_code_sha256()).encode()).hexdigest()[:16]
    cache = CACHE / f"{task}-{key}.parquet"
    if cache.exists():
        return pd.read_parquet(cache)
    nlp = NlpPipeline()
    hedges = default_hedges()
    encoder = None
    if align == "embedding":
        from evalkit.encoders import get_encoder

        encoder = get_encoder()
    answers = [a or "" for a in df["answer"]]
    joined = ["\n\n".join(c) for c in df["contexts"]]
    t0 = time.perf_counter()
    docs = nlp.parse_answers(answers)
    distinct = list(dict.fromkeys(joined))
    evs = {t: Evidence.build(t, d, encoder) for t, d in zip(distinct, nlp.parse_contexts(distinct))}
    rows = [answer_features(a, d, evs[j], hedges, encoder)[0] for a, d, j in zip(answers, docs, joined)]
    secs = time.perf_counter() - t0
    out = pd.DataFrame(rows, columns=list(FEATURES))
    out["task"], out["group"] = task, task + ":" + df["group"].astype(str)
    out["y"] = df["hallucinated"].astype(int).to_numpy()
    out["answer_tokens"] = [len(word_tokens(a)) for a in answers]
    out["novel_token_rate_baseline"] = out["novel_token_rate"]
    seed = evalkit.evaluate(df[["id", "question", "answer", "contexts"]], ["hallucination"], progress=False)
    out["seed_hallucination"] = seed["hallucination"].astype(float).to_numpy()
    out.attrs["seconds"] = secs
    CACHE.mkdir(parents=True, exist_ok=True)
    out.to_parquet(cache)
    (CACHE / f"{task}-{key}.seconds").write_text(f"{secs:.3f} {len(out)}")
    return out


def weights(tasks: pd.Series) -> np.ndarray:
    w = tasks.map((1 / tasks.value_counts()) ** TASK_WEIGHT_POWER).to_numpy(float)
    return w / w.mean()


def fit(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> HistGradientBoostingClassifier:
    return HistGradientBoostingClassifier(**PARAMS).fit(X, y, sample_weight=w)


def logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-9, 1 - 1e-9)
    return np.log(p / (1 - p))


def oof(data: pd.DataFrame, cols: list[str]) -> np.ndarray:
    """Out-of-fold log-odds (GroupKFold(5) over items/documents)."""
    X, y, g, w = data[cols].to_numpy(float), data["y"].to_numpy(), data["group"].to_numpy(), weights(data["task"])
    z = np.zeros(len(data))
    for tr, te in GroupKFold(n_splits=5).split(X, y, g):
        z[te] = logit(fit(X[tr], y[tr], w[tr]).predict_proba(X[te])[:, 1])
    return z


def export_trees(model: HistGradientBoostingClassifier) -> tuple[float, list[dict]]:
    """The fitted trees as JSON-ready parallel arrays (see evalkit.metrics.grounding.raw_score)."""
    trees = []
    for (pred,) in model._predictors:
        n = pred.nodes
        depth = int(n["depth"].max()) + 1
        trees.append({"feature": n["feature_idx"].astype(int).tolist(),
                      "threshold": [float(x) for x in n["num_threshold"]],  # exact: data values sit on thresholds
                      "left": n["left"].astype(int).tolist(), "right": n["right"].astype(int).tolist(),
                      "value": [float(x) for x in n["value"]], "leaf": n["is_leaf"].astype(int).tolist(),
                      "depth": depth})
    return float(np.ravel(model._baseline_prediction)[0]), trees


def repr_round(x: float) -> float:
    return float(f"{float(x):.12g}")


def strata_auc(score: np.ndarray, y: np.ndarray, length: np.ndarray, bins: int = 5) -> float:
    """Mean ROC AUC within answer-length quantile bins (weighted by bin size; bins with one class skipped)."""
    edges = np.unique(np.quantile(length, np.linspace(0, 1, bins + 1)))
    idx = np.clip(np.searchsorted(edges, length, side="right") - 1, 0, len(edges) - 2)
    tot, acc = 0, 0.0
    for b in np.unique(idx):
        m = idx == b
        if y[m].min() != y[m].max():
            acc += m.sum() * roc_auc_score(y[m], score[m])
            tot += m.sum()
    return acc / tot if tot else float("nan")


def ece(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    idx = np.clip((p * bins).astype(int), 0, bins - 1)
    return float(sum(abs(p[idx == b].mean() - y[idx == b].mean()) * (idx == b).sum() for b in range(bins) if (idx == b).any())
                 / len(p))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--check", action="store_true", help="verify the shipped model file is reproduced; write nothing")
    ap.add_argument("--align", default="lexical", choices=["lexical", "embedding"],
                    help="evidence alignment; 'embedding' is measured only (the shipped model is lexical)")
    args = ap.parse_args()
    if args.align != "lexical":
        args.check = True  # measure only: never overwrite the shipped (lexical) model or its results
    data = pd.concat([features_for(t, args.limit, args.align) for t in TASKS], ignore_index=True)
    cols = list(FEATURES)
    z = oof(data, cols)
    platt = LogisticRegression(C=1e6, max_iter=1000).fit(z.reshape(-1, 1), data["y"].to_numpy())
    cal = {"a": repr_round(platt.coef_[0][0]), "b": repr_round(platt.intercept_[0])}
    data["oof"] = 1 / (1 + np.exp(-(cal["a"] * z + cal["b"])))
    lines = ["| task | rows | grounding_risk (OOF) | seed hallucination | answer length | novel-token rate | "
             "grounding_risk AUC in length quintiles | length-quintile AUC of seed |",
             "|---|---|---|---|---|---|---|---|"]
    report = {}
    for task in TASKS:
        d = data[data["task"] == task]
        y, g = d["y"].to_numpy(), d["group"].tolist()
        cell = {}
        for name, s in (("grounding", d["oof"]), ("seed", d["seed_hallucination"]), ("length", d["answer_tokens"]),
                        ("novel", d["novel_token_rate_baseline"])):
            iv = roc_auc(s.astype(float).to_numpy(), y, n_resamples=args.resamples, seed=SEED, groups=g)
            cell[name] = iv
        strata = strata_auc(d["oof"].to_numpy(), y, d["answer_tokens"].to_numpy())
        strata_seed = strata_auc(d["seed_hallucination"].to_numpy(), y, d["answer_tokens"].to_numpy())
        report[task] = {k: [v.estimate, v.low, v.high] for k, v in cell.items()}
        report[task].update({"strata_auc": strata, "strata_auc_seed": strata_seed, "ece": ece(d["oof"].to_numpy(), y)})
        lines.append(f"| {task} | {len(d)} | " + " | ".join(str(cell[k]) for k in ("grounding", "seed", "length", "novel"))
                     + f" | {strata:.3f} | {strata_seed:.3f} |")
    print("\n".join(lines))
    print("\nECE of out-of-fold probabilities: " + ", ".join(f"{t} {report[t]['ece']:.3f}" for t in TASKS))
    # ablation: drop one feature group at a time (not part of the model file; skipped by --check)
    abl = ["| dropped group | " + " | ".join(TASKS) + " |", "|---|" + "---|" * len(TASKS)]
    base = {t: roc_auc_score(data.loc[data.task == t, "y"], z[data.task == t]) for t in TASKS}
    abl.append("| (none) | " + " | ".join(f"{base[t]:.3f}" for t in TASKS) + " |")
    for gname, gcols in ([] if args.check else GROUPS.items()):
        p = oof(data, [c for c in cols if c not in gcols])
        abl.append(f"| {gname} | " + " | ".join(
            f"{roc_auc_score(data.loc[data.task == t, 'y'], p[data.task == t]) - base[t]:+.3f}" for t in TASKS) + " |")
    print("\nAblation (change in out-of-fold ROC AUC when the group is removed):\n" + "\n".join(abl))
    results = ROOT / "benchmarks" / "results"
    results.mkdir(exist_ok=True)
    if not args.check and args.limit is None:
        from evalkit.plots import reliability_diagram, save_figure

        (results / "grounding.md").write_text(
            f"Grouped 5-fold CV on ../shared/bench ({args.resamples} clustered bootstrap resamples, seed {SEED}).\n\n"
            + "\n".join(lines) + "\n\nECE (10 bins): " + ", ".join(f"{t} {report[t]['ece']:.3f}" for t in TASKS)
            + "\n\n" + "\n".join(abl) + "\n")
        save_figure(reliability_diagram(data["oof"], data["y"], bins=10, title="grounding: out-of-fold reliability"),
                    "grounding_reliability", results)
    # throughput from the feature cache timings
    for t in TASKS:
        for f in CACHE.glob(f"{t}-*.seconds"):
            secs, n = f.read_text().split()
            print(f"throughput {t}: {int(n) / float(secs):.1f} answers/s ({float(secs) / int(n) * 1000:.0f} s per 1,000)")
    if args.align != "lexical":
        print(f"\nalign={args.align}: measured only; the shipped model (lexical alignment) is untouched")
        return
    # final model on all rows
    final = fit(data[cols].to_numpy(float), data["y"].to_numpy(), weights(data["task"]))
    baseline, trees = export_trees(final)
    file_hashes = {f: hashlib.sha256((BENCH / f).read_bytes()).hexdigest() for f in sorted(TASKS.values())}
    train_hash = hashlib.sha256(json.dumps(file_hashes, sort_keys=True).encode()).hexdigest()
    model = {
        "name": "grounding-hgb-v1", "kind": "HistGradientBoostingClassifier exported to arrays + Platt scaling",
        "params": {k: v for k, v in PARAMS.items()}, "task_weight_power": TASK_WEIGHT_POWER, "seed": SEED,
        "features": cols, "baseline": repr_round(baseline), "calibration": cal,
        "training_data": {"files": file_hashes, "sha256": train_hash, "rows": int(len(data)), "limit": args.limit},
        "cv": {"protocol": "GroupKFold(5), groups = HaluEval item_id / SummEdits document", "per_task": {
            t: {"roc_auc": [round(x, 4) if x is not None else None for x in report[t]["grounding"]],
                "strata_auc": round(report[t]["strata_auc"], 4), "ece": round(report[t]["ece"], 4)} for t in TASKS}},
        "trees": trees,
    }
    # the exported arrays must reproduce scikit-learn's own probabilities
    from evalkit.metrics.grounding import raw_score

    probe = {**model, "_trees": [{k: np.asarray(v) for k, v in t.items()} for t in trees]}
    Xall = data[cols].to_numpy(float)
    diff = np.max(np.abs(raw_score(Xall, probe) - logit(final.predict_proba(Xall)[:, 1])))
    print(f"\nexported trees vs scikit-learn log-odds: max abs difference {diff:.2e}")
    assert diff < 1e-9, diff
    text = json.dumps(model, separators=(",", ":")) + "\n"
    if args.check:
        same = MODEL_PATH.exists() and MODEL_PATH.read_text() == text
        print(f"\n{MODEL_PATH} reproduced byte for byte: {same}")
        raise SystemExit(0 if same else 1)
    MODEL_PATH.write_text(text)
    print(f"\nwrote {MODEL_PATH} ({len(text)} bytes)")


if __name__ == "__main__":
    main()
