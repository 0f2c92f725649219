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
# # 03 · Hallucination (claim anchors)
#
# Anchors are read from the answer with spaCy: numbers (money, cardinals, percentages, quantities),
# dates and times, and assertive subject-verb-object claims (hedged verbs such as *may*, *suggests*,
# *possibly* are not anchors). Each anchor is looked up in the joined contexts, format-aware
# ("$1,200" = "1200", "12%" = "12 percent", "-0.133%" ≠ "0.133%", "March 2021" matches "2021-03").
#
# $$S_{\text{claims}} = \frac{\text{unsupported anchors}}{\text{anchors}},\qquad
#   P_{\text{drift}} = 0.2 \text{ if n-gram overlap}(R, C) < 0.2,\qquad
#   S_{\text{hall}} = \max(S_{\text{claims}}, P_{\text{drift}})$$
#
# The n-gram overlap is the mean, over unigrams and bigrams, of the share of the answer's distinct
# n-grams found in the context. The seed's verdict FAILs when hallucination is strictly above 0.5
# (`> 0.5`): an answer with one supported and one unsupported anchor scores exactly 0.5 and passes (see
# "The boundary" below for how many rows of this data sit on it).
#
# Names are not anchors by default (the seed's three types); `metric_params: {hallucination: {anchors:
# [numeric, date, claim, entity]}}` in the scoring config adds them, matched case-insensitively and as
# abbreviations ("WA" = "Western Australia").

# %% tags=["parameters"]
experiment_path = "experiments/default.yaml"  # opened alone: the experiment to score (relative to the project root)
report_dir = ""  # inside a report: the report folder (results, numbers, figures)
n_resamples = 1000

# %%
import evalkit
import pandas as pd

# a table's text from the data ("from $1.1 billion to $1.2 billion") is text, never typeset as maths
pd.set_option("display.html.use_mathjax", False)
from IPython.display import display

run = evalkit.notebook.notebook_run(experiment_path, report_dir)
res = run.results

# %% [markdown]
# ## Worked examples, on your rows, with the evidence for every anchor
# A typical row (the median hallucination), the worst, and the one nearest the verdict's threshold: each anchor,
# whether the contexts support it, and the sentence that was checked.

# %%
import pandas as pd
from IPython.display import Markdown
from evalkit.publish.explain import examples_markdown
from evalkit.decide.verdict import metric_rule

for block in examples_markdown(res, "hallucination", metric_rule("hallucination", run.config.thresholds)[0].value):
    display(Markdown(block))

# %% [markdown]
# ## On this data

# %%
from evalkit.decide.aggregate import evidence_table
from evalkit.decide.verdict import metric_rule

rule, named = metric_rule("hallucination", run.config.thresholds)  # the seed profile's rule unless a profile has one
print(f"verdict rule of the {named} profile:", rule.outcome, "if", rule)
if named != run.config.thresholds.named:
    print(f"this run's verdict is the {run.config.thresholds.named} profile's, which reads unsupported_facts instead")
evidence_table(res, "hallucination", n=10)

# %%
from evalkit.publish import plots

y = run.label("hallucinated", why="checking the score against people needs a human 'hallucinated' label")
if y is not None:
    lab = res.assign(hallucinated=y)
    run.show(plots.score_distributions(lab, "hallucination", "hallucinated", threshold=rule),
             "03_hallucination_by_label")
    ok = lab["hallucinated"].notna() & lab["hallucination"].notna()
    run.show(plots.roc_pr(lab.loc[ok, "hallucination"].astype(float), lab.loc[ok, "hallucinated"].astype(bool),
                          "higher", threshold=rule, title="hallucination vs human label"),
             "03_hallucination_roc_pr")

# %% [markdown]
# ## The boundary: exactly 0.5
# The seed's rule is strict, `hallucination > 0.5`, so a score of exactly 0.5 passes: one unsupported anchor of
# two, two of four, and so on. A calibrated profile (`evalkit calibrate -o`) flags its threshold inclusively
# (`>= t`), so under a calibrated 0.5 the same answers fail. The count below is this data's; the table shows
# a few of those answers with their anchors.

# %%
import dataclasses
from evalkit.publish.analysis import threshold_boundary

on = {b["metric"]: b for b in threshold_boundary(res, dataclasses.replace(run.config.thresholds, named=named),
                                                 label="hallucinated" if run.has("hallucinated") else None)}
print(on["hallucination"]["text"])
at = res.index[res["hallucination"].sub(rule.value).abs().lt(1e-9)]
if len(at):
    display(evidence_table(res, "hallucination", rows=at[:5]))

