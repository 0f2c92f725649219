"""Offline grounding detector: sentence-level evidence, mismatch features, a learned calibrated combination.

For each answer sentence, its best evidence sentence in the contexts is the one covering most of its
content words (lexical alignment). Against that evidence (and the whole context) evalkit measures
mismatches: numbers, dates and named entities the evidence lacks; negation and modality flips; content
words absent from the context weighted by rarity (``wordfreq`` Zipf frequencies, offline); new proper
nouns; relation words that differ for a subject-object pair the context does contain. Answer-level
features add the length ratio and the share of unsupported sentences, and the seed anchor score.
Gradient-boosted trees trained by ``benchmarks/train_grounding.py`` on ``../shared/bench`` (grouped CV),
followed by Platt scaling fitted on out-of-fold scores, turn the features into a calibrated probability of
hallucination. The model ships as plain JSON, ``evalkit/resources/grounding_model.json`` (trees as arrays,
feature list, calibration, training-data hash), so loading it needs no pickle and no scikit-learn version match.

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

from ..text import (content_words, date_supported, declines_to_answer, extract_dates, extract_numbers,
                    normalize_entity, sentences, word_tokens)
from .anchors import (ABSTENTION_REASON, ContextIndex, decline_params, default_hedges, extract_claims,
                      hallucination_from_parsed)
from .base import Score

NEGATIONS = frozenset({"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "n't", "without", "cannot"})
ENTITY_LABELS = {"PERSON", "ORG", "GPE", "LOC", "NORP", "EVENT", "PRODUCT", "FAC", "WORK_OF_ART", "LAW", "LANGUAGE"}
SUPPORTED_AT = 0.5  # a sentence is "supported" when its best evidence covers half its content words

FEATURES = (
    "log_answer_tokens", "log_context_tokens", "length_ratio", "n_sentences",
    "support_min", "support_mean", "unsupported_sentence_share", "global_support_min",
    "novel_rarity_max", "novel_rarity_mean", "novel_token_rate",
    "numbers", "numbers_missing_evidence", "numbers_missing_context",
    "dates", "dates_missing_context",
    "entities", "entities_missing_context", "propn_missing_context",
    "negation_flips", "modality_flips",
    "claims", "claims_unsupported", "relation_mismatch",
    "seed_s_claims", "seed_ngram_overlap",
)
GROUPS = {
    "length": ("log_answer_tokens", "log_context_tokens", "length_ratio", "n_sentences"),
    "lexical support": ("support_min", "support_mean", "unsupported_sentence_share", "global_support_min"),
    "rarity-weighted novelty": ("novel_rarity_max", "novel_rarity_mean", "novel_token_rate"),
    "numbers & dates": ("numbers", "numbers_missing_evidence", "numbers_missing_context", "dates",
                        "dates_missing_context"),
    "entities & proper nouns": ("entities", "entities_missing_context", "propn_missing_context"),
    "negation & modality": ("negation_flips", "modality_flips"),
    "relations (claims)": ("claims", "claims_unsupported", "relation_mismatch"),
    "seed anchor score": ("seed_s_claims", "seed_ngram_overlap"),
}


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
    def build(cls, text: str, doc, encoder=None) -> "Evidence":
        sents = sentences(text) or [text]
        sw = [set(content_words(s)) for s in sents]
        vecs = encoder.encode(sents) if encoder is not None else None
        return cls(text, sents, sw, set(word_tokens(text)), text.lower(), ContextIndex(text, doc), vecs)


def _neg(words: Sequence[str]) -> int:
    return sum(w in NEGATIONS or w.endswith("n't") for w in words)


def sentence_features(sent, ev: Evidence, hedges, vec: np.ndarray | None = None) -> dict[str, Any]:
    """Mismatch features of one answer sentence (a spaCy ``Span``) against its best evidence sentence.

    The best evidence sentence covers most of the sentence's content words (lexical alignment), or,
    with ``vec`` and embedded evidence (``align="embedding"``), has the highest cosine similarity.
    """
    toks = word_tokens(sent.text)
    cw = content_words(sent.text)
    cset = set(cw)
    best, best_i = -1.0, 0
    for i, s in enumerate(ev.sent_words):
        r = len(cset & s) / len(cset) if cset else 1.0
        if r > best:
            best, best_i = r, i
    if vec is not None and ev.sent_vecs is not None and len(ev.sent_vecs):
        best_i = int(np.argmax(ev.sent_vecs @ vec))
        best = len(cset & ev.sent_words[best_i]) / len(cset) if cset else 1.0
    evidence = ev.sents[best_i] if ev.sents else ""
    global_support = len(cset & ev.words) / len(cset) if cset else 1.0
    novel = [w for w in cw if w not in ev.words]
    weights = [rarity(w) for w in cw]
    novel_rarity = (sum(rarity(w) for w in novel) / sum(weights)) if sum(weights) > 0 else 0.0
    nums = extract_numbers(sent.text)
    ev_nums = {n.key for n in extract_numbers(evidence)}
    ctx_nums = {n.key for n in ev.index.numbers}
    dates = extract_dates(sent.text)
    ctx_dates = [d.key for d in ev.index.dates]
    # one name matcher (ContextIndex.find_entity): "Norwick Pumps'" is "Norwick Pumps"; a span with under two
    # letters or digits is no name (the "h." that spaCy tags PROPN in "km/h.")
    ents = [e for e in sent.ents if e.label_ in ENTITY_LABELS and normalize_entity(e.text)]
    ents_missing = [e.text for e in ents if ev.index.find_entity(e.text) is None]
    propn_missing = sorted({t.text for t in sent if t.pos_ == "PROPN" and normalize_entity(t.text)
                            and ev.index.find_entity(t.text) is None})
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
    return {
        "sentence": sent.text, "evidence": evidence, "support": round(best, 4), "global_support": round(global_support, 4),
        "novel_rarity": round(novel_rarity, 4), "novel_words": sorted(set(novel)),
        "numbers": len(nums), "numbers_missing_evidence": sum(n.key not in ev_nums for n in nums),
        "numbers_missing_context": sum(n.key not in ctx_nums for n in nums),
        "dates": len(dates), "dates_missing_context": sum(not date_supported(d.key, ctx_dates) for d in dates),
        "entities": len(ents), "entities_missing": ents_missing, "propn_missing": propn_missing,
        "negation_flip": neg_flip, "modality_flip": modal_flip,
        "claims": len(claims), "claims_unsupported": unsupported, "relation_mismatch": relation,
    }


def answer_features(answer: str, answer_doc, ev: Evidence, hedges=None, encoder=None) -> tuple[dict[str, float], list[dict]]:
    """The model's feature vector (:data:`FEATURES`) and the per-sentence evidence of one answer."""
    hedges = hedges or default_hedges()
    sents = [s for s in answer_doc.sents if word_tokens(s.text)]
    vecs = encoder.encode([s.text for s in sents]) if encoder is not None and sents else [None] * len(sents)
    per = [sentence_features(s, ev, hedges, v) for s, v in zip(sents, vecs)]
    a_tok = word_tokens(answer)
    c_tok = len(word_tokens(ev.text))
    # the seed score is a feature of the answer's anchors, also for an answer that declines
    seed = hallucination_from_parsed(answer, answer_doc, ev.index, hedges=hedges, abstention=False)
    sup = [p["support"] for p in per] or [1.0]
    f = {
        "log_answer_tokens": math.log1p(len(a_tok)), "log_context_tokens": math.log1p(c_tok),
        "length_ratio": len(a_tok) / max(1, c_tok), "n_sentences": float(len(per)),
        "support_min": min(sup), "support_mean": float(np.mean(sup)),
        "unsupported_sentence_share": float(np.mean([s < SUPPORTED_AT for s in sup])),
        "global_support_min": min([p["global_support"] for p in per] or [1.0]),
        "novel_rarity_max": max([p["novel_rarity"] for p in per] or [0.0]),
        "novel_rarity_mean": float(np.mean([p["novel_rarity"] for p in per] or [0.0])),
        "novel_token_rate": len([t for t in a_tok if t not in ev.words]) / max(1, len(a_tok)),
        "numbers": float(sum(p["numbers"] for p in per)),
        "numbers_missing_evidence": float(sum(p["numbers_missing_evidence"] for p in per)),
        "numbers_missing_context": float(sum(p["numbers_missing_context"] for p in per)),
        "dates": float(sum(p["dates"] for p in per)),
        "dates_missing_context": float(sum(p["dates_missing_context"] for p in per)),
        "entities": float(sum(p["entities"] for p in per)),
        "entities_missing_context": float(sum(len(p["entities_missing"]) for p in per)),
        "propn_missing_context": float(sum(len(p["propn_missing"]) for p in per)),
        "negation_flips": float(sum(p["negation_flip"] for p in per)),
        "modality_flips": float(sum(p["modality_flip"] for p in per)),
        "claims": float(sum(p["claims"] for p in per)),
        "claims_unsupported": float(sum(p["claims_unsupported"] for p in per)),
        "relation_mismatch": float(sum(p["relation_mismatch"] for p in per)),
        "seed_s_claims": float(seed.details.get("s_claims", 0.0)),
        "seed_ngram_overlap": float(seed.details.get("ngram_overlap", 1.0)),
    }
    return f, per


