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
# # 09 · Summary scorers: Twin-Lock and Judge-Lock
#
# Five 0..10 metrics of a summary against its article, in strict order: **coverage, alignment,
# hallucination, relevance, bias & toxicity**. The arithmetic, caps and safeguards are deterministic
# code (`evalkit.metrics.summarization`); the labels they consume (key points and their coverage, claims and
# their support, tone, QAG answers) come from a label provider:
#
# * `offline` (default): central sentences, the hallucination metric's anchor matcher, VADER tone, a small
#   documented word list. Deterministic and weaker than a judge; every output says so.
# * `judge`: the configured LLM judge answers versioned prompts (`evalkit/judge/prompts/summary_*.txt`).
#
# | | Twin-Lock | Judge-Lock |
# |---|---|---|
# | coverage | F1(key-point recall, 1 - extraneous tokens share) × 10; extraneous claim ≤ 4 | harmonic mean(F1, QAG accuracy) × 10; extraneous claim ≤ 3; not all 6 QAGs correct or duplicate spans ≤ 7; precision < 0.95 or recall < 0.90 ≤ 7 |
# | alignment | none 10, mild 8-6, severe 3-1 | same; severe hallucination ≤ 3 |
# | hallucination | max(0, 10 - round(fraction × 14)) | (4 - round(fraction × 4) if any Unsupported else 10 - round(fraction × 14)) × QAG precision |
# | relevance | segment bands High 1 / Some 0.5 / None 0, mean × 10; any None ≤ 4 | harmonic mean(mean of High 1 / Some 0.3 / None 0, QAG accuracy) × 10; None or extraneous claim ≤ 3 |
# | bias & toxicity | (bias + tox) / 2 | same, with slur: tox ≤ 2 and overall ≤ 3; profanity: tox ≤ 5; stereotype: bias ≤ 4 |
# | global | any hallucination caps coverage and relevance at 4 | … at 3; perfect-10 guard rail: all ≥ 9.5 with < 5 evidence spans → at most 9 |
#
# Scores are rounded half up to 2 decimals, then banded: poor [0, 3], fair (3, 6], good (6, 8],
# excellent (8, 10]; a score exactly on an edge takes the lower band.

# %% tags=["parameters"]
experiment_path = "experiments/summaries.yaml"  # opened alone: the experiment to score (relative to the project root)
report_dir = ""  # inside a report: the report folder (results, numbers, figures)
judge = {}  # judge settings for judge-backed labels; empty: EVALKIT_JUDGE_*, else a scripted demo server

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
from evalkit.metrics.evidence import details_of

order = ["coverage", "alignment", "hallucination", "relevance", "bias_toxicity"]
variants = [v for v in ("twin_lock", "judge_lock") if run.has(v)]
keys = [c for c in ("id", "system") if run.has(c)]
table = res[keys + [f"{v}_{k}_score" for v in variants[:1] for k in order] + variants]
table

# %%
for v in variants:
    run.show(plots.summary_heatmap(res, v), f"09_{v}_heatmap")

# %% [markdown]
# ## Evidence for the lowest-scoring summary
# Every metric object has a fixed schema: score, band, the caps that bound, and its evidence.

# %%
v = variants[0]
row = res.loc[res[v].astype(float).idxmin()] if res[v].notna().any() else res.iloc[0]
print(f"{v} {row[v]} for id {row['id']}:", row["answer"])
d = details_of(row, v)
print("provider:", d.get("provider", {}).get("note", ""))
display(pd.DataFrame([{"metric": k, "score": d[k].get("score"), "band": d[k].get("band"),
                       "caps": "; ".join(d[k].get("caps", [])), "error": d[k].get("error", "")} for k in order]))
if "claims" in d["hallucination"]:
    display(pd.DataFrame(d["hallucination"]["claims"]))
if "key_points" in d["coverage"]:
    display(pd.DataFrame(d["coverage"]["key_points"]))

# %% [markdown]
# ## Rounding and band edges

# %%
from evalkit.metrics.summarization import band, round_half_up

pd.DataFrame([{"raw": x, "rounded": round_half_up(x), "band": band(round_half_up(x))}
              for x in (2.345, 3.0, 3.005, 6.0, 7.995, 8.0, 8.01)])

# %% [markdown]
# ## Judge-backed labels
# With a judge configured (parameter `judge` or the `EVALKIT_JUDGE_*` variables) the labels come from it.
# Without one, this cell uses evalkit's scripted judge server (`evalkit.testing`), which answers the label prompts
# from fixture rules (word and number overlap) over real HTTP: it demonstrates the path, not a judge's quality.

# %%
if not report_dir:  # inside a report every score comes from the report's scoring pass
    judged = run.scored_by_judge(["judge_lock"], judge, params={"judge_lock": {"provider": "judge"}})
    display(judged[["id", "system", "judge_lock"] + [f"judge_lock_{k}_score" for k in order]])

# %% [markdown]
# ## Where the offline labels fail
# A very short summary claims almost nothing, so its hallucination and bias scores are perfect while it
# misses most key points: coverage is the metric that catches it. The summaries with the lowest coverage,
# beside their overall score:

# %%
cov = f"{v}_coverage_score"
low = res.assign(words=res["answer"].fillna("").str.split().str.len(), **{cov: pd.to_numeric(res[cov], errors="coerce")})
display(low.nsmallest(3, cov)[keys + ["words", v, cov, f"{v}_hallucination_score", "error"]])

# %% [markdown]
# ## What this means

# %%
from IPython.display import Markdown
from evalkit.publish.lessons import metric_meaning, next_steps

display(Markdown(metric_meaning(run.metrics, ["twin_lock", "judge_lock"], res)))
display(Markdown(next_steps("09")))
