"""Train, select, cross-validate and ship the detector behind `grounding_risk` (evalkit/resources/grounding_model.json).

    python benchmarks/train_grounding.py [--resamples 1000] [--limit N] [--select] [--check]

Data (../shared/bench, development and training splits only): HaluEval QA / dialogue / summarization dev and
SummEdits dev (human labels), plus ``N_TRAIN_ITEMS`` items of HaluEval summarization *train*, and FactCC-style
synthetic pairs (benchmarks/grounding_synthetic.py) made from those training documents and the SummEdits dev
documents; which rows and inputs a configuration trains on is part of the configuration (``CONFIGS``). The
shipped one, ``SHIPPED``, reads the support model's score (``entailment_min``, issue 24) beside the lexical
features and trains on the development rows only (the support model trained on the HaluEval training items, so
its score there is in-sample); ``--select`` shows why, beside the lexical-only configurations.

Protocol. The combination is a monotone gradient-boosted model (``MONOTONE`` in evalkit.metrics.grounding:
more unsupported evidence never lowers the risk); the answer's length is no input. Two criteria:
* SummEdits leave-one-domain-out (LODO): for each of its 8 domains, train on everything except that domain's
  SummEdits rows and the synthetic rows made from its documents, score that domain. The worst domain is the
  selection criterion (``--select`` compares the configurations in ``CONFIGS``), the median is reported beside it.
* 5-fold GroupKFold over all rows, groups = HaluEval item / SummEdits document (synthetic rows go with the
  document they came from): out-of-fold AUC on every development task.
Intervals are clustered bootstrap (by item / document). Platt scaling is fitted on the out-of-fold log-odds of
the real (non-synthetic) rows, so the shipped 0.5 threshold is calibrated on those rows and nowhere else.
The run is seeded and deterministic; ``--check`` rebuilds the model and verifies the shipped file byte for byte.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import time
from pathlib import Path

# one thread per fit: the trees are the same, and on a shared machine OpenMP's spinning threads cost more than
# they save (set before scikit-learn loads its thread pool)
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold

import evalkit
from evalkit.decide.calibrate import roc_auc
from evalkit.metrics.anchors import default_hedges
from evalkit.metrics.grounding import (ENTAILMENT, ENTAILMENT_UNDETERMINED, FEATURES, GROUPS, MODEL_FEATURES,
                                       MONOTONE, Evidence, answer_features)
from evalkit.base.signature import support_model_signature
from evalkit.base.nlp import NlpPipeline
from evalkit.text import word_tokens

from common import BENCH, ROOT, TASKS, TRAIN_FILE, load_task, load_train_items
from grounding_synthetic import copied_sentences, corrupt

MODEL_PATH = ROOT / "evalkit" / "resources" / "grounding_model.json"
CACHE = ROOT / "benchmarks" / ".cache"
SEED = 0
N_TRAIN_ITEMS = 700  # HaluEval summarization training items (documents) used; parsing dominates the run time
SUMMEDITS_COPIES = 6  # synthetic faithful/unfaithful copy pairs per SummEdits dev document
PARAMS = {"max_iter": 200, "learning_rate": 0.05, "max_leaf_nodes": 15, "min_samples_leaf": 30,
          "l2_regularization": 1.0, "early_stopping": False, "random_state": SEED}
TASK_WEIGHT_POWER = 0.5  # rows weighted by (1 / task size) ** 0.5, so QA's 4,000 rows do not drown the rest
EXTRA_TASKS = ("halueval_train", "summedits_synthetic")
# configurations compared by --select: which synthetic rows join the training data, and whether the trees are
# monotone. Only monotone ones are eligible (issue 18); the worst SummEdits LODO domain decides among them, and
# SHIPPED is the one it chose (the unconstrained row is there to show what the constraint costs or buys).
# ``entailment``: the support model's score is an input; its rows are then the development rows only, because the
# support model trained on HaluEval summarization *train* (its score there is in-sample and would teach the
# trees to trust it more than it earns on new answers). ``train_items: False`` drops those rows without it, so
# the two inputs are compared on the same rows.
CONFIGS = {
    "monotone + entailment, development rows": {"monotone": True, "synthetic": "none", "entailment": True},
    "monotone, development rows": {"monotone": True, "synthetic": "none", "train_items": False},
    "monotone, no synthetic": {"monotone": True, "synthetic": "none"},
    "monotone + all synthetic": {"monotone": True, "synthetic": "all"},
    "monotone + synthetic without copied sentences": {"monotone": True, "synthetic": "no_copies"},
    "monotone + SummEdits-document synthetic only": {"monotone": True, "synthetic": "summedits_only"},
    "monotone + corrupted HaluEval summaries only": {"monotone": True, "synthetic": "summaries_only"},
    "unconstrained + all synthetic (not eligible)": {"monotone": False, "synthetic": "all"},
}
SHIPPED = "monotone + entailment, development rows"


def feature_code_sha256() -> str:
    """Hash of the code that computes the features and the synthetic rows, so a cache never outlives a change: the
    evalkit that is imported (an installed or editable one may not be this checkout's), not the files beside us."""
    pkg = Path(evalkit.__file__).resolve().parent
    parts = [*sorted((pkg / "text").glob("*.py")), pkg / "base" / "nlp.py",
             *sorted((pkg / "metrics").glob("grounding*.py")), pkg / "metrics" / "anchors.py",
             pkg / "metrics" / "lexical.py", pkg / "resources" / "lexicons.yaml",
             ROOT / "benchmarks" / "grounding_synthetic.py", pkg / "metrics" / "support.py",
             pkg / "resources" / "support_model" / "model.safetensors",
             pkg / "resources" / "support_model" / "config.json"]
    return hashlib.sha256(b"".join(p.read_bytes() for p in parts)).hexdigest()


def dev_table(task: str, limit: int | None) -> pd.DataFrame:
    df = load_task(task, limit)
    df["group"] = task + ":" + df["group"].astype(str)
    df["domain"] = df["domain"] if "domain" in df.columns else task
    df["transform"] = ""
    return df


def _row(rid: str, answer: str, doc: str, label: bool, group: str, domain: str, transform: str) -> dict:
    return {"id": rid, "question": "", "answer": answer, "contexts": [doc], "hallucinated": label,
            "group": group, "domain": domain, "transform": transform}


def halueval_train_table(limit: int | None) -> pd.DataFrame:
    """Real HaluEval training pairs, plus per document: its reference summary corrupted, and two copied
    document sentences kept (faithful) and corrupted."""
    items = load_train_items(limit or N_TRAIN_ITEMS, SEED)
    rows = []
    docs = list(dict.fromkeys(c[0] for c in items["contexts"]))
    for i, (item, d) in enumerate(items.groupby("item_id", sort=False)):
        doc, group = d["contexts"].iloc[0][0], "halueval_train:" + item
        other = docs[(docs.index(doc) + 1) % len(docs)]
        rng = np.random.default_rng([SEED, i])
        for _, r in d.iterrows():
            rows.append(_row(r["id"], r["answer"], doc, bool(r["hallucinated"]), group, "halueval_train", ""))
        right = d.loc[~d["hallucinated"].astype(bool), "answer"].iloc[0]
        bad = corrupt(right, doc, other, rng)
        if bad:
            rows.append(_row(f"{item}-synthetic-summary", bad[0], doc, True, group, "halueval_train", bad[1]))
        copied = copied_sentences(doc, rng)
        bad = corrupt(copied, doc, other, rng) if copied else None
        if bad:
            rows.append(_row(f"{item}-copy", copied, doc, False, group, "halueval_train", "copy"))
            rows.append(_row(f"{item}-synthetic-copy", bad[0], doc, True, group, "halueval_train", bad[1]))
    return pd.DataFrame(rows)


def summedits_synthetic_table(limit: int | None) -> pd.DataFrame:
    """Per SummEdits dev document: ``SUMMEDITS_COPIES`` copied sentence pairs kept and corrupted, in the same
    group (document) and domain as the document's human-labelled rows."""
    se = load_task("summedits", limit)
    firsts = se.drop_duplicates("group").sort_values("group", kind="stable")
    docs = firsts["group"].tolist()
    rows = []
    for i, (doc, domain) in enumerate(zip(docs, firsts["domain"])):
        rng = np.random.default_rng([SEED, 10_000 + i])
        other = docs[(i + 1) % len(docs)]
        for k in range(SUMMEDITS_COPIES):
            copied = copied_sentences(doc, rng)
            bad = corrupt(copied, doc, other, rng) if copied else None
            if bad:
                rows.append(_row(f"se{i}-{k}-copy", copied, doc, False, "summedits:" + doc, domain, "copy"))
                rows.append(_row(f"se{i}-{k}-synthetic", bad[0], doc, True, "summedits:" + doc, domain, bad[1]))
    return pd.DataFrame(rows)


def table(task: str, limit: int | None) -> pd.DataFrame:
    if task == "halueval_train":
        return halueval_train_table(limit)
    if task == "summedits_synthetic":
        return summedits_synthetic_table(limit)
    return dev_table(task, limit)


def features_for(task: str, limit: int | None) -> pd.DataFrame:
    """Features of every row of a task (cached by the rows' content and the feature code)."""
    df = table(task, limit)
    content = json.dumps([df["answer"].tolist(), df["contexts"].map(list).tolist(),
                          df["hallucinated"].astype(bool).tolist(), df["group"].tolist()])
    key = hashlib.sha256((content + ",".join(FEATURES) + feature_code_sha256()).encode()).hexdigest()[:16]
    cache = CACHE / f"{task}-{key}.parquet"
    if cache.exists():
        return pd.read_parquet(cache)
    nlp, hedges = NlpPipeline(), default_hedges()
    answers = [a or "" for a in df["answer"]]
    joined = ["\n\n".join(c) for c in df["contexts"]]
    t0 = time.perf_counter()
    docs = nlp.parse_answers(answers)
    distinct = list(dict.fromkeys(joined))
    evs = {t: Evidence.build(t, d) for t, d in zip(distinct, nlp.parse_contexts(distinct))}
    rows = [answer_features(a, d, evs[j], hedges)[0] for a, d, j in zip(answers, docs, joined)]
    secs = time.perf_counter() - t0
    out = pd.DataFrame(rows, columns=list(FEATURES))
    out["task"], out["group"], out["domain"] = task, df["group"].to_numpy(), df["domain"].to_numpy()
    out["synthetic"] = df["transform"].ne("").to_numpy()  # copied sentences and corruptions alike
    out["y"] = df["hallucinated"].astype(int).to_numpy()
    out["answer_tokens"] = [len(word_tokens(a)) for a in answers]
    out[ENTAILMENT] = np.nan  # the training items' support is in-sample: no configuration reads it (fit refuses NaN)
    if task in TASKS:  # the seed metric (a reported baseline only) and the support model (an input)
        seed = evalkit.evaluate(df[["id", "question", "answer", "contexts"]], ["hallucination", "support"],
                                progress=False)
        out["seed_hallucination"] = seed["hallucination"].astype(float).to_numpy()
        # undetermined support (an abstention: no claim to check) reads as grounding_batch reads it
        out[ENTAILMENT] = seed["support"].astype(float).fillna(ENTAILMENT_UNDETERMINED).to_numpy()
    CACHE.mkdir(parents=True, exist_ok=True)
    out.to_parquet(cache)
    (CACHE / f"{task}-{key}.seconds").write_text(f"{secs:.3f} {len(out)}")
    return out


def weights(tasks: pd.Series) -> np.ndarray:
    w = tasks.map((1 / tasks.value_counts()) ** TASK_WEIGHT_POWER).to_numpy(float)
    return w / w.mean()


def fit(data: pd.DataFrame, cols: list[str], monotone: bool = True) -> HistGradientBoostingClassifier:
    if data[cols].isna().any().any():  # the trees would take NaN silently: a row without an input is a bug here
        bad = data[cols].isna().any()
        raise ValueError(f"missing inputs {list(bad[bad].index)} in {int(data[cols].isna().any(axis=1).sum())} rows")
    cst = [MONOTONE[c] for c in cols] if monotone else None
    model = HistGradientBoostingClassifier(**PARAMS, monotonic_cst=cst)
    return model.fit(data[cols].to_numpy(float), data["y"].to_numpy(), sample_weight=weights(data["task"]))


def logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-9, 1 - 1e-9)
    return np.log(p / (1 - p))


