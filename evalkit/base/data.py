"""Read CSV / JSONL / Parquet into evalkit's canonical DataFrame, validating at the door.

Canonical columns
-----------------
``id`` (str), ``question`` (str), ``answer`` (str or None), optional ``contexts``
(list of str), ``ground_truth`` (str or None), ``system``, ``question_type``, and
any number of extra columns (human labels such as ``hallucinated``), kept as-is.

ragas' names are accepted (``user_input``, ``retrieved_contexts``, ``response``,
``reference``), and so is an explicit ``columns={canonical: source}`` mapping.
``contexts`` may be a list, a JSON list in a string, or a single string.

Every problem is reported with the file, the row (or JSONL line) and the column.
No row is dropped: an empty or missing answer is kept as None and each metric
scores it by its documented empty-input rule.

Examples
--------
>>> import evalkit
>>> df = evalkit.load("data/sample_rag.jsonl")  # doctest: +SKIP
>>> sorted(df.columns)[:3]  # doctest: +SKIP
['answer', 'contexts', 'correct']
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

TEXT_COLUMNS = ("question", "answer", "ground_truth")
NAME_COLUMNS = ("system",)  # read from CSV as written; an empty cell is missing
REQUIRED_COLUMNS = ("question", "answer")
CANONICAL_COLUMNS = ("id", "question", "contexts", "answer", "ground_truth", "system", "question_type")
RAGAS_ALIASES = {
    "user_input": "question",
    "retrieved_contexts": "contexts",
    "response": "answer",
    "reference": "ground_truth",
}
log = logging.getLogger("evalkit")
FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet"}


class DataError(ValueError):
    """Bad input data. The message names the file, the row and the column at fault."""


def is_missing(v: Any) -> bool:
    """None, NaN or pandas' NA: a cell with no value (the one test every step uses).

    >>> [is_missing(v) for v in (None, float("nan"), pd.NA, "", 0)]
    [True, True, True, False, False]
    """
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA


def dataset_sha256(path: str | Path) -> str:
    """SHA-256 of the file's bytes: the data hash that goes into every signature."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class _NonFinite(float):
    """A NaN/Infinity literal of a JSONL line, marked so the field holding it can be named."""


def _object_without_duplicates(path, lineno: int):
    def hook(pairs):
        seen = set()
        for k, _ in pairs:
            if k in seen:
                raise DataError(f"{path}: line {lineno}: key {k!r} appears twice in one record")
            seen.add(k)
        return dict(pairs)
    return hook


def jsonl_record(path: str | Path, lineno: int, line: str) -> dict:
    """One JSONL line as an object, or a :class:`DataError` naming the file, the line and the column.

    ``NaN`` and ``Infinity`` (not JSON, though Python writes them) and a key given twice are refused.

    >>> jsonl_record("d.jsonl", 7, '{"question": "Q?", "answer": \\n')
    Traceback (most recent call last):
    ...
    evalkit.base.data.DataError: d.jsonl: line 7: malformed JSON (Expecting value at column 30)
    >>> jsonl_record("d.jsonl", 2, '{"question": "Q?", "answer": NaN}')
    Traceback (most recent call last):
    ...
    evalkit.base.data.DataError: d.jsonl: line 2, column 'answer': NaN is not valid JSON (write null for a missing value)
    """
    try:  # without its newline a cut-short line reports its own column
        obj = json.loads(line.rstrip("\r\n"), parse_constant=lambda c: _NonFinite(c),
                         object_pairs_hook=_object_without_duplicates(path, lineno))
    except json.JSONDecodeError as e:
        raise DataError(f"{path}: line {lineno}: malformed JSON ({e.msg} at column {e.colno})") from None
    except RecursionError:
        raise DataError(f"{path}: line {lineno}: JSON nested too deeply to read (arrays or objects inside one "
                        "another thousands of levels deep)") from None
    if not isinstance(obj, dict):
        raise DataError(f"{path}: line {lineno}: expected a JSON object, got {type(obj).__name__}")
    for k, v in obj.items():
        if isinstance(v, _NonFinite):
            literal = "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
            raise DataError(f"{path}: line {lineno}, column {k!r}: {literal} is not valid JSON "
                            "(write null for a missing value)")
    if "\\u" in line:  # only an escape can carry half of a surrogate pair; raw text was decoded strictly
        _refuse_lone_surrogates(path, lineno, obj)
    return obj


