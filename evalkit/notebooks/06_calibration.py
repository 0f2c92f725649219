# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
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
# on one part and reported on the other; without it the numbers are optimistic, and say so. The
# threshold is one rule (`score >= t` on the flagged side): a profile written from it and applied by
# the verdict flags exactly the rows counted here, including rows that sit on the threshold.
# Every resample is seeded: the same seed gives the same intervals.

# %% tags=["parameters"]
experiment_path = "experiments/default.yaml"  # opened alone: the experiment to score (relative to the project root)
report_dir = ""  # inside a report: the report folder (results, numbers, figures)
n_resamples = 300  # bootstrap bands of the threshold sweep

# %%
import evalkit
import pandas as pd

# a table's text from the data ("from $1.1 billion to $1.2 billion") is text, never typeset as maths
pd.set_option("display.html.use_mathjax", False)
from IPython.display import display

run = evalkit.notebook.notebook_run(experiment_path, report_dir)
res = run.results

# %% [markdown]
# ## The calibration the experiment asked for

# %%
import pandas as pd
from IPython.display import Markdown
from evalkit.publish import plots
from evalkit.decide.calibrate import binary_labels, calibrate
from evalkit.publish.lessons import interval_text
from evalkit.publish.notebook import interval_table

numbers = run.section("calibration")  # the numbers of metrics.json, under the experiment's protocol
if numbers:
    print("\n".join(numbers["summary"]))
    display(interval_table(numbers["at_threshold"], ("precision", "recall", "f1", "fpr", "tp", "fp", "tn", "fn"))
            .round(3))

# %%
if numbers:
    score, label, direction = numbers["score"], numbers["label"], numbers["direction"]
    y = pd.Series(binary_labels(res[label].tolist(), positive=numbers.get("positive"), column=label), index=res.index,
                  dtype="boolean")
    ok = res[score].notna() & y.notna()
    scores, labels = res.loc[ok, score].astype(float), y[ok].astype(bool)
    thr = numbers["threshold"]
    run.show(plots.roc_pr(scores, labels, direction, threshold=thr, title=f"{score} vs {label}"), "06_roc_pr")
    run.show(plots.threshold_sweep(scores, labels, direction, n_resamples=min(n_resamples, 300), seed=run.config.seed,
                                   threshold=thr), "06_threshold_sweep")

# %% [markdown]
# ## How the threshold is chosen, and how sure that choice is
# The criterion is computed at every distinct score used as the threshold and the best one is taken (left).
# Resampling the rows and choosing again shows how much that choice depends on which rows happened to be
# labelled (right): the 95% interval of the threshold is the middle 95% of those choices.

# %%
from evalkit.publish.lessons import boundary_note

if numbers:
    chosen = calibrate(scores, labels, direction=direction, criterion=numbers["criterion"], n_resamples=n_resamples,
                       seed=run.config.seed)
    iv = chosen.threshold_ci
    run.show(plots.threshold_choice(scores, labels, direction, criterion=numbers["criterion"],
                                    samples=chosen.threshold_samples, threshold=chosen.threshold,
                                    interval=(iv.low, iv.high)), "06_threshold_choice")
    display(Markdown(boundary_note(scores.tolist(), chosen.threshold, direction, score)))

# %% [markdown]
# ## Is the score a probability? Reliability of a 0..1 score
# Points on the diagonal would mean "a score of 0.3 is positive 30% of the time". Most scores are
# not calibrated in that sense; this is why thresholds are chosen from data.

# %%
if numbers:
    run.show(plots.reliability_diagram(scores, labels, bins=5, title=f"Reliability of {score}"), "06_reliability")

# %% [markdown]
# ## Optimistic versus honest
# Choosing a threshold and reporting its precision on the same rows overstates both: the threshold
# is fitted to those rows' noise. Below, the same criterion under both protocols. When the honest
# (held-out) numbers are much worse, the threshold will not transfer; publish the honest ones.

# %%
from evalkit.publish.lessons import small_sample_note

