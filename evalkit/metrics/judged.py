"""RAGAS-style judged metrics: an LLM judge labels, a pure ``compute_*`` function scores.

Each metric calls the judge (:class:`evalkit.judge.Judge`) with a versioned prompt, validates the
JSON it gets back, and ends in a pure function of those labels, so the arithmetic is testable
without a judge. A reply of the wrong shape raises :class:`~evalkit.judge.JudgeError`, which the
runner records in the row's ``error`` column (never a silent 0 or 100).
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from evalkit.judge.client import JudgeError, JudgeNotConfigured, JudgeRequest, NOT_CONFIGURED
from evalkit.judge.prompts import load_prompts
from evalkit.metrics.base import Details, FrozenMap, Metric, Repeated, Score, Undetermined, freeze
from evalkit.metrics.guard import decision_for, skipped, skipped_or_declined

RAGAS_WEIGHTS = {"faithfulness": 0.30, "context_precision": 0.20, "context_recall": 0.20, "answer_relevance": 0.30}
_NO_GT = "no ground truth"
_NO_CLAIMS = "no claims in the answer"
GEVAL_WEIGHTS = {"correctness": 0.5, "completeness": 0.3, "consistency": 0.2}
GRADES = ((80, "A"), (60, "B"), (40, "C"), (20, "D"))



# --- the judged metrics' details: what the judge said, as frozen records ------------------------------------------

@dataclass(frozen=True, eq=False)
class ClaimVerdict(Details):
    """One claim of the answer and the judge's verdict on it (1: the contexts support it), with its reason."""

    claim: str
    verdict: int
    reason: Any = ""


@dataclass(frozen=True, eq=False)
class FaithfulnessDetails(Details):
    """faithfulness's claims with their verdicts, how many are supported of how many, and the reason for a value
    given without asking about the contexts (no claims, no contexts)."""

    _optional = frozenset({"reason"})
    claims: tuple[ClaimVerdict, ...]
    supported: int
    total: int
    reason: str | None = None


@dataclass(frozen=True, eq=False)
class ContextPrecisionDetails(Details):
    """The judge's verdict on each context in retrieval order, the average precision at k, and what the contexts
    were judged against (the ground truth, else the answer); the reason for 0 without contexts."""

    _optional = frozenset({"average_precision_at_k", "reference", "reason"})
    verdicts: tuple[FrozenMap, ...]
    average_precision_at_k: float | None = None
    reference: str | None = None
    reason: str | None = None


@dataclass(frozen=True, eq=False)
class ContextRecallDetails(Details):
    """The judge's classification of each ground-truth statement, how many the contexts attribute of how many;
    the reason for 0 without contexts."""

    _optional = frozenset({"attributed", "total", "reason"})
    classifications: tuple[Any, ...]
    attributed: int | None = None
    total: int | None = None
    reason: str | None = None


@dataclass(frozen=True, eq=False)
class AnswerRelevanceDetails(Details):
    """How answer_relevance was judged: by rubric (with the judge's reason), or by embedding the questions the
    judge generated from the answer (with its noncommittal flag and each question's cosine)."""

    _optional = frozenset({"reason", "questions", "noncommittal", "cosines"})
    method: str
    reason: Any = None
    questions: tuple[str, ...] | None = None
    noncommittal: int | None = None
    cosines: tuple[float, ...] | None = None

    def _kept(self) -> frozenset[str]:
        # a rubric's reason is the judge's, saved as given (null when it gave none)
        return frozenset({"reason"}) if self.method == "rubric" else frozenset()


@dataclass(frozen=True, eq=False)
class RagasScoreDetails(Details):
    """The components the composite used (missing ones are left out), and the reason when none was there."""

    _optional = frozenset({"reason"})
    used: tuple[str, ...]
    reason: str | None = None


@dataclass(frozen=True, eq=False)
class FactualAccuracyDetails(Details):
    """G-Eval's three criteria as the judge gave them (0..10), the letter grade and the judge's reasoning."""

    correctness: float
    completeness: float
    consistency: float
    grade: str
    reasoning: Any = ""


@dataclass(frozen=True, eq=False)
class AnswerClassDetails(Details):
    """Which rule gave the class: ``dont_know`` (the row abstains; the declining phrases matched) or ``judge``
    (with the judge's reason)."""

    _optional = frozenset({"matched", "reason"})
    rule: str
    matched: tuple[str, ...] | None = None
    reason: Any = None

    def _kept(self) -> frozenset[str]:
        # the judge's reason, saved as given (null when it gave none)
        return frozenset({"reason"}) if self.rule == "judge" else frozenset()

def _need(judge) -> None:
    if judge is None:
        raise JudgeNotConfigured(NOT_CONFIGURED)


def _joined(contexts: Sequence[str] | None) -> str:
    return "\n\n".join(c for c in (contexts or []) if c)


