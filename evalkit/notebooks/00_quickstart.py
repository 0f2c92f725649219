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
# # 00 · Quick start
#
# Load a dataset, score it with every default metric that applies, and read the summary. Everything
# below calls into `evalkit`; the notebook holds no metric logic. Run it top to bottom, or let
# `evalkit report` run it with papermill on your own data.

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
# The canonical columns come first; any label columns your data has (`hallucinated`, `correct`, ...)
# are kept. Each metric adds a value column and a `*_details` column of JSON evidence; `error` records
# any metric that failed on a row.

# %%
n_sys = res["system"].nunique() if run.has("system") else 1
print(f"{len(res)} rows, {n_sys} system(s), {res['id'].nunique()} ids; rows with errors: {int(res['error'].notna().sum())}")
shown = ["id", "system", "question_type", "answer", "relevance", "completeness", "hallucination", "verdict"]
res[[c for c in shown if c in res.columns]].head(8)

# %% [markdown]
# ## The registry
# One table says what every metric needs, which way is better, and its range.

# %%
import pandas as pd

pd.DataFrame([{"metric": m.name, "family": m.family, "better": m.better, "needs": ", ".join(m.needs),
               "empty input": m.empty_policy} for m in evalkit.REGISTRY.values()])

# %% [markdown]
# ## Summary
# Means are over determined rows, with seeded bootstrap 95% intervals (`low`, `high`); `micro` sums the
# counted things (anchors, keywords, checks) over rows; `n_undetermined` counts rows where a metric had
# nothing to judge (for example `number_match` when the expected answer has no numbers). These are the
# numbers of the report's `metrics.json` (opened alone: the same computation on the experiment's data).

# %%
by = "system" if run.has("system") else None
summ = pd.DataFrame(run.metrics["by_system"] if by else run.metrics["overall"])
summ.round(3)

# %%
from evalkit.publish import plots

triad = [m for m in summ["metric"].unique() if evalkit.REGISTRY[m].family == "triad"]  # the verdict's metrics
fig = plots.metric_means(summ.assign(kind="score"), triad, by=by or "system")
run.show(fig, "00_triad_means")

# %% [markdown]
# ## Verdicts, and the evidence behind one passing and one failing answer
# The verdict is PASS / WARN / FAIL / ABSTAIN (the answer declines) with the rule that fired.
# The evidence columns explain a score: for `hallucination`, every anchor (number, date, claim) of the
# answer and whether the contexts support it. `evalkit.show(results, id)` draws one row's evidence: the
# answer with each unsupported anchor marked (hover for the context sentence that was checked), and every
# rule of the verdict with its value and threshold. Below, the first passing and the first failing answer,
# and what their numbers mean, read from the row.

# %%
from IPython.display import Markdown
from evalkit.publish.view.text import triad_in_words
from evalkit.publish.lessons import quote

if not run.skip("verdict", why="verdicts need relevance, completeness and hallucination (a 'contexts' column)"):
    run.show(plots.verdict_counts(res), "00_verdicts")
    for outcome in ("PASS", "FAIL"):
        rows = res.index[res["verdict"].eq(outcome)]
        if len(rows):
            r = res.loc[rows[0]]
            display(Markdown(f"### A {outcome} answer (id {quote(r['id'], 80)})\n\n" + triad_in_words(r)))
            display(evalkit.show(res, r["id"], system=r["system"] if run.has("system") else None))

# %% [markdown]
# ## What this means

# %%
from IPython.display import Markdown
from evalkit.publish.lessons import metric_meaning, next_steps

display(Markdown(metric_meaning(run.metrics, ["relevance", "completeness", "hallucination"], res)))
display(Markdown(next_steps("00")))