def _refuse_lone_surrogates(path: str | Path, lineno: int, obj: dict) -> None:
    r"""A ``\ud800`` escape without its pair is not a character: no file format can store it, so it is refused here
    rather than when the results are written.

    >>> jsonl_record("d.jsonl", 3, '{"answer": "a \\ud800 b"}')
    Traceback (most recent call last):
    ...
    evalkit.base.data.DataError: d.jsonl: line 3, column 'answer': a lone surrogate escape (\ud800) is not a character; write the full pair or remove it
    """
    for k, v in obj.items():
        try:
            json.dumps(v, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as e:
            raise DataError(f"{path}: line {lineno}, column {k!r}: a lone surrogate escape "
                            f"(\\u{ord(e.object[e.start]):04x}) is not a character; write the full pair or remove "
                            "it") from None


_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


def read_text(path: str | Path, encoding: str | None = None) -> str:
    """A text file's contents: ``encoding`` if given, else UTF-8 (a UTF-8 or UTF-16 byte-order mark is
    honoured). Undecodable bytes raise a :class:`DataError` naming the line and the byte.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.csv")
    >>> _ = open(p, "wb").write("question\\nK\xf6ln?\\n".encode("latin-1"))
    >>> read_text(p)
    Traceback (most recent call last):
    ...
    evalkit.base.data.DataError: ...x.csv: line 2: not UTF-8 (byte 0xf6 at column 2); pass the file's encoding, e.g. --encoding latin-1
    """
    raw = Path(path).read_bytes()
    enc = encoding or next((e for bom, e in _BOMS if raw.startswith(bom)), "utf-8")
    if encoding is None and not any(raw.startswith(bom) for bom, _ in _BOMS):
        _refuse_other_formats(path, raw)
    try:
        return raw.decode(enc)
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        col = e.start - (raw.rfind(b"\n", 0, e.start) + 1) + 1
        raise DataError(f"{path}: line {line}: not {enc.upper().replace('-SIG', '')} (byte 0x{raw[e.start]:02x} at "
                        f"column {col}); pass the file's encoding, e.g. --encoding latin-1") from None
    except LookupError:
        raise DataError(f"{path}: unknown encoding {enc!r}") from None


# files that are not text, known by their first bytes, and what to do with each
_MAGIC = ((b"PK\x03\x04", "a ZIP archive (an Excel .xlsx workbook is one): save the sheet as CSV (UTF-8) or "
                          "read it with pandas.read_excel and pass the frame to evalkit.evaluate"),
          (b"\x1f\x8b", "gzip-compressed: decompress it first (gunzip FILE)"),
          (b"PAR1", "a Parquet file: give it a .parquet extension"),
          (b"\xd0\xcf\x11\xe0", "an old Excel .xls workbook: save the sheet as CSV (UTF-8)"))


def _refuse_other_formats(path: str | Path, raw: bytes) -> None:
    r"""A binary file named like text, or UTF-16 without its byte-order mark, said for what it is (the advice to
    pass ``--encoding latin-1`` would only turn its bytes into noise).

    >>> _refuse_other_formats("sheet.csv", b"PK\x03\x04rest")
    Traceback (most recent call last):
    ...
    evalkit.base.data.DataError: sheet.csv: not text but a ZIP archive (an Excel .xlsx workbook is one): save the sheet as CSV (UTF-8) or read it with pandas.read_excel and pass the frame to evalkit.evaluate
    >>> _refuse_other_formats("u.csv", "question,answer\n".encode("utf-16-le"))
    Traceback (most recent call last):
    ...
    evalkit.base.data.DataError: u.csv: UTF-16 (little-endian) without a byte-order mark; pass --encoding utf-16-le
    """
    for magic, what in _MAGIC:
        if raw.startswith(magic):
            raise DataError(f"{path}: not text but {what}")
    head = raw[:400]
    if len(head) >= 4 and head.count(0) * 3 >= len(head):  # every other byte NUL: UTF-16 text without its mark
        little = head[1::2].count(0) > head[0::2].count(0)
        raise DataError(f"{path}: UTF-16 ({'little' if little else 'big'}-endian) without a byte-order mark; pass "
                        f"--encoding utf-16-{'le' if little else 'be'}")


def _read_jsonl(path: Path, encoding: str | None = None) -> tuple[pd.DataFrame, list[str]]:
    records, where = [], []
    for lineno, line in enumerate(read_text(path, encoding).splitlines(keepends=True), start=1):
        if not line.strip():
            continue  # blank lines carry no record
        records.append(jsonl_record(path, lineno, line))
        where.append(f"line {lineno}")
    return pd.DataFrame.from_records(records), where


CSV_SEPARATORS = (",", ";", "\t", "|")


def sniff_separator(header_line: str) -> str:
    """The separator of a CSV header line: the most frequent of ``, ; TAB |`` outside quotes (comma on a tie).

    >>> sniff_separator("question;answer;contexts"), sniff_separator("question,answer"), sniff_separator("q\\ta")
    (';', ',', '\\t')
    """
    unquoted = re.sub(r'"[^"]*"', "", header_line)
    counts = {s: unquoted.count(s) for s in CSV_SEPARATORS}
    best = max(CSV_SEPARATORS, key=lambda s: (counts[s], s == ","))
    return best if counts[best] else ","


@contextlib.contextmanager
def _csv_field_limit(at_least: int) -> Iterator[None]:
    """The csv module's field size limit raised to ``at_least`` for the block, then restored: its default (131,072
    characters) refuses a long answer or context that JSONL reads, and the limit is the module's, so it is given
    back rather than left raised."""
    import csv

    before = csv.field_size_limit()
    csv.field_size_limit(max(before, at_least))
    try:
        yield
    finally:
        csv.field_size_limit(before)


def _csv_records(path: Path, text: str, sep: str) -> tuple[list[str], list[int]]:
    """The header and each record's first line; a record whose field count is not the header's is refused."""
    with _csv_field_limit(len(text) + 1):  # no field is longer than the file
        return _csv_records_within(path, text, sep)


def _csv_records_within(path: Path, text: str, sep: str) -> tuple[list[str], list[int]]:
    import csv
    import io

    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    try:
        header = next(reader)
    except StopIteration:
        raise DataError(f"{path}: empty file (no header row)") from None
    dup = sorted({c for c in header if header.count(c) > 1})
    if dup:
        raise DataError(f"{path}: line 1: duplicate column name(s) {dup}; rename them so each column is named once")
    starts, line = [], reader.line_num + 1
    for rec in reader:
        if rec and len(rec) != len(header):
            raise DataError(f"{path}: line {line}: {len(rec)} field{'s' if len(rec) != 1 else ''} where the header "
                            f"has {len(header)} "
                            f"(separator {sep!r}; a stray quote or separator inside a field? quote such fields, "
                            f"or pass --sep)")
        if rec:
            starts.append(line)
        line = reader.line_num + 1
    return header, starts


def read_csv_file(path: Path, text_sources: set[str], sep: str | None = None,
              encoding: str | None = None) -> tuple[pd.DataFrame, list[str]]:
    import io

    from pandas._libs.parsers import STR_NA_VALUES

    text = read_text(path, encoding)
    if text.startswith("\ufeff"):
        text = text[1:]
    sep = sep or sniff_separator(text.split("\n", 1)[0])
    header, starts = _csv_records(path, text, sep)
    if len(header) == 1 and not sep_given(sep, text):
        log.warning("%s: one column %r; if the file uses another separator pass --sep", path, header[0])
    # text columns are read verbatim (an answer "NA" stays "NA"); so are names (a system called "None" or "TRUE"
    # is that system, not a missing one or a boolean); other columns get pandas' NA guessing
    cols = [c for c in header if c in text_sources or c in NAME_COLUMNS]
    na = {c: sorted(STR_NA_VALUES) for c in header if c not in cols}
    with _csv_field_limit(len(text) + 1):  # the python engine (a separator of several characters) reads with csv
        df = pd.read_csv(io.StringIO(text), sep=sep, dtype={c: str for c in cols}, keep_default_na=False,
                         na_values=na, engine="python" if len(sep) > 1 else "c")
    for c in cols:
        df[c] = df[c].astype(object)
    for c in NAME_COLUMNS:  # an empty name cell is a row without that name
        if c in df.columns:
            df[c] = df[c].map(lambda v: None if v == "" else v)
    for c in df.columns:  # the apostrophe evalkit's CSV writer put before a formula character (guard_formula)
        if _is_text(df[c]):
            back = df[c].map(unguard_formula)
            if not back.equals(df[c]):
                df[c] = back.astype(df[c].dtype)
    return df, [f"row {i + 1} (line {starts[i] if i < len(starts) else i + 2})" for i in range(len(df))]


def sep_given(sep: str, text: str) -> bool:
    return any(s in text.split("\n", 1)[0] for s in CSV_SEPARATORS if s != sep)


def _read_parquet(path: Path) -> pd.DataFrame:
    try:
        return pd.read_parquet(path)
    except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
        raise DataError(f"{path}: not a readable Parquet file ({str(e).splitlines()[0]})") from None


def _read(path: Path, fmt: str, text_sources: set[str], sep: str | None = None,
          encoding: str | None = None) -> tuple[pd.DataFrame, list[str]]:
    if fmt == "jsonl":
        return _read_jsonl(path, encoding)
    if fmt == "csv":
        return read_csv_file(path, text_sources, sep, encoding)
    df = _read_parquet(path)
    return df, [f"row {i + 1}" for i in range(len(df))]


def _list_literal(s: str) -> tuple[list | None, bool]:
    """A JSON list, or a Python list literal (``['a', 'b']``, as ``str(list)`` writes it); the flag says
    which. ``(None, False)`` for anything else (``"[1] Source text ..."`` is one context, not a list)."""
    import ast

    try:
        parsed = json.loads(s)
        return (parsed, False) if isinstance(parsed, list) else (None, False)
    except json.JSONDecodeError:
        pass
    try:
        parsed = ast.literal_eval(s)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None, False
    return (parsed, True) if isinstance(parsed, list) else (None, False)


def _as_contexts(v: Any, at: str, python_lists: list[str] | None = None) -> list[str] | None:
    """A row's contexts as a list of strings; None when the cell is null (no contexts given, which the
    context-based metrics score as undetermined), ``[]`` when an empty list was given (nothing retrieved)."""
    if is_missing(v):
        return None
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if isinstance(v, str):
        s = v.strip()
        if not (s.startswith("[") and s.endswith("]")):
            return [v] if s else []
        parsed, was_python = _list_literal(s)
        if parsed is None:
            return [v]
        if was_python and python_lists is not None:
            python_lists.append(at)
        v = parsed
    if isinstance(v, (list, tuple)):
        out = []
        for j, item in enumerate(v):
            if not isinstance(item, str):
                raise DataError(f"{at}, column 'contexts': item {j} should be a string, got {type(item).__name__} {item!r:.40}")
            out.append(item)
        return out
    raise DataError(f"{at}, column 'contexts': expected a list of strings, a JSON list or a string, got {type(v).__name__} {v!r:.40}")


def _as_text(v: Any, at: str, col: str) -> str | None:
    if is_missing(v):
        return None
    if isinstance(v, str):
        return v
    if isinstance(v, float) and not math.isfinite(v):
        raise DataError(f"{at}, column {col!r}: {v!r} is not text (an infinite number in a text column)")
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)):
        # a JSON number (604) is the text "604"; pandas may have widened an int column to float
        v = v.item() if hasattr(v, "item") else v
        return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
    raise DataError(f"{at}, column {col!r}: expected text, got {type(v).__name__} {v!r:.40}")