def predict_logit(model, data: pd.DataFrame, cols: list[str]) -> np.ndarray:
    return logit(model.predict_proba(data[cols].to_numpy(float))[:, 1])


def oof(data: pd.DataFrame, cols: list[str], monotone: bool = True) -> np.ndarray:
    """Out-of-fold log-odds (GroupKFold(5) over items/documents)."""
    z = np.zeros(len(data))
    for tr, te in GroupKFold(n_splits=5).split(data, data["y"], data["group"]):
        z[te] = predict_logit(fit(data.iloc[tr], cols, monotone), data.iloc[te], cols)
    return z


def lodo(data: pd.DataFrame, cols: list[str], monotone: bool = True) -> pd.Series:
    """Leave-one-domain-out log-odds for the SummEdits rows: each domain scored by a model that saw none of
    its documents (neither the human-labelled rows nor the synthetic ones)."""
    se = data["task"].eq("summedits")
    out = pd.Series(np.nan, index=data.index[se])
    for domain in sorted(data.loc[se, "domain"].unique()):
        held = data["domain"].eq(domain) & data["task"].isin(["summedits", "summedits_synthetic"])
        model = fit(data[~held], cols, monotone)
        te = se & data["domain"].eq(domain)
        out[data.index[te]] = predict_logit(model, data[te], cols)
    return out


