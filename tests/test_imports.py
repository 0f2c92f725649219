"""The import graph follows the folders, and the folders follow the road a record travels: load (text, base) ->
score (run) -> decide -> publish.

Every module under evalkit/ is parsed with ``ast`` (nothing is imported); every import of an evalkit module,
at module level or inside a function (and ``importlib.import_module("evalkit...")``), is an edge. Two rules:

* no cycle, at any level (a function-level import that closes a loop is still a loop in the design);
* no upward import: a module imports only from its own floor or the floors below it (FLOORS, bottom first).

A module's room is its folder under evalkit/ (evalkit.decide.calibrate.estimate -> decide). Only ``__init__``,
``cli`` and ``_version`` live at the top; a new top-level module fails the test: put it in the room of its step.
When a lower room needs something from a higher one, move that thing down; do not move the module up or exempt it
here.
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "evalkit"

# Bottom first; each floor is a set of rooms (folders under evalkit/, or the three top-level modules).
LAYERS: list[tuple[str, frozenset[str]]] = [
    ("text", frozenset({"text"})),  # tokens, numbers, units, dates, names, abstention, language: plain text in,
    # plain values out, below everything (the config names a tokenizer; the signature signs it)
    ("load", frozenset({"base", "_version"})),  # configuration, data, safe writing, signature, nlp, encoders
    ("judge", frozenset({"judge"})),  # the judge protocol, client, cache, prompts: nothing from metrics/
    ("testing", frozenset({"testing"})),  # the scripted judge server: never the code it stands in for
    ("score", frozenset({"metrics"})),  # the registry and every metric (ragas' adapter, summary scorers)
    ("run", frozenset({"run"})),  # runner (one planner), resources, stream (checkpointed chunks), engine (Dask)
    ("decide", frozenset({"decide"})),  # evaluate's front door, verdict, profiles, gate, aggregate, compare, calibrate/
    ("publish", frozenset({"publish"})),  # experiment, analysis, plots, tables, notebook, report, paper, lab, view/
    ("top", frozenset({"cli", "__init__"})),
]
RANK = {name: i for i, (_, names) in enumerate(LAYERS) for name in names}


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int

    def where(self) -> str:
        return f"{self.source} -> {self.target} (line {self.line})"


def modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the package: dotted name -> (file, is a package). Folders without __init__.py (the
    jupytext notebooks) are not part of the package's import graph."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        if not all((PACKAGE.parent / Path(*rel.parts[:i]) / "__init__.py").exists() for i in range(1, len(rel.parts))):
            continue
        parts = list(rel.parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


def _known(name: str, mods) -> str:
    """The longest prefix of ``name`` that is a module (``evalkit.metrics.REGISTRY`` -> ``evalkit.metrics``)."""
    while name not in mods and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


_LAZY_TARGET = re.compile(r"evalkit(\.\w+)+:\w*")


def _targets(node: ast.AST, module: str, is_pkg: bool, mods) -> list[str]:
    if isinstance(node, ast.Import):
        return [_known(a.name, mods) for a in node.names if a.name.split(".")[0] == "evalkit"]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_pkg else module.split(".")[:-1]
            base = base[:len(base) - (node.level - 1)]
            origin = ".".join(base + ([node.module] if node.module else []))
        else:
            origin = node.module or ""
        if origin.split(".")[0] != "evalkit":
            return []
        return [f"{origin}.{a.name}" if f"{origin}.{a.name}" in mods else _known(origin, mods) for a in node.names]
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and _LAZY_TARGET.fullmatch(node.value):
        return [_known(node.value.split(":")[0], mods)]  # a lazy import, "evalkit.module:attribute"
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        fn = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        arg = node.args[0].value
        if fn in ("import_module", "__import__") and isinstance(arg, str) and arg.split(".")[0] == "evalkit":
            return [_known(arg, mods)]
    return []


def import_graph() -> list[Edge]:
    mods = modules()
    edges = set()
    for module, (path, is_pkg) in mods.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            edges |= {Edge(module, t, node.lineno) for t in _targets(node, module, is_pkg, mods) if t != module}
    return sorted(edges, key=lambda e: (e.source, e.line, e.target))


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def cycles(edges: list[Edge]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.source, set()).add(e.target)
        graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_every_module_is_on_the_road():
    unplaced = sorted({m for m in modules() if layer_of(m) not in RANK})
    assert not unplaced, f"add these modules to LAYERS in tests/test_imports.py: {unplaced}"


def test_the_graph_is_found():
    """The parser sees imports of every kind, so the rules below cannot pass on an empty graph."""
    found = {(e.source, e.target) for e in import_graph()}
    assert ("evalkit.run.runner", "evalkit.metrics") in found  # from .metrics import ... (module level)
    assert ("evalkit.metrics.summarization.labels_offline", "evalkit.text") in found  # from ...text import (level 3)
    assert ("evalkit.run.resources", "evalkit.base.nlp") in found  # inside a function
    assert ("evalkit", "evalkit.decide.calibrate") in found  # "evalkit.decide.calibrate:" in the lazy public face


def shortest_loop(component: list[str], edges: list[Edge]) -> list[Edge]:
    """One shortest loop through the first module of a cycle, edge by edge, to say where to cut."""
    inside = [e for e in edges if e.source in component and e.target in component]
    start = component[0]
    paths: dict[str, list[Edge]] = {start: []}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for e in (e for e in inside if e.source == v):
                if e.target == start:
                    return paths[v] + [e]
                if e.target not in paths:
                    paths[e.target] = paths[v] + [e]
                    nxt.append(e.target)
        frontier = nxt
    return []


def test_no_cycle():
    edges = import_graph()
    found = cycles(edges)
    assert not found, "import cycles (break each by moving the shared piece down):\n" + "\n".join(
        "  " + " -> ".join(e.where() for e in shortest_loop(c, edges)) + f"  [{len(c)} modules in the cycle]"
        for c in found)


def test_no_upward_import():
    upward = [e for e in import_graph()
              if layer_of(e.target) in RANK and RANK.get(layer_of(e.source), -1) < RANK[layer_of(e.target)]]
    assert not upward, "imports against the road (move what is needed down instead):\n" + "\n".join(
        f"  {e.where()}: {LAYERS[RANK[layer_of(e.source)]][0]} imports {LAYERS[RANK[layer_of(e.target)]][0]}"
        for e in upward)


def test_judge_imports_nothing_from_metrics():
    assert not [e.where() for e in import_graph() if layer_of(e.source) == "judge" and layer_of(e.target) == "metrics"]


# --- the light core ----------------------------------------------------------------------------------------------
HEAVY = ("sklearn", "scipy", "torch", "transformers", "matplotlib", "seaborn", "papermill", "nbformat", "nbconvert",
         "httpx", "ragas", "spacy", "nltk", "dask", "ipywidgets", "latex2mathml")
# what a run needs: data, config, text, the registry (entries only), runner, verdict, aggregate, thresholds
CORE_ENTRY = "from evalkit import load, evaluate, summary, apply_verdicts, REGISTRY, get_metric, EvalConfig"
LAYERS_OUTSIDE_THE_CORE = ("evalkit.publish.report", "evalkit.publish.notebook", "evalkit.publish.paper", "evalkit.publish.plots", "evalkit.publish.view",
                           "evalkit.judge", "evalkit.run.stream", "evalkit.run.engine", "evalkit.base.sources", "evalkit.testing",
                           "evalkit.decide.calibrate", "evalkit.decide.compare", "evalkit.publish.analysis", "evalkit.publish.lab")


def _loaded_after(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport sys\nprint('\\n'.join(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def test_import_evalkit_is_light():
    loaded = _loaded_after("import evalkit")
    mine = [m for m in loaded if m == "evalkit" or m.startswith("evalkit.")]
    assert len(mine) <= 12, mine
    assert not [m for m in loaded if m.split(".")[0] in HEAVY]
    assert not [m for m in loaded if m.split(".")[0] in ("pandas", "numpy")]  # not even the data libraries


def test_the_core_loads_nothing_heavy_and_no_layer():
    loaded = _loaded_after(CORE_ENTRY)
    assert not [m for m in loaded if m.split(".")[0] in HEAVY], [m for m in loaded if m.split(".")[0] in HEAVY]
    assert not [m for m in loaded if m.startswith(LAYERS_OUTSIDE_THE_CORE)]
    assert "evalkit.metrics.lexical" not in loaded  # the declarations are collected when the registry is first read


def test_reading_the_registry_loads_the_declarations_not_what_the_metrics_run_on():
    """Each metric is declared in its own module; collecting the declarations imports those modules, and none of
    scikit-learn, SciPy, spaCy, PyTorch, httpx or ragas, which load when a metric runs."""
    loaded = _loaded_after("from evalkit.metrics import REGISTRY\nlist(REGISTRY)")
    from evalkit.metrics import DECLARING_MODULES

    assert {f"evalkit.metrics.{m}" for m in DECLARING_MODULES} <= set(loaded)
    assert not [m for m in loaded if m.split(".")[0] in HEAVY + ("pandas",)], \
        [m for m in loaded if m.split(".")[0] in HEAVY + ("pandas",)]


def test_a_lazy_name_loads_its_layer_on_first_use():
    loaded = _loaded_after("import evalkit\nevalkit.calibrate")
    assert "evalkit.decide.calibrate" in loaded and "evalkit.publish.report" not in loaded
    loaded = _loaded_after("import evalkit.metrics as m\nm.get_metric('relevance').fn")
    assert "evalkit.metrics.lexical" in loaded and "sklearn" not in {x.split(".")[0] for x in loaded}
    loaded = _loaded_after("import evalkit.metrics as m\nm.get_metric('relevance').fn('Where?', 'In Rome.')")
    assert "sklearn" in {x.split(".")[0] for x in loaded}  # what relevance runs on loads when it runs


def test_cli_help_loads_no_layer():
    loaded = _loaded_after("import sys\nsys.argv = ['evalkit', '--help']\nimport evalkit.cli\n"
                           "try:\n    evalkit.cli.main(['--help'])\nexcept SystemExit:\n    pass")
    assert not [m for m in loaded if m.split(".")[0] in HEAVY + ("pandas", "numpy")]


def test_the_architecture_count_reads_the_folders():
    """benchmarks/import_graph.py (the numbers the closing note quotes) counts the folders this test declares:
    one room per folder, no cycle, floors no more than declared; its walk traces a real evaluate call."""
    root = PACKAGE.parent
    r = subprocess.run([sys.executable, str(root / "benchmarks" / "import_graph.py"), "--walk"], cwd=root,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    import json

    out = json.loads(r.stdout)
    assert set(out["per_room"]) == {room for _, rooms in LAYERS for room in rooms}
    assert out["cycles"] == 0 and out["modules"] == len(modules())
    assert out["floors"] <= out["hand_floors"] == len(LAYERS)
    assert sum(room["modules"] for room in out["per_room"].values()) == out["modules"]
    assert out["walk"]["hops"] > 0 and "evalkit.run.runner" in out["walk"]["modules"]


def test_no_module_imports_another_modules_private_names():
    """A name with a leading underscore belongs to its module: one another module needs is public there (the dry
    run once reached into the runner's private functions instead of sharing its planner)."""
    found = []
    for module, (path, is_pkg) in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "evalkit":
                found += [f"{module} imports {node.module}.{a.name} (line {node.lineno})" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")]
    assert not found, "\n".join(found)


def test_checking_a_config_loads_no_stop_word_package():
    """A config names its stop-word list; checking the name does not import scikit-learn or spaCy (1-3 s), which a
    run that reads the list imports when it does."""
    loaded = _loaded_after("from evalkit.base.config import EvalConfig\nEvalConfig.from_dict({'stop_words': 'spacy'})")
    assert not {"sklearn", "spacy"} & {m.split(".")[0] for m in loaded}


def test_every_lazy_public_name_resolves():
    """``import evalkit`` names its 27 public names as "module:attribute" texts, imported on first use (so the
    import stays light); each must still name something after a module moves."""
    code = ("import evalkit\nfor name in evalkit.__all__:\n    assert getattr(evalkit, name) is not None, name\n"
            "print(len(evalkit.__all__))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert int(r.stdout) >= 27
