"""Declarative per-question fact checks, read from a YAML rules file.

Rules file
----------
.. code-block:: yaml

    version: 1
    rules:
      - name: t118-premium                    # unique, used in error messages
        applies_to: {ids: [q03]}              # and/or {question_types: [numeric]}
        must_contain: ["Territory 118"]       # each string, case-insensitive, whole words
        numbers: ["$604", "0.305%"]           # each value, by the shared number normaliser
        any_of: [["increase", "rose", "up"]]  # each group: at least one member present
        forbid: ["cannot calculate"]          # each phrase must be absent
        list_items:                           # items in a markdown list, or a regex count
          items: ["Rule C-1", "Rule C-2"]     #   each must be a list item (or appear in one)
          pattern: 'Rule C-\\d+'              #   distinct matches anywhere ...
          min_count: 3                        #   ... at least this many
        is_correct: all                       # all | {min_fact_score: 0.75} | {require: [numbers, forbid]}

``fact_score`` is the mean over every individual check (one per string, number,
group, phrase, list item and pattern), so a rule with five checks moves in steps of 0.2.
``is_correct`` is derived from the checks by the rule's ``is_correct`` policy
(default ``all``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import yaml

from evalkit.base.config import load_yaml

from evalkit.text import extract_numbers, normalize_ws, phrase_pattern
from evalkit.metrics.base import Details, Metric, Score, Undetermined
from evalkit.metrics.guard import decision_for, skipped
from evalkit.metrics.stats import CheckPasses

CHECK_TYPES = ("must_contain", "numbers", "any_of", "forbid", "list_items")
_LIST_LINE = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(.*)$", re.M)


class FactCheckError(ValueError):
    """A malformed rules file; the message names the rule (and the file)."""


@dataclass(frozen=True)
class Rule:
    name: str
    ids: frozenset[str] = frozenset()
    question_types: frozenset[str] = frozenset()
    must_contain: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()
    any_of: tuple[tuple[str, ...], ...] = ()
    forbid: tuple[str, ...] = ()
    list_items: tuple[str, ...] = ()
    list_pattern: str | None = None
    list_min_count: int = 1
    is_correct: Any = "all"

    def applies(self, qid: str | None, qtype: str | None) -> bool:
        return (qid is not None and qid in self.ids) or (qtype is not None and qtype in self.question_types)


@dataclass(frozen=True)
class FactRules:
    """A validated set of fact-check rules."""

    rules: tuple[Rule, ...] = field(default_factory=tuple)
    source: str = "<rules>"

    def for_question(self, qid: str | None, qtype: str | None) -> list[Rule]:
        return [r for r in self.rules if r.applies(qid, qtype)]

    def unmatched(self, ids: Sequence[str | None], question_types: Sequence[str | None] | None = None) -> list[str]:
        """Names of the rules that apply to no row (a rule written for another dataset, or a typo in an id).

        >>> rules = parse_rules({"rules": [{"name": "r1", "applies_to": {"ids": ["q1"]}, "numbers": ["5"]},
        ...                                {"name": "r2", "applies_to": {"ids": ["q9"]}, "numbers": ["5"]}]})
        >>> rules.unmatched(["q1", "q2"])
        ['r2']
        """
        qtypes = list(question_types) if question_types is not None else [None] * len(ids)
        return [r.name for r in self.rules if not any(r.applies(i, q) for i, q in zip(ids, qtypes))]


def _strs(v: Any, where: str, key: str) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in v):
        raise FactCheckError(f"{where}: {key!r} must be a list of strings, got {v!r:.60}")
    return tuple(str(x) for x in v)


def parse_rules(data: Mapping[str, Any], source: str = "<rules>") -> FactRules:
    """Validate a rules mapping (as loaded from YAML) into :class:`FactRules`; errors name the rule."""
    if not isinstance(data, Mapping) or not isinstance(data.get("rules"), list):
        raise FactCheckError(f"{source}: expected a mapping with a 'rules' list")
    rules, names = [], set()
    for i, raw in enumerate(data["rules"], start=1):
        label = raw.get("name") if isinstance(raw, Mapping) else None
        where = f"{source}: rule {label!r} (#{i})" if label else f"{source}: rule #{i}"
        _check_rule_shape(raw, label, names, where)
        names.add(label)
        kw: dict[str, Any] = {"name": label, **_applies_to(raw, where), **_check_lists(raw, where)}
        if "list_items" in raw:
            kw.update(_list_items(raw["list_items"], where))
        if not any(k in raw for k in CHECK_TYPES):
            raise FactCheckError(f"{where}: no checks; give at least one of {list(CHECK_TYPES)}")
        kw["is_correct"] = _is_correct_rule(raw.get("is_correct", "all"), where)
        rules.append(Rule(**kw))
    return FactRules(tuple(rules), source)


def _check_rule_shape(raw: Any, label: Any, names: set[str], where: str) -> None:
    if not isinstance(raw, Mapping):
        raise FactCheckError(f"{where}: expected a mapping, got {type(raw).__name__}")
    if not isinstance(label, str) or not label:
        raise FactCheckError(f"{where}: missing 'name'")
    if label in names:
        raise FactCheckError(f"{where}: duplicate rule name")
    allowed = {"name", "applies_to", "is_correct", *CHECK_TYPES}
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise FactCheckError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(allowed)}")


def _applies_to(raw: Mapping[str, Any], where: str) -> dict[str, frozenset[str]]:
    at = raw.get("applies_to") or {}
    if not isinstance(at, Mapping) or not (at.get("ids") or at.get("question_types")) or set(at) - {"ids", "question_types"}:
        raise FactCheckError(f"{where}: 'applies_to' needs 'ids' and/or 'question_types' lists")
    return {"ids": frozenset(_strs(at.get("ids", []), where, "applies_to.ids")),
            "question_types": frozenset(_strs(at.get("question_types", []), where, "applies_to.question_types"))}


def _check_lists(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    """must_contain, forbid, numbers (each a real number) and any_of groups."""
    kw: dict[str, Any] = {key: _strs(raw[key], where, key) for key in ("must_contain", "forbid") if key in raw}
    if "numbers" in raw:
        nums = _strs(raw["numbers"], where, "numbers")
        for n in nums:
            if not extract_numbers(n, words=False):
                raise FactCheckError(f"{where}: 'numbers' entry {n!r} is not a number")
        kw["numbers"] = nums
    if "any_of" in raw:
        groups = raw["any_of"]
        if not isinstance(groups, list) or not groups:
            raise FactCheckError(f"{where}: 'any_of' must be a list of lists of strings")
        kw["any_of"] = tuple(_strs(g, where, "any_of group") for g in groups)
    return kw


def _list_items(li: Any, where: str) -> dict[str, Any]:
    if not isinstance(li, Mapping) or not (li.get("items") or li.get("pattern")) or set(li) - {"items", "pattern", "min_count"}:
        raise FactCheckError(f"{where}: 'list_items' needs 'items' (list) and/or 'pattern' (regex) [+ 'min_count']")
    kw: dict[str, Any] = {}
    if li.get("items"):
        kw["list_items"] = _strs(li["items"], where, "list_items.items")
    if li.get("pattern"):
        try:
            re.compile(li["pattern"])
        except re.error as e:
            raise FactCheckError(f"{where}: 'list_items.pattern' is not a valid regex: {e}") from None
        mc = li.get("min_count", 1)
        if not isinstance(mc, int) or mc < 1:
            raise FactCheckError(f"{where}: 'list_items.min_count' must be a positive integer")
        kw.update({"list_pattern": li["pattern"], "list_min_count": mc})
    return kw


def _is_correct_rule(ic: Any, where: str) -> Any:
    ok = ic == "all" or (isinstance(ic, Mapping) and (
        (set(ic) == {"min_fact_score"} and isinstance(ic["min_fact_score"], (int, float)) and 0 <= ic["min_fact_score"] <= 1)
        or (set(ic) == {"require"} and isinstance(ic["require"], list) and set(ic["require"]) <= set(CHECK_TYPES))))
    if not ok:
        raise FactCheckError(f"{where}: 'is_correct' must be 'all', {{min_fact_score: 0..1}} or "
                             f"{{require: [check types]}}, got {ic!r}")
    return ic


def load_rules(path: str | Path) -> FactRules:
    """Read and validate a YAML rules file (I/O lives here, not in the metric)."""
    path = Path(path)
    try:
        data = load_yaml(path.read_text(encoding="utf-8"), str(path))
    except FileNotFoundError:
        raise FactCheckError(f"{path}: no such fact-check file") from None
    except yaml.YAMLError as e:
        raise FactCheckError(f"{path}: invalid YAML: {e}") from None
    return parse_rules(data, str(path))


def _contains(text_norm: str, phrase: str) -> bool:
    return phrase_pattern(phrase).search(text_norm) is not None


def run_rule(rule: Rule, answer: str | None) -> list[dict[str, Any]]:
    """Each individual check of ``rule`` on ``answer``: ``{"check", "target", "passed"}``."""
    text = answer or ""
    norm = normalize_ws(text.replace("’", "'"))
    nums = {n.key for n in extract_numbers(text)}
    out = []
    for s in rule.must_contain:
        out.append({"check": "must_contain", "target": s, "passed": _contains(norm, s)})
    for n in rule.numbers:
        out.append({"check": "numbers", "target": n, "passed": extract_numbers(n, words=False)[0].key in nums})
    for g in rule.any_of:
        out.append({"check": "any_of", "target": list(g), "passed": any(_contains(norm, s) for s in g)})
    for s in rule.forbid:
        out.append({"check": "forbid", "target": s, "passed": not _contains(norm, s)})
    if rule.list_items:
        lines = [normalize_ws(m.group(1)) for m in _LIST_LINE.finditer(text)]
        for item in rule.list_items:
            out.append({"check": "list_items", "target": item, "passed": any(_contains(ln, item) for ln in lines)})
    if rule.list_pattern:
        found = sorted(set(re.findall(rule.list_pattern, text)))
        out.append({"check": "list_items", "target": f"/{rule.list_pattern}/ x{rule.list_min_count}",
                    "passed": len(found) >= rule.list_min_count, "found": found})
    return out


@dataclass(frozen=True, eq=False)
class CheckResult(Details):
    """One check of a rule on the answer: the rule, the kind of check (must_contain, numbers, any_of, forbid,
    list_items), its target, whether it passed, and for a list pattern the items found."""

    _optional = frozenset({"found"})
    rule: str
    check: str
    target: str | tuple[str, ...]
    passed: bool
    found: tuple[str, ...] | None = None


@dataclass(frozen=True, eq=False)
class FactCheckDetails(Details):
    """Every check of every rule that applies to the question, the rules' names, and whether the answer is
    correct by each rule's ``is_correct`` policy (all of them)."""

    checks: tuple[CheckResult, ...]
    rules: tuple[str, ...]
    is_correct: bool


