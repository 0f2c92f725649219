"""The grounding detector: each feature on hand-made examples, the shipped model, and its reproducibility."""
import subprocess
import sys

import numpy as np
import pytest

from evalkit.metrics.anchors import default_hedges
from evalkit.metrics.grounding import (FEATURES, GROUPS, Evidence, answer_features, grounding_score, load_model,
                                       predict_proba, rarity, raw_score)

from ..conftest import BENCH, ROOT

CTX = ("The base premium for Territory 118 is $604 per year. Dr. Lena Ortiz became chief executive on June 12, 2023. "
       "Aster Dynamics acquired Corvel Sensors in November 2023. The study was not blinded.")


def feats(nlp, answer, context=CTX):
    ev = Evidence.build(context, nlp.parse_contexts([context])[0])
    return answer_features(answer, nlp.parse_answers([answer])[0], ev, default_hedges())


def test_faithful_answer_fires_nothing(nlp):
    f, per = feats(nlp, "The base premium for Territory 118 is $604 per year.")
    assert per[0]["support"] == 1.0 and per[0]["evidence"].startswith("The base premium")
    for k in ("numbers_missing_context", "dates_missing_context", "entities_missing_context", "negation_flips",
              "modality_flips", "relation_mismatch"):
        assert f[k] == 0, k


def test_alignment_picks_the_best_evidence_sentence(nlp):
    _, per = feats(nlp, "Lena Ortiz became chief executive in 2023.")
    assert per[0]["evidence"].startswith("Dr. Lena Ortiz")


def test_numbers_and_dates(nlp):
    f, per = feats(nlp, "The base premium for Territory 118 is $640 per year since June 12, 2021.")
    assert f["numbers_missing_context"] >= 1 and f["dates_missing_context"] == 1


def test_new_entities_and_proper_nouns(nlp):
    f, per = feats(nlp, "Paul Brandt became chief executive of Aster Dynamics.")
    assert "Paul Brandt" in per[0]["entities_missing"] and f["propn_missing_context"] >= 2


def test_negation_and_modality_flips(nlp):
    assert feats(nlp, "The study was blinded.")[0]["negation_flips"] == 1
    assert feats(nlp, "The study was not blinded.")[0]["negation_flips"] == 0
    assert feats(nlp, "The study might not be blinded.")[0]["modality_flips"] == 1


def test_relation_mismatch(nlp):
    # Aster Dynamics and Corvel Sensors co-occur in the context, but the relation is "acquired", not "sued"
    f, _ = feats(nlp, "Aster Dynamics sued Corvel Sensors.")
    assert f["relation_mismatch"] == 1 and f["claims_unsupported"] == 0
    f, _ = feats(nlp, "Aster Dynamics acquired Corvel Sensors.")
    assert f["relation_mismatch"] == 0


def test_rarity_weighting(nlp):
    assert rarity("the") < 0.1 < rarity("premium") < rarity("kubrick") < rarity("zzqxv") == 1.0
    rare, _ = feats(nlp, "The base premium for Territory 118 is $604 per year, said Zebulon Quaxworth.")
    common, _ = feats(nlp, "The base premium for Territory 118 is $604 per year, he said then.")
    assert rare["novel_rarity_max"] > common["novel_rarity_max"]


def test_length_and_share_features(nlp):
    f, per = feats(nlp, "The premium is $604. Bananas are yellow and cheap in winter.")
    assert f["n_sentences"] == 2 and f["unsupported_sentence_share"] == 0.5
    assert f["length_ratio"] == pytest.approx(len("The premium is 604 Bananas are yellow and cheap in winter".split())
                                              / len(CTX.replace(",", " ").split()), rel=0.2)


def test_model_file_metadata():
    m = load_model()
    assert m["features"] == list(FEATURES) and set().union(*GROUPS.values()) == set(FEATURES)
    td = m["training_data"]
    assert len(td["sha256"]) == 64 and set(td["files"]) == {"halueval_qa_dev.jsonl", "halueval_dialogue_dev.jsonl",
                                                            "halueval_summarization_dev.jsonl", "summedits_dev.jsonl"}
    assert m["seed"] == 0 and m["calibration"]["a"] > 0 and len(m["trees"]) == m["params"]["max_iter"]


def test_probability_is_calibrated_logodds():
    m = load_model()
    x = {k: 0.0 for k in FEATURES}
    p = predict_proba([x], m)[0]
    z = raw_score(np.zeros((1, len(FEATURES))), m)[0]
    assert p == pytest.approx(1 / (1 + np.exp(-(m["calibration"]["a"] * z + m["calibration"]["b"]))))


def test_metric_output_and_empty_policy():
    s = grounding_score("The premium is $640 and Paul Brandt approved it.", [CTX])
    assert 0 <= s.value <= 1 and any("not in the context" in f for f in s.details["fired"])
    good = grounding_score("The base premium for Territory 118 is $604 per year.", [CTX])
    assert good.value < s.value and good.details["fired"] == []
    assert grounding_score("", [CTX]).value is None and grounding_score("x", []).value is None


def test_beats_seed_on_the_sample(sample_results):
    from sklearn.metrics import roc_auc_score

    y = sample_results["hallucinated"].astype(bool)
    assert roc_auc_score(y, sample_results["grounding"].astype(float)) > 0.8


@pytest.mark.skipif(not BENCH.exists(), reason="../shared/bench not present")
def test_training_script_reproduces_the_shipped_model():
    r = subprocess.run([sys.executable, "train_grounding.py", "--check", "--resamples", "1000"], cwd=ROOT / "benchmarks",
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "reproduced byte for byte: True" in r.stdout


def test_embedding_alignment_option(encoder):
    ctx = ["The quarterly dividend rose to $0.13 per share. The weather in Houston was mild."]
    lex = grounding_score("The payout per share went up to $0.13.", ctx)
    emb = grounding_score("The payout per share went up to $0.13.", ctx, align="embedding")
    assert emb.details["align"] == "embedding" and lex.details["align"] == "lexical"
    assert emb.details["sentences"][0]["evidence"].startswith("The quarterly dividend")
    with pytest.raises(ValueError, match="align must be"):
        grounding_score("x", ctx, align="semantic")
