"""The one date and time normaliser."""
from __future__ import annotations

import calendar
import re
from dataclasses import dataclass

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
    None,  # where day-first dates without a year are read (see _DAY_MONTH)
    re.compile(r"(?<![\d.,$€£¥])(?<![^\W\d_][\-\u2010\u2011])\b(?P<year>1[5-9]\d\d|20\d\d)\b(?![.,]\d|\s?%)"),
]


_ORDINALS = {w: i for i, w in enumerate(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth "
    "fifteenth sixteenth seventeenth eighteenth nineteenth twentieth".split(), start=1)}
_ORDINALS.update({f"twenty-{w}": 20 + i for w, i in list(_ORDINALS.items())[:9]})
_ORDINALS.update({"thirtieth": 30, "thirty-first": 31})
_DAY_WORD = r"(?:the\s+)?(?P<day>" + "|".join(sorted(_ORDINALS, key=len, reverse=True)) + r")"
# a day in words ("the fourteenth of June 2024", "June the first"): read only where asked, as below
_SPOKEN_DAY = [re.compile(rf"\b{_DAY_WORD}\s+(?:of\s+)?{_MON},?(?:\s+{_YEAR})?\b", re.I),
               re.compile(rf"\b{_MON}\s+{_DAY_WORD}\b(?:,?\s+{_YEAR}\b)?", re.I)]
# the first end of a range whose year is written once, after the second ("March–August 2023", "from May 25th until
# September 8th, 2024"): the year is both ends' (read only where asked, as below)
_ANY_MON = r"(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_TO = r"\s*(?:–|—|-|to|until|till|through|and)\s*"
_SECOND_END = (rf"(?:(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_ANY_MON}|"
               rf"{_ANY_MON}(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?)")
_FIRST_END = [re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MON}(?={_TO}{_SECOND_END},?\s+{_YEAR}\b)", re.I),
              re.compile(rf"\b{_MON}(?:\s+{_DAY})?(?={_TO}{_SECOND_END},?\s+{_YEAR}\b)", re.I)]

# "31 March", "1st of April": read only where asked (``day_month=True``): the seed's metrics never read them, and
# their values stay as they were
_DAY_MONTH = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MON}\b(?!,?\s*\d{{4}})|"  # "15 March, 15 June" are two
                        r"\b(?P<day2>1[3-9]|2\d|3[01])/(?P<mon2>0?[1-9]|1[0-2])/(?P<year2>\d{4})\b", re.I)
# (the second form: a day-first "24/05/2024", read only where the day cannot be a month)
# "every April", "in January", "until March": a month alone, capitalised after a word that makes it a time (read only
# where asked, as above; "in march" and "may" are verbs)
_MONTH_ALONE = re.compile(r"\b(?:every|each|in|from|until|till|by|since|before|after|during|throughout|next|last)\s+"
                          r"(?P<mon>(?:January|February|March|April|May|June|July|August|September|October|November|"
                          r"December)(?![\w-]))(?!,?\s*\d)(?!\s+(?-i:[A-Z][a-z]))", re.I)  # "by August Wilson" is a name
# "the end of June 2024" is 30 June 2024, and "late June" its end too (read only where asked, as above)
_END_OF = re.compile(rf"\b(?:(?:the\s+)?end\s+of|late)\s+{_MON}(?:,?\s+{_YEAR})?\b", re.I)


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


def _last_day(pat: re.Pattern, mon: int | None, year: str | None) -> int | None:
    """The day "the end of <month>" names: the month's last (February's only with its year)."""
    if pat is not _END_OF or mon is None or (mon == 2 and year is None):
        return None
    return calendar.monthrange(int(year) if year else 2001, mon)[1]


def _day_of(day: str) -> int:
    return _ORDINALS[day.lower()] if day.lower() in _ORDINALS else int(day)