def _warn_duplicates(out: pd.DataFrame, source: str, where: list[str]) -> None:
    """Repeated ids are scored (every row is kept) but named: pairing in ``compare`` needs them unique."""
    key = ["id", "system"] if "system" in out.columns else ["id"]
    dup = out.duplicated(subset=key, keep=False)
    if dup.any():
        rows = [where[i] for i in np.flatnonzero(dup.to_numpy())]
        shown = ", ".join(rows[:5]) + (f" and {len(rows) - 5} more" if len(rows) > 5 else "")
        log.warning("%s: duplicate %s at %s: all rows are scored, but comparing systems pairs rows by a unique "
                    "key (evalkit compare --pair-on)", source, "/".join(key), shown)


def canonicalize(df: pd.DataFrame, *, columns: Mapping[str, str] | None = None,
                 source: str = "<DataFrame>", where: list[str] | None = None) -> pd.DataFrame:
    """Rename, validate and normalise an in-memory DataFrame to canonical form.

    Parameters
    ----------
    df : DataFrame
    columns : mapping canonical name -> source column, optional
        Explicit mapping; applied before the ragas aliases.
    source : str
        Name used in error messages.
    where : list of str, optional
        Human description of each row's location (e.g. "line 7"), for messages.

    Returns
    -------
    DataFrame with canonical columns first, then the others in their original order.
    """
    where = where or [f"row {i + 1}" for i in range(len(df))]
    df = _renamed(df, columns, source)
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise DataError(f"{source}: missing required column{'s' if len(missing) > 1 else ''} "
                        f"{', '.join(repr(c) for c in missing)} (found {list(df.columns)}; "
                        f"map yours: --columns {missing[0]}=YOUR_COLUMN on the command line, "
                        f"columns={{'{missing[0]}': 'YOUR_COLUMN'}} in Python)")
    # the columns are gathered first and the frame built once: inserting them one by one is quadratic in the
    # number of columns (10,000 columns took minutes)
    out: dict[str, Any] = {"id": _objects(_ids(df, source, where))}
    for col in ("question", "answer", "ground_truth"):
        if col in df.columns:
            out[col] = _objects([_as_text(v, f"{source}: {where[i]}", col) for i, v in enumerate(df[col].tolist())])
    if "contexts" in df.columns:
        python_lists: list[str] = []
        out["contexts"] = _objects([_as_contexts(v, f"{source}: {where[i]}", python_lists)
                                    for i, v in enumerate(df["contexts"].tolist())])
        if python_lists:
            log.warning("%s: column 'contexts' holds Python list literals (%s%s); read them as lists of passages "
                        "(write JSON lists to be unambiguous)", source,
                        ", ".join(a.split(": ", 1)[-1] for a in python_lists[:3]),
                        f" and {len(python_lists) - 3} more" if len(python_lists) > 3 else "")
    for col in ("system", "question_type"):
        if col in df.columns:
            out[col] = _objects([None if is_missing(v) else str(v) for v in df[col].tolist()])
    for col in df.columns:
        if col not in out:  # as assigning the values to a column would read them (pandas infers their type)
            out[col] = pd.Series(df[col].to_numpy())
    order = [c for c in CANONICAL_COLUMNS if c in out] + [c for c in out if c not in CANONICAL_COLUMNS]
    frame = pd.DataFrame({c: out[c] for c in order}, index=range(len(df)))
    _warn_duplicates(frame, source, where)
    return frame


