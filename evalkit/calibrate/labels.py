"""Human labels as True/False, refusing anything that is not binary."""
from __future__ import annotations

import math
from typing import Any, Sequence

import pandas as pd

from .core import CalibrationError


def _label_missing(v: Any) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def _seen(values: Sequence[Any], k: int = 6) -> str:
    uniq = sorted({repr(v) for v in values})
    return ", ".join(uniq[:k]) + (f", ... ({len(uniq)} distinct)" if len(uniq) > k else "")


def binary_labels(values: Sequence[Any], *, positive: Any = None, column: str = "label") -> list[bool | None]:
    """Human labels as True/False (None where missing), refusing anything that is not binary.

    Accepted: booleans, the numbers 0/1, the strings "true"/"false" (any case), or any two values
    with ``positive`` naming the positive one (``positive="yes"``). Continuous values, three or more
    classes, or a ``positive`` value no row has are refused with the column and the values seen.

    Examples
    --------
    >>> binary_labels([True, False, None])
    [True, False, None]
    >>> binary_labels(["yes", "no", "Yes"], positive="yes")
    [True, False, True]
    >>> binary_labels([0.2, 0.9], column="human_score")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalkit.calibrate.core.CalibrationError: column 'human_score' is not a binary label: values seen 0.2, 0.9; ...
    """
    vals = [None if _label_missing(v) else (v.item() if hasattr(v, "item") else v) for v in values]
    present = [v for v in vals if v is not None]
    if positive is not None:
        key = str(positive).strip().lower()
        norm = [None if v is None else str(v).strip().lower() for v in vals]
        classes = {v for v in norm if v is not None}
        if len(classes) > 2:
            raise CalibrationError(f"column {column!r} has {len(classes)} classes ({_seen(present)}); "
                                   f"calibration needs two: map the others first")
        if key not in classes and present:
            raise CalibrationError(f"column {column!r}: no row has the positive value {positive!r} "
                                   f"(values seen: {_seen(present)})")
        return [None if v is None else v == key for v in norm]
    out: list[bool | None] = []
    for v in vals:
        if v is None:
            out.append(None)
        elif isinstance(v, bool):
            out.append(v)
        elif isinstance(v, (int, float)) and v in (0, 1):
            out.append(bool(v))
        elif isinstance(v, str) and v.strip().lower() in ("true", "false"):
            out.append(v.strip().lower() == "true")
        else:
            raise CalibrationError(f"column {column!r} is not a binary label: values seen {_seen(present)}; "
                                   f"use booleans or 0/1, or name the positive value (--positive VALUE)")
    return out
