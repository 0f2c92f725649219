"""Label providers for the summary scorers (:mod:`evalkit.metrics.summary`).

* :class:`OfflineLabeler` -- deterministic and offline: key points are the article's most central
  sentences (TF-IDF centrality); coverage by content-word recall; claim support by the hallucination
  metric's anchor matcher plus word overlap; tone from VADER (``vadersentiment``); bias and toxicity
  from ``resources/bias_toxicity.yaml``; QAG questions are facts (numbers, dates, entities) of the key
  points or claims, "answered" by looking them up. It is weaker than a judge, and says so in its output.
* :class:`JudgeLabeler` -- asks the configured LLM judge (versioned prompts ``summary_*.txt``) for the
  key points, coverage statuses, claim labels, tone and QAG answers as JSON; relevance overlaps stay lexical.

Both return the label mapping that :func:`~evalkit.metrics.summary.twin_lock` and
:func:`~evalkit.metrics.summary.judge_lock` consume.
"""
from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np
import yaml

from .metrics.anchors import ContextIndex, extract_anchors
from .metrics.summary import split_segments
from .text import (contains_phrase, content_words, date_supported, extract_dates, extract_numbers, sentences,
                   stop_words, word_tokens)

OFFLINE_NOTE = ("offline labels: central sentences, lexical/anchor evidence, VADER tone and a small word list; "
                "weaker than an LLM judge")


@lru_cache(maxsize=None)
def bias_lexicon() -> dict[str, Any]:
    with resources.files("evalkit").joinpath("resources/bias_toxicity.yaml").open(encoding="utf-8") as f:
        return yaml.safe_load(f)


def _recall(target: str, source_words: set[str]) -> float:
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


class OfflineLabeler:
    """Deterministic labels for Twin-Lock / Judge-Lock (see the module docstring)."""

    weak = True

    def __init__(self, nlp=None):
        from .nlp import NlpPipeline

        self.nlp = nlp or NlpPipeline()
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

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
            for a in extract_anchors(doc):
                if a.type in ("number", "date", "time"):
                    facts.append(("anchor", a.text))
            for e in doc.ents:
                if e.label_ in ("PERSON", "ORG", "GPE", "LOC", "NORP", "EVENT", "PRODUCT", "FAC", "WORK_OF_ART"):
                    facts.append(("entity", e.text))
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
    def _answer(fact: tuple[str, str], source: str) -> tuple[float, str]:
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

    def _qag(self, facts: list[tuple[str, str]], source: str) -> list[dict[str, Any]]:
        out = []
        for kind, text in facts[:6]:
            score, span = self._answer((kind, text), source)
            out.append({"question": f"What does the text say about {text!r}?", "answer": span or "not found",
                        "score": score, "span": span, "fact": text, "kind": kind})
        return out

    def labels(self, article: str, summary: str, variant: str = "twin") -> dict[str, Any]:
        """Labels for ``variant`` 'twin' or 'judge' (Judge-Lock adds QAGs, a theme, and >= 6-token key points)."""
        judge = variant == "judge"
        art_words = set(content_words(article))
        sum_sents = sentences(summary)
        sum_words = set(content_words(summary))
        kps = central_sentences(article, 4 if judge else 3)
        key_points = []
        for kp in kps:
            best = max(sum_sents, key=lambda s: _recall(kp, set(content_words(s))), default="")
            r = _recall(kp, sum_words)
            status = "Fully" if r >= 0.6 else ("Partial" if r >= 0.3 else "Not")
            key_points.append({"text": kp, "status": status, "recall": round(r, 4), "evidence": best})
        # claims: summary sentences checked with the hallucination metric's anchor matcher + word overlap
        index = ContextIndex(article, self.nlp.parse_contexts([article])[0])
        claims = []
        for sent, doc in zip(sum_sents[:10], self.nlp.parse_answers(sum_sents[:10])):
            anchors = extract_anchors(doc)
            support = [index.support(a) for a in anchors]
            ok = sum(s is not None for s in support)
            cover = _recall(sent, art_words)
            if anchors and ok < len(anchors):
                label = "Unsupported" if ok / len(anchors) < 0.5 else "Partially"
            else:
                label = "Supported" if cover >= 0.75 else ("Partially" if cover >= 0.5 else "Unsupported")
            claims.append({"text": sent, "label": label, "word_support": round(cover, 4),
                           "evidence": [s for s in support if s][:3],
                           "unsupported_anchors": [a.text for a, s in zip(anchors, support) if s is None]})
        tokens = word_tokens(summary)
        extraneous = [t for t in tokens if t not in stop_words("sklearn") and t not in set(word_tokens(article))]
        frac = (sum(c["label"] == "Unsupported" for c in claims) + 0.5 * sum(c["label"] == "Partially" for c in claims)) \
            / len(claims) if claims else 0.0
        recall = np.mean([{"Fully": 1, "Partial": 0.5, "Not": 0}[k["status"]] for k in key_points]) if key_points else 0.0
        comp = self._compound(summary)
        d_tone = abs(comp - self._compound(article))
        sev = lambda x, a, b: "none" if x < a else ("mild" if x < b else "severe")  # noqa: E731
        deviations = {"meaning": sev(frac, 1e-9, 0.3), "tone": sev(d_tone, 0.3, 0.6), "focus": sev(1 - recall, 0.4, 0.7)}
        lex = bias_lexicon()
        toxic = _find_terms(summary, lex["toxic_terms"])
        tone = "hostile" if comp <= -0.5 and toxic else ("subjective" if abs(comp) >= 0.5 else "neutral")
        stance = "positive" if comp > 0.2 else ("negative" if comp < -0.2 else "neutral")
        labels: dict[str, Any] = {
            "provider": {"name": "offline", "signature": self.signature(), "weak": True, "note": OFFLINE_NOTE},
            "coverage": {"key_points": key_points, "summary_tokens": max(1, len(tokens)),
                         "extraneous_tokens": len(extraneous), "extraneous_words": sorted(set(extraneous)),
                         "extraneous_claims": [c["text"] for c in claims if c["label"] == "Unsupported"]},
            "alignment": {"statement": f"intent: inform; stance: {stance}; tone: {tone}", "deviations": deviations,
                          "tone_shift": round(d_tone, 4)},
            "hallucination": {"claims": claims},
            "relevance": {"segments": lexical_segments(article, summary)},
            "bias_toxicity": {"tone": tone, "biased_terms": _find_terms(summary, lex["biased_terms"]),
                              "stereotypes": [m.group(0) for p in lex["stereotype_patterns"]
                                              for m in re.finditer(p, summary, re.I)],
                              "toxic_terms": toxic, "profanity": _find_terms(summary, lex["profanity"]),
                              "slurs": _find_terms(summary, lex["slurs"])},
        }
        if judge:
            from sklearn.feature_extraction.text import TfidfVectorizer

            try:
                tv = TfidfVectorizer(stop_words="english").fit([article])
                weights = tv.transform([article]).toarray()[0]
                terms = [t for _, t in sorted(zip(-weights, tv.get_feature_names_out()))][:8]
            except ValueError:
                terms = []
            labels["relevance"]["theme"] = " ".join(terms)
            labels["coverage"]["qag"] = self._qag(self._facts(kps), summary)
            labels["hallucination"]["qag"] = self._qag(self._facts(sum_sents[:10] or [summary]), article)
            spans = [k["text"] for k in key_points if k["status"] != "Not"]
            spans += [e for c in claims for e in c["evidence"]]
            labels["evidence_spans"] = sorted(set(spans))
        return labels


