"""Tokenisation, stop words, sentences and whole-word phrase matching."""
from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Protocol

_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "`": "'", "´": "'", "′": "'"})


def fold_apostrophes(text: str) -> str:
    """``text`` with apostrophe look-alikes (’ ‘ ʼ ` ´ ′) written as "'"; same length, same offsets."""
    return text.translate(_APOSTROPHES)


# A word is a run of letters/digits, optionally joined by -, ., ', , inside it
# ("C-1", "12.5", "don't", "1,200"); punctuation around it is dropped.
_WORD_RE = re.compile(r"\w+(?:[-.,'’]\w+)*")


class Tokenizer(Protocol):
    """Anything that splits text into lower-cased word tokens."""

    def tokenize(self, text: str) -> list[str]: ...

    def signature(self) -> str: ...


class RegexTokenizer:
    """Default tokenizer: lower-cased word tokens by one regular expression.

    About 35x faster than NLTK's Treebank tokenizer on this machine and keeps
    identifiers such as ``C-1`` and numbers such as ``1,200.50`` whole.
    """

    def tokenize(self, text: str) -> list[str]:
        return _WORD_RE.findall(text.lower()) if text else []

    def signature(self) -> str:
        return "tok:regex-v1"


class NLTKTokenizer:
    """NLTK's Treebank-style ``NLTKWordTokenizer`` (needs no downloaded data).

    Punctuation-only tokens are dropped so the output is comparable with
    :class:`RegexTokenizer`.
    """

    def __init__(self) -> None:
        from nltk.tokenize import NLTKWordTokenizer

        self._tok = NLTKWordTokenizer()

    def tokenize(self, text: str) -> list[str]:
        if not text:
            return []
        return [t for t in self._tok.tokenize(text.lower()) if any(c.isalnum() for c in t)]

    def signature(self) -> str:
        import nltk

        return f"tok:nltk-treebank-{nltk.__version__}"


TOKENIZERS = {"regex": RegexTokenizer, "nltk": NLTKTokenizer}


@lru_cache(maxsize=None)
def get_tokenizer(name: str = "regex") -> Tokenizer:
    """Return the tokenizer registered under ``name`` ('regex' or 'nltk')."""
    try:
        return TOKENIZERS[name]()
    except KeyError:
        raise ValueError(f"unknown tokenizer {name!r}; choose one of {sorted(TOKENIZERS)}") from None


def word_tokens(text: str | None) -> list[str]:
    """Lower-cased word tokens of ``text`` with the default tokenizer ([] for None/empty)."""
    return _WORD_RE.findall(text.lower()) if text else []





# the stop-word lists :func:`stop_words` reads (a config names one; checking the name loads neither package)
STOP_LISTS = ("sklearn", "spacy")


@lru_cache(maxsize=None)
def stop_words(name: str = "sklearn") -> frozenset[str]:
    """An English stop-word list that ships inside an installed package.

    ``sklearn`` (default, 318 words) is the list ``TfidfVectorizer(stop_words="english")``
    uses, so relevance and completeness share one definition; ``spacy`` is spaCy's
    English list (326 words). Neither needs ``nltk.download``.
    """
    if name == "sklearn":
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        return frozenset(ENGLISH_STOP_WORDS)
    if name == "spacy":
        from spacy.lang.en.stop_words import STOP_WORDS

        return frozenset(STOP_WORDS)
    raise ValueError(f"unknown stop-word list {name!r}; choose 'sklearn' or 'spacy'")


_PER_THREAD = threading.local()


