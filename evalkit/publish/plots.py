"""Every figure evalkit draws. Each function returns a matplotlib ``Figure``; :func:`save_figure`
writes PNG and SVG deterministically (no timestamps, fixed SVG ids).

Scales and better sides come from the registry: metrics read on different scales (0..1, 0..100, 0..10)
get separate panels, and a metric where lower is better says so in its label. Each figure is drawn
under evalkit's style inside ``plt.rc_context``, so drawing one never changes the caller's matplotlib
settings (no global theme)."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from evalkit.metrics import REGISTRY
from evalkit.base.safeio import atomic_path

# Okabe & Ito's palette: eight colours told apart with every common colour-vision deficiency, and in grey
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
PALETTE = {"PASS": "#009E73", "WARN": "#E69F00", "FAIL": "#D55E00", "ABSTAIN": "#0072B2", "UNDETERMINED": "#999999"}
# print widths of a journal's single and double column, in inches
COLUMN_WIDTHS = {"column": 3.5, "wide": 7.0}


def _rc() -> dict:
    """evalkit's look as rc settings: seaborn's whitegrid style, notebook sizes and colour-blind-safe colours."""
    from cycler import cycler

    return {**sns.axes_style("whitegrid"), **sns.plotting_context("notebook"),
            "axes.prop_cycle": cycler(color=list(OKABE_ITO))}


def _styled(draw):
    """Run a figure function under evalkit's style; the caller's rcParams are restored when it returns.

    The figure is laid out (``tight_layout``) inside the context, which creates its ticks there, so the
    style stays with the figure when it is shown or saved later.
    """
    @functools.wraps(draw)
    def styled(*args, **kwargs):
        with plt.rc_context(_rc()):
            return draw(*args, **kwargs)
    return styled


def _scale(metric: str) -> tuple[float, float] | None:
    """The registered range a metric's mean is read on (a boolean's share of True: 0..1), or None."""
    m = REGISTRY.get(metric)
    return m.range if m is not None else None


def _scale_label(scale: tuple[float, float] | None) -> str:
    if scale is None:
        return "own scale"  # a column the registry does not know
    lo, hi = scale
    return f"{lo:g} or more" if hi == float("inf") else f"{lo:g}..{hi:g}"


def _by_scale(metrics: Sequence[str]) -> list[tuple[tuple[float, float] | None, list[str]]]:
    """Metrics grouped by scale, one group per panel, in order of first appearance."""
    groups: dict = {}
    for m in metrics:
        groups.setdefault(_scale(m), []).append(m)
    return list(groups.items()) or [(None, [])]


def _with_direction(metric: str) -> str:
    """The metric's name, marked where lower is better so a tall bar or a positive difference is not read as good."""
    m = REGISTRY.get(metric)
    return metric + (" (lower is better)" if m is not None and m.better == "lower" else "")


def _title(fig, axes, text: str) -> None:
    """One panel: its title; several: the figure's."""
    if len(axes) == 1:
        axes[0].set_title(text)
    else:
        fig.suptitle(text)


def caption_of(fig) -> str:
    """The caption a figure function attached: the numbers the figure shows and how they were computed
    (:meth:`evalkit.publish.notebook.NotebookRun.show` prints it under the figure and uses it as alt text)."""
    return getattr(fig, "evalkit_caption", "")


def _captioned(fig, text: str):
    fig.evalkit_caption = " ".join(text.split())
    return fig


def _fmt(v) -> str:
    return "n/a" if v is None or v != v else f"{v:.3g}"


def _interval(mean, lo, hi) -> str:
    return _fmt(mean) + ("" if lo is None or lo != lo else f" [{_fmt(lo)}, {_fmt(hi)}]")


