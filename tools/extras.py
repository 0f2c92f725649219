"""Which of pyproject's extras a virtual environment already holds, so `make` installs only what is missing.

    python tools/extras.py covered EXTRAS VENV   exit 0 when VENV holds every extra of EXTRAS ("dev" or "report,dask")
    python tools/extras.py record EXTRAS VENV    note that EXTRAS were just installed into VENV

An extra that names others (``dev = [..., "evalkit[judge,embed,ragas,dask,lab]"]``) holds them too, so
`make setup EXTRAS=dev,lab` after `make setup` installs nothing, and `make report` (the ``report`` extra) after
`make setup` neither. The record lives in ``VENV/.evalkit-extras.json`` with the hash of the pyproject.toml it was
installed from: an edited pyproject.toml installs again. Standard library only: it runs before anything is installed.
"""
from __future__ import annotations

import hashlib
import json
import re
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
RECORD = ".evalkit-extras.json"
_SELF = re.compile(r"^\s*evalkit\s*\[([^\]]*)\]")


def requested(text: str) -> set[str]:
    """The extras named in ``text`` ("dev,lab", "" for none)."""
    return {e.strip() for e in text.split(",") if e.strip()}


def expand(extras: set[str], optional: dict[str, list[str]]) -> set[str]:
    """``extras`` with every extra they name through ``evalkit[...]``, transitively; an unknown name is an error."""
    out: set[str] = set()
    todo = list(extras)
    while todo:
        name = todo.pop()
        if name in out:
            continue
        if name not in optional:
            raise SystemExit(f"tools/extras.py: no extra {name!r} in {PYPROJECT.name} (extras: {', '.join(optional)})")
        out.add(name)
        for requirement in optional[name]:
            if m := _SELF.match(requirement):
                todo.extend(requested(m.group(1)))
    return out


def _project() -> tuple[str, dict[str, list[str]]]:
    data = PYPROJECT.read_bytes()
    return hashlib.sha256(data).hexdigest(), tomllib.loads(data.decode())["project"]["optional-dependencies"]


def _recorded(venv: Path, digest: str) -> set[str]:
    try:
        record = json.loads((venv / RECORD).read_text())
    except (OSError, ValueError):
        return set()
    return set(record.get("extras", ())) if record.get("pyproject_sha256") == digest else set()


def covered(text: str, venv: Path) -> bool:
    digest, optional = _project()
    return (venv / "bin" / "python").exists() and expand(requested(text), optional) <= _recorded(venv, digest)


def record(text: str, venv: Path) -> set[str]:
    digest, optional = _project()
    held = _recorded(venv, digest) | expand(requested(text), optional)
    (venv / RECORD).write_text(json.dumps({"pyproject_sha256": digest, "extras": sorted(held)}) + "\n")
    return held


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] not in ("covered", "record"):
        print(__doc__, file=sys.stderr)
        return 2
    action, text, venv = argv[0], argv[1], Path(argv[2])
    if action == "covered":
        return 0 if covered(text, venv) else 1
    print(f"{venv} holds the extras: {', '.join(sorted(record(text, venv))) or '(none)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
