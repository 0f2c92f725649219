"""Your own metrics: judged metrics defined as data (``custom_metrics:`` in the config) and Python functions
(:func:`register_metric`), registered beside the built-ins.

Where a registration lives
--------------------------
The built-in table is immutable. :data:`evalkit.metrics.REGISTRY` is a view: the built-ins, then one *overlay*
of registered metrics. Every reader (the runner, ``evalkit metrics``, summary, calibration, compare, the report,
:func:`evalkit.show`) reads that one view, so a registered metric is treated like any other. The rules that keep
this process-wide table from surprising anyone:

* a built-in is never replaced (registering its name is an error), so a registration changes no built-in result;
* a config's custom metrics are registered when the config is used to score (:func:`activate`) and *replace*
  the metrics an earlier run's config registered: those are dropped, so a run sees its own config's metrics
  only (the config in use is the definition; its prompt hash is in the run's signature, so two definitions
  never share numbers unnoticed); they never replace a Python one;
* no registered metric may take the name of a canonical input or fixed output column (``answer``, ``verdict``,
  ``error``, ...) or write a column another metric writes (``faithfulness_details``);
* :func:`register_metric` refuses a name already registered unless ``replace=True``;
* :func:`scoped` restores the overlay as it was (tests, notebooks trying definitions out).

A custom judged metric is scored G-Eval style: when the entry gives no ``steps``, the judge writes them once per
run from the criteria (a cached call, so a re-run reuses them); then each row is one structured call whose reply
is ``{"score": <integer in scale>, "reason": "..."}``. The prompt (criteria, steps, rubric, scale) is typed data
(:class:`evalkit.judge.prompts.Prompt`) whose hash enters the run's signature.

Examples
--------
>>> from evalkit.config import CustomMetricSpec
>>> spec = CustomMetricSpec.parse({"name": "conciseness", "criteria": "Is the answer short?", "inputs": ["answer"],
...                                "scale": [1, 5]}, "cfg.yaml: custom_metrics[0]")
>>> m = metric_from_spec(spec)
>>> m.range, m.direction, m.family, m.resources
((1.0, 5.0), 'higher', 'custom', ('judge',))
>>> m.formula
'judge, integer 1..5: Is the answer short?'
"""
from __future__ import annotations

import hashlib
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Iterator, Mapping, MutableMapping, Sequence

from ..config import ConfigError, CustomMetricSpec, EvalConfig
from ..judge.client import JudgeError, JudgeNotConfigured, NOT_CONFIGURED
from ..judge.prompts import Prompt, parse_prompt
from .base import Metric, Score
from .guard import decision_for, skipped
from .judged import threaded

CUSTOM_FAMILY = "custom"  # a config's judged metric
PYTHON_FAMILY = "python"  # a function given to register_metric

_lock = threading.Lock()
_overlay: dict[str, Metric] = {}
_builtin: Mapping[str, Metric] = MappingProxyType({})  # set once, when evalkit.metrics builds its REGISTRY view


# ---------------------------------------------------------------------------
# The registry view and its overlay
# ---------------------------------------------------------------------------


class RegistryView(MutableMapping):
    """The built-in metrics followed by the registered ones (read like a dict; built-ins cannot be replaced).

    Writing (``REGISTRY[name] = metric``, as ``monkeypatch.setitem`` does) registers in the overlay; deleting
    removes from it. Iteration order: built-ins in table order, then registrations in order."""

    def __init__(self, builtin: Mapping[str, Metric]):
        global _builtin
        self._builtin = _builtin = MappingProxyType(dict(builtin))

    @property
    def builtin(self) -> Mapping[str, Metric]:
        return self._builtin

    def __getitem__(self, name: str) -> Metric:
        if name in self._builtin:
            return self._builtin[name]
        with _lock:
            return _overlay[name]

    def __iter__(self) -> Iterator[str]:
        with _lock:
            extra = [n for n in _overlay if n not in self._builtin]
        return iter([*self._builtin, *extra])

    def __len__(self) -> int:
        with _lock:
            return len(self._builtin) + len([n for n in _overlay if n not in self._builtin])

    def __contains__(self, name: object) -> bool:
        if name in self._builtin:
            return True
        with _lock:
            return name in _overlay

    def __setitem__(self, name: str, metric: Metric) -> None:
        if name in self._builtin:
            raise ValueError(f"{name!r} is a built-in metric; built-ins cannot be replaced (choose another name)")
        with _lock:
            _overlay[name] = metric

    def __delitem__(self, name: str) -> None:
        if name in self._builtin:
            raise ValueError(f"{name!r} is a built-in metric; built-ins cannot be removed")
        with _lock:
            del _overlay[name]

    def __repr__(self) -> str:
        return f"RegistryView({list(self)})"