def numbered_contexts(contexts: Sequence[str]) -> str:
    """The contexts one after another, each under its own ``[[context i]]`` line (1-based), for a prompt that
    judges each of them.

    >>> print(numbered_contexts(["A.", "B."]))
    [[context 1]]
    A.
    <BLANKLINE>
    [[context 2]]
    B.
    """
    return "\n\n".join(f"[[context {i}]]\n{c}" for i, c in enumerate(contexts, start=1))


def _binary(v: Any, what: str) -> int:
    if isinstance(v, bool) or (isinstance(v, (int, float)) and v in (0, 1)):
        return int(v)
    if isinstance(v, str) and v.strip() in ("0", "1"):
        return int(v.strip())
    raise JudgeError(f"judge gave {what} = {v!r}; expected 0 or 1")


# ---------------------------------------------------------------------------
# Pure scoring from labels
# ---------------------------------------------------------------------------


def compute_faithfulness(verdicts: Sequence[int]) -> float:
    """``100 * supported / total``; 100 with no claims."""
    return 100.0 * sum(verdicts) / len(verdicts) if verdicts else 100.0


def compute_context_precision(verdicts: Sequence[int]) -> tuple[float, float]:
    """``(mean x 100, average precision@k x 100)`` over ranked context verdicts.

    AP@K = sum_k (precision@k * v_k) / sum_k v_k (0 when no context is relevant).

    >>> [round(x, 4) for x in compute_context_precision([1, 0, 1])]  # AP = (1/1 + 2/3) / 2
    [66.6667, 83.3333]
    """
    if not verdicts:
        return 0.0, 0.0
    hits, ap = 0, 0.0
    for k, v in enumerate(verdicts, start=1):
        hits += v
        ap += (hits / k) * v
    return 100.0 * sum(verdicts) / len(verdicts), (100.0 * ap / sum(verdicts) if sum(verdicts) else 0.0)


def compute_context_recall(attributed: Sequence[int]) -> float:
    """``100 * attributed / total``; 100 with no statements."""
    return 100.0 * sum(attributed) / len(attributed) if attributed else 100.0


def compute_answer_relevance(question_vec: np.ndarray, generated_vecs: np.ndarray, noncommittal: int) -> float:
    """Mean cosine of generated questions with the question, x 100, clipped at 0; 0 if noncommittal."""
    if noncommittal or not len(generated_vecs):
        return 0.0
    cos = generated_vecs @ question_vec
    return max(0.0, float(np.mean(cos)) * 100.0)


def compute_ragas_score(components: Mapping[str, float | None], weights: Mapping[str, float] = RAGAS_WEIGHTS) -> float | None:
    """Weighted mean of the available components, weights renormalised; None only when all are missing.

    >>> compute_ragas_score({"faithfulness": 100, "context_precision": None, "context_recall": 50, "answer_relevance": None})
    80.0
    """
    have = {k: float(v) for k, v in components.items() if v is not None and not (isinstance(v, float) and math.isnan(v))}
    if not have:
        return None
    total = sum(weights[k] for k in have)
    return sum(weights[k] * v for k, v in have.items()) / total


def grade(score: float) -> str:
    """Letter grade: A >= 80, B >= 60, C >= 40, D >= 20, else E."""
    for cut, letter in GRADES:
        if score >= cut:
            return letter
    return "E"


def compute_factual_accuracy(parts: Mapping[str, float], weights: Mapping[str, float] = GEVAL_WEIGHTS) -> tuple[float, str]:
    """Weighted G-Eval score on 0..100 from 0..10 criterion scores, and its letter grade.

    >>> compute_factual_accuracy({"correctness": 8, "completeness": 6, "consistency": 10})
    (78.0, 'B')
    """
    s = sum(weights[k] * float(parts[k]) * 10 for k in weights)
    return s, grade(s)


# ---------------------------------------------------------------------------
# Judged metrics (one row each)
# ---------------------------------------------------------------------------


