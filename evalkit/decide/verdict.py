"""PASS / WARN / FAIL / ABSTAIN verdict from the triad, with the rule that fired; a step after scoring.

Rules, in order (first match wins). The first three read the row decision the runner stored
(:func:`evalkit.text.decide_answer`: columns ``answer_empty``, ``answer_language``, ``abstained``; made from
the answer only for results saved without them), never the answer text itself:

a. FAIL  "empty answer" if the answer is empty (None, "" or whitespace): a failure of the system, neither an
   abstention nor an irrelevant answer; every metric that reads the answer is undetermined on it.
b. UNDETERMINED "not English (detected: de)" if the answer is in another language: the English-only
   metrics are undetermined on it, so the triad cannot judge it.
0. ABSTAIN if the answer declines to answer ("I don't know; the documents do not say.",
   "I couldn't find that in the documentation."): an abstention is neither a pass nor a hallucination,
   and summaries count it apart.
1. FAIL  if hallucination > ``hallucination_fail`` (default 0.5)
2. FAIL  for any other metric a calibrated profile names (e.g. ``grounding_risk >= 0.42``)
3. FAIL  if relevance < ``relevance_fail`` (default 0.1)
4. WARN  if completeness < ``completeness_warn`` (default 0.6)
5. PASS  otherwise.

Which metrics the verdict reads, the side each flags, its outcome and its place in this order are
declared in the registry (:attr:`evalkit.metrics.base.Metric.verdict_role`); the cut values come
from :class:`evalkit.base.config.VerdictThresholds`. Each rule is one :class:`evalkit.base.thresholds.Threshold`, the
same type calibration uses, so a profile written by ``evalkit calibrate`` flags exactly the rows
calibration counted as positive (``>=`` on the flagged side, rows on the threshold included). A rule
whose input is missing (the metric was undetermined or failed on the row) is never compared with its
threshold: the verdict is UNDETERMINED and the rule column names the missing input. The seed names
0.6 as hallucination's FAIL threshold in its metric section but uses 0.5 in its verdict logic;
evalkit defaults to 0.5 (``thresholds.hallucination_fail: 0.6`` follows the other).

Examples
--------
>>> verdict(0.7, 0.9, 1.0)
('FAIL', 'hallucination 0.700 > 0.5')
>>> verdict(0.0, 0.5, 0.5)
('WARN', 'completeness 0.500 < 0.6')
>>> verdict(None, 0.5, 0.9)
('UNDETERMINED', 'hallucination missing')
>>> verdict(0.0, 0.0, 0.0, abstained=True)
('ABSTAIN', 'the answer declines to answer')
>>> verdict(None, None, None, empty=True), verdict(None, None, None, language="de")
(('FAIL', 'empty answer'), ('UNDETERMINED', 'not English (detected: de)'))
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import pandas as pd

from evalkit.base.config import VERDICT_PROFILES, VerdictThresholds
from evalkit.metrics import verdict_roles
from evalkit.base.thresholds import Threshold
from evalkit.base.data import is_missing
from evalkit.text import DECISION_COLUMNS, AnswerDecision, decide_answer

if TYPE_CHECKING:
    from collections import Counter

VERDICTS = ("PASS", "WARN", "FAIL", "ABSTAIN", "UNDETERMINED")


# the (metric, role) pairs of a named profile, in the verdict's order: the registry's declarations
roles_for = verdict_roles


def __getattr__(name: str):
    """``ROLES``: the seed profile's (metric, role) pairs in the order the verdict checks them; ``TRIAD``: their
    metrics, hallucination, relevance, completeness (the evalkit profile's: ``roles_for("evalkit")``). Read from
    the declarations when first asked for, so importing the verdict collects no metric module."""
    if name == "ROLES":
        return roles_for("seed")
    if name == "TRIAD":
        return tuple(metric for metric, _ in roles_for("seed"))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def profile_metrics(t: VerdictThresholds | None = None) -> tuple[str, ...]:
    """The metrics the named profile of ``t`` reads (the default profile's when ``t`` is None)."""
    return tuple(name for name, _ in roles_for((t or VerdictThresholds()).named))


def missing_for_verdict(scored: Iterable[str], t: VerdictThresholds | None = None) -> list[str]:
    """The metrics the named profile of ``t`` reads that ``scored`` (columns or metric names) lacks: the one
    check of whether a verdict can be given (:func:`apply_verdicts` refuses, ``evaluate`` leaves the verdict
    out and says why).

    >>> missing_for_verdict(["relevance", "completeness"], VerdictThresholds(named="seed"))
    ['hallucination']
    """
    have = set(scored)
    return [m for m in profile_metrics(t) if m not in have]


# a profile rule on a metric without a role is a FAIL rule checked after what the answer asserts
# (hallucination, order 0) and before whether it answers the question (relevance, completeness)
PROFILE_ORDER = 1
log = logging.getLogger("evalkit")


class ProfileError(ValueError):
    """A threshold profile cannot be applied (unreadable, a metric without a direction, bad entry)."""


def profile_held_by(columns: Sequence[str], thresholds: VerdictThresholds | None = None) -> VerdictThresholds:
    """``thresholds`` (default: the default profile's) under the named profile whose metrics the results hold: the
    one holding the largest share of its metrics (all of them when one can decide; on a tie ``thresholds``' own,
    then the default): the seed's for results scored with its triad before the default changed; the default when
    they hold none (and :func:`apply_verdicts` says which columns it needs).

    >>> profile_held_by(["hallucination", "relevance", "completeness"]).named
    'seed'
    >>> profile_held_by(["unsupported_facts", "reference_conflict", "answers_question", "question_coverage"]).named
    'evalkit'
    >>> profile_held_by(["hallucination", "relevance"]).named, profile_held_by(["answer"]).named
    ('seed', 'evalkit')
    """
    import dataclasses

    t = thresholds or VerdictThresholds()
    cols = set(columns)
    names = (t.named, *[n for n in VERDICT_PROFILES if n != t.named])
    share = {name: len({m for m, _ in roles_for(name)} & cols) / len(roles_for(name)) for name in names}
    best = max(names, key=lambda name: share[name])  # all of them first; on a tie, t's own, then the default
    return dataclasses.replace(t, named=best) if share[best] > 0 else t


def default_rules(t: VerdictThresholds | None = None) -> tuple[Threshold, ...]:
    """The seed's verdict rules as thresholds, one per registered verdict role, in the verdict's order
    (strict comparisons, as the seed writes them)."""
    t = t or VerdictThresholds()
    return tuple(Threshold(name, getattr(t, role.threshold), role.flag, role.inclusive, role.outcome)
                 for name, role in roles_for(t.named))


def rules_for(t: VerdictThresholds | None = None) -> tuple[Threshold, ...]:
    """The ordered rules the verdict applies: defaults, replaced or extended by the profile's rules.

    A profile rule for a triad metric replaces that default (its outcome kept); a rule for any other
    metric is a FAIL rule checked right after hallucination. ``thresholds.support_fail`` (opt-in) adds
    ``FAIL if support < t`` there too, unless the profile has a rule on support.

    >>> [str(r) for r in rules_for(VerdictThresholds(named="seed", support_fail=0.3))][:2]
    ['hallucination > 0.5', 'support < 0.3']
    """
    t = t or VerdictThresholds()
    by_metric = {r.metric: r for r in t.profile}
    staged = []
    roles = roles_for(t.named)
    for (_, role), r in zip(roles, default_rules(t)):
        p = by_metric.get(r.metric)
        staged.append((role.order, Threshold(r.metric, p.value, p.flag, p.inclusive, r.outcome) if p else r))
    staged += [(PROFILE_ORDER, r) for r in t.profile if r.metric not in {name for name, _ in roles}]
    if t.support_fail is not None and "support" not in by_metric:  # opt-in; a calibrated profile's rule wins
        staged.append((PROFILE_ORDER, Threshold("support", t.support_fail, "below", False, "FAIL")))
    return tuple(r for _, r in sorted(staged, key=lambda pair: pair[0]))  # stable: a profile's own order kept



def metric_rule(metric: str, t: VerdictThresholds | None = None) -> tuple[Threshold, str]:
    """The verdict rule on ``metric`` and the named profile it belongs to: the profile in force's (a calibrated
    rule included), else the other named profile's with the same cut values, for a metric only that one reads
    (relevance and completeness are the seed's; the notebooks that teach them show its rule).

    >>> rule, named = metric_rule("relevance")
    >>> str(rule), named
    ('relevance < 0.1', 'seed')
    >>> str(metric_rule("unsupported_facts")[0])
    'unsupported_facts > 0'
    """
    import dataclasses

    t = t or VerdictThresholds()
    for named in (t.named, *[n for n in VERDICT_PROFILES if n != t.named]):
        rules = {r.metric: r for r in rules_for(dataclasses.replace(t, named=named))}
        if metric in rules:
            return rules[metric], named
    raise KeyError(f"no verdict rule reads {metric!r} (profiles: {', '.join(VERDICT_PROFILES)})")


def verdict_for(values: Mapping[str, float | None], rules: Sequence[Threshold], *,
                abstained: bool = False, empty: bool = False, language: str | None = None) -> tuple[str, str]:
    """One row's ``(verdict, rule that fired)`` from its row decision (``empty``, ``language``, ``abstained``)
    and its metric values and ordered rules."""
    decided = AnswerDecision(empty, abstained, (), language).skip_reason(english_only=True)
    if decided is not None:
        return ("FAIL" if empty else "UNDETERMINED"), decided
    if abstained:
        return "ABSTAIN", "the answer declines to answer"
    for rule in rules:
        v = values.get(rule.metric)
        if is_missing(v):
            return "UNDETERMINED", f"{rule.metric} missing"
        if rule.flags(float(v)):
            return rule.outcome, rule.describe(float(v))
    return "PASS", "all checks passed"


def verdict(hallucination: float | None, relevance: float | None, completeness: float | None,
            thresholds: VerdictThresholds | None = None, *, abstained: bool = False, empty: bool = False,
            language: str | None = None) -> tuple[str, str]:
    """The seed profile's hierarchical verdict for one row from the row decision and the triad: ``(verdict, rule
    that fired)``; ``thresholds`` default to the seed profile's (this function reads the seed's three metrics).

    >>> verdict(0.0, 0.05, 0.9)
    ('FAIL', 'relevance 0.050 < 0.1')
    """
    values = {"hallucination": hallucination, "relevance": relevance, "completeness": completeness}
    return verdict_for(values, rules_for(thresholds or VerdictThresholds(named="seed")), abstained=abstained,
                       empty=empty, language=language)


def row_decisions(results: pd.DataFrame, lexicons: Mapping[str, Any] | None = None) -> list[AnswerDecision | None]:
    """Each row's stored decision (:data:`evalkit.text.DECISION_COLUMNS`); for results saved without those
    columns, the decision made from the ``answer`` column by the same function (None without answers)."""
    if all(c in results.columns for c in ("answer_empty", "abstained")):
        cols = {c: results[c].tolist() if c in results.columns else [None] * len(results) for c in DECISION_COLUMNS}
        return [AnswerDecision.from_columns({c: cols[c][i] for c in DECISION_COLUMNS}) for i in range(len(results))]
    if "answer" not in results.columns:
        return [None] * len(results)
    kw = {k: (lexicons or {}).get(src) for k, src in (("phrases", "dont_know_phrases"),
                                                     ("short_tokens", "dont_know_short_tokens"),
                                                     ("short_chars", "short_answer_chars"))}
    kw = {k: v for k, v in kw.items() if v is not None}
    return [decide_answer(None if is_missing(a) else a, **kw) for a in results["answer"]]


def decision_counts(decisions: Sequence[AnswerDecision | None]) -> "Counter[str]":
    """The rows the row decision took from the triad: ``"empty"`` answers, and the non-English answers by
    language code. The counts of several parts add up (``a + b``), so a chunked run counts its rows once.

    >>> dict(decision_counts([AnswerDecision(True), AnswerDecision(False, language="de"), AnswerDecision(False)]))
    {'empty': 1, 'de': 1}
    """
    from collections import Counter

    return Counter("empty" if d.empty else d.language for d in decisions
                   if d is not None and (d.empty or not d.english))


def decision_note(decisions: Sequence[AnswerDecision | None] = (), *,
                  counts: Mapping[str, int] | None = None) -> str | None:
    """One line counting the rows the row decision took from the triad: empty and non-English answers;
    from ``decisions``, or from ``counts`` (:func:`decision_counts`, summed over the parts of a chunked run).

    >>> decision_note([AnswerDecision(True), AnswerDecision(False, language="de"), AnswerDecision(False)])
    '1 empty answer (verdict FAIL, rule "empty answer"); 1 answer not in English (de 1): the English-only metrics and the verdict are UNDETERMINED on it'
    >>> decision_note(counts={"empty": 2})
    '2 empty answers (verdict FAIL, rule "empty answer")'
    """
    counts = decision_counts(decisions) if counts is None else counts
    empty = counts.get("empty", 0)
    langs = {k: v for k, v in counts.items() if k != "empty" and v}
    parts = []
    if empty:
        parts.append(f"{empty} empty answer{'s' if empty > 1 else ''} (verdict FAIL, rule \"empty answer\")")
    if langs:
        n = sum(langs.values())
        parts.append(f"{n} answer{'s' if n > 1 else ''} not in English ("
                     + ", ".join(f"{k} {v}" for k, v in sorted(langs.items())) + "): the English-only metrics and "
                     f"the verdict are UNDETERMINED on {'them' if n > 1 else 'it'}")
    return "; ".join(parts) or None


def apply_verdicts(results: pd.DataFrame, thresholds: VerdictThresholds | None = None, *,
                   lexicons: Mapping[str, Any] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Add ``verdict`` and ``verdict_rule`` columns to scored results; returns ``(results, notes)``.

    The triad (hallucination, relevance, completeness) must be present; a profile rule on a metric
    the results lack is not applied and a note says so. The row decision (empty, language, abstained) is
    read from its columns (:func:`row_decisions`); one note counts the empty and non-English answers.
    Scores are read as they are stored, so the verdict can be re-applied to saved results without
    re-scoring (``evalkit verdict``).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"hallucination": [0.5, 0.6], "relevance": [0.9, 0.9], "completeness": [1.0, 1.0]})
    >>> apply_verdicts(df, VerdictThresholds(named="seed"))[0]["verdict"].tolist()
    ['PASS', 'FAIL']
    >>> apply_verdicts(df)  # the default (evalkit) profile reads its own checks
    Traceback (most recent call last):
    ...
    evalkit.decide.verdict.ProfileError: the verdict needs the columns unsupported_facts, reference_conflict, answers_question, question_coverage: score them first (evalkit score --metrics unsupported_facts,reference_conflict,answers_question,question_coverage; the evalkit profile reads them)
    """
    missing = missing_for_verdict(results.columns, thresholds)
    if missing:
        raise ProfileError(f"the verdict needs the columns {', '.join(missing)}: score them first (evalkit score "
                           f"--metrics {','.join(profile_metrics(thresholds))}; the {(thresholds or VerdictThresholds()).named} "
                           "profile reads them)")
    notes = []
    rules = []
    for r in rules_for(thresholds):
        if r.metric in results.columns:
            rules.append(r)
        else:
            notes.append(f"the profile names {r.metric!r}, which these results do not have; its rule "
                         f"({r}) was not applied")
    cols = {r.metric: results[r.metric].tolist() for r in rules}
    decisions = row_decisions(results, lexicons)
    out = [verdict_for({m: v[i] for m, v in cols.items()}, rules, **_decision_kwargs(d))
           for i, d in enumerate(decisions)]
    note = decision_note(decisions)
    if note:
        notes.append(note)
    results = results.copy()
    results["verdict"] = pd.Series([v for v, _ in out], dtype=object, index=results.index)
    results["verdict_rule"] = pd.Series([r for _, r in out], dtype=object, index=results.index)
    return results, notes


def _decision_kwargs(d: AnswerDecision | None) -> dict[str, Any]:
    return {} if d is None else {"abstained": d.abstained, "empty": d.empty, "language": d.language}




def profile_disagreement(results: pd.DataFrame, thresholds: VerdictThresholds | None = None, *,
                         lexicons: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """How the other named profile would decide the same rows: ``{"profile", "other", "compared"}`` and, when the
    results hold the other profile's metrics, ``rows`` and ``disagree`` (rows whose verdict differs).

    >>> df = pd.DataFrame({"hallucination": [0.0, 0.0], "relevance": [0.0, 0.9], "completeness": [1.0, 1.0],
    ...                    "unsupported_facts": [0.0, 0.0], "reference_conflict": [0.0, 0.0],
    ...                    "answers_question": [1.0, 1.0], "question_coverage": [1.0, 1.0], "verdict": ["FAIL", "PASS"]})
    >>> profile_disagreement(df, VerdictThresholds(named="seed"))  # seed: relevance FAILs row 1; evalkit passes both
    {'profile': 'seed', 'other': 'evalkit', 'other_metrics': ['unsupported_facts', 'reference_conflict', 'answers_question', 'question_coverage'], 'compared': True, 'rows': 2, 'disagree': 1}
    """
    import dataclasses

    thresholds = thresholds or VerdictThresholds()
    other = dataclasses.replace(thresholds, named="evalkit" if thresholds.named == "seed" else "seed", profile=())
    out: dict[str, Any] = {"profile": thresholds.named, "other": other.named,
                           "other_metrics": list(profile_metrics(other)),
                           "compared": "verdict" in results.columns
                           and all(m in results.columns for m in profile_metrics(other))}
    if out["compared"]:
        theirs, _ = apply_verdicts(results.drop(columns=["verdict", "verdict_rule"], errors="ignore"), other,
                                   lexicons=lexicons)
        out["rows"] = int(len(results))
        out["disagree"] = int((theirs["verdict"].to_numpy() != results["verdict"].to_numpy()).sum())
    return out


def profile_sentence(agreement: Mapping[str, Any]) -> str:
    """The report's sentence on the profile that decided, from :func:`profile_disagreement`'s numbers.

    >>> profile_sentence({"profile": "seed", "other": "evalkit", "compared": True, "rows": 40, "disagree": 7})
    'The **seed** profile decided these verdicts. The evalkit profile, applied to the same rows, decides 7 of the 40 answers differently.'
    >>> profile_sentence({"profile": "seed", "other": "evalkit", "compared": False, "other_metrics": ["a", "b"]})
    'The **seed** profile decided these verdicts. The evalkit profile was not applied: its metrics (`a`, `b`) were not scored.'
    """
    said = f"The **{agreement['profile']}** profile decided these verdicts."
    if not agreement.get("compared"):
        names = ", ".join(f"`{m}`" for m in agreement.get("other_metrics") or ())
        return f"{said} The {agreement['other']} profile was not applied: its metrics ({names}) were not scored."
    return (f"{said} The {agreement['other']} profile, applied to the same rows, decides {agreement['disagree']} of "
            f"the {agreement['rows']} answers differently.")
