"""Text primitives shared by every metric: tokenisation, stop words, numbers, dates, names, declining answers.

There is exactly one number normaliser (:func:`extract_numbers`), one date
normaliser (:func:`extract_dates`), one name matcher (:func:`normalize_entity`,
:func:`find_entity`) and one abstention detector (:func:`declines_to_answer`) in
evalkit; the hallucination anchors, the grounding detector, the reference metrics,
the fact checks and the verdict all call these, so "$1,200", "Norwick Pumps'" and
"I don't know" mean the same thing everywhere. Their reading rules are pinned by
the golden table ``tests/golden/normaliser.yaml``.

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
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, getcontext
from functools import lru_cache
from typing import Protocol, Sequence

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

_P3, _P6, _P9, _P12 = (Decimal(10) ** e for e in (3, 6, 9, 12))
# Scale words count wherever they follow a number ("5 million", "5mln", "2bn").
_SCALE_WORDS = {"thousand": _P3, "million": _P6, "mln": _P6, "mn": _P6, "billion": _P9, "bn": _P9,
                "trillion": _P12}
# Letters are scales only glued to a currency amount ("$5m", "€2B", "$5MM"): elsewhere "5m" is five
# metres and "3b" / "2B" are identifiers (section 3b, Form 2B).
_CURRENCY_SUFFIXES = {"k": _P3, "m": _P6, "mm": _P6, "b": _P9, "t": _P12, "tn": _P12}
# A unit glued to a number keeps the number ("5km" = "5 km" = 5). Single letters are case-sensitive
# (SI symbols), so "5M" and "2B" stay identifiers. The unit is recorded but is not part of the key.
_UNITS = frozenset("mm cm km kg mg lb lbs oz ft yd mi ml hr hrs min mins sec secs ms kb mb gb tb kw kwh mw mwh "
                   "gw hz khz mhz ghz mph kph kmh rpm psi kbps mbps gbps mpg".split())
_UNIT_LETTERS = frozenset("mglLh")
_WORD_NUMBERS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_WORD_NUMBERS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
                      "eighty": 80, "ninety": 90, "hundred": 100})

_HYPHENS = "\\-\u2010\u2011"  # join a word to digits: "COVID-19", "C-1" are identifiers
_SIGNS = "\\-\u2012\u2013\u2212"  # a minus before a number: "-0.133%", "−5" (an em dash never is)
_DASHES = _HYPHENS + "\u2012\u2013\u2014\u2212"  # between two numbers: a range, "2020-2021", "5—10"

# A dash right after a number (or a "%") starts a range, not a negative number: "5%-10%", "2020-2021".
# Digits glued to letters before them are identifiers ("Q3", "H2O", "A320"); letters glued after them
# are read by _resolve_suffix.
_NUM_RE = re.compile(
    rf"""
    (?<![\w.,%])(?<![^\W\d_][{_HYPHENS}])
    (?P<sign>[{_SIGNS}])?
    (?P<cur>[$€£¥])?
    (?P<sign2>[{_SIGNS}])?
    (?P<num>(?<![\d/])\d+/\d+(?![/\d])|\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)
    (?:\s?(?P<scale>{"|".join(_SCALE_WORDS)})(?![A-Za-z])|(?P<suffix>[A-Za-z]+)(?![A-Za-z]))?
    (?:\s?(?P<pct>%|percent\b|per\s?cent\b|pct\b))?
    (?!\w)
    """,
    re.X | re.I,
)
_WORDNUM_RE = re.compile(
    r"\b(?P<num>" + "|".join(sorted(_WORD_NUMBERS, key=len, reverse=True)) + r")\b"
    r"(?:\s(?P<scale>thousand|million|billion|trillion)\b)?"
    r"(?:\s?(?P<pct>%|percent\b|per\s?cent\b))?",
    re.I,
)
_RANGE_GAP = re.compile(rf"\s*[{_DASHES}]\s*|\s+(?P<word>to|and)\s+", re.I)
_BETWEEN = re.compile(r"\bbetween\s+$", re.I)


@dataclass(frozen=True)
class Number:
    """A normalised numeric mention.

    ``value`` is exact (``Decimal``) and sign-aware; ``percent`` is True for
    "12%", "12 percent", "12 per cent". ``currency`` is the symbol if any;
    ``unit`` the unit glued to the number ("km" in "5km"), which is not part of the key.
    Two mentions denote the same quantity when :meth:`key` is equal, so
    "$1,200" == "1200" == "1,200.00", "12%" == "12 percent", "-0.133%" != "0.133%".
    """

    value: Decimal
    percent: bool
    currency: str | None
    text: str
    start: int
    end: int
    unit: str | None = None

    @property
    def key(self) -> tuple[Decimal, bool]:
        return (self.value, self.percent)

    def __str__(self) -> str:  # canonical display form
        v = format(self.value, "f")
        if "." in v:
            v = v.rstrip("0").rstrip(".")
        return f"{v}%" if self.percent else v


@dataclass
class _Mention:
    """A number as read, before its range partner and its suffix are taken into account."""

    digits: str
    raw: Decimal
    neg: bool
    cur: str | None
    mult: Decimal | None
    pct: bool
    suffix: str | None
    text: str
    start: int
    end: int
    unit: str | None = None

    def year_like(self) -> bool:
        return (len(self.digits) == 4 and self.digits.isdigit() and 1500 <= int(self.digits) <= 2099
                and not (self.neg or self.cur or self.mult or self.pct or self.suffix))


def _read_digits(m: re.Match) -> _Mention | None:
    num = m.group("num")
    if "/" in num:
        top, bottom = num.split("/")
        if int(bottom) == 0:
            return None
        raw = Decimal(top) / Decimal(bottom)
    else:
        raw = Decimal(num.replace(",", ""))
    scale = m.group("scale")
    return _Mention(num, raw, bool(m.group("sign") or m.group("sign2")), m.group("cur"),
                    _SCALE_WORDS[scale.lower()] if scale else None, bool(m.group("pct")), m.group("suffix"),
                    m.group(0), m.start(), m.end())


def _read_word(m: re.Match) -> _Mention:
    scale = m.group("scale")
    return _Mention(m.group("num"), Decimal(_WORD_NUMBERS[m.group("num").lower()]), False, None,
                    _SCALE_WORDS[scale.lower()] if scale else None, bool(m.group("pct")), None,
                    m.group(0), m.start(), m.end())


def _ranges(text: str, ms: list[_Mention]) -> list[tuple[_Mention, _Mention]]:
    """Adjacent pairs that form a range: "5-10", "5 – 10", "5 to 10", "between 5 and 10".

    The upper end takes the lower end's currency ("$5-10m" is money at both ends) and a two-digit
    upper year its century ("2020-21" is 2020 to 2021).
    """
    out = []
    for a, b in zip(ms, ms[1:]):
        gap = _RANGE_GAP.fullmatch(text[a.end:b.start])
        if not gap or (gap.group("word") or "").lower() == "and" and not _BETWEEN.search(text[:a.start]):
            continue
        b.cur = b.cur or a.cur
        if not gap.group("word") and a.year_like() and len(b.digits) == 2 and b.digits.isdigit() \
                and not (b.neg or b.suffix or b.pct) and int(b.digits) > a.raw % 100:
            b.raw = a.raw - a.raw % 100 + int(b.digits)
        out.append((a, b))
    return out


def _resolve_suffix(m: _Mention) -> bool:
    """Read the letters glued to a number; False when they make it an ordinal or an identifier."""
    s = m.suffix
    if not s:
        return True
    low = s.lower()
    if low in ("percent", "pct"):
        m.pct = True
    elif m.cur and low in _CURRENCY_SUFFIXES:
        m.mult = _CURRENCY_SUFFIXES[low]
    elif low in _UNITS or s in _UNIT_LETTERS:
        m.unit = s
    else:  # "1st", "21st", "3b", "2B", "10x": a position or a name, not a quantity
        return False
    return True


def _inherit(a: _Mention, b: _Mention) -> None:
    """The lower end of a range takes the upper end's percent and scale: "5-10%", "$5-10 million"."""
    if a.year_like() and not b.year_like():  # "from 2 in 2020 to 5%": 2020 is not the lower end
        return
    a.pct = a.pct or b.pct
    if a.mult is None and b.mult is not None and a.raw < b.raw:  # not "from 500 to 1 million"
        a.mult = b.mult