def faithfulness(question: str | None, answer: str | None, contexts: Sequence[str] | None, *, judge=None,
                 decision: Any = None) -> Score:
    """Share of the answer's claims that the contexts support, 0..100 (higher is better).

    One judge call (prompt ``faithfulness_claims``) extracts standalone statements from the answer and gives
    each a 0/1 verdict against the joined contexts; score = ``100 * supported / total``
    (:func:`compute_faithfulness`). Without contexts only the statements are asked for
    (``faithfulness_statements``), to list the claims that nothing supports.

    Empty policy: undetermined for an empty answer (reason "empty answer", the row's ``decision``) and for one
    that declines to answer (the row's ``abstained`` decision: it asserts nothing to check); 100 when the answer
    has no claims; 0 when there are claims but no contexts (nothing can support them).

    Examples
    --------
    >>> from evalkit.base.config import JudgeConfig
    >>> from evalkit.judge.client import OpenAIJudge
    >>> from evalkit.testing import ScriptedJudgeServer  # a real HTTP judge on 127.0.0.1 answering from fixtures
    >>> with ScriptedJudgeServer() as srv:
    ...     judge = OpenAIJudge(JudgeConfig(base_url=srv.url, model="scripted", cache_path=None))
    ...     s = faithfulness("What is the base premium?", "The premium is $604.", ["The base premium is $604 per year."], judge=judge)
    >>> s.value, s.details["supported"], s.details["total"]
    (100.0, 1, 1)
    """
    _need(judge)
    P = load_prompts()
    if (guarded := skipped_or_declined(decision_for(answer, decision), "faithfulness")) is not None:
        return guarded
    ctx = _joined(contexts)
    if not ctx:
        stm = judge.complete(P["faithfulness_statements"], {"question": question or "", "answer": answer},
                             metric="faithfulness").data["statements"]
        stm = [s.strip() for s in stm if isinstance(s, str) and s.strip()]
        if not stm:
            return Score(100.0, FaithfulnessDetails((), 0, 0, _NO_CLAIMS))
        return Score(0.0, FaithfulnessDetails(tuple(ClaimVerdict(s, 0, "no contexts") for s in stm), 0, len(stm),
                                              "no contexts"))
    got = judge.complete(P["faithfulness_claims"], {"question": question or "", "answer": answer, "context": ctx},
                         metric="faithfulness").data["claims"]
    claims = []
    for c in got:
        if not isinstance(c, dict):
            raise JudgeError(f"judge gave claim {c!r}; expected an object with statement and verdict")
        s = c.get("statement")
        if isinstance(s, str) and s.strip():
            claims.append(ClaimVerdict(s.strip(), _binary(c.get("verdict"), "verdict"), freeze(c.get("reason", ""))))
    if not claims:
        return Score(100.0, FaithfulnessDetails((), 0, 0, _NO_CLAIMS))
    vs = [c.verdict for c in claims]
    return Score(compute_faithfulness(vs), FaithfulnessDetails(tuple(claims), sum(vs), len(vs)))


# the reason a context_precision row records when its verdicts were asked one passage at a time
ASKED_PER_PASSAGE = "the judge miscounted the passages twice: each was asked alone"


def _ask_contexts(judge, question: str | None, contexts: Sequence[str], reference: str, metric: str) -> dict:
    """One ``context_verdicts`` call: a verdict per context and the reference's statements attributed or not. The
    request does not depend on which metric asks, so context precision and recall share one call (the cache).

    The request's schema pins the count (exactly one verdict per passage, each naming a passage 1..n), so a
    server that enforces schemas cannot miscount; a reply that still does is asked again once (the client's
    repair). When that fails too, the verdicts are asked one passage at a time (one call each) and the
    statements as before, rather than failing the row: small local models miscount long lists."""
    variables = {"question": question or "", "reference": reference}
    try:
        return _ask_pinned(judge, variables, contexts, metric)
    except JudgeError as e:
        if not getattr(e, "malformed", False) or len(contexts) < 2:
            raise
        miscounted = str(e)
    try:
        one_by_one = [_ask_pinned(judge, variables, [c], metric)["verdicts"][0] for c in contexts]
    except JudgeError as e:  # both ways failed: say both
        raise JudgeError(f"{miscounted}; asked one passage at a time: {e}") from None
    statements = judge.complete(load_prompts()["context_verdicts"],
                                {**variables, "contexts": numbered_contexts(contexts)}, metric=metric).data
    if hasattr(judge, "record"):  # a judge of one's own need not count
        judge.record(metric, asked_per_passage=1)
    return {"verdicts": [{**v, "context": i} for i, v in enumerate(one_by_one, 1)],
            "classifications": statements.get("classifications", []), "asked_per_passage": True}


def _ask_pinned(judge, variables: Mapping[str, Any], contexts: Sequence[str], metric: str) -> dict:
    n = len(contexts)
    return judge.complete(load_prompts()["context_verdicts"], {**variables, "contexts": numbered_contexts(contexts)},
                          metric=metric, pin=lambda request: _pinned_to(request, n)).data


