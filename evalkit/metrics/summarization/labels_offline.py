"""The offline label provider for the summary scorers: deterministic, no network.

Key points are the article's most central sentences (TF-IDF centrality); coverage by content-word recall;
claim support by the hallucination metric's anchor matcher plus word overlap; tone from VADER
(``vadersentiment``); bias and toxicity from ``resources/bias_toxicity.yaml``; QAG questions are facts
(numbers, dates, entities) of the key points or claims, "answered" by looking them up. It is weaker than a
judge, and says so in its output.

It returns the label mapping that :func:`~evalkit.metrics.summarization.arithmetic.twin_lock` and
:func:`~evalkit.metrics.summarization.arithmetic.judge_lock` consume.
"""
from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np
import yaml

from evalkit.text import (contains_phrase, content_words, date_supported, extract_dates, extract_numbers, sentences,
                     stop_words, word_tokens)
from evalkit.metrics.anchors import ContextIndex, context_indexes, extract_anchors
from evalkit.metrics.summarization.arithmetic import split_segments

OFFLINE_NOTE = ("offline labels: central sentences, lexical/anchor evidence, VADER tone and a small word list; "
                "weaker than an LLM judge")
_ENTITY_LABELS = ("PERSON", "ORG", "GPE", "LOC", "NORP", "EVENT", "PRODUCT", "FAC", "WORK_OF_ART")


