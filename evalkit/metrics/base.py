"""Result and metadata types shared by every metric (no metric logic here)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, Sequence

Direction = Literal["higher", "lower", "none"]
Kind = Literal["score", "bool", "label"]


@dataclass(frozen=True)
class Score:
    """One metric's result on one row.

    ``value`` is a float/bool/label, or None when the metric is *undetermined*
    for this row (``details["reason"]`` says why; aggregates count such rows
    instead of averaging a NaN). ``details`` is JSON-serialisable evidence and
    per-row sufficient statistics (e.g. ``supported``/``total`` anchors).
    """

    value: float | bool | str | None
    details: Mapping[str, Any] = field(default_factory=dict)


BatchFn = Callable[[Mapping[str, Sequence[Any]], Mapping[str, Any], Any], list[Score]]


@dataclass(frozen=True)
class Metric:
    """A registered metric: a pure per-row function plus what the runner needs to call it.

    Attributes
    ----------
    name : registry name, also the output column.
    fn : per-row function ``fn(**inputs, **params) -> Score`` on plain strings.
    needs : canonical columns the metric reads (required).
    optional : canonical columns passed when present (e.g. ``question_type``).
    direction : 'higher' (better), 'lower' (better) or 'none' (labels).
    range : closed interval of the value, or None for labels.
    kind : 'score', 'bool' or 'label'.
    batch : optional column-wise implementation giving the same numbers faster.
    resources : shared resources it needs ('nlp', ...), loaded once by the runner.
    params : config keys it reads from ``EvalConfig.params_for(name)``.
    family : documentation grouping.
    empty_policy : what the metric returns for empty/None inputs.
    extra_columns : detail keys also written as columns ``<name>_<key>`` (e.g. a letter grade).
    derived : True when ``needs`` names other metrics' output columns (the runner runs those first).
    """

    name: str
    fn: Callable[..., Score]
    needs: tuple[str, ...]
    direction: Direction
    range: tuple[float, float] | None
    kind: Kind = "score"
    optional: tuple[str, ...] = ()
    batch: BatchFn | None = None
    resources: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    family: str = ""
    description: str = ""
    empty_policy: str = ""
    extra_columns: tuple[str, ...] = ()
    derived: bool = False