def _to_number(m: _Mention) -> Number:
    value = m.raw * (m.mult or 1)
    value = (-value if m.neg else value).normalize()
    if value == 0:
        value = Decimal(0)
    # normalize() writes 1200 as 1.2E+3; quantize back to a plain integer when whole (and representable)
    if value == value.to_integral_value() and value.adjusted() < getcontext().prec:
        value = value.quantize(Decimal(1))
    return Number(value=value, percent=m.pct, currency=m.cur, text=m.text, start=m.start, end=m.end, unit=m.unit)


def extract_numbers(text: str | None, *, words: bool = True) -> list[Number]:
    """All numeric mentions in ``text``, in order of appearance.

    Reading rules (the golden table ``tests/golden/numbers.yaml`` holds one case per rule):

    * currency symbols, thousands separators, decimals, fractions ("3/4" = 0.75, not in dates
      such as "3/15/2021"), percentages ("%", "percent", "per cent", "pct");
    * a minus sign ("-", "−", "–") counts at the start of a number ("-0.133%", "(-5)"); a dash
      between two numbers is a range, whichever dash it is ("2020-2021", "5–10%", "5—10", "5−10");
      a hyphen after letters makes an identifier ("COVID-19", "Rule C-1"), while "a 5-year plan" is 5;
    * ranges ("5-10%", "from 5 to 10 percent", "between $5 and 10 million", "2020-21"): both ends
      are read; the lower end takes the upper end's percent and scale, the upper end the lower end's
      currency, a two-digit upper year the lower year's century;
    * scale words "thousand", "million", "mln", "mn", "billion", "bn", "trillion" multiply anywhere;
      a letter scale (k, m, mm, b, t, tn) only when glued to a currency amount ("$5m" = 5,000,000);
    * a unit glued to a number keeps the number ("5km" = "5 km" = "5m" = 5; "5m" is five metres);
      other glued letters make an ordinal or an identifier, which is not a quantity ("1st", "21st",
      "section 3b", "Form 2B", "A320", "Q3", "5k" without a currency);
    * with ``words=True``, number words from zero to twenty, the tens and "hundred" ("three" -> 3).

    A year and an amount with the same digits have the same value ("2021" = "2,021");
    :func:`extract_dates` is what tells the year apart.

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
    >>> [str(n) for n in extract_numbers("2020-2021, 5-10%, $5m, 5m, section 3b")]
    ['2020', '2021', '5%', '10%', '5000000', '5']
    >>> extract_numbers("Rule C-1 applies") == []
    True
    """
    if not text:
        return []
    ms = [r for r in map(_read_digits, _NUM_RE.finditer(text)) if r is not None]
    if words:
        ms += [_read_word(m) for m in _WORDNUM_RE.finditer(text)]
        ms.sort(key=lambda r: r.start)
    pairs = _ranges(text, ms)
    kept = [r for r in ms if _resolve_suffix(r)]
    ids = {id(r) for r in kept}
    for a, b in pairs:
        if id(a) in ids and id(b) in ids:
            _inherit(a, b)
    return [_to_number(r) for r in kept]


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
    # bare year, also after a range dash ("2020-2021") but not in an identifier ("COVID-2019") or an amount
    re.compile(r"(?<![\d.,$€£¥])(?<![^\W\d_][\-\u2010\u2011])\b(?P<year>1[5-9]\d\d|20\d\d)\b(?![.,]\d|\s?%)"),
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


