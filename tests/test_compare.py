import numpy as np
import pytest

from evalkit.decide.compare import compare_systems, mcnemar, paired_bootstrap


def test_paired_bootstrap_constant_shift():
    a = np.linspace(0, 1, 50)
    diff, lo, hi, p = paired_bootstrap(a, a + 0.1, n_resamples=500)
    assert diff == pytest.approx(0.1) and lo == pytest.approx(0.1) and hi == pytest.approx(0.1) and p < 0.01


def test_paired_bootstrap_seeded():
    rng = np.random.default_rng(0)
    a, b = rng.random(40), rng.random(40)
    assert paired_bootstrap(a, b, seed=3) == paired_bootstrap(a, b, seed=3)
    # the seed is used: another seed resamples other pairs, so the interval moves (the point estimate does not)
    other = paired_bootstrap(a, b, seed=4)
    assert other[0] == paired_bootstrap(a, b, seed=3)[0] and other[1:3] != paired_bootstrap(a, b, seed=3)[1:3]


def test_mcnemar_exact():
    # 8 discordant pairs, all favouring a: two-sided exact binomial p = 2 * 0.5^8
    r = mcnemar([True] * 8 + [True, False], [False] * 8 + [True, False])
    assert (r["only_a"], r["only_b"], r["both"], r["neither"]) == (8, 0, 1, 1)
    assert r["p_value"] == pytest.approx(2 * 0.5 ** 8)


def test_compare_on_sample(sample_results):
    t = compare_systems(sample_results, ["hallucination", "number_match"], "rag-a", "rag-b", binary=["correct"],
                        n_resamples=300)
    h = t.set_index("metric").loc["hallucination"]
    assert h["n_pairs"] == 42 and h["low"] > 0  # rag-b hallucinates more, CI excludes 0
    assert t.set_index("metric").loc["number_match", "n_pairs"] < 42  # undetermined rows are not paired
    c = t.set_index("metric").loc["correct"]
    assert c["only_a"] > c["only_b"] and c["p_mcnemar"] < 0.001


def test_compare_by_question_type(sample_results):
    t = compare_systems(sample_results, ["hallucination"], "rag-a", "rag-b", by="question_type", n_resamples=100)
    assert set(t["question_type"]) == set(sample_results["question_type"]) and t["n_pairs"].sum() == 42


def test_compare_errors(sample_results):
    with pytest.raises(ValueError, match="system 'nope' not in the data"):
        compare_systems(sample_results, ["hallucination"], "rag-a", "nope")


def test_holm_by_hand():
    from evalkit.decide.compare import holm

    # m = 3: sorted p 0.01, 0.02, 0.04 -> 0.03, max(0.03, 0.04) = 0.04, max(0.04, 0.04) = 0.04
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm([None, 0.2]) == [None, pytest.approx(0.2)]


def test_small_groups_are_flagged_not_findings(sample_results):
    t = compare_systems(sample_results, ["hallucination"], "rag-a", "rag-b", by="question_type", n_resamples=100,
                        min_pairs=11)
    counts = sample_results[sample_results["system"] == "rag-a"]["question_type"].value_counts()
    for _, row in t.iterrows():
        assert row["n_pairs"] == counts[row["question_type"]]
        assert row["small"] == (counts[row["question_type"]] < 11)
        assert ("not findings" in row["note"]) == row["small"]


def test_pairing_needs_unique_keys_and_says_so():
    import pandas as pd

    df = pd.DataFrame({"id": ["q1", "q1", "q1"], "system": ["a", "a", "b"], "s": [0.1, 0.2, 0.3]})
    with pytest.raises(ValueError, match=r"system 'a' has 1 repeated id value\(s\), e.g. 'q1'"):
        compare_systems(df, ["s"], "a", "b")


def test_binary_columns_read_with_positive():
    import pandas as pd

    # a Likert column compared as "score >= 4": a has 2 of 6 (q2, q3), b 4 of 6 (q0..q3); only b on q0, q1
    df = pd.DataFrame({"id": [f"q{i}" for i in range(6)] * 2, "system": ["a"] * 6 + ["b"] * 6,
                       "lik": [1, 2, 4, 5, 2, 1, 4, 4, 5, 5, 3, 1]})
    t = compare_systems(df, [], "a", "b", binary=["lik"], positive=">=4", n_resamples=100, min_pairs=2)
    r = t.set_index("metric").loc["lik"]
    assert (r["mean_a"], r["mean_b"], r["only_a"], r["only_b"]) == (pytest.approx(2 / 6), pytest.approx(4 / 6), 0, 2)
    assert r["p_mcnemar"] == pytest.approx(0.5)  # 2 discordant pairs, both for b: 2 * 0.5^2
    from evalkit.decide.calibrate import CalibrationError

    with pytest.raises(CalibrationError, match="column 'lik' is not a binary label"):
        compare_systems(df, [], "a", "b", binary=["lik"], n_resamples=10)
