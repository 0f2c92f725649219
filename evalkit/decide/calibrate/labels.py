"""Human labels as True/False: binary labels, a named positive value, or a comparison on an ordinal scale.

The positive class is the one calibration and the verdict *flag* (a bad answer: ``hallucinated``
True, ``faithful`` N, a Likert score ``<= 2``). :func:`parse_positive` reads how it is named;
:func:`binary_labels` applies it to a column; :func:`suggest_label` proposes it for ``evalkit init``.
"""
from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import pandas as pd

from evalkit.decide.calibrate.core import CalibrationError

_OPS: dict[str, Callable[[float, float], bool]] = {"<=": operator.le, ">=": operator.ge, "<": operator.lt,
                                                   ">": operator.gt, "==": operator.eq, "!=": operator.ne}
_COMPARISON = re.compile(r"^\s*(<=|>=|==|!=|<|>)\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+))\s*$")


@dataclass(frozen=True)
class Positive:
    """Which label values are the positive (flagged) class: one value, or a comparison with a number.

    ``op`` is None for a value (matched as text, case-insensitively, or as a number: ``1`` matches
    ``1.0``), else one of ``<=, >=, <, >, ==, !=`` applied to numeric labels (an ordinal scale).
    """

    value: Any
    op: str | None = None

    def __str__(self) -> str:
        return f"{self.op} {self.value:g}" if self.op else repr(self.value)

    def matches(self, v: Any) -> bool:
        """Is one (non-missing) label value in the positive class?"""
        if self.op is not None:
            return _OPS[self.op](_number(v), self.value)
        if str(v).strip().lower() == str(self.value).strip().lower():
            return True
        a, b = _try_number(v), _try_number(self.value)
        return a is not None and b is not None and a == b


def parse_positive(positive: Any) -> Positive | None:
    """``--positive`` as given: None, a value (``"yes"``, ``1``, ``False``) or a comparison for an ordinal
    label (``"<=2"``, ``"<3"``, ``">=4"``, ``"==1"``).

    Examples
    --------
    >>> parse_positive("<= 2")
    Positive(value=2.0, op='<=')
    >>> parse_positive("Y"), parse_positive(None)
    (Positive(value='Y', op=None), None)
    """
    if positive is None:
        return None
    m = _COMPARISON.match(str(positive)) if isinstance(positive, str) else None
    return Positive(float(m.group(2)), m.group(1)) if m else Positive(positive)


def _try_number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _number(v: Any) -> float:
    x = _try_number(v)
    if x is None:
        raise TypeError(v)
    return x


def _label_missing(v: Any) -> bool:
    """An unlabelled row: None, NA, NaN, or a blank string (a JSONL row's label left "", as a spreadsheet's empty
    cell is read as NaN)."""
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str)
                                                                                   and not v.strip())


def _seen(values: Sequence[Any], k: int = 6) -> str:
    uniq = sorted({repr(v) for v in values})
    return ", ".join(uniq[:k]) + (f", ... ({len(uniq)} distinct)" if len(uniq) > k else "")


def _ordinal_hint(present: Sequence[Any]) -> str:
    """For numeric labels with several classes: how to say which end is bad (``--positive '<=2'``)."""
    nums = [_try_number(v) for v in present]
    if not present or any(x is None for x in nums):
        return "map the others first"
    mid = (min(nums) + max(nums)) / 2
    return (f"for an ordinal scale say which scores are the bad answers with a comparison: --positive '<{mid:g}' "
            f"where low scores are bad, '>{mid:g}' where high ones are; or map the others first")


def binary_labels(values: Sequence[Any], *, positive: Any = None, column: str = "label",
                  require_positive: bool = True) -> list[bool | None]:
    """Human labels as True/False (None where missing), refusing anything that is not binary.

    Accepted: booleans, the numbers 0/1, the strings "true"/"false" (any case), or any two values
    with ``positive`` naming the positive one (``positive="yes"``), or numeric labels of any number
    of classes with ``positive`` a comparison (``positive="<=2"``: a Likert score of 1 or 2 is
    positive). Continuous values, three or more classes without a comparison, a ``positive`` value
    no row has (unless ``require_positive=False``: a labelling study that has seen one class so far), or a
    comparison on non-numeric labels are refused with the column and the values seen.

    Examples
    --------
    >>> binary_labels([True, False, None])
    [True, False, None]
    >>> binary_labels(["yes", "no", "Yes"], positive="yes")
    [True, False, True]
    >>> binary_labels(["Y", "", "N"], positive="Y")  # a blank label is no label
    [True, None, False]
    >>> binary_labels([1, 2, 3, 4, 5], positive="<=2")
    [True, True, False, False, False]
    >>> binary_labels([0.2, 0.9], column="human_score")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalkit.decide.calibrate.errors.CalibrationError: column 'human_score' is not a binary label: values seen 0.2, 0.9; ...
    """
    vals = [None if _label_missing(v) else (v.item() if hasattr(v, "item") else v) for v in values]
    present = [v for v in vals if v is not None]
    pos = parse_positive(positive)
    if pos is not None and pos.op is not None:
        bad = next((i for i, v in enumerate(vals) if v is not None and _try_number(v) is None), None)
        if bad is not None:
            raise CalibrationError(f"column {column!r} row {bad + 1} has {vals[bad]!r}: the comparison "
                                   f"--positive '{pos}' needs numeric labels (values seen: {_seen(present)})")
        out = [None if v is None else pos.matches(v) for v in vals]
        if present and not any(out) and require_positive:
            raise CalibrationError(f"column {column!r}: no row has a value {pos} (values seen: {_seen(present)})")
        return out
    if pos is not None:
        norm = [None if v is None else str(v).strip().lower() for v in vals]
        classes = {v for v in norm if v is not None}
        if len(classes) > 2:
            raise CalibrationError(f"column {column!r} has {len(classes)} classes ({_seen(present)}); "
                                   f"calibration needs two: {_ordinal_hint(present)}")
        out = [None if v is None else pos.matches(v) for v in vals]
        if present and not any(out) and require_positive:
            raise CalibrationError(f"column {column!r}: no row has the positive value {positive!r} "
                                   f"(values seen: {_seen(present)})")
        return out
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


