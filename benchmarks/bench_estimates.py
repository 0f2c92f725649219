"""Are the estimates valid with a few labels? Simulated labelling studies on development data (#39).

Each task's rows are scored once; the human label (``hallucinated``) of every row gives the true rate. A study
labels ``n`` rows drawn at random and estimates the rate with :func:`evalkit.estimate` (PPI++, labels only,
metric only) from one score; over many seeds we count how often each 95% interval covers the true rate and how
wide it is. A threshold with a guarantee (``false_pass<=0.1`` at delta 0.1, Learn-then-Test through MAPIE) is
chosen on a random half's labels and its false-PASS rate measured on the other half.

    .venv/bin/python benchmarks/bench_estimates.py --jobs 2   # -> benchmarks/results/estimates.md (+ .png)
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

OUT = HERE / "results" / "estimates.md"
TASKS = ("halueval_qa", "halueval_summarization", "halueval_dialogue", "summedits")
SCORES = ("support", "grounding_risk", "hallucination")
# the few-label studies, at 2,000 seeds (a coverage read to +-0.005), where a normal interval is most at risk;
# larger studies cost more per study and sit nearer the normal limit: `--labels 200,400 --out ...` runs them
NS = (50, 100)


def scored(task: str, rows: int) -> pd.DataFrame:
    import evalkit
    from common import load_task

    res = evalkit.evaluate(load_task(task, limit=rows), list(SCORES), progress=False)
    res["bad"] = res["hallucinated"].astype(bool).astype(float)
    # the run's signature rides in attrs, and pandas deep-copies attrs at every step of every simulated study (a
    # fifth of the benchmark's time); the studies read columns only
    res.attrs = {}
    return res


def studies(res: pd.DataFrame, score: str, n: int, seeds: int) -> dict[str, float]:
    from evalkit.decide.calibrate.estimate import EstimateError, estimate

    d = res[res[score].notna()].reset_index(drop=True)
    found = []
    for seed in range(seeds):
        keep = np.zeros(len(d), bool)
        keep[np.random.default_rng(seed).choice(len(d), n, replace=False)] = True
        try:
            found += estimate(d.assign(label=d["bad"].where(keep)), "label", [score], by=None, seed=seed)
        except EstimateError:
            continue
    return {"rows": len(d), "truth": d["bad"].mean(), **_tally(found, d["bad"].mean(), with_metric=True)}


def active_studies(res: pd.DataFrame, score: str, n: int, seeds: int) -> dict[str, float]:
    """The same studies labelled the active way (``label_next(..., mode="estimate")``): a uniform pilot draw of
    about n/4 rows, then a draw of the rest with probabilities favouring rows whose label the pilot's fit finds
    least certain; :func:`evalkit.estimate` weights each draw's rows by 1/probability and combines the draws."""
    from evalkit.decide.calibrate.active import DESIGN_COLUMNS, label_next
    from evalkit.decide.calibrate.estimate import EstimateError, estimate

    d = res[res[score].notna()].reset_index(drop=True)[["id", score, "bad"]].assign(id=lambda f: f.index.astype(str))
    found = []
    for seed in range(seeds):
        study = d.assign(label=np.nan, selection=None, **{c: None for c in DESIGN_COLUMNS}).astype(
            {c: object for c in DESIGN_COLUMNS})
        try:
            for size, s in ((n // 4, seed), (n - n // 4, 10_000 + seed)):
                took = label_next(study, score=score, n=size, label="label", positive=1.0, mode="estimate", seed=s)
                study.loc[took.index, "label"] = study.loc[took.index, "bad"]
                study.loc[took.index, "selection"] = took["why"]
                for c in DESIGN_COLUMNS:
                    study.loc[took.index, c] = took[c]
            found += estimate(study, "label", [score], by=None, seed=seed)
        except EstimateError:
            continue
    return _tally(found, d["bad"].mean(), with_metric=False)


def _tally(found: list, truth: float, with_metric: bool) -> dict[str, float]:
    """Coverage of the true rate and mean width per method over the studies that gave an estimate (a cell where
    none did, a draw being random in size, shows nan, not a number)."""
    methods = ("ppi", "labels_only", "metric_only") if with_metric else ("ppi", "labels_only")
    out: dict[str, float] = {"studies": len(found)}
    for m in methods:
        ivs = [getattr(e, m) for e in found]
        out[f"cover_{m}"] = float(np.mean([iv.low <= truth <= iv.high for iv in ivs])) if ivs else np.nan
        if m != "metric_only":
            out[f"width_{m}"] = float(np.mean([iv.high - iv.low for iv in ivs])) if ivs else np.nan
    return out


def monte_carlo_se(share: float, studies: int) -> float:
    """The standard error of a coverage counted over ``studies`` simulated studies: at 500 studies a 95% interval's
    coverage is read to about +-0.01, so a valid interval shows 0.93 in some cells by chance; at 2,000 to +-0.005."""
    return float(np.sqrt(share * (1 - share) / studies)) if studies else np.nan


def best_width_ratio(res: pd.DataFrame, score: str, n: int) -> float:
    """The narrowest PPI++ / labels-only width any prediction from this score could give with n labels among the
    population's N rows: PPI++'s variance at its best lambda is Var(Y)(1 - rho^2 (N - n) / N) / n against the labels'
    Var(Y) / n, with rho^2 at most the share of the label's variance the score explains, here read from an isotonic
    fit on the whole population (in sample, so the bound is optimistic)."""
    from sklearn.isotonic import IsotonicRegression

    d = res[res[score].notna()]
    x, y = d[score].to_numpy(float), d["bad"].to_numpy(float)
    fit = IsotonicRegression(out_of_bounds="clip", increasing=auc_raw(x, y) >= 0.5).fit(x, y).predict(x)
    rho2 = np.corrcoef(fit, y)[0, 1] ** 2 if np.ptp(fit) else 0.0
    return float(np.sqrt(1 - rho2 * (len(y) - n) / len(y)))


def auc_raw(x: np.ndarray, y: np.ndarray) -> float:
    """The score's ROC AUC against the label, its direction kept (under 0.5: the score falls as the label rises)."""
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, x))