_ABBREV = re.compile(r"(?:^|\s)(?:Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr|Inc|Co|Corp|Ltd|vs|No|Gen|Gov|Sen|Rep|Mt|Ft|"
                     r"[A-Z]|e\.g|i\.e|U\.S|U\.K)\.$")


# ---------------------------------------------------------------------------
# Names: one matcher for every "is this entity in the context?" question
# ---------------------------------------------------------------------------

_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "`": "'", "´": "'", "′": "'"})
_EDGE_PUNCT = " \t\n.,;:!?\"“”()[]{}«»-–—/"


def fold_apostrophes(text: str) -> str:
    """``text`` with apostrophe look-alikes (’ ‘ ʼ ` ´ ′) written as "'"; same length, same offsets."""
    return text.translate(_APOSTROPHES)


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


# ---------------------------------------------------------------------------
# Declining answers
# ---------------------------------------------------------------------------

# Clauses end at . ! ? ; : (before a space or the end), at ", ", at a spaced dash, and before "but"/"however".
_CLAUSE_SPLIT = re.compile(r"([.!?;:]+(?:\s+|$)|,\s+|\s+[-–—]+\s+|\s+(?=(?:but|however|although|though)\b))", re.I)
_CAPITALISED = re.compile(r"\b[A-Z][\w'-]*")
_FIRST_PERSON = frozenset({"i", "i'm", "i've", "i'd", "i'll"})
# Words of sklearn's stop list that carry content or a quantity: "it is two", "the system is on fire" are claims.
_CONTENT_STOP_WORDS = frozenset(
    "all amount back bill bottom call co con cry de describe detail done due eight eleven empty few fifteen fifty "
    "fill find fire first five forty found four front full get give go hundred inc interest keep last least less "
    "ltd made many mill more most move much name nine one part put serious several show side six sixty some "
    "system take ten thick thin third three top twelve twenty two well".split())