def save_figure(fig, name: str, out_dir: str | Path, formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Write ``fig`` as ``out_dir/name.png`` and ``.svg`` (reproducible bytes: no dates, fixed ids)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        p = out / f"{name}.{fmt}"
        meta = {"Date": None} if fmt == "svg" else {"Software": None}
        with plt.rc_context({"svg.hashsalt": "evalkit"}), atomic_path(p) as tmp:
            fig.savefig(tmp, dpi=120, bbox_inches="tight", metadata=meta, format=fmt)
        paths.append(p)
    return paths


def save_for_print(fig, name: str, out_dir: str | Path, *, widths: Sequence[str] = ("column", "wide"),
                   font_pt: float = 8.0, formats: Sequence[str] = ("pdf", "svg")) -> list[Path]:
    """Write ``fig`` for print: PDF and SVG at a journal's single-column (3.5 in, ``NAME.pdf``) and
    double-column (7 in, ``NAME_wide.pdf``) width, every text at ``font_pt`` points (titles one point larger),
    so that included at its natural size its fonts match a document's footnote size.

    The figure is resized, not redrawn; x tick labels that would overlap are turned 45 degrees. Returns the
    paths written (the figure is left at the last width).

    >>> import matplotlib.pyplot as plt, tempfile
    >>> fig, ax = plt.subplots(); _ = ax.bar(["a", "b"], [1, 2])
    >>> [p.name for p in save_for_print(fig, "bars", tempfile.mkdtemp())]
    ['bars.pdf', 'bars.svg', 'bars_wide.pdf', 'bars_wide.svg']
    """
    import warnings

    from matplotlib.text import Text

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    w0, h0 = fig.get_size_inches()
    titles = {id(t) for ax in fig.axes for t in (ax.title, ax._left_title, ax._right_title)}
    if getattr(fig, "_suptitle", None) is not None:
        titles.add(id(fig._suptitle))
    labels = [(ax, t, t.get_text()) for ax in fig.axes for t in (ax.xaxis.label, ax.yaxis.label, ax.title)
              if t.get_text()]
    paths = []
    for key in widths:
        width = COLUMN_WIDTHS[key]
        # the notebook's aspect ratio, kept within what a column holds
        fig.set_size_inches(width, min(max(h0 * width / w0, 0.55 * width if key == "column" else 0.3 * width), 9.0))
        _legends_below(fig)
        for t in fig.findobj(Text):
            t.set_fontsize(font_pt + (1 if id(t) in titles else 0))
        for ax in fig.axes:  # ticks the locator adds at the new size take this size too
            ax.tick_params(axis="both", labelsize=font_pt)
        for _, t, text in labels:
            t.set_text(text)
        with warnings.catch_warnings():  # the panels may not fit until _grow_to_fit has made room
            warnings.filterwarnings("ignore", message="constrained_layout not applied", category=UserWarning)
            warnings.filterwarnings("ignore", message="Tight layout not applied", category=UserWarning)
            _unoverlap_ticks(fig)
            fig.set_layout_engine("constrained")  # makes room for a legend below, as tight_layout does not
            fig.canvas.draw()
            _wrap_labels(fig, labels, font_pt)
            _grow_to_fit(fig, min_axes_in=0.2 * width)
        stem = name if key == "column" else f"{name}_{key}"
        for fmt in formats:
            p = out / f"{stem}.{fmt}"
            meta = {"Date": None} if fmt == "svg" else {"CreationDate": None, "Producer": None} if fmt == "pdf" else {}
            with plt.rc_context({"svg.hashsalt": "evalkit", "pdf.fonttype": 42}), atomic_path(p) as tmp:
                fig.savefig(tmp, metadata=meta, format=fmt)
            paths.append(p)
    return paths


def _wrap_labels(fig, labels, font_pt: float) -> None:
    """Axis labels and titles wrapped to their axes' width (a label wider than its panel runs off the page)."""
    import textwrap

    for ax, t, text in labels:
        pos = ax.get_position()
        width_in = pos.height * fig.get_figheight() if t is ax.yaxis.label else pos.width * fig.get_figwidth()
        chars = max(12, int(width_in * 72 / (font_pt * 0.62)))
        t.set_text("\n".join(textwrap.fill(line, chars, break_long_words=False) for line in text.split("\n")))


def _grow_to_fit(fig, min_axes_in: float = 0.7, tries: int = 8) -> None:
    """Make the figure taller until nothing (turned tick labels, a legend below) falls off its top or bottom,
    every panel is at least ``min_axes_in`` tall, and no y tick labels overlap."""
    for _ in range(tries):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        box = fig.get_tightbbox(renderer)
        w, h = fig.get_size_inches()
        grow = max(0.0, -box.y0) + max(0.0, box.y1 - h)
        for ax in fig.axes:
            ticks = [t for t in ax.get_yticklabels() if t.get_text() and t.get_visible()]
            grow = max(grow, min_axes_in - ax.get_position().height * h)
            boxes = sorted((t.get_window_extent(renderer) for t in ticks), key=lambda b: b.y0)
            if any(a.y1 > b.y0 + 0.5 for a, b in zip(boxes, boxes[1:])):
                grow = max(grow, 0.15 * h)
        if grow < 0.01 or h + grow > 8.0:  # a page's text height is about 9 in; leave room for the caption
            return
        fig.set_size_inches(w, h + grow + 0.05)


def _legends_below(fig) -> None:
    """A legend set beside an axes (outside it, where a page would cut it) becomes one legend under the figure."""
    for ax in fig.axes:
        leg = ax.get_legend()
        anchor = getattr(leg, "_bbox_to_anchor", None) if leg is not None else None
        if anchor is None:
            continue
        x0 = ax.transAxes.inverted().transform((anchor.x0, anchor.y0))[0]
        if x0 <= 1.0:
            continue
        handles, names = ax.get_legend_handles_labels()
        title = leg.get_title().get_text()
        leg.remove()
        ncol = min(len(names), 5)
        while True:  # as many columns as the figure's width holds
            leg = fig.legend(handles, names, loc="outside lower center", ncol=ncol, frameon=False, title=title or None)
            fig.canvas.draw()
            if ncol == 1 or leg.get_window_extent().width <= 0.98 * fig.bbox.width:
                break
            leg.remove()
            ncol -= 1


def _ticks_overlap(labels, renderer) -> bool:
    boxes = sorted((t.get_window_extent(renderer) for t in labels), key=lambda b: b.x0)
    return any(a.x1 > b.x0 for a, b in zip(boxes, boxes[1:]))


def _unoverlap_ticks(fig) -> None:
    """Where an axis' x tick labels overlap laid out flat: turned 45 degrees, or 90 if they still do."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        labels = [t for t in ax.get_xticklabels() if t.get_text() and t.get_visible()]
        for t in labels:
            t.set_rotation(0)
            t.set_horizontalalignment("center")
        if not _ticks_overlap(labels, renderer):
            continue
        for t in labels:
            t.set_rotation(45)
            t.set_horizontalalignment("right")
            t.set_rotation_mode("anchor")
        fig.canvas.draw()
        if _ticks_overlap(labels, renderer):
            for t in labels:
                t.set_rotation(90)
                t.set_horizontalalignment("center")
                t.set_rotation_mode("default")


def overlapping_labels(fig) -> list[tuple[str, str]]:
    """Pairs of tick labels, axis labels and titles whose boxes overlap, per axes (a check for print figures)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    found = []
    for ax in fig.axes:
        texts = [t for t in [*ax.get_xticklabels(), *ax.get_yticklabels(), ax.title, ax.xaxis.label, ax.yaxis.label]
                 if t.get_text() and t.get_visible()]
        boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
        for i, (na, a) in enumerate(boxes):
            for nb, b in boxes[i + 1:]:
                if a.overlaps(b) and a.intersection(a, b) is not None and a.intersection(a, b).width > 0.5 \
                        and a.intersection(a, b).height > 0.5:
                    found.append((na, nb))
    return found


@_styled
def metric_means(summary_df: pd.DataFrame, metrics: Sequence[str] | None = None, by: str = "system",
                 horizontal: bool = False):
    """Bar chart of metric means per group from :func:`evalkit.summary` output, one panel per scale, with the
    summary's bootstrap 95% intervals as error bars and a caption that lists every bar's number.

    Metrics read on different scales (0..1, 0..100, 0..10, per the registry) never share an axis;
    each panel's axis spans its scale, and metrics where lower is better are marked. ``horizontal``: one row per
    metric, panels stacked, names written level (a paper's column holds many metrics so; standing bars crowd it).

    Examples
    --------
    >>> df = pd.DataFrame({"metric": ["relevance", "hallucination", "faithfulness"], "kind": "score",
    ...                    "mean": [0.5, 0.2, 80.0], "low": [0.4, 0.1, 70.0], "high": [0.6, 0.3, 90.0]})
    >>> fig = metric_means(df, by="system")
    >>> [float(ax.get_ylim()[1]) for ax in fig.axes]
    [1.05, 105.0]
    >>> [t.get_text() for t in fig.axes[0].get_xticklabels()]
    ['relevance', 'hallucination (lower is better)']
    >>> caption_of(fig).split("; ")[1]
    'relevance 0.5 [0.4, 0.6]'
    >>> [float(ax.get_xlim()[1]) for ax in metric_means(df, by="system", horizontal=True).axes]
    [1.05, 105.0]
    """
    d = summary_df if metrics is None else summary_df[summary_df["metric"].isin(metrics)]
    d = d[d["kind"] != "label"].dropna(subset=["mean"])
    hue = by if by in d.columns else None
    panels = _by_scale(list(dict.fromkeys(d["metric"])))
    if horizontal:
        return _captioned(_means_across(d, panels, hue, by), _means_caption(d, hue))
    axes = _panels_that_fit_a_screen(fig_width=max(6, 0.8 * d["metric"].nunique() + 2 + 1.5 * (len(panels) - 1)),
                                     sizes=[max(len(ms), 1) for _, ms in panels])
    fig = axes[0].figure
    groups = list(dict.fromkeys(d[hue])) if hue else [None]
    for ax, (scale, ms) in zip(axes, panels):
        _bars_with_intervals(ax, d, ms, hue, groups)
        if scale is not None and scale[1] != float("inf"):
            ax.set_ylim(scale[0], scale[0] + 1.05 * (scale[1] - scale[0]))
        ax.set_ylabel(f"{'mean over determined rows' if ax is axes[0] else 'mean'} ({_scale_label(scale)})")
    if hue:  # one legend for the figure, beside the last panel, never over a bar
        axes[-1].legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False, title=hue)
    _title(fig, axes, "Metric means by " + by if hue else "Metric means")
    fig.tight_layout()
    return _captioned(fig, _means_caption(d, hue))


