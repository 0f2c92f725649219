"""Fail fast and loud: preflight, no retries that cannot help, the circuit breaker, exit codes, settings from
the environment, and a cache keyed by endpoint. Every server here is real HTTP on 127.0.0.1."""
import socket
import threading

import pytest

import evalkit
from evalkit.cli import main
from evalkit.judge import JudgeConfig, OpenAIJudge
from evalkit.judge.client import JudgeUnavailable
from evalkit.judge.prompts import load_prompts
from evalkit.testing import ScriptedJudgeServer

PROMPT = load_prompts()["answer_correct"]
VARS = {"question": "Q?", "reference": "604", "answer": "604"}


def _dead_port() -> int:
    with socket.socket() as s:  # free a moment ago: nothing listens, connections are refused
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Silent:
    """A TCP server that accepts connections and never answers (a hung inference server)."""

    def __enter__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.conns = []
        self._t = threading.Thread(target=self._accept, daemon=True)
        self._t.start()
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _accept(self):
        while True:
            try:
                self.conns.append(self.sock.accept()[0])
            except OSError:
                return

    def __exit__(self, *exc):
        for c in self.conns:
            c.close()
        self.sock.close()


def _judge(url, **kw):
    return OpenAIJudge(JudgeConfig(base_url=url, model=kw.pop("model", "m"), cache_path=None, backoff=0.01, **kw))


def test_preflight_names_a_dead_endpoint():
    url = f"http://127.0.0.1:{_dead_port()}/v1"
    with pytest.raises(JudgeUnavailable, match=r"cannot reach the judge at .*Connection refused.*is the server running"):
        _judge(url).preflight()


def test_preflight_names_a_refused_key(monkeypatch):
    monkeypatch.delenv("EVALKIT_JUDGE_API_KEY", raising=False)
    with ScriptedJudgeServer(api_key="right") as srv:
        with pytest.raises(JudgeUnavailable, match=r"refused the request \(HTTP 401\): check the API key in "
                                                   r"EVALKIT_JUDGE_API_KEY \(is not set\)"):
            _judge(srv.url).preflight()
        monkeypatch.setenv("EVALKIT_JUDGE_API_KEY", "right")
        assert _judge(srv.url).preflight() == "models (none listed)"


def test_preflight_names_an_unknown_model():
    with ScriptedJudgeServer(models=["qwen2.5-0.5b-instruct"]) as srv:
        with pytest.raises(JudgeUnavailable, match=r"model 'gpt-4o' is not served by the judge at .* "
                                                   r"\(it serves: qwen2.5-0.5b-instruct\)"):
            _judge(srv.url, model="gpt-4o").preflight()
        assert _judge(srv.url, model="qwen2.5-0.5b-instruct").preflight() == "models"
        assert srv.requests == 0  # the preflight made no chat call


def test_preflight_does_not_wait_on_a_hung_server():
    with _Silent() as url:
        with pytest.raises(JudgeUnavailable, match=r"did not answer within 0.5s"):  # the limit it kept, named
            _judge(url, timeout=0.5).preflight()


