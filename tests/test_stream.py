"""Scoring in checkpointed chunks (evalkit/run/stream.py): a killed CLI run resumes to the same bytes, changed inputs
or settings are refused, chunks span files, ids are numbered over the whole input, progress shows off a TTY."""
from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from evalkit.run.runner import score
from evalkit.run.stream import (MANIFEST, CheckpointError, LocalEngine, Progress, save_results, score_chunks)

ROOT = Path(__file__).resolve().parents[1]
CHEAP = ["exact_match", "relevance", "number_match"]


def _rows(sample_path: Path, copies: int, drop_ids: bool = False) -> list[dict]:
    """The sample's rows, ``copies`` times, each copy with its own ids (distinct rows, same texts)."""
    base = [json.loads(line) for line in sample_path.read_text().splitlines() if line.strip()]
    out = []
    for k in range(copies):
        for r in base:
            r = dict(r, id=f"{r['id']}-{r.get('system')}-{k}")
            if drop_ids:
                r.pop("id")
            out.append(r)
    return out


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "evalkit.cli", "score", *args]


def _env() -> dict:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}


def _wait_for_chunks(parts: Path, n: int, proc: subprocess.Popen, limit: float = 120.0) -> int:
    """Poll the manifest until it lists ``n`` finished chunks; the count seen."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        try:
            done = len(json.loads((parts / MANIFEST).read_text())["chunks"])
        except (OSError, ValueError, KeyError):
            done = 0
        if done >= n:
            return done
        assert proc.poll() is None, "the run ended before it could be killed"
        time.sleep(0.02)
    raise AssertionError(f"no {n} finished chunks within {limit} s")


def test_killed_run_resumes_to_the_same_bytes(tmp_path, sample_path):
    data = _write_jsonl(tmp_path / "data.jsonl", _rows(sample_path, 2))  # 168 rows: 9 chunks of 20
    metrics = "exact_match,relevance,hallucination"  # hallucination parses with spaCy: chunks take a while
    whole = tmp_path / "whole.parquet"
    subprocess.run(_cli(str(data), "-o", str(whole), "--metrics", metrics, "--chunk-size", "20", "-q"),
                   cwd=ROOT, env=_env(), check=True, capture_output=True)
    out = tmp_path / "resumed.parquet"
    parts = Path(f"{out}.parts")
    args = _cli(str(data), "-o", str(out), "--metrics", metrics, "--chunk-size", "20")
    proc = subprocess.Popen(args, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for_chunks(parts, 2, proc)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    assert not out.exists()
    kept = len(json.loads((parts / MANIFEST).read_text())["chunks"])
    assert 2 <= kept < 9
    again = subprocess.run(args, cwd=ROOT, env=_env(), capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert f"resuming at chunk {kept} (row {20 * kept + 1})" in again.stderr
    assert "evalkit: 168/168 rows (100%)" in again.stderr  # the status line of a non-TTY log
    assert out.read_bytes() == whole.read_bytes()
    assert not parts.exists()  # removed once the output is written
    assert pd.read_parquet(out)["id"].tolist() == [r["id"] for r in _rows(sample_path, 2)]


def test_chunked_scores_equal_one_piece_and_ids_count_the_whole_input(tmp_path, sample_path):
    data = _write_jsonl(tmp_path / "noid.jsonl", _rows(sample_path, 1, drop_ids=True))
    chunked = score_chunks(data, CHEAP, chunk_size=13, progress=False)
    whole = score(data, CHEAP, progress=False)
    assert chunked["id"].tolist() == [f"row-{i}" for i in range(1, 85)]
    pd.testing.assert_frame_equal(chunked, whole)
    save_results(chunked, tmp_path / "a.parquet")
    save_results(whole, tmp_path / "b.parquet")
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()


def test_a_directory_and_a_glob_are_read_in_order_across_files(tmp_path, sample_path):
    rows = _rows(sample_path, 1)
    folder = tmp_path / "logs"
    folder.mkdir()
    _write_jsonl(folder / "a.jsonl", rows[:30])
    pd.DataFrame(rows[30:50]).to_parquet(folder / "b.parquet")
    _write_jsonl(folder / "c.jsonl", rows[50:])
    (folder / "notes.txt").write_text("not data")
    by_dir = score_chunks(folder, CHEAP, chunk_size=25, progress=False)  # chunks of 25 span a.jsonl and b.parquet
    assert by_dir["id"].tolist() == [r["id"] for r in rows]
    whole = score(_write_jsonl(tmp_path / "all.jsonl", rows), CHEAP, progress=False)
    for m in CHEAP:
        assert by_dir[m].tolist() == whole[m].tolist(), m
    by_glob = score_chunks(str(folder / "*.jsonl"), CHEAP, chunk_size=25, progress=False)
    assert by_glob["id"].tolist() == [r["id"] for r in rows[:30] + rows[50:]]


class RecordingEngine(LocalEngine):
    """Scores in this process and remembers which chunks it was given."""

    def __init__(self):
        self.seen: list[int] = []

    def map_ordered(self, fn, tasks):
        for args in tasks:
            self.seen.append(args[0])
            yield fn(*args)


def test_resume_starts_at_the_first_unfinished_chunk(tmp_path, sample_path):
    data = _write_jsonl(tmp_path / "d.jsonl", _rows(sample_path, 1))
    parts = tmp_path / "out.parts"
    first = score_chunks(data, CHEAP, parts_dir=parts, chunk_size=20, progress=False)
    (parts / "part-000002.parquet").write_bytes(b"torn write")  # chunks 0 and 1 stay finished
    engine = RecordingEngine()
    again = score_chunks(data, CHEAP, parts_dir=parts, chunk_size=20, progress=False, engine=engine)
    assert engine.seen == [2, 3, 4]
    pd.testing.assert_frame_equal(again, first)
    engine = RecordingEngine()
    score_chunks(data, CHEAP, parts_dir=parts, chunk_size=20, progress=False, engine=engine)
    assert engine.seen == []  # everything finished: nothing is scored again


def test_changed_input_or_settings_are_refused(tmp_path, sample_path):
    rows = _rows(sample_path, 1)
    data = _write_jsonl(tmp_path / "d.jsonl", rows)
    parts = tmp_path / "out.parts"
    score_chunks(data, CHEAP, parts_dir=parts, chunk_size=40, progress=False)
    with pytest.raises(CheckpointError, match="other settings .changed: metrics"):
        score_chunks(data, ["exact_match"], parts_dir=parts, chunk_size=40, progress=False)
    with pytest.raises(CheckpointError, match="changed: chunk_size"):
        score_chunks(data, CHEAP, parts_dir=parts, chunk_size=20, progress=False)
    _write_jsonl(data, rows[:-1])
    with pytest.raises(CheckpointError, match="different input"):
        score_chunks(data, CHEAP, parts_dir=parts, chunk_size=40, progress=False)
    fresh = score_chunks(data, CHEAP, parts_dir=parts, chunk_size=40, progress=False, resume=False)
    assert len(fresh) == 83


def test_cli_refusal_is_one_line(tmp_path, sample_path):
    rows = _rows(sample_path, 1)
    data = _write_jsonl(tmp_path / "d.jsonl", rows)
    out = tmp_path / "o.parquet"
    score_chunks(data, CHEAP, parts_dir=f"{out}.parts", chunk_size=40, progress=False)
    _write_jsonl(data, rows[:10])
    r = subprocess.run(_cli(str(data), "-o", str(out), "--metrics", ",".join(CHEAP), "--chunk-size", "40"),
                       cwd=ROOT, env=_env(), capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "different input" in r.stderr and "--no-resume" in r.stderr
    r = subprocess.run(_cli(str(data), "-o", str(out), "--metrics", ",".join(CHEAP), "--chunk-size", "40",
                            "--no-resume", "-q"), cwd=ROOT, env=_env(), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert len(pd.read_parquet(out)) == 10


def test_a_dataset_wide_statistic_is_not_cut_into_chunks(tmp_path, sample_path):
    data = _write_jsonl(tmp_path / "d.jsonl", _rows(sample_path, 1))
    cfg = {"metric_params": {"relevance": {"idf_scope": "dataset"}}}
    with pytest.raises(ValueError, match="idf_scope: dataset"):
        score_chunks(data, ["relevance"], cfg, chunk_size=20, progress=False)
    assert len(score_chunks(data, ["relevance"], cfg, chunk_size=100, progress=False)) == 84


class Clock:
    def __init__(self, times):
        self.times = list(times)

    def __call__(self):
        return self.times.pop(0)


def test_status_lines_off_a_terminal():
    log = io.StringIO()  # not a TTY
    # clock reads: start, then one per update (is it time to print?) and one per printed line
    p = Progress(100, 0, interval=10.0, stream=log, clock=Clock([0.0, 4.0, 10.0, 10.0, 20.0, 20.0]))
    p.update(20)  # t=4: before the interval, nothing printed
    p.update(30, errors=2)  # t=10: 50 rows in 10 s
    p.update(50, errors=1)  # t=20: 100 rows in 20 s
    p.close()  # the last line already shows the end: not printed twice
    assert log.getvalue().splitlines() == [
        "evalkit: 50/100 rows (50%), 5.0 rows/s, ETA 0m10s, 2 rows with errors",
        "evalkit: 100/100 rows (100%), 5.0 rows/s, ETA 0m00s, 3 rows with errors",
    ]


def test_a_run_that_scored_nothing_does_not_block_the_next_one(tmp_path, capsys):
    """A newcomer's sequence: the first file has a broken line, the fixed file is scored with the same command."""
    from evalkit.cli import main

    data, out = tmp_path / "faq.jsonl", tmp_path / "results.parquet"
    good = [json.dumps({"user_input": f"Q{i}?", "response": f"A{i}.", "retrieved_contexts": [f"A{i}."]}) for i in range(3)]
    data.write_text("\n".join(good[:2] + ['{"user_input": "Q?", "response": '] + good[2:]) + "\n")
    assert main(["score", str(data), "-o", str(out), "--metrics", "relevance", "-q"]) == 2
    assert "line 3: malformed JSON" in capsys.readouterr().err
    data.write_text("\n".join(good) + "\n")
    assert main(["score", str(data), "-o", str(out), "--metrics", "relevance", "-q"]) == 0
    assert len(pd.read_parquet(out)) == 3 and not Path(f"{out}.parts").exists()


