"""Metric names are written in the registry and in the metric's own module, and nowhere else in the library
(issue 26, item 3): a list of metrics of a kind is derived from the registry (``REGISTRY.in_family``, a field
such as ``english_only`` or ``cites``), so a new metric reaches every such list.

The modules below still name metrics for a reason that is not (yet) a registry field; each is listed with the
names it may use and why. The test fails on any other literal, so the list only shrinks.
"""
from __future__ import annotations

import ast
from pathlib import Path

from evalkit.metrics import REGISTRY
from evalkit.metrics.base import Metric

PACKAGE = Path(__file__).resolve().parents[1] / "evalkit"

# module (path under evalkit/, no suffix) -> names it may still write, and why
STILL_NAMED = {
    # sub-score and detail keys that share a metric's name (not references to the metric)
    "metrics/summarization/arithmetic": ({"hallucination", "relevance"}, "Twin-Lock sub-scores"),
    "metrics/summarization/labels_judge": ({"hallucination", "relevance"}, "Twin-Lock sub-scores"),
    "metrics/summarization/labels_offline": ({"hallucination", "relevance"}, "Twin-Lock sub-scores"),
    "metrics/summarization/scorers": ({"hallucination"}, "the Twin-Lock sub-score that holds a summary scorer's claims"),
    "metrics/judged": ({"completeness", "dont_know"}, "G-Eval's completeness criterion; the answer_class rule"),
    "testing/judge_server": ({"completeness"}, "G-Eval's completeness criterion in the scripted reply"),
    "metrics/grounding": ({"novel_token_rate", "support"}, "feature and detail keys of the detector"),
    "metrics/ragas": ({"context_precision", "context_recall", "faithfulness"}, "evalkit's judged twins of ragas'"),
    # the public verdict(hallucination, relevance, completeness) names its arguments; support's rule is opt-in
    # (thresholds.support_fail), not a role every verdict needs
    "decide/verdict": ({"completeness", "hallucination", "relevance", "support"}, "the verdict's arguments and rules"),
    # an experiment's key, not a reference to the metric: `fact_checks: rules.yaml` names the rules file that the
    # fact_checks metric reads, and these load it and pass it along
    "publish/experiment": ({"fact_checks"}, "the rules file's key"),
    "base/config": ({"fact_checks"}, "the rules file's key"),
    "publish/report": ({"fact_checks"}, "the rules file's key"),
}


def _own_modules() -> dict[str, set[str]]:
    """Module path -> the metrics whose implementation lives there (the modules of their functions)."""
    own: dict[str, set[str]] = {}
    for name, metric in REGISTRY.builtin.items():
        for field in ("fn", "batch"):
            target = getattr(metric, field)
            if target is not None:
                module = target.__module__.removeprefix("evalkit.").replace(".", "/")
                own.setdefault(module, set()).add(name)
                if module.count("/") >= 2:  # a metric package's other modules (metrics/summarization/*)
                    own.setdefault(module.rsplit("/", 1)[0], set()).add(name)
    return own


def _literals(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in REGISTRY.builtin}


def _named_outside() -> dict[str, set[str]]:
    own, found = _own_modules(), {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("").as_posix().removesuffix("/__init__")
        if rel in ("metrics", "metrics/base", "metrics/registry") or rel.startswith("notebooks/"):
            continue  # the registry itself; notebooks teach named metrics
        names = _literals(path) - own.get(rel, set()) - own.get(rel.rsplit("/", 1)[0], set())
        if names:
            found[rel] = names
    return found


def test_no_metric_name_outside_the_registry_and_its_module():
    extra = {m: sorted(n - STILL_NAMED.get(m, (set(), ""))[0]) for m, n in _named_outside().items()}
    extra = {m: n for m, n in extra.items() if n}
    assert not extra, f"metric names written outside the registry (derive them from REGISTRY): {extra}"


def test_the_list_of_exceptions_is_current():
    found = _named_outside()
    stale = {m: sorted(names - found.get(m, set())) for m, (names, _) in STILL_NAMED.items()}
    assert not {m: n for m, n in stale.items() if n}, f"STILL_NAMED allows names no longer written: {stale}"


def test_the_scan_sees_a_literal(tmp_path):
    # the scan itself can fail: a module naming a metric is found
    p = tmp_path / "m.py"
    p.write_text('SCORERS = ("twin_lock", "judge_lock")\nx = "not a metric"\n')
    assert _literals(p) == {"twin_lock", "judge_lock"}


def test_lists_of_a_kind_come_from_the_registry():
    assert REGISTRY.in_family("summary") == ("twin_lock", "judge_lock")
    assert REGISTRY.in_family("nope") == ()
    probe = Metric("probe_only", str, ("answer",), "higher", (0.0, 1.0), family="summary")
    REGISTRY["probe_only"] = probe
    try:
        assert REGISTRY.in_family("summary") == ("twin_lock", "judge_lock", "probe_only")
    finally:
        del REGISTRY["probe_only"]