def _means_across(d: pd.DataFrame, panels: list, hue: str | None, by: str):
    """:func:`metric_means` with a row per metric: panels stacked, each as tall as its metrics."""
    groups = list(dict.fromkeys(d[hue])) if hue else [None]
    sizes = [max(len(ms), 1) for _, ms in panels]
    fig, axes = plt.subplots(len(panels), 1, squeeze=False, gridspec_kw={"height_ratios": sizes},
                             figsize=(6, 0.25 * len(groups) * sum(sizes) + 1.2 + 0.9 * (len(panels) - 1)))
    axes = [row[0] for row in axes]
    for ax, (scale, ms) in zip(axes, panels):
        _bars_with_intervals(ax, d, ms, hue, groups, across=True)
        if scale is not None and scale[1] != float("inf"):
            ax.set_xlim(scale[0], scale[0] + 1.05 * (scale[1] - scale[0]))
        ax.set_xlabel(f"mean ({_scale_label(scale)})")
    if hue:
        axes[-1].legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False, title=hue)
    _title(fig, axes, "Metric means by " + by if hue else "Metric means")
    fig.tight_layout()
    return fig


# A screen figure wider than this is shrunk in a narrow window until its ticks cannot be read (the report at 800
# px showed a 17-inch chart's labels ~6 px high); wider charts stack their panels instead
SCREEN_WIDTH_IN = 9.0