def lodo_aucs(data: pd.DataFrame, z: pd.Series) -> dict[str, float]:
    se = data.loc[z.index]
    return {d: roc_auc_score(se.loc[se.domain == d, "y"], z[se.domain == d]) for d in sorted(se["domain"].unique())}


def evaluate_config(data: pd.DataFrame, cols: list[str], monotone: bool) -> dict:
    """Out-of-fold log-odds, LODO log-odds, per-task CV AUC and per-domain LODO AUC of one configuration."""
    z = oof(data, cols, monotone)
    zl = lodo(data, cols, monotone)
    cv = {t: roc_auc_score(data.loc[data.task == t, "y"], z[(data.task == t).to_numpy()]) for t in TASKS
          if (data.task == t).any()}
    dom = lodo_aucs(data, zl)
    return {"oof": z, "lodo": zl, "cv": cv, "domains": dom, "worst": min(dom.values()),
            "median": float(np.median(list(dom.values())))}


def config_data(data: pd.DataFrame, name: str) -> pd.DataFrame:
    """The rows a configuration trains on: every real row (the HaluEval training items unless it reads the
    support model or says ``train_items: False``), plus the synthetic rows its ``synthetic`` names."""
    cfg = CONFIGS[name]
    syn, copies = data["synthetic"], data["synthetic"] & data["y"].eq(0)
    drop = {"none": syn, "all": syn & False, "no_copies": copies,
            "summedits_only": syn & data["task"].eq("halueval_train"),
            "summaries_only": copies | (syn & data["task"].eq("summedits_synthetic"))}[cfg["synthetic"]]
    if cfg.get("entailment") or not cfg.get("train_items", True):
        drop = drop | data["task"].eq("halueval_train")
    return data[~drop].reset_index(drop=True)


