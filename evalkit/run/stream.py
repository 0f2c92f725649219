"""Scoring in chunks, with checkpoints: large inputs, killed runs that resume, progress in any log.

The input (one CSV/JSONL/Parquet file, a directory of Parquet/JSONL files, or a glob) is read chunk by chunk
(JSONL line by line, Parquet batch by batch), so memory holds one chunk and the scored output, never the parsed
documents of every row. Each chunk is scored by :func:`evalkit.run.runner.score` (metric logic lives in one place)
and written as ``part-NNNNNN.parquet`` in a parts directory (``<output>.parts/`` from the CLI) beside a
``manifest.json``: the input's fingerprint, the run's settings, and each finished chunk's row range and SHA-256.

Re-running the same command resumes from the first chunk that is not finished (a part whose bytes do not match
the manifest counts as unfinished); a changed input or changed settings stop the run with a message instead of
mixing two runs. The final frame is assembled from the parts alone, and its ``attrs`` hold only what the parts
determine (the judge's usage of this invocation is kept out of the saved bytes), so an interrupted and resumed run
writes the same bytes as an uninterrupted one.

Where chunks run is an *engine*: :class:`LocalEngine` (this process) or :class:`evalkit.run.engine.DaskEngine`.
Either way the driver writes the parts in input order, so the bytes do not depend on the engine.

Examples
--------
>>> import pandas as pd
>>> df = pd.DataFrame({"question": ["What is 2+2?"] * 3, "answer": ["4", "four", "5"], "ground_truth": ["4"] * 3})
>>> out = score_chunks(df, ["exact_match"], chunk_size=2, progress=False)
>>> out["exact_match"].tolist(), out["id"].tolist()
([True, False, False], ['row-1', 'row-2', 'row-3'])
"""
from __future__ import annotations

import copy
import hashlib
import io
import json
import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from evalkit.base.config import EvalConfig
from evalkit.base.data import DataError, as_saved, canonicalize, csv_cells
from evalkit.run.runner import as_config, score, shows_a_bar
from evalkit.base.sources import canonical_chunk, count_rows, fingerprint, frame_chunks, input_files, raw_chunks

DEFAULT_CHUNK = 2000
MANIFEST = "manifest.json"
FORMAT_VERSION = 1
log = logging.getLogger("evalkit")


class CheckpointError(DataError):
    """The parts directory belongs to another input or other settings (or is not a parts directory)."""


# ---------------------------------------------------------------------------------------------------- a chunk

@dataclass(frozen=True)
class ChunkJob:
    """What every chunk is scored with: sent to whichever process scores it."""

    metrics: tuple[str, ...] | None
    config: EvalConfig
    on_error: str = "record"
    judged: bool = False  # does any chosen metric call the judge (the engine then holds the global judge limit)
    strict_columns: bool = False  # an input column named like an output is an error (else kept as input_<name>)


@dataclass(frozen=True)
class ChunkResult:
    """One scored chunk: its Parquet bytes (no attrs), and the run metadata its scoring produced."""

    index: int
    rows: int
    parquet: bytes
    meta: dict[str, Any]
    errors: int


def score_chunk(index: int, chunk: pd.DataFrame, job: ChunkJob) -> ChunkResult:
    """Score one canonical chunk with :func:`evalkit.run.runner.score`; pure of the process it runs in (resources are
    loaded once per process by their loaders' caches)."""
    out = score(chunk, list(job.metrics) if job.metrics is not None else None, job.config,
                on_error=job.on_error, progress=False, strict_columns=job.strict_columns)
    meta = out.attrs.get("evalkit", {})
    errors = int(out["error"].notna().sum())
    out.attrs = {}
    buf = io.BytesIO()
    out.to_parquet(buf, index=False)
    return ChunkResult(index, len(out), buf.getvalue(), as_saved(meta), errors)


class LocalEngine:
    """Scores chunks one after another in this process."""

    name = "local"

    def map_ordered(self, fn: Callable[..., ChunkResult], tasks: Iterable[tuple]) -> Iterator[ChunkResult]:
        for args in tasks:
            yield fn(*args)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# ---------------------------------------------------------------------------------------------------- checkpoints

