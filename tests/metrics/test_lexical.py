import random

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity

from evalkit.metrics.base import Score
from evalkit.text import AnswerDecision
from evalkit.metrics.lexical import completeness, question_keywords, relevance, relevance_batch


def sklearn_pair_cosine(q, r):
    try:
        m = TfidfVectorizer(stop_words="english").fit_transform([q, r])
    except ValueError:  # both empty after stop words
        return 0.0
    return float(cosine_similarity(m[0], m[1])[0, 0])


def test_cosine_equals_sklearn_on_pair_random():
    rng = random.Random(0)
    words = "premium base rate territory the of is a 118 604 increase rule policy coverage claim what".split()
    qs = [" ".join(rng.choices(words, k=rng.randint(1, 10))) for _ in range(200)]
    rs = [" ".join(rng.choices(words, k=rng.randint(1, 25))) for _ in range(200)]
    res = relevance_batch({"question": qs, "answer": rs})
    for q, r, s in zip(qs, rs, res):
        assert abs(s.details["cosine"] - round(sklearn_pair_cosine(q, r), 6)) < 1e-6
        # the score uses the unrounded cosine: recompute from the parts
        assert abs(s.value - (sklearn_pair_cosine(q, r) + s.details["jaccard"]) / 2) < 1e-6


def test_cosine_equals_sklearn_on_sample_to_1e9(sample_df):
    from evalkit.metrics.lexical import _pair_cosines

    qs = sample_df["question"].tolist()
    rs = [a or "" for a in sample_df["answer"]]
    ours = _pair_cosines(qs, rs)
    ref = np.array([sklearn_pair_cosine(q, r) for q, r in zip(qs, rs)])
    assert np.max(np.abs(ours - ref)) < 1e-9


def test_batch_equals_per_row(sample_df):
    qs, rs = sample_df["question"].tolist(), sample_df["answer"].tolist()
    batch = relevance_batch({"question": qs, "answer": rs})
    for q, r, b in zip(qs, rs, batch):
        assert relevance(q, r).value == pytest.approx(b.value, abs=1e-12)


def test_worked_example():
    # Q tokens {what, is, the, base, premium}; R tokens {the, base, premium, is, 604}
    # Jaccard = 4 / 6. TF-IDF after stop words: Q = {base, premium}, R = {base, premium, 604}
    # idf(base)=idf(premium)=1, idf(604)=1+ln(1.5); cos = 2 / (sqrt(2) * sqrt(2 + (1+ln 1.5)^2))
    s = relevance("What is the base premium?", "The base premium is $604.")
    c = 2 / (np.sqrt(2) * np.sqrt(2 + (1 + np.log(1.5)) ** 2))
    assert s.details["jaccard"] == pytest.approx(4 / 6, abs=1e-6)
    assert s.value == pytest.approx((c + 4 / 6) / 2, abs=1e-6)


@pytest.mark.parametrize("q,r,why", [("", "An answer", "empty question"), (None, "x", "empty question"),
                                     ("   ", "x", "empty question")])
def test_empty_inputs_score_zero_with_reason(q, r, why):
    s = relevance(q, r)
    assert s.value == 0.0 and s.details["reason"] == why


@pytest.mark.parametrize("r", ["", None, "   "])
def test_empty_answer_is_undetermined(r):
    # issue 25: an empty answer is a failure of the system, not relevance 0 (was 0.0 "empty answer")
    assert relevance("A question?", r) == Score(None, {"reason": "empty answer"})
    assert completeness("What is the premium?", r) == Score(None, {"reason": "empty answer"})


def test_only_stop_words_gives_zero_cosine_not_error():
    s = relevance("what is it", "it is what")
    assert s.details["cosine"] == 0.0 and s.details["jaccard"] == 1.0 and s.value == 0.5


def test_dataset_idf_equals_sklearn_fit_on_all():
    qs = ["What is the premium?", "Who is the CEO?", "What river?"]
    rs = ["The premium is $604.", "The CEO is Lena Ortiz.", "The Tessel River."]
    res = relevance_batch({"question": qs, "answer": rs}, {"idf_scope": "dataset"})
    tv = TfidfVectorizer(stop_words="english").fit(qs + rs)
    for q, r, s in zip(qs, rs, res):
        ref = cosine_similarity(tv.transform([q]), tv.transform([r]))[0, 0]
        assert s.details["cosine"] == pytest.approx(ref, abs=1e-6)


def test_bad_idf_scope():
    with pytest.raises(ValueError, match="idf_scope"):
        relevance("q", "r", idf_scope="corpus")


def test_unicode_and_huge_inputs():
    # Jaccard by hand: {qu'est-ce, que, la, prime, à, zürich} vs {la, prime, à, zürich, est, 604} (€ is no word):
    # 4 shared of 8 -> 0.5; the cosine from scikit-learn on the pair
    q, r = "Qu'est-ce que la prime à Zürich?", "La prime à Zürich est 604 €."
    # issue 25: a French answer is undetermined for this English-only metric ...
    # (which Romance language four function words are, lingua cannot tell: "la prime à est" reads as pt, it, fr
    # alike; that it is not English is what makes the metric undetermined)
    s = relevance(q, r)
    assert s.value is None and s.details["reason"].startswith("not English") and s.details["language"] != "en"
    # ... and the tokenizer's arithmetic, when the row decision says English, is unchanged
    s = relevance(q, r, decision=AnswerDecision(False))
    assert s.details["jaccard"] == 0.5
    assert s.value == pytest.approx((sklearn_pair_cosine(q, r) + 0.5) / 2, abs=1e-12)
    # 50,000 repeats: only "premium" survives the stop words on both sides (cosine 1); Jaccard 1 of
    # {what, is, the, premium} -> (1 + 0.25) / 2
    assert relevance("What is the premium?", "premium " * 50_000).value == pytest.approx(0.625, abs=1e-12)


def test_completeness_worked_example():
    s = completeness("What is the base premium for Territory 118?", "The premium is $604.")
    # keywords: base, premium, territory, 118 -> only 'premium' present
    assert s.value == 0.25
    assert s.details["missing"] == ("base", "territory", "118")


def test_completeness_drops_non_alphanumeric_tokens():
    assert question_keywords("Does Rule C-1 cost $1,200?") == ["does", "rule", "cost"]


def test_completeness_no_keywords_is_one():
    s = completeness("What is it?", "It is blue.")
    assert s.value == 1.0 and "no keywords" in s.details["reason"]


def test_completeness_empty_answer_is_undetermined():
    # issue 25: an empty answer is a failure of the system, undetermined in every metric (was 0.0)
    assert completeness("Which territory?", None) == Score(None, {"reason": "empty answer"})
