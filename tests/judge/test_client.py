"""The judge client against a real HTTP server on 127.0.0.1 (evalkit.testing's scripted judge server)."""
import os
import signal
import subprocess
import sys
import time

import pytest

import evalkit
from evalkit.judge import JudgeConfig, JudgeError, OpenAIJudge, load_prompts
from evalkit.judge.cache import JudgeCache
from evalkit.testing import ScriptedJudgeServer

P = load_prompts()


def judge_for(srv, **kw):
    cfg = {"base_url": srv.url, "model": "scripted", "cache_path": None, "backoff": 0.01, "max_retries": 2, **kw}
    return OpenAIJudge(JudgeConfig(**cfg))


@pytest.fixture
def srv():
    with ScriptedJudgeServer(stall_seconds=1.5) as s:
        yield s


def ask(j, answer, metric="m"):
    return j.complete(P["answer_correct"], {"question": "Q?", "reference": "The fee is $604.", "answer": answer},
                      metric=metric)


def test_reply_usage_and_counts(srv):
    j = judge_for(srv)
    r = ask(j, "The fee is 604.")
    assert r.data["verdict"] == "CORRECT" and not r.cached and r.usage["prompt_tokens"] > 0
    assert srv.requests == 1
    u = j.usage()["m"]
    assert u["http_calls"] == 1 and u["prompt_tokens"] > 0 and u["completion_tokens"] > 0


def test_429_then_success(srv):
    j = judge_for(srv)
    assert ask(j, "FAULT_429 The fee is 604.").data["verdict"] == "CORRECT"
    assert srv.requests == 2 and j.usage()["m"]["retries"] == 1


def test_500_exhausts_retries(srv):
    j = judge_for(srv, max_retries=2)
    with pytest.raises(JudgeError, match=r"failed after 3 attempts; last error: HTTP 500"):
        ask(j, "FAULT_500")
    assert srv.requests == 3 and j.usage()["m"]["failures"] == 1


def test_stalled_reply_times_out_and_is_retried(srv):
    j = judge_for(srv, timeout=0.3, max_retries=1)
    with pytest.raises(JudgeError, match="failed after 2 attempts; last error: ReadTimeout"):
        ask(j, "FAULT_STALL")
    # counted, not timed: one call and one retry, each cut at the timeout (the server stalls far longer)
    assert srv.requests == 2 and j.usage()["m"]["retries"] == 1 and j.usage()["m"]["failures"] == 1


def test_malformed_json_gets_one_repair(srv):
    j = judge_for(srv)
    assert ask(j, "FAULT_BADJSON The fee is 604.").data["verdict"] == "CORRECT"
    assert srv.requests == 2 and j.usage()["m"]["repairs"] == 1


def test_garbage_after_repair_is_an_error(srv):
    j = judge_for(srv)
    with pytest.raises(JudgeError, match="not the expected JSON after one repair attempt"):
        ask(j, "FAULT_GARBAGE")
    assert srv.requests == 2


def test_wrong_shape_is_repaired_then_error():
    # a valid JSON object without the expected key is also repaired (and then fails)
    assert P["answer_correct"].check({"verdict": "CORRECT"}) is None
    assert "missing key 'verdict'" in P["answer_correct"].check({"answer": 1})
    assert "should be list" in P["faithfulness_statements"].check({"statements": "a, b"})


def test_4xx_is_not_retried(srv):
    j = OpenAIJudge(JudgeConfig(base_url=srv.url.replace("/v1", "/nope"), model="x", cache_path=None, backoff=0.01))
    with pytest.raises(JudgeError, match="rejected \\(HTTP 404"):
        ask(j, "x")
    assert srv.requests == 1


