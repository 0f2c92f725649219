"""Inputs larger than memory, read chunk by chunk: a file, a directory of Parquet/JSONL files, or a glob.

JSONL is read line by line and Parquet batch by batch, so a chunk of rows is all that is held; a CSV is read
whole (with :func:`evalkit.load`'s rules for text columns), then cut. Errors name the file and line as
:func:`evalkit.load` does; a missing id becomes ``row-N`` with N the row's place in the whole input.

Examples
--------
>>> import json, tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "a.jsonl").write_text("".join(json.dumps({"question": "q", "answer": str(i)}) + "\\n" for i in range(5)))
>>> [len(raw) for raw, where in raw_chunks(input_files(d), 2)]
[2, 2, 1]
"""
from __future__ import annotations

import glob as globlib
import hashlib
import logging
from pathlib import Path
from typing import Iterator, Mapping, Sequence

import pandas as pd

from evalkit.base.data import FORMATS, DataError, canonicalize, dataset_sha256, jsonl_record

STREAMED = (".jsonl", ".ndjson", ".parquet", ".pq")  # read chunk by chunk; a CSV is read whole, then cut

log = logging.getLogger(__name__)


def input_files(spec: str | Path) -> list[Path]:
    """The files of an input: a file, a directory (its .parquet/.jsonl files, sorted) or a glob (sorted)."""
    text = str(spec)
    path = Path(text)
    if path.is_dir():
        files = _folder_parts(path)
    elif any(ch in text for ch in "*?["):
        files = sorted(Path(p) for p in globlib.glob(text) if Path(p).is_file())
    else:
        files = [path]
    if not files:
        raise DataError(f"{spec}: no .parquet or .jsonl files there")
    for f in files:
        if not f.exists():
            raise DataError(f"{f}: no such file")
        if f.suffix.lower() not in FORMATS:
            raise DataError(f"{f}: cannot tell the format from the extension {f.suffix!r}; use one of {sorted(FORMATS)}")
        if len(files) > 1 and f.suffix.lower() not in STREAMED:
            raise DataError(f"{f}: a multi-file input holds .parquet or .jsonl files only")
    return files


def _folder_parts(folder: Path) -> list[Path]:
    """A folder's .parquet/.jsonl files, sorted; what else it holds is named in a warning, never read silently.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("b.jsonl", "a.parquet", "notes.csv"):
    ...     _ = (d / name).write_text("")
    >>> (d / "old").mkdir()
    >>> [p.name for p in _folder_parts(d)]  # the warning: "...: skipped 2 entries that are not .parquet/.jsonl parts: notes.csv, old/"
    ['a.parquet', 'b.jsonl']
    """
    entries = sorted(folder.iterdir())
    files = [p for p in entries if p.is_file() and p.suffix.lower() in STREAMED]
    skipped = [p.name + ("/" if p.is_dir() else "") for p in entries if p not in files]
    shown = ", ".join(skipped[:10]) + (f" and {len(skipped) - 10} more" if len(skipped) > 10 else "")
    if not files:
        raise DataError(f"{folder}: no .parquet or .jsonl files there" + (f" (it holds {shown})" if skipped else ""))
    if skipped:
        log.warning("%s: skipped %d %s that %s not .parquet/.jsonl parts: %s", folder, len(skipped),
                    "entry" if len(skipped) == 1 else "entries", "is" if len(skipped) == 1 else "are", shown)
    return files


def fingerprint(files: Sequence[Path]) -> str:
    """SHA-256 of the input: one file's bytes (the same ``data_sha256`` as :func:`evalkit.load`), or, for several
    files, of their names and hashes in order."""
    if len(files) == 1:
        return dataset_sha256(files[0])
    h = hashlib.sha256()
    for f in files:
        h.update(f"{f.name}\0{dataset_sha256(f)}\n".encode())
    return h.hexdigest()


def count_rows(files: Sequence[Path]) -> int:
    """Rows in the input without holding it: Parquet footers, non-blank JSONL lines, CSV rows."""
    import pyarrow.parquet as pq

    n = 0
    for f in files:
        suffix = f.suffix.lower()
        if suffix in (".parquet", ".pq"):
            try:
                n += pq.ParquetFile(f).metadata.num_rows
            except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
                raise DataError(f"{f}: not a readable Parquet file ({str(e).splitlines()[0]})") from None
        elif suffix in (".jsonl", ".ndjson"):
            with open(f, "rb") as fh:
                n += sum(1 for line in fh if line.strip())
        else:
            n += len(pd.read_csv(f, usecols=[0]))
    return n


