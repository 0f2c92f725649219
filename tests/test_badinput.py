"""The bad-input corpus (tests/badinput/cases.yaml): every case through the real CLI, in a fresh folder.

For each case: the exit code; the first line on stderr, which names the file and, where one applies, the line
or key; the outputs that must not exist; and, for every case, every file it started with is byte-identical
afterwards and no partial file (temporary, lock, partial) is left anywhere under the folder.
"""
from __future__ import annotations

import hashlib
import logging
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from evalkit import cli

CORPUS = yaml.safe_load((Path(__file__).parent / "badinput" / "cases.yaml").read_text(encoding="utf-8"))
CASES = CORPUS["cases"]
PARTIAL = re.compile(r"(\.tmp$|\.lock$|\.partial)")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_case(root: Path, case: dict) -> dict[Path, str]:
    files = {**CORPUS["common"], **(case.get("files") or {})}
    encodings = case.get("encodings") or {}
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text.encode(encodings.get(name, "utf-8")))
    for name, n in (case.get("nested") or {}).items():  # too deep to write out: prefix, depth x open/close, suffix
        text = n["prefix"] + n["open"] * n["depth"] + n["close"] * n["depth"] + n["suffix"]
        (root / name).write_text(text, encoding="utf-8")
    for link, target in (case.get("symlinks") or {}).items():
        (root / link).symlink_to(root / target)
    return {p: _sha(p) for p in root.rglob("*") if p.is_file() and not p.is_symlink()}


def _first_stderr_line(err: str) -> str | None:
    # progress lines ("evalkit: 2/2 rows ...") report, they do not judge: the first other line is the verdict
    lines = [ln for ln in err.splitlines() if ln.strip() and not re.match(r"evalkit: \d+/\d+ rows", ln)]
    return lines[0] if lines else None


@pytest.fixture()
def stderr_logging(capsys):
    """The CLI's log lines on the (captured) stderr, formatted as the CLI formats them."""
    import sys

    logger = logging.getLogger("evalkit")
    handlers = []

    def attach():
        handler = logging.StreamHandler(sys.stderr)  # capsys's stream, current once the test runs
        handler.setFormatter(logging.Formatter("evalkit: %(message)s"))
        logger.addHandler(handler)
        handlers.append(handler)
    old = logger.propagate
    logger.propagate = False
    yield attach
    for h in handlers:
        logger.removeHandler(h)
    logger.propagate = old


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_bad_input(case, tmp_path, monkeypatch, capsys, stderr_logging):
    before = _write_case(tmp_path, case)
    parts_before = {p for p in tmp_path.iterdir() if p.name.endswith(".parts")}  # an earlier run's are kept
    monkeypatch.chdir(tmp_path)
    stderr_logging()
    rc = cli.main([str(a) for a in case["argv"]])
    err = capsys.readouterr().err
    assert rc == case["exit"], err
    first = _first_stderr_line(err)
    if case["first_line"] is None:
        assert first is None, err
    else:
        assert first is not None and re.search(case["first_line"], first), f"first stderr line: {first!r}"
        assert first.startswith("evalkit: "), first
    for p, digest in before.items():  # nothing the user owns changed
        assert p.exists() and _sha(p) == digest, f"{p} was changed or removed"
    left = [str(p) for p in tmp_path.rglob("*") if PARTIAL.search(p.name)]
    assert not left, f"partial files left: {left}"
    for name in case.get("absent") or []:
        assert not (tmp_path / name).exists()
    if rc != 0:
        assert not any(p.name.endswith(".parts") and p not in parts_before for p in tmp_path.iterdir()), \
            "a failed run left a parts folder"
    for name, cols in (case.get("output_has_columns") or {}).items():
        out = pd.read_csv(tmp_path / name)
        assert set(cols) <= set(out.columns), list(out.columns)
    for name, values in (case.get("output_values_not") or {}).items():
        out = pd.read_csv(tmp_path / name)
        for col, v in values.items():
            assert v not in out[col].astype(str).tolist()


def test_corpus_counts():
    """The corpus covers the issue's cases: the data-loss ones and at least 50 in all."""
    assert len(CASES) >= 50 and sum(bool(c.get("loss")) for c in CASES) >= 12
    assert len({c["name"] for c in CASES}) == len(CASES)
