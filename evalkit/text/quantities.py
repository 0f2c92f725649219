"""Quantities with their units, read so that equal amounts compare equal: 1.2 kg = 1,200 g, 75 cm = 0.75 m,
90 minutes = an hour and a half, twice a year = every six months, €99 = 99 euros.

Number words are read by ``text2num`` (``alpha2digit``: "twelve hundred" -> 1200, "four" -> 4), units by
``pint`` (any unit it knows after a number: "kg", "grams", "litres", "°C", "V", "mAh", "km/h"), so no table
of conversions lives here. What pint does not do is read here, each a rule with its example:

* currency is a unit of its own, never converted ("€99", "99 euros", "USD 99", "$1.2 million");
* a frequency is a rate: "every 4 weeks" = 1 / (4 week), "twice a year" = "2 times a year" = 2 / year,
  "monthly" = 1 / month, so "twice a year" equals "every six months";
* idioms pint and text2num leave alone: "an hour and a half" = 1.5 hour, "half an hour" = 0.5 hour,
  "a dozen" = 12, "a decade" = 10 years, "once" / "twice" / "three times" = 1 / 2 / 3 times;
* "55p" and "55 pence" are £0.55; "US$40" is $40; "1½ hours" is 1.5 hours; "2 wks", "3 mths" are weeks and
  months (pint reads "mths" as millithou); "a couple of days" is 2 days, "every other day" every 2 days;
* a working day is a time of its own: "10 working days" = "two working weeks", not 10 calendar days;
* a four-digit number before a unit is an amount, not a year ("1500 ml", "2000 euros");
* a clock time is no amount: "2 pm" and "14:00" are times of day, so "two workshops" is not "2 pm";
* a number without a unit is a count, compared with counts only; a year inside a date is not a count.

Examples
--------
>>> [q.key() for q in read_quantities("It weighs 1.2 kg and costs €99.")]
[('[mass]', 1.2), ('EUR', 99.0)]
>>> same_amount(read_quantities("1,200 grams")[0], read_quantities("1.2 kg")[0])
True
>>> same_amount(read_quantities("twice a year")[0], read_quantities("every six months")[0])
True
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Sequence
from functools import lru_cache

# words after a number that are English, not units, although pint knows a unit by that name or symbol
_NOT_UNITS = frozenset("a an and as at by do for from in is it of on or per the to with are be day-to-day "
                       "pm am x times time de has he me re us".split()  # "In 1999 he left" is no charge in "he"
                      # things counted, which pint knows as old units: "up to 3 bags" is no 3 × 94 lb of cement,
                      # "4 pins" no picoinches, "2 points" no typographic points, "3 quarters" no weight
                      + "bag bags pin pins point points quarter quarters link links chain chains hand hands pole "
                        "poles rod rods league leagues peck pecks".split())
_CURRENCY = {"€": "EUR", "$": "USD", "£": "GBP", "¥": "JPY", "eur": "EUR", "euro": "EUR", "euros": "EUR",
             "usd": "USD", "dollar": "USD", "dollars": "USD", "gbp": "GBP", "pound": "GBP", "pounds": "GBP",
             "chf": "CHF", "francs": "CHF", "sek": "SEK", "kronor": "SEK", "nok": "NOK", "dkk": "DKK",
             "jpy": "JPY", "yen": "JPY", "cents": "EUR/100", "bucks": "USD", "quid": "GBP", "pence": "GBP/100",
             "p": "GBP/100"}
CURRENCY_CODES = frozenset({"EUR", "USD", "GBP", "CHF", "SEK", "NOK", "DKK", "JPY"})  # a money amount's dimension
# a currency's hundredth part, read as the currency: "55p" and "55 pence" are £0.55 (cents stay apart: euro or
# dollar cents, the text rarely says which)
_HUNDREDTHS = {"GBP/100": "GBP"}
# unit words pint reads as another unit, or not at all: "2 mths" is no millithou, "3 kilos" no kiloseconds
_UNIT_WORDS = {"wk": "week", "wks": "week", "mo": "month", "mos": "month", "mth": "month", "mths": "month",
               "kilo": "kilogram", "kilos": "kilogram", "amp": "ampere", "amps": "ampere"}  # "amps": no attometre/ps
_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "k": 1e3, "m": 1e6, "bn": 1e9}
_ADVERB_RATES = {"hourly": "hour", "daily": "day", "weekly": "week", "fortnightly": "fortnight",
                 "monthly": "month", "quarterly": "quarter", "annually": "year", "yearly": "year"}
_IDIOMS = ((re.compile(r"\ban?\s+(hour|day|week|month|year|minute)\s+and\s+a\s+half\b", re.I), r"1.5 \1s"),
           (re.compile(r"\bhalf\s+an?\s+(hour|day|week|month|year|minute)\b", re.I), r"0.5 \1"),
           (re.compile(r"\b(\d+(?:\.\d+)?)\s+and\s+a\s+half\s+(hours|days|weeks|months|years|minutes)\b", re.I),
            lambda m: f"{float(m.group(1)) + 0.5:g} {m.group(2)}"),
           (re.compile(r"\ban?\s+hour\s+and\s+(?:a\s+)?(?:three[\s-]+quarters|3\s+quarters)\b", re.I), "1.75 hours"),
           (re.compile(r"\ban?\s+hour\s+and\s+a\s+quarter\b", re.I), "1.25 hours"),
           (re.compile(r"\b(?:three|3)[\s-]+quarters\s+of\s+an\s+hour\b", re.I), "0.75 hours"),
           (re.compile(r"\ba\s+quarter\s+of\s+an\s+hour\b", re.I), "0.25 hours"),
           (re.compile(r"\ba\s+dozen\b", re.I), "12"),
           # "A decade." answers "how long must I keep them?" (pint knows "decade", but "a" is no number)
           (re.compile(r"\bhalf\s+a\s+decade\b", re.I), "5 years"),
           (re.compile(r"\b(?:a|one)\s+decade\b", re.I), "10 years"),
           (re.compile(r"\ba\s+couple\s+of\b", re.I), "2"),
           (re.compile(r"\b7\s+days\s+a\s+week\b", re.I), "every day"),  # open "seven days a week": daily
           # "every other day" is every 2 days
           (re.compile(r"\b(every|each)\s+other\s+(hour|day|week|month|year)\b", re.I), r"\1 2 \2s"),
           (re.compile(r"\bhalf\s+an?\s+(kilo(?:gram|gramme)?|litre|liter|metre|meter|mile|kilometre|kilometer)\b",
                       re.I), r"0.5 \1"),
           # "for a week", "within a month", "at most a fortnight", "lasts an hour": one of the unit (not "twice a
           # year", a rate)
           (re.compile(r"\b(for|within|in|after|under|over|than|most|least|to|about|around|nearly|almost|only|just|"
                       r"lasts?|lasting|takes?|taking|roughly|approximately)"
                       r"\s+an?\s+(?:(?:rolling|calendar|full|whole|single)\s+)?(hour|day|week|fortnight|month|year|"
                       r"minute)\b", re.I), r"\1 1 \2"),
           # an answer opening with the duration: "A year from purchase.", "A fortnight in advance." (not "A day pass")
           (re.compile(r"(?:^|(?<=[.!?:;]\s))an?\s+(?:(?:rolling|calendar|full|whole|single)\s+)?"
                       r"(hour|day|week|fortnight|month|year|minute)\b(?=\s*(?:[.,;:!?]|$|(?:from|of|after|before|in|"
                       r"ahead|later|ago|to|until|at|with|on|or so)\b))", re.I), r"1 \1"),
           (re.compile(r"\bonce\b", re.I), "1 times"),
           (re.compile(r"\btwice\b", re.I), "2 times"),
           (re.compile(r"\bthrice\b", re.I), "3 times"),
           (re.compile(r"\b(every|each)\s+(hour|day|week|month|year|quarter|fortnight)\b", re.I), r"\1 1 \2"),
           (re.compile(r"\bper\s+(hour|day|week|month|year)\b", re.I), r"a \1"),
           # "eight pounds sixty-nine" is £8.69, "one pound ten" £1.10 (not "5 pounds 10 kg")
           (re.compile(r"\b(\d+)\s+(pounds?|euros?|dollars?)\s+(\d{1,2})\b(?![.,]\d)(?=\s*([^\W\d_]*))", re.I),
            lambda m: m.group(0) if m.group(4) and (m.group(4).lower() in ("percent", "per") or unit_of(m.group(4)))
            else f"{_SYMBOL[m.group(2).lower().rstrip('s')]}{m.group(1)}.{int(m.group(3)):02d}"))
_SYMBOL = {"pound": "£", "euro": "€", "dollar": "$"}
# read before the number words: "half a million pounds" is £500,000 (text2num reads "a million" alone)
_FRACTION_OF_SCALE = ((re.compile(r"\bhalf\s+a\s+dozen\b", re.I), "6"),
                      (re.compile(r"\bhalf\s+an?\s+(million|billion|thousand)\b", re.I), r"0.5 \1"),
                      (re.compile(r"\ba\s+quarter\s+of\s+an?\s+(million|billion)\b", re.I), r"0.25 \1"))
_VULGAR = {"½": 0.5, "¼": 0.25, "¾": 0.75}
# a hyphen after a letter, a digit or a code joins ("KT-30", "2024-03"); after a space it is a minus sign ("-8 °C")
_NUMBER = re.compile(r"(?<![\w.,/:])(?<![\w.,/:)][-−])(?P<cur>[€$£¥])?\s?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
                     r"(?![\d/])(?:\s?(?P<scale>thousand|million|billion|trillion)\b|"
                     r"(?<=\d)(?P<cscale>bn|k|m)\b(?![.,]?\w))?")
_CODE_BEFORE = re.compile(r"\b(?P<code>" + "|".join(sorted(CURRENCY_CODES)) + r")\s?$")
_CLOCK = re.compile(r"^\s?(?:[ap]\.?m\.?(?!\w)|o'clock|h\b|in the (?:morning|afternoon|evening)\b|at night\b)|^:\d\d",
                    re.I)
_MONTH = (r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*")
_DAY_OF_MONTH = re.compile(r"^(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"\b|^(?:st|nd|rd|th)\b", re.I)
_MONTH_BEFORE = re.compile(r"\b" + _MONTH + r"\.?\s+$", re.I)
_UNIT_AFTER = re.compile(r"^\s?-?(?P<unit>°\s?[CF]\b|(?:degrees?|deg)(?:\s+(?:celsius|fahrenheit|c|f))?\b|"
                         r"[^\W\d_][\w°/²³µ]*(?:\s?/\s?[^\W\d_]+)?|%)", re.I)
_RATE_AFTER = re.compile(r"^\s*(?:times\s+)?(?:a|an|per|each|every)\s+(?:calendar\s+)?(?P<per>hour|day|week|month|year|quarter|"
                         r"fortnight)\b|^\s*times\s+(?P<adverb>hourly|daily|weekly|monthly|yearly|annually)\b", re.I)
# hours of use: "every 200 printing hours", "500 operating hours", "40 flight hours"
_OF_USE = r"printing|print|operating|running|flight|flying|engine|riding|usage"
_UNIT_QUALIFIER = re.compile(r"^\s?(?:(?:calendar|clear|whole|full|free|extra|additional|further|consecutive|paid|"
                             r"unpaid|more|" + _OF_USE + r")\s+){1,2}"
                             # "15 extra free minutes": two of them
                             r"(?=(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?)\b)", re.I)


def unit_qualifiers(text: str) -> frozenset[str]:
    """The words of use between a number and its unit that the amount's text leaves out ("printing" of "every 200
    printing hours", read as every 200 hours): words of the value, not of what it is about. A qualifier such as
    "calendar" or "extra" is not one: "7 calendar days" in an answer and its context is one phrase.

    >>> sorted(unit_qualifiers("Every 200 printing hours, with 15 extra free minutes and 500 operating hours."))
    ['operating', 'printing']
    """
    of_use = re.compile(_OF_USE, re.I)
    return frozenset(w.lower() for m in re.finditer(r"\d(?=\s)", text)
                     for q in [_UNIT_QUALIFIER.match(text[m.end():])] if q for w in q.group(0).split()
                     if of_use.fullmatch(w))


# "10 working days", "5 business days", "a 15-working-day cut-off"
_WORKING = re.compile(r"^[\s-]?(?:working|business)[\s-]+(day|week)(s?)\b", re.I)
_EVERY_BEFORE = re.compile(r"\b(?:every|each)\s+$", re.I)
_RANGE_BETWEEN = re.compile(r"^\s*(?:-|–|—|to|and)\s*$", re.I)
_AMOUNT_BEFORE = re.compile(r"\d(?:\s?[^\W\d_]+)?\s+$")
_PERIOD_AFTER = re.compile(r"^\s*(?:(?:a|an|per|(?:for\s+)?(?:each|every)(?:\s+1)?)\s+(?:calendar\s+|remaining\s+)?"
                           r"(?P<per>hour|day|week|month|year|"
                           r"quarter|fortnight)\b|(?P<adverb>" + "|".join(_ADVERB_RATES) + r")\b)", re.I)
_ADVERB = re.compile(r"\b(" + "|".join(_ADVERB_RATES) + r")\b", re.I)


@dataclass(frozen=True)
class Quantity:
    """An amount as read: ``magnitude`` in the base unit of its ``dimension`` (pint's base units: kg, m, s,
    K, ...; a currency code; "%"; "count" for a bare number; a rate's is "1 / [time]").

    ``text`` is the words it was read from (after number words became digits), ``noun`` the word after a
    count ("1,200 members") and ``clock`` whether it is a time of day (not an amount).
    """

    magnitude: float
    dimension: str
    text: str
    noun: str | None = None
    clock: bool = False
    written: float | None = None  # the number as written, before its unit was converted ("10 seconds": 10)
    per: float | None = None  # a price's period in seconds ("€20 per month", "£5 a day", "$99 annually")

    def key(self) -> tuple[str, float]:
        """``(dimension, magnitude)`` rounded to 6 significant digits, for display and sets."""
        return (self.dimension, float(f"{self.magnitude:.6g}"))


@lru_cache(maxsize=1)
def _units():
    """pint's registry (its definitions ship in the package; built once per process)."""
    import pint

    ureg = pint.UnitRegistry(autoconvert_offset_to_baseunit=True)
    # working days are a time of their own: 10 working days are two working weeks, not 10 calendar days
    for line in ("working_day = [working_time]", "working_week = 5 * working_day"):
        ureg.define(line)
    return ureg


@lru_cache(maxsize=4096)
def unit_of(word: str):
    """pint's unit for ``word`` when it names a physical unit, else None ("members", "of", "pm")."""
    w = word.strip().replace(" ", "").rstrip(".")
    low = w.lower()
    if w == "A":  # "16 A", "16A": amperes (the article is lower-case, or no unit after a number)
        w = low = "ampere"
    if not w or low in _NOT_UNITS or w.isdigit():
        return None
    if low in _UNIT_WORDS:
        w = low = _UNIT_WORDS[low]
    if low.startswith("°") or low.startswith("deg"):
        w = "degF" if low.endswith("f") or low.endswith("fahrenheit") else "degC"
    ureg = _units()
    for candidate in dict.fromkeys((w, low, "liter" if low == "l" else low)):  # symbols first: "V", "W", "mAh"
        try:
            unit = ureg.parse_units(candidate)
        except Exception:  # pint raises several types for a word that is no unit; none is ours to pass on
            continue
        if str(unit.dimensionality) in _physical_dimensions() or _is_data_size(unit):
            return unit
    return None


def _is_data_size(unit) -> bool:
    """Bytes and their multiples ("100 MB", "0.1 GB"): pint counts information as dimensionless, so a data size
    is told by its converting to bytes (and "mb" stays a millibarn only where no byte reading was found first)."""
    if str(unit.dimensionality) != "dimensionless":
        return False
    try:
        _units().Quantity(1, unit).to("byte")
    except Exception:  # pint's DimensionalityError and friends: not a data size
        return False
    return "byte" in str(unit) or str(unit).endswith("bit")


# the kinds of amount an answer about a product, a service or a plan states; pint knows many more units
# ("units" is a unit of luminous flux there), which in prose are more often words
_PHYSICAL = ("m", "kg", "s", "K", "l", "m**2", "km/h", "V", "W", "A", "mAh", "Wh", "Hz", "bar",
             "J", "N", "ohm", "m/s**2", "g/l", "working_day")


@lru_cache(maxsize=1)
def _physical_dimensions() -> frozenset[str]:
    ureg = _units()
    return frozenset(str(ureg.parse_units(u).dimensionality) for u in _PHYSICAL)


def with_digits(text: str) -> str:
    """``text`` with number words as digits (text2num) and the idioms above rewritten."""
    from text_to_num import alpha2digit

    for pattern, repl in _FRACTION_OF_SCALE:
        text = pattern.sub(repl, text)
    # "1½ hours" is 1.5 hours, "US$40" is $40 (NFKC would make "½" "1⁄2", which reads as two numbers)
    text = re.sub(r"(\d)?\s?([½¼¾])", lambda m: f"{int(m.group(1) or 0) + _VULGAR[m.group(2)]:g}", text)
    text = re.sub(r"\bUS\$", "$", text)
    # text2num would also read the scale of "1.2 million" as a number of its own: keep scales after digits
    protected = re.sub(r"(?<=\d)(\s+)(thousand|million|billion|trillion)\b", lambda m: m.group(1) + "SCALE"
                       + m.group(2).upper(), text, flags=re.I)
    # a number word joined to its unit ("a two-year warranty") is read as the number and the unit
    protected = re.sub(r"\b([a-z]+)-(year|month|week|day|hour|minute|second|litre|liter|metre|meter)\b", r"\1 \2",
                       protected, flags=re.I)
    out = re.sub(r"SCALE(THOUSAND|MILLION|BILLION|TRILLION)", lambda m: m.group(1).lower(),
                 alpha2digit(protected, "en", threshold=0))
    for pattern, repl in _IDIOMS:
        out = pattern.sub(repl, out)
    # "7-10 days" is a range, as "7–10 days" is (same length: readers keep their offsets); not a date's parts
    return _HYPHEN_RANGE.sub(_as_range, out)


# the first number of a range is one to three digits, or a decimal ("45-50 psi", "3.1-3.4 bar"): not a year
# ("2023-09-12") nor a code's number ("KT-40")
_HYPHEN_RANGE = re.compile(r"(?<![\w.,/:-])(\d{1,3}(?:\.\d+)?)-(?=(\d+(?:\.\d+)?)(?![\d.-]|,\d))")


def phone_number(low: str, high: str, after: str) -> bool:
    """Whether "``low``-``high``" with ``after`` following it has a phone number's shape, three digits and four,
    and no unit after it ("Call 555-1234 for help"; "100-1500 ml" is a range).

    >>> phone_number("555", "1234", " for help"), phone_number("100", "1500", " ml")
    (True, False)
    """
    if not (len(low) == 3 and len(high) == 4 and low.isdigit() and high.isdigit()):
        return False
    nxt = re.match(r"\s*([^\s\d]+)", after)
    return nxt is None or (nxt.group(1)[0] not in "%°" and unit_of(nxt.group(1).strip(".,;:!?")) is None)


def _as_range(m: re.Match) -> str:
    """"45-50" as "45–50": a range of numbers of more than one digit rises, and its upper end has no leading
    zero (a phone number's "555-0123" is none, nor is "555-1234": three digits, then four, is a phone number's
    shape); "9-5" stays a range as a single digit's always was."""
    low, high = m.group(1), m.group(2)
    if len(low) > 1 and (high.startswith("0") or float(high) <= float(low)):
        return m.group(0)
    if phone_number(low, high, m.string[m.end() + len(high):]):
        return m.group(0)
    return low + "–"


_MINUS_BEFORE = re.compile(r"(?:^|(?<=[\s(\[]))[-−]$|\bminus\s+$", re.I)


def _amount(m: re.Match) -> float:
    value = float(m.group("num").replace(",", ""))
    scale = (m.group("scale") or "").lower()
    if m.group("cscale") and m.group("cur"):  # "$5m" is five million; "5m" is five metres
        scale = m.group("cscale").lower()
    return value * _SCALES.get(scale, 1.0)


def _physical(value: float, unit_word: str, text: str) -> Quantity | None:
    unit = unit_of(unit_word)
    if unit is None:
        return None
    if _is_data_size(unit):
        size = _units().Quantity(value, unit).to("byte")
        return Quantity(float(size.magnitude), "[data]", text, written=value)
    q = _units().Quantity(value, unit).to_base_units()
    return Quantity(float(q.magnitude), str(q.dimensionality), text, written=value)


def _period(value: float, per: str):
    """``value`` ``per`` as pint's quantity; a quarter of a year is three months (pint's "quarter" is a weight)."""
    if per.lower().startswith("quarter"):
        return _units().Quantity(3 * value, "month")
    return _units().Quantity(value, per)


def _rate(value: float, per: str, every: bool, text: str) -> Quantity:
    """``value`` times per ``per`` ("2 times a year"), or once every ``value`` ``per`` ("every 4 weeks")."""
    period = _period(value if every else 1.0, per).to_base_units()
    times = 1.0 if every else value
    return Quantity(times / float(period.magnitude), str((1 / period).dimensionality), text,
                    written=None if every else value)


def _money(value: float, currency: str, text: str, after: str) -> Quantity:
    """An amount of money, with the period a price is given for when one follows it ("€20 per month")."""
    if currency in _HUNDREDTHS:
        value, currency = value / 100, _HUNDREDTHS[currency]
    period = _PERIOD_AFTER.match(after)
    if period is None:
        return Quantity(value, currency, text)
    unit = period.group("per") or _ADVERB_RATES[period.group("adverb").lower()]
    seconds = float(_period(1.0, unit).to_base_units().magnitude)
    return Quantity(value, currency, text + " " + period.group(0).strip(), per=seconds)


def _read_one(t: str, m: re.Match, unit_of_next: str | None) -> Quantity | None:
    """The quantity the number at ``m`` states, reading the words around it."""
    value, after, before = _amount(m), t[m.end():m.end() + 40], t[max(0, m.start() - 12):m.start()]
    text = m.group(0).strip()
    if m.group("cur"):
        return _money(value, _CURRENCY[m.group("cur")], text, after)
    code = _CODE_BEFORE.search(before)
    if code:
        return _money(value, code.group("code"), code.group(0) + text, after)
    if m.group("cscale"):  # a letter glued to a number that is no money is its unit: "5m", "2k"
        after = m.group("cscale") + after
    if _CLOCK.match(after):
        return Quantity(value, "clock", text, clock=True)
    if _DAY_OF_MONTH.match(after) or _MONTH_BEFORE.search(before):  # "24 May", "May 24": a date, not an amount
        return None
    every = _EVERY_BEFORE.search(before) is not None
    after = _UNIT_QUALIFIER.sub("", after, count=1)  # "7 calendar days" is 7 days
    after = _WORKING.sub(lambda w: f" working_{w.group(1).lower()}{w.group(2) or ''}", after, count=1)
    u = _UNIT_AFTER.match(after)
    word = u.group("unit") if u else ""
    if word.lower().rstrip(".") in _CURRENCY and not (word.lower() == "p" and value >= 100):  # "1080p" is a resolution
        return _money(value, _CURRENCY[word.lower().rstrip(".")], text + " " + word, after[u.end():])
    if word == "%" or after.lower().lstrip().startswith(("percent", "per cent")):
        return Quantity(value, "%", text + "%")
    rate = _RATE_AFTER.match(after)
    if rate and not every:
        per = rate.group("per") or _ADVERB_RATES[rate.group("adverb").lower()]
        return _rate(value, per, False, t[m.start():m.end() + rate.end()])
    if every and unit_of(word) is not None and str(unit_of(word).dimensionality) == "[time]":
        return _rate(value, word, True, "every " + text + " " + word)
    physical = _physical(value, word, text + " " + word.replace("_", " ")) if word else None
    if physical is None and unit_of_next and word.lower() in ("", "to", "and"):
        physical = _physical(value, unit_of_next, text + " " + unit_of_next)  # "5 to 35 °C": the range's unit
    if physical is not None and physical.dimension == "[temperature]" and _MINUS_BEFORE.search(before):
        # "-8 °C", "minus eight degrees": below zero (only a temperature is read with its sign: a dash before a
        # price or a count is a list's or a sentence's)
        unit = physical.text[len(text):].strip()
        return _physical(-value, unit, f"-{text} {unit}")
    if physical is not None:
        return physical
    noun = word.lower() if word and word[0].isalpha() else None
    return Quantity(value, "count", text, noun=noun)


_COMPOUND_GAP = re.compile(r"\s?[^\W\d_]+\s*(?:,\s*|and\s+)?", re.I)


def _compound_durations(t: str, read: list[tuple[re.Match, Quantity]]) -> list[Quantity]:
    """One duration for "1 hour 45 minutes" / "2 years and 6 months" (a larger unit, then a smaller one, with
    nothing but the first unit word between them): 105 minutes, not an hour and a separate 45 minutes."""
    out: list[Quantity] = []
    prev_end = None
    for m, q in read:
        last = out[-1] if out else None
        if (last is not None and prev_end is not None and q.dimension == last.dimension == "[time]"
                and last.magnitude > q.magnitude and _COMPOUND_GAP.fullmatch(t[prev_end:m.start()])
                and unit_of(last.text.split()[-1]) is not None
                and unit_of(last.text.split()[-1]) != unit_of(q.text.split()[-1])):  # "45 and 30 minutes": two
            out[-1] = Quantity(last.magnitude + q.magnitude, "[time]", last.text + " " + q.text)
        else:
            out.append(q)
        prev_end = m.end()
    return out


def read_quantities(text: str | None) -> list[Quantity]:
    """Every amount ``text`` states, in order (see the module docstring for the reading rules).

    Years inside a calendar date and ordinals are not read ("3 March 2024", "the 3rd"); a range gives both
    ends, the lower end taking the upper end's unit ("5–35 °C", "between 5 and 35 degrees").

    >>> [q.key() for q in read_quantities("Every four weeks; 5–35 °C; an hour and a half; 2 pm")]
    [('1 / [time]', 4.1336e-07), ('[temperature]', 278.15), ('[temperature]', 308.15), ('[time]', 5400.0), ('clock', 2.0)]
    """
    if not text:
        return []
    return list(_read_quantities(text))


def _period_end(t: str, m: re.Match) -> int:
    """Where the period of the price read at ``m`` ends ("€20 per month", "20 euros every 1 month")."""
    rest = t[m.end():]
    word = re.match(r"\s?([^\W\d_]+)(?=\s)", rest)
    offset = word.end() if word and word.group(1).lower() in _CURRENCY else 0
    period = _PERIOD_AFTER.match(rest[offset:])
    return m.end() + offset + period.end() if period else m.end()


def _amount_after(after: str) -> bool:
    """Whether a bare four-digit number is an amount, not a year: a unit or a currency follows it ("1500 ml",
    "2000 pounds"; "in 2000 the ..." is a year)."""
    u = _UNIT_AFTER.match(after)
    word = u.group("unit").lower().rstrip(".") if u else ""
    return bool(word) and (word in _CURRENCY or word == "%" or unit_of(word) is not None)


@lru_cache(maxsize=16384)
def _read_quantities(text: str) -> tuple[Quantity, ...]:
    """:func:`read_quantities`, cached by text: the checks of one row read the same answer, question and context
    clauses again (a pure function of the string; each caller gets its own list)."""
    from evalkit.text.dates import extract_dates

    t = with_digits(text)
    dates = [(d.start, d.end) for d in extract_dates(t, day_month=True) if d.day is not None
             or (d.year is not None and not (d.month is None and _amount_after(t[d.end:d.end + 40])))]
    found = [m for m in _NUMBER.finditer(t) if not any(s <= m.start() < e for s, e in dates)]
    read: list[tuple[re.Match, Quantity]] = []
    period_end = 0
    for i, m in enumerate(found):
        if m.start() < period_end:  # the "1" of "£8 for every 1 month": a price's period, not a rate of its own
            continue
        nxt = found[i + 1] if i + 1 < len(found) else None
        unit_next = None
        if nxt is not None and _RANGE_BETWEEN.match(t[m.end():nxt.start()] or "-"):
            u = _UNIT_AFTER.match(t[nxt.end():nxt.end() + 40])
            unit_next = u.group("unit") if u else None
        q = _read_one(t, m, unit_next)
        if q is not None:
            read.append((m, q))
            period_end = _period_end(t, m) if q.per is not None else period_end
    out = _compound_durations(t, read)
    # "monthly" is a rate of its own; after an amount ("3 times daily", "0.15 kg daily") it only says per what
    out += [_rate(1.0, _ADVERB_RATES[a.group(1).lower()], True, a.group(1)) for a in _ADVERB.finditer(t)
            if not _AMOUNT_BEFORE.search(t[:a.start()])]
    return tuple(out)


def same_amount(a: Quantity, b: Quantity, rel_tol: float = 0.005) -> bool:
    """Whether two quantities state the same amount: the same dimension and magnitudes within ``rel_tol``
    (0.5%: "1.7 l" and "1,700 ml"; not "1.7 l" and "1.8 l"). Two prices given per a period compare per second
    ("€20 per month" is "€240 a year", not "€20 a year"); a price without its period matches the amount alone
    ("€20." for "€20 per year").

    >>> q = lambda text: read_quantities(text)[0]
    >>> same_amount(q("€20 per month"), q("€20 per year")), same_amount(q("€20 a month"), q("240 euros annually"))
    (False, True)
    >>> same_amount(q("€20"), q("€20 per year")), same_amount(q("€20 each month"), q("EUR 20 monthly"))
    (True, True)
    """
    if a.dimension != b.dimension or a.clock != b.clock:
        return False
    if a.per is not None and b.per is not None:
        return math.isclose(a.magnitude / a.per, b.magnitude / b.per, rel_tol=rel_tol, abs_tol=1e-12)
    return math.isclose(a.magnitude, b.magnitude, rel_tol=rel_tol, abs_tol=1e-12)


def dimension_of(unit: str) -> str:
    """The dimension :class:`Quantity` records for an amount in ``unit`` ("V" -> pint's voltage dimension)."""
    return str(_units().parse_units(unit).dimensionality)


_FIGURE = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?(?![\w.]*\d)")


def figures_in(text: str | None) -> list[float]:
    """Every number ``text`` writes, number words as digits: the factors a careful reader multiplies by ("a
    15 kg dog", "over the 12-month term", "two adults and one child").

    >>> figures_in("two adults and one child, 40 kWh, £1,250.50")
    [2.0, 1.0, 40.0, 1250.5]
    """
    return [float(m.group(0).replace(",", "")) for m in _FIGURE.finditer(with_digits(text or ""))]


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=0.005, abs_tol=1e-12)  # relative only: a base unit's magnitudes are tiny