@contextmanager
def scoped() -> Iterator[None]:
    """Registrations made inside the block are undone at its end (the overlay is restored as it was).

    >>> from evalkit.metrics import REGISTRY
    >>> with scoped():
    ...     _ = register_metric("words", lambda answer: float(len(answer.split())), needs=("answer",),
    ...                         direction="none", range=(0, float("inf")))
    ...     "words" in REGISTRY
    True
    >>> "words" in REGISTRY
    False
    """
    with _lock:
        saved = dict(_overlay)
    try:
        yield
    finally:
        with _lock:
            _overlay.clear()
            _overlay.update(saved)


def columns_written(metric: Metric) -> set[str]:
    """The result columns a metric writes: its value, ``<name>_details``, its extra and statistic columns (the
    rule :func:`evalkit.runner.output_columns` applies to the whole registry)."""
    out = {metric.name, f"{metric.name}_details", *(f"{metric.name}_{k}" for k in metric.extra_columns)}
    if metric.stats is not None:
        out |= set(metric.stats.columns(metric.name))
    return out


def _name_problem(metric: Metric, others: Sequence[Metric]) -> str | None:
    """Why ``metric`` may not be registered beside ``others`` (the metrics that stay): None when it may.

    Its columns may not be a canonical input or a fixed output (answer, verdict, error, ...) nor a column another
    metric writes (``faithfulness_details``): the run would overwrite one with the other."""
    from ..config import reserved_columns

    if metric.name in _builtin:
        return f"{metric.name!r} is a built-in metric; choose another name"
    if metric.name in reserved_columns():
        return (f"{metric.name!r} is a column every run reads or writes (an input, the row decision, the verdict or "
                "the errors); its scores would overwrite it: choose another name")
    mine = columns_written(metric)
    for other in [*_builtin.values(), *others]:
        if other.name != metric.name and (clash := mine & columns_written(other)):
            return (f"{metric.name!r} would write column(s) {sorted(clash)}, which metric {other.name!r} writes too; "
                    "choose another name")
    return None


def _register(metric: Metric, *, replace_ok: Callable[[Metric], bool]) -> Metric:
    with _lock:
        problem = _name_problem(metric, list(_overlay.values()))
        if problem:
            raise ValueError(problem)
        old = _overlay.get(metric.name)
        if old is not None and old is not metric and not replace_ok(old):
            raise ValueError(f"a metric {metric.name!r} is already registered ({old.family}); pass replace=True "
                             "to replace it, or choose another name")
        _overlay[metric.name] = metric
    return metric


