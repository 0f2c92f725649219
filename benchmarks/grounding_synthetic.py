"""FactCC-style synthetic training pairs for the grounding detector, seeded and deterministic.

From a document and a faithful text (a reference summary, or sentences copied from the document) each
transform makes one unfaithful variant: swap a name, a number, a date or a pronoun; negate (or un-negate) a
verb; replace a word by its antonym or by another word of the same document; append a sentence from another
document. The faithful text is kept as the negative. Only development and training documents are used
(HaluEval summarization train, SummEdits dev), never held-out data.
"""
from __future__ import annotations

import re

import numpy as np

from evalkit.text import sentences, stop_words
from evalkit.text.antonyms import _PAIRS

_NAME = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]+(?: [A-Z][a-z]+){0,2}")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
_YEAR = re.compile(r"\b(19[5-9]\d|20[0-3]\d)\b")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_PRONOUNS = {"he": "she", "she": "he", "his": "her", "her": "his", "him": "her", "they": "he", "we": "they"}
_AUX = re.compile(r"\b(is|was|are|were|has|have|had|will|can|could|would|should|did|does|do)\b( not\b)?")
_WORD = re.compile(r"\b[a-z]{4,}\b")


def _antonym_map() -> dict[str, str]:
    out = {}
    for item in _PAIRS.replace("\n", " ").split(";"):
        words = item.split()
        if len(words) == 2:
            out.setdefault(words[0], words[1])
            out.setdefault(words[1], words[0])
    return out


ANTONYMS = _antonym_map()


def _replace_one(text: str, matches: list, new: str, rng) -> str:
    m = matches[int(rng.integers(len(matches)))]
    return text[:m.start()] + new + text[m.end():]


def swap_name(text: str, doc: str, rng, other: str) -> str | None:
    mine = list(_NAME.finditer(text))
    pool = sorted({m.group(0) for m in _NAME.finditer(doc)} - {m.group(0) for m in mine})
    if not mine or not pool:
        return None
    return _replace_one(text, mine, pool[int(rng.integers(len(pool)))], rng)


def swap_number(text: str, doc: str, rng, other: str) -> str | None:
    mine = list(_NUMBER.finditer(text))
    if not mine:
        return None
    m = mine[int(rng.integers(len(mine)))]
    pool = sorted({x.group(0) for x in _NUMBER.finditer(doc)} - {m.group(0)})
    new = pool[int(rng.integers(len(pool)))] if pool and rng.random() < 0.5 else \
        str(int(float(m.group(0))) + int(rng.integers(1, 9)))
    return text[:m.start()] + new + text[m.end():]


def swap_date(text: str, doc: str, rng, other: str) -> str | None:
    years = list(_YEAR.finditer(text))
    if years:
        m = years[int(rng.integers(len(years)))]
        return text[:m.start()] + str(int(m.group(0)) + int(rng.choice([-3, -2, -1, 1, 2]))) + text[m.end():]
    months = [m for m in re.finditer(r"\b(" + "|".join(_MONTHS) + r")\b", text)]
    if not months:
        return None
    new = _MONTHS[(_MONTHS.index(months[0].group(0)) + int(rng.integers(1, 12))) % 12]
    return _replace_one(text, months, new, rng)


def swap_pronoun(text: str, doc: str, rng, other: str) -> str | None:
    mine = [m for m in re.finditer(r"\b(he|she|his|her|him|they|we)\b", text, re.I)]
    if not mine:
        return None
    m = mine[int(rng.integers(len(mine)))]
    new = _PRONOUNS[m.group(0).lower()]
    new = new.capitalize() if m.group(0)[0].isupper() else new
    return text[:m.start()] + new + text[m.end():]


def negate(text: str, doc: str, rng, other: str) -> str | None:
    mine = list(_AUX.finditer(text))
    if not mine:
        return None
    m = mine[int(rng.integers(len(mine)))]
    return text[:m.start()] + (m.group(1) if m.group(2) else m.group(1) + " not") + text[m.end():]


def swap_antonym(text: str, doc: str, rng, other: str) -> str | None:
    mine = [m for m in re.finditer(r"\b[a-z]+\b", text) if m.group(0) in ANTONYMS]
    if not mine:
        return None
    m = mine[int(rng.integers(len(mine)))]
    return text[:m.start()] + ANTONYMS[m.group(0)] + text[m.end():]


def swap_doc_word(text: str, doc: str, rng, other: str) -> str | None:
    """A content word replaced by another of the document's words with the same ending (a crude same-POS)."""
    stop = stop_words()
    mine = [m for m in _WORD.finditer(text) if m.group(0) not in stop]
    if not mine:
        return None
    m = mine[int(rng.integers(len(mine)))]
    w = m.group(0)
    pool = sorted({x for x in _WORD.findall(doc) if x not in stop and x != w and x[-2:] == w[-2:]} - set(text.split()))
    return text[:m.start()] + pool[int(rng.integers(len(pool)))] + text[m.end():] if pool else None


def insert_sentence(text: str, doc: str, rng, other: str) -> str | None:
    pool = [s for s in sentences(other) if 6 <= len(s.split()) <= 40]
    return (text.rstrip() + " " + pool[int(rng.integers(len(pool)))]) if pool else None


TRANSFORMS = {f.__name__: f for f in (swap_name, swap_number, swap_date, swap_pronoun, negate, swap_antonym,
                                      swap_doc_word, insert_sentence)}


def corrupt(text: str, doc: str, other_doc: str, rng: np.random.Generator) -> tuple[str, str] | None:
    """One unfaithful variant of ``text`` and the transform's name (transforms tried in a random order)."""
    for name in rng.permutation(sorted(TRANSFORMS)):
        out = TRANSFORMS[name](text, doc, rng, other_doc)
        if out and out != text:
            return out, str(name)
    return None


def copied_sentences(doc: str, rng: np.random.Generator, k: int = 2) -> str | None:
    """``k`` consecutive sentences of the document (each 6 to 50 words), the FactCC faithful claim."""
    sents = [s for s in sentences(doc) if 6 <= len(s.split()) <= 50]
    if len(sents) < k:
        return None
    i = int(rng.integers(len(sents) - k + 1))
    return " ".join(sents[i:i + k])