def _pinned_to(request: JudgeRequest, n: int) -> JudgeRequest:
    """The ``context_verdicts`` request with its reply pinned to its n passages: ``minItems`` = ``maxItems`` = n
    verdicts, each ``context`` one of 1..n; its check refuses any other count (so the client repairs it once).

    >>> r = _pinned_to(JudgeRequest.from_prompt(load_prompts()["context_verdicts"], {"question": "Q?",
    ...                "reference": "R.", "contexts": "[1] a"}), 3)
    >>> v = r.schema["properties"]["verdicts"]
    >>> v["minItems"], v["maxItems"], v["items"]["properties"]["context"]["enum"]
    (3, 3, [1, 2, 3])
    >>> r.check({"verdicts": [{"context": 1, "verdict": 1}], "classifications": []})
    'judge returned 1 verdicts for 3 contexts'
    """
    import copy
    import dataclasses

    schema = copy.deepcopy(dict(request.schema))
    verdicts = schema["properties"]["verdicts"]
    verdicts["minItems"] = verdicts["maxItems"] = n
    verdicts["items"]["properties"]["context"]["enum"] = list(range(1, n + 1))

    def check(data: Any) -> str | None:
        problem = request.check(data)
        if problem is None:
            try:
                _ranked_verdicts(data["verdicts"], n)
            except JudgeError as e:
                problem = str(e)
        return problem

    return dataclasses.replace(request, schema=schema, check=check,
                               expect=f"{request.expect}, with exactly {n} verdicts, one for each passage 1..{n}")


def _ranked_verdicts(verdicts: Sequence[Any], n: int) -> list[dict[str, Any]]:
    """The judge's context verdicts in retrieval order, keyed by their ``context`` index (1..n), not by where they
    sit in the reply: average precision depends on the order, and a judge may list the passages in any order.

    >>> [r["verdict"] for r in _ranked_verdicts([{"context": 2, "verdict": 0}, {"context": 1, "verdict": 1}], 2)]
    [1, 0]
    """
    if len(verdicts) != n:
        raise JudgeError(f"judge returned {len(verdicts)} verdicts for {n} contexts")
    by_index: dict[int, dict[str, Any]] = {}
    for v in verdicts:
        i = v.get("context") if isinstance(v, dict) else None
        if isinstance(i, str) and i.strip().isdigit():
            i = int(i.strip())
        if isinstance(i, bool) or not isinstance(i, int):
            raise JudgeError(f"judge gave context verdict {v!r}; expected an object with a context index (1..{n}) "
                             "and a verdict")
        if i in by_index:
            raise JudgeError(f"judge gave context {i} two verdicts (contexts are numbered 1..{n}, one verdict each)")
        by_index[i] = {"verdict": _binary(v.get("verdict"), "verdict"), "reason": v.get("reason", "")}
    if set(by_index) != set(range(1, n + 1)):
        raise JudgeError(f"judge gave verdicts for contexts {sorted(by_index)}; expected each of 1..{n} once")
    return [by_index[i] for i in range(1, n + 1)]


def context_precision(question: str | None, contexts: Sequence[str] | None, ground_truth: str | None = None,
                      answer: str | None = None, *, judge=None) -> Score:
    """Share of retrieved contexts the judge finds useful for the reference answer, 0..100.

    One judge call per row (prompt ``context_verdicts``, shared with :func:`context_recall`: the same request,
    answered once and cached) gives a 0/1 verdict for each context, matched to it by its number.
    Value: mean verdict x 100. Details: each context's verdict and ``average_precision_at_k`` (x 100),
    which rewards useful contexts ranked first (:func:`compute_context_precision`). Uses the ground
    truth as reference, or the answer when there is none (said in the details).

    Empty policy: 0 with no contexts.

    Examples
    --------
    >>> from evalkit.base.config import JudgeConfig
    >>> from evalkit.judge.client import OpenAIJudge
    >>> from evalkit.testing import ScriptedJudgeServer  # a real HTTP judge on 127.0.0.1 answering from fixtures
    >>> with ScriptedJudgeServer() as srv:
    ...     judge = OpenAIJudge(JudgeConfig(base_url=srv.url, model="scripted", cache_path=None))
    ...     s = context_precision("What is the base premium?", ["The base premium is $604 per year."], "$604 per year.", judge=judge)
    >>> s.value, s.details["reference"]
    (100.0, 'ground_truth')
    """
    _need(judge)
    ctxs = [c for c in (contexts or []) if c and c.strip()]
    if not ctxs:
        return Score(0.0, ContextPrecisionDetails((), reason="no contexts"))
    reference = ground_truth if ground_truth else (answer or "")
    d = _ask_contexts(judge, question, ctxs, reference, "context_precision")
    rows = _ranked_verdicts(d["verdicts"], len(ctxs))
    mean, ap = compute_context_precision([r["verdict"] for r in rows])
    why = ASKED_PER_PASSAGE if d.get("asked_per_passage") else None
    return Score(mean, ContextPrecisionDetails(tuple(freeze(r) for r in rows), ap,
                                               "ground_truth" if ground_truth else "answer", reason=why))


