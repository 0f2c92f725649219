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
# # 01 · Relevance
#
# $$\text{relevance} = \tfrac12\,\big(S_{\cos} + S_{\text{Jaccard}}\big)$$
#
# * $S_{\cos}$: cosine of the TF-IDF vectors of question Q and answer R, English stop words removed,
#   the vectorizer fitted on the pair $[Q, R]$ alone (identical to scikit-learn's
#   `TfidfVectorizer(stop_words="english")` on that pair, computed for the whole column at once).
# * $S_{\text{Jaccard}} = |T(Q)\cap T(R)| \,/\, |T(Q)\cup T(R)|$ on lower-cased word tokens.
#
# An empty question or answer scores 0 and says why. The seed profile's verdict FAILs an answer whose relevance
# is below 0.1. The default profile (evalkit) does not read relevance: word overlap cannot see that "230 V."
# answers "What voltage does it need?", so it asks `answers_question` instead (notebook 03).

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
# Three rows of the loaded data: a typical one (the median relevance), the weakest, and the one nearest the
# verdict's threshold, each with the arithmetic that gives its score.

# %%
from IPython.display import Markdown
from evalkit.publish.explain import examples_markdown
from evalkit.decide.verdict import metric_rule

rule, named = metric_rule("relevance", run.config.thresholds)  # the seed profile's rule unless a profile has one
print(f"threshold: the {named} profile's rule, {rule.outcome} if {rule}"
      + ("" if named == run.config.thresholds.named else f" (this run's verdict is the {run.config.thresholds.named} "
                                                         "profile's, which does not read relevance)"))
for block in examples_markdown(res, "relevance", rule.value, run.config.params_for("relevance")):
    display(Markdown(block))

# %% [markdown]
# ## Evidence: the cosine and Jaccard parts of each score

# %%
from evalkit.decide.aggregate import evidence_table

evidence_table(res, "relevance", n=8, columns=("id", "system", "question", "answer"))

# %%
from evalkit.publish import plots

correct = run.label("correct", why="the split by correctness needs a human 'correct' label")
if correct is not None:
    run.show(plots.score_distributions(res.assign(correct=correct), "relevance", "correct"), "01_relevance_by_correct")

# %% [markdown]
# ## Where it fails
# Relevance rewards repeating the question. A correct but terse answer shares few words with its
# question and scores low; a wrong answer that restates the question scores high. With a `correct`
# label, the lowest-scoring correct answers and the highest-scoring wrong ones:

# %%
cols = ("id", "system", "question", "answer")
if correct is not None:
    right, wrong = res[correct.fillna(False)], res[(~correct).fillna(False)]
    print(f"{len(right)} correct answers, median relevance {right['relevance'].median():.3f}; "
          f"{len(wrong)} wrong answers, median relevance {wrong['relevance'].median():.3f}")
    display(evidence_table(res, "relevance", rows=right.nsmallest(4, "relevance").index, columns=cols))
    display(evidence_table(res, "relevance", rows=wrong.nlargest(4, "relevance").index, columns=cols))

# %% [markdown]
# ## What this means

# %%
from IPython.display import Markdown
from evalkit.publish.lessons import metric_meaning, next_steps

display(Markdown(metric_meaning(run.metrics, ["relevance"], res)))
display(Markdown(next_steps("01")))
