"""How long each numbered notebook takes to open, as a reader opens it in Jupyter: alone (no report), on the
experiment it names by default, once to fill the notebook cache and once more with it warm (issue 42: every
notebook opens in <= 15 s with a warm cache).

Runs each notebook through papermill in a scratch copy of ``notebooks/`` and ``experiments/`` (so the checkout's
own ``.evalkit_cache`` is neither read nor written) and prints a Markdown table of wall seconds::

    python benchmarks/notebook_times.py            # every notebook
    python benchmarks/notebook_times.py 05 09      # some of them
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _open(notebook: Path, experiment: Path, out: Path) -> tuple[float, list[tuple[float, str]]]:
    """Wall seconds of one papermill run, and its slowest cells (seconds, first line)."""
    import nbformat
    import papermill as pm

    start = time.perf_counter()
    pm.execute_notebook(str(notebook), str(out), kernel_name="python3", progress_bar=False, cwd=str(notebook.parent),
                        parameters={"experiment_path": str(experiment)})
    wall = time.perf_counter() - start
    cells = [(c.metadata.get("papermill", {}).get("duration") or 0.0, c.source.split("\n")[0][:60])
             for c in nbformat.read(out, as_version=4).cells if c.cell_type == "code"]
    return wall, sorted(cells, reverse=True)[:2]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("which", nargs="*", help="notebook number prefixes (default: all)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="evalkit-nb-times-") as tmp:
        work = Path(tmp)
        for folder in ("notebooks", "experiments", "data"):
            shutil.copytree(ROOT / folder, work / folder, symlinks=False,
                            ignore=shutil.ignore_patterns(".evalkit_cache", "figures", "*.py"))
        books = sorted((work / "notebooks").glob("[0-9][0-9]_*.ipynb"))
        books = [b for b in books if not args.which or b.name[:2] in args.which]
        print("| notebook | first open (cold cache) | second open (warm cache) | slowest cells, warm |\n"
              "|---|---:|---:|---|")
        for book in books:
            experiment = work / "experiments" / ("summaries.yaml" if book.name.startswith("09") else "default.yaml")
            cold, _ = _open(book, experiment, work / f"cold_{book.name}")
            warm, slow = _open(book, experiment, work / f"warm_{book.name}")
            cells = "; ".join(f"{s:.1f} s `{line}`" for s, line in slow)
            print(f"| {book.stem} | {cold:.1f} s | {warm:.1f} s | {cells} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
