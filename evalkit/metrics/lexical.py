"""Query-response lexical metrics: relevance and completeness.

Both compare the question Q with the response R only (no contexts).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

from evalkit.text import AnswerDecision, get_tokenizer, stop_words
from evalkit.metrics.base import Details, Score
from evalkit.metrics.guard import decision_for, decisions_for, guard_rows, skipped
from evalkit.metrics.stats import KeywordHits

# sklearn's smooth idf with n = 2 documents: idf = ln((1 + 2) / (1 + df)) + 1
_IDF_ONE_DOC = math.log(3 / 2) + 1.0  # term in only one of Q, R
_IDF_BOTH = 1.0  # term in both


@dataclass(frozen=True, eq=False)
class RelevanceDetails(Details):
    """relevance's parts on one row: the TF-IDF cosine and the token Jaccard (to 6 places), the IDF's scope, and
    the reason for a row it scores 0 without comparing (an empty question)."""

    _optional = frozenset({"idf_scope", "reason"})
    cosine: float
    jaccard: float
    idf_scope: str | None = None
    reason: str | None = None

    def _keys(self) -> list[str]:
        # a row scored 0 without comparing says why first
        keys = super()._keys()
        return ["reason", *(k for k in keys if k != "reason")] if self.reason is not None else keys


@dataclass(frozen=True, eq=False)
class CompletenessDetails(Details):
    """completeness's keywords on one row: the question's, those the answer mentions and those it misses (in the
    question's order), and the reason when the question has none."""

    _optional = frozenset({"reason"})
    keywords: tuple[str, ...]
    matched: tuple[str, ...]
    missing: tuple[str, ...]
    reason: str | None = None


def _pair_cosines(questions: Sequence[str], answers: Sequence[str]) -> np.ndarray:
    """Cosine of TF-IDF vectors fitted on each pair [Q, R], for all rows at once.

    Equal (to float precision) to fitting ``TfidfVectorizer(stop_words="english")``
    on ``[Q, R]`` per row: with two documents, a term's idf is 1 when it occurs
    in both and ``1 + ln(3/2)`` when it occurs in one, so the per-pair fit reduces
    to sparse algebra on one shared count matrix.
    """
    cv = CountVectorizer(stop_words="english")
    try:
        cv.fit(list(questions) + list(answers))
    except ValueError:  # empty vocabulary everywhere
        return np.zeros(len(questions))
    q = cv.transform(questions).astype(np.float64)
    r = cv.transform(answers).astype(np.float64)
    both = q.multiply(r > 0)  # q counts restricted to shared terms (a sparse matrix)
    both_r = r.multiply(q > 0)
    dot = np.asarray(q.multiply(r).sum(axis=1)).ravel() * _IDF_BOTH**2
    c2 = _IDF_ONE_DOC**2
    q_sq = np.asarray(q.multiply(q).sum(axis=1)).ravel()
    r_sq = np.asarray(r.multiply(r).sum(axis=1)).ravel()
    q_both_sq = np.asarray(sp.csr_matrix(both).multiply(both).sum(axis=1)).ravel()
    r_both_sq = np.asarray(sp.csr_matrix(both_r).multiply(both_r).sum(axis=1)).ravel()
    q_norm2 = c2 * (q_sq - q_both_sq) + q_both_sq
    r_norm2 = c2 * (r_sq - r_both_sq) + r_both_sq
    denom = np.sqrt(q_norm2 * r_norm2)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = np.where(denom > 0, dot / np.where(denom > 0, denom, 1), 0.0)
    return np.clip(cos, 0.0, 1.0)


def _dataset_cosines(questions: Sequence[str], answers: Sequence[str]) -> np.ndarray:
    """Cosine of TF-IDF vectors with IDF fitted once on every Q and R of the dataset."""
    tv = TfidfVectorizer(stop_words="english")
    try:
        tv.fit(list(questions) + list(answers))
    except ValueError:
        return np.zeros(len(questions))
    q, r = tv.transform(questions), tv.transform(answers)  # rows are L2-normalised
    return np.clip(np.asarray(q.multiply(r).sum(axis=1)).ravel(), 0.0, 1.0)


def _jaccard(q_tokens: set[str], r_tokens: set[str]) -> float:
    union = q_tokens | r_tokens
    return len(q_tokens & r_tokens) / len(union) if union else 0.0


def relevance_batch(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None = None,
                    resources: Any = None) -> list[Score]:
    """Column-wise :func:`relevance`: same numbers, one vectorizer for the whole column."""
    done, _ = guard_rows(inputs, params, resources, relevance_batch, "relevance")
    if done is not None:  # empty and non-English answers are undetermined; the rest scored without them
        return done
    params = params or {}
    questions = [q or "" for q in inputs["question"]]
    answers = [a or "" for a in inputs["answer"]]
    idf_scope = params.get("idf_scope", "pair")
    if idf_scope not in ("pair", "dataset"):
        raise ValueError(f"relevance: idf_scope must be 'pair' or 'dataset', got {idf_scope!r}")
    cos = _pair_cosines(questions, answers) if idf_scope == "pair" else _dataset_cosines(questions, answers)
    tok = get_tokenizer(params.get("tokenizer", "regex"))
    out = []
    for i, (q, r) in enumerate(zip(questions, answers)):
        if not q.strip() or not r.strip():
            which = "question" if not q.strip() else "answer"
            out.append(Score(0.0, RelevanceDetails(0.0, 0.0, reason=f"empty {which}")))
            continue
        jac = _jaccard(set(tok.tokenize(q)), set(tok.tokenize(r)))
        c = float(cos[i])
        out.append(Score((c + jac) / 2, RelevanceDetails(round(c, 6), round(jac, 6), idf_scope)))
    return out


def relevance(question: str | None, answer: str | None, *, idf_scope: str = "pair",
              tokenizer: str = "regex", decision: AnswerDecision | None = None) -> Score:
    """Lexical relevance of a response to its question, 0..1 (higher is better).

    ``relevance = (S_cosine + S_jaccard) / 2`` where

    * ``S_cosine`` is the cosine of the TF-IDF vectors of Q and R with English
      stop words removed, the vectorizer fitted on the pair ``[Q, R]`` alone
      (equal to ``TfidfVectorizer(stop_words="english").fit_transform([Q, R])``).
      ``idf_scope="dataset"`` fits IDF on every Q and R of the batch instead
      (only meaningful through :func:`relevance_batch` / the runner).
    * ``S_jaccard = |T(Q) ∩ T(R)| / |T(Q) ∪ T(R)|`` on lower-cased word tokens.

    Empty policy: an empty or None answer is undetermined (None, ``details["reason"]`` "empty answer": a
    failure of the system, not an irrelevant answer); an empty or None question scores 0.0 with reason
    "empty question". An answer not in English is undetermined with reason "not English (detected: de)".
    ``decision`` is the row's :class:`evalkit.text.AnswerDecision` (made from the answer when not given).

    Examples
    --------
    >>> s = relevance("What is the base premium?", "The base premium is $604.")
    >>> round(s.value, 4), s.details["jaccard"]
    (0.688, 0.666667)
    >>> relevance("What is it?", "").details["reason"]
    'empty answer'
    """
    return relevance_batch({"question": [question], "answer": [answer], "decision": [decision]},
                           {"idf_scope": idf_scope, "tokenizer": tokenizer})[0]


def question_keywords(question: str | None, *, stop_list: str = "sklearn", tokenizer: str = "regex") -> list[str]:
    """Keywords of a question: its tokens minus stop words and non-alphanumeric tokens, in order, unique."""
    sw = stop_words(stop_list)
    seen: dict[str, None] = {}
    for t in get_tokenizer(tokenizer).tokenize(question or ""):
        if t.isalnum() and t not in sw:
            seen.setdefault(t, None)
    return list(seen)


def completeness(question: str | None, answer: str | None, *, stop_list: str = "sklearn",
                 tokenizer: str = "regex", decision: AnswerDecision | None = None) -> Score:
    """Share of the question's keywords that the response mentions, 0..1 (higher is better).

    ``K_Q`` = tokens of Q without stop words and without non-alphanumeric tokens
    (the seed's rule: "C-1" or "1,200" are not alphanumeric and are dropped);
    ``score = |K_Q ∩ T(R)| / |K_Q|``.

    Empty policy: 1.0 when Q has no keywords (nothing can be missed), with
    ``details["reason"]``; an empty or None answer is undetermined with reason "empty answer", and an answer
    not in English with reason "not English (detected: de)" (the row's ``decision``, made from the answer
    when not given).

    Examples
    --------
    >>> s = completeness("What is the base premium for Territory 118?", "The premium is $604.")
    >>> s.value, s.details.missing
    (0.25, ('base', 'territory', '118'))
    """
    if (guarded := skipped(decision_for(answer, decision), "completeness")) is not None:
        return guarded
    kw = question_keywords(question, stop_list=stop_list, tokenizer=tokenizer)
    if not kw:
        return Score(1.0, CompletenessDetails((), (), (), "question has no keywords"),
                     KeywordHits(matched=0, expected=0))
    r_tokens = set(get_tokenizer(tokenizer).tokenize(answer or ""))
    matched = tuple(k for k in kw if k in r_tokens)
    missing = tuple(k for k in kw if k not in r_tokens)
    return Score(len(matched) / len(kw), CompletenessDetails(tuple(kw), matched, missing),
                 KeywordHits(matched=len(matched), expected=len(kw)))


def completeness_batch(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None = None,
                       resources: Any = None) -> list[Score]:
    """Column-wise :func:`completeness` (identical numbers)."""
    params = params or {}
    kw = {k: params[k] for k in ("stop_list", "tokenizer") if k in params}
    decisions = decisions_for(inputs, params)
    return [completeness(q, a, decision=d, **kw) for q, a, d in zip(inputs["question"], inputs["answer"], decisions)]
