"""Issue 40: a judge URL's password never reaches a message, a log line or a file of the report folder.

Every check runs the real thing: the CLI in a subprocess, a real HTTP judge (evalkit's scripted server on
127.0.0.1) reached through a URL with user information, a closed port for the unreachable case, and a real
papermill report. The password is a string that appears nowhere else, so a plain substring search is exact.
"""
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from evalkit.base.config import redact_secrets

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "Pw-9f3kq7-zulu"  # nowhere else in the project or its outputs

ROWS = [  # a lighthouse and a library: not the bundled sample
    ("When was the Skerra lighthouse lit?", "The Skerra lighthouse was first lit in 1874.", "It was first lit in 1874."),
    ("How tall is the Skerra lighthouse?", "The tower is 31 metres tall and has 142 steps.", "It is 31 metres tall."),
    ("How many books does the Velden library lend?", "The Velden library lends up to 12 books per card.",
     "Up to 12 books per card."),
]


def _env() -> dict:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg",
            "RAGAS_DO_NOT_TRACK": "true"}


API_KEY = "sk-canary-7h2m"  # the environment's API key: sent as a header, never printed or written


def _evalkit(args, cwd, timeout=600, api_key=False):
    env = {**_env(), "EVALKIT_JUDGE_API_KEY": API_KEY} if api_key else _env()
    return subprocess.run([sys.executable, "-m", "evalkit.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def _data(tmp_path: Path) -> Path:
    path = tmp_path / "answers.jsonl"
    pd.DataFrame({"question": [r[0] for r in ROWS], "contexts": [[r[1]] for r in ROWS],
                  "answer": [r[2] for r in ROWS]}).to_json(path, orient="records", lines=True)
    return path


def _closed_port() -> int:
    with socket.socket() as s:  # bound and closed: nothing listens there afterwards
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _everything_under(folder: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize("text,expected", [
    ("http://alice:s3cr@t@10.0.0.1/v1", "http://alice:***@t@10.0.0.1/v1"),  # '@' in a password: the first one ends
    ("https://bob:@host/v1", "https://bob:***@host/v1"),                     # an empty password says nothing: hidden
    ("see https://tok_123@gw.example:8443/v1/chat", "see https://***@gw.example:8443/v1/chat"),  # bare user info
    ("https://h/v1?token=abc&x=1#frag", "https://h/v1?token=***&x=1#frag"),
    ("https://h/v1?Api-Key=abc", "https://h/v1?Api-Key=***"),
    ("https://h/v1?model=m", "https://h/v1?model=m"),  # an ordinary parameter stays
    ("mail alice@example.org", "mail alice@example.org"),  # not a URL: an address stays
    ("", ""),
])
def test_redaction_by_hand(text, expected):
    assert redact_secrets(text) == expected


def test_an_unreachable_judge_is_named_without_its_password(tmp_path):
    data = _data(tmp_path)
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"judge: {{base_url: 'http://alice:{PASSWORD}@127.0.0.1:{_closed_port()}/v1', model: m}}\n")
    r = _evalkit(["score", str(data), "-o", str(tmp_path / "out.parquet"), "--metrics", "faithfulness",
                  "--config", str(cfg)], tmp_path)
    assert r.returncode == 2, r.stderr
    assert "cannot reach the judge at http://alice:***@127.0.0.1:" in r.stderr  # still says where
    assert PASSWORD not in r.stdout + r.stderr
    assert not (tmp_path / "out.parquet").exists()


def test_verbose_request_lines_hide_the_password(tmp_path):
    from evalkit.testing import ScriptedJudgeServer

    data = _data(tmp_path)
    with ScriptedJudgeServer() as srv:
        url = srv.url.replace("http://", f"http://alice:{PASSWORD}@")
        cfg = tmp_path / "cfg.yaml"
        cfg.write_text(f"judge: {{base_url: '{url}', model: scripted, cache_path: null}}\n")
        r = _evalkit(["-v", "score", str(data), "-o", str(tmp_path / "out.parquet"), "--metrics", "faithfulness",
                      "--config", str(cfg)], tmp_path)
    assert r.returncode == 0, r.stderr
    requests = [line for line in r.stderr.splitlines() if "HTTP Request:" in line]
    assert requests and all("alice:***@127.0.0.1" in line for line in requests)  # httpx's lines, each one hidden
    assert PASSWORD not in r.stdout + r.stderr
    assert PASSWORD not in (tmp_path / "out.parquet").read_bytes().decode("latin-1")


def test_the_report_folder_never_holds_the_judge_password(tmp_path):
    from evalkit.testing import ScriptedJudgeServer

    data = _data(tmp_path)
    with ScriptedJudgeServer() as srv:
        url = srv.url.replace("http://", f"http://alice:{PASSWORD}@")
        exp = tmp_path / "exp.yaml"
        exp.write_text("\n".join([
            "name: lighthouse", f"data: {data.name}",
            "metrics: [faithfulness, unsupported_facts, reference_conflict, answers_question, question_coverage]",
            f"judge: {{base_url: '{url}', model: scripted, cache_path: null}}",
            "notebooks: [05_judged_metrics]", "seed: 0"]) + "\n")
        r = _evalkit(["-v", "report", str(exp), "--resamples", "50"], tmp_path, timeout=900, api_key=True)
    assert r.returncode == 0, r.stdout + r.stderr
    report = tmp_path / "reports" / "lighthouse"
    nb = json.loads((report / "notebooks" / "05_judged_metrics.ipynb").read_text())
    assert nb["metadata"]["papermill"]["parameters"]["judge"]["base_url"].startswith("http://alice:***@127.0.0.1")
    paper = _evalkit(["-v", "paper", str(report), "-o", str(tmp_path / "paper")], tmp_path, api_key=True)
    assert paper.returncode == 0, paper.stderr
    written = _everything_under(report) + _everything_under(tmp_path / "paper")  # notebooks, metadata, results,
    printed = r.stdout + r.stderr + paper.stdout + paper.stderr                  # metrics.json, HTML, the paper
    for canary in (PASSWORD, API_KEY):
        assert canary not in written and canary not in printed
    # the password did reach the server: the judged metric was scored through it
    assert pd.read_parquet(report / "results.parquet")["faithfulness"].notna().all()