def _objects(values: list) -> pd.Series:
    """A column of Python objects, kept as they are (object dtype: text is not turned into a string dtype)."""
    return pd.Series(values, dtype=object)


def _renamed(df: pd.DataFrame, columns: Mapping[str, str] | None, source: str) -> pd.DataFrame:
    """Apply the explicit mapping, then ragas' names for what is still missing."""
    rename: dict[str, str] = {}
    for canon, src in (columns or {}).items():
        if canon not in CANONICAL_COLUMNS:
            raise DataError(f"{source}: column mapping names unknown canonical column {canon!r}; "
                            f"expected one of {list(CANONICAL_COLUMNS)}")
        if src not in df.columns:
            raise DataError(f"{source}: column mapping {canon!r} <- {src!r}, but the data has no column {src!r} "
                            f"(it has {list(df.columns)})")
        rename[src] = canon
    for src, canon in RAGAS_ALIASES.items():
        if src in df.columns and canon not in df.columns and canon not in rename.values():
            rename[src] = canon
    df = df.rename(columns=rename)
    if df.columns.duplicated().any():
        raise DataError(f"{source}: duplicate columns after mapping: {df.columns[df.columns.duplicated()].tolist()}")
    return df


def _ids(df: pd.DataFrame, source: str, where: list[str]) -> list[str]:
    """Each row's id as text; a missing id is generated from the row's position (stable for the file)."""
    ids = []
    for i, v in enumerate(df["id"].tolist() if "id" in df.columns else [None] * len(df)):
        if is_missing(v):
            ids.append(f"row-{i + 1}")
        elif isinstance(v, (str, int, np.integer)):
            ids.append(str(v))
        else:
            raise DataError(f"{source}: {where[i]}, column 'id': expected a string or integer, got {type(v).__name__}")
    return ids


