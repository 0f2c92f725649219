"""Trivial baselines a hallucination metric must beat (see ``../shared/bench/README.md``).

They are registered (family ``baseline``, not run by default) so that calibration and
benchmark tables put every metric beside them with the same machinery.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from evalkit.text import AnswerDecision, word_tokens
from evalkit.metrics.base import Details, Metric, NoEvidence, Score, Undetermined
from evalkit.metrics.guard import NOT_ENGLISH, decision_for, skipped
from evalkit.metrics.stats import NovelTokens


@dataclass(frozen=True, eq=False)
class NovelTokensFound(Details):
    """The answer's distinct tokens that no context contains, sorted."""

    novel: tuple[str, ...]


def answer_length(answer: str | None, *, decision: AnswerDecision | None = None) -> Score:
    """Number of word tokens in the answer.

    Empty policy: undetermined for an empty or None answer (reason "empty answer"), as in every metric.

    >>> answer_length("The premium is $604.").value
    4.0
    """
    if (guarded := skipped(decision_for(answer, decision), "answer_length")) is not None:
        return guarded
    return Score(float(len(word_tokens(answer))), NoEvidence())


def novel_token_rate(answer: str | None, contexts: Sequence[str] | None, *,
                     decision: AnswerDecision | None = None) -> Score:
    """Share of the answer's word tokens absent from the joined contexts, 0..1 (lower is better).

    Empty policy: undetermined (None) for an empty answer ("empty answer") and for an answer not in English
    ("not English (detected: de)").

    >>> novel_token_rate("The premium is $700.", ["The premium is $604."]).value
    0.25
    """
    if (guarded := skipped(decision_for(answer, decision), "novel_token_rate")) is not None:
        return guarded
    toks = word_tokens(answer)
    if not toks:
        return Score(None, Undetermined("empty answer"))
    ctx = set(word_tokens("\n".join(contexts or [])))
    novel = [t for t in toks if t not in ctx]
    return Score(len(novel) / len(toks), NovelTokensFound(tuple(sorted(set(novel)))),
                 NovelTokens(novel=len(novel), tokens=len(toks)))


# ---------------------------------------------------------------------------------------------------------------
# The declarations: this module's metrics as the registry lists them (evalkit.metrics collects METRICS)
# ---------------------------------------------------------------------------------------------------------------
METRICS = (
    Metric("answer_length", answer_length, needs=("answer",), better="none", range=(0.0, float("inf")),
           details=NoEvidence,
           family="baseline", unit="words", formula="word tokens in the answer (trivial baseline)",
           empty_policy="undetermined for an empty answer"),
    Metric("novel_token_rate", novel_token_rate, needs=("answer", "contexts"), better="lower", range=(0.0, 1.0),
           stats=NovelTokens, details=NovelTokensFound,
           family="baseline",
           formula="answer tokens absent from the contexts / answer tokens (trivial baseline)",
           empty_policy="undetermined for an empty answer" + NOT_ENGLISH, english_only=True),
)
