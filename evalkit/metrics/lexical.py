"""Query-response lexical metrics: relevance and completeness.

Both compare the question Q with the response R only (no contexts).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from evalkit.text import AnswerDecision, get_tokenizer, stop_words
from evalkit.text.markdown import quote
from evalkit.metrics.base import Details, Metric, NoWorkedExample, Score, VerdictRole
from evalkit.metrics.evidence import keyword_evidence
from evalkit.metrics.guard import NOT_ENGLISH, decision_for, decisions_for, guard_rows, skipped
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
    import scipy.sparse as sp  # scikit-learn and SciPy load when relevance runs, not when the registry is read
    from sklearn.feature_extraction.text import CountVectorizer

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
    from sklearn.feature_extraction.text import TfidfVectorizer

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


# ---------------------------------------------------------------------------------------------------------------
# The worked arithmetic of one row (Metric.worked): what the triad notebooks and the report's worked examples show
# ---------------------------------------------------------------------------------------------------------------
def relevance_arithmetic(question: str, answer: str, tokenizer: str = "regex") -> dict[str, Any]:
    """relevance's parts for one row: the token sets of Q and R, their intersection and union (Jaccard), the
    TF-IDF weight of every term in Q and R (the vectorizer fitted on the pair, English stop words removed) and
    each shared term's product (their sum is the cosine); ``metric`` is what the metric returned."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    tok = get_tokenizer(tokenizer)
    tq, tr = set(tok.tokenize(question)), set(tok.tokenize(answer))
    inter, union = tq & tr, tq | tr
    terms: list[dict[str, Any]] = []
    cosine = 0.0
    try:
        tv = TfidfVectorizer(stop_words="english")
        m = tv.fit_transform([question, answer]).toarray()
        for j, term in enumerate(tv.get_feature_names_out()):
            terms.append({"term": term, "weight in question": float(m[0, j]), "weight in answer": float(m[1, j]),
                          "product": float(m[0, j] * m[1, j])})
        cosine = float(np.clip(m[0] @ m[1], 0.0, 1.0))
    except ValueError:  # only stop words: no terms, cosine 0
        pass
    jaccard = len(inter) / len(union) if union else 0.0
    score = relevance(question, answer, tokenizer=tokenizer)
    return {"question_tokens": sorted(tq), "answer_tokens": sorted(tr), "intersection": sorted(inter),
            "union_size": len(union), "jaccard": jaccard, "terms": sorted(terms, key=lambda t: -t["product"]),
            "cosine": cosine, "value": (cosine + jaccard) / 2, "metric": {"value": score.value, **score.details}}


def relevance_markdown(a: Mapping[str, Any]) -> str:
    """The arithmetic of :func:`relevance_arithmetic` as Markdown: the sets, the Jaccard, the cosine's terms."""
    carried = [t for t in a["terms"] if t["product"] > 0]
    rows = "\n".join(f"| {t['term']} | {t['weight in question']:.3f} | {t['weight in answer']:.3f} | "
                     f"{t['product']:.3f} |" for t in carried) or "| (no shared term) | | | 0 |"
    return (f"- question tokens T(Q): {', '.join(a['question_tokens']) or '∅'}\n"
            f"- answer tokens T(R): {', '.join(a['answer_tokens']) or '∅'}\n"
            f"- T(Q) ∩ T(R) = {{{', '.join(a['intersection'])}}} ({len(a['intersection'])} tokens); "
            f"|T(Q) ∪ T(R)| = {a['union_size']}; **S_Jaccard = {len(a['intersection'])} / {a['union_size']} = "
            f"{a['jaccard']:.3f}**\n\n"
            f"The TF-IDF terms that carry the cosine (weights are each text's L2-normalised TF-IDF; terms in only "
            f"one text add nothing):\n\n| term | weight in Q | weight in R | product |\n|---|---:|---:|---:|\n"
            f"{rows}\n\n**S_cos = {a['cosine']:.3f}**, so relevance = ({a['cosine']:.3f} + {a['jaccard']:.3f}) / 2 = "
            f"**{a['value']:.3f}** (the metric: {a['metric']['value']:.3f}).")