def load(path: str | Path, *, columns: Mapping[str, str] | None = None, format: str | None = None,
         sep: str | None = None, encoding: str | None = None) -> pd.DataFrame:
    """Load an evaluation dataset (CSV, JSONL or Parquet) into the canonical DataFrame.

    Parameters
    ----------
    path : str or Path
    columns : mapping canonical -> source column, optional
        E.g. ``{"answer": "model_output", "contexts": "passages"}``.
    format : {'csv', 'jsonl', 'parquet'}, optional
        Overrides the format inferred from the extension.
    sep : str, optional
        CSV separator; default: sniffed from the header among ``, ; TAB |``.
    encoding : str, optional
        Text encoding; default UTF-8 (a UTF-8 or UTF-16 byte-order mark is honoured).

    Returns
    -------
    DataFrame
        Canonical columns plus the file's other columns. ``df.attrs`` holds
        ``source`` (the path) and ``sha256`` (the file's hash).

    Raises
    ------
    DataError
        Naming the file, row/line and column at fault.

    Examples
    --------
    >>> df = load("data/sample_rag.jsonl")  # doctest: +SKIP
    >>> df.loc[0, "contexts"][:1]  # doctest: +SKIP
    ['Rate Manual, Section 4 ...']
    """
    path = Path(path)
    _check_readable(path)
    fmt = _format_of(path, format)
    text_sources = set(TEXT_COLUMNS) | {"id", "contexts"} | set(RAGAS_ALIASES) | set((columns or {}).values())
    raw, where = _read(path, fmt, text_sources, sep, encoding)
    df = canonicalize(raw, columns=columns, source=str(path), where=where)
    df.attrs["source"] = str(path)
    df.attrs["sha256"] = dataset_sha256(path)
    return df


