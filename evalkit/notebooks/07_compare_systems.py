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
import pandas as pd

# a table's text from the data ("from $1.1 billion to $1.2 billion") is text, never typeset as maths
pd.set_option("display.html.use_mathjax", False)
from IPython.display import display

run = evalkit.notebook.notebook_run(experiment_path, report_dir)
res = run.results

# %%
import pandas as pd
from evalkit.publish import plots

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
# ## How to read it: pairing, the paired bootstrap, Holm and McNemar
# **Pairing.** Both systems answered the same questions, so each question gives one *pair* of scores and the
# comparison works on their differences, b − a. Questions differ far more from each other than the systems do
# (an easy question scores high for both): differencing removes that variation, and an interval on the mean
# difference is much narrower than two intervals on the two means. Rows pair by `id` (or by the question text);
# a question one system did not answer, or scored as undetermined, drops out of that metric's pairs
# (`n_pairs` says how many are left).
#
# **The paired bootstrap.** The interval resamples *pairs* (whole questions, with replacement) many times with a
# fixed seed, recomputes the mean difference on each resample, and takes the middle 95% of those means. It
# makes no assumption about the shape of the differences. Its p-value is the share of resamples on the other
# side of 0 (doubled): how often chance alone could flip the sign.
#
# **Holm.** Testing many metrics at once makes some look significant by luck (20 metrics at p < 0.05 give one
# false finding on average). Holm's step-down correction orders the p-values and multiplies the k-th smallest
# by (m − k + 1), keeping the family-wise error at 5% over all m metrics; `p_holm` is the corrected value.
#
# **McNemar.** For a binary outcome (correct or not) only the *discordant* pairs carry information: questions
# one system got right and the other wrong (`only_a`, `only_b`). McNemar's exact test asks whether those
# split unevenly, a binomial test on them; pairs where both agree cannot tell the systems apart.
#
# **Where they fail.** *Few pairs*: with under about 10 pairs the bootstrap's interval is too narrow (it cannot
# see variation it never sampled) and such rows are flagged `small`, not findings. *Ties*: a metric that is
# often equal for both systems (0 and 0, 1 and 1) has many zero differences, and on a discrete score the
# bootstrap's p-value moves in coarse steps; McNemar with few discordant pairs has almost no power. *Many
# metrics*: Holm keeps false findings rare, but the metrics are correlated (the three lexical scores move
# together), so the correction is conservative and a real difference can be missed; choose the metrics that
# answer your question before looking at the table, not after.

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
    from evalkit.publish.tables import compare_table, to_latex

    print(to_latex(compare_table(table, label="compare-systems")))

# %% [markdown]
# ## What this means

# %%
from IPython.display import Markdown
from evalkit.publish.lessons import comparison_meaning, next_steps

if cmp:
    display(Markdown(comparison_meaning(cmp["table"], cmp["system_a"], cmp["system_b"])))
display(Markdown(next_steps("07")))
