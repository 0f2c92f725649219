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
# # 06 · Calibration against human labels
#
# A threshold is a claim about data. Here we choose one from evidence and publish it with its
# uncertainty: ROC and PR AUC with stratified bootstrap intervals, the threshold chosen by a stated
# criterion (Youden's J, F1, precision ≥ X, recall ≥ X, or costs), the bootstrap distribution of the
# threshold itself, and the confusion matrix at that threshold. With `split`, the threshold is chosen
# on one part and reported on the other; without it the report says the numbers are optimistic.
# Every resample is seeded: the same seed gives the same intervals.

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
import pandas as pd
from evalkit import plots
from evalkit.calibrate import calibrate, cohen_kappa, rank_correlation, roc_auc

ok = res[calibration_score].notna() & res[calibration_label].notna()
scores = res.loc[ok, calibration_score].astype(float)
labels = res.loc[ok, calibration_label].astype(bool)
cal = calibrate(scores, labels, direction=calibration_direction, criterion=criterion, n_resamples=n_resamples,
                seed=seed, subgroups={"question_type": res.loc[ok, "question_type"], "system": res.loc[ok, "system"]})
print(f"{calibration_score} vs {calibration_label}: n={cal.n} (positives {cal.n_pos}), protocol: {cal.protocol}")
print(f"ROC AUC {cal.roc_auc}   PR AUC {cal.pr_auc}")
print(f"threshold ({criterion}): {cal.threshold:.4g}, bootstrap 95% interval {cal.threshold_ci}")
op = cal.at_threshold
pd.DataFrame({k: [str(getattr(op, k))] for k in ("precision", "recall", "f1", "fpr", "tp", "fp", "tn", "fn")})

# %%
fig = plots.roc_pr(scores, labels, calibration_direction, threshold=cal.threshold,
                   title=f"{calibration_score} vs {calibration_label}")
run.show(fig, "06_roc_pr")

# %%
fig = plots.threshold_sweep(scores, labels, calibration_direction, n_resamples=min(n_resamples, 300), seed=seed,
                            threshold=cal.threshold)
run.show(fig, "06_threshold_sweep")

# %%
fig = plots.score_distributions(res[ok], calibration_score, calibration_label, threshold=cal.threshold)
run.show(fig, "06_score_distributions")

# %% [markdown]
# ## Is the score a probability? Reliability of a 0..1 score
# Points on the diagonal would mean "a score of 0.3 is hallucinated 30% of the time". The seed score
# is not calibrated in that sense; this is why thresholds are chosen from data.

# %%
fig = plots.reliability_diagram(scores, labels, bins=5, title=f"Reliability of {calibration_score}")
run.show(fig, "06_reliability")

# %% [markdown]
# ## The threshold's own uncertainty
# How much would the chosen threshold move with a different sample of the same size?

# %%
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(6, 3))
ax.hist(cal.threshold_samples, bins=20)
ax.axvline(cal.threshold, color="k", ls="--")
ax.set(xlabel="threshold chosen on a bootstrap resample", ylabel="resamples", title="Threshold stability")
run.show(fig, "06_threshold_stability")

# %% [markdown]
# ## By subgroup (small groups are flagged, not trusted)

# %%
pd.DataFrame([{**{k: v for k, v in g.items() if k != "roc_auc"}, "roc_auc": g["roc_auc"]["estimate"],
               "low": g["roc_auc"]["low"], "high": g["roc_auc"]["high"]} for g in cal.subgroups])

# %% [markdown]
# ## Honest protocol: choose on half, report on the other half (seeded split)

# %%
held = calibrate(scores, labels, direction=calibration_direction, criterion=criterion, n_resamples=n_resamples,
                 seed=seed, split="seeded")
print(held.protocol, "| reported on", held.reported_on)
print(f"ROC AUC {held.roc_auc}; at threshold {held.threshold:.4g}: precision {held.at_threshold.precision}, "
      f"recall {held.at_threshold.recall}")

# %% [markdown]
# ## Graded scores and agreement
# Rank correlation of the score with the 1-5 human quality rating (a hallucination score should
# correlate negatively), and Cohen's kappa between the verdict's FAIL and the human label.

# %%
if "human_score" in res.columns:
    rc = rank_correlation(res.loc[ok, calibration_score].astype(float), res.loc[ok, "human_score"].astype(float),
                          n_resamples=n_resamples, seed=seed)
    print({k: str(v) for k, v in rc.items()})
if "verdict" in res.columns:
    print("kappa(verdict FAIL, hallucinated):",
          cohen_kappa(res["verdict"].eq("FAIL"), res[calibration_label].astype(bool), n_resamples=n_resamples, seed=seed))

# %% [markdown]
# ## The seed score and the learned detector, side by side
# `grounding` outputs a calibrated probability, so its reliability diagram should sit near the diagonal
# (on this small sample the bins are wide). Both are compared with the two trivial baselines the
# benchmark README names: answer length and the share of answer tokens absent from the context.

# %%
side = evalkit.evaluate(res, ["answer_length", "novel_token_rate"], progress=False)
rows = []
for m in ("hallucination", "grounding", "answer_length", "novel_token_rate"):
    okm = side[m].notna() & side[calibration_label].notna()
    rows.append({"metric": m, "ROC AUC": str(roc_auc(side.loc[okm, m].astype(float),
                                                     side.loc[okm, calibration_label].astype(bool),
                                                     n_resamples=n_resamples, seed=seed))})
display(pd.DataFrame(rows))
fig = plots.reliability_diagram(res["grounding"].astype(float), res[calibration_label].astype(bool), bins=5,
                                title="Reliability of grounding (sample)")
run.show(fig, "06_grounding_reliability")
