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
# # 02 · Completeness
#
# $$\text{completeness} = \frac{|K_Q \cap T(R)|}{|K_Q|}$$
#
# $K_Q$ are the question's keywords: its tokens without stop words and without non-alphanumeric
# tokens (the seed's rule, so "C-1" and "1,200" are not keywords). A question with no keywords
# scores 1.0. The details list the missing keywords. The verdict WARNs below 0.6.

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
# ## Worked example

# %%
evalkit.get_metric("completeness").fn("What is the base premium for Territory 118?", "The premium is $604.")

# %%
from evalkit.aggregate import evidence_table

evidence_table(res, "completeness", n=8)

# %%
from evalkit import plots

fig = plots.score_distributions(res, "completeness", "correct", threshold=run.config.thresholds.completeness_warn)
run.show(fig, "02_completeness_by_correct")

# %% [markdown]
# ## Where it fails
# Completeness checks that the question's words come back, not that the answer is right:
# correct answers WARNed (false alarms) and wrong answers that pass the 0.6 bar.

# %%
from evalkit.aggregate import disagreements

t = run.config.thresholds.completeness_warn
# "flagged" = completeness below the WARN bar; the label it should track is "not correct"
res2 = res.assign(incorrect=~res["correct"].astype(bool))
fp, fn = disagreements(res2, "completeness", "incorrect", t, direction="lower")
print(f"correct answers below {t}: {len(fp)}; wrong answers at or above {t}: {len(fn)}")
display(evidence_table(res2, "completeness", rows=fp.index[:5]))
display(evidence_table(res2, "completeness", rows=fn.index[:5]))
