"""Offline grounding detector: sentence-level evidence, mismatch features, a learned monotone combination.

For each answer sentence, its best evidence sentence in the contexts is the one covering most of its
content words (lexical alignment). Preamble sentences ("Here is a concise summary:") are not claims, and a
framing prefix ("The passage discusses ...") is cut before scoring (:mod:`evalkit.text.meta`). Against the
evidence (and the whole context) evalkit measures mismatches: numbers, dates and named entities the evidence
lacks (an abbreviation of a name the context spells out, "WA" / "Western Australia", and a number in another
format, "5 mln" / "5 million", count as support); negation and modality flips; content words absent from the
context weighted by rarity (``wordfreq`` Zipf frequencies, offline); new proper nouns; relation words that
differ for a subject-object pair the context does contain; and substitutions, words replaced at the same
position of an otherwise copied phrase, by kind (antonym, number, name, another word of the document, a new
word; :mod:`evalkit.metrics.grounding_substitution`). The seed anchor score is one more feature, and so is the
entailment check of :mod:`evalkit.metrics.support` (``entailment_min``: the ``support`` metric's value, the
trained cross-encoder's P(supported) of the answer's weakest claim), when the shipped model was trained with it.

Gradient-boosted trees with monotonic constraints (:data:`MONOTONE`: more unsupported evidence never lowers
the risk, more support never raises it), trained by ``benchmarks/train_grounding.py`` on ``../shared/bench``
(the configuration chosen by the worst SummEdits domain left out; FactCC-style synthetic pairs were compared and
not chosen), then Platt scaling fitted on out-of-fold scores, turn the features into a probability of
hallucination. The answer's length and the raw counts that grow with it are computed and
reported but are no model input (:data:`NOT_MODEL_INPUTS`). The probability is calibrated on the training
rows (HaluEval and SummEdits development data): recalibrate the threshold on your own labels with
``evalkit calibrate``. The model ships as plain JSON, ``evalkit/resources/grounding_model.json`` (trees as
arrays, feature list, constraints, calibration, training-data hash), so loading it needs no pickle and no
scikit-learn version match.

The number/date normaliser and the anchor matcher are :mod:`evalkit.text` and
:mod:`evalkit.metrics.anchors`: nothing here re-implements them.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Mapping, Sequence

import numpy as np

from evalkit.text import (content_words, date_supported, extract_dates, extract_numbers,
                    is_heading, normalize_entity, sentences, word_tokens)
from evalkit.text.acronyms import acronym_supported
from evalkit.text.meta import meta_prefix_length
from evalkit.metrics.anchors import (ABSTENTION_REASON, ContextIndex, joined_contexts, context_indexes, default_hedges,
                      extract_claims, hallucination_from_parsed)
from evalkit.metrics.base import Details, FrozenMap, Metric, Score, Undetermined, freeze
from evalkit.metrics import evidence as shown  # the evidence view's records (Evidence here is the context's)
from evalkit.metrics.guard import NOT_ENGLISH, guard_rows
from evalkit.metrics.grounding_substitution import KINDS as SUB_KINDS, substitutions

NEGATIONS = frozenset({"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "n't", "without", "cannot"})
ENTITY_LABELS = {"PERSON", "ORG", "GPE", "LOC", "NORP", "EVENT", "PRODUCT", "FAC", "WORK_OF_ART", "LAW", "LANGUAGE"}
SUPPORTED_AT = 0.5  # a sentence is "supported" when its best evidence covers half its content words

FEATURES = (
    "log_answer_tokens", "log_context_tokens", "length_ratio", "n_sentences", "meta_sentences",
    "support_min", "support_mean", "unsupported_sentence_share", "global_support_min",
    "novel_rarity_max", "novel_rarity_mean", "novel_token_rate",
    "numbers", "numbers_missing_evidence", "numbers_missing_context",
    "dates", "dates_missing_context",
    "entities", "entities_missing_context", "propn_missing_context",
    "negation_flips", "modality_flips",
    "claims", "claims_unsupported", "relation_mismatch",
    "seed_s_claims", "seed_ngram_overlap",
    "sub_antonym", "sub_number", "sub_entity", "sub_doc_word", "sub_other",
    "entailment_min",
)
# the support model's score (evalkit.metrics.support), computed beside the lexical features by grounding_batch
ENTAILMENT = "entailment_min"
ENTAILMENT_UNDETERMINED = 1.0  # no claim to check (an abstention): nothing contradicted
GROUPS = {
    "length & preamble": ("log_answer_tokens", "log_context_tokens", "length_ratio", "n_sentences", "meta_sentences"),
    "lexical support": ("support_min", "support_mean", "unsupported_sentence_share", "global_support_min"),
    "rarity-weighted novelty": ("novel_rarity_max", "novel_rarity_mean", "novel_token_rate"),
    "numbers & dates": ("numbers", "numbers_missing_evidence", "numbers_missing_context", "dates",
                        "dates_missing_context"),
    "entities & proper nouns": ("entities", "entities_missing_context", "propn_missing_context"),
    "negation & modality": ("negation_flips", "modality_flips"),
    "relations (claims)": ("claims", "claims_unsupported", "relation_mismatch"),
    "seed anchor score": ("seed_s_claims", "seed_ngram_overlap"),
    "substitutions": ("sub_antonym", "sub_number", "sub_entity", "sub_doc_word", "sub_other"),
    "entailment (support model)": (ENTAILMENT,),
}
# The answer's own length is no model input: it separated HaluEval's classes and carried over nowhere else. Nor
# are the raw counts of numbers, dates, entities and claims: they grow with length, and a model free to read
# "more numbers" as "safer" could lower the risk when an unsupported number is added.
NOT_MODEL_INPUTS = ("log_answer_tokens", "length_ratio", "n_sentences", "numbers", "dates", "entities", "claims")
# The combination is monotone: +1 = more of this evidence never lowers the risk, -1 = more support never raises
# it, 0 = a control the model may use either way (how long the context is, how many numbers the answer states).
MONOTONE = {
    **{f: 1 for f in ("unsupported_sentence_share", "novel_rarity_max", "novel_rarity_mean", "novel_token_rate",
                      "numbers_missing_evidence", "numbers_missing_context", "dates_missing_context",
                      "entities_missing_context", "propn_missing_context", "negation_flips", "modality_flips",
                      "claims_unsupported", "relation_mismatch", "seed_s_claims", *(f"sub_{k}" for k in SUB_KINDS))},
    **{f: -1 for f in ("support_min", "support_mean", "global_support_min", "seed_ngram_overlap", ENTAILMENT)},
    **{f: 0 for f in ("log_context_tokens", "meta_sentences")},
}
MODEL_FEATURES = tuple(f for f in FEATURES if f not in NOT_MODEL_INPUTS)


@lru_cache(maxsize=200_000)
def rarity(word: str) -> float:
    """0 for very common words, up to 1 for words unseen in English (``(7 - zipf) / 7``, clipped)."""
    from wordfreq import zipf_frequency

    return min(1.0, max(0.0, (7.0 - zipf_frequency(word, "en")) / 7.0))


@dataclass
class Evidence:
    """One context prepared for alignment: its sentences' content-word sets and the anchor index."""

    text: str
    sents: list[str]
    sent_words: list[set[str]]
    words: set[str]
    lower: str
    index: ContextIndex
    sent_vecs: np.ndarray | None = None  # sentence embeddings, for align="embedding"

    @classmethod
    def build(cls, text: str, doc=None, encoder=None, index: ContextIndex | None = None) -> "Evidence":
        """From the context's lemma parse ``doc``, or its ready :class:`ContextIndex` (shared with hallucination)."""
        sents = sentences(text) or [text]
        sw = [set(content_words(s)) for s in sents]
        vecs = encoder.encode(sents) if encoder is not None else None
        return cls(text, sents, sw, set(word_tokens(text)), text.lower(), index or ContextIndex(text, doc), vecs)


