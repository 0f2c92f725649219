"""Which language an answer is written in: a guard for the English-only metrics.

Two signals: the script of the letters (Han, kana, Hangul, Cyrillic, Arabic, ... decide alone when they are
more than ``script_share`` of the letters and at least ``script_min_letters`` of them; a letter standing alone
is a symbol, not a word: "μ = 3.2, σ = 1.1", "π ≈ 3.14159" are not Greek), and for Latin script the
statistical detector of ``lingua-language-detector`` (models inside its wheel) over the languages
``resources/languages.yaml`` lists. Names are not a language: capitalised words inside a sentence are left
out, and an answer with fewer than ``min_words`` other distinct words is too short to tell (treated as English:
"42", "Paris.", "José Núñez won.", "Tilburg, Antwerp and Ghent."), unless it is German whose capitalised nouns
made it short: read whole, with no English function word among its other words, it is named at confidence
``min_confidence_whole`` ("Eine Impfung kostet 45 Euro."). Another language is named when lingua's
most likely language is not English with confidence at least ``min_confidence`` and ``ratio_to_english``
times English's, unless the answer is plainly English (at least ``english_min_hits`` English function words
making up ``english_share`` of its words: "Our menu has crème brûlée, café au lait, pâté and rosé."). The
guard is for the metrics, not a general language identifier: it names a language only when the English
rules plainly do not apply.
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
def _lists() -> tuple[dict[str, Any], frozenset[str]]:
    import yaml

    with resources.files("evalkit").joinpath("resources/languages.yaml").open(encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    return doc, frozenset(doc["english"].split())


@lru_cache(maxsize=1)
def _english_pattern() -> re.Pattern | None:
    pats = _lists()[0].get("english_patterns") or []
    return re.compile("|".join(f"(?:{p})" for p in pats)) if pats else None


_LOWER, _NAME, _INITIAL = "lower", "name", "initial"


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
    doc, english = _lists()
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
    return _latin_language(text, doc, english)


def _latin_language(text: str, doc: dict[str, Any], english: frozenset[str]) -> LanguageGuess:
    """A Latin-script text's language: lingua's statistical detector on the words that are not names, with
    two guards that keep the English-only rules where they apply (a name is not a language; an answer that
    is a quarter English function words is English however many dish names it quotes)."""
    found = _words(text.replace("’", "'"))
    # a name is not a language, also at a sentence's start ("José Núñez won.": the first word of a full name, told
    # by its letters; a German article before a noun is a word: "Die Versicherung", "Eine Impfung kostet ...")
    words = [(w, kind) for (w, kind), (_, after) in zip(found, found[1:] + [("", _LOWER)])
             if kind != _NAME and not (kind == _INITIAL and after == _NAME and not w.isascii())]
    en_pattern = _english_pattern()
    en_hits = sum(w in english or (en_pattern is not None and en_pattern.search(w) is not None) for w, _ in words)
    if len({w for w, _ in words}) < int(doc["min_words"]):  # distinct words: "word word word" says nothing
        return _capitalised_nouns(found, words, en_hits, doc)
    if en_hits >= int(doc["english_min_hits"]) and en_hits >= float(doc["english_share"]) * len(words):
        return LanguageGuess("en", "words", round(en_hits / len(words), 3))
    return _lingua(" ".join(w for w, _ in words), doc)


def _capitalised_nouns(found: list[tuple[str, str]], words: list[tuple[str, str]], en_hits: int,
                       doc: dict[str, Any]) -> LanguageGuess:
    """A text too short once its capitalised words are set aside, which may be German (every noun capitalised:
    "Eine Impfung kostet 45 Euro."): read whole when it has ``min_words`` + 1 words, one of them lower-case and
    none an English function word ("Tilburg, Antwerp and Ghent." stays too short), named only with confidence
    ``min_confidence_whole``."""
    if len(found) <= int(doc["min_words"]) or not words or en_hits:
        return LanguageGuess(None, "too short")
    guess = _lingua(" ".join(w for w, _ in found), doc)
    return guess if guess.code != "en" and guess.share >= float(doc["min_confidence_whole"]) else \
        LanguageGuess(None, "too short")


def _lingua(text: str, doc: dict[str, Any]) -> LanguageGuess:
    """lingua's verdict on ``text``: English at once where its low-accuracy mode (trigram models, loaded in about a
    second) gives English at least ``quick_english``; else the full detector (all n-gram models, about 7 s to load
    on first use) with the confidence rules. On the 810 development answers that reach lingua the quick verdict
    never differs from the full one (``resources/languages.yaml``), so a run of English answers seldom loads it."""
    quick = _detector(low_accuracy=True).compute_language_confidence_values(text)
    if quick and _code(quick[0]) == "en" and quick[0].value >= float(doc["quick_english"]):
        return LanguageGuess("en", "lingua", round(quick[0].value, 3))
    confidences = _detector().compute_language_confidence_values(text)
    top = confidences[0]
    code = top.language.iso_code_639_1.name.lower()
    en = next((c.value for c in confidences if c.language.iso_code_639_1.name.lower() == "en"), 0.0)
    if code != "en" and top.value >= float(doc["min_confidence"]) and top.value >= float(doc["ratio_to_english"]) * en:
        return LanguageGuess(code, "lingua", round(top.value, 3))
    return LanguageGuess("en", "lingua", round(en, 3))


def _code(confidence) -> str:
    return confidence.language.iso_code_639_1.name.lower()


@lru_cache(maxsize=2)
def _detector(low_accuracy: bool = False):
    """lingua's detector over the Latin-script languages ``resources/languages.yaml`` lists (its models ship
    in the wheel and load on first use; nothing is downloaded), in its low-accuracy mode where asked."""
    from lingua import IsoCode639_1, LanguageDetectorBuilder

    codes = _lists()[0]["lingua_languages"].split()
    builder = LanguageDetectorBuilder.from_iso_codes_639_1(*(getattr(IsoCode639_1, c.upper()) for c in codes))
    return (builder.with_low_accuracy_mode() if low_accuracy else builder).build()
