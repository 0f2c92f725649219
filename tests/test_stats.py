"""Typed per-row sufficient statistics: integer columns beside the evidence, and micro values summed from them.

Expected values are hand counts; the interval is checked against scipy's bootstrap, an independent implementation.
"""
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import evalkit
from evalkit.decide.aggregate import micro_cell, ratio_interval, summary
from evalkit.metrics import REGISTRY
from evalkit.metrics.base import Metric, Score
from evalkit.metrics.stats import AnchorSupport, CheckPasses, KeywordHits, NovelTokens
from evalkit.run.runner import _check_score


def test_runner_writes_typed_count_columns_from_hand_counted_rows():
    df = pd.DataFrame({
        "question": ["What is the base premium for Territory 118?", "Who audits the fund?", "Is it?"],
        "answer": ["The premium is $604.", "KPMG audits the fund every year.", ""],
        "contexts": [["The base premium is $604."], ["The fund is audited by KPMG."], ["x"]],
    })
    out = evalkit.evaluate(df, metrics=["completeness", "novel_token_rate"])
    # keywords: [base, premium, territory, 118] -> premium found; [audits, fund] -> both; the third answer is
    # empty: undetermined in every metric (issue 25), so it has no counts, not 0 of 0
    assert out["completeness_matched"].tolist()[:2] == [1, 2]
    assert out["completeness_expected"].tolist()[:2] == [4, 2]
    assert out["completeness_matched"].isna().tolist() == [False, False, True]
    assert json.loads(out["completeness_details"][2])["reason"] == "empty answer"
    assert str(out["completeness_matched"].dtype) == "Int64"
    # tokens "the premium is 604" all in context -> 0 novel of 4; "kpmg audits the fund every year" vs context
    # "the fund is audited by kpmg": audits, every, year are new -> 3 of 6; the empty answer is undetermined
    assert out["novel_token_rate_novel"].tolist()[:2] == [0, 3]
    assert out["novel_token_rate_tokens"].tolist()[:2] == [4, 6]
    assert out["novel_token_rate_novel"].isna().tolist() == [False, False, True]
    # the counts are statistics, not evidence: the JSON column keeps what was found, not the tallies
    assert '"matched": ["premium"]' in out["completeness_details"][0] and '"expected"' not in out["completeness_details"][0]


def test_micro_sums_counts_where_mean_averages_rows():
    df = pd.DataFrame({"system": ["a", "a", "b", "b"],
                       "completeness": [1.0, 0.25, 0.5, 0.5],
                       "completeness_matched": [1, 1, 2, 1], "completeness_expected": [1, 4, 4, 2],
                       "hallucination": [0.75, 0.25, 0.0, 0.0],
                       "hallucination_supported": [1, 3, 2, 0], "hallucination_anchors": [4, 4, 2, 0]})
    s = summary(df, by="system", metrics=["completeness", "hallucination"], n_resamples=0).set_index(["system", "metric"])
    assert s.loc[("a", "completeness"), "mean"] == pytest.approx(0.625)
    assert s.loc[("a", "completeness"), "micro"] == pytest.approx(2 / 5)
    assert s.loc[("b", "completeness"), "micro"] == pytest.approx(3 / 6)
    # hallucination counts what is missing: 1 - supported / anchors
    assert s.loc[("a", "hallucination"), "micro"] == pytest.approx(1 - 4 / 8)
    assert s.loc[("b", "hallucination"), "micro"] == pytest.approx(0.0)


def test_micro_is_on_the_metric_scale_and_none_without_statistics():
    assert REGISTRY["relevance"].stats is None
    df = pd.DataFrame({"relevance": [0.5, 0.7]})
    assert micro_cell(df, "relevance") == {"micro": None, "micro_low": None, "micro_high": None}
    nothing_counted = pd.DataFrame({"completeness": [1.0], "completeness_matched": [0], "completeness_expected": [0]})
    assert micro_cell(nothing_counted, "completeness")["micro"] is None


def test_rows_without_statistics_are_left_out_of_the_micro_value():
    df = pd.DataFrame({"completeness": [1.0, None], "completeness_matched": pd.array([1, None], dtype="Int64"),
                       "completeness_expected": pd.array([2, None], dtype="Int64")})
    assert micro_cell(df, "completeness", n_resamples=0)["micro"] == pytest.approx(0.5)


