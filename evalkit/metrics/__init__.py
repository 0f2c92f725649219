"""The metric registry: the built-in metrics, each declared in its own module, and those registered beside them.

Each module of :data:`DECLARING_MODULES` declares its metrics in ``METRICS`` (function, details, evidence reader,
worked arithmetic, citations side by side); :data:`REGISTRY` collects them on its first read. The CLI
(`evalkit metrics`), the runner and the notebooks read the registry; no other place hard-codes metric names.

Examples
--------
>>> from evalkit.metrics import REGISTRY, get_metric
>>> get_metric("relevance").better
'higher'
>>> "hallucination" in REGISTRY
True
"""
from __future__ import annotations

from evalkit.metrics.base import Metric, Score, VerdictRole
from evalkit.metrics.registry import RegistryView, register_metric, unregister_metric

# the modules that declare the built-in metrics (each its METRICS: functions, details, evidence reader, worked
# arithmetic and citations side by side), in the registry's order, which is the order of a results file's columns
DECLARING_MODULES = ("lexical", "anchors", "checks", "reference", "factchecks", "judged", "embedding", "baselines",
                     "grounding", "support", "summarization.scorers", "ragas")


def _declared() -> dict[str, Metric]:
    """Every built-in metric, from its module's declaration (imports the metric modules, not what they run on)."""
    import importlib

    out: dict[str, Metric] = {}
    for module in DECLARING_MODULES:
        for metric in importlib.import_module(f"{__name__}.{module}").METRICS:
            if metric.name in out:
                raise RuntimeError(f"metric {metric.name!r} is declared twice (in evalkit.metrics.{module} too)")
            out[metric.name] = metric
    return out


def references() -> dict[str, str]:
    """BibTeX of every publication a built-in metric cites (``Metric.cites``), by key, from the modules that
    declare them (each its ``REFERENCES``); the paper's bibliography reads it.

    >>> sorted(references())[:2]
    ['es2024ragas', 'laban2022summac']
    """
    import importlib

    out: dict[str, str] = {}
    for module in DECLARING_MODULES:
        out.update(getattr(importlib.import_module(f"{__name__}.{module}"), "REFERENCES", {}))
    return out


# the built-ins (immutable) followed by metrics registered for this process: a config's custom judged metrics
# and register_metric()'s functions (evalkit.metrics.custom says why a view and what may replace what)
REGISTRY: RegistryView = RegistryView(_declared)
# old names still accepted (with a MetricRenamedWarning) and what they now mean
RENAMED = {"grounding": "grounding_risk"}


class MetricRenamedWarning(DeprecationWarning):
    """An old metric name was used; the warning names the new one (``evalkit`` prints it as a note)."""

# grounding_risk reads the support model (the embed extra): without it the default run leaves it out, as it
# leaves out a metric whose columns the data lacks
DEFAULT_METRICS = ("relevance", "completeness", "hallucination", "grounding_risk", "exact_match", "keyword_coverage",
                   "number_match", "answer_completeness", "source_citation", "dont_know", "fact_checks")
# run by default when their resource is available (a configured judge; the embed extra)
OPTIONAL_DEFAULTS = ("faithfulness", "context_precision", "context_recall", "answer_relevance", "ragas_score",
                     "factual_accuracy", "answer_class", "semantic_similarity", "bert_score_f1", "support")


def verdict_roles(profile: str = "seed") -> tuple:
    """The ``(metric, VerdictRole)`` pairs of a named verdict profile, in the order the verdict checks them.

    >>> [name for name, _ in verdict_roles("seed")]
    ['hallucination', 'relevance', 'completeness']
    >>> [name for name, _ in verdict_roles("evalkit")]
    ['unsupported_facts', 'reference_conflict', 'answers_question', 'question_coverage']
    """
    return tuple(sorted(((m.name, m.verdict_role) for m in REGISTRY.values()
                         if m.verdict_role is not None and m.verdict_role.profile == profile),
                        key=lambda pair: pair[1].order))


def _caller_outside_evalkit() -> int:
    """``stacklevel`` of the nearest caller outside evalkit: the warning then names the user's line, and
    Python's default filters (DeprecationWarning shown for ``__main__`` only) show it in scripts and notebooks."""
    import sys
    from pathlib import Path

    package = str(Path(__file__).resolve().parents[1])
    frame, level = sys._getframe(2), 2  # 1 is canonical_name, which warns
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def canonical_name(name: str) -> str:
    """The registry name for ``name``: itself, or a renamed metric's new name with a :class:`MetricRenamedWarning`
    (a ``DeprecationWarning``).

    Examples
    --------
    >>> canonical_name("relevance")
    'relevance'
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     canonical_name("grounding")
    'grounding_risk'
    >>> issubclass(caught[0].category, DeprecationWarning)
    True
    >>> print(caught[0].message)
    metric 'grounding' is now called 'grounding_risk' (lower is better); the old name still works but will be removed
    """
    import warnings

    new = RENAMED.get(name)
    if new is None:
        return name
    warnings.warn(f"metric {name!r} is now called {new!r} ({REGISTRY[new].better} is better); the old name "
                  "still works but will be removed", MetricRenamedWarning, stacklevel=_caller_outside_evalkit())
    return new


def get_metric(name: str) -> Metric:
    """The registered metric called ``name`` (an old name gives the renamed metric and a MetricRenamedWarning;
    KeyError lists the known names)."""
    try:
        return REGISTRY[canonical_name(name)]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known metrics: {', '.join(REGISTRY)}") from None


def __getattr__(name: str):
    """A built-in metric's function by its name (``from evalkit.metrics import relevance``), from the
    declarations."""
    if not name.startswith("_"):
        try:
            builtin = REGISTRY.builtin
        except RuntimeError:  # asked while the declarations are being collected: not a metric function
            builtin = {}
        for metric in builtin.values():
            if getattr(metric.fn, "__name__", None) == name:
                return metric.fn
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["REGISTRY", "verdict_roles", "register_metric", "unregister_metric", "DEFAULT_METRICS", "RENAMED", "Metric",
           "MetricRenamedWarning", "Score", "VerdictRole", "canonical_name", "get_metric", "DECLARING_MODULES",
           "references"]
