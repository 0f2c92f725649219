"""Declining answers: the one abstention detector, and the shipped lexicons it reads."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Sequence

from .tokens import fold_apostrophes, phrase_pattern, stop_words, word_tokens

# Clauses end at . ! ? ; : (before a space or the end), at ", ", at a spaced dash, and before "but"/"however".
_CLAUSE_SPLIT = re.compile(r"([.!?;:]+(?:\s+|$)|,\s+|\s+[-–—]+\s+|\s+(?=(?:but|however|although|though)\b))", re.I)
_CAPITALISED = re.compile(r"\b[A-Z][\w'-]*")
_FIRST_PERSON = frozenset({"i", "i'm", "i've", "i'd", "i'll"})
# Words of sklearn's stop list that carry content or a quantity: "it is two", "the system is on fire" are claims.
_CONTENT_STOP_WORDS = frozenset(
    "all amount back bill bottom call co con cry de describe detail done due eight eleven empty few fifteen fifty "
    "fill find fire first five forty found four front full get give go hundred inc interest keep last least less "
    "ltd made many mill more most move much name nine one part put serious several show side six sixty some "
    "system take ten thick thin third three top twelve twenty two well".split())


@dataclass(frozen=True)
class _AbstentionWords:
    fillers: frozenset[str]
    sources: frozenset[str]
    negations: frozenset[str]
    reporting: frozenset[str]
    referrals: frozenset[str]
    lead_ins: frozenset[str]  # words that say nothing about the world: function words and fillers


@lru_cache(maxsize=1)
def _parsed_lexicons() -> dict[str, Any]:
    import yaml

    with resources.files("evalkit").joinpath("resources/lexicons.yaml").open(encoding="utf-8") as f:
        return yaml.safe_load(f)


def default_lexicons() -> dict[str, Any]:
    """The phrase lists shipped in ``evalkit/resources/lexicons.yaml`` (hedges, don't-know phrases, abstention
    words, citation indicators); :class:`evalkit.config.EvalConfig` overrides them per key.

    Each call returns a fresh deep copy of the cached parse, so a caller that edits its lists cannot change
    what every later caller sees.

    Examples
    --------
    >>> "hedges" in default_lexicons()
    True
    >>> default_lexicons()["hedges"].clear(); len(default_lexicons()["hedges"]) > 0
    True
    """
    import copy

    return copy.deepcopy(_parsed_lexicons())


@lru_cache(maxsize=1)
def _abstention_defaults() -> tuple[tuple[str, ...], tuple[str, ...], int, _AbstentionWords]:
    lex = default_lexicons()
    ab = lex["abstention"]
    lists = [frozenset(w.lower() for w in ab[k])
             for k in ("fillers", "source_words", "negations", "reporting_verbs", "referrals")]
    words = _AbstentionWords(*lists, lead_ins=(stop_words() - _CONTENT_STOP_WORDS) | lists[0])
    return tuple(lex["dont_know_phrases"]), tuple(lex["dont_know_short_tokens"]), int(lex["short_answer_chars"]), words


def _names_or_numbers(clause: str, spans: list[tuple[int, int]]) -> bool:
    """Whether the clause, outside ``spans``, holds a digit or a capitalised word other than its first word or "I"."""
    for a, b in spans:
        clause = clause[:a] + " " * (b - a) + clause[b:]
    if any(c.isdigit() for c in clause):
        return True
    return any(m.start() > 0 and m.group(0).lower() not in _FIRST_PERSON for m in _CAPITALISED.finditer(clause))


def _clauses(text: str) -> list[tuple[str, bool]]:
    """The clauses of ``text`` that hold a word, each with whether its sentence ends with a question mark."""
    parts = _CLAUSE_SPLIT.split(text) + [""]
    clauses, ends = parts[::2], parts[1::2]
    out, question = [], False
    for i in range(len(clauses) - 1, -1, -1):  # backwards: a sentence's end decides for all its clauses
        if re.search(r"[.!?]", ends[i]) or i == len(clauses) - 1:
            question = "?" in ends[i]
        if word_tokens(clauses[i]):
            out.append((clauses[i], question))
    return out[::-1]


def _clause_kind(clause: str, phrases: tuple[str, ...], words: _AbstentionWords,
                 question: bool = False) -> tuple[str, list[str]]:
    """One of "declines" (with the phrases found), "filler", "absence", "referral", "question" or "claim"."""
    low, lead_ins = clause.lower(), words.lead_ins
    hits = sorted((m.start(), m.end(), p) for p in phrases if (m := phrase_pattern(p).search(low)))
    toks = word_tokens(clause)
    if hits:
        # "I'm not sure about X", "There is no data for X", "The information on X is not available" decline;
        # "The discount is not available in Territory 118" says something about a named thing.
        content = [w for w in word_tokens(low[: hits[0][0]]) if w not in lead_ins]
        if not content or content[0] in words.sources or not _names_or_numbers(clause, [h[:2] for h in hits]):
            return "declines", list(dict.fromkeys(p for _, _, p in hits))
        return "claim", []
    if all(w in lead_ins or w in words.sources for w in toks):
        return "filler", []  # "Sorry", "Based on the context"
    if any(w in words.negations or w.endswith("n't") for w in toks) and \
            any(w in words.sources or w in words.reporting for w in toks):
        return "absence", []  # "the documents do not mention a speed limit"
    if toks[0] in words.referrals and not _names_or_numbers(clause, []):
        return "referral", []  # "please consult your agent"
    return ("question" if question else "claim"), []  # "Would you like to know more about X?" asserts nothing


def declines_to_answer(answer: str | None, *, phrases: Sequence[str] | None = None,
                       short_tokens: Sequence[str] | None = None,
                       short_chars: int | None = None) -> tuple[bool, list[str]]:
    """Whether the answer as a whole declines to answer, and the uncertainty phrases it declines with.

    The answer is split into clauses (at . ! ? ; : , a spaced dash, and before "but"/"however"). A clause
    *declines* when it holds an uncertainty phrase (``phrases``, whole words, case-insensitive, curly
    apostrophes folded; in an answer shorter than ``short_chars`` characters also ``short_tokens``) and
    either the words before the phrase are only stop words and fillers ("I'm not sure about X") or name
    the information itself ("The data for X is unknown"), or the clause names nothing and states no number
    ("The value is unknown"). The answer declines when at least one clause declines and every other
    clause makes no substantive claim: a filler ("Sorry", "Based on the context"), an absence statement
    (a negation with a source word or a reporting verb: "the documents do not mention a speed limit"),
    a referral ("please consult your agent") or a question ("Would you like to know more about X?").
    A claim anywhere ("...; the premium is $604") means the answer answers.

    The lists default to ``resources/lexicons.yaml`` (``dont_know_phrases``, ``dont_know_short_tokens``,
    ``short_answer_chars`` and the ``abstention`` word lists).

    Empty policy: an empty or None answer is missing, not a decline: ``(False, [])``
    (:func:`evalkit.metrics.reference.dont_know` counts it as a non-answer on its own).

    Parameters
    ----------
    answer : str or None
    phrases : sequence of str, optional
        Uncertainty phrases ("i don't know", "not sure", ...).
    short_tokens : sequence of str, optional
        Tokens that decline only in a short answer ("none", "n/a", ...).
    short_chars : int, optional
        An answer with fewer characters than this (whitespace collapsed) is short.

    Returns
    -------
    (bool, list of str)
        Whether the answer declines, and the phrases found in its declining clauses (also when another
        clause makes a claim, so the answer does not decline).

    Examples
    --------
    >>> declines_to_answer("I don’t know; the documents do not mention a speed limit.")
    (True, ["i don't know"])
    >>> declines_to_answer("The discount is not available in Territory 118; the premium is $604.")
    (False, [])
    >>> declines_to_answer("Annulled."), declines_to_answer("None.")
    ((False, []), (True, ['none']))
    """
    if not isinstance(answer, str) or not answer.strip():
        return False, []
    d_phrases, d_short, d_chars, words = _abstention_defaults()
    text = " ".join(fold_apostrophes(unicodedata.normalize("NFKC", answer)).split())
    found = tuple(d_phrases if phrases is None else phrases)
    if len(text) < (d_chars if short_chars is None else short_chars):
        found += tuple(d_short if short_tokens is None else short_tokens)
    kinds = [_clause_kind(c, found, words, question) for c, question in _clauses(text)]
    matched = list(dict.fromkeys(p for _, ps in kinds for p in ps))
    return bool(matched) and all(k != "claim" for k, _ in kinds), matched