@lru_cache(maxsize=None)
def bias_lexicon() -> Mapping[str, Any]:
    """The word lists of ``resources/bias_toxicity.yaml``, read once; read-only, as every caller shares it.

    Examples
    --------
    >>> "vermin" in bias_lexicon()["slurs"]
    True
    """
    with resources.files("evalkit").joinpath("resources/bias_toxicity.yaml").open(encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    return MappingProxyType({k: tuple(v) if isinstance(v, list) else v for k, v in doc.items()})


def word_recall(target: str, source_words: set[str]) -> float:
    """Share of ``target``'s content words found in ``source_words`` (1.0 when it has none).

    Examples
    --------
    >>> word_recall("The bike lane opened", {"bike", "opened"})
    0.6666666666666666
    """
    w = set(content_words(target))
    return len(w & source_words) / len(w) if w else 1.0


def _jaccard(a: str, b: str) -> float:
    x, y = set(word_tokens(a)), set(word_tokens(b))
    return len(x & y) / len(x | y) if x | y else 0.0


def lexical_segments(article: str, summary: str) -> list[dict[str, Any]]:
    """Each summary segment with its overlap: the best token Jaccard against any article sentence
    (Jaccard with the whole article would be dominated by the article's length)."""
    art = sentences(article)
    return [{"text": seg, "overlap": round(max((_jaccard(seg, s) for s in art), default=0.0), 4)}
            for seg in split_segments(summary)]


def _find_terms(text: str, terms) -> list[str]:
    return [t for t in terms if contains_phrase(text, t)]


def central_sentences(article: str, k_min: int, k_max: int = 7, min_tokens: int = 6) -> list[str]:
    """The article's most central sentences (mean TF-IDF cosine to the others), in article order."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    sents = [s for s in sentences(article) if len(word_tokens(s)) >= min_tokens]
    if len(sents) <= k_min:
        return sents
    try:
        m = TfidfVectorizer(stop_words="english").fit_transform(sents)
    except ValueError:
        return sents[:k_min]
    sim = (m @ m.T).toarray()
    np.fill_diagonal(sim, 0)
    centrality = sim.mean(axis=1)
    k = int(min(k_max, max(k_min, round(len(sents) / 4))))
    top = sorted(np.argsort(-centrality, kind="mergesort")[:k])
    return [sents[i] for i in top]


def _level(x: float, mild: float, severe: float) -> str:
    return "none" if x < mild else ("mild" if x < severe else "severe")


def _theme(article: str) -> str:
    """The article's 8 highest-weighted TF-IDF terms ('' when it has no content words)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    try:
        tv = TfidfVectorizer(stop_words="english").fit([article])
    except ValueError:
        return ""
    weights = tv.transform([article]).toarray()[0]
    return " ".join([t for _, t in sorted(zip(-weights, tv.get_feature_names_out()))][:8])


def _answer_fact(fact: tuple[str, str], source: str) -> tuple[float, str]:
    """Look a fact up in ``source``: 1 found, 0.5 partly (some of its numbers / the entity's head word), 0."""
    kind, text = fact
    src_sents = sentences(source) or [source]
    if kind == "anchor":
        keys = {n.key for n in extract_numbers(text)}
        dates = [d.key for d in extract_dates(text)]
        for s in src_sents:
            if dates and any(date_supported(k, [d.key for d in extract_dates(s)]) for k in dates):
                return 1.0, s
            if keys and not dates and keys <= {n.key for n in extract_numbers(s)}:
                return 1.0, s
        for s in src_sents:
            if keys & {n.key for n in extract_numbers(s)}:
                return 0.5, s
        return 0.0, ""
    low = text.lower()
    for s in src_sents:
        if re.search(r"(?<!\w)" + re.escape(low) + r"(?!\w)", s.lower()):
            return 1.0, s
    head = low.split()[-1] if kind == "entity" and low.split() else ""
    for s in src_sents:
        if head and re.search(r"(?<!\w)" + re.escape(head) + r"(?!\w)", s.lower()):
            return 0.5, s
    return 0.0, ""


def _qag(facts: list[tuple[str, str]], source: str) -> list[dict[str, Any]]:
    out = []
    for kind, text in facts[:6]:
        score, span = _answer_fact((kind, text), source)
        out.append({"question": f"What does the text say about {text!r}?", "answer": span or "not found",
                    "score": score, "span": span, "fact": text, "kind": kind})
    return out


class OfflineLabeler:
    """Deterministic labels for Twin-Lock / Judge-Lock (see the module docstring)."""

    weak = True

    def __init__(self, nlp=None, context_index: dict | None = None):
        """``context_index``: the run's shared :class:`ContextIndex` per article (hallucination and grounding fill
        and read the same one), so an article is parsed and indexed once per run; None (a labeler used on its own)
        keeps nothing between calls."""
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

        from evalkit.base.nlp import NlpPipeline

        self.nlp = nlp or NlpPipeline()
        self.context_index = context_index
        self.vader = SentimentIntensityAnalyzer()

    def signature(self) -> str:
        return "labels:offline-v1"

    def _compound(self, text: str) -> float:
        ss = sentences(text) or [text]
        return float(np.mean([self.vader.polarity_scores(s)["compound"] for s in ss]))

    def _facts(self, texts: list[str]) -> list[tuple[str, str]]:
        """Checkable facts of some sentences: (kind, text) for numbers/dates/entities, then content words."""
        facts: list[tuple[str, str]] = []
        for doc in self.nlp.parse_answers(texts):
            facts += [("anchor", a.text) for a in extract_anchors(doc) if a.type in ("number", "date", "time")]
            facts += [("entity", e.text) for e in doc.ents if e.label_ in _ENTITY_LABELS]
        seen, out = set(), []
        for f in facts:
            if f[1].lower() not in seen:
                seen.add(f[1].lower())
                out.append(f)
        for t in texts:  # pad with content words so there are always enough questions
            for w in sorted(set(content_words(t)), key=lambda w: (-len(w), w)):
                if w not in seen and not w.isdigit():
                    seen.add(w)
                    out.append(("word", w))
        return out

    @staticmethod
    def _key_points(kps: list[str], summary: str) -> list[dict[str, Any]]:
        """Each key point's coverage: Fully (content-word recall >= 0.6), Partial (>= 0.3) or Not."""
        sum_sents, sum_words = sentences(summary), set(content_words(summary))
        out = []
        for kp in kps:
            best = max(sum_sents, key=lambda s: word_recall(kp, set(content_words(s))), default="")
            r = word_recall(kp, sum_words)
            status = "Fully" if r >= 0.6 else ("Partial" if r >= 0.3 else "Not")
            out.append({"text": kp, "status": status, "recall": round(r, 4), "evidence": best})
        return out

    def _claims(self, article: str, summary: str) -> list[dict[str, Any]]:
        """Summary sentences (at most 10) checked with the hallucination metric's anchor matcher + word overlap."""
        art_words = set(content_words(article))
        index = context_indexes([article], self.nlp, self.context_index)[article] if article else ContextIndex("")
        sents = sentences(summary)[:10]
        claims = []
        for sent, doc in zip(sents, self.nlp.parse_answers(sents)):
            anchors = extract_anchors(doc)
            support = [index.support(a) for a in anchors]
            ok = sum(s is not None for s in support)
            cover = word_recall(sent, art_words)
            if anchors and ok < len(anchors):
                label = "Unsupported" if ok / len(anchors) < 0.5 else "Partially"
            else:
                label = "Supported" if cover >= 0.75 else ("Partially" if cover >= 0.5 else "Unsupported")
            claims.append({"text": sent, "label": label, "word_support": round(cover, 4),
                           "evidence": [s for s in support if s][:3],
                           "unsupported_anchors": [a.text for a, s in zip(anchors, support) if s is None]})
        return claims

    def _tone(self, article: str, summary: str, claims: list[dict[str, Any]],
              key_points: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Alignment (statement, deviations in meaning / tone / focus) and bias-toxicity labels."""
        labels = [c["label"] for c in claims]
        frac = (labels.count("Unsupported") + 0.5 * labels.count("Partially")) / len(labels) if labels else 0.0
        status = {"Fully": 1, "Partial": 0.5, "Not": 0}
        recall = np.mean([status[k["status"]] for k in key_points]) if key_points else 0.0
        comp = self._compound(summary)
        d_tone = abs(comp - self._compound(article))
        lex = bias_lexicon()
        toxic = _find_terms(summary, lex["toxic_terms"])
        tone = "hostile" if comp <= -0.5 and toxic else ("subjective" if abs(comp) >= 0.5 else "neutral")
        stance = "positive" if comp > 0.2 else ("negative" if comp < -0.2 else "neutral")
        alignment = {"statement": f"intent: inform; stance: {stance}; tone: {tone}",
                     "deviations": {"meaning": _level(frac, 1e-9, 0.3), "tone": _level(d_tone, 0.3, 0.6),
                                    "focus": _level(1 - recall, 0.4, 0.7)},
                     "tone_shift": round(d_tone, 4)}
        bias_tox = {"tone": tone, "biased_terms": _find_terms(summary, lex["biased_terms"]),
                    "stereotypes": [m.group(0) for p in lex["stereotype_patterns"]
                                    for m in re.finditer(p, summary, re.I)],
                    "toxic_terms": toxic, "profanity": _find_terms(summary, lex["profanity"]),
                    "slurs": _find_terms(summary, lex["slurs"])}
        return alignment, bias_tox

    def labels(self, article: str, summary: str, variant: str = "twin") -> dict[str, Any]:
        """Labels for ``variant`` 'twin' or 'judge' (Judge-Lock adds QAGs, a theme, and >= 6-token key points)."""
        kps = central_sentences(article, 4 if variant == "judge" else 3)
        key_points = self._key_points(kps, summary)
        claims = self._claims(article, summary)
        tokens = word_tokens(summary)
        article_words = set(word_tokens(article))
        extraneous = [t for t in tokens if t not in stop_words("sklearn") and t not in article_words]
        alignment, bias_tox = self._tone(article, summary, claims, key_points)
        labels: dict[str, Any] = {
            "provider": {"name": "offline", "signature": self.signature(), "weak": True, "note": OFFLINE_NOTE},
            "coverage": {"key_points": key_points, "summary_tokens": max(1, len(tokens)),
                         "extraneous_tokens": len(extraneous), "extraneous_words": sorted(set(extraneous)),
                         "extraneous_claims": [c["text"] for c in claims if c["label"] == "Unsupported"]},
            "alignment": alignment,
            "hallucination": {"claims": claims},
            "relevance": {"segments": lexical_segments(article, summary)},
            "bias_toxicity": bias_tox,
        }
        if variant == "judge":
            self._add_judge_lock_labels(labels, article, summary, kps)
        return labels

    def _add_judge_lock_labels(self, labels: dict[str, Any], article: str, summary: str, kps: list[str]) -> None:
        """Judge-Lock's extras: the theme, QAGs both ways, and the evidence spans behind the scores."""
        labels["relevance"]["theme"] = _theme(article)
        labels["coverage"]["qag"] = _qag(self._facts(kps), summary)
        labels["hallucination"]["qag"] = _qag(self._facts(sentences(summary)[:10] or [summary]), article)
        spans = [k["text"] for k in labels["coverage"]["key_points"] if k["status"] != "Not"]
        spans += [e for c in labels["hallucination"]["claims"] for e in c["evidence"]]
        labels["evidence_spans"] = sorted(set(spans))