def _neg(words: Sequence[str]) -> int:
    return sum(w in NEGATIONS or w.endswith("n't") for w in words)


def _align(cset: set[str], ev: Evidence, vec: np.ndarray | None) -> tuple[float, int]:
    """Best evidence sentence for a sentence's content words: most coverage, or highest cosine with ``vec``.

    Of sentences that cover as much, the first that is not a title or heading ("Aster Dynamics Annual Report
    2023." shares the company's name with every claim about it, and says none of them)."""
    best, best_i = -1.0, 0
    for i, s in enumerate(ev.sent_words):
        r = len(cset & s) / len(cset) if cset else 1.0
        if r > best or (r == best and is_heading(ev.sents[best_i]) and not is_heading(ev.sents[i])):
            best, best_i = r, i
    if vec is not None and ev.sent_vecs is not None and len(ev.sent_vecs):
        best_i = int(np.argmax(ev.sent_vecs @ vec))
        best = len(cset & ev.sent_words[best_i]) / len(cset) if cset else 1.0
    return best, best_i


def _name_supported(name: str, ev: Evidence) -> bool:
    """A name is supported when the context holds it (the shared matcher) or its abbreviation/expansion."""
    return ev.index.find_entity(name) is not None or acronym_supported(name, ev.text)


def _names(sent, ev: Evidence) -> dict[str, Any]:
    # one name matcher (ContextIndex.find_entity): "Norwick Pumps'" is "Norwick Pumps"; a span with under two
    # letters or digits is no name (the "h." that spaCy tags PROPN in "km/h."); "WA" is "Western Australia"
    ents = [e for e in sent.ents if e.label_ in ENTITY_LABELS and normalize_entity(e.text)]
    propn = [t for t in sent if t.pos_ == "PROPN" and normalize_entity(t.text)]
    covered = {t.i for e in ents for t in e if _name_supported(e.text, ev)}
    return {"entities": len(ents), "entities_missing": [e.text for e in ents if not _name_supported(e.text, ev)],
            "propn_missing": sorted({t.text for t in propn if t.i not in covered and not _name_supported(t.text, ev)}),
            "names": {w for x in [*ents, *propn] for w in word_tokens(x.text)}}


