# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 07 · Comparing systems
#
# Systems answered the same questions, so differences are paired (by `id`, or by the question text
# when the data has no ids): the mean difference of each score with a paired bootstrap 95% interval,
# Holm-adjusted p-values across metrics, and McNemar's exact test for paired correct/wrong outcomes.
# Groups with fewer than 10 pairs are flagged: their p-values are not findings.

# %% tags=["parameters"]
experiment_path = "experiments/default.yaml"  # opened alone: the experiment to score (relative to the project root)
report_dir = ""  # inside a report: the report folder (results, numbers, figures)

# %%
import evalkit
from IPython.display import display

run = evalkit.notebook.notebook_run(experiment_path, report_dir)
res = run.results

# %%
import pandas as pd
from evalkit import plots

cmp = run.section("comparison")  # the numbers of metrics.json
if cmp:
    table = pd.DataFrame(cmp["table"])
    print(f"{cmp['system_b']} minus {cmp['system_a']}, paired on {cmp['pair_on']!r}")
    display(table.drop(columns=["system_a", "system_b"]).round(3))

# %%
if cmp:
    fig = plots.comparison_forest(table, title=f"{cmp['system_b']} minus {cmp['system_a']} (paired, 95% bootstrap)")
    run.show(fig, "07_comparison")

# %% [markdown]
# ## By group
# Per question type (or the experiment's `compare.by` column); small groups are flagged.

# %%
if cmp and cmp.get("by_table"):
    by_table = pd.DataFrame(cmp["by_table"])
    keep = by_table["metric"].isin(["hallucination", "keyword_coverage", "relevance"])
    display(by_table[keep].drop(columns=["system_a", "system_b"]).round(3))

# %% [markdown]
# A table ready for a paper (LaTeX with booktabs, by the same writer as `evalkit compare --format latex`;
# `evalkit paper` writes it with the methods text, figures and references):

# %%
if cmp:
    from evalkit.tables import compare_table, to_latex

    print(to_latex(compare_table(table, label="compare-systems")))
