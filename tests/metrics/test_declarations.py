"""A metric is declared where it lives (issue 41, item 2): each metric module's ``METRICS`` holds its registry
entries, and an entry names its function, batch function, details type, evidence reader, worked arithmetic and
citations by reference, all defined in that module (or the shared readers and records of
:mod:`evalkit.metrics.evidence` and :mod:`evalkit.metrics.base`); the registry only collects them."""
from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from evalkit.metrics import DECLARING_MODULES, REGISTRY, references
from evalkit.metrics.registry import RegistryView

# where a field's object may live besides the declaring module: the shared shapes and records
SHARED = {"evidence": {"evalkit.metrics.evidence"}, "details": {"evalkit.metrics.base"}}
FIELDS = ("fn", "batch", "details", "evidence", "worked")


def _declarations() -> list[tuple[str, object]]:
    return [(f"evalkit.metrics.{m}", metric) for m in DECLARING_MODULES
            for metric in importlib.import_module(f"evalkit.metrics.{m}").METRICS]


def test_the_registry_is_the_declarations_in_order():
    # the order is the order of every results file's columns: the table the declarations replaced, by hand
    assert list(REGISTRY.builtin) == [
        "relevance", "completeness", "hallucination", "unsupported_facts", "answers_question", "question_coverage",
        "reference_conflict", "exact_match", "keyword_coverage", "number_match", "answer_completeness",
        "source_citation", "dont_know", "fact_checks", "faithfulness", "context_precision", "context_recall",
        "answer_relevance", "ragas_score", "factual_accuracy", "answer_class", "semantic_similarity", "bert_score_f1",
        "answer_length", "novel_token_rate", "grounding_risk", "support", "twin_lock", "judge_lock",
        "ragas_faithfulness", "ragas_context_precision", "ragas_context_recall"]
    assert [m for _, m in _declarations()] == list(REGISTRY.builtin.values())


@pytest.mark.parametrize("field", FIELDS)
def test_every_part_of_a_metric_lives_in_the_module_that_declares_it(field):
    misplaced = []
    for module, metric in _declarations():
        raw = object.__getattribute__(metric, field)
        if raw is None:
            continue
        assert not isinstance(raw, str), f"{metric.name}.{field} is the text {raw!r}: a reference would do"
        home = raw.__module__
        package = module.rsplit(".", 1)[0] if module.count(".") > 2 else module  # metrics/summarization/*
        if home != module and not home.startswith(package + ".") and home not in SHARED.get(field, set()):
            misplaced.append(f"{metric.name}.{field} in {home}, declared in {module}")
    assert not misplaced, misplaced


def test_every_citation_is_declared_beside_the_metric_that_cites_it():
    for module, metric in _declarations():
        own = getattr(importlib.import_module(module), "REFERENCES", {})
        for key in metric.cites:
            assert key in own, f"{metric.name} cites {key!r}; {module}.REFERENCES has no entry for it"
            assert own[key].lstrip().startswith("@") and "{" + key + "," in own[key]
    assert sorted(references()) == sorted({k for _, m in _declarations() for k in m.cites})


def test_a_module_that_reads_the_registry_while_it_is_collected_gets_a_clear_error():
    import evalkit.metrics.registry as registry

    def declared():
        return {"x": view["relevance"]}  # a metric module reading REGISTRY at import time

    saved = registry._view
    try:
        view = RegistryView(declared)
        with pytest.raises(RuntimeError, match="may not read REGISTRY when it is imported"):
            view.builtin
    finally:
        registry._view = saved  # the process's one view again, as evalkit.metrics made it
    assert REGISTRY.builtin["relevance"].name == "relevance"


def test_a_metric_function_is_importable_from_the_package_by_its_name():
    code = ("from evalkit.metrics import relevance, support_score, twin_lock_score\n"
            "from evalkit.metrics.lexical import relevance as r\nassert relevance is r\n"
            "from evalkit.metrics.evidence import claim_support_evidence\n"  # a reader that moved, by its old path
            "from evalkit.metrics.support import claim_support_evidence as c\nassert claim_support_evidence is c\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