def auc_of(res: pd.DataFrame, score: str) -> float:
    d = res[res[score].notna()]
    a = auc_raw(d[score], d["bad"])
    return max(a, 1 - a)


def guarantee_held(res: pd.DataFrame, score: str, seeds: int, delta: float = 0.1, level: float = 0.1):
    """Share of seeds whose threshold (chosen on a random half) keeps the false-PASS rate <= level on the other
    half; seeds where no threshold passes the test claim nothing and count as held."""
    from common import positive_direction
    from evalkit.decide.calibrate import CalibrationError
    from evalkit.decide.calibrate.guarantee import guaranteed_threshold

    d = res[res[score].notna()].reset_index(drop=True)
    direction = positive_direction(score)
    held, none = 0, 0
    for seed in range(seeds):
        half = np.random.default_rng(1000 + seed).permutation(len(d)) < len(d) // 2
        s, y = d[score].to_numpy(float), d["bad"].to_numpy(int)
        try:
            t = guaranteed_threshold(s[half], y[half], f"false_pass<={level}", delta=delta, direction=direction)
        except CalibrationError:
            held, none = held + 1, none + 1
            continue
        passed = (s[~half] < t.threshold) if direction == "higher" else (s[~half] > t.threshold)
        held += y[~half][passed].mean() <= level if passed.any() else 1
    return held / seeds, none


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1000, help="rows of each task scored (the population)")
    ap.add_argument("--seeds", type=int, default=2000, help="simulated studies per task, score and n")
    ap.add_argument("--tasks", default=",".join(TASKS))
    ap.add_argument("--labels", default=",".join(map(str, NS)), help="labels per study, comma-separated")
    ap.add_argument("--jobs", type=int, default=1, help="tasks run side by side (one process each)")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    t0 = time.time()
    tasks = args.tasks.split(",")
    if args.jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(args.jobs) as pool:
            done = list(pool.map(task_rows, tasks, [args] * len(tasks)))
    else:
        done = [task_rows(t, args) for t in tasks]
    _write(args, [line for lines, _ in done for line in lines], [r for _, rows in done for r in rows],
           time.time() - t0)


def task_rows(task: str, args) -> tuple[list[str], list[dict]]:
    """One task's table lines (every score and number of labels, random and active studies) and plot points."""
    ns = [int(n) for n in args.labels.split(",")]
    lines, plot_rows = [], []
    res = scored(task, args.rows)
    for score in SCORES:
        rows = int(res[score].notna().sum())
        auc = auc_of(res, score)
        held, none = guarantee_held(res, score, args.seeds)
        for n in ns:
            if 2 * n > rows:  # a study labelling most of the population says little about a few labels
                print(f"{task} {score}: {rows} scored rows, too few for {n} labels")
                continue
            r, a = studies(res, score, n, args.seeds), active_studies(res, score, n, args.seeds)
            lines.append(f"| {task} | {score} | {auc:.2f} | {n} | {r['studies']} | {r['cover_ppi']:.3f} | "
                         f"{monte_carlo_se(r['cover_ppi'], r['studies']):.3f} | "
                         f"{r['cover_labels_only']:.3f} | {r['cover_metric_only']:.2f} | {a['cover_ppi']:.3f} | "
                         f"{r['width_ppi']:.3f} | {r['width_labels_only']:.3f} | "
                         f"{r['width_ppi'] / r['width_labels_only']:.2f} | {best_width_ratio(res, score, n):.2f} | "
                         f"{a['width_ppi']:.3f} | {held:.2f} ({none} none) |")
            plot_rows.append({"auc": auc, "labels": n, "ppi": r["width_ppi"], "labels_only": r["width_labels_only"],
                              "active": a["width_ppi"]})
            print(lines[-1], flush=True)
    return lines, plot_rows