def _panels_that_fit_a_screen(fig_width: float, sizes: list[int]) -> list:
    """Axes for panels of ``sizes`` bars: side by side when the figure fits ``SCREEN_WIDTH_IN``, else one panel per
    row at that width (each panel as tall as a side-by-side one)."""
    if fig_width <= SCREEN_WIDTH_IN or len(sizes) == 1:
        fig, axes = plt.subplots(1, len(sizes), figsize=(min(fig_width, SCREEN_WIDTH_IN), 4), squeeze=False,
                                 gridspec_kw={"width_ratios": sizes})
        return list(axes[0])
    fig, axes = plt.subplots(len(sizes), 1, figsize=(SCREEN_WIDTH_IN, 3.4 * len(sizes)), squeeze=False)
    return [row[0] for row in axes]


def _bars_with_intervals(ax, d: pd.DataFrame, metrics: Sequence[str], hue: str | None, groups: list,
                         across: bool = False) -> None:
    """Side-by-side bars (one per group) for each metric, with the interval [low, high] as an error bar;
    ``across``: lying bars, a row per metric, the first at the top."""
    width = 0.8 / len(groups)
    colors = [OKABE_ITO[i % len(OKABE_ITO)] for i in range(len(groups))]
    for k, g in enumerate(groups):
        part = d if g is None else d[d[hue] == g]
        rows = [part[part["metric"] == m] for m in metrics]
        xs = [i - 0.4 + width * (k + 0.5) for i, r in enumerate(rows) if len(r)]
        means = [float(r["mean"].iloc[0]) for r in rows if len(r)]
        lows = [_or(r, "low", float(r["mean"].iloc[0])) for r in rows if len(r)]
        highs = [_or(r, "high", float(r["mean"].iloc[0])) for r in rows if len(r)]
        spread = [np.subtract(means, lows), np.subtract(highs, means)]
        if across:
            ax.barh(xs, means, height=width * 0.95, color=colors[k], label=None if g is None else str(g))
            ax.errorbar(means, xs, xerr=spread, fmt="none", ecolor="#333333", capsize=2, lw=1)
        else:
            ax.bar(xs, means, width=width * 0.95, color=colors[k], label=None if g is None else str(g))
            ax.errorbar(xs, means, yerr=spread, fmt="none", ecolor="#333333", capsize=3, lw=1)
    names = [_with_direction(m) for m in metrics]
    if across:
        ax.set_yticks(range(len(metrics)), names)
        ax.set_ylim(len(metrics) - 0.5, -0.5)  # the first metric at the top
        ax.set_ylabel("")
        return
    ax.set_xticks(range(len(metrics)), names, rotation=30, ha="right")
    ax.set_xlabel("")


