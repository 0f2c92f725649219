"""evalkit.testing's scripted judge server: a real process on a real port, fixtures first, no evalkit logic."""
import ast
import json
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from evalkit.testing import JudgeScript, ScriptedJudgeServer, judge_or_scripted
from evalkit.testing import judge_server

from ..conftest import ROOT


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _chat(url: str, prompt: str) -> httpx.Response:
    return httpx.post(f"{url}/chat/completions", timeout=10,
                      json={"model": "m", "messages": [{"role": "user", "content": prompt}]})


def test_python_dash_m_serves_a_chat_completion(tmp_path):
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([{"when": "Is the sky green?", "reply": {"verdict": "WRONG", "reason": "blue"}}]))
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "evalkit.testing.judge_server", "--port", str(port),
                             "--replies", str(replies)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        banner = proc.stdout.readline()  # printed once the socket is listening
        assert banner.startswith(f"scripted judge server at http://127.0.0.1:{port}/v1"), banner
        r = _chat(f"http://127.0.0.1:{port}/v1", "Is the sky green? Answer in JSON.")
        assert r.status_code == 200
        assert json.loads(r.json()["choices"][0]["message"]["content"]) == {"verdict": "WRONG", "reason": "blue"}
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "RuntimeWarning" not in err  # the module runs once (the package imports it lazily)


def test_fixed_replies_come_before_the_rules_and_are_fresh_copies():
    prompt = "Extract standalone factual statements.\n\nANSWER:\nThe fee is $604. It is due in May.\n\nReply with JSON"
    script = JudgeScript.load()
    assert script.answer(prompt) == {"statements": ["The fee is $604.", "It is due in May."]}
    fixed = JudgeScript.load(replies=[{"when": ["standalone", "$604"], "reply": {"statements": ["x"]}}])
    first = fixed.answer(prompt)
    first["statements"].append("changed by the caller")
    assert fixed.answer(prompt) == {"statements": ["x"]}
    assert script.answer("Nothing it knows") == {"error": "scripted server does not know this prompt"}


def test_rules_are_data_and_checked():
    rules = json.loads((ROOT / "evalkit" / "testing" / "judge_rules.json").read_text())
    assert {r["answer"] for r in rules["rules"]} <= set(judge_server.ANSWERS)
    with pytest.raises(ValueError, match=r"rules\[0\]: unknown answer kind 'oracle'"):
        JudgeScript.load({**rules, "rules": [{"when": "x", "answer": "oracle"}]})
    with pytest.raises(ValueError, match=r"replies\[0\]: 'when' must be a non-empty string"):
        JudgeScript.load(replies=[{"when": [], "reply": {}}])


def test_faults_and_counters():
    with ScriptedJudgeServer(stall_seconds=0.01) as srv:
        assert _chat(srv.url, "FAULT_429 hello").status_code == 429
        assert _chat(srv.url, "FAULT_429 hello").status_code == 200  # the same body succeeds the second time
        assert _chat(srv.url, "FAULT_500").status_code == 500
        assert _chat(srv.url, "FAULT_STALL").status_code == 200  # stalls, then answers (no timing asserted)
        assert srv.requests == 4 and sum(srv.prompts.values()) == 4


def test_the_server_imports_nothing_from_evalkit_but_config():
    """A test double answers from fixtures, never by calling the code it is meant to test."""
    tree = ast.parse(Path(judge_server.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                and (n.level or (n.module or "").split(".")[0] == "evalkit")}
    assert imported == {"evalkit.base.config"}  # JudgeConfig, for judge_or_scripted


def test_judge_or_scripted_prefers_a_configured_judge(monkeypatch):
    for v in ("EVALKIT_JUDGE_BASE_URL", "EVALKIT_JUDGE_MODEL"):
        monkeypatch.delenv(v, raising=False)
    cfg, server = judge_or_scripted({})
    try:
        assert server is not None and cfg["base_url"] == server.url and cfg["model"] == "scripted-loopback"
    finally:
        server.stop()
    assert judge_or_scripted({"base_url": "http://127.0.0.1:9/v1", "model": "m"})[1] is None


def test_python_dash_m_takes_latency(tmp_path):
    """`--latency` (the README's fault option) reaches the server: a POST waits at least that long."""
    import time

    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "evalkit.testing.judge_server", "--port", str(port),
                             "--latency", "0.6"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.stdout.readline()
        start = time.monotonic()
        r = _chat(f"http://127.0.0.1:{port}/v1", "Rate how directly\n\nQUESTION:\nWhy?\n\nANSWER:\nBecause.")
        assert r.status_code == 200 and time.monotonic() - start >= 0.6  # a lower bound: never flaky
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_a_custom_metric_on_the_answer_alone_follows_the_answer(tmp_path):
    """A custom judged metric whose only input is the answer: the scripted score depends on the answer (it was 1 on
    every row), and a filler answer scores below a dense one."""
    import pandas as pd

    import evalkit
    from evalkit.metrics.custom import scoped

    cfg = tmp_path / "cfg.yaml"
    with ScriptedJudgeServer() as srv:
        cfg.write_text("custom_metrics:\n  - name: density\n    criteria: Does every word of the answer carry "
                       "information?\n    inputs: [answer]\n    scale: [1, 5]\n"
                       f"judge:\n  base_url: {srv.url}\n  model: scripted\n  cache_path: null\n")
        df = pd.DataFrame({"question": ["What is the premium?"] * 2,
                           "answer": ["Premium 604 euros yearly, payable monthly.",
                                      "Well, it is what it is, and that is that, so to speak."]})
        with scoped():
            out = evalkit.evaluate(df, ["density"], str(cfg), progress=False)
    dense, filler = out["density"].tolist()
    assert dense > filler and out["density"].nunique() == 2