def test_cache_makes_second_run_free(srv, tmp_path):
    cache = tmp_path / "judge.sqlite"
    j1 = judge_for(srv, cache_path=str(cache))
    ask(j1, "The fee is 604.")
    ask(j1, "The fee is 700.")
    n = srv.requests
    j2 = judge_for(srv, cache_path=str(cache))  # a new process would see the same file
    assert ask(j2, "The fee is 604.").cached and ask(j2, "The fee is 700.").cached
    assert srv.requests == n and j2.usage()["m"]["cache_hits"] == 2
    j3 = judge_for(srv, cache_path=str(cache), temperature=0.7)  # generation parameters are part of the key
    assert not ask(j3, "The fee is 604.").cached


def test_api_key_from_environment_never_on_disk(srv, tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_JUDGE_API_KEY", "sk-secret-123")
    cache = tmp_path / "c.sqlite"
    j = judge_for(srv, cache_path=str(cache))
    assert j._http.headers["authorization"] == "Bearer sk-secret-123"
    ask(j, "The fee is 604.")
    for f in tmp_path.iterdir():
        assert b"sk-secret-123" not in f.read_bytes()
    with pytest.raises(ValueError, match="do not put the API key in a config file"):
        JudgeConfig.resolve({"api_key": "sk-x"})


def test_env_configures_default_judge(monkeypatch):
    monkeypatch.setenv("EVALKIT_JUDGE_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("EVALKIT_JUDGE_MODEL", "m1")
    cfg = JudgeConfig.resolve({"model": "m2", "concurrency": 2})
    assert cfg.base_url == "http://127.0.0.1:9/v1" and cfg.model == "m2" and cfg.concurrency == 2
    with pytest.raises(ValueError, match="unknown key 'modle'"):
        JudgeConfig.resolve({"modle": "x"})


def test_judged_metrics_skipped_without_judge(sample_df, monkeypatch, caplog):
    for v in ("EVALKIT_JUDGE_BASE_URL", "EVALKIT_JUDGE_MODEL"):
        monkeypatch.delenv(v, raising=False)
    out = evalkit.evaluate(sample_df.head(3), ["faithfulness", "context_recall", "relevance"], progress=False)
    assert "faithfulness" not in out.columns and "relevance" in out.columns
    msgs = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert len(msgs) == 1 and "EVALKIT_JUDGE_BASE_URL" in msgs[0] and "faithfulness, context_recall" in msgs[0]


def _env(srv, cache):
    env = {**os.environ, "EVALKIT_JUDGE_BASE_URL": srv.url, "EVALKIT_JUDGE_MODEL": "scripted"}
    cfg = cache.parent / "cfg.yaml"
    cfg.write_text(f"judge:\n  cache_path: {cache}\n  concurrency: 2\n  backoff: 0.01\n")
    return env, cfg


def test_killed_run_resumes_without_repeating_calls(srv, tmp_path, sample_path):
    """Kill a real `evalkit score` half-way; the rerun repeats no finished call."""
    cache = tmp_path / "judge.sqlite"
    env, cfg = _env(srv, cache)
    srv.stall_seconds = 0.05  # slow every call a little so the kill lands mid-run
    cmd = [sys.executable, "-m", "evalkit.cli", "score", str(sample_path), "-o", str(tmp_path / "o.parquet"),
           "--metrics", "faithfulness", "--config", str(cfg), "-q"]
    stalled = tmp_path / "stall.jsonl"
    df = evalkit.load(sample_path)
    df["answer"] = df["answer"].map(lambda a: f"{a} FAULT_STALL")
    evalkit.save(df, stalled)
    cmd[4] = str(stalled)
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while srv.requests < 40 and time.time() < deadline:
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    done_before = len(JudgeCache(cache))
    assert 0 < done_before < 168, "the kill should land half-way"
    first = dict(srv.prompts)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    repeated = [k for k, n in srv.prompts.items() if n > 1]
    # only calls that were in flight when the process died (at most `concurrency`) may be asked twice
    assert len(repeated) <= 2
    assert sum(first.values()) + (len(JudgeCache(cache)) - done_before) + len(repeated) >= sum(srv.prompts.values())
    n = srv.requests
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and srv.requests == n  # a full re-run makes zero HTTP calls
