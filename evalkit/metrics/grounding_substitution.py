"""Substitutions: the words an answer sentence put in place of its evidence sentence's words.

The answer sentence and its aligned evidence sentence are compared token by token (difflib's longest
matching blocks). A *substitution* is a block of at most three tokens that differs while the tokens on both
sides of it agree ("the boys / girls went home"): the same position in an otherwise copied phrase. Each is
scored by what replaced what, first match wins:

* ``antonym``: an opposite (:func:`evalkit.text.antonyms.are_antonyms`: "increase" / "decline", "boys" / "girls");
* ``number``: a different number, date or year ("5" / "6", "2019" / "2021");
* ``entity``: a different name (a proper noun or named entity of the answer);
* ``doc_word``: a different content word that the document has elsewhere (the swap FactCC and SummEdits
  make: "weeks" / "days" both in the document, so no novelty feature fires);
* ``other``: a different content word the document lacks.

Function-word swaps ("a" / "the") and two ways to write one thing ("WA" / "Western Australia", "5 mln" /
"5 million") are not substitutions. Paraphrase rarely keeps both neighbours of a changed
word, so the count stays near zero for faithful rewrites.

Examples
--------
>>> [s.kind for s in substitutions("The boys went home after two weeks.", set(),
...                                "The girls went home after two weeks.", {"girls", "boys"})]
['antonym']
>>> [s.kind for s in substitutions("Revenue was 6 million dollars.", set(), "Revenue was 5 million dollars.", set())]
['number']
"""
from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import AbstractSet

from evalkit.text import extract_numbers, stop_words, word_tokens
from evalkit.text.antonyms import are_antonyms

KINDS = ("antonym", "number", "entity", "doc_word", "other")
MAX_BLOCK = 3
_SCALE_WORDS = frozenset({"thousand", "million", "mln", "mn", "m", "billion", "bn", "b", "trillion", "tn", "k",
                          "percent", "per", "cent", "pct"})  # longer differing blocks are rewrites, not substitutions


@dataclass(frozen=True)
class Substitution:
    """One replaced block: its kind (:data:`KINDS`), the answer's words and the evidence's words."""

    kind: str
    answer_words: tuple[str, ...]
    evidence_words: tuple[str, ...]


def _is_number(word: str) -> bool:
    return any(ch.isdigit() for ch in word)


def _anchored(ops: list, i: int) -> bool:
    """A replace block with agreeing tokens on both sides (or one side and the sentence's edge)."""
    before = i == 0 or ops[i - 1][0] == "equal"
    after = i == len(ops) - 1 or ops[i + 1][0] == "equal"
    return before and after and len(ops) > 1


def equivalent(mine: tuple[str, ...], theirs: tuple[str, ...], before: str, before_theirs: str) -> bool:
    """Two ways to write one thing: an abbreviation and its words ("wa" / "western australia") or one number
    in two formats ("5 mln" / "5 million"; ``before`` is the token in front of each block)."""
    for x, y in ((mine, theirs), (theirs, mine)):
        if len(x) == 1 and len(y) > 1 and x[0].replace(".", "") == "".join(w[0] for w in y if w not in ("of", "and")):
            return True
    if not all(_is_number(w) or w in _SCALE_WORDS for w in (*mine, *theirs)):
        return False
    keys = [{n.key for n in extract_numbers(" ".join((b, *block)))} for b, block in ((before, mine), (before_theirs, theirs))]
    return bool(keys[0]) and keys[0] == keys[1]


def classify(mine: tuple[str, ...], theirs: tuple[str, ...], names: AbstractSet[str],
             doc_words: AbstractSet[str]) -> str | None:
    """The kind of one replaced block, or None for a swap of function words only."""
    if any(are_antonyms(a, b) for a in mine for b in theirs):
        return "antonym"
    if any(_is_number(a) for a in mine) and set(mine) != set(theirs):
        return "number"
    if any(a in names for a in mine):
        return "entity"
    stop = stop_words()
    content = [a for a in mine if a not in stop and len(a) > 1 and a not in theirs]
    if not content:
        return None
    return "doc_word" if all(a in doc_words for a in content) else "other"


def substitutions(sentence: str, names: AbstractSet[str], evidence: str,
                  doc_words: AbstractSet[str]) -> list[Substitution]:
    """The anchored substitutions of ``sentence`` against ``evidence``.

    ``names``: lower-cased tokens of the sentence's proper nouns and named entities; ``doc_words``: the
    document's lower-cased word tokens.
    """
    a, e = word_tokens(sentence), word_tokens(evidence)
    ops = SequenceMatcher(None, a, e, autojunk=False).get_opcodes()
    out = []
    for i, (tag, a0, a1, e0, e1) in enumerate(ops):
        if tag != "replace" or a1 - a0 > MAX_BLOCK or e1 - e0 > MAX_BLOCK or not _anchored(ops, i):
            continue
        mine, theirs = tuple(a[a0:a1]), tuple(e[e0:e1])
        if equivalent(mine, theirs, a[a0 - 1] if a0 else "", e[e0 - 1] if e0 else ""):
            continue
        kind = classify(mine, theirs, names, doc_words)
        if kind:
            out.append(Substitution(kind, mine, theirs))
    return out
