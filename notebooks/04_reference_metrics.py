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
# # 04 · Reference metrics and fact checks
#
# These compare the answer with the expected answer (ground truth):
#
# | metric | rule |
# |---|---|
# | `exact_match` | equal after lower-casing and whitespace normalisation |
# | `keyword_coverage` | capitalised phrases, numbers/percentages and 4+ letter non-stop words of the expected answer found in the answer |
# | `number_match` | expected numeric values found ("$604" = "604.00"; "-0.133%" ≠ "0.133%") |
# | `answer_completeness` | (min(answer words / expected words, 1) + keyword_coverage) / 2 |
# | `source_citation` | min(distinct source indicators / 3, 1), whole words |
# | `dont_know` | an uncertainty phrase, or a short non-answer |
# | `fact_checks` | mean of the per-question checks in `data/fact_checks.yaml` |

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
# ## Worked examples

# %%
m = evalkit.get_metric
display(m("keyword_coverage").fn("Territory 118 pays 604 dollars.", "Territory 118 pays $604, a 0.305% increase."))
display(m("number_match").fn("The change was 0.133%.", "Territory 205 changed by -0.133% from 2022."))
display(m("dont_know").fn("I'm not sure; the context does not say."))

# %%
from evalkit.aggregate import evidence_table

evidence_table(res, "number_match", rows=res["number_match"].notna(), n=10)

# %% [markdown]
# ## Fact checks: each check's result for the questions that have rules

# %%
import json
import pandas as pd

rows = []
for _, r in res[res["fact_checks"].notna()].iterrows():
    for c in json.loads(r["fact_checks_details"])["checks"]:
        rows.append({"id": r["id"], "system": r["system"], "rule": c["rule"], "check": c["check"],
                     "target": c["target"], "passed": c["passed"]})
pd.DataFrame(rows)

# %% [markdown]
# ## Per-system summary (booleans as count and percentage), by question type

# %%
summ = evalkit.summary(res, by=["system", "question_type"],
                       metrics=["exact_match", "keyword_coverage", "number_match", "answer_completeness",
                                "source_citation", "dont_know", "fact_checks"])
summ.round(3)

# %%
from evalkit import plots

fig = plots.metric_means(evalkit.summary(res, by="system"),
                         ["keyword_coverage", "number_match", "answer_completeness", "source_citation", "fact_checks"])
run.show(fig, "04_reference_means")

# %% [markdown]
# ## Where they fail
# `exact_match` misses correct paraphrases; `number_match` counts a number as matched wherever it
# appears, so an answer can state the right number about the wrong thing; `dont_know` fires on
# "unknown" even inside a substantive answer.

# %%
para = res[res["correct"].astype(bool) & ~res["exact_match"].astype(bool)]
print(f"correct answers that are not exact matches: {len(para)} of {int(res['correct'].sum())}")
evidence_table(res, "keyword_coverage", rows=para.index[:6])