def context_recall(question: str | None, contexts: Sequence[str] | None, ground_truth: str | None, *,
                   judge=None) -> Score:
    """Share of the ground truth's statements attributable to the contexts, 0..100.

    Asked in the same judge call as :func:`context_precision` (prompt ``context_verdicts``): a run scoring both
    makes one call per row for the two.

    Empty policy: undetermined without a ground truth; 0 with no contexts; 100 when the ground
    truth yields no statements.

    Examples
    --------
    >>> from evalkit.base.config import JudgeConfig
    >>> from evalkit.judge.client import OpenAIJudge
    >>> from evalkit.testing import ScriptedJudgeServer  # a real HTTP judge on 127.0.0.1 answering from fixtures
    >>> with ScriptedJudgeServer() as srv:
    ...     judge = OpenAIJudge(JudgeConfig(base_url=srv.url, model="scripted", cache_path=None))
    ...     s = context_recall("What is the base premium?", ["The base premium is $604 per year."], "$604 per year.", judge=judge)
    >>> s.value, s.details["attributed"], s.details["total"]
    (100.0, 1, 1)
    """
    _need(judge)
    if not (ground_truth or "").strip():
        return Score(None, Undetermined(_NO_GT))
    ctxs = [c for c in (contexts or []) if c and c.strip()]
    if not ctxs:
        return Score(0.0, ContextRecallDetails((), reason="no contexts"))
    cls = _ask_contexts(judge, question, ctxs, ground_truth, "context_recall")["classifications"]
    att = [_binary(c.get("attributed") if isinstance(c, dict) else c, "attributed") for c in cls]
    return Score(compute_context_recall(att), ContextRecallDetails(freeze(tuple(cls)), sum(att), len(att)))


RELEVANCE_METHODS = ("auto", "embedding", "rubric")


def resolve_method(method: str = "auto") -> str:
    """The ``answer_relevance`` formula a run uses: 'embedding' or 'rubric'.

    ``auto`` means 'embedding' when the embed extra is installed, else 'rubric'. The runner resolves it
    once per run and records the result in the details and the run signature, so installing a package
    never changes the formula unnoticed.

    >>> resolve_method("rubric")
    'rubric'
    >>> resolve_method("auto") in ("embedding", "rubric")
    True
    """
    if method not in RELEVANCE_METHODS:
        raise ValueError(f"answer_relevance: method must be one of {list(RELEVANCE_METHODS)}, got {method!r}")
    if method != "auto":
        return method
    from evalkit.base.encoders import available

    return "embedding" if available() else "rubric"


def answer_relevance(question: str | None, answer: str | None, *, judge=None, encoder=None, n_questions: int = 3,
                     method: str = "auto", decision: Any = None) -> Score:
    """How well the answer addresses the question, 0..100.

    ``method="embedding"`` (``embed`` extra): the judge writes ``n_questions`` questions the answer would
    answer; the score is their mean cosine similarity with the real question x 100, clipped at 0,
    and 0 when the judge calls the answer noncommittal. ``method="rubric"``: the judge's direct 0..1
    rubric score x 100. ``method="auto"`` (row calls only; the runner resolves it once per run with
    :func:`resolve_method`): 'embedding' when an ``encoder`` is given, else 'rubric'.
    ``details["method"]`` says which formula produced the value.

    Empty policy: undetermined for an empty answer (reason "empty answer", the row's ``decision``).

    Examples
    --------
    >>> from evalkit.base.config import JudgeConfig
    >>> from evalkit.judge.client import OpenAIJudge
    >>> from evalkit.testing import ScriptedJudgeServer  # a real HTTP judge on 127.0.0.1 answering from fixtures
    >>> with ScriptedJudgeServer() as srv:
    ...     judge = OpenAIJudge(JudgeConfig(base_url=srv.url, model="scripted", cache_path=None))
    ...     s = answer_relevance("What is the base premium?", "The premium is $604.", judge=judge)
    >>> s.value, s.details["method"]
    (50.0, 'rubric')
    """
    _need(judge)
    if method not in RELEVANCE_METHODS:
        raise ValueError(f"answer_relevance: method must be one of {list(RELEVANCE_METHODS)}, got {method!r}")
    if method == "auto":
        method = "embedding" if encoder is not None else "rubric"
    if (guarded := skipped_or_declined(decision_for(answer, decision), "answer_relevance")) is not None:
        return guarded
    P = load_prompts()
    if method == "rubric":
        d = judge.complete(P["answer_relevance_rubric"], {"question": question or "", "answer": answer},
                           metric="answer_relevance").data
        s = float(d["score"])
        if not 0 <= s <= 1:
            raise JudgeError(f"judge rubric score {s} outside 0..1")
        return Score(100.0 * s, AnswerRelevanceDetails("rubric", freeze(d.get("reason", ""))))
    if encoder is None:
        from evalkit.base.encoders import get_encoder

        encoder = get_encoder()
    d = judge.complete(P["answer_questions"], {"answer": answer, "n": n_questions}, metric="answer_relevance").data
    qs = [q for q in d["questions"] if isinstance(q, str) and q.strip()][:n_questions]
    nc = _binary(d["noncommittal"], "noncommittal")
    if not qs:
        raise JudgeError("judge generated no questions")
    vecs = encoder.encode([question or ""] + qs)
    return Score(compute_answer_relevance(vecs[0], vecs[1:], nc),
                 AnswerRelevanceDetails("embedding", questions=tuple(qs), noncommittal=nc,
                                        cosines=tuple(round(float(x), 6) for x in vecs[1:] @ vecs[0])))