# %% [markdown]
# ## Where it fails
# False positives: answers people judged faithful that the rule flags. False negatives: hallucinations it
# misses. The tables below are your data's own; the two usual causes to look for in them are a paraphrase whose
# claim words sit apart in the context (a false positive) and a wrong entity or relation with no number or date
# to check (a false negative).

# %%
from evalkit.decide.aggregate import disagreements

if y is not None:
    fp, fn = disagreements(lab, rule, "hallucinated")
    print(f"rule {rule}: false positives {len(fp)}, false negatives {len(fn)}")
    display(evidence_table(lab, "hallucination", rows=fp.index[:5]))
    display(evidence_table(lab, "hallucination", rows=fn.index[:8]))

# %% [markdown]
# ## Beside it: the learned grounding detector (`grounding_risk`)
# The seed score above is explainable but, measured on the public benchmarks in `../shared/bench`, it ranks
# hallucinated answers no better than answer length. `grounding_risk` aligns every answer sentence with its best
# evidence sentence, measures mismatches (numbers, dates, entities, negation and modality flips, rare novel
# words, relation changes, the seed's own anchors), adds the `support` model's P(supported) of the weakest claim,
# and combines them with gradient-boosted trees trained with grouped cross-validation
# (`benchmarks/train_grounding.py`), then calibrates the output to a probability. Its evidence: each sentence, its
# best evidence, the features that fired, and the claim the support model doubted most with the passage it checked.
# Below, the row of your data it rates riskiest, with the evidence saved when it was scored.

# %%
from evalkit.publish.lessons import quote
from evalkit.metrics.evidence import details_of

# the riskiest of your rows, with the evidence its scoring already saved (nothing is scored again here)
if run.has("grounding_risk") and res["grounding_risk"].notna().any():
    risky = res.loc[res["grounding_risk"].idxmax()]
    found = details_of(risky, "grounding_risk")
    print(f"id {risky['id']}: P(hallucinated) = {risky['grounding_risk']:.3f}")
    display(pd.DataFrame(found["sentences"])[["sentence", "evidence", "support", "numbers_missing_context",
                                              "entities_missing", "negation_flip"]])
    weakest = found.get("entailment") or {}
    if weakest.get("support") is not None:
        display(Markdown(f"The support model's weakest claim, P(supported) = {weakest['support']:.3f}: "
                         f"“{quote(weakest.get('claim'), 300)}”, checked against “{quote(weakest.get('passage'), 300)}”"))
    display(Markdown("\n".join(f"- {quote(reason, 300)}" for reason in found.get("fired") or ["nothing fired"])))
else:
    run.note("grounding_risk was not scored: add it to the experiment's metrics to see its evidence")

# %%
from evalkit.decide.calibrate import roc_auc

if y is not None:
    scored = [m for m in ("hallucination", "grounding_risk") if m in lab.columns]
    rows = []
    for m in scored:
        ok = lab[m].notna() & lab["hallucinated"].notna()
        rows.append({"metric": m, "ROC AUC vs hallucinated (95% CI)": str(
            roc_auc(lab.loc[ok, m].astype(float), lab.loc[ok, "hallucinated"].astype(bool), n_resamples=n_resamples,
                    seed=run.config.seed))})
    display(pd.DataFrame(rows))

# %% [markdown]
# ## Two verdict profiles
# The verdict reads `hallucination > 0.5` only under the **seed** profile (`profile: seed` in the config,
# `--profile seed` on `evalkit score`), the rules of the documents the project started from, kept exact. Its
# companion rule `relevance < 0.1` FAILs most correct short answers: "230 V." shares no word with "What voltage
# does it need?". The **evalkit** profile, the default, reads `unsupported_facts` instead, with
# `reference_conflict`, `answers_question` and `question_coverage`. That check converts units with pint (1,200 g = 1.2 kg) and reads
# number words. It counts a value only where the context gives it for the same item, so a price moved from one
# product to another is unsupported, and a relation only where a context puts its subject near its object. It also
# catches a "yes" that the context forbids. On the held-out third of `tests/golden/verdicts/`, it agrees with a
# careful reader on 79% of answers; the seed profile agrees on 49% (`benchmarks/bench_verdicts.py`). `evalkit.show`
# names the profile whose rules decided a row.

# %% [markdown]
# ## What this means

# %%
from IPython.display import Markdown
from evalkit.publish.lessons import metric_meaning, next_steps

display(Markdown(metric_meaning(run.metrics, ["hallucination", "grounding_risk", "novel_token_rate"], res)))
display(Markdown(next_steps("03")))
