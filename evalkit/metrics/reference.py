"""Reference-based metrics: the generated answer against the expected answer (ground truth).

All numbers are read by the shared normaliser :func:`evalkit.text.extract_numbers`,
so "$604" matches "604" and "604.00", and "-0.133%" never matches "0.133%".
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from evalkit.text import (AnswerDecision, contains_phrase, extract_numbers, normalize_ws, phrase_pattern, stop_words,
                    word_tokens)
from evalkit.metrics.base import Details, Metric, NoEvidence, Score, Undetermined
from evalkit.metrics.evidence import Evidence, texts_in
from evalkit.metrics.guard import NOT_ENGLISH, decision_for, skipped
from evalkit.metrics.stats import KeywordHits

_NO_GT = "no ground truth"

# A capitalised phrase: a capitalised word followed by more capitalised words or
# identifiers/numbers ("Territory 118", "Rule C-1", "New York City").
_CAP_PHRASE = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:[A-Z][\w'’-]*|\d[\w.,%-]*))*")



@dataclass(frozen=True, eq=False)
class KeywordMatch(Details):
    """What of the ground truth the answer states (keywords, or numeric values) and what it misses, in the ground
    truth's order; the reason when the ground truth has nothing to look for."""

    _optional = frozenset({"reason"})
    matched: tuple[str, ...]
    missing: tuple[str, ...]
    reason: str | None = None


@dataclass(frozen=True, eq=False)
class LengthAndKeywords(Details):
    """answer_completeness's two halves: the answer's length against the ground truth's (capped at 1, 6 places)
    and its keyword coverage, with the keywords it misses."""

    length_ratio: float
    keyword_coverage: float
    missing: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class SourcesFound(Details):
    """The source indicators the answer uses ("according to", "page", ...), and how many."""

    found: tuple[str, ...]
    count: int


@dataclass(frozen=True, eq=False)
class DeclineDetails(Details):
    """The declining phrases the answer matched, and the reason when one occurs but the answer still answers."""

    _optional = frozenset({"reason"})
    matched: tuple[str, ...]
    reason: str | None = None

def exact_match(answer: str | None, ground_truth: str | None, *, decision: AnswerDecision | None = None) -> Score:
    """True when answer and ground truth are equal after lower-casing and collapsing whitespace.

    Empty policy: undetermined (None) for an empty or None answer (reason "empty answer") and without a
    ground truth. ``decision``: the row's :class:`evalkit.text.AnswerDecision` (made here when not given).

    >>> exact_match("  The answer is 42 ", "the answer   is 42").value
    True
    """
    if (guarded := skipped(decision_for(answer, decision), "exact_match")) is not None:
        return guarded
    if ground_truth is None:
        return Score(None, Undetermined(_NO_GT))
    return Score(normalize_ws(answer) == normalize_ws(ground_truth), NoEvidence())


def expected_keywords(ground_truth: str | None, *, stop_list: str = "sklearn") -> dict[str, list[str]]:
    """Keywords of an expected answer, by kind.

    * ``phrases``: capitalised phrases ("Territory 118", "Rule C-1"), leading stop words removed;
    * ``numbers``: numbers and percentages ("293", "0.305%", "$604"), outside phrases;
    * ``words``: words of 4+ characters that are not stop words, outside phrases and not numbers.

    >>> expected_keywords("Territory 118 pays $604, a 0.305% increase under Rule C-1.")
    {'phrases': ['Territory 118', 'Rule C-1'], 'numbers': ['$604', '0.305%'], 'words': ['pays', 'increase']}
    """
    text = ground_truth or ""
    sw = stop_words(stop_list)
    phrases, spans = [], []
    for m in _CAP_PHRASE.finditer(text):
        words = m.group(0).split()
        while words and words[0].lower() in sw:
            words.pop(0)
        phrase = " ".join(words).rstrip(".,;:")
        sentence_start = not text[: m.start()].strip() or text[: m.start()].rstrip().endswith((".", "!", "?", ":"))
        # one capitalised word is a proper noun mid-sentence ("Paris"), an ordinary word at a sentence start
        if not words or (len(words) == 1 and (sentence_start or phrase.lower() in sw)):
            continue
        if phrase not in phrases:
            phrases.append(phrase)
        spans.append((m.start(), m.end()))
    inside = lambda s, e: any(s < b and a < e for a, b in spans)  # noqa: E731
    numbers = list(_expected_numbers(text, spans))
    words_out = []
    for m in re.finditer(r"[A-Za-z][A-Za-z'’-]*", text):
        w = m.group(0).lower()
        if len(w) >= 4 and w not in sw and not inside(m.start(), m.end()) and w not in words_out:
            words_out.append(w)
    return {"phrases": phrases, "numbers": numbers, "words": words_out}


