"""Figures: scales and directions from the registry, and no change to the caller's matplotlib settings."""
import subprocess
import sys

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from evalkit.publish import plots

SUMMARY = pd.DataFrame({"system": ["a", "a", "a", "b", "b", "b"], "kind": "score",
                        "metric": ["relevance", "hallucination", "faithfulness"] * 2,
                        "mean": [0.6, 0.2, 80.0, 0.7, 0.1, 90.0]})
TABLE = pd.DataFrame({"metric": ["relevance", "hallucination", "faithfulness"], "system_a": "a", "system_b": "b",
                      "diff": [0.1, -0.1, 10.0], "low": [0.0, -0.2, 2.0], "high": [0.2, 0.0, 18.0]})
SCORES = [0.1, 0.4, 0.35, 0.8, 0.2, 0.9, 0.7, 0.3]
LABELS = [0, 0, 1, 1, 0, 1, 1, 0]


def _heatmap_rows():
    cols = {f"twin_lock_{k}": [8.0, 5.0] for k in plots.REGISTRY["twin_lock"].extra_columns}
    return pd.DataFrame({"id": ["s1", "s2"], **cols})


FIGURES = {
    "metric_means": lambda: plots.metric_means(SUMMARY),
    "verdict_counts": lambda: plots.verdict_counts(pd.DataFrame({"system": ["a", "b"], "verdict": ["PASS", "FAIL"]})),
    "score_distributions": lambda: plots.score_distributions(
        pd.DataFrame({"s": SCORES, "y": [bool(v) for v in LABELS]}), "s", "y", threshold=0.5),
    "roc_pr": lambda: plots.roc_pr(SCORES, LABELS, threshold=0.5),
    "threshold_sweep": lambda: plots.threshold_sweep(SCORES, LABELS, n_resamples=5, grid=5),
    "reliability_diagram": lambda: plots.reliability_diagram(SCORES, LABELS, bins=4),
    "comparison_forest": lambda: plots.comparison_forest(TABLE),
    "summary_heatmap": lambda: plots.summary_heatmap(_heatmap_rows()),
}


@pytest.mark.parametrize("name", list(FIGURES))
def test_drawing_leaves_the_callers_settings_alone(name, tmp_path):
    plt.close(plt.figure())  # the first figure resolves the backend, which is recorded in rcParams
    with matplotlib.rc_context({"axes.facecolor": "pink", "font.size": 7}):  # a user's own settings
        before = dict(matplotlib.rcParams)
        fig = FIGURES[name]()
        plots.save_figure(fig, name, tmp_path, formats=("svg",))
        assert dict(matplotlib.rcParams) == before
    assert fig.axes[0].get_facecolor() == matplotlib.colors.to_rgba("white")  # evalkit's style, on its figure
    plt.close(fig)