def _numbers(text: str, evidence: str, ev: Evidence) -> dict[str, int]:
    nums = extract_numbers(text)
    ev_nums = {n.key for n in extract_numbers(evidence)}
    ctx_nums = {n.key for n in ev.index.numbers}
    dates = extract_dates(text)
    ctx_dates = [d.key for d in ev.index.dates]
    return {"numbers": len(nums), "numbers_missing_evidence": sum(n.key not in ev_nums for n in nums),
            "numbers_missing_context": sum(n.key not in ctx_nums for n in nums),
            "dates": len(dates), "dates_missing_context": sum(not date_supported(d.key, ctx_dates) for d in dates)}


def _flips_and_claims(sent, toks: list[str], evidence: str, ev: Evidence, hedges) -> dict[str, int]:
    ev_words = word_tokens(evidence)
    neg_flip = int((_neg(toks) % 2) != (_neg(ev_words) % 2))
    hedge_words = hedges.auxiliaries | hedges.adverbs | hedges.verbs
    modal_flip = int(bool(set(toks) & hedge_words) != bool(set(ev_words) & hedge_words))
    claims = [a for _, a in extract_claims(sent.as_doc(), hedges)]
    unsupported, relation = 0, 0
    for c in claims:
        snip = ev.index.find_claim(c.key, 10)
        if snip is None:
            unsupported += 1
        elif c.key[1] not in ev.words and not re.search(r"(?<!\w)" + re.escape(c.key[1][:4]), snip.lower()):
            relation += 1  # subject and object co-occur, but the verb near them is a different one
    return {"negation_flip": neg_flip, "modality_flip": modal_flip, "claims": len(claims),
            "claims_unsupported": unsupported, "relation_mismatch": relation}