def test_ratio_interval_matches_scipy_bootstrap():
    rng = np.random.default_rng(7)
    whole = rng.integers(1, 12, 300)
    part = rng.binomial(whole, 0.3)
    lo, hi = ratio_interval(part, whole, n_resamples=20000, seed=1)
    ref = sps.bootstrap((part, whole), lambda p, w, axis=-1: p.sum(axis=axis) / w.sum(axis=axis), paired=True,
                        vectorized=True, n_resamples=20000, method="percentile", random_state=2).confidence_interval
    assert lo == pytest.approx(ref.low, abs=0.006) and hi == pytest.approx(ref.high, abs=0.006)
    assert lo < part.sum() / whole.sum() < hi


def test_bootstrap_holds_a_bounded_number_of_indices_and_gives_the_same_interval(monkeypatch):
    # memory flat in the row count: resamples are drawn in smaller batches when rows are many; the generator gives
    # the same indices however the draws are cut, so the interval does not change
    import evalkit.decide.aggregate as agg

    x = np.random.default_rng(3).random(5000)
    whole = np.random.default_rng(4).integers(1, 9, 5000)
    before = agg.mean_interval(x, n_resamples=400, seed=5), agg.ratio_interval(x > 0.5, whole, n_resamples=400, seed=5)
    shapes = []
    real = np.random.default_rng

    class Recording:
        def __init__(self, seed):
            self.rng = real(seed)

        def integers(self, lo, hi, size):
            shapes.append(size)
            return self.rng.integers(lo, hi, size)

    monkeypatch.setattr(np.random, "default_rng", Recording)
    monkeypatch.setattr(agg, "BOOTSTRAP_CELLS", 7 * 5000 + 1)
    after = agg.mean_interval(x, n_resamples=400, seed=5), agg.ratio_interval(x > 0.5, whole, n_resamples=400, seed=5)
    assert after == before
    assert max(r for r, _ in shapes) == 7 and sum(r for r, _ in shapes) == 800


def test_ratio_interval_collapses_when_every_row_has_the_same_share():
    assert ratio_interval([1, 2, 5], [2, 4, 10], n_resamples=300) == (0.5, 0.5)
    assert ratio_interval([1], [2]) == (None, None)


@pytest.mark.parametrize("make, message", [
    (lambda: KeywordHits(matched=5, expected=4), "matched=5 is more than expected=4"),
    (lambda: AnchorSupport(supported=-1, anchors=2), "supported=-1 is not a non-negative integer"),
    (lambda: CheckPasses(passed=True, checks=1), "passed=True is not a non-negative integer"),
    (lambda: NovelTokens(novel=1.0, tokens=2), "novel=1.0 is not a non-negative integer"),
])
def test_statistics_refuse_impossible_counts(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_a_metric_returning_statistics_of_another_type_is_a_bug_not_a_number():
    m = Metric("m", str, (), "higher", (0.0, 1.0), stats=KeywordHits)
    assert _check_score(m, Score(0.5, {}, KeywordHits(matched=1, expected=2))).value == 0.5
    assert _check_score(m, Score(None, {"reason": "x"})).value is None  # undetermined rows carry none
    with pytest.raises(TypeError, match="declares KeywordHits"):
        _check_score(m, Score(0.5, {}, AnchorSupport(supported=1, anchors=2)))
    with pytest.raises(TypeError, match="declares None"):
        _check_score(Metric("n", str, (), "higher", (0.0, 1.0)), Score(0.5, {}, KeywordHits(matched=1, expected=2)))


def test_every_declared_statistic_reproduces_its_row_value():
    """value == part / whole (or 1 - that) wherever something was counted: the statistics are the metric's own."""
    df = pd.DataFrame({"question": ["What is the premium for Territory 118 in 2023?"],
                       "answer": ["The premium for Territory 118 was $640 in 2024."],
                       "contexts": [["Territory 118 pays a base premium of $604 (2023)."]],
                       "ground_truth": ["The 2023 premium for Territory 118 is $604."]})
    out = evalkit.evaluate(df, metrics=[m for m, spec in REGISTRY.items()
                                        if spec.stats is not None and m != "fact_checks"])
    for name, spec in REGISTRY.items():
        if spec.stats is None or name not in out:
            continue
        part, whole = (int(out[c][0]) for c in spec.stats.columns(name))
        share = part / whole
        expected = 1 - share if spec.stats.COMPLEMENT else share
        if name == "hallucination":  # the drift floor can only raise it
            assert out[name][0] >= expected - 1e-12
        else:
            assert out[name][0] == pytest.approx(expected), name