def completeness_arithmetic(question: str, answer: str, *, stop_list: str = "sklearn",
                            tokenizer: str = "regex") -> dict[str, Any]:
    """completeness for one row: the question's keywords, those the answer mentions and those it misses."""
    s = completeness(question, answer, stop_list=stop_list, tokenizer=tokenizer)
    d = s.details
    return {"keywords": list(d.get("keywords", [])), "found": list(d.get("matched", [])),
            "missing": list(d.get("missing", [])), "value": s.value, "reason": d.get("reason")}


def completeness_markdown(a: Mapping[str, Any]) -> str:
    if a["value"] is None or not a["keywords"]:
        return f"completeness is {a['value']} here: {a.get('reason') or 'the question has no keywords'}."
    return (f"- question keywords K_Q: {', '.join(a['keywords'])}\n- found in the answer: "
            f"{', '.join(a['found']) or 'none'}\n- missing: {', '.join(a['missing']) or 'none'}\n\n"
            f"**completeness = {len(a['found'])} / {len(a['keywords'])} = {a['value']:.3f}**")


def relevance_worked(row: Mapping[str, Any], params: Mapping[str, Any], metric: str) -> str:
    """relevance's arithmetic on one row (the registry's ``worked`` for it): the token sets, the Jaccard, the
    cosine's terms. Raises :class:`NoWorkedExample` when the IDF was fitted on the whole data set."""
    if params.get("idf_scope", "pair") != "pair":
        raise NoWorkedExample(
            f"{metric} was scored with `idf_scope: {quote(params['idf_scope'], 20)}` (IDF fitted on the whole data "
            "set): the worked arithmetic below is shown for the pair scope only, so it is left out here.")
    q, a = str(row.get("question") or ""), str(row.get("answer") or "")
    return relevance_markdown(relevance_arithmetic(q, a, params.get("tokenizer", "regex")))


def completeness_worked(row: Mapping[str, Any], params: Mapping[str, Any], metric: str) -> str:
    """completeness's arithmetic on one row: the question's keywords, found and missing."""
    q, a = str(row.get("question") or ""), str(row.get("answer") or "")
    return completeness_markdown(completeness_arithmetic(q, a, stop_list=params.get("stop_list", "sklearn"),
                                                         tokenizer=params.get("tokenizer", "regex")))


# ---------------------------------------------------------------------------------------------------------------
# The declarations: this module's metrics as the registry lists them (evalkit.metrics collects METRICS)
# ---------------------------------------------------------------------------------------------------------------
_RELEVANCE_ROLE = VerdictRole(order=2, flag="below", outcome="FAIL", threshold="relevance_fail")
_COMPLETENESS_ROLE = VerdictRole(order=3, flag="below", outcome="WARN", threshold="completeness_warn")
METRICS = (
    Metric("relevance", relevance, needs=("question", "answer"), better="higher", range=(0.0, 1.0),
           batch=relevance_batch, params=("idf_scope", "tokenizer"), family="triad",
           formula="(TF-IDF cosine + token Jaccard of question and answer) / 2; IDF fitted on the pair "
                   "(idf_scope: dataset fits it on every row)",
           empty_policy="undetermined for an empty answer" + NOT_ENGLISH + "; 0.0 for an empty question",
           verdict_role=_RELEVANCE_ROLE,
           evidence_keys=("cosine", "jaccard"), details=RelevanceDetails,
           worked=relevance_worked,
           in_words="Relevance to the question is {value:.2f} on 0..1.",
           english_only=True),
    Metric("completeness", completeness, needs=("question", "answer"), better="higher", range=(0.0, 1.0),
           batch=completeness_batch, params=("stop_list", "tokenizer"), stats=KeywordHits, family="triad",
           formula="question keywords found in the answer / question keywords",
           empty_policy="undetermined for an empty answer" + NOT_ENGLISH + "; 1.0 when the question has no keywords",
           verdict_role=_COMPLETENESS_ROLE,
           evidence_keys=("missing", "matched"), evidence=keyword_evidence,
           details=CompletenessDetails, worked=completeness_worked,
           in_words="The answer mentions {matched} of the question's {expected} keywords (completeness {value:.2f}).",
           english_only=True),
)
