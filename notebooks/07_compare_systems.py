# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 07 · Comparing systems
#
# Systems answered the same questions, so differences are paired by question: the mean difference
# of each score with a paired bootstrap 95% interval, and McNemar's exact test for paired
# correct/wrong outcomes. Per question type, too; small groups have wide intervals.

# %% tags=["parameters"]
data_path = "data/sample_rag.jsonl"  # relative to the project root
results_path = ""  # results.parquet of a report; empty means score data_path here
config_path = "experiments/default.config.yaml"
output_dir = "reports/interactive"
figures_dir = ""  # empty means output_dir/figures
seed = 0
signature = ""
experiment = "interactive"
calibration_score = "hallucination"
calibration_label = "hallucinated"
calibration_direction = "higher"
criterion = "youden"
n_resamples = 1000
systems = []
thresholds = {}
judge = {}
metrics = []

# %%
import evalkit
from evalkit.report import notebook_run

run = notebook_run(data_path, results_path, config_path, output_dir, figures_dir, metrics)
res = run.results

# %%
from evalkit.aggregate import scored_metrics
from evalkit.compare import compare_systems
from evalkit import plots

pair = systems[:2] if len(systems) >= 2 else sorted(res["system"].unique())[:2]
metric_cols = [m for m in scored_metrics(res) if m not in ("dont_know", "exact_match")]
table = compare_systems(res, metric_cols, pair[0], pair[1], n_resamples=n_resamples, seed=seed,
                        binary=[c for c in ("correct",) if c in res.columns])
table.round(3)

# %%
fig = plots.comparison_forest(table, title=f"{pair[1]} minus {pair[0]} (paired, 95% bootstrap)")
run.show(fig, "07_comparison")

# %% [markdown]
# ## By question type

# %%
by_type = compare_systems(res, ["hallucination", "keyword_coverage"], pair[0], pair[1], by="question_type",
                          n_resamples=n_resamples, seed=seed)
by_type.round(3)

# %% [markdown]
# A table ready for a paper (LaTeX):

# %%
print(table[["metric", "n_pairs", "mean_a", "mean_b", "diff", "low", "high"]].round(3).to_latex(index=False))
