"""Judge variance (evalkit/decide/judge_variance.py): hand-computed numbers, an independent Krippendorff's alpha, an
independent bootstrap, and judge.repeats end to end against the scripted judge server, deterministic and noisy."""
import json
import random

import numpy as np
import pandas as pd
import pytest

import evalkit
from evalkit.decide.judge_variance import (judge_variance, judge_variance_share, krippendorff_alpha_interval, repeat_matrix,
                                    two_level_bootstrap)
from evalkit.testing import ScriptedJudgeServer

JUDGED = ["faithfulness", "context_precision"]


# -- the arithmetic ---------------------------------------------------------------------------------------------
def test_share_and_alpha_by_hand():
    v = np.array([[1.0, 2.0], [3.0, 3.0]])
    # pooled mean 2.25; SS_total = 1.5625 + 0.0625 + 0.5625 + 0.5625 = 2.75; SS_within = 0.25 + 0.25 = 0.5
    assert judge_variance_share(v) == pytest.approx(0.5 / 2.75)
    # ordered pairs: D_o = (1 + 1) / 1 / 4 = 0.5; D_e = 2 * (1+4+4+1+1+0) / (4 * 3) = 22 / 12
    assert krippendorff_alpha_interval(v) == pytest.approx(1 - 0.5 / (22 / 12))


def test_alpha_agrees_with_the_krippendorff_package():
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(3)
    v = rng.normal(size=(30, 4)) + rng.normal(size=(30, 1)) * 2  # a row effect plus repeat noise
    v[rng.random(v.shape) < 0.15] = np.nan  # missing repeats, and some rows with fewer than two values
    expected = krippendorff.alpha(reliability_data=v.T, level_of_measurement="interval")  # coders x units
    assert krippendorff_alpha_interval(v) == pytest.approx(expected, rel=1e-9)


def test_undefined_is_none_not_nan():
    assert judge_variance_share(np.array([[1.0], [2.0]])) is None  # no row with two repeats
    assert krippendorff_alpha_interval(np.array([[2.0, 2.0], [2.0, 2.0]])) is None  # no variation at all
    assert judge_variance_share(np.array([[2.0, 2.0], [2.0, 2.0]])) is None


def test_two_level_bootstrap_agrees_with_a_plain_loop():
    """An independent implementation (Python's random, a loop per resample) lands on the same interval, up to
    the resampling error of 4000 draws."""
    rng = np.random.default_rng(0)
    v = rng.integers(0, 2, size=(40, 3)).astype(float) * 100
    v[5, 2] = np.nan
    (lo, hi), _ = two_level_bootstrap(v, n_resamples=4000, seed=1)
    r = random.Random(7)
    rows = [[x for x in row if not np.isnan(x)] for row in v]
    stats = []
    for _ in range(4000):
        drawn = [rows[r.randrange(len(rows))] for _ in rows]
        stats.append(np.mean([np.mean([row[r.randrange(len(row))] for _ in row]) for row in drawn]))
    assert lo == pytest.approx(np.quantile(stats, 0.025), abs=2.5)
    assert hi == pytest.approx(np.quantile(stats, 0.975), abs=2.5)


def test_rows_only_interval_equals_two_level_when_repeats_agree():
    v = np.repeat(np.arange(20.0)[:, None], 3, axis=1)
    two, rows_only = two_level_bootstrap(v, n_resamples=500, seed=4)
    assert two == rows_only and two[0] < two[1]


def test_matrix_errors_name_row_and_column():
    df = pd.DataFrame({"m": ["CORRECT"], "m_details": [json.dumps({"repeats": ["CORRECT", "WRONG"]})]}, index=["r7"])
    with pytest.raises(ValueError, match=r"row 'r7', column m_details: repeat value 'CORRECT' is not a number"):
        repeat_matrix(df, "m")
    with pytest.raises(KeyError, match="no column 'x_details'"):
        repeat_matrix(df, "x")