def test_a_second_run_to_the_same_output_is_refused_and_the_first_completes(tmp_path, sample_path):
    from evalkit.testing import ScriptedJudgeServer

    out, lock = tmp_path / "o.parquet", tmp_path / ".o.parquet.lock"
    with ScriptedJudgeServer(latency=0.5) as srv:  # a slow judge keeps the first run going while the second starts
        cfg = tmp_path / "cfg.yaml"
        cfg.write_text(f"judge: {{base_url: '{srv.url}', model: m, cache_path: null, concurrency: 1}}\n")
        args = _cli(str(sample_path), "-o", str(out), "--metrics", "exact_match,answer_class", "--config", str(cfg),
                    "--chunk-size", "20", "-q")
        first = subprocess.Popen(args, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
        try:
            t0 = time.monotonic()
            while not lock.exists() and first.poll() is None and time.monotonic() - t0 < 120:
                time.sleep(0.02)
            assert lock.read_text().split() == [str(first.pid)]  # the first run holds the output's lock
            second = subprocess.run(args, cwd=ROOT, env=_env(), capture_output=True, text=True)
            calls_meanwhile = srv.requests
            parts_kept = (Path(f"{out}.parts") / MANIFEST).exists()  # the refused run left the first's parts alone
        finally:
            srv.latency = 0.0
            _, err = first.communicate()
    assert second.returncode == 2
    assert second.stderr.strip() == (f"evalkit: error: {out}: another evalkit process (pid {first.pid}) is writing "
                                     "this output; wait for it to finish")
    assert first.returncode == 0, err
    assert calls_meanwhile < 84 and parts_kept  # the first run was still scoring when the second was refused
    assert pd.read_parquet(out)["id"].tolist() == [json.loads(line)["id"] for line in
                                                   sample_path.read_text().splitlines() if line.strip()]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cfg.yaml", "o.parquet"]  # no parts, lock or temporary


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl"])
def test_the_output_is_streamed_from_the_parts_and_reads_back_as_the_whole(tmp_path, sample_path, suffix):
    """The CLI writes the output part by part (flat memory); it holds what saving the whole frame gives: the same
    bytes for CSV and JSONL, the same frame, types and metadata for Parquet (one row group per part)."""
    import pyarrow.parquet as pq

    from evalkit import evaluate
    from evalkit.cli import main

    metrics = "exact_match,relevance,number_match,hallucination,completeness"  # the triad: verdicts per part
    out, ref = tmp_path / f"o{suffix}", tmp_path / f"ref{suffix}"
    assert main(["score", str(sample_path), "-o", str(out), "--metrics", metrics, "--chunk-size", "13", "-q"]) == 0
    save_results(evaluate(sample_path, metrics.split(","), chunk_size=13, progress=False), ref)
    if suffix != ".parquet":
        assert out.read_bytes() == ref.read_bytes()
        return
    got, want = pd.read_parquet(out), pd.read_parquet(ref)
    pd.testing.assert_frame_equal(got, want)
    assert got.attrs == want.attrs and got.attrs["evalkit"]["signature"]["rows_sha256"]
    assert pq.read_schema(out) == pq.read_schema(ref) and pq.read_schema(out).metadata == pq.read_schema(ref).metadata
    assert pq.ParquetFile(out).num_row_groups == 7  # 84 rows in chunks of 13


def test_the_printed_summary_is_the_summary_of_the_whole_output(tmp_path, sample_path, capsys):
    from evalkit.decide.aggregate import summary, wide
    from evalkit.cli import main

    out = tmp_path / "o.parquet"
    assert main(["score", str(sample_path), "-o", str(out), "--metrics", "exact_match,relevance,number_match",
                 "--chunk-size", "10"]) == 0
    printed = capsys.readouterr().out
    whole = pd.read_parquet(out)
    table = wide(summary(whole, by="system"), by="system").dropna(axis=1, how="all").round(3).to_string()
    assert table in printed
    assert f"scored 84 rows with 3 metrics -> {out} ({int(whole['error'].notna().sum())} rows with errors)" in printed


def test_remove_parts_also_removes_a_killed_writers_temporaries(tmp_path):
    from evalkit.run.stream import remove_parts

    parts = tmp_path / "o.parquet.parts"
    parts.mkdir()
    names = [MANIFEST, "part-000000.parquet", ".part-000001.parquet.4242.0a1b2c3d.tmp", f".{MANIFEST}.4242.9f8e7d6c.tmp"]
    for name in names + ["notes.txt"]:
        (parts / name).write_bytes(b"x")
    remove_parts(parts)
    assert [p.name for p in parts.iterdir()] == ["notes.txt"]  # the user's file stays, and the folder with it