def _write(args, lines, plot_rows, seconds) -> None:
    out = Path(args.out)
    head = ("| task | score | AUC | labels | studies | PPI covers | s.e. | labels-only covers | metric-only covers | "
            "active PPI covers | PPI width | labels-only width | PPI / labels-only | best possible | active PPI width | "
            "guarantee held (false_pass<=0.1, delta 0.1) |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    out.write_text(header(args, seconds) + "\n\n" + head + "\n" + "\n".join(lines)
                   + f"\n\n![width]({out.with_suffix('.png').name})\n")
    plot_widths(pd.DataFrame(plot_rows), out.with_suffix(".png"))
    print(f"-> {out}")


def header(args, seconds: float) -> str:
    """What the table holds and how to read it: the command, the designs, and the Monte Carlo noise of a coverage
    counted over ``args.seeds`` studies (the share of cells a valid 95% interval shows under 0.94 by chance)."""
    from scipy.stats import norm

    under = norm.cdf(-0.01 / monte_carlo_se(0.95, args.seeds))
    return (f"# Estimates from a few labels (development data)\n\n"
            f"`benchmarks/bench_estimates.py --rows {args.rows} --seeds {args.seeds} --labels {args.labels} "
            f"--jobs {args.jobs}` ({seconds / 60:.1f} min). "
            "Each task's first rows are the population; its `hallucinated` labels give the true rate. A study "
            "labels n random rows and estimates the rate from one score; coverage is the share of studies whose "
            "95% interval holds the true rate. An active study labels the same number the way "
            "`label_next(..., mode=\"estimate\")` draws them: a uniform pilot of n/4, then about 3n/4 drawn with "
            "probabilities favouring rows whose label is least certain, weighted by 1/probability (its interval: "
            "Student's t, each draw's variance with n_k / (n_k - 1); `evalkit.decide.calibrate.estimate`). The "
            "guarantee column: the share of random halves on which the "
            "threshold chosen for false_pass<=0.1 (probability 0.9) kept the false-PASS rate at or under 0.1 on "
            "the other half (a seed with no passing threshold claims nothing and counts as held; how many such "
            "seeds in brackets). `s.e.` is the Monte Carlo standard error of the PPI coverage "
            "(sqrt(c(1-c)/studies)): a coverage is a count over the studies, so at "
            f"{args.seeds} studies an interval that covers exactly 95% of the time shows under 0.94 in about "
            f"{under:.0%} of cells. `best possible` is the narrowest PPI / labels-only "
            "ratio any prediction from the score could give with these labels and this population: "
            "sqrt(1 - rho^2 (N - n) / N), rho^2 the share of the label's variance an isotonic fit of the score "
            "explains on all N rows (in sample, so optimistic).")


def plot_widths(cells: pd.DataFrame, path: Path) -> None:
    """What a score buys a study: each cell's interval width relative to the labels' own, against the score's AUC,
    for PPI from random labels and from active draws (one panel per number of labels)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ns = sorted(cells["labels"].unique())
    fig, axes = plt.subplots(1, len(ns), figsize=(3.6 * len(ns), 3.4), sharey=True, squeeze=False)
    for ax, n in zip(axes[0], ns):
        c = cells[cells["labels"] == n]
        ax.axhline(1.0, color="#888", lw=1, ls="--", label="labels alone")
        ax.scatter(c["auc"], c["ppi"] / c["labels_only"], marker="o", label="PPI, random labels")
        ax.scatter(c["auc"], c["active"] / c["labels_only"], marker="s", facecolors="none", edgecolors="C1",
                   label="PPI, active draws")
        ax.set(title=f"{n} labels", xlabel="score's ROC AUC against the label")
    axes[0][0].set_ylabel("95% interval width / labels-only width")
    axes[0][0].legend(fontsize="small", loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
