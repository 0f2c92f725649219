"""One matcher for every "is this entity in the context?" question."""
from __future__ import annotations

import re
from functools import lru_cache

from evalkit.text.tokens import fold_apostrophes

_EDGE_PUNCT = " \t\n.,;:!?\"“”()[]{}«»-–—/"


def normalize_entity(name: str | None) -> str:
    """The key a name is matched by: lower-cased, apostrophes folded, whitespace collapsed, a leading
    "the", a possessive ("'s", "'") and punctuation at either end removed.

    A string with fewer than two letters or digits, or with no letter, is not a name and gives "":
    the "h." of "km/h.", an initial, a number.

    >>> normalize_entity("Norwick Pumps'"), normalize_entity("the Corvel’s"), normalize_entity("h.")
    ('norwick pumps', 'corvel', '')
    """
    s = " ".join(fold_apostrophes(name or "").lower().split()).strip(_EDGE_PUNCT)
    s = re.sub(r"^the\s+", "", s)
    s = re.sub(r"'s?$", "", s).strip(_EDGE_PUNCT)
    alnum = [c for c in s if c.isalnum()]
    return s if len(alnum) >= 2 and any(c.isalpha() for c in alnum) else ""


@lru_cache(maxsize=8192)
def _entity_pattern(key: str) -> re.Pattern:
    # any whitespace between the words; a possessive may follow ("Norwick Pumps' plant")
    body = r"\s+".join(re.escape(w) for w in key.split())
    return re.compile(rf"(?<!\w){body}(?:'s|')?(?!\w)")


def find_entity(name: str | None, text: str | None) -> tuple[int, int] | None:
    """Where the name occurs in ``text``, as whole words after :func:`normalize_entity`, or None.

    "Norwick Pumps'" is found in "Norwick Pumps runs a plant" and "Norwick Pumps" in "Norwick Pumps'
    plant"; "Ann" is not found in "Annual". None also when ``name`` is not a name (check
    ``normalize_entity(name)`` first to tell the two apart). Offsets index ``text`` (lower-casing is
    assumed not to change its length).

    >>> find_entity("Norwick Pumps'", "Norwick Pumps runs a plant.")
    (0, 13)
    >>> find_entity("Ann", "Annual report") is None
    True
    """
    key = normalize_entity(name)
    if not key or not text:
        return None
    m = _entity_pattern(key).search(fold_apostrophes(text).lower())
    return (m.start(), m.end()) if m else None