def sentence_features(sent, ev: Evidence, hedges, vec: np.ndarray | None = None) -> dict[str, Any]:
    """Mismatch features of one answer sentence (a spaCy ``Span``) against its best evidence sentence.

    The best evidence sentence covers most of the sentence's content words (lexical alignment), or,
    with ``vec`` and embedded evidence (``align="embedding"``), has the highest cosine similarity.
    Substitutions (:mod:`evalkit.metrics.grounding_substitution`) are counted by kind as ``sub_<kind>``.
    """
    toks = word_tokens(sent.text)
    cw = content_words(sent.text)
    cset = set(cw)
    best, best_i = _align(cset, ev, vec)
    evidence = ev.sents[best_i] if ev.sents else ""
    novel = [w for w in cw if w not in ev.words]
    weights = [rarity(w) for w in cw]
    novel_rarity = (sum(rarity(w) for w in novel) / sum(weights)) if sum(weights) > 0 else 0.0
    names = _names(sent, ev)
    subs = substitutions(sent.text, names.pop("names"), evidence, ev.words)
    return {
        "sentence": sent.text, "evidence": evidence, "support": round(best, 4),
        "global_support": round(len(cset & ev.words) / len(cset) if cset else 1.0, 4),
        "novel_rarity": round(novel_rarity, 4), "novel_words": sorted(set(novel)),
        **_numbers(sent.text, evidence, ev), **names, **_flips_and_claims(sent, toks, evidence, ev, hedges),
        **{f"sub_{k}": sum(s.kind == k for s in subs) for k in SUB_KINDS},
        "substitutions": [f"{' '.join(s.evidence_words)} -> {' '.join(s.answer_words)} ({s.kind})" for s in subs],
    }


def claim_spans(answer_doc) -> tuple[list, int]:
    """The answer's sentences as claims, meta text removed, and how many sentences were pure preamble.

    A preamble ("Here is a concise summary:") is dropped; a framed sentence ("The passage discusses the
    merger") keeps only what follows the frame (:func:`evalkit.text.meta.meta_prefix_length`).
    """
    spans, meta = [], 0
    for s in answer_doc.sents:
        if not word_tokens(s.text):
            continue
        cut = meta_prefix_length(s.text)
        if cut:
            rest = [t for t in s if t.idx >= s.start_char + cut]
            if not rest or not word_tokens(s.text[cut:]):
                meta += 1
                continue
            s = answer_doc[rest[0].i:s.end]
        spans.append(s)
    return spans, meta