def _or(row: pd.DataFrame, col: str, default: float) -> float:
    v = row[col].iloc[0] if col in row.columns else None
    return default if v is None or v != v else float(v)


def _means_caption(d: pd.DataFrame, hue: str | None) -> str:
    parts = ["Bars show means over determined rows, with seeded bootstrap 95% intervals (rows resampled) as error bars"]
    for m in dict.fromkeys(d["metric"]):
        cells = d[d["metric"] == m]
        vals = [(f"{g} " if hue else "") + _interval(r["mean"], r.get("low"), r.get("high"))
                + (f" (n={int(r['n_determined'])})" if "n_determined" in r and r["n_determined"] == r["n_determined"] else "")
                for g, (_, r) in zip(cells[hue] if hue else [None] * len(cells), cells.iterrows())]
        parts.append(f"{m} " + ", ".join(vals))
    return "; ".join(parts) + "."


@_styled
def verdict_counts(results: pd.DataFrame, by: str = "system"):
    """Stacked bars of PASS / WARN / FAIL / UNDETERMINED per group."""
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
    counts = "; ".join(f"{k}: " + ", ".join(f"{v} {int(tab.loc[k, v])}" for v in order) for k in tab.index)
    return _captioned(fig, f"Answers per verdict (the first rule that fires, in registry order). {counts}.")


def _rule(metric: str, threshold, direction: str = "higher"):
    """A plotted threshold is the one rule type: a Threshold as given, or calibration's rule for a number."""
    from evalkit.base.thresholds import Threshold

    return threshold if isinstance(threshold, Threshold) else Threshold.from_direction(metric, threshold, direction)


