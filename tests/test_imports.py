"""The import graph follows the road a record travels: load -> score -> aggregate/verdict -> calibrate -> report.

Every module under evalkit/ is parsed with ``ast`` (nothing is imported); every import of an evalkit module,
at module level or inside a function (and ``importlib.import_module("evalkit...")``), is an edge. Two rules:

* no cycle, at any level (a function-level import that closes a loop is still a loop in the design);
* no upward import: a module imports only from its own layer or the layers below it (LAYERS, bottom first).

A module that is not in LAYERS fails the test: place it on the road when you add it. When a lower module
needs something from a higher one, move that thing down; do not move the module up or exempt it here.
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "evalkit"

# Bottom first. A module's layer is that of its top-level name under evalkit (evalkit.metrics.summarization.arithmetic
# -> metrics); "__init__" is evalkit/__init__.py, the package's public face, which re-exports from every layer.
LAYERS: list[tuple[str, frozenset[str]]] = [
    # load: configuration, data, text processing and resources every later step shares; the scripted judge
    # server for tests lives here because it must not depend on the code it stands in for
    ("base", frozenset({"config", "thresholds", "safeio", "data", "text", "nlp", "encoders", "_version", "signature",
                        "testing", "sources", "inline_css"})),  # sources: inputs larger than memory, read chunk by
    # chunk; inline_css: a scoped stylesheet written into style attributes
    ("judge", frozenset({"judge"})),  # the judge protocol, client, cache, prompts: nothing from metrics/
    ("score", frozenset({"metrics"})),  # the registry and every metric (ragas' adapter, summary scorers)
    ("run", frozenset({"runner", "run_resources", "stream", "engine"})),  # score(): one execution path over the
    # registry; run_resources: the table of shared resources (load, availability, signature part); stream:
    # the same in checkpointed chunks; engine: where the chunks run (dask)
    ("aggregate/verdict", frozenset({"verdict", "aggregate", "pipeline", "judge_variance", "gate", "profiles"})),  # pipeline: evaluate()
    # = score + verdict; judge_variance: repeated judge runs -> two-level intervals, agreement; gate: evalkit check
    ("calibrate", frozenset({"calibrate"})),
    ("compare", frozenset({"compare"})),
    ("analysis", frozenset({"analysis", "experiment"})),
    ("plots", frozenset({"plots"})),
    ("notebook", frozenset({"notebook", "lessons", "jupyter_hooks"})),  # lessons: "What this means" from numbers;
    # jupyter_hooks: Lab saves the committed notebooks as committed
    ("report", frozenset({"report", "view", "tables", "paper", "explain", "lab"})),  # view: one row's evidence
    # as typed views drawn as HTML or text (show); tables: the one LaTeX/Markdown/HTML table writer; paper: `evalkit paper` (tables, figures,
    # methods, bib); explain: worked examples on a reader's rows; lab: explore and labeler widgets
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
    assert ("evalkit.runner", "evalkit.metrics") in found  # from .metrics import ... (module level)
    assert ("evalkit.metrics.summarization.labels_offline", "evalkit.text") in found  # from ...text import (level 3)
    assert ("evalkit.run_resources", "evalkit.nlp") in found  # inside a function
    assert ("evalkit", "evalkit.calibrate") in found  # "evalkit.calibrate:" in the lazy public face


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
LAYERS_OUTSIDE_THE_CORE = ("evalkit.report", "evalkit.notebook", "evalkit.paper", "evalkit.plots", "evalkit.view",
                           "evalkit.judge", "evalkit.stream", "evalkit.engine", "evalkit.sources", "evalkit.testing",
                           "evalkit.calibrate", "evalkit.compare", "evalkit.analysis", "evalkit.lab")


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
    assert "evalkit.metrics.lexical" not in loaded  # registry entries are names: a metric's code loads when it runs


def test_a_lazy_name_loads_its_layer_on_first_use():
    loaded = _loaded_after("import evalkit\nevalkit.calibrate")
    assert "evalkit.calibrate" in loaded and "evalkit.report" not in loaded
    loaded = _loaded_after("import evalkit.metrics as m\nm.get_metric('relevance').fn")
    assert "evalkit.metrics.lexical" in loaded and "sklearn" in {x.split(".")[0] for x in loaded}


def test_cli_help_loads_no_layer():
    loaded = _loaded_after("import sys\nsys.argv = ['evalkit', '--help']\nimport evalkit.cli\n"
                           "try:\n    evalkit.cli.main(['--help'])\nexcept SystemExit:\n    pass")
    assert not [m for m in loaded if m.split(".")[0] in HEAVY + ("pandas", "numpy")]