def answer_features(answer: str, answer_doc, ev: Evidence, hedges=None, encoder=None,
                    entailment: float | None = None) -> tuple[dict[str, float], list[dict]]:
    """The feature vector (:data:`FEATURES`) and the per-sentence evidence of one answer.

    Preamble sentences are not claims (:func:`claim_spans`): they add to ``meta_sentences`` only.
    ``entailment`` is the ``support`` metric's value for the answer (:func:`entailment_of`); None (not
    computed, or undetermined: no claim to check) reads as 1.0, nothing contradicted.
    """
    hedges = hedges or default_hedges()
    sents, meta = claim_spans(answer_doc)
    vecs = encoder.encode([s.text for s in sents]) if encoder is not None and sents else [None] * len(sents)
    per = [sentence_features(s, ev, hedges, v) for s, v in zip(sents, vecs)]
    a_tok = word_tokens(answer)
    claim_tok = [t for s in sents for t in word_tokens(s.text)]
    c_tok = len(word_tokens(ev.text))
    # the seed score is a feature of the answer's anchors, also for an answer that declines
    seed = hallucination_from_parsed(answer, answer_doc, ev.index, hedges=hedges, abstention=False)
    sup = [p["support"] for p in per] or [1.0]

    def total(key: str) -> float:
        return float(sum(p[key] if isinstance(p[key], (int, float)) else len(p[key]) for p in per))

    f = {
        "log_answer_tokens": math.log1p(len(a_tok)), "log_context_tokens": math.log1p(c_tok),
        "length_ratio": len(a_tok) / max(1, c_tok), "n_sentences": float(len(per)), "meta_sentences": float(meta),
        "support_min": min(sup), "support_mean": float(np.mean(sup)),
        "unsupported_sentence_share": float(np.mean([s < SUPPORTED_AT for s in sup])),
        "global_support_min": min([p["global_support"] for p in per] or [1.0]),
        "novel_rarity_max": max([p["novel_rarity"] for p in per] or [0.0]),
        "novel_rarity_mean": float(np.mean([p["novel_rarity"] for p in per] or [0.0])),
        "novel_token_rate": len([t for t in claim_tok if t not in ev.words]) / max(1, len(claim_tok)),
        "entities_missing_context": total("entities_missing"), "propn_missing_context": total("propn_missing"),
        "negation_flips": total("negation_flip"), "modality_flips": total("modality_flip"),
        "seed_s_claims": float(seed.details.get("s_claims", 0.0)),
        "seed_ngram_overlap": float(seed.details.get("ngram_overlap", 1.0)),
        ENTAILMENT: ENTAILMENT_UNDETERMINED if entailment is None else float(entailment),
    }
    for key in ("numbers", "numbers_missing_evidence", "numbers_missing_context", "dates", "dates_missing_context",
                "entities", "claims", "claims_unsupported", "relation_mismatch", *(f"sub_{k}" for k in SUB_KINDS)):
        f[key] = total(key)
    return {k: f[k] for k in FEATURES}, per


@lru_cache(maxsize=4)
def load_model(name: str = "grounding_model.json") -> dict[str, Any]:
    """The shipped model (JSON): feature list, boosted trees, Platt calibration, provenance."""
    with resources.files("evalkit").joinpath(f"resources/{name}").open(encoding="utf-8") as f:
        m = json.load(f)
    if not set(m["features"]) <= set(FEATURES):
        raise RuntimeError(f"{name} was trained on features {m['features']}, this evalkit computes {list(FEATURES)}: "
                           "re-run benchmarks/train_grounding.py")
    m["_trees"] = [{k: np.asarray(v) for k, v in t.items()} for t in m["trees"]]
    return m


def raw_score(X: np.ndarray, model: Mapping[str, Any]) -> np.ndarray:
    """Sum of the boosted trees' leaf values plus the baseline (the model's log-odds before calibration).

    Each tree is stored as parallel arrays (feature, threshold, left, right, value, leaf); a sample goes
    left when ``x[feature] <= threshold``, as in scikit-learn's HistGradientBoostingClassifier.
    """
    n = len(X)
    out = np.full(n, float(model["baseline"]))
    rows = np.arange(n)
    for t in model["_trees"]:
        idx = np.zeros(n, dtype=int)
        for _ in range(int(t["depth"])):
            leaf = t["leaf"][idx].astype(bool)
            go_left = X[rows, t["feature"][idx]] <= t["threshold"][idx]
            idx = np.where(leaf, idx, np.where(go_left, t["left"][idx], t["right"][idx]))
        out += t["value"][idx]
    return out


def predict_proba(feats: Sequence[Mapping[str, float]], model: Mapping[str, Any] | None = None) -> np.ndarray:
    """Calibrated probability of hallucination: Platt scaling of the trees' log-odds."""
    model = model or load_model()
    X = np.array([[f[k] for k in model["features"]] for f in feats], dtype=float)
    z = raw_score(X, model)
    cal = model["calibration"]
    return 1.0 / (1.0 + np.exp(-(cal["a"] * z + cal["b"])))