def ragas_score(faithfulness: float | None, context_precision: float | None, context_recall: float | None,
                answer_relevance: float | None, *, weights: Mapping[str, float] | None = None) -> Score:
    """Composite: weights faithfulness 0.30, context precision 0.20, context recall 0.20, answer relevance
    0.30; missing components are excluded and the remaining weights renormalised (0..100).

    Empty policy: undetermined only when every component is missing.

    Examples
    --------
    >>> ragas_score(80.0, 100.0, 50.0, 100.0).value  # 0.3 * 80 + 0.2 * 100 + 0.2 * 50 + 0.3 * 100
    84.0
    """
    comps = {"faithfulness": faithfulness, "context_precision": context_precision, "context_recall": context_recall,
             "answer_relevance": answer_relevance}
    v = compute_ragas_score(comps, weights or RAGAS_WEIGHTS)
    used = sorted(k for k, x in comps.items() if x is not None and not (isinstance(x, float) and math.isnan(x)))
    if v is None:
        return Score(None, RagasScoreDetails((), "every component is missing"))
    return Score(v, RagasScoreDetails(tuple(used)))


def factual_accuracy(question: str | None, answer: str | None, ground_truth: str | None, *, judge=None,
                     decision: Any = None) -> Score:
    """G-Eval factual grade, 0..100: correctness 0.5, completeness 0.3, consistency 0.2 (each 0..10 from
    the judge, x 10); ``details["grade"]`` is A >= 80, B >= 60, C >= 40, D >= 20, else E.

    Empty policy: undetermined for an empty answer (reason "empty answer", the row's ``decision``) and
    without a ground truth.

    Examples
    --------
    >>> from evalkit.base.config import JudgeConfig
    >>> from evalkit.judge.client import OpenAIJudge
    >>> from evalkit.testing import ScriptedJudgeServer  # a real HTTP judge on 127.0.0.1 answering from fixtures
    >>> with ScriptedJudgeServer() as srv:
    ...     judge = OpenAIJudge(JudgeConfig(base_url=srv.url, model="scripted", cache_path=None))
    ...     s = factual_accuracy("What is the base premium?", "The premium is $604.", "$604 per year.", judge=judge)
    >>> s.value, s.details["grade"]
    (85.0, 'A')
    """
    _need(judge)
    if (guarded := skipped_or_declined(decision_for(answer, decision), "factual_accuracy")) is not None:
        return guarded
    if not (ground_truth or "").strip():
        return Score(None, Undetermined(_NO_GT))
    d = judge.complete(load_prompts()["geval_factual"], {"question": question or "", "reference": ground_truth,
                                                         "answer": answer}, metric="factual_accuracy").data
    parts = {}
    for k in GEVAL_WEIGHTS:
        v = d[k]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 10:
            raise JudgeError(f"judge gave {k} = {v!r}; expected a number in 0..10")
        parts[k] = float(v)
    s, g = compute_factual_accuracy(parts)
    return Score(s, FactualAccuracyDetails(**parts, grade=g, reasoning=freeze(d.get("reasoning", ""))))


def answer_class(question: str | None, answer: str | None, ground_truth: str | None, *, judge=None,
                 phrases: Sequence[str] | None = None, decision: Any = None) -> Score:
    """CORRECT / WRONG / DON'T KNOW. DON'T KNOW when the row abstains (its ``abstained`` decision, as
    :func:`evalkit.metrics.reference.dont_know` reads it; no judge call); otherwise the judge's verdict
    against the ground truth.

    Empty policy: undetermined for an empty answer (reason "empty answer") and without a ground truth.

    Examples
    --------
    >>> from evalkit.base.config import JudgeConfig
    >>> from evalkit.judge.client import OpenAIJudge
    >>> from evalkit.testing import ScriptedJudgeServer  # a real HTTP judge on 127.0.0.1 answering from fixtures
    >>> with ScriptedJudgeServer() as srv:
    ...     judge = OpenAIJudge(JudgeConfig(base_url=srv.url, model="scripted", cache_path=None))
    ...     s = answer_class("What is the base premium?", "The premium is $604.", "$604 per year.", judge=judge)
    >>> s.value
    'CORRECT'
    """
    decision = decision_for(answer, decision, phrases=phrases)
    if (guarded := skipped(decision, "answer_class")) is not None:
        return guarded
    if decision.abstained:
        return Score("DON'T KNOW", AnswerClassDetails("dont_know", matched=tuple(decision.matched)))
    _need(judge)
    if not (ground_truth or "").strip():
        return Score(None, Undetermined(_NO_GT))
    d = judge.complete(load_prompts()["answer_correct"], {"question": question or "", "reference": ground_truth,
                                                          "answer": answer}, metric="answer_class").data
    v = str(d["verdict"]).strip().upper()
    if v not in ("CORRECT", "WRONG"):
        raise JudgeError(f"judge verdict {d['verdict']!r} is neither CORRECT nor WRONG")
    return Score(v, AnswerClassDetails("judge", reason=freeze(d.get("reason", ""))))