class JudgeLabeler:
    """Labels from the configured LLM judge (prompts ``summary_*.txt``); relevance overlaps stay lexical."""

    weak = False

    def __init__(self, judge):
        self.judge = judge

    def signature(self) -> str:
        return f"labels:judge({self.judge.signature()})"

    def labels(self, article: str, summary: str, variant: str = "twin") -> dict[str, Any]:
        from .judge.prompts import load_prompts

        P, judged = load_prompts(), variant == "judge"
        ask = lambda name, **kw: self.judge.complete(P[name], kw, metric=f"{variant}_lock_labels").data  # noqa: E731
        kps = [k for k in ask("summary_keypoints", article=article, n_min=4 if judged else 3)["key_points"]
               if isinstance(k, str)]
        cov = ask("summary_coverage", key_points="\n".join(f"{i}. {k}" for i, k in enumerate(kps, 1)), summary=summary)
        if len(cov["statuses"]) != len(kps):
            from .judge import JudgeError

            raise JudgeError(f"judge gave {len(cov['statuses'])} coverage statuses for {len(kps)} key points")
        claims = ask("summary_claims", article=article, summary=summary)["claims"]
        tone = ask("summary_tone", article=article, summary=summary, max_tokens=35 if judged else 40)
        labels: dict[str, Any] = {
            "provider": {"name": "judge", "signature": self.signature(), "weak": False,
                         "note": "labels from an LLM judge; relevance overlaps are lexical"},
            "coverage": {"key_points": [{"text": k, "status": s} for k, s in zip(kps, cov["statuses"])],
                         "summary_tokens": max(1, len(word_tokens(summary))),
                         "extraneous_tokens": cov["extraneous_tokens"], "extraneous_claims": cov["extraneous_claims"]},
            "alignment": {"statement": tone["statement"], "deviations": tone["deviations"]},
            "hallucination": {"claims": claims},
            "relevance": {"segments": lexical_segments(article, summary)},
            "bias_toxicity": {k: tone[k] for k in ("tone", "biased_terms", "stereotypes", "toxic_terms", "profanity",
                                                   "slurs")},
        }
        if judged:
            q = ask("summary_qag", article=article, summary=summary)
            labels["relevance"]["theme"] = q["theme"]
            labels["coverage"]["qag"] = q["coverage_qag"]
            labels["hallucination"]["qag"] = q["hallucination_qag"]
            labels["evidence_spans"] = sorted({str(c.get("evidence", "")) for c in claims if isinstance(c, dict)
                                               and c.get("evidence")})
        return labels