def _english_stemmer():
    """This thread's Snowball stemmer: a stemmer object keeps the word it is working on, so threads scoring side
    by side (``aevaluate``, a threaded Dask worker) must not share one."""
    stemmer = getattr(_PER_THREAD, "stemmer", None)
    if stemmer is None:
        import snowballstemmer

        stemmer = _PER_THREAD.stemmer = snowballstemmer.stemmer("english")
    return stemmer


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball (Porter 2) stem of a lower-cased English word: one key for a word's inflections and
    derivations where the parser's lemma differs ("retries", "retried" and "retry"; "used" and "use").

    >>> stem("retries"), stem("retry"), stem("used")
    ('retri', 'retri', 'use')
    """
    return _english_stemmer().stemWord(word)


def stems(words) -> frozenset[str]:
    """The stems of ``words`` (see :func:`stem`).

    >>> sorted(stems(["failures", "failure", "responds"]))
    ['failur', 'respond']
    """
    return frozenset(stem(w) for w in words)


def content_words(text: str | None, min_len: int = 2, stop_list: str = "sklearn") -> list[str]:
    """Lower-cased word tokens that are not stop words and have at least ``min_len`` characters.

    >>> content_words("The base premium is $604.")
    ['base', 'premium', '604']
    """
    sw = stop_words(stop_list)
    return [t for t in word_tokens(text) if t not in sw and len(t) >= min_len]


def ngrams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    """The set of distinct ``n``-grams of a token list."""
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def normalize_ws(text: str | None) -> str:
    """Lower-case and collapse runs of whitespace (None -> '')."""
    return " ".join(text.lower().split()) if text else ""



def snippet(text: str, start: int, end: int, width: int = 60) -> str:
    """``text[start:end]`` with up to ``width`` characters of context each side."""
    a, b = max(0, start - width), min(len(text), end + width)
    return ("…" if a > 0 else "") + " ".join(text[a:b].split()) + ("…" if b < len(text) else "")


@lru_cache(maxsize=4096)
def phrase_pattern(phrase: str) -> re.Pattern:
    """A regex that finds ``phrase`` as whole words in lower-cased, whitespace-normalised text.

    Word boundaries are required only where the phrase itself starts/ends with a
    letter or digit, so "page" does not match "pages" but "%" matches in "6%" and
    "source:" matches "source: x".

    >>> bool(phrase_pattern("page").search("see pages 3")), bool(phrase_pattern("%").search("up 6%"))
    (False, True)
    """
    p = normalize_ws(fold_apostrophes(phrase))
    lead = r"(?<!\w)" if p[:1].isalnum() else ""
    tail = r"(?!\w)" if p[-1:].isalnum() else ""
    return re.compile(lead + re.escape(p) + tail)


def contains_phrase(text: str | None, phrase: str) -> bool:
    """True when ``phrase`` occurs in ``text`` as whole words (case- and whitespace-insensitive)."""
    return phrase_pattern(phrase).search(normalize_ws(fold_apostrophes(text or ""))) is not None


def sentences(text: str | None) -> list[str]:
    r"""Sentences by punctuation (no model): split after . ! ? followed by space and a capital, digit or
    quote, and at line breaks.

    >>> sentences("Rates rose 12.5% in 2021. Dr. Ortiz left!\nNew line")
    ['Rates rose 12.5% in 2021.', 'Dr. Ortiz left!', 'New line']
    """
    parts = [p.strip() for p in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"'“])|\n+", text or "") if p.strip()]
    out: list[str] = []
    for p in parts:  # "Dr. Lena Ortiz" is one sentence: re-join after common abbreviations
        if out and _ABBREV.search(out[-1]):
            out[-1] = f"{out[-1]} {p}"
        else:
            out.append(p)
    return out


# words a title keeps in lower case ("Report of the Board", "Rules for Dwellings")
_TITLE_SMALL_WORDS = frozenset("a an and as at by for from in of on or the to with".split())


def is_heading(sentence: str | None) -> bool:
    """A document's title or a section heading rather than a sentence that says something: at most 10 words,
    each word with letters capitalised (or a title's small word such as "of"), numbers allowed.

    >>> is_heading("Aster Dynamics Annual Report 2023."), is_heading("Section 5, Rating Rules.")
    (True, True)
    >>> is_heading("Millbrook is a town on the Tessel River."), is_heading("Revenue reached $1.2 billion.")
    (False, False)
    >>> is_heading("Report of the Board"), is_heading("")
    (True, False)
    """
    words = re.findall(r"[^\W\d_][\w'’.-]*", sentence or "")
    if not words or len((sentence or "").split()) > 10:
        return False
    return all(w[0].isupper() or w.lower() in _TITLE_SMALL_WORDS for w in words) and words[0][0].isupper()


_ABBREV = re.compile(r"(?:^|\s)(?:Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr|Inc|Co|Corp|Ltd|vs|No|Gen|Gov|Sen|Rep|Mt|Ft|"
                     r"[A-Z]|e\.g|i\.e|U\.S|U\.K)\.$")