def test_cli_exits_2_on_a_dead_endpoint_before_scoring(tmp_path, sample_path, capsys):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"judge: {{base_url: 'http://127.0.0.1:{_dead_port()}/v1', model: m, cache_path: null}}\n")
    assert main(["score", str(sample_path), "-o", str(tmp_path / "o.parquet"), "--config", str(cfg),
                 "--metrics", "faithfulness", "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("evalkit: error: cannot reach the judge at") and "\n" not in err
    assert not (tmp_path / "o.parquet").exists()


def test_refused_connection_mid_run_is_not_retried(sample_path):
    srv = ScriptedJudgeServer().start()
    j = _judge(srv.url, max_retries=4, circuit_breaker=100)
    j.preflight()
    srv.stop()  # the server dies after the preflight
    with pytest.raises(JudgeUnavailable, match="cannot reach the judge"):
        j.complete(PROMPT, VARS, metric="m")
    assert j.usage()["m"]["http_calls"] == 1 and j.usage()["m"].get("retries", 0) == 0  # counted, not timed


def test_circuit_breaker_stops_calling_and_says_why(tmp_path, sample_path):
    # every call fails (HTTP 500); after 3 failed calls in a row the judge is not called again
    df = evalkit.load(sample_path).head(8)
    df["answer"] = df["answer"] + " FAULT_500"
    with ScriptedJudgeServer() as srv:
        cfg = {"judge": {"base_url": srv.url, "model": "m", "max_retries": 0, "circuit_breaker": 3,
                         "cache_path": None, "concurrency": 1}}
        out = evalkit.evaluate(df, ["answer_class"], cfg, progress=False)
        calls = srv.requests
    errors = out["error"].tolist()
    assert all(e and "answer_class" in e for e in errors)  # every row says why
    assert sum("stopped calling it (judge.circuit_breaker)" in e for e in errors) >= 4
    assert calls <= 3 + 1  # three failures, then nothing (one more may be in flight at the trip)


def test_retries_print_a_warning_line(caplog):
    with ScriptedJudgeServer() as srv:
        j = _judge(srv.url, max_retries=2)
        with caplog.at_level("WARNING", logger="evalkit"):
            with pytest.raises(Exception):
                j.complete(PROMPT, {**VARS, "answer": "604 FAULT_500"}, metric="answer_class")
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].startswith("judge answer_class: HTTP 500") and "retry 1 of 2" in lines[0]
    assert "retry 2 of 2" in lines[1]


def test_settings_from_the_environment(monkeypatch):
    monkeypatch.setenv("EVALKIT_JUDGE_TIMEOUT", "2.5")
    monkeypatch.setenv("EVALKIT_JUDGE_MAX_RETRIES", "1")
    monkeypatch.setenv("EVALKIT_JUDGE_CONCURRENCY", "7")
    cfg = JudgeConfig.resolve({"base_url": "http://x/v1", "model": "m"})
    assert (cfg.timeout, cfg.max_retries, cfg.concurrency) == (2.5, 1, 7)
    assert JudgeConfig.resolve({"timeout": 9}).timeout == 9  # the config file wins over the environment
    monkeypatch.setenv("EVALKIT_JUDGE_MAX_RETRIES", "many")
    with pytest.raises(ValueError, match=r"EVALKIT_JUDGE_MAX_RETRIES='many' is not an integer"):
        JudgeConfig.resolve({})


def test_bad_judge_values_fail_at_load(tmp_path, sample_path, capsys):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("judge: {timeout: 0}\n")
    assert main(["score", str(sample_path), "-o", str(tmp_path / "o.parquet"), "--config", str(cfg), "-q"]) == 2
    assert "judge: timeout must be a number > 0, got 0" in capsys.readouterr().err


def test_cache_is_keyed_by_endpoint_unless_shared(tmp_path):
    cache = str(tmp_path / "judge.sqlite")
    with ScriptedJudgeServer() as a, ScriptedJudgeServer() as b:
        OpenAIJudge(JudgeConfig(base_url=a.url, model="m", cache_path=cache)).complete(PROMPT, VARS)
        OpenAIJudge(JudgeConfig(base_url=b.url, model="m", cache_path=cache)).complete(PROMPT, VARS)
        assert (a.requests, b.requests) == (1, 1)  # same model name, another server: asked, not replayed
        shared = {"model": "m", "cache_path": cache, "cache_scope": "model"}
        OpenAIJudge(JudgeConfig(base_url=a.url, **shared)).complete(PROMPT, VARS)
        reply = OpenAIJudge(JudgeConfig(base_url=b.url, **shared)).complete(PROMPT, VARS)
        assert (a.requests, b.requests) == (2, 1) and reply.cached  # shared on purpose: b replays a's answer


def test_cli_flags_set_the_judge(tmp_path, sample_path, capsys):
    # a hung server and --judge-timeout 0.5: the preflight gives up after half a second, naming the limit
    with _Silent() as url:
        cfg = tmp_path / "cfg.yaml"
        cfg.write_text(f"judge: {{base_url: '{url}', model: m, cache_path: null}}\n")
        assert main(["score", str(sample_path), "-o", str(tmp_path / "o.parquet"), "--config", str(cfg),
                     "--metrics", "faithfulness", "--judge-timeout", "0.5", "-q"]) == 2
        assert "did not answer within 0.5s" in capsys.readouterr().err  # the message names the limit it kept
    with pytest.raises(SystemExit) as refused:  # refused at the door, by the option's name
        main(["score", str(sample_path), "-o", str(tmp_path / "o.parquet"), "--judge-concurrency", "0", "-q"])
    assert refused.value.code == 2
    assert "argument --judge-concurrency: must be a whole number >= 1, got '0'" in capsys.readouterr().err
    cfg = tmp_path / "zero.yaml"  # the same value in a config file is refused by its key
    cfg.write_text("judge: {concurrency: 0}\n")
    assert main(["score", str(sample_path), "-o", str(tmp_path / "o.parquet"), "--config", str(cfg), "-q"]) == 2
    assert "judge: concurrency must be an integer >= 1, got 0" in capsys.readouterr().err


def test_preflight_retries_5xx_like_any_call():
    with ScriptedJudgeServer(fail_first=(500, 503)) as srv:
        j = _judge(srv.url, max_retries=2)
        assert j.preflight() == "models (none listed)"
        assert srv.gets == 3 and srv.requests == 0


def test_preflight_retries_a_connection_broken_off_without_reply():
    """A server that drops the connection without a status line (a closed keep-alive socket under load) is tried
    again on a fresh connection, as any call would be, instead of stopping the run."""
    with ScriptedJudgeServer(fail_first=(0,), models=["m"]) as srv:
        assert _judge(srv.url, max_retries=1).preflight() == "models"
        assert srv.gets == 2


def test_preflight_retries_429_respecting_retry_after():
    with ScriptedJudgeServer(fail_first=(429,), models=["m"]) as srv:
        assert _judge(srv.url, max_retries=1).preflight() == "models"
        assert srv.gets == 2


def test_preflight_gives_up_on_a_failing_server_after_the_retries(caplog):
    with ScriptedJudgeServer(fail_first=(500,) * 10) as srv:
        with caplog.at_level("WARNING", logger="evalkit"):
            # /models failing is not the verdict (gateways answer 5xx for routes they lack): the chat probe is, and
            # it fails too, after its own retries
            with pytest.raises(JudgeUnavailable, match=r"answered a one-token chat request with HTTP 500 3 times in "
                                                       r"a row .*overloaded or failing"):
                _judge(srv.url, max_retries=2).preflight()
        assert srv.gets == 3 and srv.requests == 3
    # every retry said so, on /models and then on the chat probe
    assert [r.getMessage().startswith("judge preflight: HTTP 500") for r in caplog.records] == [True] * 4


def test_preflight_falls_back_to_chat_when_models_route_fails():
    """A gateway that answers 5xx on /models but serves chat: the run goes ahead (the chat probe answered)."""
    with ScriptedJudgeServer(fail_first=(502, 502)) as srv:
        assert _judge(srv.url, max_retries=1).preflight() == "chat"
        assert srv.gets == 2 and srv.requests == 1