if numbers:
    rows = []
    for name, split in (("same rows (optimistic)", None), ("seeded split (honest)", "seeded")):
        try:
            r = calibrate(scores, labels, direction=direction, criterion=numbers["criterion"],
                          n_resamples=n_resamples, seed=run.config.seed, split=split)
        except ValueError as e:
            rows.append({"protocol": name, "note": str(e)})
            continue
        rows.append({"protocol": name, "threshold": r.threshold, "ROC AUC": str(r.roc_auc),
                     "precision": str(r.at_threshold.precision), "recall": str(r.at_threshold.recall),
                     "reported on": r.reported_on, "_result": r})
    display(pd.DataFrame(rows).drop(columns="_result", errors="ignore"))
    print(evalkit.notebook.split_lesson(*[r.get("_result") for r in rows]))
    honest = rows[1].get("_result")
    if honest is not None:  # how many of each class the held-out part holds decides what its interval can say
        at = honest.at_threshold
        pos, neg = int(at.tp.estimate + at.fn.estimate), int(at.fp.estimate + at.tn.estimate)
        display(Markdown(small_sample_note(pos, neg, part="held-out part")
                         or f"The held-out part has {pos} positives and {neg} negatives: enough for its intervals."))

# %% [markdown]
# ## Confounds: does the label sit in one system or one kind of question?
# If every positive comes from one system, a score that merely tells the systems apart gets a high AUC
# without detecting anything. The table counts positives per group, and the AUC within each group
# (small groups are flagged, not trusted).

# %%
if numbers:
    for col in ("system", "question_type"):
        if col in res.columns:
            counts = pd.crosstab(res.loc[ok, col], labels.rename(label))
            display(counts)
            one = [g for g, r in counts.iterrows() if r.get(True, 0) == labels.sum()]
            if one and labels.sum():
                print(f"warning: every positive ({int(labels.sum())}) is in {col} = {one[0]!r}; "
                      f"the AUC partly measures {col}, not the score's skill")
    if numbers.get("subgroups"):  # a group of one class has no AUC: said in words, not NaN
        display(pd.DataFrame([{**{k: v for k, v in g.items() if k != "roc_auc"},
                               "ROC AUC [95% CI]": interval_text(g["roc_auc"], "one class only: no AUC")}
                              for g in numbers["subgroups"]]))

# %% [markdown]
# ## Graded scores and agreement
# Rank correlation of the score with a graded human rating (`human_score`, when the data has one).

# %%
from evalkit.decide.calibrate import rank_correlation

if numbers and run.has("human_score"):
    okh = ok & res["human_score"].notna()
    rc = rank_correlation(res.loc[okh, score].astype(float), res.loc[okh, "human_score"].astype(float),
                          n_resamples=n_resamples, seed=run.config.seed)
    print("\n".join(f"{k}: {v}" for k, v in rc.items()))  # one line per coefficient, with its interval

# %% [markdown]
# ## How many hallucinations, really?
# A paper reports the rate of the human judgment ("b hallucinates in 12% of answers"), not a metric's mean: the
# metric is a biased stand-in, and its interval ignores that. Here the labels are hidden on all but a random
# sample of rows, as in a study that labelled only that many, and the rate is estimated three ways with
# `evalkit.estimate`: **ppi**, prediction-powered inference with power tuning (PPI++, Angelopoulos et al.,
# Science 2023 and 2024, through the authors' `ppi-python`), which corrects a prediction of the label from the
# score on every row by its error on the labelled rows, so its interval is valid whatever the metric's quality;
# **labels_only**, the labelled rows alone; **metric_only**, the prediction's mean, whose interval pretends the
# metric is the truth. The rate from every label is what the intervals should cover.
#
# In a study of your own, choose the rows to label for such an estimate with
# `evalkit.label_next(results, score=..., n=60, labels="labels.csv", positive=..., mode="estimate")`: it draws
# each unlabelled row with a known probability, higher where the labels so far leave the label least certain,
# and `evalkit.estimate(..., labels="labels.csv")` weights each drawn label by 1/probability (rows chosen near a
# threshold, as in the lab below, are refused for a rate unless such a draw followed them).