# ---------------------------------------------------------------------------
# Batching: rows in parallel threads, bounded by the judge's concurrency
# ---------------------------------------------------------------------------


def combine_repeats(results: Sequence[Score | Exception]) -> Score | Exception:
    """One row's Score from its repeats (in repeat order): ``details["repeats"]`` lists every repeat's value
    (None for an undetermined or failed one); the value is the mean of the determined numeric values, or the
    most frequent label for a labelled metric (ties: the label seen first). The details are the first
    determined repeat's. Only when every repeat failed is the row an error (the first repeat's).

    >>> s = combine_repeats([Score(80.0, {"total": 5}), Score(None, {"reason": "x"}), Score(100.0, {"total": 5})])
    >>> s.value, s.details["repeats"], s.details["total"]
    (90.0, (80.0, None, 100.0), 5)
    >>> combine_repeats([Score("WRONG", {}), Score("CORRECT", {}), Score("CORRECT", {})]).value
    'CORRECT'
    """
    scores = [r for r in results if isinstance(r, Score)]
    if not scores:
        return results[0]
    values = [r.value if isinstance(r, Score) else None for r in results]
    determined = [v for v in values if v is not None]
    errors = [f"repeat {i}: {type(r).__name__}: {r}" for i, r in enumerate(results) if isinstance(r, Exception)]
    first = next((r for r in scores if r.value is not None), scores[0])
    details = Repeated(first.details, tuple(values), tuple(errors) or None)
    if not determined:
        return Score(None, details)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in determined):
        return Score(float(np.mean(determined)), details)
    counts = {v: determined.count(v) for v in dict.fromkeys(determined)}
    return Score(max(counts, key=counts.get), details)


def repeats_of(judge: Any) -> int:
    """How many times the judge asks each question (``judge.repeats``; 1 for a judge without the setting)."""
    return int(getattr(getattr(judge, "config", None), "repeats", 1) or 1)


