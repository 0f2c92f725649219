"""Your own metrics: judged metrics defined as data (``custom_metrics:`` in the config) and Python functions
(:func:`register_metric`), registered beside the built-ins.

Where a registration lives
--------------------------
The built-in table is immutable. :data:`evalkit.metrics.REGISTRY` is a view: the built-ins, then the Python
functions registered for the process, then this thread's config metrics. Every reader (the runner, ``evalkit
metrics``, summary, calibration, compare, the report, :func:`evalkit.show`) reads that one view, so a registered
metric is treated like any other. The rules that keep it from surprising anyone:

* a built-in is never replaced (registering its name is an error), so a registration changes no built-in result;
* a config's custom metrics belong to the run: they are registered for the thread that uses the config to score
  (:func:`activate`) and *replace* the metrics an earlier run's config registered there, so a run sees its own
  config's metrics only (the config in use is the definition; its prompt hash is in the run's signature, so two
  definitions never share numbers unnoticed), a run in another thread keeps its own, and they never replace a
  Python one;
* no registered metric may take the name of a canonical input or fixed output column (``answer``, ``verdict``,
  ``error``, ...) or write a column another metric writes (``faithfulness_details``);
* :func:`register_metric` refuses a name already registered unless ``replace=True``;
* :func:`scoped` restores the registrations as they were (tests, notebooks trying definitions out).

A custom judged metric is scored G-Eval style: when the entry gives no ``steps``, the judge writes them once per
run from the criteria (a cached call, so a re-run reuses them); then each row is one structured call whose reply
is ``{"score": <integer in scale>, "reason": "..."}``. The prompt (criteria, steps, rubric, scale) is typed data
(:class:`evalkit.judge.prompts.Prompt`) whose hash enters the run's signature.

Examples
--------
>>> from evalkit.base.config import CustomMetricSpec
>>> spec = CustomMetricSpec.parse({"name": "conciseness", "criteria": "Is the answer short?", "inputs": ["answer"],
...                                "scale": [1, 5]}, "cfg.yaml: custom_metrics[0]")
>>> m = metric_from_spec(spec)
>>> m.range, m.better, m.family, m.resources
((1.0, 5.0), 'higher', 'custom', ('judge',))
>>> m.formula
'judge, integer 1..5: Is the answer short?'
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping, Sequence

from evalkit.base.config import ConfigError, CustomMetricSpec, EvalConfig
from evalkit.judge.client import JudgeError, JudgeNotConfigured, NOT_CONFIGURED
from evalkit.judge.prompts import Prompt, parse_prompt
from evalkit.metrics.base import Details, Metric, Score, Undetermined
from evalkit.metrics.guard import decision_for, skipped_or_declined
from evalkit.metrics.judged import threaded
from evalkit.metrics.registry import (CUSTOM_FAMILY, PYTHON_FAMILY, RegistryView, register, replace_config_metrics,
                       columns_written, register_metric, registered, scoped, unregister_metric)

# ---------------------------------------------------------------------------
# Custom judged metrics from a config
# ---------------------------------------------------------------------------

_LABELS = {"question": "QUESTION", "answer": "ANSWER", "contexts": "CONTEXT", "ground_truth": "REFERENCE ANSWER"}
STEPS_PROMPT = parse_prompt("""---
name: custom_steps
version: 1
returns: {steps: list}
items: {steps: str}
---
You will write the evaluation steps a careful grader follows to assess one criterion of an answer to a
question (G-Eval). Write 3 to 6 short, concrete steps, in order; each step says what to read and what to check.

CRITERION NAME: {{name}}
CRITERION: {{criteria}}
THE GRADER SEES: {{inputs}}

