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
# | `fact_checks` | mean of the per-question checks in the experiment's `fact_checks` file (rules that name this dataset's ids) |

# %% tags=["parameters"]
experiment_path = "experiments/default.yaml"  # opened alone: the experiment to score (relative to the project root)
report_dir = ""  # inside a report: the report folder (results, numbers, figures)
n_resamples = 1000  # bootstrap resamples of the by-question-type intervals (the report passes its own)

# %%
import evalkit
import pandas as pd

# a table's text from the data ("from $1.1 billion to $1.2 billion") is text, never typeset as maths
pd.set_option("display.html.use_mathjax", False)
from IPython.display import display

run = evalkit.notebook.notebook_run(experiment_path, report_dir)
res = run.results

# %% [markdown]
# ## Worked examples

# %%
from IPython.display import Markdown
from evalkit.publish.lessons import quote

m = evalkit.get_metric
examples = [("keyword_coverage", m("keyword_coverage").fn("Territory 118 pays 604 dollars.",
                                                          "Territory 118 pays $604, a 0.305% increase.")),
            ("number_match", m("number_match").fn("The change was 0.133%.", "Territory 205 changed by -0.133% from 2022.")),
            ("dont_know", m("dont_know").fn("I'm not sure; the context does not say."))]
for name, found in examples:  # each result in words: its value, then each piece of evidence
    display(Markdown(f"**`{name}`** = {found.value}\n\n" + "\n".join(f"- {k}: {quote(str(v), 300)}"
                                                                      for k, v in dict(found.details).items())))

# %%
from evalkit.decide.aggregate import evidence_table

evidence_table(res, "number_match", rows=res["number_match"].notna(), n=10)

# %% [markdown]
# ## Fact checks: each check's result for the questions that have rules

# %%
import pandas as pd
from evalkit.metrics.evidence import details_of  # a details cell read back the one way results are read

if not run.skip("fact_checks", why="fact checks need a rules file named by the experiment (fact_checks: path)"):
    rows = []
    for _, r in res[res["fact_checks"].notna()].iterrows():
        for c in details_of(r, "fact_checks")["checks"]:
            rows.append({"id": r["id"], "system": r.get("system"), "rule": c["rule"], "check": c["check"],
                         "target": c["target"], "passed": c["passed"]})
    display(pd.DataFrame(rows))

# %% [markdown]
# ## Summary (booleans as count and percentage), by system and question type where the data has them

# %%
keys = [k for k in ("system", "question_type") if run.has(k)]
ref = [m for m, spec in evalkit.REGISTRY.items() if spec.family == "reference" and run.has(m)]
summ = evalkit.summary(res, by=keys or None, metrics=ref, n_resamples=n_resamples, seed=run.config.seed)
summ.round(3)

# %%
from evalkit.publish import plots

by = "system" if run.has("system") else None
numbers = pd.DataFrame(run.metrics["by_system"] if by else run.metrics["overall"])  # the report's metrics.json
scores = [m for m in ref if evalkit.REGISTRY[m].kind == "score"]
fig = plots.metric_means(numbers.assign(kind="score"), scores, by=by or "system")
run.show(fig, "04_reference_means")

# %% [markdown]
# ## Where they fail
# `exact_match` misses correct paraphrases; `number_match` counts a number as matched wherever it
# appears, so an answer can state the right number about the wrong thing.

# %%
correct = run.label("correct", why="finding paraphrases that exact match misses needs a human 'correct' label")
if correct is not None:
    para = res[correct.fillna(False) & ~res["exact_match"].astype(bool)]
    print(f"correct answers that are not exact matches: {len(para)} of {int(correct.sum())}")
    display(evidence_table(res, "keyword_coverage", rows=para.index[:6]))

# %% [markdown]
# ## What this means

# %%
from IPython.display import Markdown
from evalkit.publish.lessons import metric_meaning, next_steps

display(Markdown(metric_meaning(run.metrics, [m for m in evalkit.REGISTRY if evalkit.get_metric(m).family in ("reference", "embedding")], res)))
display(Markdown(next_steps("04")))
