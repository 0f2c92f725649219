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
# # 05 · Judged metrics (LLM judge) and embedding metrics
#
# | metric | formula (0..100) |
# |---|---|
# | `faithfulness` | the judge extracts the answer's claims and checks each against the contexts: supported / claims × 100 (100 with no claims) |
# | `context_precision` | per-context usefulness verdicts: mean × 100; average precision@k in the details |
# | `context_recall` | ground-truth statements attributable to the contexts / statements × 100 |
# | `answer_relevance` | 3 questions generated from the answer; mean cosine of their embeddings with the question × 100 (rubric fallback without embeddings) |
# | `ragas_score` | 0.30 faithfulness + 0.20 context precision + 0.20 context recall + 0.30 answer relevance; missing parts excluded, weights renormalised |
# | `factual_accuracy` | G-Eval: 0.5 correctness + 0.3 completeness + 0.2 consistency; grade A ≥ 80, B ≥ 60, C ≥ 40, D ≥ 20, else E |
# | `answer_class` | DON'T KNOW by the uncertainty rule, else the judge's CORRECT / WRONG |
# | `semantic_similarity` | cosine of answer and ground-truth embeddings × 100 (all-MiniLM-L6-v2, offline) |
# | `bert_score_f1` | BERTScore F1 × 100 (bert-score, same offline model) |
#
# Configure a judge with `EVALKIT_JUDGE_BASE_URL`, `EVALKIT_JUDGE_MODEL`, `EVALKIT_JUDGE_API_KEY`, or the
# `judge` parameter below. **With none configured, this notebook starts evalkit's scripted loopback server:
# it answers the judge prompts with simple word/number-overlap rules, not a language model, so the numbers
# below then demonstrate the machinery (HTTP, cache, JSON validation, arithmetic), not judge quality.**

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

# %%
import evalkit
from evalkit.report import notebook_run

run = notebook_run(data_path, results_path, config_path, output_dir, figures_dir, metrics)
res = run.results

# %%
import pandas as pd
from evalkit.judge.loopback import judge_or_scripted

judge_cfg, server = judge_or_scripted(judge)
if server is not None:
    print("No judge configured: using the scripted loopback server at", server.url, "(heuristic labels, not an LLM)")
judged = evalkit.evaluate(res, ["ragas_score", "factual_accuracy", "answer_class", "semantic_similarity",
                                "bert_score_f1"], {"judge": judge_cfg}, progress=False)
meta = judged.attrs["evalkit"]["judge"]
print("judge:", meta["signature"], "| prompts sha256:", meta["prompts_sha256"][:12])
pd.DataFrame(meta["usage"]).T

# %% [markdown]
# ## Evidence: a faithfulness example, claim by claim

# %%
import json

row = judged[judged["faithfulness"] < 100].iloc[0] if (judged["faithfulness"] < 100).any() else judged.iloc[0]
print(row["answer"])
pd.DataFrame(json.loads(row["faithfulness_details"])["claims"])

# %% [markdown]
# ## Scores by system

# %%
cols = ["faithfulness", "context_precision", "context_recall", "answer_relevance", "ragas_score",
        "factual_accuracy", "semantic_similarity", "bert_score_f1"]
judged.groupby("system")[cols].mean().round(1)

# %%
summ = evalkit.summary(judged, by="system", metrics=["answer_class"])
summ[["system", "counts"]]

# %%
pd.crosstab(judged["system"], judged["factual_accuracy_grade"])

# %%
from evalkit import plots

long = evalkit.summary(judged, by="system", metrics=cols)
long["mean"] = long["mean"] / 100
fig = plots.metric_means(long, cols)
fig.axes[0].set_ylabel("mean / 100")
run.show(fig, "05_judged_means")

# %% [markdown]
# ## Against the human labels
# Faithfulness should be low where humans marked a hallucination; semantic similarity and BERTScore
# should be high where humans marked the answer correct.

# %%
fig = plots.score_distributions(judged, "faithfulness", "hallucinated")
run.show(fig, "05_faithfulness_by_label")

# %%
from evalkit.calibrate import roc_auc

for metric, label, direction in (("faithfulness", "hallucinated", "lower"), ("semantic_similarity", "correct", "higher"),
                                 ("bert_score_f1", "correct", "higher"), ("factual_accuracy", "correct", "higher")):
    ok = judged[metric].notna()
    print(f"{metric:>20} vs {label:<12} ROC AUC", roc_auc(judged.loc[ok, metric].astype(float),
                                                           judged.loc[ok, label].astype(bool), direction,
                                                           n_resamples=n_resamples, seed=seed))

# %% [markdown]
# ## Where they fail
# Embedding similarity rewards wording, not facts: a wrong number in an otherwise identical sentence
# keeps a high similarity. The wrong answers that look most similar to the reference:

# %%
wrong = judged[~judged["correct"].astype(bool)].nlargest(5, "semantic_similarity")
wrong[["id", "system", "answer", "ground_truth", "semantic_similarity", "bert_score_f1"]]

# %% [markdown]
# ## ragas' own numbers (the `ragas` extra), on the same endpoint

# %%
from evalkit.judge.ragas_adapter import available

if available():
    rg = evalkit.evaluate(res.head(12), ["ragas_faithfulness", "ragas_context_recall", "faithfulness",
                                         "context_recall"], {"judge": judge_cfg}, progress=False)
    display(rg[["id", "system", "ragas_faithfulness", "faithfulness", "ragas_context_recall", "context_recall"]])
else:
    print("ragas is not installed: pip install 'evalkit[ragas]'")

# %%
if server is not None:
    server.stop()