@dataclass
class Checkpoint:
    """The parts directory and its manifest (``None`` directory: nothing is written, parts stay in memory)."""

    directory: Path | None
    header: dict[str, Any]
    chunks: list[dict[str, Any]] = field(default_factory=list)
    held: list[bytes] = field(default_factory=list)

    def part_path(self, index: int) -> Path:
        assert self.directory is not None
        return self.directory / f"part-{index:06d}.parquet"

    def write_manifest(self) -> None:
        if self.directory is None:
            return
        # key order kept (not sorted): the first chunk's metadata goes into the output's bytes as it was produced
        body = json.dumps({**self.header, "chunks": self.chunks}, indent=1)
        _write_atomic(self.directory / MANIFEST, body.encode())

    def add(self, res: ChunkResult, start: int) -> None:
        digest = hashlib.sha256(res.parquet).hexdigest()
        entry = {"index": res.index, "start": start, "stop": start + res.rows, "sha256": digest, "errors": res.errors}
        if res.index == 0:  # the run's metadata (signature, config): the same for every chunk, kept once so the
            entry["meta"] = res.meta  # manifest stays small however many chunks there are
        if self.directory is None:
            self.held.append(res.parquet)
        else:
            _write_atomic(self.part_path(res.index), res.parquet)
            entry["file"] = self.part_path(res.index).name
        self.chunks.append(entry)
        self.write_manifest()

    def part_bytes(self) -> Iterator[bytes]:
        if self.directory is None:
            yield from self.held
            return
        for c in self.chunks:
            yield self.part_path(c["index"]).read_bytes()

    @property
    def rows_done(self) -> int:
        return self.chunks[-1]["stop"] if self.chunks else 0


def _write_atomic(path: Path, data: bytes) -> None:
    from evalkit.base.safeio import write_bytes

    # a unique temporary name per process, then a rename: a kill leaves the old file or the new one, never half
    # of one, and two processes never write through the same temporary file
    write_bytes(path, data)


