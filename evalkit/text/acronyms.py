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
"""
from __future__ import annotations

import re

_LINK_WORDS = frozenset({"of", "and", "the", "for", "&", "de", "on", "in"})
_CAPITALISED_RUN = re.compile(r"[A-Z][\w'-]*(?:\s+(?:of|and|the|for|&|de|on|in|[A-Z][\w'-]*))*")
_ACRONYM = re.compile(r"\b(?:[A-Z]\.){2,}|\b[A-Z]{2,6}s?\b")


def letters_of(abbreviation: str) -> str:
    """The capital letters of an abbreviation, without dots or a plural s: "U.S." -> "US", "NGOs" -> "NGO"."""
    a = abbreviation.replace(".", "").strip()
    return a[:-1] if len(a) > 2 and a.endswith("s") and a[:-1].isupper() else a


def initials(name: str) -> str:
    """Initials of a multi-word name, link words left out: "Western Australia" -> "WA"."""
    return "".join(w[0].upper() for w in name.split() if w.lower() not in _LINK_WORDS and w[:1].isalpha())


def acronym_supported(name: str, context: str) -> bool:
    """Whether ``name`` is an abbreviation of a capitalised run in ``context``, or ``context`` abbreviates it."""
    name = name.strip()
    letters = letters_of(name)
    if letters.isupper() and 2 <= len(letters) <= 6:
        return any(letters in initials(m.group(0)) and len(m.group(0).split()) >= len(letters)
                   for m in _CAPITALISED_RUN.finditer(context))
    mine = initials(name)
    if len(mine) < 2 or len(name.split()) < 2:
        return False
    return any(letters_of(m.group(0)) == mine for m in _ACRONYM.finditer(context))