def config_cols(name: str) -> list[str]:
    """A configuration's inputs: the model features, with the support model's score only where it says so."""
    return [c for c in MODEL_FEATURES if c != ENTAILMENT or CONFIGS[name].get("entailment")]


def selection_table(data: pd.DataFrame) -> list[str]:
    """Every configuration in CONFIGS by the selection criterion (worst SummEdits LODO domain)."""
    lines = ["| configuration | SummEdits LODO worst domain | median domain | HaluEval summarization CV | "
             "HaluEval QA CV | HaluEval dialogue CV |", "|---|---|---|---|---|---|"]
    for name, cfg in CONFIGS.items():
        r = evaluate_config(config_data(data, name), config_cols(name), cfg["monotone"])
        lines.append(f"| {name}{' (shipped)' if name == SHIPPED else ''} | {r['worst']:.3f} | {r['median']:.3f} | "
                     f"{r['cv']['halueval_summarization']:.3f} | {r['cv']['halueval_qa']:.3f} | "
                     f"{r['cv']['halueval_dialogue']:.3f} |")
    return lines


def ablation_table(data: pd.DataFrame, base: dict, monotone: bool, inputs: list[str]) -> list[str]:
    """Change in AUC when one feature group is removed (CV for HaluEval, LODO for SummEdits)."""
    head = ["halueval_qa", "halueval_dialogue", "halueval_summarization"]
    lines = ["| dropped group | " + " | ".join(head) + " | SummEdits LODO median | SummEdits LODO worst |",
             "|---|" + "---|" * (len(head) + 2)]
    lines.append("| (none) | " + " | ".join(f"{base['cv'][t]:.3f}" for t in head)
                 + f" | {base['median']:.3f} | {base['worst']:.3f} |")
    for gname, gcols in GROUPS.items():
        cols = [c for c in inputs if c not in gcols]
        if len(cols) == len(inputs):
            continue
        r = evaluate_config(data, cols, monotone)
        lines.append(f"| {gname} | " + " | ".join(f"{r['cv'][t] - base['cv'][t]:+.3f}" for t in head)
                     + f" | {r['median'] - base['median']:+.3f} | {r['worst'] - base['worst']:+.3f} |")
    return lines


