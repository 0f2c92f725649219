"""How light the core is: ``evalkit --help`` and ``import evalkit`` against a bare Python start, as ratios measured
side by side in one run, and what the import loads (evalkit modules, heavy libraries). With ``--against REV`` the
same for a revision's checkout (a git worktree), interleaved.

Each measurement is a fresh process (median of ``--repeats``); the editable install's import hook is bypassed so
each side imports its own tree.

    .venv/bin/python benchmarks/bench_import.py --against 8d57e98
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("sklearn", "scipy", "torch", "matplotlib", "papermill", "httpx", "pandas", "spacy")
# the editable install's finder would import this tree whatever sys.path says: drop it, put the side's tree first
PRELUDE = ("import sys; sys.meta_path = [f for f in sys.meta_path if 'ditable' not in type(f).__name__ "
           "and 'ditable' not in getattr(f, '__name__', '')]; sys.path.insert(0, {root!r})\n")
HELP = "import evalkit.cli\ntry:\n    evalkit.cli.main(['--help'])\nexcept SystemExit:\n    pass"
LOADED = ("import evalkit\nmods = [m for m in sys.modules if m == 'evalkit' or m.startswith('evalkit.')]\n"
          f"print(len(mods), ','.join(x for x in {HEAVY!r} if x in sys.modules))")


def timed(code: str, repeats: int) -> float:
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def side(root: Path, repeats: int) -> dict:
    pre = PRELUDE.format(root=str(root))
    out = subprocess.run([sys.executable, "-c", pre + LOADED], capture_output=True, text=True, check=True).stdout.split()
    return {"help_s": timed(pre + HELP, repeats), "import_s": timed(pre + "import evalkit", repeats),
            "modules": int(out[0]), "heavy": out[1] if len(out) > 1 else ""}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--against", help="a git revision to measure beside this tree")
    ap.add_argument("--repeats", type=int, default=11)
    args = ap.parse_args(argv)
    bare = timed("pass", args.repeats)
    sides = {"this tree": ROOT}
    with tempfile.TemporaryDirectory() as tmp:
        if args.against:
            where = Path(tmp) / "rev"
            subprocess.run(["git", "worktree", "add", "--detach", "-f", str(where), args.against], cwd=ROOT,
                           check=True, capture_output=True)
            sides = {args.against: where, **sides}
        try:
            rows = {name: side(root, args.repeats) for name, root in sides.items()}
        finally:
            if args.against:
                subprocess.run(["git", "worktree", "remove", "--force", str(where)], cwd=ROOT, capture_output=True)
    print(f"bare Python start: {bare * 1000:.0f} ms (median of {args.repeats})\n")
    print("| tree | evalkit --help | ratio to bare | import evalkit | ratio | evalkit modules loaded | heavy libraries |")
    print("|---|---|---|---|---|---|---|")
    for name, r in rows.items():
        print(f"| {name} | {r['help_s'] * 1000:.0f} ms | {r['help_s'] / bare:.1f}x | {r['import_s'] * 1000:.0f} ms | "
              f"{r['import_s'] / bare:.1f}x | {r['modules']} | {r['heavy'] or 'none'} |")


if __name__ == "__main__":
    main()