def require_rows(df: pd.DataFrame, source: Any) -> pd.DataFrame:
    """``df`` when it has a row; a file with a header and no records is refused before any work (a run of nothing
    would exit 0, and a report of nothing would read as a clean one).

    >>> require_rows(pd.DataFrame({"question": []}), "h.csv")
    Traceback (most recent call last):
    ...
    evalkit.base.data.DataError: h.csv: no rows to score (the file has a header and no records)
    """
    if df.empty:
        raise DataError(f"{source}: no rows to score (the file has a header and no records)")
    return df


def _check_readable(path: Path) -> None:
    if not path.exists():
        raise DataError(f"{path}: no such file")
    if path.is_dir():
        raise DataError(f"{path}: is a folder; give a file (evalkit score also takes a folder of Parquet/JSONL parts)")
    if path.stat().st_size == 0:
        raise DataError(f"{path}: empty file (no header row or records)")


def _format_of(path: Path, format: str | None) -> str:
    fmt = format or FORMATS.get(path.suffix.lower())
    if fmt not in ("csv", "jsonl", "parquet"):
        raise DataError(f"{path}: cannot tell the format from the extension {path.suffix!r}; "
                        f"use one of {sorted(FORMATS)} or pass format=")
    return fmt


def read_table(path: str | Path, *, columns: Mapping[str, str] | None = None, sep: str | None = None,
               encoding: str | None = None) -> pd.DataFrame:
    """Read any table of scores and labels (results of ``evalkit score``, or a plain CSV with a score
    and a label column) without requiring the answer columns that scoring needs.

    ``columns`` renames ``{new_name: column_in_file}``. Errors name the file and line; the
    file's SHA-256 is in ``df.attrs["sha256"]``.

    >>> import pandas as pd, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "s.csv")
    >>> pd.DataFrame({"score": [0.1, 0.9], "label": [0, 1]}).to_csv(p, index=False)
    >>> read_table(p).columns.tolist()
    ['score', 'label']
    """
    path = Path(path)
    _check_readable(path)
    df, _ = _read(path, _format_of(path, None), set(), sep, encoding)
    for new, src in (columns or {}).items():
        if src not in df.columns:
            raise DataError(f"{path}: column mapping {new!r} <- {src!r}, but the file has no column {src!r} "
                            f"(it has {list(df.columns)})")
    df = df.rename(columns={src: new for new, src in (columns or {}).items()})
    df.attrs["source"], df.attrs["sha256"] = str(path), dataset_sha256(path)
    return df


