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
# # 05 · Judged metrics (LLM judge) and embedding metrics
#
# The judged metrics and the embedding metrics are read on 0..100; each one's formula and empty-input rule are
# printed below from the registry (`evalkit metrics` shows the same table).
#
# Configure a judge with `EVALKIT_JUDGE_BASE_URL`, `EVALKIT_JUDGE_MODEL`, `EVALKIT_JUDGE_API_KEY`, or the
# `judge` parameter below. **With none configured, this notebook starts evalkit's scripted judge server
# (`evalkit.testing`): it answers the judge prompts from fixture rules (word/number overlap), not a language
# model, so the numbers below then demonstrate the machinery (HTTP, cache, JSON validation, arithmetic), not
# judge quality.**

# %% tags=["parameters"]
experiment_path = "experiments/default.yaml"  # opened alone: the experiment to score (relative to the project root)
report_dir = ""  # inside a report: the report folder (results, numbers, figures)
n_resamples = 1000
judge = {}  # judge settings; empty: EVALKIT_JUDGE_* variables, else a scripted demo server

# %%
import evalkit
import pandas as pd

# a table's text from the data ("from $1.1 billion to $1.2 billion") is text, never typeset as maths
pd.set_option("display.html.use_mathjax", False)
from IPython.display import display

run = evalkit.notebook.notebook_run(experiment_path, report_dir)
res = run.results

# %%
import pandas as pd

with pd.option_context("display.max_colwidth", None):
    display(pd.DataFrame([{"metric": m.name, "value": m.reads_as, "formula": m.formula, "empty input": m.empty_policy}
                          for m in evalkit.REGISTRY.values() if m.family in ("judged", "embedding")]).set_index("metric"))

# %%
JUDGED = ["ragas_score", "factual_accuracy", "answer_class", "semantic_similarity", "bert_score_f1"]
demo = False  # opened alone without the judged metrics: a demonstration run, labelled as such
if all(run.has(m) for m in ("faithfulness", "factual_accuracy")):
    judged = res  # scored in the report's single pass
    print("judged metrics from the scored results")
elif report_dir:  # inside a report every number comes from the report's one scoring pass
    judged = res
    print("The judged metrics were not scored in this report's run: add faithfulness and factual_accuracy "
          "(and a judge) to the experiment's metrics.")
else:  # opened on its own: the configured judge's scores, or the scripted server's (kept in the notebook cache)
    demo = True
    judged = run.scored_by_judge(JUDGED, judge)
    meta = judged.attrs["evalkit"]["judge"]
    print("judge:", meta["signature"], "| prompts sha256:", meta["prompts_sha256"][:12])
    display(pd.DataFrame(meta["usage"]).T)

# %% [markdown]
# ## Evidence: a faithfulness example, claim by claim

# %%
from evalkit.metrics.evidence import details_of

if "faithfulness_details" in judged:
    row = judged[judged["faithfulness"] < 100].iloc[0] if (judged["faithfulness"] < 100).any() else judged.iloc[0]
    print(row["answer"])
    display(pd.DataFrame(details_of(row, "faithfulness")["claims"]))

# %% [markdown]
# ## Scores by system

# %%
cols = ["faithfulness", "context_precision", "context_recall", "answer_relevance", "ragas_score",
        "factual_accuracy", "semantic_similarity", "bert_score_f1"]
cols = [c for c in cols if c in judged.columns]
if cols:
    display(judged.groupby("system")[cols].mean().round(1) if run.has("system") else judged[cols].mean().round(1))

# %%
by = "system" if run.has("system") else None
if "answer_class" in judged.columns:
    summ = evalkit.summary(judged, by=by, metrics=["answer_class"])
    display(summ[[c for c in ("system", "counts") if c in summ.columns]])

# %%
if "factual_accuracy_grade" in judged.columns:
    display(pd.crosstab(judged["system"] if by else pd.Series("all", index=judged.index),
                        judged["factual_accuracy_grade"]))

# %%
from evalkit.publish import plots

# one panel per scale: every metric here is read on 0..100, as the registry declares
if cols:
    fig = plots.metric_means(evalkit.summary(judged, by=by, metrics=cols), cols)
    run.show(fig, "05_judged_means")

# %% [markdown]
# ## Against the human labels
# Faithfulness should be low where people marked a hallucination; semantic similarity and BERTScore
# should be high where people marked the answer correct.

# %%
from evalkit.decide.calibrate import roc_auc

labels = {name: run.label(name, why=f"checking judged metrics against people needs a {name!r} label")
          for name in ("hallucinated", "correct")}
if labels["hallucinated"] is not None and "faithfulness" in judged.columns:
    run.show(plots.score_distributions(judged.assign(hallucinated=labels["hallucinated"]), "faithfulness",
                                       "hallucinated"), "05_faithfulness_by_label")
for metric, label, direction in (("faithfulness", "hallucinated", "lower"), ("semantic_similarity", "correct", "higher"),
                                 ("bert_score_f1", "correct", "higher"), ("factual_accuracy", "correct", "higher")):
    y = labels[label]
    if y is None or metric not in judged.columns:
        continue
    ok = judged[metric].notna() & y.notna()
    print(f"{metric:>20} vs {label:<12} ROC AUC", roc_auc(judged.loc[ok, metric].astype(float), y[ok].astype(bool),
                                                           direction, n_resamples=n_resamples, seed=run.config.seed))

# %% [markdown]
# ## Where they fail
# Embedding similarity rewards wording, not facts: a wrong number in an otherwise identical sentence
# keeps a high similarity. The wrong answers that look most similar to the reference:

# %%
if labels["correct"] is not None and "semantic_similarity" in judged.columns:
    wrong = judged[(~labels["correct"]).fillna(False)].nlargest(5, "semantic_similarity")
    display(wrong[[c for c in ("id", "system", "answer", "ground_truth", "semantic_similarity", "bert_score_f1")
                   if c in wrong.columns]])

# %% [markdown]
# ## ragas' own numbers (the `ragas` extra), on the same endpoint

# %%
from evalkit.metrics.ragas import available

show = ["id", "system", "ragas_faithfulness", "faithfulness", "ragas_context_recall", "context_recall"]
if run.has("ragas_faithfulness"):
    display(judged[[c for c in show if c in judged.columns]])
elif not demo:
    print("ragas' metrics were not scored in this run: add ragas_faithfulness to the experiment's metrics")
elif available():
    rg = run.scored_by_judge(["ragas_faithfulness", "ragas_context_recall", "faithfulness", "context_recall"], judge,
                             rows=12)
    display(rg[[c for c in show if c in rg.columns]])
else:
    print("ragas is not installed: pip install 'evalkit[ragas]'")

# %% [markdown]
# ## What this means

# %%
from IPython.display import Markdown
from evalkit.publish.lessons import metric_meaning, next_steps

from evalkit.publish.lessons import numbers_of

# the numbers of the tables above: the report's, or this notebook's own demonstration run
shown = run.metrics if judged is res else numbers_of(judged, n_resamples=n_resamples, seed=run.config.seed)
display(Markdown(metric_meaning(shown, [m for m in evalkit.REGISTRY if evalkit.get_metric(m).family == "judged"],
                                judged)))
display(Markdown(next_steps("05")))