Reply with JSON only: {"steps": ["...", "..."]}
""", "custom_steps")


def _literal(text: str) -> str:
    """User text inside a template: ``{{`` would read as a placeholder."""
    return text.replace("{{", "{ {").replace("}}", "} }")


@dataclass(frozen=True)
class ScalePrompt(Prompt):
    """A custom metric's scoring prompt: the reply is ``{"score": int in [low, high], "reason": str}`` (the schema
    lists the allowed integers, which strict structured outputs accept)."""

    low: int = 1
    high: int = 5

    def json_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {"score": {"type": "integer", "enum": list(range(self.low,
                                                                                                self.high + 1))},
                                                 "reason": {"type": "string"}},
                "required": ["score", "reason"], "additionalProperties": False}

    def check(self, data: Any) -> str | None:
        problem = super().check(data)
        if problem is None and not self.low <= data["score"] <= self.high:
            return f"score {data['score']} is outside the scale {self.low}..{self.high}"
        return problem


def scoring_prompt(spec: CustomMetricSpec, steps: Sequence[str]) -> ScalePrompt:
    """The prompt that scores one row: criteria, steps, rubric, scale and the spec's inputs as sections.

    >>> from evalkit.base.config import CustomMetricSpec
    >>> s = CustomMetricSpec.parse({"name": "tone", "criteria": "Is it polite?", "inputs": ["answer"],
    ...                             "scale": [1, 3], "rubric": {1: "rude", 3: "polite"}}, "x")
    >>> p = scoring_prompt(s, ["Read the answer.", "Judge its politeness."])
    >>> p.name, sorted(p.variables), p.json_schema()["properties"]["score"]["enum"]
    ('custom_tone', ['answer'], [1, 2, 3])
    """
    lo, hi = spec.scale
    lines = [f"You are grading one criterion, {spec.name!r}, on an integer scale from {lo} (worst) to {hi} (best)"
             if spec.better == "higher" else
             f"You are grading one criterion, {spec.name!r}, on an integer scale from {lo} to {hi} ({hi}: the most "
             "of what the criterion describes)", "", f"CRITERION: {_literal(spec.criteria)}", "", "EVALUATION STEPS:"]
    lines += [f"{i}. {_literal(s)}" for i, s in enumerate(steps, start=1)]
    if spec.rubric:
        lines += ["", "RUBRIC:"] + [f"{k}: {_literal(v)}" for k, v in spec.rubric]
    lines.append("")
    for col in spec.inputs:
        lines += [f"{_LABELS[col]}:", "{{" + col + "}}", ""]
    lines.append(f'Reply with JSON only: {{"score": <integer from {lo} to {hi}>, "reason": "<one or two sentences>"}}')
    template = "\n".join(lines) + "\n"
    return ScalePrompt(f"custom_{spec.name}", 1, MappingProxyType({"score": "int"}), template,
                       MappingProxyType({}), MappingProxyType({"reason": "str"}), lo, hi)


def generate_steps(spec: CustomMetricSpec, judge: Any) -> tuple[str, ...]:
    """The evaluation steps for a spec without ``steps``: one judge call (cached like any), asked once per run."""
    d = judge.complete(STEPS_PROMPT, {"name": spec.name, "criteria": _literal(spec.criteria),
                                      "inputs": ", ".join(spec.inputs)}, metric=spec.name).data
    steps = tuple(s.strip() for s in d["steps"] if isinstance(s, str) and s.strip())
    if not steps:
        raise JudgeError(f"judge wrote no evaluation steps for custom metric {spec.name!r}")
    return steps


def _text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "\n\n".join(f"[{i}] {c}" for i, c in enumerate((c for c in value if c), start=1))
    return "" if value is None else str(value)


@dataclass(frozen=True, eq=False)
class JudgedScore(Details):
    """A config's judged metric on one row: the judge's reason for its score, and the scale it scored on."""

    reason: str
    scale: tuple[float, ...]


def score_row(spec: CustomMetricSpec, steps: Sequence[str], *, judge: Any, decision: Any = None,
              **inputs: Any) -> Score:
    """One row: the judge's integer on the spec's scale, with its reason in the details.

    Empty policy: undetermined for an empty answer and an answer that declines (the row's decision), and for any
    other input the spec names that is empty (reason says which)."""
    if judge is None:
        raise JudgeNotConfigured(NOT_CONFIGURED)
    # a judge reads any language; an answer that declines asserts nothing to judge (the verdict counts it apart)
    if "answer" in spec.inputs and (guarded := skipped_or_declined(decision_for(inputs.get("answer"), decision),
                                                                   None)) is not None:
        return guarded
    empty = [c for c in spec.inputs if not _text(inputs.get(c)).strip()]
    if empty:
        return Score(None, Undetermined(f"empty {', '.join(empty)}"))
    d = judge.complete(scoring_prompt(spec, steps), {c: _text(inputs.get(c)) for c in spec.inputs},
                       metric=spec.name).data
    return Score(float(d["score"]), JudgedScore(str(d.get("reason", "")), tuple(spec.scale)))


def metric_from_spec(spec: CustomMetricSpec) -> Metric:
    """The registered form of a custom judged metric: its better side, range (its scale), formula from its criteria."""
    lo, hi = spec.scale

    def row(question: Any = None, answer: Any = None, contexts: Any = None, ground_truth: Any = None, *,
            judge: Any = None, decision: Any = None) -> Score:
        values = {"question": question, "answer": answer, "contexts": contexts, "ground_truth": ground_truth}
        steps = spec.steps or generate_steps(spec, judge)
        return score_row(spec, steps, judge=judge, decision=decision, **{c: values[c] for c in spec.inputs})

    def batch(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None = None,
              resources: Any = None) -> list[Score | Exception]:
        judge = getattr(resources, "judge", None) if resources is not None else (params or {}).get("judge")
        if judge is None:
            raise JudgeNotConfigured(NOT_CONFIGURED)
        steps = spec.steps or generate_steps(spec, judge)  # once per run (and cached), not once per row

        def one(*, judge: Any, decision: Any = None, **cols: Any) -> Score:
            return score_row(spec, steps, judge=judge, decision=decision, **cols)

        return threaded(one)(inputs, params, resources)

    policy = "undetermined for an empty answer" if "answer" in spec.inputs else ""
    others = [c for c in spec.inputs if c != "answer"]
    if others:
        policy += ("; " if policy else "") + f"undetermined when {' or '.join(others)} is empty"
    return Metric(spec.name, row, needs=spec.inputs, better=spec.better, range=(float(lo), float(hi)),
                  batch=batch, resources=("judge",), family=CUSTOM_FAMILY,
                  formula=f"judge, integer {lo}..{hi}: {spec.criteria}", empty_policy=policy,
                  evidence_keys=("reason",), details=JudgedScore)


def spec_sha256(spec: CustomMetricSpec) -> str:
    """A hash of the definition (criteria, steps, scale, rubric, inputs, better side)."""
    import json

    return hashlib.sha256(json.dumps(spec.as_dict(), sort_keys=True).encode()).hexdigest()


def config_metrics(config: EvalConfig) -> list[Metric]:
    """The config's custom metrics as registry entries (not registered)."""
    return [metric_from_spec(s) for s in config.custom_metrics]


def activate(config: EvalConfig) -> list[Metric]:
    """Make the config's custom metrics this thread's config metrics, for its run; returns them.

    A run's config is the definition: the metrics an earlier run's config registered in this thread are dropped
    (a config without ``custom_metrics`` drops them all), one of the same name is replaced; a built-in or a Python
    function's registration is never replaced. Another thread's run keeps its own (two runs with different custom
    metrics in two threads each score and read theirs). Nothing changes when a name is refused
    (:class:`~evalkit.base.config.ConfigError` naming ``custom_metrics[i].name``).
    """
    new = config_metrics(config)
    refused = replace_config_metrics(new)
    if refused is not None:
        i, problem = refused
        raise ConfigError(f"custom_metrics[{i}].name: {problem}")
    return new


def activate_from(results: Any) -> list[Metric]:
    """Register the custom metrics a results frame's run defined (``attrs["evalkit"]["config"]["custom_metrics"]``,
    which a Parquet file keeps), for this thread, so that a results file read in another process (``evalkit
    summary``, ``calibrate``, ``compare``) reads them like any metric; no other thread sees them. Nothing is
    registered when the frame carries none.

    Unlike :func:`activate` this adds to the config metrics registered (``compare`` reads two files, each with its
    own); one of the same name is replaced."""
    entries = (((getattr(results, "attrs", None) or {}).get("evalkit") or {}).get("config") or {}).get("custom_metrics")
    if not entries:
        return []
    from evalkit.base.config import custom_specs

    return [register(m, replace_ok=lambda old: old.family == CUSTOM_FAMILY)
            for m in config_metrics(EvalConfig(custom_metrics=custom_specs(entries, "results metadata")))]


__all__ = ["RegistryView", "register_metric", "unregister_metric", "scoped", "activate", "activate_from",
           "config_metrics", "columns_written",
           "metric_from_spec", "scoring_prompt", "generate_steps", "score_row", "registered", "ScalePrompt",
           "CUSTOM_FAMILY", "PYTHON_FAMILY"]