@lru_cache(maxsize=4)
def load_model(name: str = "grounding_model.json") -> dict[str, Any]:
    """The shipped model (JSON): feature list, boosted trees, Platt calibration, provenance."""
    with resources.files("evalkit").joinpath(f"resources/{name}").open(encoding="utf-8") as f:
        m = json.load(f)
    if list(m["features"]) != list(FEATURES):
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


def fired(f: Mapping[str, float], per: list[dict]) -> list[str]:
    """Human-readable reasons the detector may flag an answer."""
    out = []
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
    return out


def grounding_batch(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None = None,
                    resources: Any = None) -> list[Score]:
    """Column-wise :func:`grounding_score` (answers and contexts parsed in batches, contexts once)."""
    from ..nlp import NlpPipeline

    nlp = getattr(resources, "nlp", None) or NlpPipeline()
    align = (params or {}).get("align", "lexical")
    if align not in ("lexical", "embedding"):
        raise ValueError(f"grounding: align must be 'lexical' or 'embedding', got {align!r}")
    encoder = None
    if align == "embedding":
        from ..encoders import get_encoder

        encoder = getattr(resources, "encoder", None) or get_encoder()
    answers = [a or "" for a in inputs["answer"]]
    joined = ["\n\n".join(c for c in (cs or []) if c) for cs in inputs["contexts"]]
    docs = nlp.parse_answers(answers)
    distinct = list(dict.fromkeys(j for j in joined if j))
    evs = {t: Evidence.build(t, d, encoder) for t, d in zip(distinct, nlp.parse_contexts(distinct))}
    model = load_model()
    hedges = default_hedges()
    decline = decline_params(params)
    out: list[Score] = []
    rows = []
    for a, d, j in zip(answers, docs, joined):
        if not a.strip():
            out.append(Score(None, {"reason": "empty answer"}))
            continue
        declines, matched = declines_to_answer(a, **decline)
        if declines:  # checked before the contexts: an abstention is grounded whatever they hold
            out.append(Score(0.0, {"abstention": True, "reason": ABSTENTION_REASON, "matched": matched,
                                   "model": model["name"], "align": align}))
            continue
        if not j:
            out.append(Score(None, {"reason": "no contexts to ground the answer in"}))
            continue
        f, per = answer_features(a, d, evs[j], hedges, encoder)
        rows.append((len(out), f, per))
        out.append(None)  # type: ignore[arg-type]
    if rows:
        p = predict_proba([f for _, f, _ in rows], model)
        for (i, f, per), prob in zip(rows, p):
            out[i] = Score(float(prob), {"abstention": False, "probability": float(prob), "sentences": per,
                                         "fired": fired(f, per), "features": dict(f),
                                         "model": model["name"], "align": align})
    return out