def test_importing_evalkit_changes_no_setting():
    code = ("import matplotlib; before = dict(matplotlib.rcParams); import evalkit, evalkit.publish.plots; "
            "print(dict(matplotlib.rcParams) == before)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_metric_means_one_panel_per_scale_with_direction():
    fig = plots.metric_means(SUMMARY)
    assert len(fig.axes) == 2
    assert [ax.get_ylim() for ax in fig.axes] == [(0.0, 1.05), (0.0, 105.0)]
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["relevance", "hallucination (lower is better)"]
    assert [t.get_text() for t in fig.axes[1].get_xticklabels()] == ["faithfulness"]
    # the 0..100 bars are drawn as stored, not divided by hand: a=80, b=90
    assert sorted(round(p.get_height(), 6) for p in fig.axes[1].patches if p.get_height()) == [80.0, 90.0]
    assert "0..100" in fig.axes[1].get_ylabel() and "0..1)" in fig.axes[0].get_ylabel()
    plt.close(fig)


def test_comparison_forest_one_panel_per_scale_and_direction():
    fig = plots.comparison_forest(TABLE)
    assert [ax.get_title() for ax in fig.axes] == ["0..1, higher is better", "0..1, lower is better",
                                                   "0..100, higher is better"]
    assert [ax.get_xlabel() for ax in fig.axes] == ["mean difference (b - a), 0..1 scale"] * 2 + [
        "mean difference (b - a), 0..100 scale"]
    assert [[t.get_text() for t in ax.get_yticklabels()] for ax in fig.axes] == [["relevance"], ["hallucination"],
                                                                               ["faithfulness"]]
    plt.close(fig)


def test_figures_carry_captions_with_their_numbers():
    fig = plots.metric_means(SUMMARY)
    # SUMMARY's rows, by hand: each bar's mean appears in the caption, grouped by metric
    for row in SUMMARY.itertuples():
        assert f"{row.system} {row.mean:.3g}" in plots.caption_of(fig)
    assert "bootstrap 95% intervals" in plots.caption_of(fig)
    plt.close(fig)
    cmp = plots.comparison_forest(TABLE)
    for row in TABLE.itertuples():
        assert f"{row.metric} {row.diff:.3g} [{row.low:.3g}, {row.high:.3g}]" in plots.caption_of(cmp)
    plt.close(cmp)


def test_summary_heatmap_reads_columns_and_scale_from_the_registry():
    fig = plots.summary_heatmap(_heatmap_rows())
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["coverage", "alignment", "hallucination", "relevance",
                                                           "bias_toxicity"]
    assert ax.collections[0].get_clim() == (0.0, 10.0)
    plt.close(fig)


def test_one_scale_is_one_panel():
    fig = plots.metric_means(SUMMARY[SUMMARY["metric"] != "faithfulness"])
    assert len(fig.axes) == 1 and fig.axes[0].get_title() == "Metric means by system"
    plt.close(fig)
    assert np.isfinite(fig.axes[0].get_ylim()).all()


def test_a_binary_column_outside_the_registry_is_a_share_panel():
    # `correct` is no metric; compared as binary, its means are shares of True, so its panel reads 0..1
    t = pd.DataFrame({"metric": ["relevance", "correct"], "system_a": "a", "system_b": "b", "mean_a": [0.4, 0.5],
                      "mean_b": [0.5, 1.0], "diff": [0.1, 0.5], "low": [0.0, 0.25], "high": [0.2, 0.75]})
    fig = plots.comparison_forest(t)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["0..1, higher is better", "0..1"] and not any("not registered" in x for x in titles)
    plt.close(fig)


def test_summary_heatmap_draws_the_summary_scorer_the_results_hold():
    judge_only = _heatmap_rows().rename(columns=lambda c: c.replace("twin_lock_", "judge_lock_"))
    fig = plots.summary_heatmap(judge_only)
    assert fig.axes[0].get_title().startswith("judge-lock scores")
    with pytest.raises(ValueError, match="no summary scorer"):
        plots.summary_heatmap(pd.DataFrame({"id": ["s1"], "relevance": [0.5]}))


def test_metric_means_of_a_full_run_reads_in_a_papers_column(tmp_path):
    """#42: printed at a column's 3.5 inches, standing bars of 18 metrics collapsed (names cut at the figure's
    edge, panels squeezed). Lying bars keep every name whole, level, inside the figure and apart from the others."""
    from evalkit.metrics import REGISTRY

    names = ["relevance", "completeness", "hallucination", "unsupported_facts", "answers_question",
             "question_coverage", "reference_conflict", "exact_match", "keyword_coverage", "number_match",
             "answer_completeness", "source_citation", "dont_know", "fact_checks", "grounding_risk", "support",
             "semantic_similarity", "bert_score_f1"]
    rows = [{"metric": m, "kind": "score", "system": s,
             **({"mean": 0.5, "low": 0.4, "high": 0.6} if REGISTRY[m].range[1] <= 1 else
                {"mean": 50.0, "low": 40.0, "high": 60.0})} for m in names for s in ("rag-a", "rag-b")]
    fig = plots.metric_means(pd.DataFrame(rows), horizontal=True)
    plots.save_for_print(fig, "means", tmp_path, widths=("column",))
    fig.canvas.draw()
    edge = fig.bbox
    shown = [t for ax in fig.axes for t in ax.get_yticklabels() if t.get_text()]
    assert sorted(t.get_text().split(" (")[0] for t in shown) == sorted(names)  # every metric, one row each
    assert all(t.get_rotation() == 0 for t in shown)
    for t in shown:
        box = t.get_window_extent()
        assert box.x0 >= edge.x0 - 0.5 and box.x1 <= edge.x1 + 0.5, t.get_text()  # not cut at the figure's edge
    assert plots.overlapping_labels(fig) == []
    assert min(ax.get_position().height * fig.get_size_inches()[1] for ax in fig.axes) > 0.5  # no panel squeezed
    plt.close(fig)


def test_metric_means_of_a_full_run_stays_legible_in_a_narrow_window():
    """#42: the report at 800 px showed the default run's chart (15 metrics on two scales, 17 inches wide) with
    tick labels ~6 px high. A chart wider than plots.SCREEN_WIDTH_IN stacks its panels instead; shown at the 760
    px an 800 px window leaves, as the notebooks save it (100 dpi), a tick label is at least 10 px high."""
    import io

    from PIL import Image

    from evalkit.metrics import REGISTRY

    names = ["relevance", "completeness", "hallucination", "grounding_risk", "exact_match", "keyword_coverage",
             "number_match", "answer_completeness", "source_citation", "dont_know", "fact_checks", "faithfulness",
             "context_precision", "semantic_similarity", "bert_score_f1"]
    rows = [{"metric": m, "kind": "score", "system": s,
             **({"mean": 0.5, "low": 0.4, "high": 0.6} if REGISTRY[m].range[1] <= 1 else
                {"mean": 50.0, "low": 40.0, "high": 60.0})} for m in names for s in ("a", "b")]
    fig = plots.metric_means(pd.DataFrame(rows))
    assert fig.get_size_inches()[0] <= plots.SCREEN_WIDTH_IN and len(fig.axes) == 2
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    shown = min(1.0, 760 / Image.open(buf).size[0])  # the page shrinks a wider image to its column
    for ax in fig.axes:
        for label in ax.get_xticklabels():
            assert label.get_fontsize() * 100 / 72 * shown >= 10, (label.get_text(), shown)
    assert [len(ax.get_xticklabels()) for ax in fig.axes] == [11, 4]  # every metric kept, one panel per scale
    plt.close(fig)
