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
# # 00 · Quick start
#
# Load a dataset, score it with every default metric, and read the summary. Everything below
# calls into `evalkit`; the notebook holds no metric logic. Run it top to bottom, or let
# `evalkit report experiments/default.yaml` run it with papermill.

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

# %% [markdown]
# The canonical columns come first; label columns (`hallucinated`, `correct`, `human_score`) are kept.
# Each metric adds a value column and a `*_details` column of JSON evidence; `error` records any
# metric that failed on a row (none should here).

# %%
print(f"{len(res)} rows, {res['system'].nunique()} systems, {res['id'].nunique()} questions; errors: {int(res['error'].notna().sum())}")
shown = ["id", "system", "question_type", "answer", "relevance", "completeness", "hallucination", "verdict"]
res[[c for c in shown if c in res.columns]].head(8)

# %% [markdown]
# ## The registry
# One table says what every metric needs, which way is better, and its range.

# %%
import pandas as pd

pd.DataFrame([{"metric": m.name, "family": m.family, "better": m.direction, "needs": ", ".join(m.needs),
               "empty input": m.empty_policy} for m in evalkit.REGISTRY.values()])

# %% [markdown]
# ## Summary by system
# Means are over determined rows; `n_undetermined` counts rows where a metric had nothing to judge
# (for example `number_match` when the expected answer has no numbers).

# %%
summ = evalkit.summary(res, by="system")
summ.round(3)

# %%
from evalkit import plots

fig = plots.metric_means(summ, ["relevance", "completeness", "hallucination", "keyword_coverage", "number_match",
                                "answer_completeness", "fact_checks"])
run.show(fig, "00_metric_means")

# %%
if "verdict" in res.columns:
    fig = plots.verdict_counts(res)
    run.show(fig, "00_verdicts")