def _expected_numbers(text: str, spans: list[tuple[int, int]]) -> dict[str, Any]:
    """The expected answer's numbers outside phrases, as ``{text as written: comparison key}``. The key is
    read in context: the lower end of "5-10%" is 5 percent, which its text "5" alone would not say."""
    out: dict[str, Any] = {}
    for n in extract_numbers(text, words=False):
        if not any(n.start < b and a < n.end for a, b in spans):
            out.setdefault(n.text, n.key)
    return out


def keyword_coverage(answer: str | None, ground_truth: str | None, *, stop_list: str = "sklearn",
                     decision: AnswerDecision | None = None) -> Score:
    """Share of the expected answer's keywords (see :func:`expected_keywords`) found in the answer, 0..1.

    Phrases match case-insensitively as whole words; numbers match by value
    (shared normaliser); words match as lower-cased tokens.

    Empty policy: undetermined without a ground truth; 1.0 when the ground truth
    has no keywords (nothing can be missed). Undetermined for an empty answer ("empty answer") and for an
    answer not in English ("not English (detected: de)"), by the row's ``decision``.

    >>> s = keyword_coverage("Territory 118 pays 604 dollars.", "Territory 118 pays $604, a 0.305% increase.")
    >>> s.value, s.details.missing
    (0.6, ('0.305%', 'increase'))
    """
    if (guarded := skipped(decision_for(answer, decision), "keyword_coverage")) is not None:
        return guarded
    if ground_truth is None:
        return Score(None, Undetermined(_NO_GT))
    kw = expected_keywords(ground_truth, stop_list=stop_list)
    expected = kw["phrases"] + kw["numbers"] + kw["words"]
    if not expected:
        return Score(1.0, KeywordMatch((), (), "ground truth has no keywords"), KeywordHits(matched=0, expected=0))
    norm = normalize_ws(answer)
    a_nums = {n.key for n in extract_numbers(answer)}
    a_tokens = set(word_tokens(answer))
    matched = [p for p in kw["phrases"] if contains_phrase(norm, p)]
    keys = {}
    for n in extract_numbers(ground_truth, words=False):
        keys.setdefault(n.text, n.key)
    matched += [n for n in kw["numbers"] if keys[n] in a_nums]
    matched += [w for w in kw["words"] if w in a_tokens]
    missing = [k for k in expected if k not in matched]
    return Score(len(matched) / len(expected), KeywordMatch(tuple(matched), tuple(missing)),
                 KeywordHits(matched=len(matched), expected=len(expected)))


def number_match(answer: str | None, ground_truth: str | None, *, decision: AnswerDecision | None = None) -> Score:
    """Share of the expected answer's numeric values that the answer states, 0..1.

    Values are compared exactly after normalisation (currency, separators,
    decimals, sign, percent): "$604" = "604" = "604.00"; "-0.133%" != "0.133%".

    Empty policy: undetermined (None) without a ground truth or when it has no
    numbers, so non-numeric questions do not inflate the mean; undetermined for an empty answer ("empty
    answer"). Numbers are read in any language that writes them apart from the words ("604 Dollar", not
    "604美元").

    >>> number_match("It costs 604.00 and fell 0.133%", "$604; change -0.133%").details.missing
    ('-0.133%',)
    """
    if (guarded := skipped(decision_for(answer, decision), "number_match")) is not None:
        return guarded
    if ground_truth is None:
        return Score(None, Undetermined(_NO_GT))
    expected = {}
    for n in extract_numbers(ground_truth, words=False):
        expected.setdefault(n.key, n.text)
    if not expected:
        return Score(None, Undetermined("ground truth has no numbers"))
    got = {n.key for n in extract_numbers(answer)}
    matched = tuple(t for k, t in expected.items() if k in got)
    missing = tuple(t for k, t in expected.items() if k not in got)
    return Score(len(matched) / len(expected), KeywordMatch(matched, missing),
                 KeywordHits(matched=len(matched), expected=len(expected)))