def parse_column_mapping(text: str | None) -> dict[str, str]:
    """``"answer=model_output,contexts=docs"`` -> ``{"answer": "model_output", "contexts": "docs"}``.

    >>> parse_column_mapping("answer=model_output, contexts=docs")
    {'answer': 'model_output', 'contexts': 'docs'}
    """
    out: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        canon, sep, src = part.partition("=")
        if not sep or not canon.strip() or not src.strip():
            raise DataError(f"--columns: expected NAME=SOURCE pairs separated by commas, got {part.strip()!r}")
        out[canon.strip()] = src.strip()
    return out


# a cell a spreadsheet would run as a formula starts with one of these (OWASP, "CSV injection")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def guard_formula(value: Any) -> Any:
    """Text that a spreadsheet would run as a formula, written with a leading apostrophe (OWASP's advice); the
    apostrophe is dropped again when evalkit reads the CSV back (:func:`unguard_formula`).

    >>> guard_formula("=cmd|' /C calc'!A0"), guard_formula("-5"), guard_formula(-5), guard_formula("5 - 3")
    ("'=cmd|' /C calc'!A0", "'-5", -5, '5 - 3')
    """
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


def unguard_formula(value: Any) -> Any:
    """The text :func:`guard_formula` wrote, as it was.

    >>> unguard_formula("'=1+1"), unguard_formula("'quoted'"), unguard_formula("it's")
    ('=1+1', "'quoted'", "it's")
    """
    if isinstance(value, str) and value.startswith("'") and value[1:].startswith(FORMULA_STARTS):
        return value[1:]
    return value


def _is_text(column: pd.Series) -> bool:
    """A column that may hold text: object (mixed) or a string dtype; numbers are never guarded."""
    return column.dtype == object or pd.api.types.is_string_dtype(column.dtype)


def csv_cells(frame: pd.DataFrame, formula_guard: bool = True) -> pd.DataFrame:
    """The cells as a CSV holds them: lists and dicts as JSON text, text that starts like a formula guarded
    (:func:`guard_formula`, unless ``formula_guard`` is False); numbers untouched. Returns ``frame`` itself when
    nothing changes."""
    out = frame
    for c in frame.columns:
        if not _is_text(frame[c]):
            continue
        cells = frame[c].map(lambda v: json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v)
        cells = cells.map(guard_formula) if formula_guard else cells
        if not cells.equals(frame[c]):
            out = out.copy() if out is frame else out
            out[c] = cells
    return out


def save(df: pd.DataFrame, path: str | Path, *, formula_guard: bool = True) -> Path:
    """Write a (scored) DataFrame; the format comes from the extension (.parquet, .csv, .jsonl). A CSV guards
    text a spreadsheet would run as a formula (:func:`guard_formula`) unless ``formula_guard`` is False; Parquet
    and JSONL keep the text exact.

    The file is written under a temporary name in the same folder and renamed when complete, so a killed
    process leaves the old file or the new one, never a truncated one.
    """
    from evalkit.base.safeio import atomic_path

    path = Path(path)
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise DataError(f"{path}: unsupported output extension {path.suffix!r}; use .parquet, .csv or .jsonl")
    with atomic_path(path) as tmp:
        if fmt == "parquet":
            df.to_parquet(tmp, index=False)
        elif fmt == "csv":
            csv_cells(df, formula_guard).to_csv(tmp, index=False)
        else:
            df.to_json(tmp, orient="records", lines=True, force_ascii=False)
    return path


# --- the error column -------------------------------------------------------------------------------------------

ERROR_SEPARATOR = " | "
_ERROR_HEAD = re.compile(r"^([A-Za-z_][\w]*): ([A-Za-z_][\w.]*): ")