# %%
from evalkit.decide.calibrate import CalibrationError
from evalkit.decide.calibrate.estimate import hidden_labels, width_study

if numbers:
    scored = res[res[score].notna() & y.notna()]
    n_study = min(40, len(scored) // 2)
    try:
        found = evalkit.estimate(hidden_labels(scored, label, n_study, run.config.seed), label, [score],
                                 positive=numbers.get("positive"), by=None)
        truth = float(binary_labels(scored[label].tolist(), positive=numbers.get("positive"), column=label)
                      .count(True) / len(scored))
        table = pd.DataFrame([{"method": m, **getattr(e, m).to_dict()} for e in found
                              for m in ("ppi", "labels_only", "metric_only")]).set_index("method")
        table["covers the rate from every label"] = (table["low"] <= truth) & (truth <= table["high"])
        print(f"{n_study} of {len(scored)} rows labelled at random; the rate of {label} from every label: {truth:.3f}")
        display(table.round(3))
    except CalibrationError as e:  # too few labels in the sample, or labels that cannot be read as binary
        print(f"No estimate on these data: {e}")

# %% [markdown]
# What the metric buys a labelling study: the interval's width against the number of random labels, PPI beside
# the labels alone (each point the mean over five random draws). The gap is the labels the metric saves.

# %%
if numbers:
    widths = width_study(scored, label, [score], [n for n in (20, 30, 40, 60) if n <= len(scored) - 5],
                         positive=numbers.get("positive"))
    if len(widths):
        run.show(plots.estimate_widths(widths, title=f"{label}: interval width against labels"), "06_estimate_widths")

# %% [markdown]
# ## The calibration lab: choose by looking, label what decides
# Labels are a calibration study's real cost. `evalkit.explore` puts the threshold on a slider: the confusion
# matrix, precision, recall and F1 (with intervals) and the labelled rows nearest the threshold follow it.
# `evalkit.label_next` picks the unlabelled rows whose labels would narrow the threshold's interval most: most
# near the current threshold, spread over the scores there, and a random quarter from the whole range so the
# labelled set stays representative (uncertainty sampling, Lewis & Gale 1994, with exploration; Settles 2009).
# `evalkit.labeler` shows each of them with its evidence and writes `id, label, labeller, timestamp` to a CSV
# that `evalkit calibrate RESULTS --score S --label L --labels labels.csv` reads. Run in JupyterLab to use them
# (`make setup`: its `dev` extra includes `lab`); in a report they are drawn once, at the chosen threshold.
#
#
# Above the matrix, Youden's threshold (no guarantee) and the threshold Learn-then-Test picks for a guarantee
# (the experiment's `calibration.guarantee`, else precision >= 0.9 of the flag with probability 0.9; MAPIE's
# risk control), or a plain "none" when these labels cannot carry it: the distance between the two is what the
# guarantee costs.

# %%
if numbers:
    held = numbers.get("guarantee") or {"spec": "precision>=0.9", "delta": 0.1}
    lab = evalkit.explore(res, score, label, positive=numbers.get("positive"), direction=direction,
                          n_resamples=min(n_resamples, 200), seed=run.config.seed, guarantee=held["spec"],
                          delta=float(held["delta"]))
    display(lab)

# %%
if numbers:
    unlabelled = res.assign(**{label: None})  # as if nothing were labelled yet: the first batch of a new study
    batch = evalkit.label_next(unlabelled, score=score, label=label, n=8, direction=direction, seed=run.config.seed)
    display(batch[[c for c in ("id", "system", score, "why") if c in batch.columns]])
    display(evalkit.labeler(batch, out=run.labels_path, ask=f"{label}?"))  # beside the experiment file

# %% [markdown]
# ## What this means

# %%
from evalkit.publish.lessons import calibration_meaning, next_steps

if numbers:
    display(Markdown(calibration_meaning(numbers)))
display(Markdown(next_steps("06")))