def grounding_score(answer: str | None, contexts: Sequence[str] | None, *, align: str = "lexical",
                    phrases: Sequence[str] | None = None, short_tokens: Sequence[str] | None = None,
                    short_chars: int | None = None) -> Score:
    """Calibrated probability (0..1, lower is better) that the answer is not grounded in the contexts.

    ``align="embedding"`` (``embed`` extra) picks each sentence's evidence by sentence-embedding cosine
    instead of word coverage; the shipped model was trained with lexical alignment (the default).

    Details: every answer sentence with its best evidence sentence, support, and the mismatch features
    that fired; the full feature vector; the model's name.

    Abstention policy: an answer that declines to answer (:func:`evalkit.text.declines_to_answer`;
    ``phrases``, ``short_tokens``, ``short_chars`` as there) makes no claim, so nothing in it can be
    ungrounded: 0.0 with ``details["abstention"] = True``, also without contexts; the model is not run.
    Every other scored answer has ``details["abstention"] = False``.

    Empty policy: undetermined for an empty answer or (unless it abstains) when there are no contexts.

    Examples
    --------
    >>> s = grounding_score("The premium is $640 and Paul Brandt approved it.",
    ...                     ["The base premium for Territory 118 is $604 per year."])
    >>> s.value > 0.5, s.details["sentences"][0]["numbers_missing_context"]
    (True, 1)
    >>> s = grounding_score("I don't know; the documents do not mention a speed limit.", [])
    >>> s.value, s.details["abstention"]
    (0.0, True)
    """
    return grounding_batch({"answer": [answer], "contexts": [list(contexts or [])]},
                           {"align": align, "phrases": phrases, "short_tokens": short_tokens,
                            "short_chars": short_chars})[0]