def test_rows_without_repeats_and_failed_rows():
    df = pd.DataFrame({"m": [2.0, None, 4.0], "m_details": ['{"a": 1}', None, '{"repeats": [3, 5]}']})
    assert repeat_matrix(df, "m").tolist()[0] == [2.0, pytest.approx(np.nan, nan_ok=True)]
    t = judge_variance(df, ["m"], n_resamples=100).iloc[0]
    assert (t["rows"], t["undetermined_rows"], t["mean"]) == (2, 1, 3.0)


# -- judge.repeats end to end -------------------------------------------------------------------------------------
def _scored(sample_df, tmp_path, noise, repeats=3):
    rows = sample_df.head(16)
    with ScriptedJudgeServer(noise=noise) as srv:
        cfg = {"judge": {"base_url": srv.url, "model": "scripted", "cache_path": str(tmp_path / f"n{noise}.sqlite"),
                         "repeats": repeats, "temperature": 0.7}}
        out = evalkit.evaluate(rows, JUDGED, cfg, progress=False)
        calls = srv.requests
        again = evalkit.evaluate(rows, JUDGED, cfg, progress=False)
        assert srv.requests == calls, "a re-run with repeats must come from the cache"
        seeds = dict(srv.seeds)
    for m in JUDGED:
        assert again[m].tolist() == out[m].tolist()
    return out, seeds


@pytest.fixture(scope="module")
def deterministic(sample_df, tmp_path_factory):
    return _scored(sample_df, tmp_path_factory.mktemp("det"), 0.0)


@pytest.fixture(scope="module")
def noisy(sample_df, tmp_path_factory):
    return _scored(sample_df, tmp_path_factory.mktemp("noisy"), 0.3)


def test_each_repeat_is_kept_and_the_value_is_their_mean(noisy):
    out, seeds = noisy
    assert out["error"].isna().all(), out["error"].dropna().tolist()
    assert set(seeds) == {0, 1, 2}  # repeat r sends seed 0 + r
    for m in JUDGED:
        for value, details in zip(out[m], out[f"{m}_details"]):
            reps = json.loads(details)["repeats"]
            assert len(reps) == 3 and value == pytest.approx(np.mean([r for r in reps if r is not None]))
    assert out.attrs["evalkit"]["judge"]["signature"] == "openai-chat:scripted@t0.7,rf=json_schema,k=3,seed=0"


def test_deterministic_judge_collapses(deterministic):
    t = judge_variance(deterministic[0], n_resamples=1000).set_index("metric")
    assert sorted(t.index) == sorted(JUDGED)
    for m in JUDGED:
        assert t.loc[m, "judge_share"] == 0.0 and t.loc[m, "alpha"] == 1.0
        # no judge noise: the interval is the rows-only one, drawn from the same rows
        assert (t.loc[m, "ci_low"], t.loc[m, "ci_high"]) == (t.loc[m, "rows_ci_low"], t.loc[m, "rows_ci_high"])
        assert t.loc[m, "mean"] == pytest.approx(deterministic[0][m].mean())


def _judge_widening(t, m):
    """How much wider the two-level interval is than the rows-only one drawn from the same rows."""
    return (t.loc[m, "ci_high"] - t.loc[m, "ci_low"]) - (t.loc[m, "rows_ci_high"] - t.loc[m, "rows_ci_low"])


def test_noisy_judge_widens_the_interval(deterministic, noisy):
    # the widths of two runs are not compared directly: flipped labels pull rows towards the middle, which
    # narrows the spread between rows; what the judge adds is the two-level width over the rows-only width
    quiet = judge_variance(deterministic[0], n_resamples=1000).set_index("metric")
    loud = judge_variance(noisy[0], n_resamples=1000).set_index("metric")
    for m in JUDGED:
        assert 0 < loud.loc[m, "judge_share"] < 1 and loud.loc[m, "alpha"] < 1
        assert _judge_widening(loud, m) > 0 == _judge_widening(quiet, m)
