"""The row decision as the metrics read it: empty and non-English answers are undetermined, with one reason.

The decision (:class:`evalkit.text.AnswerDecision`: empty, abstained, language) is made once per row by
:func:`evalkit.text.decide_answer`. The runner makes it and passes it to every metric in the input
``decision``; a metric called as a plain function makes it here from its own answer. No metric reads the
answer text to decide it again.

Which metrics apply the language guard is declared once, in the registry (``Metric.english_only``): the
metrics whose rules are English word lists or an English parser (stop words, question keywords, spaCy's
English model, uncertainty phrases, source indicators). Every metric that reads the answer applies the empty guard.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from evalkit.text.abstention import AnswerDecision, decide_answer
from evalkit.metrics.base import Declined, Score, Undetermined

# the keyword arguments of evalkit.text.decide_answer a metric's params (and the config's lexicons) may set:
# spelled here once, read by every metric that guards declining answers and by the runner's row decision
DECLINE_KEYS = ("phrases", "short_tokens", "short_chars")
# what an English-only metric's empty policy says of an answer in another language (its declaration appends it)
NOT_ENGLISH = '; not English: undetermined ("not English (detected: de)")'


def decline_kwargs(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The :func:`evalkit.text.decide_answer` keyword arguments present in a metric's ``params``."""
    return {k: params[k] for k in DECLINE_KEYS if (params or {}).get(k) is not None}


def decision_for(answer: str | None, decision: AnswerDecision | None = None, **decline: Any) -> AnswerDecision:
    """The row's decision: the one the runner made, else made now from ``answer``."""
    if decision is not None:
        return decision
    return decide_answer(answer, **{k: v for k, v in decline.items() if v is not None})


def decisions_for(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None = None) -> list[AnswerDecision]:
    """Every row's decision: ``inputs["decision"]`` from the runner, else made from ``inputs["answer"]``."""
    given = inputs.get("decision")
    answers = inputs["answer"]
    kw = decline_kwargs(params)
    return [given[i] if given is not None and given[i] is not None else decide_answer(a, **kw)
            for i, a in enumerate(answers)]


def english_only(metric: str | None) -> bool:
    """Does ``metric`` apply the language guard? Its registry entry says (``Metric.english_only``); None is a
    metric outside the registry (a config's judged metric called directly), which reads any language.

    >>> english_only("relevance"), english_only("exact_match"), english_only(None)
    (True, False, False)
    """
    if metric is None:
        return False
    from evalkit.metrics import REGISTRY

    return REGISTRY[metric].english_only  # KeyError on a misspelt name: a guard never silently switched off


def skipped(decision: AnswerDecision, metric: str | None) -> Score | None:
    """The undetermined Score for an empty answer (or a non-English one, when ``metric`` is English-only in
    the registry), else None.

    >>> skipped(AnswerDecision(True), "exact_match")
    Score(value=None, details=Undetermined(reason='empty answer', language=None), stats=None)
    >>> dict(skipped(AnswerDecision(False, language="zh"), "relevance").details)
    {'reason': 'not English (detected: zh)', 'language': 'zh'}
    >>> skipped(AnswerDecision(False, language="zh"), "exact_match") is None
    True
    """
    reason = decision.skip_reason(english_only(metric))
    if reason is None:
        return None
    return Score(None, Undetermined(reason, None if decision.empty else decision.language))


def guard_rows(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None, resources: Any,
               batch: Callable[..., list], metric: str) -> tuple[list | None, list[AnswerDecision]]:
    """Apply the guard in a batch function: ``(results, decisions)``.

    ``results`` is None when every row passes (the caller scores them all, reading ``decisions``); otherwise
    it is the full list, the guarded rows undetermined and the others scored by ``batch`` on those rows only.
    """
    decisions = decisions_for(inputs, params)
    skips = [skipped(d, metric) for d in decisions]
    if all(s is None for s in skips):
        return None, decisions
    out: list = list(skips)
    keep = [i for i, s in enumerate(skips) if s is None]
    if keep:
        part = {k: [v[i] for i in keep] for k, v in inputs.items() if k != "decision"}
        part["decision"] = [decisions[i] for i in keep]
        for i, s in zip(keep, batch(part, params, resources)):
            out[i] = s
    return out, decisions


DECLINED = "the answer declines to answer; an abstention makes no claim to check"


def skipped_or_declined(decision: AnswerDecision, metric: str | None) -> Score | None:
    """:func:`skipped`, and for a metric that checks what the answer asserts, an undetermined Score for an answer
    that declines (the row's ``abstained`` decision): it asserts nothing to check, and a value there (faithfulness
    100 for "I don't know.") would raise a system's mean; the verdict counts the row apart (ABSTAIN).

    >>> from evalkit.text import decide_answer
    >>> dict(skipped_or_declined(decide_answer("I don't know."), "faithfulness").details)["abstention"]
    True
    >>> skipped_or_declined(decide_answer("The premium is $604."), "faithfulness") is None
    True
    """
    guarded = skipped(decision, metric)
    if guarded is not None or not decision.abstained:
        return guarded
    return Score(None, Declined(DECLINED, matched=tuple(decision.matched)))
