"""Every figure evalkit draws. Each function returns a matplotlib ``Figure``; :func:`save_figure`
writes PNG and SVG deterministically (no timestamps, fixed SVG ids)."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

PALETTE = {"PASS": "#4c9a2a", "WARN": "#e0a526", "FAIL": "#c0392b", "ABSTAIN": "#5b7db1", "UNDETERMINED": "#8c8c8c"}


def _style() -> None:
    sns.set_theme(context="notebook", style="whitegrid")
    plt.rcParams["svg.hashsalt"] = "evalkit"


def save_figure(fig, name: str, out_dir: str | Path, formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Write ``fig`` as ``out_dir/name.png`` and ``.svg`` (reproducible bytes: no dates, fixed ids)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        p = out / f"{name}.{fmt}"
        meta = {"Date": None} if fmt == "svg" else {"Software": None}
        with plt.rc_context({"svg.hashsalt": "evalkit"}):
            fig.savefig(p, dpi=120, bbox_inches="tight", metadata=meta)
        paths.append(p)
    return paths


def metric_means(summary_df: pd.DataFrame, metrics: Sequence[str] | None = None, by: str = "system"):
    """Bar chart of metric means per group from :func:`evalkit.summary` output."""
    _style()
    d = summary_df if metrics is None else summary_df[summary_df["metric"].isin(metrics)]
    d = d[d["kind"] != "label"].dropna(subset=["mean"])
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * d["metric"].nunique() + 2), 4))
    sns.barplot(data=d, x="metric", y="mean", hue=by if by in d.columns else None, ax=ax)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("")
    ax.set_ylabel("mean over determined rows")
    from .metrics import REGISTRY

    # mark the metrics where lower is better, so a tall bar is not read as good
    ax.set_xticks(ax.get_xticks(), [t.get_text() + (" (lower is better)" if REGISTRY.get(t.get_text()) is not None
                                                   and REGISTRY[t.get_text()].direction == "lower" else "")
                                    for t in ax.get_xticklabels()])
    ax.tick_params(axis="x", rotation=30)
    for t in ax.get_xticklabels():
        t.set_ha("right")
    ax.set_title("Metric means by " + by if by in d.columns else "Metric means")
    fig.tight_layout()
    return fig


def verdict_counts(results: pd.DataFrame, by: str = "system"):
    """Stacked bars of PASS / WARN / FAIL / UNDETERMINED per group."""
    _style()
    order = [v for v in PALETTE if v in set(results["verdict"])]
    keys = results[by] if by in results.columns else pd.Series(["all"] * len(results))
    tab = pd.crosstab(keys, results["verdict"]).reindex(columns=order, fill_value=0)
    fig, ax = plt.subplots(figsize=(6, 0.6 * len(tab) + 1.8))
    tab.plot.barh(stacked=True, ax=ax, color=[PALETTE[v] for v in order], width=0.6)
    ax.set_xlabel("answers")
    ax.set_ylabel("")
    ax.set_title("Verdicts")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize="small", frameon=False)
    fig.tight_layout()
    return fig


def _rule(metric: str, threshold, direction: str = "higher"):
    """A plotted threshold is the one rule type: a Threshold as given, or calibration's rule for a number."""
    from .thresholds import Threshold

    return threshold if isinstance(threshold, Threshold) else Threshold.from_direction(metric, threshold, direction)


def score_distributions(results: pd.DataFrame, metric: str, label: str, threshold: float | None = None):
    """Histogram of a score split by a binary human label, with an optional threshold line."""
    _style()
    d = results[[metric, label]].dropna().copy()
    d[metric] = d[metric].astype(float)
    d[label] = d[label].astype(bool).map({True: f"{label}", False: f"not {label}"})
    fig, ax = plt.subplots(figsize=(6, 3.5))
    sns.histplot(data=d, x=metric, hue=label, bins=20, element="step", stat="count", common_norm=False, ax=ax)
    if threshold is not None:
        rule = _rule(metric, threshold)
        ax.axvline(rule.value, color="k", ls="--", lw=1)
        ax.text(rule.value, ax.get_ylim()[1] * 0.95, f" flagged: {rule}", va="top", fontsize="small")
    ax.set_title(f"{metric} by {label}")
    fig.tight_layout()
    return fig


