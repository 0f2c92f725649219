"""One threshold rule, applied by one function everywhere (calibration, verdict, plots, tables).

A :class:`Threshold` says which metric it reads, the cut value, which side of the cut is
*flagged* (``"above"`` or ``"below"``) and whether the cut value itself is flagged
(``inclusive``). Calibration flags the positive side inclusively (``score >= t`` for a score
that points up at the positive label), so a profile written by ``evalkit calibrate`` and applied by
the verdict flags exactly the rows calibration counted as positive, including rows that sit on
the threshold. The seed's default verdict rules are strict (``hallucination > 0.5``,
``relevance < 0.1``), so they are ``inclusive=False``.

Examples
--------
>>> t = Threshold("hallucination", 0.5, flag="above", inclusive=True)
>>> t.flags(0.5), t.flags(0.49), str(t)
(True, False, 'hallucination >= 0.5')
>>> Threshold("relevance", 0.1, flag="below", inclusive=False).flags(0.1)
False
>>> import numpy as np
>>> Threshold.from_direction("grounding_risk", 0.3, "higher").flags_array(np.array([0.2, 0.3, 0.9])).tolist()
[False, True, True]
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Mapping

import numpy as np

FLAGS = ("above", "below")
OUTCOMES = ("FAIL", "WARN")


class ThresholdError(ValueError):
    """A threshold rule is malformed (unknown side, non-finite value, unknown outcome)."""


@dataclass(frozen=True)
class Threshold:
    """A cut on one metric: ``flag`` side of ``value`` is flagged; ``inclusive`` flags the value itself.

    ``outcome`` is what the verdict says for a flagged row (FAIL or WARN); calibration ignores it.
    """

    metric: str
    value: float
    flag: str = "above"
    inclusive: bool = True
    outcome: str = "FAIL"

    def __post_init__(self) -> None:
        if self.flag not in FLAGS:
            raise ThresholdError(f"threshold on {self.metric!r}: flag must be 'above' or 'below', got {self.flag!r}")
        if self.outcome not in OUTCOMES:
            raise ThresholdError(f"threshold on {self.metric!r}: outcome must be FAIL or WARN, got {self.outcome!r}")
        if isinstance(self.value, bool) or not isinstance(self.value, (int, float)) or not math.isfinite(self.value):
            raise ThresholdError(f"threshold on {self.metric!r}: value must be a finite number, got {self.value!r}")

    @classmethod
    def from_direction(cls, metric: str, value: float, direction: str, *, outcome: str = "FAIL") -> "Threshold":
        """The rule calibration uses: ``direction='higher'`` flags ``score >= value``, 'lower' ``<= value``."""
        if direction not in ("higher", "lower"):
            raise ThresholdError(f"direction must be 'higher' or 'lower', got {direction!r}")
        return cls(metric, value, "above" if direction == "higher" else "below", True, outcome)

    @property
    def operator(self) -> str:
        return {("above", True): ">=", ("above", False): ">", ("below", True): "<=", ("below", False): "<"}[
            (self.flag, self.inclusive)]

    def flags(self, score: float) -> bool:
        """Is one (non-missing) score on the flagged side?"""
        return bool(self.flags_array(np.asarray([score], dtype=float))[0])

    def flags_array(self, scores: np.ndarray) -> np.ndarray:
        """Boolean mask over an array of scores (NaN is never flagged; callers treat it as missing)."""
        s = np.asarray(scores, dtype=float)
        with np.errstate(invalid="ignore"):
            if self.flag == "above":
                return s >= self.value if self.inclusive else s > self.value
            return s <= self.value if self.inclusive else s < self.value

    def describe(self, score: float | None = None) -> str:
        """``'hallucination 0.700 > 0.5'`` (with a score) or ``'hallucination > 0.5'``."""
        shown = f" {score:.3f}" if score is not None else ""
        return f"{self.metric}{shown} {self.operator} {self.value:g}"

    def __str__(self) -> str:
        return self.describe()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, metric: str, d: Mapping[str, Any], *, outcome: str | None = None) -> "Threshold":
        """Read one profile entry: ``{threshold, flag, inclusive}`` or the older ``{threshold, direction}``."""
        if "threshold" not in d:
            raise ThresholdError(f"profile entry {metric!r}: missing 'threshold'")
        value = d["threshold"]
        if "flag" in d:
            return cls(metric, value, d["flag"], bool(d.get("inclusive", True)), outcome or d.get("outcome", "FAIL"))
        t = cls.from_direction(metric, value, d.get("direction", "higher"))
        return cls(metric, t.value, t.flag, t.inclusive, outcome or d.get("outcome", "FAIL"))
