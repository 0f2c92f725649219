"""ragas' own metrics (ragas 0.4.3, the `ragas` extra) through evalkit.metrics.ragas, pointed at the scripted
judge server."""
import asyncio
import json

import nbformat
import pandas as pd
import pytest

import evalkit
from evalkit.metrics.ragas import run_sync
from evalkit.testing import ScriptedJudgeServer

from ..conftest import ROOT

pytest.importorskip("ragas")

RAGAS = ["ragas_faithfulness", "ragas_context_precision", "ragas_context_recall"]


@pytest.fixture(scope="module")
def ragas_results(judge_server, sample_df):
    cfg = {"judge": {"base_url": judge_server.url, "model": "scripted", "cache_path": None}}
    df = sample_df.head(10).copy()
    df.loc[9, "answer"] = ""  # ragas refuses an empty response: a recorded row error, not a silent NaN
    return evalkit.evaluate(df, RAGAS + ["faithfulness", "context_recall"], cfg, progress=False)


def test_ragas_numbers_agree_with_evalkit_on_the_same_labels(ragas_results):
    r = ragas_results.iloc[:9]
    # the scripted server labels ragas' and evalkit's prompts with the same rules, so the two
    # implementations' arithmetic must agree
    assert (r["ragas_faithfulness"].astype(float) * 100).tolist() == r["faithfulness"].astype(float).tolist()
    assert (r["ragas_context_recall"].astype(float) * 100).tolist() == r["context_recall"].astype(float).tolist()
    assert r["ragas_context_precision"].between(0, 1).all()


def test_ragas_row_error_is_recorded(ragas_results):
    last = ragas_results.iloc[9]
    assert pd.isna(last["ragas_faithfulness"]) and "ragas_faithfulness: ValueError" in last["error"]
    assert ragas_results.iloc[:9]["error"].isna().all()


def test_ragas_client_is_in_the_signature(ragas_results):
    from importlib.metadata import version

    sig = ragas_results.attrs["evalkit"]["signature"]
    assert sig["resources"]["ragas"] == f"ragas-{version('ragas')}:evalkit-judge:scripted@t0"
    assert sig["resources"]["judge"] == "openai-chat:scripted@t0,rf=json_schema"


def test_ragas_calls_are_counted_by_the_judge_client(ragas_results):
    usage = ragas_results.attrs["evalkit"]["judge"]["usage"]
    for m in RAGAS:  # ragas' calls now go through evalkit's client: they are counted there, per metric
        assert usage[m]["http_calls"] > 0 and usage[m]["prompt_tokens"] > 0, usage.get(m)
        assert usage[m]["valid_json_rate"] == 1.0


def test_ragas_rerun_replays_the_cache_with_zero_calls(tmp_path, sample_df):
    """A second run of ragas' metrics on the same rows, same cache file: no HTTP call, the same numbers."""
    with ScriptedJudgeServer() as srv:
        cfg = {"judge": {"base_url": srv.url, "model": "scripted", "cache_path": str(tmp_path / "judge.sqlite")}}
        first = evalkit.evaluate(sample_df.head(6), RAGAS, cfg, progress=False)
        calls_first = srv.requests
        second = evalkit.evaluate(sample_df.head(6), RAGAS, cfg, progress=False)
        assert srv.requests == calls_first > 0
    assert first["error"].isna().all(), first["error"].dropna().tolist()
    for m in RAGAS:
        assert second[m].astype(float).tolist() == first[m].astype(float).tolist()
        u = second.attrs["evalkit"]["judge"]["usage"][m]
        assert u.get("http_calls", 0) == 0 and u["cache_hits"] > 0