def threaded(fn: Callable[..., Score], uses_encoder: bool = False):
    """A batch function running ``fn`` on every row in a thread pool of the judge's concurrency.

    With ``judge.repeats: k`` > 1 each row is scored k times, repeat r through ``judge.for_repeat(r)``
    (its own seed and cache entries), and the repeats are combined by :func:`combine_repeats`.
    A row that fails yields its exception (the runner records it in that row's ``error``)."""

    def batch(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None = None,
              resources: Any = None) -> list[Score | Exception]:
        params = dict(params or {})
        judge = getattr(resources, "judge", None) if resources is not None else params.pop("judge", None)
        params.pop("judge", None)
        if judge is None:
            raise JudgeNotConfigured(NOT_CONFIGURED)
        kw = {"judge": judge, **params}
        if uses_encoder:  # the method switch decides, never whether a package happens to be installed
            kw["method"] = resolve_method(kw.get("method", "auto"))
            kw["encoder"] = getattr(resources, "encoder", None) if kw["method"] == "embedding" else None
        n, k = len(next(iter(inputs.values()))), repeats_of(judge)

        def one(task: tuple[int, int]) -> Score | Exception:
            i, r = task
            row_kw = {**kw, "judge": judge.for_repeat(r) if k > 1 else judge}
            if getattr(kw.get("encoder"), "bound", None) is not None:
                # a text's embedding depends, in its last bits, on the batch it was padded in: rows run in the
                # order the judge replies, so a memo shared between them would make a value follow that order
                # (1e-9 apart from one run to the next); each row encodes its own texts in one batch
                row_kw["encoder"] = kw["encoder"].bound({})
            try:
                return fn(**{c: v[i] for c, v in inputs.items()}, **row_kw)
            except Exception as e:  # recorded per row
                return e

        workers = max(1, int(getattr(getattr(judge, "config", None), "concurrency", 4)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            out = list(pool.map(one, [(i, r) for i in range(n) for r in range(k)]))
        return out if k == 1 else [combine_repeats(out[i * k:(i + 1) * k]) for i in range(n)]

    return batch


# the batch functions the declarations below name
faithfulness_batch = threaded(faithfulness)
context_precision_batch = threaded(context_precision)
context_recall_batch = threaded(context_recall)
answer_relevance_batch = threaded(answer_relevance, uses_encoder=True)
factual_accuracy_batch = threaded(factual_accuracy)
answer_class_batch = threaded(answer_class)


# ---------------------------------------------------------------------------------------------------------------
# The declarations: this module's metrics as the registry lists them (evalkit.metrics collects METRICS)
# ---------------------------------------------------------------------------------------------------------------
# the publications these metrics follow (their methods), cited by the paper's methods paragraph
RAGAS = """@inproceedings{es2024ragas,
  title = {{RAGAS}: Automated Evaluation of Retrieval Augmented Generation},
  author = {Es, Shahul and James, Jithin and Espinosa Anke, Luis and Schockaert, Steven},
  booktitle = {Proceedings of the 18th Conference of the European Chapter of the Association for Computational Linguistics: System Demonstrations},
  pages = {150--158},
  year = {2024},
  address = {St. Julians, Malta},
  publisher = {Association for Computational Linguistics},
  doi = {10.18653/v1/2024.eacl-demo.16}
}"""
REFERENCES = {
    "es2024ragas": RAGAS,
    "liu2023geval": """@inproceedings{liu2023geval,
  title = {{G-Eval}: {NLG} Evaluation using {GPT}-4 with Better Human Alignment},
  author = {Liu, Yang and Iter, Dan and Xu, Yichong and Wang, Shuohang and Xu, Ruochen and Zhu, Chenguang},
  booktitle = {Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing},
  pages = {2511--2522},
  year = {2023},
  address = {Singapore},
  publisher = {Association for Computational Linguistics},
  doi = {10.18653/v1/2023.emnlp-main.153}
}""",
}
METRICS = (
    Metric("faithfulness", faithfulness, needs=("question", "answer", "contexts"), better="higher",
           range=(0.0, 100.0), batch=faithfulness_batch, resources=("judge",), details=FaithfulnessDetails,
           family="judged",
           formula="judge: claims of the answer supported by the contexts / claims x 100",
           empty_policy="undetermined for an empty answer; 100 with no claims; 0 with claims but no contexts",
           cites=("es2024ragas",)),
    Metric("context_precision", context_precision, needs=("question", "contexts"), optional=("ground_truth", "answer"),
           better="higher", range=(0.0, 100.0), batch=context_precision_batch, resources=("judge",),
           details=ContextPrecisionDetails,
           family="judged", formula="judge: useful contexts / contexts x 100 (average precision@k in the details)",
           empty_policy="0 with no contexts",
           cites=("es2024ragas",)),
    Metric("context_recall", context_recall, needs=("question", "contexts", "ground_truth"), better="higher",
           range=(0.0, 100.0), batch=context_recall_batch, resources=("judge",), details=ContextRecallDetails,
           family="judged",
           formula="judge: ground-truth statements attributable to the contexts / statements x 100",
           empty_policy="undetermined without ground truth; 0 with no contexts; 100 with no statements",
           cites=("es2024ragas",)),
    Metric("answer_relevance", answer_relevance, needs=("question", "answer"), better="higher",
           range=(0.0, 100.0), batch=answer_relevance_batch, resources=("judge",),
           params=("n_questions", "method"), details=AnswerRelevanceDetails,
           family="judged",
           formula="judge: mean cosine of n_questions (3) questions generated from the answer with the question "
                   "x 100 (method: embedding), or a rubric x 100 (method: rubric); auto is resolved once per "
                   "run, in the signature",
           empty_policy="undetermined for an empty answer",
           cites=("es2024ragas",)),
    Metric("ragas_score", ragas_score, needs=("faithfulness", "context_precision", "context_recall", "answer_relevance"),
           better="higher", range=(0.0, 100.0), params=("weights",), details=RagasScoreDetails,
           family="judged", derived=True,
           formula="0.3 faithfulness + 0.2 context precision + 0.2 context recall + 0.3 answer relevance, "
                   "missing parts excluded and weights renormalised",
           empty_policy="undetermined only when every component is missing",
           cites=("es2024ragas",)),
    Metric("factual_accuracy", factual_accuracy, needs=("question", "answer", "ground_truth"), better="higher",
           range=(0.0, 100.0), batch=factual_accuracy_batch, resources=("judge",), details=FactualAccuracyDetails,
           family="judged",
           extra_columns=("grade",),
           formula="G-Eval: (0.5 correctness + 0.3 completeness + 0.2 consistency) x 10; letter grade "
                   "(A >= 80, B >= 60, C >= 40, D >= 20, else E) in factual_accuracy_grade",
           empty_policy="undetermined for an empty answer or without ground truth",
           cites=("liu2023geval",)),
    Metric("answer_class", answer_class, needs=("question", "answer", "ground_truth"), better="none", range=None,
           kind="label", batch=answer_class_batch, resources=("judge",), params=("phrases",), details=AnswerClassDetails,
           family="judged",
           formula="DON'T KNOW (uncertainty rule: the row's abstained decision), else the judge's CORRECT / WRONG",
           empty_policy="undetermined for an empty answer or without ground truth",
           evidence_keys=("matched",)),
)