def _utf8_line(path: Path, lineno: int, raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: line {lineno}: not UTF-8 (byte 0x{raw[e.start]:02x} at column {e.start + 1}); "
                        "JSON Lines files are UTF-8 (re-save the file as UTF-8)") from None


def _jsonl_batches(path: Path, size: int) -> Iterator[tuple[pd.DataFrame, list[str]]]:
    batch: list[tuple[int, dict]] = []
    with open(path, "rb") as f:
        numbered = ((lineno, line) for lineno, line in enumerate(f, start=1) if line.strip())  # blank: no record
        for lineno, raw in numbered:
            batch.append((lineno, jsonl_record(path, lineno, _utf8_line(path, lineno, raw))))
            if len(batch) == size:
                yield pd.DataFrame.from_records([r for _, r in batch]), [f"{path.name} line {n}" for n, _ in batch]
                batch = []
    if batch:
        yield pd.DataFrame.from_records([r for _, r in batch]), [f"{path.name} line {n}" for n, _ in batch]


def _file_batches(path: Path, size: int, columns: Mapping[str, str] | None) -> Iterator[tuple[pd.DataFrame, list[str]]]:
    """Raw rows of one file in batches of at most ``size``, with each row's place for error messages."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        yield from _jsonl_batches(path, size)
    elif suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        seen = 0
        for batch in pq.ParquetFile(path).iter_batches(batch_size=size):
            frame = batch.to_pandas()
            yield frame, [f"{path.name} row {seen + i + 1}" for i in range(len(frame))]
            seen += len(frame)
    else:  # CSV: evalkit's own reader (text columns verbatim, as evalkit.load reads them), whole, then cut
        from evalkit.base.data import RAGAS_ALIASES, TEXT_COLUMNS, read_csv_file

        frame, _ = read_csv_file(path, set(TEXT_COLUMNS) | {"id", "contexts"} | set(RAGAS_ALIASES)
                             | set((columns or {}).values()))
        for start in range(0, len(frame), size):
            yield frame.iloc[start:start + size].reset_index(drop=True), \
                [f"{path.name} row {i + 1}" for i in range(start, min(start + size, len(frame)))]


def raw_chunks(files: Sequence[Path], size: int, columns: Mapping[str, str] | None = None
               ) -> Iterator[tuple[pd.DataFrame, list[str]]]:
    """Raw rows of every file in order, cut into chunks of exactly ``size`` rows (the last may be shorter);
    a chunk may span two files."""
    held: list[tuple[pd.DataFrame, list[str]]] = []
    rows = 0
    for f in files:
        for frame, where in _file_batches(f, size, columns):
            held.append((frame, where))
            rows += len(frame)
            while rows >= size:
                chunk, held, rows = _cut(held, size)
                yield chunk
    if rows:
        yield _cut(held, rows)[0]


def _cut(held: list[tuple[pd.DataFrame, list[str]]], size: int):
    frame = pd.concat([f for f, _ in held], ignore_index=True) if len(held) > 1 else held[0][0]
    where = [w for _, ws in held for w in ws]
    rest = frame.iloc[size:].reset_index(drop=True)
    left = [(rest, where[size:])] if len(rest) else []
    return (frame.iloc[:size].reset_index(drop=True), where[:size]), left, len(rest)


def canonical_chunk(raw: pd.DataFrame, where: list[str], first_row: int, columns: Mapping[str, str] | None,
                    source: str) -> pd.DataFrame:
    """A raw chunk in canonical form; a missing id becomes ``row-N`` with N the row's place in the whole input
    (as :func:`evalkit.load` numbers it), not in the chunk."""
    raw = raw.copy()
    id_col = (columns or {}).get("id", "id")
    generated = [f"row-{first_row + i + 1}" for i in range(len(raw))]
    if id_col not in raw.columns:
        raw[id_col] = generated
    else:
        raw[id_col] = [g if v is None or v is pd.NA or (isinstance(v, float) and v != v) else v
                       for v, g in zip(raw[id_col].tolist(), generated)]
    return canonicalize(raw, columns=columns, source=source, where=where)


def frame_chunks(df: pd.DataFrame, size: int) -> Iterator[tuple[pd.DataFrame, list[str]]]:
    """An in-memory frame cut into chunks (its rows keep their numbers for messages)."""
    for start in range(0, len(df), size):
        yield df.iloc[start:start + size].reset_index(drop=True), \
            [f"row {i + 1}" for i in range(start, min(start + size, len(df)))]