@dataclass(frozen=True)
class RowError:
    """One metric's failure on one row: the record the ``error`` column holds, one per failed metric.

    The column is text in every saved file (``"metric: Type: message"`` records joined by ``" | "``): this
    class writes it (:func:`error_cell`) and reads it back (:func:`row_errors`), and nothing else splits it.

    >>> cell = error_cell([RowError("relevance", "ValueError", "bad | input"), RowError("hallucination", "E", "y")])
    >>> cell
    'relevance: ValueError: bad | input | hallucination: E: y'
    >>> [e.metric for e in row_errors(cell)], row_errors(cell)[0].message
    (['relevance', 'hallucination'], 'bad | input')
    """

    metric: str
    type: str
    message: str

    def __str__(self) -> str:
        return f"{self.metric}: {self.type}: {self.message}"


def error_cell(errors: Sequence[RowError]) -> str | None:
    """The ``error`` column's text for one row's failures (None when there were none)."""
    return ERROR_SEPARATOR.join(map(str, errors)) if errors else None


def row_errors(cell: Any) -> tuple[RowError, ...]:
    """The records of one ``error`` cell (none for a missing cell). A part that does not start a record
    (``metric: Type: ``) belongs to the message before it: a message may itself hold the separator."""
    if not isinstance(cell, str) or not cell:
        return ()
    out: list[list[str]] = []
    for part in cell.split(ERROR_SEPARATOR):
        head = _ERROR_HEAD.match(part)
        if head or not out:
            out.append([head.group(1), head.group(2), part[head.end():]] if head else ["", "", part])
        else:
            out[-1][2] += ERROR_SEPARATOR + part
    return tuple(RowError(*r) for r in out)


def error_of(cell: Any, metric: str) -> RowError | None:
    """``metric``'s record in one ``error`` cell, or None."""
    return next((e for e in row_errors(cell) if e.metric == metric), None)


# --- the details columns ----------------------------------------------------------------------------------------

class DetailsError(ValueError):
    """A ``<metric>_details`` cell that is not a JSON object (the reader names the row and column)."""


def _plain(value: Any) -> Any:
    """A typed record (any mapping) as a dict and a tuple as a list, all the way down: the JSON shape."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def as_saved(value: Any, *, sort_keys: bool = False) -> Any:
    """``value`` as it reads back once saved as JSON (tuples as lists, keys as text, anything JSON has no type
    for as its ``str``; with ``sort_keys``, every mapping's keys in sorted order): the form a checkpoint manifest
    or a run's metadata holds on disk, so what a run builds in memory compares equal to what an earlier run saved.

    >>> as_saved({"sizes": (1, 2), 3: Path("a")})
    {'sizes': [1, 2], '3': 'a'}
    """
    return json.loads(json.dumps(value, default=str, sort_keys=sort_keys))


def details_cell(details: Mapping[str, Any]) -> str:
    """The ``<metric>_details`` column's text for one Score's details, a dict or a typed record (any mapping,
    :class:`evalkit.metrics.base.Details`): JSON, keys in the metric's own order (deterministic, and it keeps
    the strict metric order of the summary scorers). This is where details are serialised, once.

    >>> details_cell({"cosine": 0.5, "terms": ("Lyon",)})
    '{"cosine": 0.5, "terms": ["Lyon"]}'
    """
    return json.dumps(_plain(details), ensure_ascii=False, default=str)


def details_of_cell(cell: Any) -> dict[str, Any]:
    """One ``<metric>_details`` cell back as a dict: ``{}`` for a missing or blank cell, a dict as given (a
    frame whose readers parsed it already). Anything else raises :class:`DetailsError`.

    >>> details_of_cell('{"cosine": 0.5}'), details_of_cell(None), details_of_cell(" ")
    ({'cosine': 0.5}, {}, {})
    >>> details_of_cell("[1, 2]")
    Traceback (most recent call last):
    ...
    evalkit.base.data.DetailsError: not a JSON object: [1, 2]
    """
    if isinstance(cell, Mapping):
        return dict(cell)
    if is_missing(cell) or (isinstance(cell, str) and not cell.strip()):
        return {}
    if not isinstance(cell, str):
        raise DetailsError(f"not JSON text: {type(cell).__name__}")
    try:
        parsed = json.loads(cell)
    except json.JSONDecodeError as e:
        raise DetailsError(f"not JSON ({e})") from None
    if not isinstance(parsed, dict):
        raise DetailsError(f"not a JSON object: {cell[:80]}")
    return parsed