# ---------------------------------------------------------------------------
# Recognising a label column (evalkit init)
# ---------------------------------------------------------------------------

# pairs of (affirmative, negative) spellings a label column may use, compared case-insensitively
_PAIRS = (("y", "n"), ("yes", "no"), ("true", "false"), ("pass", "fail"), ("1", "0"))
# a column named like this says the affirmative value is the good answer, so the bad (flagged) one is the other
_GOOD_NAMES = re.compile(r"faithful|correct|grounded|supported|accurate|relevant|acceptable|valid|factual|"
                         r"approved|(?<![a-z])(?:ok|good|pass(?:ed)?)(?![a-z])", re.I)
_BAD_NAMES = re.compile(r"halluc|wrong|incorrect|unsupported|unfaithful|invalid|fabricat|contradict|toxic|"
                        r"(?<![a-z])(?:error|fail(?:ed)?|bad)(?![a-z])", re.I)


@dataclass(frozen=True)
class LabelSuggestion:
    """A column that looks like a human label, the ``positive`` that flags its bad answers, and why."""

    column: str
    kind: str          # "binary" (two values) or "ordinal" (a 1-5 scale)
    positive: Any      # the value, or a comparison string such as "<=2"
    why: str           # the comment ``evalkit init`` writes beside ``positive:``


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    x = _try_number(v)
    return (f"{x:g}" if x is not None and float(x).is_integer() else str(v)).strip().lower()


def suggest_label(values: Sequence[Any], column: str) -> LabelSuggestion | None:
    """Is this column a human label: Y/N, yes/no, true/false, pass/fail, 0/1 (binary) or integers 1-5
    (Likert)? If so, which class is the bad answer (the positive, flagged class).

    A binary column named like a good property (``faithful``, ``correct``) flags its negative value; one
    named like a fault (``hallucinated``, ``wrong``) flags its affirmative value; pass/fail always flags
    ``fail``; other names flag the affirmative value (and the comment says to check). A 1-5 scale flags
    ``<=2`` (low = bad; use ``>=4`` for a scale where high is bad).

    Examples
    --------
    >>> suggest_label(["Y", "N", "Y"], "faithful").positive
    'N'
    >>> suggest_label([1, 2, 5, 4, 3], "quality").positive
    '<=2'
    >>> suggest_label(["a", "b"], "system") is None
    True
    """
    present = [v.item() if hasattr(v, "item") else v for v in values if not _label_missing(v)]
    if not present:
        return None
    texts = {_text(v) for v in present}
    if len(texts) > 2:
        nums = [_try_number(v) for v in present]
        if all(x is not None and float(x).is_integer() and 1 <= x <= 5 for x in nums) and len(texts) >= 3:
            return LabelSuggestion(column, "ordinal", "<=2", "flagged = scores 1-2 of the 1-5 scale (low = a bad "
                                                             "answer); use '>=4' if 5 is the worst")
        return None
    pair = next((p for p in _PAIRS if texts <= set(p)), None)
    if pair is None or len(texts) < 2:
        return None
    yes, no = pair
    if pair == ("pass", "fail"):
        bad, why = no, "a fail is a bad answer"
    elif _BAD_NAMES.search(column):  # first: "unfaithful" and "incorrect" also contain a good name
        bad, why = yes, "{column} = {value} is a bad answer"
    elif _GOOD_NAMES.search(column):
        bad, why = no, "{column} = {value} is a bad answer"
    else:
        bad, why = yes, "check: is {column} = {value} the bad answer? if not, write the other value"
    spelled = next(v for v in present if _text(v) == bad)
    if isinstance(spelled, bool):
        value: Any = spelled
    elif _try_number(spelled) is not None:
        value = int(_number(spelled))
    else:
        value = str(spelled).strip()
    shown = _text(value) if isinstance(value, bool) else value
    return LabelSuggestion(column, "binary", value, f"flagged = {shown}: " + why.format(column=column, value=shown))