def register_metric(name: str, fn: Callable[..., Any], *, direction: str, range: tuple[float, float] | None,
                    needs: Sequence[str] = ("answer",), formula: str = "", kind: str = "score",
                    empty_policy: str = "", replace: bool = False) -> Metric:
    """Register a plain Python function on strings as a metric, beside the built-ins.

    ``fn(**{column: value for column in needs}) -> float | bool | str | Score | None`` is called once per row;
    a plain value becomes ``Score(value)`` (None: undetermined). The runner checks the value against ``range``
    and records a failing row's exception in its ``error`` column, as for any metric.

    Parameters
    ----------
    name : registry name and output column (not a built-in's name).
    fn : the per-row function.
    direction : 'higher', 'lower' (which is better) or 'none'.
    range : closed interval of the value, e.g. ``(0, 1)``; None for labels.
    needs : canonical columns it reads (question, answer, contexts, ground_truth, ...).
    formula : one line saying how the value is computed (``evalkit metrics`` prints it).
    kind : 'score', 'bool' or 'label'.
    replace : replace an earlier registration of ``name`` (never a built-in).

    Returns
    -------
    The registered :class:`Metric`.

    Examples
    --------
    >>> import pandas as pd, evalkit
    >>> with scoped():
    ...     _ = evalkit.register_metric("shouting_rate", lambda answer: sum(c.isupper() for c in answer) / len(answer),
    ...                                 direction="lower", range=(0, 1), needs=("answer",),
    ...                                 formula="upper-case letters / characters")
    ...     out = evalkit.evaluate(pd.DataFrame({"question": ["Q"], "answer": ["HI there"]}), ["shouting_rate"],
    ...                            progress=False)
    ...     float(out.loc[0, "shouting_rate"])
    0.25
    """
    if direction not in ("higher", "lower", "none"):
        raise ValueError(f"direction must be 'higher', 'lower' or 'none', got {direction!r}")
    if kind not in ("score", "bool", "label"):
        raise ValueError(f"kind must be 'score', 'bool' or 'label', got {kind!r}")
    if range is not None:
        if len(range) != 2 or not float(range[0]) < float(range[1]):
            raise ValueError(f"range must be (low, high) with low < high, got {range!r}")
        range = (float(range[0]), float(range[1]))
    elif kind == "score":
        raise ValueError("a score needs a range, e.g. range=(0, 1)")
    needs = tuple(needs)

    def row(**inputs: Any) -> Score:
        v = fn(**inputs)
        return v if isinstance(v, Score) else Score(v)

    row.__signature__ = _signature_of(needs)  # the runner passes exactly these columns
    if not isinstance(name, str) or not name:
        raise ValueError(f"register_metric: name must be a non-empty text, got {name!r}")
    metric = Metric(name, row, needs=needs, direction=direction, range=range, kind=kind, family=PYTHON_FAMILY,
                    formula=formula or f"{getattr(fn, '__qualname__', 'function')} (registered Python function)",
                    empty_policy=empty_policy or "as the function returns (None: undetermined)")
    try:
        return _register(metric, replace_ok=lambda old: replace)
    except ValueError as e:
        raise ValueError(f"register_metric: name: {e}") from None


def _signature_of(names: Sequence[str]):
    import inspect

    return inspect.Signature([inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY) for n in names])