def test_ragas_requests_carry_the_response_models_schema(sample_df):
    """Each ragas call is a structured-output request with the JSON schema of the pydantic model ragas asked
    for (strict: every property required, no others)."""
    from ragas.metrics.collections.faithfulness.util import StatementGeneratorOutput

    from evalkit.judge import JudgeConfig, OpenAIJudge
    from evalkit.metrics.ragas import ragas_scores

    with ScriptedJudgeServer() as srv:
        judge = OpenAIJudge(JudgeConfig(base_url=srv.url, model="scripted", cache_path=None))
        row = sample_df.iloc[0]
        [score] = ragas_scores("faithfulness", [{"question": row["question"], "answer": row["answer"],
                                                 "contexts": row["contexts"]}], judge)
        sent = list(srv.received)
    assert 0 <= score.value <= 1 and srv.response_formats == {"json_schema": 2}
    rf = sent[0]["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["name"] == "StatementGeneratorOutput"
    assert rf["json_schema"]["strict"] is True
    schema = rf["json_schema"]["schema"]
    assert schema["required"] == list(StatementGeneratorOutput.model_fields) and not schema["additionalProperties"]


def test_run_sync_inside_and_outside_a_running_loop():
    async def answer():
        await asyncio.sleep(0)
        return 42

    async def from_a_coroutine():  # what a notebook cell is: code under a running loop
        return run_sync(answer)

    assert run_sync(answer) == 42
    assert asyncio.run(from_a_coroutine()) == 42


def test_evaluate_under_a_running_event_loop_scores_ragas(judge_server, ragas_results, sample_df):
    """Jupyter and papermill run cells under an event loop: ragas' asyncio code must still run (it
    used to raise there, and every row then reported JudgeNotConfigured)."""
    cfg = {"judge": {"base_url": judge_server.url, "model": "scripted", "cache_path": None}}

    async def in_a_loop():
        return evalkit.evaluate(sample_df.head(9), RAGAS, cfg, progress=False)

    out = asyncio.run(in_a_loop())
    assert out["error"].isna().all(), out["error"].dropna().tolist()
    for m in RAGAS:  # the same numbers as outside a loop
        assert out[m].astype(float).tolist() == ragas_results[m].iloc[:9].astype(float).tolist()


def _displayed_table(nb, marker: str) -> list[list[str]]:
    """The rows (header first; index cell included) of the DataFrame's HTML that a cell containing ``marker``
    displayed (its text/plain form wraps wide tables)."""
    from html.parser import HTMLParser

    cell = next(c for c in nb.cells if c.cell_type == "code" and marker in c.source)
    html = next(o["data"]["text/html"] for o in cell.outputs if "data" in o and "text/html" in o["data"])

    class Rows(HTMLParser):
        rows: list[list[str]] = []

        def handle_starttag(self, tag, attrs):
            if tag == "tr":
                self.rows.append([])
            elif tag in ("td", "th"):
                self.rows[-1].append("")

        def handle_data(self, data):
            if self.rows and self.rows[-1]:
                self.rows[-1][-1] += data.strip()

    parser = Rows()
    parser.rows = []
    parser.feed(html)
    return parser.rows


def test_notebook_05_shows_ragas_numbers_under_papermill(judge_server, tmp_path):
    """Notebook 05 through papermill with a configured judge: the ragas table holds numbers, equal to
    evalkit's faithfulness / context recall on the same scripted labels (it used to be all <NA>)."""
    import papermill as pm

    data = tmp_path / "rows.jsonl"  # 24 rows, both systems and both labels: enough for every cell
    data.write_text("".join((ROOT / "data" / "sample_rag.jsonl").read_text().splitlines(keepends=True)[:24]))
    exp = tmp_path / "rows.yaml"
    exp.write_text("name: rows\ndata: rows.jsonl\nmetrics: [relevance, completeness, hallucination]\n")
    out = tmp_path / "05.ipynb"
    pm.execute_notebook(str(ROOT / "notebooks" / "05_judged_metrics.ipynb"), str(out), kernel_name="python3",
                        progress_bar=False, cwd=str(ROOT),
                        parameters={"experiment_path": str(exp), "n_resamples": 20,
                                    "judge": {"base_url": judge_server.url, "model": "scripted",
                                              "cache_path": None}})
    header, *rows = _displayed_table(nbformat.read(out, as_version=4), "ragas_faithfulness")
    assert header == ["", "id", "system", "ragas_faithfulness", "faithfulness", "ragas_context_recall", "context_recall"]
    assert len(rows) == 12
    for _index, _id, _system, rf, f, rr, r in rows:
        # the HTML shows 6 decimals: x100 of a 0..1 value is exact to 1e-4
        assert float(rf) * 100 == pytest.approx(float(f), abs=1e-4), (rf, f)
        assert float(rr) * 100 == pytest.approx(float(r), abs=1e-4), (rr, r)
    assert json.dumps(nbformat.read(out, as_version=4).dict()).count("JudgeNotConfigured") == 0


@pytest.mark.parametrize("concurrency", [1, 3])
def test_ragas_calls_keep_the_judges_concurrency(sample_df, concurrency):
    """ragas' calls are the judge client's calls: at most ``concurrency`` in flight, and that many are used."""
    from evalkit.judge import JudgeConfig, OpenAIJudge
    from evalkit.metrics.ragas import ragas_scores

    rows = [{"question": r["question"], "answer": r["answer"], "contexts": r["contexts"]}
            for _, r in sample_df.head(6).iterrows()]
    with ScriptedJudgeServer(latency=0.1) as srv:
        judge = OpenAIJudge(JudgeConfig(base_url=srv.url, model="scripted", cache_path=None, concurrency=concurrency))
        scores = ragas_scores("faithfulness", rows, judge)
        assert srv.max_in_flight == concurrency
    assert all(0 <= s.value <= 1 for s in scores)


def test_ragas_repeats_are_kept_per_row(sample_df):
    with ScriptedJudgeServer(noise=0.4) as srv:
        cfg = {"judge": {"base_url": srv.url, "model": "scripted", "cache_path": None, "repeats": 2}}
        out = evalkit.evaluate(sample_df.head(6), ["ragas_faithfulness"], cfg, progress=False)
        assert set(srv.seeds) == {0, 1}
    reps = [json.loads(d)["repeats"] for d in out["ragas_faithfulness_details"]]
    assert all(len(r) == 2 for r in reps) and any(r[0] != r[1] for r in reps)  # the noisy server disagrees
    for value, r in zip(out["ragas_faithfulness"], reps):
        assert value == pytest.approx(sum(r) / 2)