@_styled
def score_distributions(results: pd.DataFrame, metric: str, label: str, threshold: float | None = None):
    """Histogram of a score split by a binary human label, with an optional threshold line."""
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
    groups = "; ".join(f"{g}: n={len(x)}, mean {_fmt(x[metric].mean())}" for g, x in d.groupby(label, sort=True))
    rule_text = f" Dashed line: {_rule(metric, threshold)}." if threshold is not None else ""
    return _captioned(fig, f"Counts of {metric} in 20 equal-width bins, by the human label {label!r} "
                           f"(rows with both). {groups}.{rule_text}")


@_styled
def roc_pr(scores, labels, direction: str = "higher", threshold=None, title: str = ""):
    """ROC and precision-recall curves side by side, with the operating point of ``threshold`` (a number,
    read with calibration's rule, or a :class:`evalkit.base.thresholds.Threshold` such as a verdict rule)."""
    from sklearn.metrics import average_precision_score, precision_recall_curve, roc_auc_score, roc_curve

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
    text = (f"ROC AUC {roc_auc_score(y, s):.3f} and average precision {average_precision_score(y, s):.3f} "
            f"over {int(y.sum())} positive and {int(len(y) - y.sum())} negative rows "
            f"({'higher' if direction == 'higher' else 'lower'} score = more likely positive); dotted: chance.")
    if threshold is not None:
        text += f" Dot: the rule {rule} (recall {r:.3f}, false positive rate {f:.3f}, precision {p:.3f})."
    return _captioned(fig, text)


@_styled
def threshold_sweep(scores, labels, direction: str = "higher", *, n_resamples: int = 200, seed: int = 0,
                    threshold: float | None = None, grid: int = 50):
    """Precision, recall and F1 against the threshold, with 95% bootstrap bands (stratified, seeded)."""
    from evalkit.decide.calibrate import bootstrap_indices, confusion_at

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
    at = f" Dashed line: the threshold {threshold:.3g}." if threshold is not None else ""
    return _captioned(fig, f"Precision, recall and F1 if rows scoring {'>=' if direction == 'higher' else '<='} t "
                           f"are called positive, at {len(ts)} thresholds over {len(y)} rows ({int(y.sum())} "
                           f"positive); bands: 95% stratified bootstrap ({n_resamples} resamples, seed {seed}).{at}")


@_styled
def threshold_choice(scores, labels, direction: str = "higher", *, criterion: str = "youden",
                     samples: Sequence[float] = (), threshold: float | None = None, interval=None):
    """How the threshold is chosen, and how sure that choice is: the criterion (Youden's J = TPR - FPR, or F1)
    at every distinct score used as the threshold, its maximum marked; beside it the histogram of the
    thresholds chosen on bootstrap resamples (``samples``, e.g. ``CalibrationResult.threshold_samples``) with
    the 95% interval (``interval``: low, high)."""
    from evalkit.decide.calibrate.core import threshold_table

    t = threshold_table(np.asarray(scores, dtype=float), np.asarray(labels, dtype=int), direction)
    kind = "F1" if criterion == "f1" else "Youden's J"
    value = t["f1"] if criterion == "f1" else t["recall"] - t["fpr"]
    order = np.argsort(t["threshold"])
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    axes[0].plot(t["threshold"][order], value[order], marker=".", lw=1.5, color="#0072B2")
    if threshold is not None:
        axes[0].axvline(threshold, color="k", ls="--", lw=1)
    axes[0].set(xlabel="threshold t", ylabel=kind, title=f"{kind} at each threshold")
    if len(samples):
        axes[1].hist(samples, bins=min(30, max(5, len(set(samples)))), color="#E69F00", edgecolor="white")
    if interval is not None and interval[0] is not None:
        for v in interval:
            axes[1].axvline(v, color="#555", ls=":", lw=1)
    if threshold is not None:
        axes[1].axvline(threshold, color="k", ls="--", lw=1)
    axes[1].set(xlabel="threshold chosen on a resample", ylabel="resamples",
                title=f"{len(samples)} bootstrap choices")
    fig.tight_layout()
    best = f"max {kind} {np.max(value):.3f} at t = {_fmt(threshold)}" if threshold is not None else ""
    iv = f"; 95% interval [{_fmt(interval[0])}, {_fmt(interval[1])}] (dotted)" if interval is not None else ""
    return _captioned(fig, f"Left: {kind} when flagging score {'>=' if direction == 'higher' else '<='} t, at each "
                           f"of the {len(order)} distinct scores; {best} (dashed). Right: the threshold chosen on "
                           f"each of {len(samples)} bootstrap resamples of the rows{iv}.")