def unregister_metric(name: str) -> None:
    """Remove a registered (never a built-in) metric; a name not registered is ignored."""
    with _lock:
        _overlay.pop(name, None)


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

    >>> from evalkit.config import CustomMetricSpec
    >>> s = CustomMetricSpec.parse({"name": "tone", "criteria": "Is it polite?", "inputs": ["answer"],
    ...                             "scale": [1, 3], "rubric": {1: "rude", 3: "polite"}}, "x")
    >>> p = scoring_prompt(s, ["Read the answer.", "Judge its politeness."])
    >>> p.name, sorted(p.variables), p.json_schema()["properties"]["score"]["enum"]
    ('custom_tone', ['answer'], [1, 2, 3])
    """
    lo, hi = spec.scale
    lines = [f"You are grading one criterion, {spec.name!r}, on an integer scale from {lo} (worst) to {hi} (best)"
             if spec.direction == "higher" else
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


def score_row(spec: CustomMetricSpec, steps: Sequence[str], *, judge: Any, decision: Any = None,
              **inputs: Any) -> Score:
    """One row: the judge's integer on the spec's scale, with its reason in the details.

    Empty policy: undetermined for an empty answer (the row's decision) and for any other input the spec names
    that is empty (reason says which)."""
    if judge is None:
        raise JudgeNotConfigured(NOT_CONFIGURED)
    if "answer" in spec.inputs and (guarded := skipped(decision_for(inputs.get("answer"), decision),
                                                        english_only=False)) is not None:
        return guarded
    empty = [c for c in spec.inputs if not _text(inputs.get(c)).strip()]
    if empty:
        return Score(None, {"reason": f"empty {', '.join(empty)}"})
    d = judge.complete(scoring_prompt(spec, steps), {c: _text(inputs.get(c)) for c in spec.inputs},
                       metric=spec.name).data
    return Score(float(d["score"]), {"reason": str(d.get("reason", "")), "scale": list(spec.scale)})


def metric_from_spec(spec: CustomMetricSpec) -> Metric:
    """The registered form of a custom judged metric: direction, range (its scale), formula from its criteria."""
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
    return Metric(spec.name, row, needs=spec.inputs, direction=spec.direction, range=(float(lo), float(hi)),
                  batch=batch, resources=("judge",), family=CUSTOM_FAMILY,
                  formula=f"judge, integer {lo}..{hi}: {spec.criteria}", empty_policy=policy,
                  evidence_keys=("reason",))


def spec_sha256(spec: CustomMetricSpec) -> str:
    """A hash of the definition (criteria, steps, scale, rubric, inputs, direction)."""
    import json

    return hashlib.sha256(json.dumps(spec.as_dict(), sort_keys=True).encode()).hexdigest()


def config_metrics(config: EvalConfig) -> list[Metric]:
    """The config's custom metrics as registry entries (not registered)."""
    return [metric_from_spec(s) for s in config.custom_metrics]


def activate(config: EvalConfig) -> list[Metric]:
    """Make the config's custom metrics the registered config metrics for its run; returns them.

    A run's config is the definition: the metrics an earlier run's config registered are dropped (a config
    without ``custom_metrics`` drops them all), one of the same name is replaced; a built-in or a Python
    function's registration is never replaced. Nothing changes when a name is refused
    (:class:`~evalkit.config.ConfigError` naming ``custom_metrics[i].name``).
    """
    new = config_metrics(config)
    with _lock:
        kept = [m for m in _overlay.values() if m.family != CUSTOM_FAMILY]
        for i, m in enumerate(new):
            old = _overlay.get(m.name)
            problem = _name_problem(m, kept + new[:i]) or (
                f"{m.name!r} is already a metric ({old.family}: {old.formula[:60]}); choose another name"
                if old is not None and old.family != CUSTOM_FAMILY else None)
            if problem:
                raise ConfigError(f"custom_metrics[{i}].name: {problem}")
        for name in [n for n, m in _overlay.items() if m.family == CUSTOM_FAMILY]:
            del _overlay[name]
        _overlay.update({m.name: m for m in new})
    return new


def activate_from(results: Any) -> list[Metric]:
    """Register the custom metrics a results frame's run defined (``attrs["evalkit"]["config"]["custom_metrics"]``,
    which a Parquet file keeps), so that a results file read in another process (``evalkit summary``, ``calibrate``,
    ``compare``) reads them like any metric. Nothing is registered when the frame carries none.

    Unlike :func:`activate` this adds to the config metrics registered (``compare`` reads two files, each with its
    own); one of the same name is replaced."""
    entries = (((getattr(results, "attrs", None) or {}).get("evalkit") or {}).get("config") or {}).get("custom_metrics")
    if not entries:
        return []
    from ..config import _custom_specs

    return [_register(m, replace_ok=lambda old: old.family == CUSTOM_FAMILY)
            for m in config_metrics(EvalConfig(custom_metrics=_custom_specs(entries, "results metadata")))]


def registered() -> dict[str, Metric]:
    """The metrics registered now (beside the built-ins), by name."""
    with _lock:
        return dict(_overlay)


__all__ = ["RegistryView", "register_metric", "unregister_metric", "scoped", "activate", "activate_from",
           "config_metrics", "columns_written",
           "metric_from_spec", "scoring_prompt", "generate_steps", "score_row", "registered", "ScalePrompt",
           "CUSTOM_FAMILY", "PYTHON_FAMILY"]
