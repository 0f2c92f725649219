"""Typed per-row sufficient statistics: the counts a corpus-level (micro) value is computed from.

A metric whose row value is a share of counted things (anchors the contexts support, keywords found,
checks passed) returns those counts as a small frozen type in :attr:`Score.stats`, declared once in
the registry (``Metric.stats``). The runner writes each field as an integer column
``<metric>_<field>`` beside the value and the JSON evidence column, and
:func:`evalkit.decide.aggregate.summary` sums them into the corpus value beside the mean of row values:

* macro (``mean``): every row weighs the same, whatever it counts;
* micro (``micro``): every counted thing weighs the same, so a 20-anchor answer counts 20 times a
  1-anchor answer. ``micro = sum(part) / sum(whole)`` (or ``1 -`` that, for a metric that counts what
  is missing), on the metric's own scale.

Examples
--------
>>> s = KeywordHits(matched=3, expected=4)
>>> s.as_columns("completeness")
{'completeness_matched': 3, 'completeness_expected': 4}
>>> KeywordHits.micro({"matched": 3 + 1, "expected": 4 + 4})
0.5
>>> AnchorSupport.micro({"supported": 1, "anchors": 4})  # unsupported anchors / anchors
0.75
>>> KeywordHits(matched=5, expected=4)
Traceback (most recent call last):
...
ValueError: KeywordHits: matched=5 is more than expected=4
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar, Mapping


@dataclass(frozen=True)
class Ratio:
    """Base of the statistics types: a part of a whole, both non-negative integers.

    Subclasses name the two fields for what they count (first the part, then the whole) and say in
    ``MICRO`` how the corpus value reads. ``COMPLEMENT`` marks a metric that reports the missing share
    (e.g. unsupported anchors), so its micro value is ``1 - part / whole``.
    """

    MICRO: ClassVar[str] = ""
    COMPLEMENT: ClassVar[bool] = False

    def __post_init__(self):
        part, whole = (getattr(self, f.name) for f in fields(self))
        for name, v in zip(self.field_names(), (part, whole)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{type(self).__name__}: {name}={v!r} is not a non-negative integer")
        if part > whole:
            raise ValueError(f"{type(self).__name__}: {self.field_names()[0]}={part} is more than "
                             f"{self.field_names()[1]}={whole}")

    @classmethod
    def field_names(cls) -> tuple[str, str]:
        """The part's and the whole's field names, in that order."""
        part, whole = (f.name for f in fields(cls))
        return part, whole

    @classmethod
    def columns(cls, metric: str) -> tuple[str, str]:
        """The result columns that hold the fields for ``metric``."""
        return tuple(f"{metric}_{f}" for f in cls.field_names())  # type: ignore[return-value]

    def as_columns(self, metric: str) -> dict[str, int]:
        return {c: getattr(self, f) for c, f in zip(self.columns(metric), self.field_names())}

    @classmethod
    def micro(cls, sums: Mapping[str, float]) -> float | None:
        """The corpus value from summed fields, as a share in 0..1; None when the whole is 0."""
        part, whole = (sums[f] for f in cls.field_names())
        if not whole:
            return None
        share = part / whole
        return 1.0 - share if cls.COMPLEMENT else share


@dataclass(frozen=True)
class AnchorSupport(Ratio):
    """``hallucination``: anchors (numbers, dates, names, claims) in the answer, and those the contexts support."""

    supported: int
    anchors: int
    MICRO: ClassVar[str] = "unsupported anchors / anchors, over all rows"
    COMPLEMENT: ClassVar[bool] = True


@dataclass(frozen=True)
class KeywordHits(Ratio):
    """``completeness``, ``keyword_coverage``, ``number_match``: expected keywords or values, and those found."""

    matched: int
    expected: int
    MICRO: ClassVar[str] = "keywords found / keywords expected, over all rows"


@dataclass(frozen=True)
class CheckPasses(Ratio):
    """``fact_checks``: checks run on the answer, and those it passed."""

    passed: int
    checks: int
    MICRO: ClassVar[str] = "checks passed / checks run, over all rows"


@dataclass(frozen=True)
class NovelTokens(Ratio):
    """``novel_token_rate``: answer word tokens, and those absent from the contexts."""

    novel: int
    tokens: int
    MICRO: ClassVar[str] = "novel tokens / answer tokens, over all rows"
