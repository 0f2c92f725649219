"""Width: loading a CSV of one row and N columns (``evalkit.load``: read, then canonicalise), CPU seconds against N.

Issue 40 measured the old loader quadratic (1,000 columns 3.2 s of CPU, 2,000 18.5 s, 4,000 75.7 s: a 10,000-column
file did not load in 15 minutes); the frame is now built once. The table gives CPU seconds per width and the
per-column cost relative to the narrowest width, measured side by side in one run: a linear loader keeps that
ratio near 1 (a quadratic one doubles it with each doubling of N).

    .venv/bin/python benchmarks/bench_width.py            # writes benchmarks/results/width.md
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def cpu_seconds_to_load(width: int, folder: Path, repeats: int) -> float:
    from evalkit.base.data import load

    path = folder / f"w{width}.csv"
    header = ["question", "answer"] + [f"extra_{i}" for i in range(width)]
    row = ["What is the fee?", "The fee is 40 euros."] + [str(i) for i in range(width)]
    path.write_text(",".join(header) + "\n" + ",".join(row) + "\n")
    best = float("inf")
    for _ in range(repeats):  # the least of a few runs: CPU time another process cannot inflate much
        t0 = time.process_time()
        df = load(path)
        best = min(best, time.process_time() - t0)
    assert df.shape == (1, width + 3), df.shape  # id, question, answer and every extra column, nothing lost
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--widths", default="1000,2000,4000,10000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("-o", "--output", default=str(ROOT / "results" / "width.md"))
    args = ap.parse_args(argv)
    widths = [int(w) for w in args.widths.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        cpu_seconds_to_load(100, Path(tmp), 1)  # warm: imports and first-use costs out of the first width
        rows = [(w, cpu_seconds_to_load(w, Path(tmp), args.repeats)) for w in widths]
    base = rows[0][1] / rows[0][0]
    lines = ["# Loading wide data: CPU seconds against columns", "",
             f"`python benchmarks/bench_width.py --widths {args.widths} --repeats {args.repeats}`: one CSV row, N "
             "extra columns, `evalkit.load` (read and canonicalise), least CPU time of the repeats.", "",
             "| columns | CPU s | per-column cost vs the narrowest |", "|---:|---:|---:|"]
    lines += [f"| {w:,} | {s:.2f} | {s / w / base:.2f}x |" for w, s in rows]
    lines += ["", "Before this change (issue 40): 1,000 columns 3.2 s, 2,000 18.5 s, 4,000 75.7 s (quadratic)."]
    Path(args.output).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