# a bare count or a percentage matches some product of the figures about by chance; a rate times a number is no
# rate ("every month" × 6 is not "every six months")
_NOT_DERIVED = frozenset({"count", "%", "1 / [time]"})


def derivation(amount: Quantity, stated: Sequence[Quantity], factors: Sequence[float],
               bases: Sequence[Quantity] = (), split: bool = False) -> str | None:
    """How ``amount`` follows by simple arithmetic from amounts a text states (``stated``: the context's) and
    numbers the asker or the answer gives (``factors``; ``bases``: their amounts), or None. A careful reader
    accepts three steps, each with stated figures only: a stated amount times a given number ("4 mg per kg"
    for "a 15 kg dog": 60 mg; "£11 a month" over "12 months": £132), a stated percentage of a given amount
    (0.35% of "a £100,000 portfolio": £350), and a total of two stated amounts of one kind, each times a given
    number (2 × £18 + 1 × £9 for "two adults and one child": £45). Magnitudes compare within 0.5%. Where the
    answer says it splits an amount (``split``: "in 10 monthly instalments", "each"), a stated amount divided by a
    given number too (£111.60 over 10 instalments: £11.16).

    >>> q = lambda text: read_quantities(text)[0]
    >>> derivation(q("60 mg"), [q("4 mg per kg")], [15.0])
    '4 mg × 15'
    >>> derivation(q("£350"), [q("0.35%")], [], [q("£100,000")])
    '0.35% of £100,000'
    >>> derivation(q("£45"), [q("£18 adult"), q("£9 child")], [2.0, 1.0])
    '2 × £18 + 1 × £9'
    >>> derivation(q("£46"), [q("£18 adult"), q("£9 child")], [2.0, 1.0]) is None
    True
    >>> derivation(q("75 mg"), [q("4 mg per kg")], [15.0]) is None
    True
    >>> derivation(q("every 6 months"), [q("monthly")], [6.0]) is None  # a rate times a number is no rate
    True
    >>> derivation(q("£11.16"), [q("£111.60")], [10.0], split=True), derivation(q("£11.16"), [q("£111.60")], [10.0])
    ('£111.60 ÷ 10', None)
    """
    if amount.clock or amount.dimension in _NOT_DERIVED:
        return None
    same = [s for s in stated if s.dimension == amount.dimension and not s.clock and s.magnitude > 0]
    counts = sorted({f for f in factors if f > 0})
    for s in same:
        for f in counts:
            if f != 1 and _close(amount.magnitude, s.magnitude * f):
                return f"{s.text} × {f:g}"
            if split and f >= 2 and f == int(f) and _close(amount.magnitude, s.magnitude / f):
                return f"{s.text} ÷ {f:g}"
    for p in (s for s in stated if s.dimension == "%"):
        for b in (b for b in bases if b.dimension == amount.dimension):
            if _close(amount.magnitude, p.magnitude / 100 * b.magnitude):
                return f"{p.text} of {b.text}"
    # each given number counts one item once ("two adults and one child": 2 and 1, not 2 and 2); "a child" is 1
    given = [f for f in factors if f > 0]
    pairs = {(given[i], given[j]) for i in range(len(given)) for j in range(len(given)) if i != j}
    pairs |= {(f, 1.0) for f in given} | {(1.0, f) for f in given}
    for i, s in enumerate(same):
        for t in same[i + 1:]:
            for f, g in sorted(pairs - {(1.0, 1.0)}):
                if _close(amount.magnitude, f * s.magnitude + g * t.magnitude):
                    return f"{f:g} × {s.text} + {g:g} × {t.text}"
    return None