def interval(score: np.ndarray, y: np.ndarray, groups: list, resamples: int) -> str:
    """ROC AUC with a clustered interval, on the rows the score determines (the seed's hallucination is undetermined
    on an abstention or a non-English answer; the detector determines every row)."""
    s = np.asarray(score, float)
    keep = ~np.isnan(s)
    return str(roc_auc(s[keep], np.asarray(y)[keep], n_resamples=resamples, seed=SEED,
                       groups=[g for g, k in zip(groups, keep) if k]))


def dev_table_lines(data: pd.DataFrame, p_oof: np.ndarray, p_lodo: pd.Series, resamples: int) -> tuple[list, dict]:
    """Per development task: the detector's AUC with clustered intervals beside the seed and trivial baselines,
    and how many answers it flags at the shipped 0.5 threshold."""
    lines = ["| task | rows | grounding_risk | seed hallucination | answer length | novel-token rate | flagged at 0.5 "
             "(positives) |", "|---|---|---|---|---|---|---|"]
    report = {}
    for task in TASKS:
        m = (data.task == task).to_numpy()
        d, p = data[m], p_oof[m]
        y, g = d["y"].to_numpy(), d["group"].tolist()
        what = "grouped 5-fold CV"
        if task == "summedits":
            p, what = p_lodo[d.index].to_numpy(), "leave-one-domain-out"
        cells = [interval(s, y, g, resamples) for s in (p, d["seed_hallucination"], d["answer_tokens"],
                                                        d["novel_token_rate"])]
        flagged = float(np.mean(p >= 0.5))
        report[task] = {"roc_auc": cells[0], "protocol": what, "flagged_at_0.5": round(flagged, 4)}
        lines.append(f"| {task} ({what}) | {len(d)} | " + " | ".join(cells) + f" | {flagged:.0%} ({y.mean():.0%}) |")
    return lines, report


def domain_lines(data: pd.DataFrame, z_lodo: pd.Series, resamples: int) -> list[str]:
    se = data.loc[z_lodo.index]
    lines = ["| SummEdits domain (held out) | rows | documents | grounding_risk AUC |", "|---|---|---|---|"]
    for dom in sorted(se["domain"].unique()):
        m = (se.domain == dom).to_numpy()
        lines.append(f"| {dom} | {m.sum()} | {se[m]['group'].nunique()} | "
                     f"{interval(z_lodo[m], se[m]['y'], se[m]['group'].tolist(), resamples)} |")
    return lines


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


def platt(z: np.ndarray, y: np.ndarray) -> dict[str, float]:
    lr = LogisticRegression(C=1e6, max_iter=1000).fit(z.reshape(-1, 1), y)
    return {"a": repr_round(lr.coef_[0][0]), "b": repr_round(lr.intercept_[0])}


def build_model(data: pd.DataFrame, cal: dict, report: dict, base: dict, limit: int | None) -> str:
    """The final model, fit on all rows, as the JSON text that ships (checked against scikit-learn first)."""
    from evalkit.metrics.grounding import raw_score

    cols = config_cols(SHIPPED)
    final = fit(data, cols, CONFIGS[SHIPPED]["monotone"])
    baseline, trees = export_trees(final)
    train_items = bool(data["task"].eq("halueval_train").any())
    files = sorted({*TASKS.values(), *([TRAIN_FILE] if train_items else [])})
    file_hashes = {f: hashlib.sha256((BENCH / f).read_bytes()).hexdigest() for f in files}
    model = {
        "name": "grounding-hgb-monotone-v3-entailment",
        "kind": "HistGradientBoostingClassifier (monotonic constraints) exported to arrays + Platt scaling",
        "configuration": SHIPPED, "params": dict(PARAMS), "task_weight_power": TASK_WEIGHT_POWER, "seed": SEED,
        "features": cols, "monotonic_cst": [MONOTONE[c] for c in cols],
        "baseline": repr_round(baseline), "calibration": cal,
        "threshold": {"value": 0.5, "calibrated_on": "out-of-fold log-odds of the real (non-synthetic) rows: HaluEval "
                      "QA/dialogue/summarization dev, " + ("HaluEval summarization train items, " if train_items else "")
                      + "SummEdits dev; recalibrate on your own labels with `evalkit calibrate`"},
        "support_model": support_model_signature()["sha256"][:12] if ENTAILMENT in cols else None,
        "training_data": {"files": file_hashes, "sha256": hashlib.sha256(json.dumps(file_hashes, sort_keys=True)
                                                                         .encode()).hexdigest(),
                          "rows": int(len(data)), "synthetic_rows": int(data["synthetic"].sum()),
                          "halueval_train_items": (limit or N_TRAIN_ITEMS) if train_items else 0, "limit": limit},
        "cv": {"protocol": "GroupKFold(5), groups = HaluEval item / SummEdits document; SummEdits also "
                           "leave-one-domain-out", "per_task": report,
               "summedits_lodo": {d: round(v, 4) for d, v in base["domains"].items()}},
        "trees": trees,
    }
    probe = {**model, "_trees": [{k: np.asarray(v) for k, v in t.items()} for t in trees]}
    diff = np.max(np.abs(raw_score(data[cols].to_numpy(float), probe) - predict_logit(final, data, cols)))
    print(f"\nexported trees vs scikit-learn log-odds: max abs difference {diff:.2e}")
    assert diff < 1e-9, diff
    return json.dumps(model, separators=(",", ":")) + "\n"