def answer_completeness(answer: str | None, ground_truth: str | None, *, stop_list: str = "sklearn",
                        decision: AnswerDecision | None = None) -> Score:
    """``(min(generated words / expected words, 1) + keyword_coverage) / 2``, 0..1.

    Empty policy: undetermined without a ground truth (or one with no words), for an empty answer ("empty
    answer") and for an answer not in English ("not English (detected: de)").

    >>> round(answer_completeness("Territory 118 pays 604 dollars.", "Territory 118 pays $604, a 0.305% increase.").value, 4)
    0.6571
    """
    decision = decision_for(answer, decision)
    if (guarded := skipped(decision, "answer_completeness")) is not None:
        return guarded
    if ground_truth is None:
        return Score(None, Undetermined(_NO_GT))
    exp_words = len(word_tokens(ground_truth))
    if not exp_words:
        return Score(None, Undetermined("ground truth has no words"))
    ratio = min(len(word_tokens(answer)) / exp_words, 1.0)
    kc = keyword_coverage(answer, ground_truth, stop_list=stop_list, decision=decision)
    missing = tuple(kc.details.get("missing", ()))
    return Score((ratio + kc.value) / 2, LengthAndKeywords(round(ratio, 6), kc.value, missing))


def _lexicon(name: str) -> list:
    from evalkit.base.config import default_lexicons

    return default_lexicons()[name]


def source_citation(answer: str | None, *, indicators: Sequence[str] | None = None,
                    decision: AnswerDecision | None = None) -> Score:
    """Source attribution: ``min(found / 3, 1)`` where found = distinct source indicators present.

    Indicators (configurable): "source:", "table:", "page", "document", "pdf",
    "according to", "based on", "from"; matched as whole words ("pages" or
    "fromage" do not count).

    Empty policy: undetermined for an empty or None answer ("empty answer") and for an answer not in
    English ("not English (detected: de)"), by the row's ``decision``.

    >>> s = source_citation("According to the PDF (page 3), see Table: 2.")
    >>> s.value, s.details.found
    (1.0, ('table:', 'page', 'pdf', 'according to'))
    """
    if (guarded := skipped(decision_for(answer, decision), "source_citation")) is not None:
        return guarded
    inds = indicators or _lexicon("citation_indicators")
    text = normalize_ws((answer or "").replace("’", "'"))
    found = [p for p in inds if phrase_pattern(p).search(text)]
    return Score(min(len(found) / 3, 1.0), SourcesFound(tuple(found), len(found)))


def dont_know(answer: str | None, *, phrases: Sequence[str] | None = None,
              short_tokens: Sequence[str] | None = None, short_chars: int | None = None,
              decision: AnswerDecision | None = None) -> Score:
    """True when the answer declines to answer: the row's abstention decision (``abstained``), read from
    ``decision`` (the runner's) or made by :func:`evalkit.text.decide_answer`, which calls
    :func:`evalkit.text.declines_to_answer`.

    An uncertainty phrase ("i don't know", "not sure", "no information", ...) counts as whole words in a
    clause that declines, and only when no other clause makes a substantive claim: "I don't know; the
    documents do not mention a speed limit." declines, "The discount is not available in Territory 118;
    the premium is $604." answers. A very short answer (under ``short_chars`` characters) also declines
    with a short token as a whole word ("None.", "N/A"; not "Annulled." or "Unknowns"). Lists are
    configurable (``lexicons.dont_know_phrases``, ``dont_know_short_tokens``, ``short_answer_chars``).

    Empty policy: an empty or None answer is undetermined (reason "empty answer"): a failure of the system,
    not an abstention (the seed counted it as a non-answer). An answer not in English is undetermined
    ("not English (detected: de)"): the phrases are English.

    Examples
    --------
    >>> dont_know("Sorry, I don’t know.").value, dont_know("N/A").value, dont_know("The rate is 5%.").value
    (True, True, False)
    >>> dont_know("I don't know, but the premium is $604.").details["reason"]
    'an uncertainty phrase occurs, but the answer also makes a substantive claim'
    """
    decision = decision_for(answer, decision, phrases=phrases, short_tokens=short_tokens, short_chars=short_chars)
    if (guarded := skipped(decision, "dont_know")) is not None:
        return guarded
    declines, matched = decision.abstained, tuple(decision.matched)
    reason = "an uncertainty phrase occurs, but the answer also makes a substantive claim" if matched and not declines \
        else None
    return Score(declines, DeclineDetails(matched, reason))


