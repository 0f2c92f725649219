"""Which language an answer is written in: a cheap guard for the English-only lexical metrics.

Two signals, no model: the script of the letters (Han, kana, Hangul, Cyrillic, Arabic, ... decide alone
when they are at least ``script_share`` of the letters), and for Latin script the share of words that are
function words of a language (``resources/languages.yaml``: English, German, French, Spanish, Dutch,
Italian, Portuguese, Swedish; for English also the endings -ed and -ly). A Latin-script answer is called another language only when it has at least
``min_words`` words, at least ``min_hits`` and ``min_share`` of them from that language's list or matching
its letters and endings ("ß", "-ung", "ij", "ñ"; words that are also English function words do not count), and
at least twice as many as English-only function words; so "42",
"Paris." or "Tilburg, Antwerp and Ghent." are never called non-English. The guard is for the metrics, not a
language identifier: it names a language only when the English rules plainly do not apply.
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


def _hits(words: list[tuple[str, bool]], lst: frozenset[str], pattern: re.Pattern | None) -> int:
    """Words in the list or matching the pattern; a name (capitalised inside a sentence: "São Paulo", "Le Monde")
    counts only by an ending (German writes its nouns capitalised: "Versicherung")."""
    return sum((not name and (w in lst or (pattern is not None and pattern.search(w) is not None)))
               or (name and pattern is not None and len(w) > 5 and pattern.search(w[-6:]) is not None
                   and w[-6:].isascii())
               for w, name in words)


def _words(text: str) -> list[tuple[str, bool]]:
    """Lower-cased words, each with whether it is capitalised inside a sentence (a name, or a German noun)."""
    out = []
    for m in _WORD.finditer(text):
        before = text[: m.start()].rstrip(" \t\n\"'“”‘’«»(-–—")
        initial = not before or before[-1] in ".!?:;"
        out.append((m.group(0).lower(), m.group(0)[0].isupper() and not initial))
    return out


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
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return LanguageGuess(None, "too short")
    counts: dict[str, int] = {}
    for c in letters:
        if c.isascii():
            continue
        code = _script(c)
        if code is not None:
            counts[code] = counts.get(code, 0) + 1
    if counts:
        if counts.get("zh") and counts.get("ja"):  # kanji with kana is Japanese
            counts["ja"] += counts.pop("zh")
        code, n = max(counts.items(), key=lambda kv: kv[1])
        share = n / len(letters)
        if share >= float(doc["script_share"]):
            return LanguageGuess(code, "script", round(share, 3))
    words = _words(text.replace("’", "'"))
    if len(words) < int(doc["min_words"]):
        return LanguageGuess(None, "too short")
    en_pattern = _english_pattern()
    en_hits = sum(w in english or (en_pattern is not None and not name and en_pattern.search(w) is not None)
                  for w, name in words)
    any_words, any_pattern = _any_other()
    candidates = [(w, name) for w, name in words if w in any_words or any_pattern.search(w)]
    if not candidates:
        return LanguageGuess("en", "words", round(en_hits / len(words), 3))
    best, hits = max(((code, _hits(candidates, lst, pat)) for code, (lst, pat) in others.items()),
                     key=lambda kv: kv[1])
    share = hits / len(words)
    if hits >= int(doc["min_hits"]) and share >= float(doc["min_share"]) and hits >= 2 * en_hits:
        return LanguageGuess(best, "words", round(share, 3))
    return LanguageGuess("en", "words", round(en_hits / len(words), 3))