def fired(f: Mapping[str, float], per: list[dict], weakest: Mapping[str, Any] | None = None) -> list[str]:
    """Human-readable reasons the detector may flag an answer (``weakest``: :func:`_weakest_claim`'s record)."""
    out = []
    if weakest is not None and weakest["support"] is not None and weakest["support"] < 0.5:
        out.append(f"the support model finds a claim unsupported (P={weakest['support']:.2f}): {weakest['claim'][:80]}")
    for p in per:
        if p["support"] < SUPPORTED_AT:
            out.append(f"weak evidence ({p['support']:.2f}) for: {p['sentence'][:80]}")
        for key, what in (("numbers_missing_context", "number(s) not in the context"),
                          ("dates_missing_context", "date(s) not in the context"),
                          ("negation_flip", "negation differs from the evidence"),
                          ("modality_flip", "hedging differs from the evidence"),
                          ("relation_mismatch", "relation differs for a subject/object the context has")):
            if p[key]:
                out.append(f"{what}: {p['sentence'][:80]}")
        if p["entities_missing"]:
            out.append(f"entities not in the context: {', '.join(p['entities_missing'])}")
        for sub in p["substitutions"]:
            out.append(f"word replaced against the evidence: {sub}")
    if f.get("meta_sentences"):
        out.append(f"{int(f['meta_sentences'])} preamble sentence(s) not scored as claims")
    return out


def entailment_of(answers: Sequence[str], contexts: Sequence[Sequence[str]], questions: Sequence[str | None],
                  decisions: Sequence[Any]) -> list[Score]:
    """The ``support`` metric (the shipped cross-encoder) on each row: the detector's ``entailment_min`` input,
    and its evidence (the weakest claim and the passage checked)."""
    from evalkit.metrics.support import support_score

    return [support_score(a, list(c or []), q, decision=d)
            for a, c, q, d in zip(answers, contexts, questions, decisions)]


def grounding_batch(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None = None,
                    resources: Any = None) -> list[Score]:
    """Column-wise :func:`grounding_risk` (answers and contexts parsed in batches, contexts once)."""
    from evalkit.base.nlp import NlpPipeline

    done, decisions = guard_rows(inputs, params, resources, grounding_batch, "grounding_risk")
    if done is not None:  # empty and non-English answers are undetermined; the rest scored without them
        return done
    nlp = getattr(resources, "nlp", None) or NlpPipeline()
    align = (params or {}).get("align", "lexical")
    if align not in ("lexical", "embedding"):
        raise ValueError(f"grounding: align must be 'lexical' or 'embedding', got {align!r}")
    encoder = None
    if align == "embedding":
        from evalkit.base.encoders import get_encoder

        encoder = getattr(resources, "encoder", None) or get_encoder()
    answers = [a or "" for a in inputs["answer"]]
    joined = [joined_contexts(cs) for cs in inputs["contexts"]]  # the same key hallucination files its index under
    docs = nlp.parse_answers(answers)
    indexes = context_indexes(joined, nlp, getattr(resources, "context_index", None))
    evs = {t: Evidence.build(t, encoder=encoder, index=ix) for t, ix in indexes.items()}
    model = load_model()
    hedges = default_hedges()
    out: list[Score] = []
    rows = []
    entail = _entailment_inputs(inputs, answers, joined, decisions, model)
    for a, d, j, dec, e in zip(answers, docs, joined, decisions, entail):
        if dec.abstained:  # checked before the contexts: an abstention is grounded whatever they hold
            out.append(Score(0.0, GroundingDetails(True, model["name"], align, reason=ABSTENTION_REASON,
                                                   matched=tuple(dec.matched))))
            continue
        if not j:
            out.append(Score(None, Undetermined("no contexts to ground the answer in")))
            continue
        f, per = answer_features(a, d, evs[j], hedges, encoder, None if e is None else e.value)
        rows.append((len(out), f, per, e))
        out.append(None)  # type: ignore[arg-type]
    if rows:
        p = predict_proba([f for _, f, _, _ in rows], model)
        for (i, f, per, e), prob in zip(rows, p):
            weakest = None if e is None else _weakest_claim(e)
            out[i] = Score(float(prob), GroundingDetails(
                False, model["name"], align, probability=float(prob), sentences=tuple(freeze(x) for x in per),
                fired=tuple(fired(f, per, weakest)), features=FrozenMap(f), entailment=weakest))
    return out


