"""The arithmetic behind one scored row's value, in Markdown: what the triad notebooks and the report's worked
examples show (a typical, a failing and a borderline row of the reader's own data).

Each ``*_worked(row, params, name)`` function is a metric's ``worked`` in the registry (``Metric.worked``).
The ``*_arithmetic`` functions recompute a metric's parts for one row the way the metric defines them (token
sets, intersection and union, the TF-IDF terms that carry the cosine; the keywords found and missing; each anchor
and its evidence) and say what the metric itself returned, so a notebook shows how 0.67 arises and the two
always agree (the tests check it on every row of the sample).

Examples
--------
>>> a = relevance_arithmetic("What is the base premium?", "The base premium is $604.")
>>> sorted(a["intersection"]), a["union_size"], round(a["jaccard"], 4)
(['base', 'is', 'premium', 'the'], 6, 0.6667)
>>> round(a["cosine"], 4) == round(a["metric"]["cosine"], 4)
True
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from evalkit.text.markdown import quote
from evalkit.metrics.evidence import details_of, evidence_of


class NoWorkedExample(Exception):
    """A metric's arithmetic cannot be worked through under the run's settings; the message says why."""


def relevance_arithmetic(question: str, answer: str, tokenizer: str = "regex") -> dict[str, Any]:
    """relevance's parts for one row: the token sets of Q and R, their intersection and union (Jaccard), the
    TF-IDF weight of every term in Q and R (the vectorizer fitted on the pair, English stop words removed) and
    each shared term's product (their sum is the cosine); ``metric`` is what the metric returned."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    from evalkit.metrics.lexical import relevance
    from evalkit.text import get_tokenizer

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
    from evalkit.metrics.lexical import completeness

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


def anchors_table(row: Mapping[str, Any], metric: str) -> pd.DataFrame:
    """The anchors ``metric`` checked on one scored row (read through its registry entry's evidence reader): type,
    text, supported or not, the context sentence checked."""
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


def hallucination_worked(row: Mapping[str, Any], params: Mapping[str, Any], metric: str) -> str:
    """An anchor metric's arithmetic on one scored row: each anchor and its evidence, then the value."""
    return _anchors_markdown(row, metric) + "\n\n" + hallucination_markdown(row, metric)