def extract_dates(text: str | None, *, day_month: bool = False) -> list[DateMention]:
    """Calendar dates in ``text``: ISO, "March 3, 2021", "3 March 2021", "3/15/2021",
    "March 2021", "March 3" and bare years 1500-2099, and with ``day_month`` also "31 March"
    (no year). Overlapping matches keep the most specific (earliest pattern) one.

    Examples
    --------
    >>> [d.key for d in extract_dates("From 2021-03 to March 3, 2021 and 3 March 2021")]
    [(2021, 3, None), (2021, 3, 3), (2021, 3, 3)]
    >>> [d.key for d in extract_dates("use them by 31 March", day_month=True)], extract_dates("by 31 March")
    ([(None, 3, 31)], [])
    >>> [d.key for d in extract_dates("They expire at the end of June 2024.", day_month=True)]
    [(2024, 6, 30)]
    >>> [d.key for d in extract_dates("Prune it in late August.", day_month=True)]
    [(None, 8, 31)]
    >>> [d.key for d in extract_dates("Prices rise every April.", day_month=True)]
    [(None, 4, None)]
    >>> [d.key for d in extract_dates("It opens on the fourteenth of June 2024, or June the first.", day_month=True)]
    [(2024, 6, 14), (None, 6, 1)]
    >>> [d.key for d in extract_dates("Sold March–August 2023; open 25 May to 8 September 2024.", day_month=True)]
    [(2023, 3, None), (2023, 8, None), (2024, 5, 25), (2024, 9, 8)]
    """
    if not text:
        return []
    taken: list[tuple[int, int]] = []
    out: list[DateMention] = []
    for pat in ([_END_OF] + _SPOKEN_DAY + _FIRST_END if day_month else []) + _DATE_PATTERNS + (
            [_MONTH_ALONE] if day_month else []):
        if pat is None:
            if not day_month:
                continue
            pat = _DAY_MONTH
        for m in pat.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            g = {k.rstrip("2"): v for k, v in m.groupdict().items() if v is not None}
            if pat is _MONTH_ALONE and not g["mon"][0].isupper():
                continue
            mon = _month(g["mon"]) if g.get("mon") else None
            if g.get("mon") and mon is None:
                continue
            day = _day_of(g["day"]) if g.get("day") else _last_day(pat, mon, g.get("year"))
            if day is not None and not 1 <= day <= 31:
                continue
            # "may" is also a modal verb: only accept it with a day or a year
            # (a day-first "24 May" is read when capitalised: "aged 12 may take" is the verb)
            if g.get("mon") and g["mon"].lower() == "may" and not (g.get("year") and day):
                if not g.get("year") and not (pat in (_DAY_MONTH, _MONTH_ALONE) and g["mon"] == "May"):
                    continue
            year = int(g["year"]) if g.get("year") else None
            taken.append((m.start(), m.end()))
            out.append(DateMention(year, mon, day, m.group(0), m.start(), m.end()))
    if day_month:
        out += _listed_months(text, out, taken)
        out += _numeric_day_months(text, taken)
    out.sort(key=lambda d: d.start)
    return out


# "by 31/10", "before 15/9": a day and month in figures, after a word that puts a date next ("24/7" and "3/4" are
# none); read only where one figure is over 12, so day and month cannot be swapped (a reader cannot tell 5/6 apart)
_NUMERIC_DAY_MONTH = re.compile(r"\b(?:by|on|before|until|till|from|after)\s+(?P<a>\d{1,2})/(?P<b>\d{1,2})\b(?![/\d])",
                                re.I)


def _numeric_day_months(text: str, taken: list[tuple[int, int]]) -> list:
    """The day-and-month dates in figures of ``text`` (:data:`_NUMERIC_DAY_MONTH`) no other date overlaps.

    >>> [d.key for d in extract_dates("Pay by 31/10 or before 9/15; open 24/7; due on 5/6.", day_month=True)]
    [(None, 10, 31), (None, 9, 15)]
    """
    out = []
    for m in _NUMERIC_DAY_MONTH.finditer(text):
        a, b = int(m.group("a")), int(m.group("b"))
        day, mon = (a, b) if a > 12 >= b else (b, a) if b > 12 >= a else (None, None)
        start, end = m.start("a"), m.end("b")
        if day is None or not 1 <= mon <= 12 or day > 31 or any(start < e and s < end for s, e in taken):
            continue
        taken.append((start, end))
        out.append(DateMention(None, mon, day, text[start:end], start, end))
    return out


# the months listed after a date, which share its day and year: "the 15th of March, June, September and December",
# "In July and August"
_NEXT_MONTH = re.compile(r"(?:,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+)(?P<mon>January|February|March|April|May|June|July|"
                         r"August|September|October|November|December)\b(?!\s*\d)")


def _listed_months(text: str, found: list, taken: list[tuple[int, int]]) -> list:
    """The dates a list of months after a read date states ("15th of March, June and September": 15 June, 15
    September), each with the first date's day and year.

    >>> [d.key for d in extract_dates("In July and August it opens daily; due 15th of March, June and December.",
    ...                               day_month=True)]
    [(None, 7, None), (None, 8, None), (None, 3, 15), (None, 6, 15), (None, 12, 15)]
    """
    out = []
    for d in list(found):
        if d.month is None:
            continue
        end = d.end
        while (m := _NEXT_MONTH.match(text, end)) is not None and not any(m.start("mon") < e and s < m.end()
                                                                          for s, e in taken):
            out.append(DateMention(d.year, _month(m.group("mon")), d.day, m.group("mon"), m.start("mon"), m.end()))
            taken.append((m.start("mon"), m.end()))
            end = m.end()
    return out


_SWAPPABLE = re.compile(r"(?P<a>\d{1,2})/(?P<b>\d{1,2})/\d{4}")


def readings(d: DateMention) -> tuple[tuple[int | None, int | None, int | None], ...]:
    """The ways a reader may take ``d``: its key, and for a date in figures whose day and month can be swapped
    ("10/03/2028" is 3 October in the US and 10 March elsewhere, and the text rarely says which) the other one too.

    >>> [readings(d) for d in extract_dates("until 10/03/2028, or 24/05/2024, or 1 March 2025", day_month=True)]
    [((2028, 10, 3), (2028, 3, 10)), ((2024, 5, 24),), ((2025, 3, 1),)]
    """
    m = _SWAPPABLE.fullmatch(d.text)
    if m is None or m["a"] == m["b"] or d.day is None or d.month is None or d.day > 12 or d.month > 12:
        return (d.key,)
    return d.key, (d.year, d.day, d.month)


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