@_styled
def reliability_diagram(probs, labels, bins: int = 10, title: str = "Reliability"):
    """Observed positive rate against the mean score per bin, for scores in 0..1; ECE in the legend."""
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
    pts = ", ".join(f"{x:.2f} -> {yy:.2f} (n={n})" for x, yy, n in zip(xs, ys, ns))
    return _captioned(fig, f"Observed positive rate against the mean score in {bins} equal-width bins "
                           f"(mean score -> observed rate): {pts}; expected calibration error {ece:.3f}.")


@_styled
def estimate_widths(widths: pd.DataFrame, title: str = "Interval width against labels"):
    """Mean 95% interval width (rows: ``labels``, ``method`` in ppi/labels_only, ``width``) against the number of
    random labels: what the metric buys a labelling study."""
    fig, ax = plt.subplots(figsize=(5, 3.4))
    means = widths.groupby(["method", "labels"], as_index=False)["width"].mean()
    names = {"ppi": "PPI++ (labels + metric)", "labels_only": "labels only"}
    for method, d in means.groupby("method"):
        ax.plot(d["labels"], d["width"], "o-", label=names.get(method, method))
    ax.set(xlabel="random labels", ylabel="mean 95% interval width", title=title, ylim=(0, None))
    ax.legend(loc="lower left")  # the lines fall from the upper left
    fig.tight_layout()
    pts = "; ".join(f"{names.get(m, m)}: " + ", ".join(f"{int(n)} labels {w:.3f}" for n, w in zip(d["labels"], d["width"]))
                    for m, d in means.groupby("method"))
    return _captioned(fig, f"Mean width of the 95% interval of the label's rate against the number of random labels "
                           f"({pts}).")


@_styled
def comparison_forest(table: pd.DataFrame, title: str = "System comparison"):
    """Mean paired difference with its CI per metric (rows of :func:`evalkit.decide.compare.compare_systems`).

    One panel per scale and direction: a 0..100 difference and a 0..1 difference never share an axis, and
    metrics where lower is better sit in their own panel, titled so, since a positive difference there is a
    step back. The caption lists every difference with its interval.

    Examples
    --------
    >>> t = pd.DataFrame({"metric": ["relevance", "faithfulness", "hallucination"], "system_a": "a",
    ...                   "system_b": "b", "diff": [0.1, -5.0, 0.2], "low": [0.0, -9.0, 0.1], "high": [0.2, -1.0, 0.3]})
    >>> fig = comparison_forest(t)
    >>> [ax.get_title() for ax in fig.axes]
    ['0..1, higher is better', '0..100, higher is better', '0..1, lower is better']
    >>> caption_of(fig).split("; ")[0]
    'Mean paired difference b - a with its 95% bootstrap interval (pairs resampled): relevance 0.1 [0, 0.2]'
    """
    d = table.dropna(subset=["diff"]).reset_index(drop=True)
    # a column outside the registry compared as binary (e.g. a human `correct` label) is a share of True: 0..1
    shares = {r.metric: (0.0, 1.0) for r in d.itertuples() if r.metric not in REGISTRY
              and all(0 <= getattr(r, c, -1) <= 1 for c in ("mean_a", "mean_b"))}
    panels = _by_scale_and_direction(list(dict.fromkeys(d["metric"])), shares)
    rows = [max(int(d["metric"].isin(ms).sum()), 1) for _, ms in panels]
    fig, axes = plt.subplots(len(panels), 1, squeeze=False, gridspec_kw={"height_ratios": rows},
                             figsize=(7, 0.4 * sum(rows) + 1.5 + 1.0 * (len(panels) - 1)))
    axes = list(axes[:, 0])
    b, a = (d["system_b"].iloc[0], d["system_a"].iloc[0]) if len(d) else ("b", "a")
    for ax, ((scale, direction), ms) in zip(axes, panels):
        part = d[d["metric"].isin(ms)]
        labels = part["metric"] + (" · " + part["question_type"].astype(str) if "question_type" in part.columns else "")
        ypos = np.arange(len(part))[::-1]
        ax.errorbar(part["diff"], ypos, xerr=[part["diff"] - part["low"], part["high"] - part["diff"]], fmt="o",
                    capsize=3)
        ax.axvline(0, color="grey", ls=":")
        ax.set_yticks(ypos, labels)
        ax.set_title(f"{_scale_label(scale)}, {direction} is better" if direction in ("higher", "lower")
                     else _scale_label(scale), fontsize="medium")
        ax.set_xlabel(f"mean difference ({b} - {a}), {_scale_label(scale)} scale" if len(d) else "difference")
    if len(axes) > 1 or title:
        fig.suptitle(title)
    fig.tight_layout()
    diffs = "; ".join(f"{r.metric}{' · ' + str(r.question_type) if 'question_type' in d.columns else ''} "
                      f"{_interval(r.diff, r.low, r.high)}" for r in d.itertuples())
    return _captioned(fig, f"Mean paired difference {b} - {a} with its 95% bootstrap interval (pairs resampled): "
                           f"{diffs}.")