def decline_evidence(details: Mapping[str, Any], metric: str) -> Evidence:
    """The declining phrases that matched the answer.

    >>> decline_evidence({"matched": ["not sure"]}, "m").declined
    ('not sure',)
    """
    return Evidence(declined=texts_in(details.get("matched")))


# ---------------------------------------------------------------------------------------------------------------
# The declarations: this module's metrics as the registry lists them (evalkit.metrics collects METRICS)
# ---------------------------------------------------------------------------------------------------------------
METRICS = (
    Metric("exact_match", exact_match, needs=("answer", "ground_truth"), better="higher", range=(0.0, 1.0),
           kind="bool", details=NoEvidence, family="reference",
           formula="answer equals the ground truth after lower-casing and whitespace normalisation",
           empty_policy="undetermined for an empty answer or without ground truth"),
    Metric("keyword_coverage", keyword_coverage, needs=("answer", "ground_truth"), better="higher",
           range=(0.0, 1.0), params=("stop_list",), stats=KeywordHits, details=KeywordMatch,
           family="reference",
           formula="the ground truth's phrases, numbers and 4+ letter words found in the answer / all of them",
           empty_policy="undetermined for an empty answer" + NOT_ENGLISH + ", or without ground truth; 1.0 with no "
                        "keywords",
           evidence_keys=("missing", "matched"), english_only=True),
    Metric("number_match", number_match, needs=("answer", "ground_truth"), better="higher", range=(0.0, 1.0),
           stats=KeywordHits, details=KeywordMatch, family="reference",
           formula='the ground truth\'s numeric values stated in the answer / its values '
                                       '("$604" matches "604.00"; "-0.133%" does not match "0.133%")',
           empty_policy="undetermined for an empty answer, without ground truth or numbers in it",
           evidence_keys=("missing", "matched")),
    Metric("answer_completeness", answer_completeness, needs=("answer", "ground_truth"), better="higher",
           range=(0.0, 1.0), params=("stop_list",), details=LengthAndKeywords, family="reference",
           formula="(min(answer words / ground-truth words, 1) + keyword_coverage) / 2",
           empty_policy="undetermined for an empty answer" + NOT_ENGLISH + ", or without ground truth",
           evidence_keys=("missing",), english_only=True),
    Metric("source_citation", source_citation, needs=("answer",), better="higher", range=(0.0, 1.0),
           params=("indicators",), details=SourcesFound, family="reference",
           formula="min(distinct source indicators / 3, 1), matched as whole words",
           empty_policy="undetermined for an empty answer" + NOT_ENGLISH, evidence_keys=("found",), english_only=True),
    Metric("dont_know", dont_know, needs=("answer",), better="none", range=(0.0, 1.0), kind="bool",
           params=("phrases", "short_tokens", "short_chars"), details=DeclineDetails,
           family="reference",
           formula="the answer declines: an uncertainty phrase, a short non-answer, or the shape of a refusal "
                   "(the documents do not say, I could not find); the row's abstained decision, as stored by the "
                   "runner",
           empty_policy="undetermined for an empty answer (not an abstention)" + NOT_ENGLISH, evidence_keys=("matched",),
           evidence=decline_evidence, english_only=True),
)