def _check_result(rule: str, c: Mapping[str, Any]) -> CheckResult:
    target = tuple(c["target"]) if isinstance(c["target"], list) else c["target"]
    found = tuple(c["found"]) if "found" in c else None
    return CheckResult(rule, c["check"], target, c["passed"], found)


def _is_correct(rule: Rule, checks: list[dict[str, Any]]) -> bool:
    ic = rule.is_correct
    if ic == "all":
        return all(c["passed"] for c in checks)
    if "min_fact_score" in ic:
        return sum(c["passed"] for c in checks) / len(checks) >= ic["min_fact_score"]
    return all(c["passed"] for c in checks if c["check"] in ic["require"])


def fact_checks(answer: str | None, *, id: str | None = None, question_type: str | None = None,
                rules: FactRules | None = None, decision: Any = None) -> Score:
    """Run every rule that applies to this question; value = ``fact_score`` (mean of all checks), 0..1.

    Details: each check's result, the rules applied, and ``is_correct`` (all
    applied rules correct by their ``is_correct`` policy).

    Empty policy: undetermined (None) for an empty or None answer (reason "empty answer", the row's
    ``decision``), and when no rule applies to the question or no rules are configured.

    Examples
    --------
    >>> rules = parse_rules({"rules": [{"name": "r1", "applies_to": {"ids": ["q1"]},
    ...     "numbers": ["$604"], "forbid": ["cannot calculate"]}]})
    >>> s = fact_checks("The premium is 604.00 dollars.", id="q1", rules=rules)
    >>> s.value, s.details["is_correct"]
    (1.0, True)
    """
    if (guarded := skipped(decision_for(answer, decision), "fact_checks")) is not None:
        return guarded
    if rules is None:
        return Score(None, Undetermined("no fact-check rules configured (set fact_checks: rules.yaml)"))
    applied = rules.for_question(id, question_type)
    if not applied:
        return Score(None, Undetermined("no fact-check rule applies to this question"))
    checks: list[CheckResult] = []
    correct = True
    for rule in applied:
        res = run_rule(rule, answer)
        correct = correct and _is_correct(rule, res)
        checks += [_check_result(rule.name, c) for c in res]
    passed = sum(c.passed for c in checks)
    return Score(passed / len(checks), FactCheckDetails(tuple(checks), tuple(r.name for r in applied), correct),
                 CheckPasses(passed=passed, checks=len(checks)))


def fact_checks_batch(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None = None,
                      resources: Any = None) -> list[Score]:
    params = params or {}
    rules = params.get("rules")
    n = len(inputs["answer"])
    ids = inputs.get("id") or [None] * n
    qtypes = inputs.get("question_type") or [None] * n
    decisions = inputs.get("decision") or [None] * n
    return [fact_checks(a, id=i, question_type=q, rules=rules, decision=d)
            for a, i, q, d in zip(inputs["answer"], ids, qtypes, decisions)]


# ---------------------------------------------------------------------------------------------------------------
# The declarations: this module's metrics as the registry lists them (evalkit.metrics collects METRICS)
# ---------------------------------------------------------------------------------------------------------------
METRICS = (
    Metric("fact_checks", fact_checks, needs=("answer",), optional=("id", "question_type"), better="higher",
           range=(0.0, 1.0), batch=fact_checks_batch, params=("rules",), resources=("rules",),
           stats=CheckPasses, details=FactCheckDetails,
           family="reference",
           formula="mean of the per-question YAML checks the experiment names (fact_checks:); "
                   "is_correct in fact_checks_is_correct",
           empty_policy="undetermined for an empty answer or when no rule applies", extra_columns=("is_correct",),
           evidence_keys=("is_correct",)),
)