def _by_scale_and_direction(metrics: Sequence[str], scales: dict | None = None) -> list[tuple[tuple, list[str]]]:
    """Metrics grouped by (scale, direction), one group per panel, in order of first appearance; ``scales``
    gives the scale of columns the registry does not know."""
    groups: dict = {}
    for m in metrics:
        spec = REGISTRY.get(m)
        groups.setdefault((_scale(m) or (scales or {}).get(m), spec.better if spec else "none"), []).append(m)
    return list(groups.items()) or [((None, "none"), [])]


@_styled
def summary_heatmap(results: pd.DataFrame, variant: str | None = None, label: str = "id"):
    """The summary scores of every row as a heatmap (rows: summaries; columns: the variant's score columns,
    in the order and on the scale the registry declares). ``variant``: a summary scorer; by default the first
    one (in registry order) whose score columns the results hold."""
    if variant is None:
        held = [m for m in REGISTRY.in_family("summary")
                if all(f"{m}_{k}" in results.columns for k in REGISTRY[m].extra_columns)]
        if not held:
            raise ValueError(f"summary_heatmap: the results hold no summary scorer "
                             f"({', '.join(REGISTRY.in_family('summary'))}); score one first")
        variant = held[0]
    metric = REGISTRY[variant]
    lo, hi = metric.range
    cols = [f"{variant}_{k}" for k in metric.extra_columns]
    names = results[label].astype(str) + (" · " + results["system"].astype(str) if "system" in results.columns else "")
    d = results[cols].apply(pd.to_numeric, errors="coerce")
    d.index, d.columns = names, [c.replace(f"{variant}_", "").replace("_score", "") for c in cols]
    fig, ax = plt.subplots(figsize=(7, 0.38 * len(d) + 1.6))
    sns.heatmap(d, annot=True, fmt=".1f", vmin=lo, vmax=hi, cmap="RdYlGn", cbar_kws={"label": f"score ({lo:g}-{hi:g})"},
                ax=ax)
    ax.set_title(f"{variant.replace('_', '-')} scores (blank: the metric reported an error)")
    ax.set_ylabel("")
    fig.tight_layout()
    means = ", ".join(f"{c} {_fmt(d[c].mean())}" for c in d.columns)
    return _captioned(fig, f"Each summary's {variant} scores ({lo:g}..{hi:g}, the number in each cell); "
                           f"{int(d.isna().any(axis=1).sum())} of {len(d)} rows have a blank (an error). "
                           f"Column means: {means}.")
