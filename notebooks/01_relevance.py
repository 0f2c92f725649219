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
# # 01 · Relevance
#
# $$\text{relevance} = \tfrac12\,\big(S_{\cos} + S_{\text{Jaccard}}\big)$$
#
# * $S_{\cos}$: cosine of the TF-IDF vectors of question Q and answer R, English stop words removed,
#   the vectorizer fitted on the pair $[Q, R]$ alone (identical to scikit-learn's
#   `TfidfVectorizer(stop_words="english")` on that pair, computed for the whole column at once).
# * $S_{\text{Jaccard}} = |T(Q)\cap T(R)| \,/\, |T(Q)\cup T(R)|$ on lower-cased word tokens.
#
# An empty question or answer scores 0 and says why. The verdict FAILs an answer whose relevance is
# below 0.1.

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
s = evalkit.get_metric("relevance").fn("What is the base premium for Territory 118?",
                                        "The base premium for Territory 118 is $604 per year.")
s

# %% [markdown]
# ## Evidence on the sample: the cosine and Jaccard parts of each score

# %%
from evalkit.aggregate import evidence_table

evidence_table(res, "relevance", n=8, columns=("id", "system", "question", "answer"))

# %%
from evalkit import plots

fig = plots.score_distributions(res, "relevance", "correct")
run.show(fig, "01_relevance_by_correct")

# %% [markdown]
# ## Where it fails
# Relevance rewards repeating the question. A correct but terse answer ("Every October.") shares
# few words with its question and scores low; a wrong answer that restates the question scores
# high. The lowest-scoring correct answers and the highest-scoring wrong ones:

# %%
cols = ("id", "system", "question", "answer")
correct = res[res["correct"].astype(bool)]
wrong = res[~res["correct"].astype(bool)]
display(evidence_table(res, "relevance", rows=correct.nsmallest(4, "relevance").index, columns=cols))
display(evidence_table(res, "relevance", rows=wrong.nlargest(4, "relevance").index, columns=cols))
