"""CONTRIBUTING.md's examples run: each ```python block is executed in a fresh interpreter and its output read."""
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)


def test_contributing_says_how_a_metric_is_undetermined_the_way_the_runner_takes_it():
    assert 'Score(None, Undetermined("why"))' in TEXT and 'Score(None, {"reason"' not in TEXT


def test_contributing_python_examples_run(tmp_path):
    blocks = python_blocks()
    assert blocks, "CONTRIBUTING.md shows no python block"
    for block in blocks:
        r = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                           env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)})
        assert r.returncode == 0, r.stderr[-2000:]
    # the metric example: 4 digits of 8 characters, and a blank answer undetermined with its reason
    lines = r.stdout.splitlines()
    assert re.search(r"In 2021\.\s+0\.5\b", lines[1]), r.stdout
    assert "<NA>" in lines[2] and '{"reason": "blank answer"}' in lines[2], r.stdout