def roc_pr(scores, labels, direction: str = "higher", threshold=None, title: str = ""):
    """ROC and precision-recall curves side by side, with the operating point of ``threshold`` (a number,
    read with calibration's rule, or a :class:`evalkit.thresholds.Threshold` such as a verdict rule)."""
    from sklearn.metrics import average_precision_score, precision_recall_curve, roc_auc_score, roc_curve

    _style()
    s = np.asarray(scores, dtype=float)
    s = s if direction == "higher" else -s
    y = np.asarray(labels, dtype=int)
    fpr, tpr, _ = roc_curve(y, s)
    prec, rec, _ = precision_recall_curve(y, s)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    a1.plot(fpr, tpr, lw=2, label=f"AUC {roc_auc_score(y, s):.3f}")
    a1.plot([0, 1], [0, 1], color="grey", ls=":", lw=1)
    a1.set(xlabel="false positive rate", ylabel="true positive rate", title="ROC")
    a2.step(rec, prec, where="post", lw=2, label=f"AP {average_precision_score(y, s):.3f}")
    a2.axhline(y.mean(), color="grey", ls=":", lw=1)
    a2.set(xlabel="recall", ylabel="precision", title="Precision-recall", ylim=(0, 1.05))
    if threshold is not None:
        rule = _rule("score", threshold, direction)
        pred = rule.flags_array(np.asarray(scores, dtype=float))
        tp, fp = np.sum(pred & (y == 1)), np.sum(pred & (y == 0))
        r, f = tp / max(y.sum(), 1), fp / max((1 - y).sum(), 1)
        p = tp / max(tp + fp, 1)
        a1.plot(f, r, "o", color="k", label=f"{rule.operator} {rule.value:.3g}")
        a2.plot(r, p, "o", color="k", label=f"{rule.operator} {rule.value:.3g}")
    a1.legend(loc="lower right")
    a2.legend(loc="lower left")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def threshold_sweep(scores, labels, direction: str = "higher", *, n_resamples: int = 200, seed: int = 0,
                    threshold: float | None = None, grid: int = 50):
    """Precision, recall and F1 against the threshold, with 95% bootstrap bands (stratified, seeded)."""
    from .calibrate import bootstrap_indices, confusion_at

    _style()
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=int)
    ts = np.unique(np.quantile(s, np.linspace(0, 1, grid)))

    def curves(ss, yy):
        out = []
        for t in ts:
            c = confusion_at(ss, yy, t, direction)
            p = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else np.nan
            r = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else np.nan
            f = 2 * p * r / (p + r) if p == p and r == r and p + r > 0 else 0.0
            out.append((p, r, f))
        return np.array(out)

    est = curves(s, y)
    boots = np.array([curves(s[i], y[i]) for i in bootstrap_indices(y, n_resamples, seed)])
    fig, ax = plt.subplots(figsize=(7, 4))
    for k, name in enumerate(("precision", "recall", "F1")):
        ax.plot(ts, est[:, k], lw=2, label=name)
        lo, hi = np.nanquantile(boots[:, :, k], [0.025, 0.975], axis=0)
        ax.fill_between(ts, lo, hi, alpha=0.2)
    if threshold is not None:
        ax.axvline(threshold, color="k", ls="--", lw=1)
    ax.set(xlabel="threshold", ylabel="value", ylim=(0, 1.05),
           title=f"Threshold sweep (positive when score {'>=' if direction == 'higher' else '<='} t; 95% bands)")
    ax.legend()
    fig.tight_layout()
    return fig


def reliability_diagram(probs, labels, bins: int = 10, title: str = "Reliability"):
    """Observed positive rate against the mean score per bin, for scores in 0..1; ECE in the legend."""
    _style()
    p = np.clip(np.asarray(probs, dtype=float), 0, 1)
    y = np.asarray(labels, dtype=int)
    edges = np.linspace(0, 1, bins + 1)
    idx = np.clip(np.digitize(p, edges[1:-1]), 0, bins - 1)
    xs, ys, ns = [], [], []
    for b in range(bins):
        m = idx == b
        if m.any():
            xs.append(p[m].mean())
            ys.append(y[m].mean())
            ns.append(m.sum())
    ece = float(np.sum(np.array(ns) * np.abs(np.array(xs) - np.array(ys))) / len(p))
    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    ax.plot([0, 1], [0, 1], color="grey", ls=":")
    ax.plot(xs, ys, "o-", label=f"ECE {ece:.3f}")
    for x, yy, n in zip(xs, ys, ns):
        ax.annotate(str(n), (x, yy), textcoords="offset points", xytext=(4, -10), fontsize="x-small")
    ax.set(xlabel="mean score in bin", ylabel="observed positive rate", xlim=(0, 1), ylim=(0, 1), title=title)
    ax.legend(loc="upper left")
    fig.tight_layout()
    return fig


def comparison_forest(table: pd.DataFrame, title: str = "System comparison"):
    """Mean paired difference with its CI per metric (rows of :func:`evalkit.compare.compare_systems`)."""
    _style()
    d = table.dropna(subset=["diff"]).reset_index(drop=True)
    labels = d["metric"] + (" · " + d["question_type"].astype(str) if "question_type" in d.columns else "")
    fig, ax = plt.subplots(figsize=(7, 0.4 * len(d) + 1.5))
    ypos = np.arange(len(d))[::-1]
    ax.errorbar(d["diff"], ypos, xerr=[d["diff"] - d["low"], d["high"] - d["diff"]], fmt="o", capsize=3)
    ax.axvline(0, color="grey", ls=":")
    ax.set_yticks(ypos, labels)
    ax.set_xlabel(f"mean difference ({d['system_b'].iloc[0]} - {d['system_a'].iloc[0]})" if len(d) else "difference")
    ax.set_title(title)
    fig.tight_layout()
    return fig


def summary_heatmap(results: pd.DataFrame, variant: str = "twin_lock", label: str = "id"):
    """The five 0..10 summary scores of every row as a heatmap (rows: summaries; columns: metrics)."""
    _style()
    cols = [f"{variant}_{k}_score" for k in ("coverage", "alignment", "hallucination", "relevance", "bias_toxicity")]
    names = results[label].astype(str) + (" · " + results["system"].astype(str) if "system" in results.columns else "")
    d = results[cols].apply(pd.to_numeric, errors="coerce")
    d.index, d.columns = names, [c.replace(f"{variant}_", "").replace("_score", "") for c in cols]
    fig, ax = plt.subplots(figsize=(7, 0.38 * len(d) + 1.6))
    sns.heatmap(d, annot=True, fmt=".1f", vmin=0, vmax=10, cmap="RdYlGn", cbar_kws={"label": "score (0-10)"}, ax=ax)
    ax.set_title(f"{variant.replace('_', '-')} scores (blank: the metric reported an error)")
    ax.set_ylabel("")
    fig.tight_layout()
    return fig
