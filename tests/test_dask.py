"""The dask engine against a real cluster: the ``dask scheduler`` and ``dask worker`` programs as subprocesses on
127.0.0.1. The cluster run writes the same bytes as the local run; a worker killed mid-run loses no row."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[1]
DASK = str(Path(sys.executable).with_name("dask"))
METRICS = "exact_match,relevance,hallucination"  # hallucination: spaCy on the workers


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}


def _start(*args: str) -> subprocess.Popen:
    # its own process group: a worker's nanny and the worker process die together
    return subprocess.Popen([DASK, *args], cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _wait_for_workers(address: str, n: int, limit: float = 90.0) -> None:
    from distributed import Client

    with Client(address, timeout=limit) as client:
        client.wait_for_workers(n, timeout=limit)


@pytest.fixture
def cluster():
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs = [_start("scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard")]
    try:
        procs += [_start("worker", address, "--nworkers", "1", "--nthreads", "1", "--no-dashboard")
                  for _ in range(2)]
        _wait_for_workers(address, 2)
        yield address, procs[1:]
    finally:
        for p in reversed(procs):
            _stop(p)


def _data(tmp_path: Path, sample_path: Path, copies: int) -> Path:
    base = [json.loads(line) for line in sample_path.read_text().splitlines() if line.strip()]
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(dict(r, id=f"{r['id']}-{r.get('system')}-{k}")) + "\n"
                            for k in range(copies) for r in base))
    return path


def _score(data: Path, out: Path, *extra: str, wait: bool = True):
    args = [sys.executable, "-m", "evalkit.cli", "score", str(data), "-o", str(out), "--metrics", METRICS,
            "--chunk-size", "12", "-q", *extra]
    if not wait:
        return subprocess.Popen(args, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    r = subprocess.run(args, cwd=ROOT, env=_env(), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r


def test_cluster_run_writes_the_local_bytes(tmp_path, sample_path, cluster):
    address, _ = cluster
    data = _data(tmp_path, sample_path, 1)
    _score(data, tmp_path / "local.parquet")
    _score(data, tmp_path / "dask.parquet", "--engine", "dask", "--scheduler", address)
    assert (tmp_path / "dask.parquet").read_bytes() == (tmp_path / "local.parquet").read_bytes()


def test_a_worker_killed_mid_run_loses_no_row(tmp_path, sample_path, cluster):
    address, workers = cluster
    data = _data(tmp_path, sample_path, 2)  # 168 rows, 14 chunks
    out = tmp_path / "dask.parquet"
    proc = _score(data, out, "--engine", "dask", "--scheduler", address, wait=False)
    manifest = Path(f"{out}.parts") / "manifest.json"
    t0 = time.monotonic()
    while time.monotonic() - t0 < 120:
        try:
            if len(json.loads(manifest.read_text())["chunks"]) >= 2:
                break
        except (OSError, ValueError, KeyError):
            pass
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    _stop(workers[0])  # its chunks in flight are rescheduled on the other worker
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    got = pd.read_parquet(out)
    expected_ids = [json.loads(line)["id"] for line in data.read_text().splitlines()]
    assert got["id"].tolist() == expected_ids
    assert got["error"].isna().all() and got["hallucination"].notna().sum() > 0
    _score(data, tmp_path / "local.parquet")
    assert out.read_bytes() == (tmp_path / "local.parquet").read_bytes()


def test_judged_run_on_a_local_cluster_replays_the_shared_cache(tmp_path, sample_path):
    from evalkit import evaluate
    from evalkit.testing import ScriptedJudgeServer

    with ScriptedJudgeServer() as srv:
        cfg = {"judge": {"base_url": srv.url, "model": "scripted", "cache_path": str(tmp_path / "judge.sqlite")}}
        first = evaluate(sample_path, ["faithfulness"], cfg, engine="dask", scheduler="local:2", chunk_size=20,
                         progress=False)
        calls = srv.requests
        assert calls > 0 and first.attrs["evalkit"]["judge"]["usage"]["faithfulness"]["http_calls"] == calls
        again = evaluate(sample_path, ["faithfulness"], cfg, engine="dask", scheduler="local:2", chunk_size=20,
                         progress=False)
        assert srv.requests == calls  # every answer came from the cache the workers share
        assert again.attrs["evalkit"]["judge"]["usage"]["faithfulness"].get("http_calls", 0) == 0
    pd.testing.assert_frame_equal(again, first)
    assert first["faithfulness"].notna().sum() > 0
