import json

import pandas as pd
import pytest

import evalkit
from evalkit.metrics import REGISTRY, Metric, Score
from evalkit.runner import evaluate


def _fragile(answer):
    """A real metric that cannot score one kind of input (used to exercise per-row errors)."""
    if "boom" in (answer or ""):
        raise ValueError("cannot score an answer containing 'boom'")
    return Score(float(len(answer or "") > 3), {})


@pytest.fixture
def fragile_metric(monkeypatch):
    m = Metric("fragile", _fragile, needs=("answer",), direction="higher", range=(0.0, 1.0))
    monkeypatch.setitem(REGISTRY, "fragile", m)
    return m


DF = pd.DataFrame({"id": ["r1", "r2", "r3"], "question": ["What is X?", "What is Y?", "What is Z?"],
                   "answer": ["X is 5.", "boom", None], "contexts": [["X is 5."], ["Y is 6."], []]})


def test_error_column_records_failing_row(fragile_metric):
    out = evaluate(DF, ["fragile", "relevance"], progress=False)
    assert len(out) == 3
    assert out["error"].tolist()[0] is None and out["error"].tolist()[2] is None
    assert out.loc[1, "error"] == "fragile: ValueError: cannot score an answer containing 'boom'"
    assert pd.isna(out.loc[1, "fragile"]) and out.loc[0, "fragile"] == 1.0
    assert out.loc[1, "relevance"] >= 0  # other metrics still score the row


def test_on_error_raise_names_row(fragile_metric):
    with pytest.raises(ValueError, match=r"metric 'fragile' failed on row id='r2'"):
        evaluate(DF, ["fragile"], on_error="raise", progress=False)


def test_out_of_range_value_is_an_error(monkeypatch):
    monkeypatch.setitem(REGISTRY, "broken", Metric("broken", lambda answer: Score(1.5), needs=("answer",),
                                                   direction="higher", range=(0.0, 1.0)))
    out = evaluate(DF, ["broken"], progress=False)
    assert out["broken"].isna().all()
    assert out["error"].str.contains("outside its range").all()


def test_nan_value_is_an_error_not_a_silent_nan(monkeypatch):
    monkeypatch.setitem(REGISTRY, "nanny", Metric("nanny", lambda answer: Score(float("nan")), needs=("answer",),
                                                  direction="higher", range=(0.0, 1.0)))
    out = evaluate(DF, ["nanny"], progress=False)
    assert out["error"].str.contains("never NaN").all()


def test_missing_input_column_is_named():
    with pytest.raises(evalkit.DataError, match=r"metric 'exact_match' needs column 'ground_truth'"):
        evaluate(DF, ["exact_match"], progress=False)


def test_default_metrics_skip_absent_inputs():
    out = evaluate(DF, progress=False)
    assert "relevance" in out.columns and "exact_match" not in out.columns


def test_sample_results_shape_and_verdict(sample_results, sample_df):
    assert len(sample_results) == len(sample_df)
    assert sample_results["id"].tolist() == sample_df["id"].tolist()
    assert set(sample_results["verdict"]) <= {"PASS", "WARN", "FAIL", "UNDETERMINED"}
    assert sample_results["error"].isna().all()
    d = json.loads(sample_results.loc[0, "hallucination_details"])
    assert {"anchors", "supported", "total", "s_claims", "ngram_overlap", "p_drift"} <= set(d)
    assert sample_results["fact_checks"].notna().sum() >= 10


def test_deterministic(sample_df):
    a = evaluate(sample_df, ["relevance", "hallucination", "keyword_coverage"], progress=False)
    b = evaluate(sample_df, ["relevance", "hallucination", "keyword_coverage"], progress=False)
    pd.testing.assert_frame_equal(a, b)


def test_unknown_metric_param_is_rejected():
    with pytest.raises(ValueError, match=r"metric_params.relevance: unknown parameter"):
        evaluate(DF, ["relevance"], {"metric_params": {"relevance": {"idf": "x"}}}, progress=False)


def test_dataset_idf_option_runs_on_whole_column():
    out = evaluate(DF, ["relevance"], {"metric_params": {"relevance": {"idf_scope": "dataset"}}}, progress=False)
    assert json.loads(out.loc[0, "relevance_details"])["idf_scope"] == "dataset"


def test_progress_bar_does_not_change_results(capsys):
    a = evaluate(DF, ["relevance"], progress=True)
    b = evaluate(DF, ["relevance"], progress=False)
    pd.testing.assert_frame_equal(a, b)
    assert "evalkit" in capsys.readouterr().err


def test_missing_spacy_pipeline_recorded_with_install_hint():
    out = evaluate(DF, ["hallucination"], {"spacy_model": "en_core_web_nonexistent"}, progress=False)
    assert out["error"].str.contains("is not installed").all()
    assert out["hallucination"].isna().all()