def _finished_prefix(directory: Path, chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chunks, from the first, whose part exists with the bytes the manifest recorded."""
    kept = []
    for i, c in enumerate(chunks):
        p = directory / str(c.get("file", ""))
        if c.get("index") != i or not p.is_file() or hashlib.sha256(p.read_bytes()).hexdigest() != c.get("sha256"):
            break
        kept.append(c)
    return kept


def open_checkpoint(directory: str | Path | None, header: dict[str, Any], resume: bool) -> Checkpoint:
    """The checkpoint for this run: resumed from ``directory`` when it holds the same run, new otherwise.

    Raises :class:`CheckpointError` when ``resume`` and the directory was written for another input or other
    settings (the message says which and how to start over).
    """
    if directory is None:
        return Checkpoint(None, header)
    directory = Path(directory)
    manifest = directory / MANIFEST
    if directory.exists() and not manifest.exists() and any(directory.iterdir()):
        raise CheckpointError(f"{directory}: exists and is not an evalkit parts directory (no {MANIFEST}); "
                              "move it away or choose another output")
    if manifest.exists() and resume:
        old = _read_manifest(manifest)
        if not old.get("chunks"):  # a run that finished no chunk (bad input, stopped early) has nothing to keep
            return _fresh(directory, header)
        _check_same_run(directory, old, header)
        cp = Checkpoint(directory, header, _finished_prefix(directory, old.get("chunks", [])))
        cp.write_manifest()
        return cp
    return _fresh(directory, header)


def _read_manifest(manifest: Path) -> dict[str, Any]:
    """The manifest of an earlier run, or a :class:`CheckpointError` naming it when it cannot be read."""
    try:
        old = json.loads(manifest.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise CheckpointError(f"{manifest}: not a readable parts manifest ({type(e).__name__}: {str(e)[:80]}); "
                              "re-run with --no-resume to start over") from None
    if not isinstance(old, dict):
        raise CheckpointError(f"{manifest}: not a parts manifest (a JSON {type(old).__name__}, not an object); "
                              "re-run with --no-resume to start over")
    return old


def _fresh(directory: Path, header: Mapping[str, Any]) -> "Checkpoint":
    """Start over: remove this module's own files (--no-resume, or nothing finished), then an empty manifest."""
    if (directory / MANIFEST).exists():
        remove_parts(directory)
    directory.mkdir(parents=True, exist_ok=True)
    cp = Checkpoint(directory, header)
    cp.write_manifest()
    return cp


def _check_same_run(directory: Path, old: Mapping[str, Any], header: Mapping[str, Any]) -> None:
    if old.get("format") != header["format"]:
        raise CheckpointError(f"{directory}: written by another evalkit checkpoint format; re-run with --no-resume")
    if old.get("input", {}).get("fingerprint") != header["input"]["fingerprint"]:
        raise CheckpointError(f"{directory}: holds a run on a different input (sha256 {old.get('input', {}).get('fingerprint', '?')[:12]}, "
                              f"now {header['input']['fingerprint'][:12]}); re-run with --no-resume to start over")
    if old.get("run_sha256") != header["run_sha256"]:
        changed = sorted(k for k in header["run"] if old.get("run", {}).get(k) != header["run"][k])
        raise CheckpointError(f"{directory}: holds a run with other settings (changed: {', '.join(changed) or '?'}); "
                              "re-run with the same metrics, config and chunk size, or with --no-resume to start over")


def remove_parts(directory: str | Path) -> None:
    """Delete a parts directory written by this module (its manifest and parts; nothing else is touched)."""
    directory = Path(directory)
    if not directory.exists():
        return
    for p in directory.iterdir():
        if p.name == MANIFEST or (p.name.startswith(("part-", ".part-")) and ".parquet" in p.name) \
                or (p.name.startswith(f".{MANIFEST}.") and p.name.endswith(".tmp")):  # a killed writer's temporary
            p.unlink()
    if not any(directory.iterdir()):  # foreign files are left for their owner, and the directory with them
        directory.rmdir()


def remove_unfinished(directory: str | Path) -> None:
    """Remove a parts directory in which no chunk finished (a run that failed at once leaves nothing behind); one
    with a finished chunk is kept, so a re-run resumes from it. Call it only while holding the output's lock."""
    manifest = Path(directory) / MANIFEST
    try:
        chunks = _read_manifest(manifest).get("chunks") if manifest.exists() else None
    except (OSError, CheckpointError):
        return  # not ours to judge: the error that stopped the run says what is wrong with it
    if manifest.exists() and not chunks:
        remove_parts(directory)
    elif not manifest.exists() and Path(directory).is_dir() and not any(Path(directory).iterdir()):
        Path(directory).rmdir()  # made for the run, never written to


# ---------------------------------------------------------------------------------------------------- progress

class Progress:
    """Rows done: a tqdm bar on a terminal; elsewhere one status line on ``stream`` every ``interval`` seconds
    (rows done, rows/s, ETA, rows with errors), and one at the end."""

    def __init__(self, total: int | None, done: int = 0, *, mode: str = "auto", interval: float = 10.0,
                 stream=None, clock: Callable[[], float] = time.monotonic):
        self.stream = stream or sys.stderr
        if mode == "auto":
            mode = "bar" if shows_a_bar(self.stream) else "lines"
        self.mode, self.total, self.done, self.errors = mode, total, done, 0
        self.interval, self.clock = interval, clock
        self.t0 = self.last = clock()
        self.start_rows = done
        self.bar, self.shown = None, None
        if mode == "bar":
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, initial=done, desc="evalkit", unit="row", file=self.stream)

    def update(self, rows: int, errors: int = 0) -> None:
        self.done += rows
        self.errors += errors
        if self.bar is not None:
            self.bar.update(rows)
            self.bar.set_postfix_str(f"{self.errors} rows with errors")
        elif self.mode == "lines" and self.clock() - self.last >= self.interval:
            self.emit()

    def status(self, now: float | None = None) -> str:
        elapsed = max((self.clock() if now is None else now) - self.t0, 1e-9)
        rate = (self.done - self.start_rows) / elapsed
        total = f"/{self.total} rows ({100 * self.done / self.total:.0f}%)" if self.total else " rows"
        eta = "?"
        if self.total and rate > 0:
            eta = _duration((self.total - self.done) / rate)
        return f"evalkit: {self.done}{total}, {rate:.1f} rows/s, ETA {eta}, {self.errors} rows with errors"

    def emit(self) -> None:
        self.last, self.shown = self.clock(), self.done
        print(self.status(self.last), file=self.stream, flush=True)

    def close(self, finished: bool = True) -> None:
        """End the display; a final status line only when the run finished (an error speaks for itself)."""
        if self.bar is not None:
            self.bar.close()
        elif self.mode == "lines" and finished and self.shown != self.done:
            self.emit()


