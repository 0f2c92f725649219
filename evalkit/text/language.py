"""Which language an answer is written in: a cheap guard for the English-only lexical metrics.

Two signals, no model: the script of the letters (Han, kana, Hangul, Cyrillic, Arabic, ... decide alone
when they are more than ``script_share`` of the letters and at least ``script_min_letters`` of them; a letter
standing alone is a symbol, not a word: "μ = 3.2, σ = 1.1", "π ≈ 3.14159" are not Greek), and for Latin
script the words that are function words of a language (``resources/languages.yaml``: English, German,
French, Spanish, Dutch, Italian, Portuguese, Swedish; for English also the endings -ed and -ly). A
Latin-script answer is called another language only when it has at least ``min_words`` words, and that
language's hits are at least ``min_share`` of them, at least ``min_hits`` (or ``min_hits_with_letters`` when
one of them shows the language's own letters or endings: "ß", "-ung", "ij", "ñ"), and at least
``english_ratio`` times the English-only function words. A hit is a lower-case word inside a sentence from
the language's list (words that are also English function words do not count) or matching its letters and
endings, a capitalised word inside a sentence by its ending only (a German noun: "Versicherung"; not a
name: "Núñez"), or a sentence's first word from the list ("Die"; not "José"). So "42", "Paris.",
"Tilburg, Antwerp and Ghent.", "Men die in war.", "José Núñez won." and "Our menu has crème brûlée, café au
lait, pâté and rosé." are English. The guard is for the metrics, not a language identifier: it names a
language only when the English rules plainly do not apply.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

# (language code, first letter of the Unicode character names of the script)
_SCRIPTS = (("ja", ("HIRAGANA", "KATAKANA")), ("ko", ("HANGUL",)), ("zh", ("CJK",)), ("ru", ("CYRILLIC",)),
            ("ar", ("ARABIC",)), ("he", ("HEBREW",)), ("el", ("GREEK",)), ("hi", ("DEVANAGARI",)), ("th", ("THAI",)))
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_NAMES = {"en": "English", "de": "German", "fr": "French", "es": "Spanish", "nl": "Dutch", "it": "Italian",
          "pt": "Portuguese", "sv": "Swedish", "ja": "Japanese", "ko": "Korean", "zh": "Chinese",
          "ru": "Russian", "ar": "Arabic", "he": "Hebrew", "el": "Greek", "hi": "Hindi", "th": "Thai"}


@dataclass(frozen=True)
class LanguageGuess:
    """The detected language of a text.

    Attributes
    ----------
    code : ISO 639-1 code ('en', 'de', 'zh', ...), or None when the text is too short to tell (no letters, or
        fewer than ``min_words`` Latin words without another script): such a text is treated as English.
    by : what decided: 'script', 'words' or 'too short'.
    share : the share of letters in the script, or of words in the language's function-word list.
    """

    code: str | None
    by: str
    share: float = 0.0

    @property
    def english(self) -> bool:
        """Whether the English-only rules apply (English, or too short to tell)."""
        return self.code in (None, "en")

    @property
    def name(self) -> str:
        return _NAMES.get(self.code or "", self.code or "unknown")


@lru_cache(maxsize=1)
def _lists() -> tuple[dict[str, Any], frozenset[str], dict[str, tuple[frozenset[str], re.Pattern | None]]]:
    import yaml

    with resources.files("evalkit").joinpath("resources/languages.yaml").open(encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    english = frozenset(doc["english"].split())
    raw = {code: frozenset(words.split()) for code, words in doc["languages"].items()}
    pats = doc.get("patterns") or {}
    others = {code: (words - english, re.compile("|".join(f"(?:{p})" for p in pats[code])) if pats.get(code) else None)
              for code, words in raw.items()}
    english_only = english.difference(*raw.values())  # "in", "a", "de" say nothing about English either
    return doc, english_only, others


@lru_cache(maxsize=1)
def _english_pattern() -> re.Pattern | None:
    pats = _lists()[0].get("english_patterns") or []
    return re.compile("|".join(f"(?:{p})" for p in pats)) if pats else None


@lru_cache(maxsize=1)
def _any_other() -> tuple[frozenset[str], re.Pattern]:
    """Every other language's words and patterns at once: most English words match neither, so the
    per-language counts run only on the few that do."""
    _, _, others = _lists()
    words = frozenset().union(*(lst for lst, _ in others.values()))
    return words, re.compile("|".join(f"(?:{p.pattern})" for _, p in others.values() if p is not None))


_LOWER, _NAME, _INITIAL = "lower", "name", "initial"


def _hits(words: list[tuple[str, str]], lst: frozenset[str], pattern: re.Pattern | None) -> tuple[int, int]:
    """The words that are hits for a language, and how many of them by its letters or endings.

    A lower-case word counts when it is in the list or matches the pattern; a name (capitalised inside a
    sentence: "São Paulo", "Le Monde") only by an ending (German writes its nouns capitalised:
    "Versicherung"); a sentence's first word only when it is in the list ("Die", not "José")."""
    hits = letters = 0
    for w, kind in words:
        if kind == _LOWER:
            if pattern is not None and pattern.search(w) is not None:
                hits, letters = hits + 1, letters + 1
            elif w in lst:
                hits += 1
        elif kind == _NAME:
            if pattern is not None and len(w) > 5 and pattern.search(w[-6:]) is not None and w[-6:].isascii():
                hits, letters = hits + 1, letters + 1
        elif w in lst:
            hits += 1
    return hits, letters