@dataclass(frozen=True, eq=False)
class WeakestClaim(Details):
    """The support model's verdict on the answer's weakest claim, as the detector's evidence: P(supported), the
    claim and its best passage; or no probability, with the support metric's reason."""

    _optional = frozenset({"claim", "passage", "reason"})
    support: float | None
    claim: str | None = None
    passage: str | None = None
    reason: str | None = None


@dataclass(frozen=True, eq=False)
class GroundingDetails(Details):
    """grounding_risk's evidence on one row: the abstention decision (with its reason and declining phrases),
    the calibrated probability, each answer sentence's evidence and checks (:func:`sentence_features`), the
    reasons the detector may flag the answer (``fired``), the model's inputs (``features``), the model's name,
    the alignment used, and the support model's weakest claim when the model reads it."""

    _optional = frozenset({"reason", "matched", "probability", "sentences", "fired", "features", "entailment"})
    abstention: bool
    model: str
    align: str
    reason: str | None = None
    matched: tuple[str, ...] | None = None
    probability: float | None = None
    sentences: tuple[FrozenMap, ...] | None = None
    fired: tuple[str, ...] | None = None
    features: FrozenMap | None = None
    entailment: WeakestClaim | None = None

    # saved in this order: the decision first, then the value and its evidence, then what produced it
    def _keys(self) -> list[str]:
        order = ("abstention", "reason", "matched", "probability", "sentences", "fired", "features", "model",
                 "align", "entailment")
        present = set(super()._keys())
        return [k for k in order if k in present]


def _entailment_inputs(inputs: Mapping[str, Sequence[Any]], answers: list[str], joined: list[str],
                       decisions: Sequence[Any], model: Mapping[str, Any]) -> list[Score | None]:
    """The support metric's Score for each row that the trees will score (None elsewhere, and for every row
    when the shipped model does not read ``entailment_min``)."""
    if ENTAILMENT not in model["features"]:
        return [None] * len(answers)
    todo = [i for i, (j, d) in enumerate(zip(joined, decisions)) if j and not d.abstained]
    questions = inputs.get("question") or [None] * len(answers)
    got = entailment_of([answers[i] for i in todo], [inputs["contexts"][i] for i in todo],
                        [questions[i] for i in todo], [decisions[i] for i in todo])
    out: list[Score | None] = [None] * len(answers)
    for i, sc in zip(todo, got):
        out[i] = sc
    return out


def _weakest_claim(s: Score) -> WeakestClaim:
    """The support metric's verdict on the answer's weakest claim, as the detector's evidence."""
    if s.value is None:
        return WeakestClaim(None, reason=s.details.get("reason"))
    weakest = s.details["sentences"][s.details["weakest"]]
    return WeakestClaim(s.value, weakest["sentence"], weakest["window_text"])


