"""Text primitives shared by every metric: tokenisation, stop words, numbers, dates.

There is exactly one number normaliser (:func:`extract_numbers`) and one date
normaliser (:func:`extract_dates`) in evalkit; the hallucination anchors, the
reference metrics and the fact checks all call these, so "$1,200" means the
same thing everywhere.

Examples
--------
>>> word_tokens("The premium is $1,200.")
['the', 'premium', 'is', '1,200']
>>> [str(n.value) for n in extract_numbers("$1,200.00 and -0.133%")]
['1200', '-0.133']
>>> extract_dates("signed on 3 March 2021")[0].key
(2021, 3, 3)
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Protocol

# ---------------------------------------------------------------------------
# Tokenisation
# ---------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------
# Stop words
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------

_SCALES = {
    "thousand": Decimal(10) ** 3, "k": Decimal(10) ** 3,
    "million": Decimal(10) ** 6, "mn": Decimal(10) ** 6, "m": Decimal(10) ** 6,
    "billion": Decimal(10) ** 9, "bn": Decimal(10) ** 9, "b": Decimal(10) ** 9,
    "trillion": Decimal(10) ** 12,
}
_WORD_NUMBERS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_WORD_NUMBERS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
                      "eighty": 80, "ninety": 90, "hundred": 100})

# A minus sign counts only at the start of a token: "-0.133%" is negative, the
# hyphen in "C-1" or "2020-2021" is not. Digits glued to letters ("C-1", "Q3",
# "H2O") are identifiers, not quantities.
_NUM_RE = re.compile(
    r"""
    (?<![\w.,\-])
    (?P<sign>[-−–])?
    (?P<cur>[$€£¥])?
    (?P<sign2>[-−–])?
    (?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)
    (?P<scale>\s?(?:thousand|million|billion|trillion)|bn|mn|[kKmMbB])?
    (?:\s?(?P<pct>%|percent\b|per\s?cent\b|pct\b))?
    (?![A-Za-z0-9_])
    """,
    re.X | re.I,
)
_WORDNUM_RE = re.compile(
    r"\b(?P<num>" + "|".join(sorted(_WORD_NUMBERS, key=len, reverse=True)) + r")\b"
    r"(?:\s(?P<scale>thousand|million|billion|trillion)\b)?"
    r"(?:\s?(?P<pct>%|percent\b|per\s?cent\b))?",
    re.I,
)


@dataclass(frozen=True)
class Number:
    """A normalised numeric mention.

    ``value`` is exact (``Decimal``) and sign-aware; ``percent`` is True for
    "12%", "12 percent", "12 per cent". ``currency`` is the symbol if any.
    Two mentions denote the same quantity when :meth:`key` is equal, so
    "$1,200" == "1200" == "1,200.00", "12%" == "12 percent", "-0.133%" != "0.133%".
    """

    value: Decimal
    percent: bool
    currency: str | None
    text: str
    start: int
    end: int

    @property
    def key(self) -> tuple[Decimal, bool]:
        return (self.value, self.percent)

    def __str__(self) -> str:  # canonical display form
        v = format(self.value, "f")
        if "." in v:
            v = v.rstrip("0").rstrip(".")
        return f"{v}%" if self.percent else v


def _make_number(m: re.Match, raw: Decimal) -> Number:
    scale = m.group("scale")
    if scale:  # single-letter scales ("5m", "3k") only count glued to the number
        raw = raw * _SCALES[scale.strip().lower()]
    neg = bool(m.groupdict().get("sign") or m.groupdict().get("sign2"))
    value = (-raw if neg else raw).normalize()
    if value == 0:
        value = Decimal(0)
    # normalize() writes 1200 as 1.2E+3; quantize back to a plain integer when whole
    if value == value.to_integral_value():
        value = value.quantize(Decimal(1))
    return Number(value=value, percent=bool(m.group("pct")),
                  currency=m.groupdict().get("cur") or None,
                  text=m.group(0).strip(), start=m.start(), end=m.end())


def extract_numbers(text: str | None, *, words: bool = True) -> list[Number]:
    """All numeric mentions in ``text``, in order of appearance.

    Handles currency symbols, thousands separators, decimals, leading minus
    signs, percentages ("%", "percent", "per cent"), scale words ("1.2 million",
    "5k") and, with ``words=True``, number words from zero to twenty, the tens
    and "hundred" ("three" -> 3).

    Parameters
    ----------
    text : str or None
    words : bool, default True
        Also read number words.

    Returns
    -------
    list of Number

    Examples
    --------
    >>> [str(n) for n in extract_numbers("Premium $604 (-0.133%), up 12 percent; 1.2 million units")]
    ['604', '-0.133%', '12%', '1200000']
    >>> extract_numbers("Rule C-1 applies") == []
    True
    """
    if not text:
        return []
    out: list[Number] = []
    for m in _NUM_RE.finditer(text):
        try:
            raw = Decimal(m.group("num").replace(",", ""))
        except InvalidOperation:  # pragma: no cover - regex guarantees digits
            continue
        out.append(_make_number(m, raw))
    if words:
        for m in _WORDNUM_RE.finditer(text):
            out.append(_make_number(m, Decimal(_WORD_NUMBERS[m.group("num").lower()])))
        out.sort(key=lambda n: n.start)
    return out


def number_keys(text: str | None) -> set[tuple[Decimal, bool]]:
    """The set of :attr:`Number.key` values in ``text``."""
    return {n.key for n in extract_numbers(text)}


# ---------------------------------------------------------------------------
# Dates and times
# ---------------------------------------------------------------------------

_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august",
     "september", "october", "november", "december"], start=1)}
_MONTHS.update({k[:3]: v for k, v in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MON = r"(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"

_DATE_PATTERNS = [
    re.compile(r"\b(?P<year>\d{4})-(?P<mon>\d{1,2})(?:-(?P<day>\d{1,2}))?\b"),            # 2021-03(-03)
    re.compile(rf"\b{_MON}\s+{_DAY},?\s+{_YEAR}\b", re.I),                                 # March 3, 2021
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MON},?\s+{_YEAR}\b", re.I),                       # 3 March 2021
    re.compile(r"\b(?P<mon>\d{1,2})/(?P<day>\d{1,2})/(?P<year>\d{4})\b"),                 # 3/15/2021 (US)
    re.compile(rf"\b{_MON},?\s+{_YEAR}\b", re.I),                                          # March 2021
    re.compile(rf"\b{_MON}\s+{_DAY}\b(?!,?\s*\d)", re.I),                                  # March 3
    re.compile(r"(?<![\d.,$€£\-])\b(?P<year>1[5-9]\d\d|20\d\d)\b(?![.,]\d|\s?%)"),        # bare year
]


@dataclass(frozen=True)
class DateMention:
    """A normalised (possibly partial) calendar date: ``key = (year, month, day)``.

    Missing parts are None. An answer date is supported by a context date when
    every part the answer states is present and equal in the context date
    (see :func:`date_supported`).
    """

    year: int | None
    month: int | None
    day: int | None
    text: str
    start: int
    end: int

    @property
    def key(self) -> tuple[int | None, int | None, int | None]:
        return (self.year, self.month, self.day)


def _month(s: str) -> int | None:
    if s.isdigit():
        v = int(s)
        return v if 1 <= v <= 12 else None
    return _MONTHS.get(s.lower().rstrip("."))


def extract_dates(text: str | None) -> list[DateMention]:
    """Calendar dates in ``text``: ISO, "March 3, 2021", "3 March 2021", "3/15/2021",
    "March 2021", "March 3" and bare years 1500-2099. Overlapping matches keep the
    most specific (earliest pattern) one.

    Examples
    --------
    >>> [d.key for d in extract_dates("From 2021-03 to March 3, 2021 and 3 March 2021")]
    [(2021, 3, None), (2021, 3, 3), (2021, 3, 3)]
    """
    if not text:
        return []
    taken: list[tuple[int, int]] = []
    out: list[DateMention] = []
    for pat in _DATE_PATTERNS:
        for m in pat.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            g = m.groupdict()
            mon = _month(g["mon"]) if g.get("mon") else None
            if g.get("mon") and mon is None:
                continue
            day = int(g["day"]) if g.get("day") else None
            if day is not None and not 1 <= day <= 31:
                continue
            # "may" is also a modal verb: only accept it with a day or a year
            if g.get("mon") and g["mon"].lower() == "may" and not (g.get("year") and day):
                if not g.get("year"):
                    continue
            year = int(g["year"]) if g.get("year") else None
            taken.append((m.start(), m.end()))
            out.append(DateMention(year, mon, day, m.group(0), m.start(), m.end()))
    out.sort(key=lambda d: d.start)
    return out


def date_supported(answer_date: tuple, context_dates: list[tuple]) -> bool:
    """True when some context date agrees with every part the answer date states.

    >>> date_supported((2021, 3, None), [(2021, 3, 3)])
    True
    >>> date_supported((2021, 3, 3), [(2021, 3, None)])
    False
    """
    parts = [(i, v) for i, v in enumerate(answer_date) if v is not None]
    if not parts:
        return False
    return any(all(c[i] == v for i, v in parts) for c in context_dates)


_TIME_RE = re.compile(r"\b(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ap>[ap]\.?m\.?)?(?=\W|$)", re.I)


def normalize_time(text: str) -> tuple[int, int] | None:
    """'3:30 pm' -> (15, 30); '15:30' -> (15, 30); None when no clock time is found."""
    for m in _TIME_RE.finditer(text):
        if not (m.group("m") or m.group("ap")):
            continue
        h, mi = int(m.group("h")), int(m.group("m") or 0)
        ap = (m.group("ap") or "").lower().replace(".", "")
        if ap == "pm" and h < 12:
            h += 12
        if ap == "am" and h == 12:
            h = 0
        if h < 24 and mi < 60:
            return (h, mi)
    return None


def extract_times(text: str | None) -> list[tuple[tuple[int, int], int, int]]:
    """All clock times in ``text`` as ((hour, minute), start, end)."""
    out = []
    for m in _TIME_RE.finditer(text or ""):
        if m.group("m") or m.group("ap"):
            t = normalize_time(m.group(0))
            if t:
                out.append((t, m.start(), m.end()))
    return out


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
    p = normalize_ws(phrase.replace("’", "'"))
    lead = r"(?<!\w)" if p[:1].isalnum() else ""
    tail = r"(?!\w)" if p[-1:].isalnum() else ""
    return re.compile(lead + re.escape(p) + tail)


def contains_phrase(text: str | None, phrase: str) -> bool:
    """True when ``phrase`` occurs in ``text`` as whole words (case- and whitespace-insensitive)."""
    return phrase_pattern(phrase).search(normalize_ws((text or "").replace("’", "'"))) is not None


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


_ABBREV = re.compile(r"(?:^|\s)(?:Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr|Inc|Co|Corp|Ltd|vs|No|Gen|Gov|Sen|Rep|Mt|Ft|"
                     r"[A-Z]|e\.g|i\.e|U\.S|U\.K)\.$")
