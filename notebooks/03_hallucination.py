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
# # 03 · Hallucination (claim anchors)
#
# Anchors are read from the answer with spaCy: numbers (money, cardinals, percentages, quantities),
# dates and times, and assertive subject-verb-object claims (hedged verbs such as *may*, *suggests*,
# *possibly* are not anchors). Each anchor is looked up in the joined contexts, format-aware
# ("$1,200" = "1200", "12%" = "12 percent", "-0.133%" ≠ "0.133%", "March 2021" matches "2021-03").
#
# $$S_{\text{claims}} = \frac{\text{unsupported anchors}}{\text{anchors}},\qquad
#   P_{\text{drift}} = 0.2 \text{ if n-gram overlap}(R, C) < 0.2,\qquad
#   S_{\text{hall}} = \max(S_{\text{claims}}, P_{\text{drift}})$$
#
# The n-gram overlap is the mean, over unigrams and bigrams, of the share of the answer's distinct
# n-grams found in the context. The verdict FAILs above 0.5.

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
# ## Worked example, with the evidence for every anchor

# %%
import pandas as pd

s = evalkit.get_metric("hallucination").fn(
    "The base premium for Territory 118 rose 0.305% to $640 in March 2023.",
    ["Northfield Mutual Rate Manual (effective March 1, 2023). The base premium for Territory 118 is $604 per year, "
     "an increase of 0.305% over the 2022 manual."])
print(f"S_hall = {s.value:.3f}  (S_claims {s.details['s_claims']:.3f}, overlap {s.details['ngram_overlap']:.3f})")
pd.DataFrame(s.details["anchors"])

# %% [markdown]
# ## On the sample

# %%
from evalkit.aggregate import evidence_table

evidence_table(res, "hallucination", n=10)

# %%
from evalkit import plots

fig = plots.score_distributions(res, "hallucination", "hallucinated", threshold=run.config.thresholds.hallucination_fail)
run.show(fig, "03_hallucination_by_label")

# %%
fig = plots.roc_pr(res["hallucination"].astype(float), res["hallucinated"].astype(bool), "higher",
                   threshold=run.config.thresholds.hallucination_fail, title="hallucination vs human label (sample)")
run.show(fig, "03_hallucination_roc_pr")

# %% [markdown]
# ## Where it fails
# False positives: answers the humans judged faithful that the metric flags (typically a paraphrase
# whose claim words do not sit near each other in the context). False negatives: hallucinations it
# misses (typically a wrong entity or relation with no number or date to check).

# %%
from evalkit.aggregate import disagreements

fp, fn = disagreements(res, "hallucination", "hallucinated", run.config.thresholds.hallucination_fail)
print(f"false positives: {len(fp)}, false negatives: {len(fn)}")
display(evidence_table(res, "hallucination", rows=fp.index[:5]))
display(evidence_table(res, "hallucination", rows=fn.index[:8]))

# %% [markdown]
# ## Beside it: the learned grounding detector (`grounding`)
# The seed score above is explainable but, measured on the public benchmarks in `../shared/bench`, it ranks
# hallucinated answers no better than answer length. `grounding` aligns every answer sentence with its best
# evidence sentence, measures mismatches (numbers, dates, entities, negation and modality flips, rare novel
# words, relation changes, the seed's own anchors) and combines them with gradient-boosted trees trained
# with grouped cross-validation (`benchmarks/train_grounding.py`), then calibrates the output to a
# probability. Its evidence: each sentence, its best evidence, and the features that fired.

# %%
s = evalkit.get_metric("grounding").fn(
    "The base premium for Territory 118 rose 0.305% to $640 in March 2023, approved by Paul Brandt.",
    ["Northfield Mutual Rate Manual (effective March 1, 2023). The base premium for Territory 118 is $604 per year, "
     "an increase of 0.305% over the 2022 manual."])
print(f"P(hallucinated) = {s.value:.3f}")
display(pd.DataFrame(s.details["sentences"])[["sentence", "evidence", "support", "numbers_missing_context",
                                               "entities_missing", "negation_flip"]])
s.details["fired"]

# %%
from evalkit.calibrate import roc_auc

y = res["hallucinated"].astype(bool)
pd.DataFrame([{"metric": m, "ROC AUC vs hallucinated (95% CI)": str(roc_auc(res[m].astype(float), y, n_resamples=n_resamples,
                                                                           seed=seed))}
              for m in ("hallucination", "grounding")])

# %%
fig = plots.roc_pr(res["grounding"].astype(float), y, "higher", threshold=0.5,
                   title="grounding (learned detector) vs human label (sample)")
run.show(fig, "03_grounding_roc_pr")
