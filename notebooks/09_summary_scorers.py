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
# # 09 · Summary scorers: Twin-Lock and Judge-Lock
#
# Five 0..10 metrics of a summary against its article, in strict order: **coverage, alignment,
# hallucination, relevance, bias & toxicity**. The arithmetic, caps and safeguards are deterministic
# code (`evalkit.metrics.summary`); the labels they consume (key points and their coverage, claims and
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
summaries_path = "data/sample_summaries.jsonl"

# %%
import json
import pandas as pd
import evalkit
from evalkit import plots
from evalkit.report import notebook_run

run = notebook_run(summaries_path, "", "", output_dir, figures_dir, ["twin_lock", "judge_lock"])
res = run.results
order = ["coverage", "alignment", "hallucination", "relevance", "bias_toxicity"]
table = res[["id", "system"] + [f"twin_lock_{k}_score" for k in order] + ["twin_lock", "judge_lock"]]
table

# %%
fig = plots.summary_heatmap(res, "twin_lock")
run.show(fig, "09_twin_lock_heatmap")

# %%
fig = plots.summary_heatmap(res, "judge_lock")
run.show(fig, "09_judge_lock_heatmap")

# %% [markdown]
# ## Evidence for one flawed summary (Twin-Lock)
# Every metric object has a fixed schema: score, band, the caps that bound, and its evidence.

# %%
row = res[(res["id"] == "s01") & (res["system"] == "flawed")].iloc[0]
print(row["answer"])
d = json.loads(row["twin_lock_details"])
print("provider:", d["provider"]["note"])
display(pd.DataFrame([{"metric": k, "score": d[k].get("score"), "band": d[k].get("band"),
                       "caps": "; ".join(d[k].get("caps", [])), "error": d[k].get("error", "")} for k in order]))
display(pd.DataFrame(d["hallucination"]["claims"])[["text", "label", "unsupported_anchors"]])
display(pd.DataFrame(d["coverage"]["key_points"])[["text", "status", "recall"]])

# %% [markdown]
# ## Judge-Lock's QAG evidence for the same summary

# %%
j = json.loads(row["judge_lock_details"])
display(pd.DataFrame(j["coverage"].get("qag", []))[["fact", "score", "span"]] if "qag" in j["coverage"] else j["coverage"])
print({k: j[k].get("score", j[k].get("error")) for k in order})

# %% [markdown]
# ## Rounding and band edges

# %%
from evalkit.metrics.summary import band, round_half_up

pd.DataFrame([{"raw": x, "rounded": round_half_up(x), "band": band(round_half_up(x))}
              for x in (2.345, 3.0, 3.005, 6.0, 7.995, 8.0, 8.01)])

# %% [markdown]
# ## Judge-backed labels
# With a judge configured (parameter `judge` or the `EVALKIT_JUDGE_*` variables) the labels come from it.
# Without one, this cell uses evalkit's scripted loopback server, which answers the label prompts with the
# offline rules over real HTTP: it demonstrates the path, not a judge's quality.

# %%
from evalkit.judge.loopback import judge_or_scripted

judge_cfg, server = judge_or_scripted(judge)
judged = evalkit.evaluate(res[["id", "system", "question", "contexts", "answer"]], ["judge_lock"],
                          {"judge": judge_cfg, "metric_params": {"judge_lock": {"provider": "judge"}}}, progress=False)
if server is not None:
    server.stop()
judged[["id", "system", "judge_lock"] + [f"judge_lock_{k}_score" for k in order]]

# %% [markdown]
# ## Where the offline labels fail
# Article s06: the flawed summary is seven words long and misses most key points, yet Twin-Lock rates its
# hallucination and bias perfect (it claims almost nothing), while the faithful summary's paraphrases
# ("rotten beams" for "rot in six beams") lower its word-support labels. Judge-Lock cannot form six
# questions from seven words and reports that instead of a score. Coverage is the metric that catches it.

# %%
res[res["id"] == "s06"][["system", "answer", "twin_lock", "twin_lock_coverage_score", "judge_lock", "error"]]