def _duration(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


# ---------------------------------------------------------------------------------------------------- the run

@dataclass
class _Input:
    source: str
    fingerprint: str
    total: int | None
    chunks: Callable[[], Iterator[tuple[pd.DataFrame, list[str]]]]
    columns: Mapping[str, str] | None
    sha256: str | None


def _open_input(data: pd.DataFrame | str | Path, size: int, columns: Mapping[str, str] | None) -> _Input:
    if isinstance(data, pd.DataFrame):
        from evalkit.base.signature import rows_sha256

        frame = canonicalize(data, columns=columns).reset_index(drop=True)
        fp = rows_sha256(frame)
        return _Input("<DataFrame>", fp, len(frame), lambda: frame_chunks(frame, size), None, data.attrs.get("sha256"))
    files = input_files(data)
    fp = fingerprint(files)
    return _Input(str(data), fp, count_rows(files), lambda: raw_chunks(files, size, columns), columns, fp)


def _header(inp: _Input, metrics: Sequence[str] | None, config: EvalConfig, size: int, on_error: str) -> dict:
    run = {"metrics": list(metrics) if metrics is not None else None, "config": config.as_dict(),
           "chunk_size": size, "columns": dict(inp.columns or {}), "on_error": on_error}
    run = as_saved(run, sort_keys=True)
    return {"format": FORMAT_VERSION, "input": {"source": inp.source, "fingerprint": inp.fingerprint, "rows": inp.total,
                                                "sha256": inp.sha256},
            "run": run, "run_sha256": hashlib.sha256(json.dumps(run, sort_keys=True).encode()).hexdigest()}


def _check_whole_column(config: EvalConfig, total: int | None, size: int) -> None:
    """A metric whose statistic spans the data set (``idf_scope: dataset``) cannot be scored chunk by chunk."""
    whole = sorted(name for name, p in (config.metric_params or {}).items() if p.get("idf_scope") == "dataset")
    if whole and (total is None or total > size):
        raise DataError(f"metric(s) {', '.join(whole)} use idf_scope: dataset, a statistic over the whole data set, "
                        f"which chunks of {size} rows would change; set idf_scope: row or --chunk-size >= the row count")


def _tasks(inp: _Input, job: ChunkJob, skip: int) -> Iterator[tuple[int, pd.DataFrame, ChunkJob]]:
    first_row = 0
    for index, (raw, where) in enumerate(inp.chunks()):
        if index >= skip:
            chunk = raw if inp.columns is None and inp.source == "<DataFrame>" else \
                canonical_chunk(raw, where, first_row, inp.columns, inp.source)
            if inp.sha256:
                chunk.attrs.update({"source": inp.source, "sha256": inp.sha256})
            yield index, chunk, job
        first_row += len(raw)


def _wants_judge(metrics: Sequence[str] | None, config: EvalConfig) -> bool:
    from evalkit.metrics import REGISTRY
    from evalkit.run.resources import judge_configured, wants_judge

    names = list(metrics) if metrics is not None else list(REGISTRY)
    return judge_configured(config) and any(wants_judge(REGISTRY[n], config) for n in names if n in REGISTRY)


def score_chunks(data: pd.DataFrame | str | Path, metrics: Sequence[str] | None = None,
                 config: EvalConfig | Mapping[str, Any] | str | Path | None = None, *,
                 parts_dir: str | Path | None = None, chunk_size: int = DEFAULT_CHUNK, resume: bool = True,
                 columns: Mapping[str, str] | None = None, on_error: str = "record", engine: Any = None,
                 progress: bool | None = None, status_interval: float = 10.0,
                 strict_columns: bool = False) -> pd.DataFrame:
    """Score ``data`` chunk by chunk, checkpointing each finished chunk in ``parts_dir``; the scored frame.

    Parameters
    ----------
    data : DataFrame, a CSV/JSONL/Parquet file, a directory of Parquet/JSONL files, or a glob.
    metrics, config, on_error : as :func:`evalkit.run.runner.score`.
    parts_dir : where finished chunks and ``manifest.json`` go; None keeps them in memory (no resume).
    chunk_size : rows per chunk (>= 1).
    resume : continue a run found in ``parts_dir`` (it must be the same input and settings); False starts over.
    columns : column mapping for file inputs, as :func:`evalkit.load`.
    engine : where chunks run: None (this process), or an engine such as :class:`evalkit.run.engine.DaskEngine`.
    progress : None: a bar on a terminal, status lines every ``status_interval`` s elsewhere; False: silent.

    Returns
    -------
    DataFrame as :func:`evalkit.run.runner.score` returns it, rows in input order. ``attrs["evalkit"]`` is the run's
    metadata; its judge ``usage`` counts this invocation's calls (:func:`save_results` leaves it out of the file).
    """
    cp, usage = score_parts(data, metrics, config, parts_dir=parts_dir, chunk_size=chunk_size, resume=resume,
                            columns=columns, on_error=on_error, engine=engine, progress=progress,
                            status_interval=status_interval, strict_columns=strict_columns)
    out = assemble(cp)
    if out.attrs["evalkit"].get("judge") is not None:
        from evalkit.judge.costs import usage_total

        out.attrs["evalkit"]["judge"]["usage"], out.attrs["evalkit"]["judge"]["total"] = usage, usage_total(usage)
    return out


def score_parts(data: pd.DataFrame | str | Path, metrics: Sequence[str] | None = None,
                config: EvalConfig | Mapping[str, Any] | str | Path | None = None, *,
                parts_dir: str | Path | None = None, chunk_size: int = DEFAULT_CHUNK, resume: bool = True,
                columns: Mapping[str, str] | None = None, on_error: str = "record", engine: Any = None,
                progress: bool | None = None, status_interval: float = 10.0,
                strict_columns: bool = False) -> tuple[Checkpoint, dict[str, Any]]:
    """The scoring of :func:`score_chunks` (same parameters), up to the parts: the checkpoint that holds every
    scored chunk, and the judge usage of this invocation summed over chunks. :func:`write_output` streams the parts
    into a file from there; :func:`assemble` makes them one frame."""
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    config = as_config(config)
    inp = _open_input(data, chunk_size, columns)
    _check_whole_column(config, inp.total, chunk_size)
    cp = open_checkpoint(parts_dir, _header(inp, metrics, config, chunk_size, on_error), resume)
    if cp.chunks:
        log.warning("%s: resuming at chunk %d (row %d): %d finished chunks kept", parts_dir, len(cp.chunks),
                    cp.rows_done + 1, len(cp.chunks))
    job = ChunkJob(tuple(metrics) if metrics is not None else None, config, on_error, _wants_judge(metrics, config),
                   strict_columns)
    bar = Progress(inp.total, cp.rows_done, mode="auto" if progress is not False else "off",
                   interval=status_interval) if progress is not False else None
    usage: list[dict[str, Any]] = []
    run_engine = engine if engine is not None else LocalEngine()
    finished = False
    try:
        start = cp.rows_done
        for res in run_engine.map_ordered(score_chunk, _tasks(inp, job, len(cp.chunks))):
            cp.add(res, start)
            start += res.rows
            usage.append((res.meta.get("judge") or {}).get("usage") or {})
            if bar is not None:
                bar.update(res.rows, res.errors)
        finished = True
    finally:
        if bar is not None:
            bar.close(finished)
    return cp, _sum_usage(usage)


def assemble(cp: Checkpoint) -> pd.DataFrame:
    """The scored frame from the parts, in order, with the run's metadata (deterministic: see the module)."""
    frames = [pd.read_parquet(io.BytesIO(b)) for b in cp.part_bytes()]
    if not frames:
        raise DataError(f"{cp.header['input']['source']}: no rows to score")
    out = _as_objects(pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0])
    out.attrs.update(_input_attrs(cp))
    out.attrs["evalkit"] = run_meta(out, cp.chunks[0]["meta"])
    return out


