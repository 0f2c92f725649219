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
# # 02 · Completeness
#
# $$\text{completeness} = \frac{|K_Q \cap T(R)|}{|K_Q|}$$
#
# $K_Q$ are the question's keywords: its tokens without stop words and without non-alphanumeric
# tokens (the seed's rule, so "C-1" and "1,200" are not keywords). A question with no keywords
# scores 1.0. The details list the missing keywords. The verdict WARNs below 0.6.

# %% tags=["parameters"]
experiment_path = "experiments/default.yaml"  # opened alone: the experiment to score (relative to the project root)
report_dir = ""  # inside a report: the report folder (results, numbers, figures)

# %%
import evalkit
import pandas as pd

# a table's text from the data ("from $1.1 billion to $1.2 billion") is text, never typeset as maths
pd.set_option("display.html.use_mathjax", False)
from IPython.display import display

run = evalkit.notebook.notebook_run(experiment_path, report_dir)
res = run.results

# %% [markdown]
# ## Worked examples, on your rows
# A typical row (the median completeness), the weakest, and the one nearest the verdict's threshold: the
# question's keywords, those the answer mentions and those it misses.

# %%
from IPython.display import Markdown
from evalkit.publish.explain import examples_markdown
from evalkit.decide.verdict import metric_rule

for block in examples_markdown(res, "completeness", metric_rule("completeness", run.config.thresholds)[0].value,
                               run.config.params_for("completeness")):
    display(Markdown(block))

# %%
from evalkit.decide.aggregate import evidence_table

evidence_table(res, "completeness", n=8)

# %% [markdown]
# ## Against a human `correct` label
# The verdict's WARN rule for completeness is the rule below; the same rule object decides the
# verdict, this plot's line and the disagreement tables.

# %%
from evalkit.publish import plots
from evalkit.decide.verdict import metric_rule

rule, named = metric_rule("completeness", run.config.thresholds)  # the seed profile's rule unless a profile has one
print(f"verdict rule of the {named} profile:", rule.outcome, "if", rule)
if named != run.config.thresholds.named:
    print(f"this run's verdict is the {run.config.thresholds.named} profile's, which reads question_coverage instead")
correct = run.label("correct", why="checking completeness against correctness needs a human 'correct' label")
if correct is not None:
    run.show(plots.score_distributions(res.assign(correct=correct), "completeness", "correct", threshold=rule),
             "02_completeness_by_correct")

# %% [markdown]
# ## Where it fails
# Completeness checks that the question's words come back, not that the answer is right:
# correct answers WARNed (false alarms) and wrong answers that pass the bar.

# %%
from evalkit.decide.aggregate import disagreements

if correct is not None:
    # "flagged" = the WARN rule fires; the label it should track is "not correct"
    res2 = res.assign(incorrect=~correct)
    fp, fn = disagreements(res2, rule, "incorrect")
    print(f"correct answers the rule flags ({rule}): {len(fp)}; wrong answers it lets through: {len(fn)}")
    display(evidence_table(res2, "completeness", rows=fp.index[:5]))
    display(evidence_table(res2, "completeness", rows=fn.index[:5]))

# %% [markdown]
# ## What this means

# %%
from IPython.display import Markdown
from evalkit.publish.lessons import metric_meaning, next_steps

display(Markdown(metric_meaning(run.metrics, ["completeness"], res)))
display(Markdown(next_steps("02")))