@dataclass(frozen=True)
class _AbstentionWords:
    fillers: frozenset[str]
    sources: frozenset[str]
    negations: frozenset[str]
    reporting: frozenset[str]
    referrals: frozenset[str]
    lead_ins: frozenset[str]  # words that say nothing about the world: function words and fillers


@lru_cache(maxsize=1)
def _abstention_defaults() -> tuple[tuple[str, ...], tuple[str, ...], int, _AbstentionWords]:
    from .config import default_lexicons  # lazy: the lists are data in resources/lexicons.yaml

    lex = default_lexicons()
    ab = lex["abstention"]
    lists = [frozenset(w.lower() for w in ab[k])
             for k in ("fillers", "source_words", "negations", "reporting_verbs", "referrals")]
    words = _AbstentionWords(*lists, lead_ins=(stop_words() - _CONTENT_STOP_WORDS) | lists[0])
    return tuple(lex["dont_know_phrases"]), tuple(lex["dont_know_short_tokens"]), int(lex["short_answer_chars"]), words


def _names_or_numbers(clause: str, spans: list[tuple[int, int]]) -> bool:
    """Whether the clause, outside ``spans``, holds a digit or a capitalised word other than its first word or "I"."""
    for a, b in spans:
        clause = clause[:a] + " " * (b - a) + clause[b:]
    if any(c.isdigit() for c in clause):
        return True
    return any(m.start() > 0 and m.group(0).lower() not in _FIRST_PERSON for m in _CAPITALISED.finditer(clause))


def _clauses(text: str) -> list[tuple[str, bool]]:
    """The clauses of ``text`` that hold a word, each with whether its sentence ends with a question mark."""
    parts = _CLAUSE_SPLIT.split(text) + [""]
    clauses, ends = parts[::2], parts[1::2]
    out, question = [], False
    for i in range(len(clauses) - 1, -1, -1):  # backwards: a sentence's end decides for all its clauses
        if re.search(r"[.!?]", ends[i]) or i == len(clauses) - 1:
            question = "?" in ends[i]
        if word_tokens(clauses[i]):
            out.append((clauses[i], question))
    return out[::-1]