# a share a text states in words: "half the full charging time", "a third of the price", "a quarter less"
_SHARE_WORDS = re.compile(r"\b(?:(half)|(?:a|one)[\s-]+(third|quarter|fifth))\b", re.I)
_SHARE_OF = {"half": 0.5, "third": 1 / 3, "quarter": 0.25, "fifth": 0.2}


def shares_in(text: str | None) -> list[tuple[float, str]]:
    """The shares ``text`` states, as (fraction, text): its percentages and its fraction words.

    >>> shares_in("In winter, expect up to 30% less range; 80% in roughly half the time, a third off")
    [(0.3, '30%'), (0.8, '80%'), (0.5, 'half'), (0.3333333333333333, 'a third')]
    """
    found = [(q.magnitude / 100, q.text) for q in read_quantities(text) if q.dimension == "%" and 0 < q.magnitude < 100]
    found += [(_SHARE_OF[(m.group(1) or m.group(2)).lower()], m.group(0)) for m in _SHARE_WORDS.finditer(text or "")]
    return found


def scaled(amount: Quantity, stated: Sequence[Quantity], shares: Sequence[tuple[float, str]]) -> str | None:
    """How ``amount`` is a stated amount (``stated``) scaled by a stated share (``shares``, see :func:`shares_in`):
    the share of it, or the amount less or more by the share, as a reader works out "up to 30% less" of 160 km
    (112 km) or "half the full charging time" of 5 hours (2.5 hours); None otherwise. Magnitudes compare within
    0.5%; counts, percentages and rates are never scaled (:data:`_NOT_DERIVED`).

    >>> q = lambda text: read_quantities(text)[0]
    >>> scaled(q("112 km"), [q("160 km")], [(0.3, "30%")]), scaled(q("2.5 hours"), [q("5 hours")], [(0.5, "half")])
    ('160 km less 30%', 'half of 5 hours')
    >>> scaled(q("208 km"), [q("160 km")], [(0.3, "30%")]), scaled(q("110 km"), [q("160 km")], [(0.3, "30%")])
    ('160 km more 30%', None)
    """
    if amount.clock or amount.dimension in _NOT_DERIVED:
        return None
    for s in (s for s in stated if s.dimension == amount.dimension and not s.clock and s.magnitude > 0):
        for share, text in shares:
            for factor, how in ((share, f"{text} of {s.text}"), (1 - share, f"{s.text} less {text}"),
                                (1 + share, f"{s.text} more {text}")):
                if _close(amount.magnitude, s.magnitude * factor):
                    return how
    return None