def write_results(args, dev: list, domains: list, abl: list, sel: list, base: dict) -> None:
    results = ROOT / "benchmarks" / "results"
    results.mkdir(exist_ok=True)
    header = (f"Configuration `{SHIPPED}`; clustered bootstrap intervals ({args.resamples} resamples by item / "
              f"document, seed {SEED}).\n\n")
    body = ["## Development sets", *dev, "", f"SummEdits leave-one-domain-out: median domain {base['median']:.3f}, "
            f"worst {base['worst']:.3f}.", "", "## SummEdits, one domain held out at a time", *domains, "",
            "## Ablation (change in AUC when one group is removed and the model re-trained)", *abl]
    if sel:
        body += ["", "## Configurations compared (selection criterion: worst SummEdits LODO domain)", *sel]
    (results / "grounding_tables.md").write_text(header + "\n".join(body) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--limit", type=int, default=None, help="rows per dev task and training items (smoke runs)")
    ap.add_argument("--select", action="store_true", help="also compare the configurations in CONFIGS")
    ap.add_argument("--check", action="store_true", help="verify the shipped model file is reproduced; write nothing")
    args = ap.parse_args()
    t0 = time.perf_counter()
    data = pd.concat([features_for(t, args.limit) for t in [*TASKS, *EXTRA_TASKS]], ignore_index=True)
    print(f"features: {len(data)} rows ({int(data['synthetic'].sum())} synthetic) in {time.perf_counter() - t0:.0f}s")
    data = config_data(data, SHIPPED)
    cols, mono = config_cols(SHIPPED), CONFIGS[SHIPPED]["monotone"]
    base = evaluate_config(data, cols, mono)
    real = ~data["synthetic"].to_numpy()
    cal = platt(base["oof"][real], data["y"].to_numpy()[real])
    prob = 1 / (1 + np.exp(-(cal["a"] * base["oof"] + cal["b"])))
    p_lodo = 1 / (1 + np.exp(-(cal["a"] * base["lodo"] + cal["b"])))
    dev, report = dev_table_lines(data, prob, p_lodo, args.resamples)
    domains = domain_lines(data, base["lodo"], args.resamples)
    print("\n".join(dev + [""] + domains))
    print(f"LODO median {base['median']:.3f} worst {base['worst']:.3f}; calibration {cal}")
    if not args.check:
        abl = ablation_table(data, base, mono, cols)
        sel = selection_table(pd.concat([features_for(t, args.limit) for t in [*TASKS, *EXTRA_TASKS]],
                                        ignore_index=True)) if args.select else []
        print("\n".join(abl + [""] + sel))
        if args.limit is None:
            write_results(args, dev, domains, abl, sel, base)
    text = build_model(data, cal, report, base, args.limit)
    print(f"total {time.perf_counter() - t0:.0f}s")
    if args.check:
        same = MODEL_PATH.exists() and MODEL_PATH.read_text() == text
        print(f"\n{MODEL_PATH} reproduced byte for byte: {same}")
        raise SystemExit(0 if same else 1)
    if args.limit is None:
        MODEL_PATH.write_text(text)
        print(f"\nwrote {MODEL_PATH} ({len(text)} bytes)")


if __name__ == "__main__":
    main()
