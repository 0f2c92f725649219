"""Abbreviations that name what the context spells out, and the other way round.

"WA" and "Western Australia", "NHS" and "National Health Service", "U.S." and "United States" name the same
thing; a name in an answer is supported when the context holds it in either form.

Examples
--------
>>> acronym_supported("WA", "Mining in Western Australia grew.")
True
>>> acronym_supported("National Health Service", "The NHS said on Monday.")
True
>>> acronym_supported("WA", "Mining in Queensland grew.")
False

Case is folded where it is safe: "Western Australia" is supported by a source that writes "wa", but a
lower-case abbreviation that is also an English stop word ("us", "it", "in") never stands for a name.

>>> acronym_supported("Western Australia", "mining in wa grew"), acronym_supported("United States", "tell us")
(True, False)
"""
from __future__ import annotations

import re
from functools import lru_cache

_LINK_WORDS = frozenset({"of", "and", "the", "for", "&", "de", "on", "in"})
_CAPITALISED_RUN = re.compile(r"[A-Z][\w'-]*(?:\s+(?:of|and|the|for|&|de|on|in|[A-Z][\w'-]*))*")
_ACRONYM = re.compile(r"\b(?:[A-Z]\.){2,}|\b[A-Z]{2,6}s?\b")
_LOWER_ACRONYM = re.compile(r"(?<![\w'-])(?:[a-z]\.){2,}|(?<![\w'-])[a-z]{2,6}(?![\w'-])")


@lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    from evalkit.text.tokens import stop_words

    return stop_words("sklearn") | stop_words("spacy")


def _lower_abbreviation(word: str) -> bool:
    """A lower-case word that may be an abbreviation written in lower case ("wa"): not a stop word ("us")."""
    return word not in _stop_words()


def letters_of(abbreviation: str) -> str:
    """The capital letters of an abbreviation, without dots or a plural s: "U.S." -> "US", "NGOs" -> "NGO"."""
    a = abbreviation.replace(".", "").strip()
    return a[:-1] if len(a) > 2 and a.endswith("s") and a[:-1].isupper() else a


def initials(name: str) -> str:
    """Initials of a multi-word name, link words left out: "Western Australia" -> "WA"."""
    return "".join(w[0].upper() for w in name.split() if w.lower() not in _LINK_WORDS and w[:1].isalpha())


def abbreviations_in(text: str, max_letters: int = 6) -> list[tuple[str, int, int]]:
    """Every abbreviation that a run of capitalised words in ``text`` could be written as, lower-cased, with
    the character span of the words it abbreviates: each stretch of two or more consecutive name words
    (link words skipped). Stop words ("us", "it") are left out: they never stand for a name.

    >>> abbreviations_in("Mining in Western Australia grew.")
    [('mw', 0, 17), ('mwa', 0, 27), ('wa', 10, 27)]
    """
    out = []
    for m in _CAPITALISED_RUN.finditer(text):
        words = [(w.start() + m.start(), w.end() + m.start(), w.group(0)) for w in re.finditer(r"\S+", m.group(0))
                 if w.group(0).lower() not in _LINK_WORDS and w.group(0)[:1].isalpha()]
        for i in range(len(words)):
            for j in range(i + 2, min(len(words), i + max_letters) + 1):
                abbr = "".join(w[2][0] for w in words[i:j]).lower()
                if _lower_abbreviation(abbr):
                    out.append((abbr, words[i][0], words[j - 1][1]))
    return out


def find_acronym(name: str, context: str) -> tuple[int, int] | None:
    """Where ``context`` writes ``name`` as an abbreviation or spells out the abbreviation ``name``, or None.

    >>> find_acronym("Western Australia", "Mining in wa grew.")
    (10, 12)
    """
    name = name.strip()
    letters = letters_of(name)
    if (letters.isupper() or (letters.isalpha() and letters.islower() and _lower_abbreviation(letters))) \
            and 2 <= len(letters) <= 6:
        letters = letters.upper()
        return next(((m.start(), m.end()) for m in _CAPITALISED_RUN.finditer(context)
                     if letters in initials(m.group(0)) and len(m.group(0).split()) >= len(letters)), None)
    mine = initials(name)
    if len(mine) < 2 or len(name.split()) < 2:
        return None
    for m in _ACRONYM.finditer(context):
        if letters_of(m.group(0)) == mine:
            return m.start(), m.end()
    for m in _LOWER_ACRONYM.finditer(context):
        low = letters_of(m.group(0))
        if low.upper() == mine and _lower_abbreviation(low):
            return m.start(), m.end()
    return None


def acronym_supported(name: str, context: str) -> bool:
    """Whether ``name`` is an abbreviation of a capitalised run in ``context``, or ``context`` abbreviates it."""
    return find_acronym(name, context) is not None