def _as_objects(out: pd.DataFrame) -> pd.DataFrame:
    for col in out.columns:  # Parquet gives text back as pandas' str dtype and lists as arrays; evalkit's frames
        # hold Python objects (None for missing)
        if out[col].dtype == object or isinstance(out[col].dtype, pd.StringDtype):
            out[col] = pd.Series([_as_object(v) for v in out[col].tolist()], dtype=object, index=out.index)
    return out


def _input_attrs(cp: Checkpoint) -> dict[str, Any]:
    inp = cp.header["input"]
    # as evalkit.load marks a frame read from a file
    return {"source": inp["source"], "sha256": inp["sha256"]} if inp.get("sha256") else {}


def _as_object(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return [_as_object(x) for x in v.tolist()]
    if v is pd.NA or (isinstance(v, float) and v != v):
        return None
    return v


def run_meta(out: pd.DataFrame | str, first: Mapping[str, Any]) -> dict[str, Any]:
    """The run's metadata: the first chunk's, with the row hash over every row (``out``, or its hash) and no
    per-invocation judge usage."""
    from evalkit.base.signature import rows_sha256, sig_string

    meta = copy.deepcopy(dict(first))  # the first chunk's metadata, already in its saved form
    if meta.get("judge"):
        meta["judge"]["usage"] = None  # counts of this invocation's HTTP calls: not a property of the results
        meta["judge"].pop("total", None)
    sig = meta.get("signature") or {}
    if sig:
        sig["rows_sha256"] = out if isinstance(out, str) else rows_sha256(out)
        meta["signature"], meta["signature_string"] = sig, sig_string(sig)
    return meta


def _sum_usage(usages: Iterable[Mapping[str, Mapping[str, float]]]) -> dict[str, dict[str, float]]:
    total: dict[str, dict[str, float]] = {}
    for u in usages:
        for metric, counts in u.items():
            slot = total.setdefault(metric, {})
            for k, v in counts.items():
                if isinstance(v, (int, float)) and not k.endswith("_rate"):
                    slot[k] = slot.get(k, 0) + v
    for slot in total.values():  # a rate of the sums, as the judge client computes it
        if slot.get("first_replies"):
            slot["valid_json_rate"] = slot.get("valid_json", 0.0) / slot["first_replies"]
    return total


def save_results(out: pd.DataFrame, path: str | Path) -> Path:
    """Write scored results atomically (a kill leaves the old file or the new one), without the judge usage of
    this invocation, so a resumed run writes the same bytes as an uninterrupted one."""
    from evalkit.base.data import save

    path = Path(path)
    meta = out.attrs.get("evalkit") or {}
    usage = (meta.get("judge") or {}).get("usage")
    total = (meta.get("judge") or {}).get("total")
    try:
        if usage is not None:
            meta["judge"]["usage"] = None
            meta["judge"].pop("total", None)
        save(out, path)  # atomic and locked: a unique temporary name in the same folder, renamed when complete
    finally:
        if usage is not None:
            meta["judge"]["usage"] = usage
            if total is not None:
                meta["judge"]["total"] = total
    return path


# ---------------------------------------------------------------------------------------------------- streaming out

@dataclass
class Written:
    """What :func:`write_output` wrote: ``path``, ``rows``, ``meta`` (the run's metadata, the file's
    ``attrs["evalkit"]``) and ``kept``: every row's values of the columns ``keep`` chose, in order."""

    path: Path
    rows: int
    meta: dict[str, Any]
    kept: pd.DataFrame


def write_output(cp: Checkpoint, path: str | Path, *, transform: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
                 keep: Callable[[str], bool] | None = None, formula_guard: bool = True) -> Written:
    """Write the scored rows of ``cp`` to ``path`` (.parquet, .csv, .jsonl) part by part, atomically.

    Memory holds one part at a time (plus the ``keep`` columns of every row, e.g. what a summary reads), never the
    whole output: Parquet gets one row group per part (``pyarrow.parquet.ParquetWriter``), CSV and JSONL are
    appended. Each part goes through ``transform`` (e.g. the verdict) first. Column types are those the
    concatenated frame would have (a part whose column is all missing takes the type of the others), the row hash
    is taken over every row as :func:`assemble` takes it, and the file's ``attrs`` are what :func:`save_results`
    writes (no per-invocation judge usage), so the file reads back as ``save_results(assemble(cp))`` would, and the
    same parts always give the same bytes (a resumed run writes what an uninterrupted one writes).

    Examples
    --------
    >>> import tempfile
    >>> df = pd.DataFrame({"question": ["What is 2+2?"] * 3, "answer": ["4", "four", "5"], "ground_truth": ["4"] * 3})
    >>> cp, _ = score_parts(df, ["exact_match"], chunk_size=2, progress=False)
    >>> w = write_output(cp, Path(tempfile.mkdtemp()) / "out.csv", keep=lambda c: c == "exact_match")
    >>> w.rows, w.kept["exact_match"].tolist(), len(pd.read_csv(w.path))
    (3, [True, False, False], 3)
    """
    from evalkit.base.data import FORMATS
    from evalkit.base.safeio import atomic_path

    path = Path(path)
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise DataError(f"{path}: unsupported output extension {path.suffix!r}; use .parquet, .csv or .jsonl")
    if not cp.chunks and not cp.held:
        raise DataError(f"{cp.header['input']['source']}: no rows to score")

    # the file is written in two passes over the parts; ``transform`` runs once per part, in the first, and the
    # second takes the columns it added (small: a verdict and its rule per row) instead of running it again
    added: list[tuple[dict[str, pd.Series], list[str]]] = []

    def parts() -> Iterator[pd.DataFrame]:
        for i, b in enumerate(cp.part_bytes()):
            frame = _as_objects(pd.read_parquet(io.BytesIO(b)))
            if transform is None:
                yield frame
            elif i < len(added):
                new, order = added[i]
                yield frame.assign(**new)[order]
            else:
                out = transform(frame)
                added.append(({c: out[c] for c in out.columns if c not in frame.columns}, list(out.columns)))
                yield out

    # pass 1: the row hash, the columns kept, and one row of each part (their concatenation has the whole's types)
    from evalkit.base.data import CANONICAL_COLUMNS

    digest, rows, heads, kept, columns = hashlib.sha256(b"["), 0, [], [], None
    for frame in parts():
        if columns is None:
            columns = list(frame.columns)
        elif list(frame.columns) != columns:
            raise DataError(f"{cp.directory}: part {len(heads)} has other columns than part 0; re-run with --no-resume")
        records = frame[[c for c in CANONICAL_COLUMNS if c in frame.columns]].to_json(orient="records",
                                                                                        force_ascii=False)
        digest.update((("," if rows else "") + records[1:-1]).encode())  # "[r1,r2]" + "[r3]" -> "[r1,r2,r3]"
        rows += len(frame)
        # copies: a slice may be a view that keeps the whole part (its texts) alive
        heads.append(frame.iloc[:1].copy())
        kept.append(frame[[c for c in frame.columns if keep is not None and keep(c)]].copy())
    digest.update(b"]")
    dtypes = pd.concat(heads, ignore_index=True).dtypes.to_dict()
    kept_frame = pd.concat(kept, ignore_index=True)
    del heads, kept
    meta = run_meta(digest.hexdigest(), cp.chunks[0]["meta"] if cp.chunks else {})
    attrs = {**_input_attrs(cp), "evalkit": meta}

    def typed() -> Iterator[pd.DataFrame]:
        for frame in parts():
            odd = {c: t for c, t in dtypes.items() if frame[c].dtype != t}
            yield frame.astype(odd) if odd else frame

    with atomic_path(path) as tmp:
        if fmt == "parquet":
            _write_parquet(tmp, typed, attrs)
        elif fmt == "csv":
            with open(tmp, "w", encoding="utf-8", newline="") as f:
                for i, frame in enumerate(typed()):
                    csv_cells(frame, formula_guard).to_csv(f, index=False, header=i == 0)
        else:
            with open(tmp, "w", encoding="utf-8", newline="") as f:
                for frame in typed():
                    text = frame.to_json(orient="records", lines=True, force_ascii=False)
                    f.write(text if text.endswith("\n") else text + "\n")
    kept_frame.attrs.update(attrs)
    return Written(path, rows, meta, kept_frame)


def _write_parquet(tmp: Path, typed: Callable[[], Iterator[pd.DataFrame]], attrs: Mapping[str, Any]) -> None:
    """One row group per part, under the schema every part fits (a column all missing in one part, null there,
    takes the type the other parts give it); the schema's metadata as pandas' ``to_parquet`` writes it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.unify_schemas([pa.Schema.from_pandas(f, preserve_index=False) for f in typed()],
                              promote_options="permissive")
    writer = None
    try:
        for frame in typed():
            frame.attrs = dict(attrs)  # pyarrow keeps a frame's attrs in the pandas metadata too, as to_parquet does
            table = pa.Table.from_pandas(frame, schema=schema, preserve_index=False)
            if writer is None:
                meta = {**(table.schema.metadata or {}), b"PANDAS_ATTRS": json.dumps(attrs).encode()}
                writer = pq.ParquetWriter(tmp, table.schema.with_metadata(meta), compression="snappy")
            writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()
