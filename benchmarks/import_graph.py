"""The package's architecture in numbers: rooms, floors, arrows, modules and lines per room, and the walk of one
``evaluate`` call.

A *room* is a folder under ``evalkit/`` (or a module at the top); an *arrow* is a pair of rooms one of which
imports the other; *floors* are the levels of the longest-path layering of the rooms' import graph (the fewest
floors such that every arrow points down), and ``hand floors`` the floors ``tests/test_imports.py`` declares. The
walk calls ``evalkit.evaluate`` on three rows of the sample with one metric and counts every call that crosses
from one evalkit module into another (a *hop*) and the modules it enters.

The import graph is parsed by ``tests/test_imports.py`` of the same checkout (loaded by path), so the numbers and
the import test read one parser. Run from any checkout to compare two of them::

    python benchmarks/import_graph.py            # this checkout
    python benchmarks/import_graph.py --walk     # and the walk of one evaluate call
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _import_test_module():
    spec = importlib.util.spec_from_file_location("_evalkit_import_test", ROOT / "tests" / "test_imports.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # (its dataclasses look themselves up there)
    spec.loader.exec_module(mod)
    return mod


def floors_of(rooms: set[str], arrows: set[tuple[str, str]]) -> dict[str, int]:
    """Longest-path layering: a room's floor is one above the highest floor it imports (0 for a room importing
    no other room)."""
    below = defaultdict(set)
    for a, b in arrows:
        below[a].add(b)
    floor: dict[str, int] = {}

    def of(room: str, path: tuple[str, ...] = ()) -> int:
        if room in path:
            raise ValueError(f"a cycle between rooms: {' -> '.join(path + (room,))}")
        if room not in floor:
            floor[room] = 1 + max((of(r, path + (room,)) for r in below[room]), default=-1)
        return floor[room]
    for r in sorted(rooms):
        of(r)
    return floor


def architecture() -> dict:
    t = _import_test_module()
    mods = t.modules()
    edges = t.import_graph()
    room_of = {m: t.layer_of(m) for m in mods}
    rooms = set(room_of.values())
    arrows = {(room_of[e.source], room_of[e.target]) for e in edges
              if e.target in room_of and room_of[e.source] != room_of[e.target]}
    floor = floors_of(rooms, arrows)
    lines, count = Counter(), Counter()
    for m, (path, _) in mods.items():
        count[room_of[m]] += 1
        lines[room_of[m]] += len(path.read_text(encoding="utf-8").splitlines())
    return {"rooms": len(rooms), "floors": 1 + max(floor.values()), "hand_floors": len(t.LAYERS),
            "arrows": len(arrows), "module_edges": len(edges), "modules": len(mods), "lines": sum(lines.values()),
            "cycles": len(t.cycles(edges)),
            "per_room": {r: {"floor": floor[r], "modules": count[r], "lines": lines[r]}
                         for r in sorted(rooms, key=lambda r: (floor[r], r))}}


def walk_of_evaluate() -> dict:
    """Hops between evalkit modules during one ``evaluate`` call (after a warm-up call, so imports are not
    counted)."""
    import evalkit

    df = evalkit.load(ROOT / "data" / "sample_rag.jsonl").head(3)
    evalkit.evaluate(df, metrics=["relevance"], progress=False)
    hops, entered = Counter(), set()

    def profile(frame, event, arg):
        if event != "call":
            return
        here = frame.f_globals.get("__name__", "")
        caller = frame.f_back.f_globals.get("__name__", "") if frame.f_back else ""
        if here.startswith("evalkit") and caller.startswith("evalkit") and here != caller:
            hops[(caller, here)] += 1
            entered.add(here)
    sys.setprofile(profile)
    try:
        evalkit.evaluate(df, metrics=["relevance"], progress=False)
    finally:
        sys.setprofile(None)
    return {"hops": sum(hops.values()), "distinct_hops": len(hops), "modules_entered": len(entered),
            "modules": sorted(entered)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--walk", action="store_true", help="also trace one evaluate call")
    args = ap.parse_args(argv)
    out = architecture()
    if args.walk:
        out["walk"] = walk_of_evaluate()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