def _words(text: str) -> list[tuple[str, str]]:
    """Lower-cased words, each with its kind: "lower", "name" (capitalised inside a sentence: a name, or a
    German noun) or "initial" (capitalised first word of a sentence)."""
    out = []
    for m in _WORD.finditer(text):
        before = text[: m.start()].rstrip(" \t\n\"'“”‘’«»(-–—")
        initial = not before or before[-1] in ".!?:;"
        kind = _LOWER if not m.group(0)[0].isupper() else _INITIAL if initial else _NAME
        out.append((m.group(0).lower(), kind))
    return out


def _standing_alone(text: str, i: int) -> bool:
    """Whether the letter at ``text[i]`` has no letter beside it: a symbol ("μ = 3.2"), not part of a word."""
    return not (i > 0 and text[i - 1].isalpha()) and not (i + 1 < len(text) and text[i + 1].isalpha())


def _script(ch: str) -> str | None:
    name = unicodedata.name(ch, "")
    for code, prefixes in _SCRIPTS:
        if name.startswith(prefixes):
            return code
    return None


def detect_language(text: str | None) -> LanguageGuess:
    """The language of ``text`` by script, then by function words (see the module docstring).

    Parameters
    ----------
    text : str or None

    Returns
    -------
    LanguageGuess

    Examples
    --------
    >>> detect_language("Die Versicherung kostet 604 Euro pro Jahr und ist nicht kündbar.").code
    'de'
    >>> detect_language("保险费每年604美元。").code
    'zh'
    >>> detect_language("The premium is $604 per year.").code
    'en'
    >>> detect_language("Paris.").code is None, detect_language("42").english
    (True, True)
    """
    doc, english, others = _lists()
    text = unicodedata.normalize("NFKC", text or "")
    letters = [(i, c) for i, c in enumerate(text) if c.isalpha()]
    if not letters:
        return LanguageGuess(None, "too short")
    counts: dict[str, int] = {}
    in_words = 0
    for i, c in letters:
        if _standing_alone(text, i):
            continue
        in_words += 1
        code = None if c.isascii() else _script(c)
        if code is not None:
            counts[code] = counts.get(code, 0) + 1
    if counts:
        if counts.get("zh") and counts.get("ja"):  # kanji with kana is Japanese
            counts["ja"] += counts.pop("zh")
        code, n = max(counts.items(), key=lambda kv: kv[1])
        share = n / in_words
        minimum = doc["script_min_letters"]
        if share > float(doc["script_share"]) and n >= int(minimum.get(code, minimum["default"])):
            return LanguageGuess(code, "script", round(share, 3))
    words = _words(text.replace("’", "'"))
    if len(words) < int(doc["min_words"]):
        return LanguageGuess(None, "too short")
    en_pattern = _english_pattern()
    en_hits = sum(w in english or (en_pattern is not None and kind != _NAME and en_pattern.search(w) is not None)
                  for w, kind in words)
    any_words, any_pattern = _any_other()
    candidates = [(w, kind) for w, kind in words if w in any_words or any_pattern.search(w)]
    if not candidates:
        return LanguageGuess("en", "words", round(en_hits / len(words), 3))
    best, (hits, by_letters) = max(((code, _hits(candidates, lst, pat)) for code, (lst, pat) in others.items()),
                                   key=lambda kv: kv[1])
    share = hits / len(words)
    enough = hits >= int(doc["min_hits"]) or (by_letters and hits >= int(doc["min_hits_with_letters"]))
    if enough and share >= float(doc["min_share"]) and hits >= float(doc["english_ratio"]) * en_hits:
        return LanguageGuess(best, "words", round(share, 3))
    return LanguageGuess("en", "words", round(en_hits / len(words), 3))