def grounding_risk(answer: str | None, contexts: Sequence[str] | None, question: str | None = None, *,
                   align: str = "lexical",
                    phrases: Sequence[str] | None = None, short_tokens: Sequence[str] | None = None,
                    short_chars: int | None = None, decision: Any = None) -> Score:
    """Calibrated probability (0..1, lower is better) that the answer is not grounded in the contexts.

    ``align="embedding"`` (``embed`` extra) picks each sentence's evidence by sentence-embedding cosine
    instead of word coverage; the shipped model was trained with lexical alignment (the default).

    Details: every answer sentence with its best evidence sentence, support, and the mismatch features
    that fired; the full feature vector; the model's name.

    Abstention policy: an answer that declines to answer (the row's ``abstained`` decision, ``decision``,
    made by :func:`evalkit.text.decide_answer` with ``phrases``, ``short_tokens``, ``short_chars`` when not
    given) makes no claim, so nothing in it can be
    ungrounded: 0.0 with ``details["abstention"] = True``, also without contexts; the model is not run.
    Every other scored answer has ``details["abstention"] = False``.

    Empty policy: undetermined for an empty answer (reason "empty answer"), an answer not in English ("not
    English (detected: de)": the features come from spaCy's English model) or (unless it abstains) when
    there are no contexts.

    Examples
    --------
    >>> s = grounding_risk("The premium is $640 and Paul Brandt approved it.",
    ...                     ["The base premium for Territory 118 is $604 per year."])
    >>> s.value > 0.5, s.details["sentences"][0]["numbers_missing_context"]
    (True, 1)
    >>> s = grounding_risk("I don't know; the documents do not mention a speed limit.", [])
    >>> s.value, s.details["abstention"]
    (0.0, True)
    """
    return grounding_batch({"answer": [answer], "contexts": [list(contexts or [])], "question": [question],
                            "decision": [decision]},
                           {"align": align, "phrases": phrases, "short_tokens": short_tokens,
                            "short_chars": short_chars})[0]


def _closest_shown(sentence: Mapping[str, Any]) -> str:
    """The aligned context sentence a reader is shown: none when the two share no content word (support 0: the
    alignment then picked the first sentence for want of any other, which says nothing about the claim)."""
    return "" if sentence.get("support") == 0 else str(sentence.get("evidence") or "")


def aligned_sentence_evidence(details: Mapping[str, Any], metric: str) -> shown.Evidence:
    """Each answer sentence with the context sentence aligned with it ("" when the two share no content word).

    >>> aligned_sentence_evidence({"sentences": [{"sentence": "A.", "evidence": "B."}]}, "m").aligned
    (AlignedSentence(sentence='A.', evidence='B.'),)
    >>> aligned_sentence_evidence({"sentences": [{"sentence": "A.", "evidence": "B.", "support": 0.0}]}, "m").aligned
    (AlignedSentence(sentence='A.', evidence=''),)
    """
    aligned = tuple(shown.AlignedSentence(str(s["sentence"]), _closest_shown(s))
                    for s in shown.records_in(details.get("sentences")) if s.get("sentence"))
    return shown.Evidence(aligned=aligned, declined=shown.texts_in(details.get("matched")),
                          abstention=shown.abstention_in(details))


# ---------------------------------------------------------------------------------------------------------------
# The declarations: this module's metrics as the registry lists them (evalkit.metrics collects METRICS)
# ---------------------------------------------------------------------------------------------------------------
METRICS = (
    Metric("grounding_risk", grounding_risk, needs=("answer", "contexts"), optional=("question",),
           better="lower", range=(0.0, 1.0), batch=grounding_batch,
           resources=("nlp", "encoder", "grounding_model", "support_model"),
           params=("align", "phrases", "short_tokens", "short_chars"),
           details=GroundingDetails,
           family="detector", unit="probability",
           formula="calibrated probability of hallucination: gradient-boosted trees, monotone in every evidence "
                   "feature (more unsupported evidence never lowers it), on sentence-evidence, mismatch and "
                   "substitution features and the support model's P(supported) of the weakest claim; answer "
                   "length is no input; Platt-scaled",
           empty_policy="undetermined for an empty answer" + NOT_ENGLISH + " or no contexts; 0.0 for an abstention",
           evidence_keys=("matched", "fired"), evidence=aligned_sentence_evidence, english_only=True),
)