def _clause_kind(clause: str, phrases: tuple[str, ...], words: _AbstentionWords,
                 question: bool = False) -> tuple[str, list[str]]:
    """One of "declines" (with the phrases found), "filler", "absence", "referral", "question" or "claim"."""
    low, lead_ins = clause.lower(), words.lead_ins
    hits = sorted((m.start(), m.end(), p) for p in phrases if (m := phrase_pattern(p).search(low)))
    toks = word_tokens(clause)
    if hits:
        # "I'm not sure about X", "There is no data for X", "The information on X is not available" decline;
        # "The discount is not available in Territory 118" says something about a named thing.
        content = [w for w in word_tokens(low[: hits[0][0]]) if w not in lead_ins]
        if not content or content[0] in words.sources or not _names_or_numbers(clause, [h[:2] for h in hits]):
            return "declines", list(dict.fromkeys(p for _, _, p in hits))
        return "claim", []
    if all(w in lead_ins or w in words.sources for w in toks):
        return "filler", []  # "Sorry", "Based on the context"
    if any(w in words.negations or w.endswith("n't") for w in toks) and \
            any(w in words.sources or w in words.reporting for w in toks):
        return "absence", []  # "the documents do not mention a speed limit"
    if toks[0] in words.referrals and not _names_or_numbers(clause, []):
        return "referral", []  # "please consult your agent"
    return ("question" if question else "claim"), []  # "Would you like to know more about X?" asserts nothing


def declines_to_answer(answer: str | None, *, phrases: Sequence[str] | None = None,
                       short_tokens: Sequence[str] | None = None,
                       short_chars: int | None = None) -> tuple[bool, list[str]]:
    """Whether the answer as a whole declines to answer, and the uncertainty phrases it declines with.

    The answer is split into clauses (at . ! ? ; : , a spaced dash, and before "but"/"however"). A clause
    *declines* when it holds an uncertainty phrase (``phrases``, whole words, case-insensitive, curly
    apostrophes folded; in an answer shorter than ``short_chars`` characters also ``short_tokens``) and
    either the words before the phrase are only stop words and fillers ("I'm not sure about X") or name
    the information itself ("The data for X is unknown"), or the clause names nothing and states no number
    ("The value is unknown"). The answer declines when at least one clause declines and every other
    clause makes no substantive claim: a filler ("Sorry", "Based on the context"), an absence statement
    (a negation with a source word or a reporting verb: "the documents do not mention a speed limit"),
    a referral ("please consult your agent") or a question ("Would you like to know more about X?").
    A claim anywhere ("...; the premium is $604") means the answer answers.

    The lists default to ``resources/lexicons.yaml`` (``dont_know_phrases``, ``dont_know_short_tokens``,
    ``short_answer_chars`` and the ``abstention`` word lists).

    Empty policy: an empty or None answer is missing, not a decline: ``(False, [])``
    (:func:`evalkit.metrics.reference.dont_know` counts it as a non-answer on its own).

    Parameters
    ----------
    answer : str or None
    phrases : sequence of str, optional
        Uncertainty phrases ("i don't know", "not sure", ...).
    short_tokens : sequence of str, optional
        Tokens that decline only in a short answer ("none", "n/a", ...).
    short_chars : int, optional
        An answer with fewer characters than this (whitespace collapsed) is short.

    Returns
    -------
    (bool, list of str)
        Whether the answer declines, and the phrases found in its declining clauses (also when another
        clause makes a claim, so the answer does not decline).

    Examples
    --------
    >>> declines_to_answer("I don’t know; the documents do not mention a speed limit.")
    (True, ["i don't know"])
    >>> declines_to_answer("The discount is not available in Territory 118; the premium is $604.")
    (False, [])
    >>> declines_to_answer("Annulled."), declines_to_answer("None.")
    ((False, []), (True, ['none']))
    """
    if not isinstance(answer, str) or not answer.strip():
        return False, []
    d_phrases, d_short, d_chars, words = _abstention_defaults()
    text = " ".join(fold_apostrophes(unicodedata.normalize("NFKC", answer)).split())
    found = tuple(d_phrases if phrases is None else phrases)
    if len(text) < (d_chars if short_chars is None else short_chars):
        found += tuple(d_short if short_tokens is None else short_tokens)
    kinds = [_clause_kind(c, found, words, question) for c, question in _clauses(text)]
    matched = list(dict.fromkeys(p for _, ps in kinds for p in ps))
    return bool(matched) and all(k != "claim" for k, _ in kinds), matched
