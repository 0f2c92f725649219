"""The one number normaliser: every way a number, range, unit or scale is written, read to one key."""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, getcontext

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


