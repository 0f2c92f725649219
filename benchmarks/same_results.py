"""Fingerprints of three saved runs, to show that a change of code layout left every number as it was.

Scores the bundled sample three ways with the installed ``evalkit`` command (so nothing here depends on where a
module lives): the default config; the judged metrics against the scripted judge server on 127.0.0.1; and a
streamed, checkpointed run in chunks of 7 rows. For each results file it prints the SHA-256 of the rows (every
column, in order, as CSV) and of the file's metadata with the fields that name the code's commit, the clock or
the output path taken out. Run it before and after a change and compare the two outputs::

    python benchmarks/same_results.py > before.json   # on the old commit
    python benchmarks/same_results.py > after.json    # on the new one
    diff before.json after.json && echo identical
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
# relative to ROOT, where the commands run: the input's path is saved with the results, and two checkouts compared
# live in two folders
SAMPLE = "data/sample_rag.jsonl"
CONFIG = "experiments/default.config.yaml"
# fields that describe when and from which checkout a run was made, not what it computed
VOLATILE = {"git_commit", "created_at", "timestamp", "started", "finished", "elapsed_s", "output", "path", "cache_path"}


def _without_volatile(value):
    if isinstance(value, str):  # the one-line signature names the commit too
        return re.sub(r"\|commit:[^|]*", "", value)
    if isinstance(value, dict):
        return {k: _without_volatile(v) for k, v in sorted(value.items()) if k not in VOLATILE}
    if isinstance(value, list):
        return [_without_volatile(v) for v in value]
    return value


def fingerprint(path: Path) -> dict:
    table = pq.read_table(path)
    rows = table.to_pandas().to_csv(index=False).encode()
    meta = {}
    for key, raw in (table.schema.metadata or {}).items():
        try:
            meta[key.decode()] = _without_volatile(json.loads(raw))
        except ValueError:
            meta[key.decode()] = raw.decode(errors="replace")
    meta.pop("pandas", None)  # pandas' own bookkeeping (library versions)
    return {"rows": table.num_rows, "rows_sha256": hashlib.sha256(rows).hexdigest(),
            "metadata_sha256": hashlib.sha256(json.dumps(meta, sort_keys=True).encode()).hexdigest()}


def _score(out: Path, *args: str, env: dict | None = None) -> Path:
    cmd = [str(Path(sys.executable).with_name("evalkit")), "score", SAMPLE, "-o", str(out), "-q", *args]
    subprocess.run(cmd, check=True, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=sys.stderr)  # JSON alone on stdout
    return out


def main() -> None:
    from evalkit.testing import ScriptedJudgeServer

    # one fixed folder, not a fresh temporary name: the judge's cache path is part of the config's hash
    tmp = Path(tempfile.gettempdir()) / "evalkit-same-results"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        runs = {"sample": _score(tmp / "sample.parquet", "--config", CONFIG),
                "streamed": _score(tmp / "streamed.parquet", "--config", CONFIG, "--chunk-size", "7")}
        judge_cfg = tmp / "judge.yaml"
        judge_cfg.write_text(f"judge:\n  cache_path: {tmp / 'cache.sqlite'}\n", encoding="utf-8")
        with ScriptedJudgeServer() as srv:
            env = {"EVALKIT_JUDGE_BASE_URL": srv.url, "EVALKIT_JUDGE_MODEL": "scripted"}
            runs["judged"] = _score(tmp / "judged.parquet", "--config", str(judge_cfg), "--metrics",
                                    "ragas_score,factual_accuracy,answer_class", env=env)
        print(json.dumps({name: fingerprint(path) for name, path in runs.items()}, indent=2))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
