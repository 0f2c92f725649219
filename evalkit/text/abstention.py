"""Declining answers and the row decision: the one abstention detector (:func:`declines_to_answer`), the one
place a row's answer is judged empty, declining or not English (:func:`decide_answer`), and the shipped
lexicons they read."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Sequence

from evalkit.text.tokens import fold_apostrophes, phrase_pattern, stop_words, word_tokens

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
    shapes: "_Shapes"


def _alt(words) -> str:
    """A regex alternation of words and multi-word phrases, longest first."""
    return "|".join(r"\s+".join(map(re.escape, w.lower().split())) for w in sorted(words, key=len, reverse=True))


# words that may stand before "no information" in a decline ("I have no information", "the text gives no details")
_BEFORE_INFO = frozenset(
    "have has had found find see got get contain contains contained give gives provide provides make makes offer "
    "offers include includes hold holds retrieved available searched located access given provided relevant "
    "currently really actually simply seem seems appear appears able lack lacks unfortunately any".split())
# words that may follow a decline's key words ("no information is available", "insufficient data to answer")
_AFTER_NEUTRAL = frozenset(
    "available provided given found present included contained mentioned stated specified listed shown known "
    "exists exist currently yet publicly readily right now here whatsoever sufficient enough relevant specific "
    "further additional more certain sure reliable detailed clear explicitly specifically directly time moment "
    "point answer determine say tell know make give conclude decide respond confirm help me us anywhere unfortunately "
    "sorry point question request query".split())
# verbs whose object is the question itself: "I cannot help with that", "I can't comment on X"
_PURE_DECLINES = frozenset("answer help assist comment".split())
# words that may stand before the information a document lacks ("any relevant details", "the exact answer")
_INFO_LEAD = frozenset(
    "any the a an this that these those it enough sufficient relevant specific such much more further additional "
    "detailed explicit clear direct useful reliable exact precise some real concrete definitive necessary needed "
    "required requested actual".split())
_SOURCE_ADJECTIVES = frozenset("available retrieved supplied attached shared above following".split())
_WH = frozenset("who whom whose what when where why how which whether".split())
_TOPIC_PREPS = frozenset("about on regarding concerning for of as re into".split())
_PLACE_PREPS = frozenset("in from within by among inside based with using throughout across".split())
# "the opening hours aren't listed": a thing said not to be listed, with nothing after it, is the document's
# silence; "Sundays aren't listed as opening days" and "Breakfast isn't included" say something of it
_UNLISTED = frozenset({"listed"})
_NOTHING_AFTER = frozenset("anywhere here there yet either at all currently".split())
_CONDITIONAL = re.compile(r"^(?:if|when|whenever|unless|once|while|where)\b")
_QUOTES = "\"“”‘'«»"
_CONTRACTIONS = ((r"\bcan't\b", "cannot"), (r"\bwon't\b", "will not"), (r"\b(\w+)n't\b", r"\1 not"),
                 (r"\bcan not\b", "cannot"), (r"\bi'm\b", "i am"), (r"\b(it|that|there|what|here)'s\b", r"\1 is"),
                 (r"\b(we|you|they)'re\b", r"\1 are"), (r"\b(i|we|you|they)'ve\b", r"\1 have"),
                 (r"\b(i|we|you|they)'d\b", r"\1 would"))


_EXPANSIONS = tuple((re.compile(pat), rep) for pat, rep in _CONTRACTIONS)


def _expand(low: str) -> str:
    """Lower-cased text with English contractions written out ("doesn't" -> "does not")."""
    if "'" not in low and "can not" not in low:
        return low
    for pat, rep in _EXPANSIONS:
        low = pat.sub(rep, low)
    return low


_phrase_re = lru_cache(maxsize=1024)(phrase_pattern)
# what follows "does not say" in an instruction: "to remove the cover" (not "how to", not "to the customer")
_INSTRUCTION = re.compile(r"^\s+(?:(?!how|what|where|when|whom|which|whether|why)\w+\s+)?to\s+(?!(?:the|this|that|"
                          r"these|those|whom|what|which|your|my|our|his|her|their|a|an|any|it|how|me|us|you|them)\b)\w")


@dataclass(frozen=True)
class _Shapes:
    """The shapes of a declining clause, compiled from the ``abstention`` lexicon lists."""

    documents: re.Pattern
    info: frozenset[str]
    silent_source: re.Pattern      # "the documents do not say", "none of the passages mention"
    silent_rules: re.Pattern       # "the policy doesn't mention it" (not "the policy does not cover floods")
    source_lacks: re.Pattern       # "the context lacks", "the text gives no details", "the passages are silent"
    source_topic: re.Pattern       # "the passages discuss X" (a statement about the documents, not the world)
    cannot: re.Pattern             # "I could not find", "unable to determine"
    no_access: re.Pattern          # "I do not have that information"
    impossible: re.Pattern         # "it is not possible to say", "there is no way to know"
    cannot_be: re.Pattern          # "cannot be determined"
    participle: re.Pattern         # "is not specified", "not given", "information not available"
    not_in_source: re.Pattern      # "is not in the documents", "nothing in the context"
    no_info: re.Pattern            # "no information", "not enough details", "no mention"
    unknown: re.Pattern            # "unknown", "unclear", "not known"
    not_something: re.Pattern      # "that is not something I have information about"
    searched: re.Pattern           # "I searched the documentation" (what the speaker did, no claim)
    referral: re.Pattern           # "you may want to contact HR"
    report: re.Pattern             # "It only says ...", "They describe ..." (what the documents say instead)
    silent: frozenset[str]
    missing: frozenset[str]
    unknown_words: tuple[str, ...]
    source_verb: re.Pattern        # "mentions", "tells": what follows "nothing in the documents" in a decline
    source_pointer: re.Pattern     # "in the provided sources", "from the context"


# the verbs of sending the asker elsewhere ("it is best to contact ...", "I'd recommend asking ..."), and their
# gerunds
_REFER_VERBS = "contact|consult|check|ask|call|email|visit|speak|talk"
_REFERRING = rf"(?:(?:{_REFER_VERBS})ing|getting\s+in\s+touch|reaching\s+out)"


def _shapes(ab: dict[str, Any]) -> _Shapes:
    docs = _alt(ab["documents"])
    doc = rf"(?:{docs})"
    adv = r"(?:(?:explicitly|specifically|clearly|directly|actually|really|seem\s+to|appear\s+to|even|yet|currently|" \
          r"anywhere|publicly|quite|exactly|easily|fully|unfortunately|still|just|simply|also)\s+)*"
    src_verbs = _alt(ab["source_verbs"])
    participles = _alt(list(ab["silent_participles"]) + list(ab["missing_participles"]))
    info = _alt(ab["info_nouns"] + ["context"])
    adj = r"(?:(?:relevant|specific|further|additional|reliable|detailed|available|useful|such|more|other|clear|" \
          r"explicit|direct|definitive|concrete|exact|precise|public|real|any|sufficient|enough)\s+)*"
    i_we = r"(?:i|we)"
    unable = (r"(?:cannot|could\s+not|am\s+not\s+able\s+to|are\s+not\s+able\s+to|was\s+not\s+able\s+to|"
              r"were\s+not\s+able\s+to|am\s+unable\s+to|are\s+unable\s+to|was\s+unable\s+to|were\s+unable\s+to|"
              r"have\s+not\s+been\s+able\s+to|has\s+not\s+been\s+able\s+to|will\s+not\s+be\s+able\s+to|"
              r"would\s+not\s+be\s+able\s+to|did\s+not|do\s+not|have\s+not|had\s+not|unable\s+to|not\s+able\s+to|"
              r"may\s+not\s+be\s+able\s+to|am\s+not\s+in\s+a\s+position\s+to)")
    inability = _alt(ab["inability_verbs"])
    # the words between a document and its own verb: no subordinate clause ("the documents state that pets are
    # not allowed" is not the documents' silence)
    own = r"(?:(?!\b(?:that|which|who|where|because|if|whether|when|so|and|but)\b)[^.;:!?,]){0,60}?"
    return _Shapes(
        documents=re.compile(rf"\b{doc}\b"),
        info=frozenset(w.lower() for w in ab["info_nouns"]),
        silent_source=re.compile(
            rf"(?:\b{doc}\b{own}\b(?:does|do|did|will|would|could|can|may|has|have)?\s*not\s+{adv}"
            rf"|\b(?:neither|none\s+of\s+(?:the|these|those|our|my|your)|no)\s+(?:\w+\s+)?{doc}\b\s+{adv}"
            rf"|^(?:but|and|yet)\s+(?:does|do|did)\s+not\s+{adv})"
            rf"(?P<verb>{src_verbs})(?:s|es|ed)?\b(?P<rest>.*)$"),
        # a policy, its terms or a contract is a document that also rules: it is silent only when it does not
        # say or mention ("does not cover floods", "does not allow pets" are what it rules)
        silent_rules=re.compile(
            rf"\b(?:policy|policies|terms|terms\s+and\s+conditions|rules|regulations|contract|agreement)\b{own}"
            rf"\b(?:does|do|did)\s+not\s+{adv}(?P<verb>mention|say|specify|state|list|detail|indicate|address|"
            rf"discuss|describe|explain|tell|answer|clarify)(?:s|es|ed)?\b(?P<rest>.*)$"),
        source_lacks=re.compile(
            rf"\b{doc}\b{own}\b(?:(?:is|are|was|were)\s+(?:silent|not\s+specific|not\s+clear|unclear|"
            rf"insufficient|not\s+sufficient|not\s+enough|inconclusive|vague)|says?\s+nothing|lacks?|lacking|"
            rf"falls?\s+short|only\s+(?:covers?|discuss(?:es)?|describes?|mentions?|talks?\s+about|deals?\s+with|"
            rf"focus(?:es)?\s+on)|(?:contains?|has|have|gives?|provides?|offers?|includes?|makes?|holds?)\s+"
            rf"(?:no|nothing|little))\b"),
        source_topic=re.compile(
            rf"^(?:the\s+|these\s+|our\s+|this\s+|those\s+)?(?:\w+\s+)?{doc}\s+(?:only\s+)?(?:discuss(?:es)?|"
            rf"covers?|describes?|mentions?|refers?\s+to|talks?\s+about|deals?\s+with|focus(?:es)?\s+on)\b"
            rf"(?!.*\b(?:that|which)\b)"),
        cannot=re.compile(rf"(?:\b{i_we}\s+{adv}{unable}|^(?:but\s+|and\s+|so\s+)?{unable})\s+{adv}(?P<verb>{inability})\b"),
        no_access=re.compile(rf"\b{i_we}\s+{adv}(?:do|did|does|have|had)\s+not\s+{adv}have\s+"
                             rf"(?:(?:any|enough|the|that|this|sufficient|more|specific|further|such|access\s+to|"
                             rf"relevant|detailed|reliable|those|these|a|an)\s+)*"
                             # one word naming the information ("fee information", "pricing details")
                             rf"(?:[a-z-]+\s+)?(?:{info}|access)\b|\b{i_we}\s+lack\b"),
        impossible=re.compile(rf"(?:\b(?:{_alt(ab['impossible'])})\s+(?:for\s+(?:me|us)\s+)?to\s+(?:\w+\s+)?"
                              rf"(?:say|tell|determine|know|answer|confirm|establish|find|identify|infer|conclude|judge|"
                              rf"be\s+sure|give|provide|work\s+out|pinpoint)\b(?P<object>)|\b(?:there\s+is|i\s+have|we\s+have)\s+"
                              rf"no\s+way\s+(?:for\s+(?:me|us)\s+)?(?:to\s+(?:know|tell|determine|say|confirm|find)|"
                              rf"of\s+(?:knowing|telling|determining|saying|confirming|finding))\b(?P<object2>)"
                              rf"|^(?:but\s+|and\s+)?there\s+is\s+nothing\s+(?:at\s+all\s+)?(?:about|on|regarding|"
                              rf"concerning)\b(?!.*\b(?:that|which)\b))"),
        cannot_be=re.compile(r"\b(?:cannot|could\s+not)\s+be\s+(?:determined|answered|found|confirmed|known|said|"
                             r"established|inferred|identified|verified|deduced|ascertained|told|located)\b(?P<rest>.*)$"),
        participle=re.compile(rf"(?:\b(?:is|are|was|were|been|being)\s+not\s+|^(?:(?:the\s+)?(?:{info})\s+)?not\s+)"
                              rf"{adv}(?P<verb>{participles})\b(?P<rest>.*)$"),
        not_in_source=re.compile(rf"\b(?P<neg>(?:is|are|was|were)\s+not|nothing|not\s+found)\s+(?:\w+\s+){{0,2}}?"
                                 rf"(?:in|within|part\s+of|among|inside|from)\s+(?:\w+\s+){{0,3}}?{doc}\b"),
        no_info=re.compile(rf"\b(?:no|not\s+enough|not\s+sufficient|insufficient|not\s+any|little|not\s+much)\s+"
                           rf"{adj}(?P<noun>{info})\b(?P<rest>.*)$"),
        unknown=re.compile(rf"\b(?:{_alt(ab['unknown_words'])})\b(?P<rest>.*)$"),
        not_something=re.compile(rf"\bnot\s+something\s+(?:that\s+)?(?:i|we|(?:the|this|these|our|my)\s+(?:\w+\s+)?{doc})\b"),
        searched=re.compile(r"^(?:i|we)\s+(?:have\s+)?(?:searched|checked|looked|reviewed|went\s+through|read|scanned)\b"),
        # "Your dealer should be able to confirm.", "the front desk can advise": someone else will answer
        # "..., so it is best to contact the Admissions Office", "and it is worth checking with the branch"
        referral=re.compile(r"^(?:(?:so|and|but|therefore)\s+)?(?:(?:your|the)\s+(?:\w+\s+)?(?:dealer|desk|office|team|staff|branch|agent|adviser|"
                            r"advisor|provider|pharmacist|doctor|vet|landlord|broker|insurer|bank|school|council|"
                            r"reception|support|helpline|manufacturer|retailer)s?\s+(?:should|can|could|will|may|might|"
                            r"would)\s+(?:be\s+able\s+to\s+)?(?:confirm|advise|help|tell\s+you|answer\s+that|"
                            # "Voltrek or your retailer should be able to tell you"
                            r"clarify)\b|(?:[^,;\d]{1,30}?\s+or\s+)?(?:your|the)\s+[^,;\d]{1,60}?\s+"
                            r"(?:should|can|could|will|may|might|would)\s+be\s+able\s+to\s+"
                            r"(?:confirm|advise|help|tell\s+you|answer\s+that|clarify)\b|"
                            r"(?:your|the)\s+[^,;]{1,60}?\s+(?:would|will|may|might|should)\s+be\s+the\s+(?:best|right)\s+"
                            r"(?:place|people|person|team|office)\s+to\s+(?:ask|confirm|check|contact|help)\b|"
                            r"it\s+(?:is|would\s+be|may\s+be|might\s+be)\s+"
                            r"(?:best|better|worth|advisable|a\s+good\s+idea)\s+(?:to\s+)?"
                            rf"(?:{_REFER_VERBS}|get\s+in\s+touch|reach\s+out)|{_REFERRING}(?=\s+(?:with|to)\b)|"
                            rf"(?:i|we)\s+(?:would\s+)?(?:recommend|suggest)\s+{_REFERRING}\b|"
                            r"(?:please\s+|kindly\s+)?(?:you\s+(?:may|might|can|could|should|would|will)\s+(?:want\s+to\s+|wish\s+to\s+|"
                            r"need\s+to\s+|try\s+to\s+)?|i\s+(?:would\s+)?(?:recommend|suggest)\s+(?:that\s+you\s+)?(?:you\s+)?|"
                            r"we\s+(?:would\s+)?recommend\s+(?:that\s+you\s+)?|feel\s+free\s+to\s+|try\s+)?"
                            r"(?:contact|consult|check|ask|refer|see|verify|reach\s+out|reach|call|email|visit|speak|talk|"
                            r"get\s+in\s+touch|rephrase|provide|clarify|share)\b)"),
        # what the documents say in place of the answer: "It only says investment charges vary by fund", "They
        # list a hot water output of 28 kW", "What they do cover is pricing:" (after a decline: see _reports)
        report=re.compile(rf"^(?:(?:but|and|however|instead)\s+)?(?:what\s+)?(?:it|they|these|this|"
                          rf"(?:the\s+|these\s+|this\s+)?(?:\w+\s+)?{doc})\s+(?:only\s+|just\s+|do\s+|does\s+)?"
                          rf"(?:say|says|mention|mentions|state|states|describe|describes|note|notes|list|lists|explain|"
                          rf"explains|cover|covers|discuss|discusses|give|gives|show|shows|include|includes|"
                          rf"talk\s+about|talks\s+about|refer\s+to|refers\s+to)\b"),
        silent=frozenset(w.lower() for w in ab["silent_participles"]),
        missing=frozenset(w.lower() for w in ab["missing_participles"]),
        unknown_words=tuple(w.lower() for w in ab["unknown_words"]),
        source_verb=re.compile(rf"^\s*(?:(?:that|which)\s+)?{adv}(?:{src_verbs})(?:s|es|ed)?\b"),
        source_pointer=re.compile(rf"\b(?:in|from|within|inside|among|throughout|across|by|using|based\s+on|"
                                  rf"according\s+to)\s+(?:\w+\s+){{0,3}}?{doc}\b"))


@lru_cache(maxsize=1)
def _parsed_lexicons() -> dict[str, Any]:
    import yaml

    with resources.files("evalkit").joinpath("resources/lexicons.yaml").open(encoding="utf-8") as f:
        return yaml.safe_load(f)


def default_lexicons() -> dict[str, Any]:
    """The phrase lists shipped in ``evalkit/resources/lexicons.yaml`` (hedges, don't-know phrases, abstention
    words, citation indicators); :class:`evalkit.base.config.EvalConfig` overrides them per key.

    Each call returns a fresh deep copy of the cached parse, so a caller that edits its lists cannot change
    what every later caller sees.

    Examples
    --------
    >>> "hedges" in default_lexicons()
    True
    >>> default_lexicons()["hedges"].clear(); len(default_lexicons()["hedges"]) > 0
    True
    """
    import copy

    return copy.deepcopy(_parsed_lexicons())


@lru_cache(maxsize=1)
def _abstention_defaults() -> tuple[tuple[str, ...], tuple[str, ...], int, _AbstentionWords]:
    lex = default_lexicons()
    ab = lex["abstention"]
    lists = [frozenset(w.lower() for w in ab[k])
             for k in ("fillers", "source_words", "negations", "reporting_verbs", "referrals")]
    shapes = _shapes(ab)
    doc_words = frozenset(w for d in ab["documents"] for w in word_tokens(d))
    words = _AbstentionWords(lists[0], lists[1] | doc_words, *lists[2:],
                             lead_ins=(stop_words() - _CONTENT_STOP_WORDS) | lists[0], shapes=shapes)
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


def _quoted(text: str, at: int) -> bool:
    """Whether ``text[at:]`` follows an opening quotation mark (a quoted label, not the speaker's words)."""
    before = text[:at].rstrip()
    return bool(before) and before[-1] in _QUOTES


def _after_ok(after: list[str], words: _AbstentionWords, *, topic: bool, wh: bool) -> bool:
    """Whether the words after a decline's key words add nothing about the world: function words, "available",
    "to answer", a pointer into the documents ("in the passages"), a topic ("about X", when ``topic``) or an
    indirect question ("who won", when ``wh``)."""
    for i, w in enumerate(after):
        if wh and w in _WH:
            return True
        if topic and w in _TOPIC_PREPS:
            return _topic_ok(after[i + 1:], words)
        if w in _PLACE_PREPS:
            rest = after[i + 1:]
            return bool(rest) and any(r in words.sources for r in rest) and \
                _after_ok([r for r in rest if r not in words.sources], words, topic=True, wh=True)
        if w not in words.lead_ins and w not in _AFTER_NEUTRAL and w not in words.sources:
            return False
    return True


def _topic_ok(rest: list[str], words: _AbstentionWords) -> bool:
    """After "about X": the topic, unless a verb of its own follows ("no information about accounts is shared
    with partners" states a fact; "... is given in the passage" does not)."""
    for i, w in enumerate(rest[:-1]):
        if w in ("is", "are", "was", "were", "be", "been", "being"):
            nxt = rest[i + 1] if rest[i + 1] not in ("not", "ever", "currently", "yet") or i + 2 >= len(rest) \
                else rest[i + 2]
            return nxt in _AFTER_NEUTRAL or nxt in words.sources
    return True


def _before_ok(before: list[str], words: _AbstentionWords, extra: frozenset[str] = frozenset()) -> bool:
    """Whether the words before a decline's key words name nobody but the speaker or the documents."""
    return all(w in words.lead_ins or w in words.sources or w in extra for w in before)


def _subject_ok(before_text: str, words: _AbstentionWords) -> bool:
    """The seed's rule for "X is unknown": X names the information ("the data for X"), or names nothing and
    states no number ("the value")."""
    content = [w for w in word_tokens(before_text) if w not in words.lead_ins]
    return not content or content[0] in words.sources or content[0] in words.shapes.info or \
        not _names_or_numbers(before_text, [])


def _phrase_declines(phrase: str, low: str, start: int, end: int, clause: str, words: _AbstentionWords) -> bool:
    """Whether a configured uncertainty phrase found at ``low[start:end]`` makes its clause decline."""
    sh = words.shapes
    if _quoted(low, start):  # a quoted "Not Sure Yet", "No data"
        return False
    before, after = word_tokens(low[:start]), word_tokens(low[end:])
    last = phrase.split()[-1]
    if phrase in sh.unknown_words or phrase.startswith("cannot be") or \
            (phrase.startswith("not ") and last in sh.silent):
        return _subject_ok(clause[:start], words) and _after_ok(after, words, topic=last in sh.silent, wh=True)
    if phrase.startswith("not ") and last in sh.missing:
        if _after_ok(after, words, topic=False, wh=False) and after[:1] and after[0] in _PLACE_PREPS:
            return True
        content = [w for w in before if w not in words.lead_ins]
        return (not content or content[0] in words.sources or content[0] in sh.info) and \
            _after_ok(after, words, topic=False, wh=False)
    if phrase.startswith(("no ", "not enough", "insufficient")):
        return _before_ok(before, words, _BEFORE_INFO) and _after_ok(after, words, topic=True, wh=True)
    return _before_ok(before, words, _BEFORE_INFO)  # the speaker: "I'm not sure", "Sorry, I don't know"


def _names_information(rest: str, words: _AbstentionWords) -> bool:
    """Whether what a document "does not contain" is information ("any information about X", "the answer",
    "anything on X", "an article on that topic", nothing at all), not a thing ("any errors", "an index")."""
    toks = word_tokens(rest)
    while toks and toks[0] in _INFO_LEAD:
        toks = toks[1:]
    return not toks or toks[0] in words.shapes.info or toks[0] in words.sources or \
        (toks[0] in ("anything", "nothing") and (len(toks) == 1 or toks[1] in _TOPIC_PREPS or toks[1] == "related"))


def _asks_for_the_answer(rest: str, words: _AbstentionWords, sourced: bool) -> bool:
    """Whether what follows "could not find", "there is no way to know" is the thing asked for: nothing, the
    information ("any details about X", "that"), an indirect question ("who won"), or anything at all when
    the answer points to the documents ("... in the provided sources"; "based on the context, ..."). "I could
    not find a better option than the premium plan" and "there is no way to know the password once it is
    hashed" state facts."""
    toks = word_tokens(rest)
    while toks and toks[0] in _INFO_LEAD:  # "the requested information"; "the information desk" stays a thing
        toks = toks[1:]
    return sourced or words.shapes.source_pointer.search(rest) is not None or \
        _after_ok(toks, words, topic=True, wh=True)


def _shape(clause: str, words: _AbstentionWords, norm: str, sourced: bool = False) -> str | None:
    """The words of the decline shape the clause has ("does not mention", "could not find"), or None;
    ``norm`` is the clause lower-cased with its contractions written out; ``sourced``: the answer names the
    documents somewhere (it may be in another clause: "Based on the context, I cannot tell you X")."""
    sh = words.shapes
    if _CONDITIONAL.match(norm):
        return None
    if (m := sh.silent_source.search(norm)) is not None:
        rest, verb = m.group("rest"), m.group("verb")
        # "the manual does not say to remove the cover" is an instruction; "does not have to be" an obligation
        if verb in ("allow", "permit", "enable", "let") or not _INSTRUCTION.match(rest):
            # "the passage does not contain any errors" describes the passage
            if verb not in ("contain", "have") or _names_information(rest, words):
                return m.group(0)[: m.start("rest") - m.start()].strip()
    if (m := sh.silent_rules.search(norm)) is not None and not _INSTRUCTION.match(m.group("rest")):
        return m.group(0)[: m.start("rest") - m.start()].strip()
    if (m := sh.source_lacks.search(norm)) is not None:
        return m.group(0).strip()
    for m in sh.cannot.finditer(norm):
        if m.group("verb") in _PURE_DECLINES or _asks_for_the_answer(norm[m.end():], words, sourced):
            return m.group(0).strip()
    if (m := sh.no_access.search(norm)) is not None:
        return m.group(0).strip()
    for m in sh.impossible.finditer(norm):
        if (m.group("object") is None and m.group("object2") is None) or \
                _asks_for_the_answer(norm[m.end():], words, sourced):
            return m.group(0).strip()
    for m in sh.not_in_source.finditer(norm):
        rest = norm[m.end():]
        if m.group("neg") == "nothing":
            # "nothing in the context about X", "nothing in the passages tells us X"; not "nothing in the manual
            # prohibits it"
            if sh.source_verb.match(rest) or _after_ok(word_tokens(rest), words, topic=True, wh=True):
                return m.group(0).strip()
        elif _subject_ok(norm[: m.start()], words):  # "the answer is not in the documents (I have access to)"
            return m.group(0).strip()
    if (m := sh.not_something.search(norm)) is not None:
        return m.group(0).strip()
    if (m := sh.cannot_be.search(norm)) is not None and \
            _after_ok(word_tokens(m.group("rest")), words, topic=False, wh=True):
        return m.group(0)[: m.start("rest") - m.start()].strip()
    if (m := sh.participle.search(norm)) is not None:
        verb, after = m.group("verb"), word_tokens(m.group("rest"))
        before = norm[: m.start()]
        key = m.group(0)[: m.start("rest") - m.start()].strip()
        points_in = bool(after) and after[0] in _PLACE_PREPS and _after_ok(after, words, topic=False, wh=False)
        if verb in _UNLISTED and all(w in _NOTHING_AFTER for w in after) and _subject_ok(before, words):
            return key
        if verb in sh.silent:
            if points_in or (_subject_ok(before, words) and _after_ok(after, words, topic=True, wh=True)):
                return key
        else:
            content = [w for w in word_tokens(before) if w not in words.lead_ins]
            if points_in or ((not content or content[0] in words.sources or content[0] in sh.info)
                             and _after_ok(after, words, topic=False, wh=False)):
                return key
    if (m := sh.no_info.search(norm)) is not None and not _quoted(norm, m.start()) and \
            _before_ok(word_tokens(norm[: m.start()]), words, _BEFORE_INFO) and \
            _after_ok(word_tokens(m.group("rest")), words, topic=True, wh=True):
        return m.group(0)[: m.start("rest") - m.start()].strip()
    if (m := sh.unknown.search(norm)) is not None and not _quoted(norm, m.start()) and \
            _subject_ok(norm[: m.start()], words) and \
            _after_ok(word_tokens(m.group("rest")), words, topic=False, wh=True):
        return m.group(0)[: m.start("rest") - m.start()].strip()
    return None


def _clause_kind(clause: str, phrases: tuple[str, ...], words: _AbstentionWords,
                 question: bool = False, shapes: bool = True, sourced: bool = False) -> tuple[str, list[str]]:
    """One of "declines" (with the phrases found, else the decline's shape), "filler", "absence", "referral",
    "question" or "claim"."""
    low, lead_ins, sh = fold_apostrophes(clause.lower()), words.lead_ins, words.shapes
    hits = sorted((m.start(), m.end(), p) for p in phrases if (m := _phrase_re(p).search(low)))
    toks = word_tokens(clause)
    norm = " ".join(_expand(low).split())
    conditional = _CONDITIONAL.match(norm) is not None
    found = [p for a, b, p in hits if not conditional and _phrase_declines(p.lower(), low, a, b, clause, words)]
    if found:
        return "declines", list(dict.fromkeys(found))
    if shapes and (shape := _shape(clause, words, norm, sourced)) is not None:
        return "declines", [shape]
    if hits:
        return "claim", []
    if all(w in lead_ins or w in words.sources or w in _SOURCE_ADJECTIVES for w in toks):
        return "filler", []  # "Sorry", "Based on the available documents"
    if shapes and (sh.searched.match(norm) or sh.source_topic.match(norm)) and not any(c.isdigit() for c in clause):
        return "filler", []  # "I searched the documentation", "the passages discuss the company's history"
    if shapes and re.match(r"^(?:not|nor)\b", norm) and len(toks) <= 4 and not any(c.isdigit() for c in clause):
        return "filler", []  # "..., not its price"
    if any(w in words.negations or w.endswith("n't") for w in toks) and \
            any(w in words.sources or w in words.reporting for w in toks):
        return "absence", []  # "the documents do not mention a speed limit"
    if toks[0] in words.referrals and not _names_or_numbers(clause, []):
        return "referral", []  # "please consult your agent"
    if shapes and sh.referral.match(norm) and not any(c.isdigit() for c in clause):
        return "referral", []  # "you may want to contact HR"
    return ("question" if question else "claim"), []  # "Would you like to know more about X?" asserts nothing


_REPORT_GOES_ON = re.compile(r"^(?:(?:and|also|but)\s+)*(?:only\s+)?(?:say|says|mention|mentions|state|states|describe|"
                             r"describes|note|notes|list|lists|explain|explains|give|gives|show|shows|add|adds)\b")
_OWN_SUBJECT = re.compile(r"^(?:(?:and|but|or|so|while)\s+)?(?:you|we|i|it|there|he|she|this|that|they)\b")
_NUMBER_WORD = re.compile(r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
                          r"forty|fifty|hundred|thousand|half|once|twice)\b")
_REPORTED_ASK = re.compile(r"\b(?:what|how|which|whether|when)\b")  # "... and what voids the warranty"


def _lists_on(norm: str) -> bool:
    """Whether a clause goes on listing what a report lists: a few words ("direct-debit reviews and the dual-fuel
    discount") or what the documents explain ("and what voids the warranty"), with no number and no subject of
    its own ("and you can pay by card", "and the account closes after a year" say something themselves)."""
    if any(c.isdigit() for c in norm) or _NUMBER_WORD.search(norm) or _OWN_SUBJECT.match(norm):
        return False
    return len(norm.split()) <= 6 or _REPORTED_ASK.search(norm) is not None


_LEAD_TO_REFERRAL = re.compile(r"^(?:for|as\s+for|about|regarding|on|with)\b")


def _reports(kinds: list[tuple[str, list[str]]], clauses: list[tuple[str, str]],
             words: _AbstentionWords) -> list[tuple[str, list[str]]]:
    """``kinds`` with each claim that reports what the documents say in place of the answer made a "report",
    which asserts nothing the asker asked, where a clause before it declines or says the documents are silent: "It
    only says investment charges vary by fund" after "The guide doesn't state the annual management charge"; "They
    list a hot water output of 28 kW" after "the manual extracts I have don't give the flow rate". The report goes
    on in its sentence through clauses that continue the documents' reporting ("..., separately, note that ..."),
    through the items it lists ("They cover payment methods, direct-debit reviews and the dual-fuel discount"; a
    clause stating a number is no item of it) and, after a colon, through the rest of it ("What they do cover is
    pricing: Off-Peak is £22.99 a month, ...").
    A phrase leading to a referral ("For the flow rate, check the data sheet") is the referral's. Without a decline
    before it a report answers ("The documents say the premium is $604.")."""
    out, declined, reporting = list(kinds), False, ""
    for i, ((kind, _), (clause, end)) in enumerate(zip(kinds, clauses)):
        norm = " ".join(_expand(fold_apostrophes(clause.lower())).split())
        if kind != "claim":
            declined = declined or kind in ("declines", "absence")
        elif declined and (reporting == ":" or words.shapes.report.match(norm) or (reporting and (
                _REPORT_GOES_ON.match(norm) or _lists_on(norm)))):
            out[i] = ("report", [])
            reporting = ":" if ":" in end or reporting == ":" else ","
        elif declined and _LEAD_TO_REFERRAL.match(norm) and i + 1 < len(kinds) and kinds[i + 1][0] == "referral" \
                and not any(c.isdigit() for c in norm):
            out[i] = ("filler", [])
        if re.search(r"[.!?]", end):
            reporting = ""
    return out


def _clause_ends(text: str) -> list[str]:
    """What ends each clause of :func:`_clauses` (". ", ", ", ": ", "" for the last)."""
    parts = _CLAUSE_SPLIT.split(text) + [""]
    return [end for clause, end in zip(parts[::2], parts[1::2]) if word_tokens(clause)]


def declines_to_answer(answer: str | None, *, phrases: Sequence[str] | None = None,
                       short_tokens: Sequence[str] | None = None,
                       short_chars: int | None = None) -> tuple[bool, list[str]]:
    """Whether the answer as a whole declines to answer, and the uncertainty phrases it declines with.

    The answer is split into clauses (at . ! ? ; : , a spaced dash, and before "but"/"however"). A clause
    *declines* when it holds an uncertainty phrase (``phrases``, whole words, case-insensitive, curly
    apostrophes folded; in an answer shorter than ``short_chars`` characters also ``short_tokens``) said by
    the speaker ("I'm not sure about X"; not "Users who are not sure of their password can reset it"), or
    about the information ("The data for X is unknown"; not "unknown words", "unknown to science"), or when it
    has one of the shapes of a decline (the ``abstention`` lists): a document that is silent ("the provided
    context does not contain information about X", "the documents do not say", "none of the passages
    mention X"; not the instruction "the manual does not say to remove the cover"), a speaker who cannot
    ("I couldn't find information about X in our documentation", "we do not have that information"), an
    impossibility ("it is not possible to determine X from the passages", "cannot be determined"), a
    missing piece ("X is not specified", "the answer is not in the documents", "no relevant information was
    found"). What is missing must be information or point to the documents: "I could not find a better option
    than the premium plan", "the passage does not contain any errors", "there is no way to know the password
    once it is hashed" and "nothing in the manual prohibits it" state facts. A conditional clause ("if the information is not available in the app, ...") never declines.
    The answer declines when at least one clause declines and every other clause makes no substantive
    claim: a filler ("Sorry", "Based on the context", "Thanks for asking"), an absence statement (a
    negation with a source word or a reporting verb), a referral ("please consult your agent", "you may
    want to contact HR") or a question ("Would you like to know more about X?"). A claim anywhere
    ("...; the premium is $604", "The cause remains unknown, but power was restored at 6 pm") means the
    answer answers. ``tests/golden/abstention.yaml`` holds the cases it is measured on.

    The lists default to ``resources/lexicons.yaml`` (``dont_know_phrases``, ``dont_know_short_tokens``,
    ``short_answer_chars`` and the ``abstention`` word lists).

    Empty policy: an empty or None answer is missing, not a decline: ``(False, [])``; the row decision
    (:func:`decide_answer`) calls it ``empty``, a failure of the system that every metric reports apart.

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
        clause makes a claim, so the answer does not decline); when it declines by a shape alone, the words
        of that shape ("does not say").

    Examples
    --------
    >>> declines_to_answer("I don’t know; the documents do not mention a speed limit.")
    (True, ["i don't know"])
    >>> declines_to_answer("The discount is not available in Territory 118; the premium is $604.")
    (False, [])
    >>> declines_to_answer("Annulled."), declines_to_answer("None.")
    ((False, []), (True, ['none']))
    >>> declines_to_answer("The documents do not say.")
    (True, ['documents do not say'])
    >>> declines_to_answer("The unknown soldier memorial was built in 1921.")
    (False, [])
    """
    if not isinstance(answer, str) or not answer.strip():
        return False, []
    d_phrases, d_short, d_chars, words = _abstention_defaults()
    text = " ".join(fold_apostrophes(unicodedata.normalize("NFKC", answer)).split())
    found = tuple(d_phrases if phrases is None else phrases)
    if len(text) < (d_chars if short_chars is None else short_chars):
        found += tuple(d_short if short_tokens is None else short_tokens)
    sourced = words.shapes.documents.search(" ".join(_expand(text.lower()).split())) is not None
    clauses = _clauses(text)
    kinds = _reports([_clause_kind(c, found, words, question, sourced=sourced) for c, question in clauses],
                     list(zip((c for c, _ in clauses), _clause_ends(text))), words)
    matched = list(dict.fromkeys(p for _, ps in kinds for p in ps))
    declines = bool(matched) and all(k != "claim" for k, _ in kinds)
    listed = [p for p in matched if p in found]
    return declines, listed if listed or not declines else matched  # the configured phrases first, else the shape


EMPTY_ANSWER = "empty answer"


@dataclass(frozen=True)
class AnswerDecision:
    """What a row's answer is, decided once (:func:`decide_answer`): empty, declining, or in which language.

    :func:`evalkit.evaluate` stores it in the columns :data:`DECISION_COLUMNS` and hands it to every metric;
    the verdict and :func:`evalkit.show` read those columns. A metric called as a plain function makes it
    here from the text.

    Attributes
    ----------
    empty : the answer is None, "" or only whitespace: a failure of the system (verdict FAIL, rule "empty
        answer"); it is neither an abstention nor a wrong answer, and every metric that reads the answer is
        undetermined with reason "empty answer".
    abstained : the answer as a whole declines to answer (:func:`declines_to_answer`); only decided for an
        answer in English (or too short to tell).
    matched : the phrases or shape it declines with (also the phrases found when another clause makes a
        claim, so the answer does not decline: "I don't know, but the premium is $604").
    language : the detected language (:func:`evalkit.text.language.detect_language`): an ISO code, or None
        when the answer is too short to tell (treated as English).
    """

    empty: bool
    abstained: bool = False
    matched: tuple[str, ...] = ()
    language: str | None = None

    @property
    def english(self) -> bool:
        """Whether the English-only rules apply (English, or too short to tell)."""
        return self.language in (None, "en")

    @property
    def abstained_reason(self) -> str | None:
        """What the abstention matched, in words (None when the answer does not abstain)."""
        return "declines: " + ", ".join(self.matched) if self.abstained else None

    def skip_reason(self, english_only: bool = True) -> str | None:
        """Why a metric that reads the answer is undetermined on this row: "empty answer", or (for an
        English-only metric) "not English (detected: de)"; None when the metric applies."""
        if self.empty:
            return EMPTY_ANSWER
        if english_only and not self.english:
            return f"not English (detected: {self.language})"
        return None

    def to_columns(self) -> dict[str, Any]:
        """The decision as the runner stores it: ``answer_empty``, ``abstained``, ``abstained_reason``,
        ``answer_language``."""
        return {"answer_empty": self.empty, "abstained": self.abstained, "abstained_reason": self.abstained_reason,
                "answer_language": self.language}

    @classmethod
    def from_columns(cls, row: Any) -> "AnswerDecision | None":
        """The decision stored in a results row (a Series or mapping), or None when it was not stored."""
        def get(key):
            v = row.get(key) if hasattr(row, "get") else None
            return None if v is None or (isinstance(v, float) and v != v) or str(v) == "<NA>" else v

        def flag(v) -> bool:  # a CSV round trip may give "True" / "False"
            return v.strip().lower() in ("true", "1", "yes") if isinstance(v, str) else bool(v)

        if get("answer_empty") is None or get("abstained") is None:
            return None
        reason = str(get("abstained_reason") or "")
        matched = tuple(reason[len("declines: "):].split(", ")) if reason.startswith("declines: ") else ()
        lang = get("answer_language")
        return cls(flag(get("answer_empty")), flag(get("abstained")), matched, str(lang) if lang else None)


DECISION_COLUMNS = ("answer_empty", "abstained", "abstained_reason", "answer_language")


def decide_answer(answer: str | None, *, phrases: Sequence[str] | None = None,
                  short_tokens: Sequence[str] | None = None, short_chars: int | None = None) -> AnswerDecision:
    """The row decision about an answer: empty, else its language, else (in English) whether it declines.

    The one place the decision is made; the runner calls it once per row, and a metric called without the
    runner calls it for its own answer. ``phrases``, ``short_tokens``, ``short_chars`` as in
    :func:`declines_to_answer`.

    Examples
    --------
    >>> decide_answer("  ")
    AnswerDecision(empty=True, abstained=False, matched=(), language=None)
    >>> decide_answer("I can't find that in the documentation.").abstained
    True
    >>> d = decide_answer("Die Werke befinden sich in Gent und Lyon.")
    >>> d.abstained, d.skip_reason()
    (False, 'not English (detected: de)')
    """
    from evalkit.text.language import detect_language

    if not isinstance(answer, str) or not answer.strip():
        return AnswerDecision(True)
    lang = detect_language(answer).code
    if lang not in (None, "en"):
        return AnswerDecision(False, False, (), lang)
    declines, matched = declines_to_answer(answer, phrases=phrases, short_tokens=short_tokens, short_chars=short_chars)
    return AnswerDecision(False, declines, tuple(matched), lang)
