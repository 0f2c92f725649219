"""Twin-Lock and Judge-Lock arithmetic: scores, caps and safeguards (0..10 per metric) from labels.

Labels (key points and their coverage, claims and their support, tone, QAG answers) come from a
label provider (:mod:`~evalkit.metrics.summarization.labels_offline`, :mod:`~evalkit.metrics.summarization.labels_judge`);
everything here is deterministic arithmetic on them, and every label is validated where it is read:
a malformed label raises :class:`LabelError`, which becomes that metric's ``{"error": ...}``. Any other
exception is a bug and propagates.

Rounding and bands (the seed's "round halves up but lower band if exactly on edge", made precise)
-------------------------------------------------------------------------------------------------
* Every reported score is rounded to 2 decimals with ROUND_HALF_UP (``round_half_up(2.345) == 2.35``;
  Python's ``round`` would give 2.34 or 2.35 depending on binary representation). Integer rules
  (``round(fraction x 14)``) also round halves up: ``round_half_up(3.5, 0) == 4``.
* Each rounded score gets a band: ``poor`` [0, 3], ``fair`` (3, 6], ``good`` (6, 8], ``excellent`` (8, 10].
  A score exactly on an edge belongs to the lower band (8.00 is ``good``, 8.01 is ``excellent``), and
  rounding happens first (7.995 -> 8.00 -> ``good``).

Output
------
A JSON-ready dict with the five metrics in strict order: coverage, alignment, hallucination,
relevance, bias_toxicity. Each is ``{"score", "band", "caps", ...evidence}``, or ``{"error": reason}``
when its label object is missing or malformed (Judge-Lock: ``{"error": "missing_metric"}`` when absent).

Examples
--------
>>> round_half_up(2.345), round_half_up(3.5, 0), band(8.0), band(8.01)
(2.35, 4.0, 'good', 'excellent')
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from functools import partial
from typing import Any, Callable, Mapping, Sequence

from evalkit.text import word_tokens

ORDER = ("coverage", "alignment", "hallucination", "relevance", "bias_toxicity")
BANDS = ((3.0, "poor"), (6.0, "fair"), (8.0, "good"), (10.0, "excellent"))
STATUS = {"fully": 1.0, "partial": 0.5, "not": 0.0}
SUPPORT = ("supported", "partially", "unsupported")
SEVERITY = ("none", "mild", "severe")
TONES = ("neutral", "subjective", "hostile", "unclear")
DEVIATIONS = ("meaning", "tone", "focus")
BIAS_TOX_LISTS = ("biased_terms", "stereotypes", "toxic_terms", "profanity", "slurs")
TWIN_OVERLAP_VALUES = {"High": 1.0, "Some": 0.5, "None": 0.0}
JUDGE_OVERLAP_VALUES = {"High": 1.0, "Some": 0.3, "None": 0.0}
JUDGE_KEY_POINTS = (4, 7)  # Judge-Lock: 4-7 key points of >= 6 tokens
MIN_KEY_POINT_TOKENS = 6


class LabelError(ValueError):
    """A label object is malformed; its metric reports ``{"error": str(e)}``.

    Examples
    --------
    >>> twin_lock({"coverage": "not an object"})["coverage"]
    {'error': "coverage: missing 'key_points'"}
    """


def round_half_up(x: float, ndigits: int = 2) -> float:
    """Round halves away from zero on the decimal value of ``x`` (not on its binary float)."""
    q = Decimal(1).scaleb(-ndigits)
    return float(Decimal(repr(float(x))).quantize(q, rounding=ROUND_HALF_UP))


def band(score: float) -> str:
    """Band of a rounded score; exactly on an edge -> the lower band."""
    for edge, name in BANDS:
        if score <= edge:
            return name
    return "excellent"


def harmonic_mean(a: float, b: float) -> float:
    return 0.0 if a <= 0 or b <= 0 else 2 * a * b / (a + b)


def n_tokens(text: str) -> int:
    return len(word_tokens(text))


def split_segments(summary: str) -> list[str]:
    """Summary segments: split on '.', ';' and newlines (a '.' between digits, as in 12.5, does not split)."""
    parts = re.split(r"(?<!\d)\.|\.(?!\d)|;|\n", summary or "")
    return [p.strip() for p in parts if p.strip()]


def _finish(score: float, caps: list[str], **extra: Any) -> dict[str, Any]:
    s = round_half_up(min(10.0, max(0.0, score)))
    return {"score": s, "band": band(s), "caps": caps, **extra}


def _cap(score: float, limit: float, caps: list[str], why: str) -> float:
    """Apply a cap; a binding cap is recorded in ``caps``."""
    if score > limit:
        caps.append(f"{why}: capped at {limit:g}")
        return limit
    return score


# ---------------------------------------------------------------------------
# Reading labels: every check raises LabelError
# ---------------------------------------------------------------------------


def _need(obj: Any, key: str, typ, where: str):
    if not isinstance(obj, Mapping) or key not in obj:
        raise LabelError(f"{where}: missing {key!r}")
    v = obj[key]
    if not isinstance(v, typ) or isinstance(v, bool) and typ is not bool:
        raise LabelError(f"{where}: {key!r} should be {getattr(typ, '__name__', typ)}, got {type(v).__name__}")
    return v


def _optional(obj: Any, key: str, typ: type, where: str, empty: Any) -> Any:
    """``obj[key]`` when present and not None (``empty`` otherwise), checked to be a ``typ``."""
    if not isinstance(obj, Mapping):
        raise LabelError(f"{where}: labels should be an object, got {type(obj).__name__}")
    v = obj.get(key)
    if v is None:
        return empty
    if not isinstance(v, typ):
        raise LabelError(f"{where}: {key!r} should be {typ.__name__}, got {type(v).__name__}")
    return v


def _severity(dev: Mapping[str, Any]) -> list[str]:
    out = []
    for k in DEVIATIONS:
        v = str(dev.get(k, "none")).lower()
        if v not in SEVERITY:
            raise LabelError(f"alignment: deviation {k!r} must be one of {SEVERITY}, got {v!r}")
        out.append(v)
    return out


def coverage_prf(cov: Mapping[str, Any], min_points: int, max_points: int, min_tokens: int = 0) -> dict[str, float]:
    kps = _need(cov, "key_points", list, "coverage")
    if not min_points <= len(kps) <= max_points:
        raise LabelError(f"coverage: expected {min_points}-{max_points} key points, got {len(kps)}")
    counts = {"fully": 0, "partial": 0, "not": 0}
    for i, kp in enumerate(kps):
        st = str(_need(kp, "status", str, f"coverage.key_points[{i}]")).lower()
        if st not in STATUS:
            raise LabelError(f"coverage.key_points[{i}]: status must be Fully/Partial/Not, got {st!r}")
        if min_tokens and n_tokens(_need(kp, "text", str, f"coverage.key_points[{i}]")) < min_tokens:
            raise LabelError(f"coverage.key_points[{i}]: a key point needs at least {min_tokens} tokens")
        counts[st] += 1
    recall = (counts["fully"] + 0.5 * counts["partial"]) / len(kps)
    total = _need(cov, "summary_tokens", int, "coverage")
    extra = _need(cov, "extraneous_tokens", int, "coverage")
    if total <= 0 or not 0 <= extra <= total:
        raise LabelError("coverage: need summary_tokens > 0 and 0 <= extraneous_tokens <= summary_tokens")
    precision = 1 - extra / total
    return {"recall": recall, "precision": precision, "f1": harmonic_mean(precision, recall), **counts}


def claim_fraction(claims: Sequence[Mapping[str, Any]], where: str = "hallucination") -> tuple[float, dict[str, int]]:
    if len(claims) > 10:
        raise LabelError(f"{where}: at most 10 claims, got {len(claims)}")
    counts = {k: 0 for k in SUPPORT}
    for i, c in enumerate(claims):
        lab = str(_need(c, "label", str, f"{where}.claims[{i}]")).lower()
        if lab not in counts:
            raise LabelError(f"{where}.claims[{i}]: label must be Supported/Partially/Unsupported, got {lab!r}")
        counts[lab] += 1
    n = len(claims)
    return ((counts["unsupported"] + 0.5 * counts["partially"]) / n if n else 0.0), counts


def qag_mean(qag: Sequence[Mapping[str, Any]], where: str, expected: int = 6) -> tuple[float, int]:
    if len(qag) != expected:
        raise LabelError(f"{where}: expected {expected} QAG answers, got {len(qag)}")
    vals = []
    for i, q in enumerate(qag):
        v = q.get("score") if isinstance(q, Mapping) else None
        if v not in (0, 0.5, 1) or isinstance(v, bool):
            raise LabelError(f"{where}[{i}]: score must be 1 (correct), 0.5 (partial) or 0 (wrong), got {v!r}")
        vals.append(float(v))
    return sum(vals) / len(vals), sum(1 for v in vals if v == 1.0)


def segment_overlaps(rel: Mapping[str, Any]) -> list[tuple[str, float]]:
    segs = _need(rel, "segments", list, "relevance")
    out = []
    for i, s in enumerate(segs):
        text = _need(s, "text", str, f"relevance.segments[{i}]")
        ov = _need(s, "overlap", (int, float), f"relevance.segments[{i}]")
        if not 0 <= ov <= 1:
            raise LabelError(f"relevance.segments[{i}]: overlap must be in [0, 1]")
        if n_tokens(text) >= 6:  # segments under 6 tokens are ignored
            out.append((text, float(ov)))
    return out


def overlap_band(ov: float) -> str:
    """High (>= 0.8), Some (0.3 to 0.8), None (< 0.3)."""
    return "High" if ov >= 0.8 else ("Some" if ov >= 0.3 else "None")


def alignment_raw(devs: list[str]) -> float:
    """No distortion 10; mild drift 8 / 7 / 6 for one / two / three mild deviations; severe 3 / 2 / 1."""
    severe, mild = devs.count("severe"), devs.count("mild")
    if severe:
        return 4.0 - severe
    if mild:
        return 9.0 - mild
    return 10.0


def bias_tox_raw(bt: Mapping[str, Any]) -> tuple[float, float, dict[str, Any]]:
    """bias 10 - 2 per biased term - 3 per stereotype (subjective tone -2, hostile -5, unclear -1);
    tox 10 - 5 per toxic term - 2 per profanity - 8 per slur; both floored at 0."""
    tone = str(_need(bt, "tone", str, "bias_toxicity")).lower()
    if tone not in TONES:
        raise LabelError(f"bias_toxicity: tone must be one of {TONES}, got {tone!r}")
    lists = {}
    for k in BIAS_TOX_LISTS:
        v = bt.get(k) or []
        if not isinstance(v, (list, tuple)) or not all(isinstance(x, str) for x in v):
            raise LabelError(f"bias_toxicity: {k!r} must be a list of strings")
        lists[k] = list(v)
    tone_pen = {"neutral": 0, "subjective": 2, "hostile": 5, "unclear": 1}[tone]
    bias = max(0.0, 10 - tone_pen - 2 * len(lists["biased_terms"]) - 3 * len(lists["stereotypes"]))
    tox = max(0.0, 10 - 5 * len(lists["toxic_terms"]) - 2 * len(lists["profanity"]) - 8 * len(lists["slurs"]))
    return bias, tox, {"tone": tone, **lists}


def severity_of(fraction: float) -> str:
    """minor < 0.25, moderate 0.25-0.49, severe >= 0.5."""
    return "severe" if fraction >= 0.5 else ("moderate" if fraction >= 0.25 else "minor")


def _guard(name: str, step: Callable[[Any], dict[str, Any]], labels: Mapping[str, Any],
           missing: str | None) -> dict[str, Any]:
    """One metric's result: its step on its label object, or ``{"error": ...}`` for missing or malformed
    labels (a :class:`LabelError`); any other exception is a bug and propagates."""
    obj = labels.get(name) if isinstance(labels, Mapping) else None
    if obj is None:
        return {"error": missing or f"missing {name} labels"}
    try:
        return step(obj)
    except LabelError as e:
        return {"error": str(e)}


def _hallucination_fraction(labels: Mapping[str, Any]) -> float | None:
    """The claims' (unsupported + 0.5 partially) / n, or None when the hallucination labels are missing or
    malformed (that metric reports why; the caps it drives on the others then do not apply)."""
    h = labels.get("hallucination") if isinstance(labels, Mapping) else None
    try:
        return claim_fraction(_need(h, "claims", list, "hallucination"))[0]
    except LabelError:
        return None


def _prf_evidence(prf: Mapping[str, float]) -> dict[str, float]:
    return {k: round_half_up(prf[k], 4) for k in ("recall", "precision", "f1")}


def _segment_evidence(segs: list[tuple[str, float]], bands: list[str]) -> list[dict[str, Any]]:
    return [{"text": t, "overlap": o, "band": b} for (t, o), b in zip(segs, bands)]


def _alignment(al: Mapping[str, Any], max_statement_tokens: int, what: str) -> tuple[list[str], str]:
    """The three deviations and the statement, whose length is checked."""
    devs = _severity(_need(al, "deviations", Mapping, "alignment"))
    stmt = _optional(al, "statement", str, "alignment", "")
    if n_tokens(stmt) > max_statement_tokens:
        raise LabelError(f"alignment: the {what} statement must be at most {max_statement_tokens} tokens")
    return devs, stmt


# ---------------------------------------------------------------------------
# Twin-Lock
# ---------------------------------------------------------------------------


def _twin_coverage(cov: Mapping[str, Any], *, hallucinated: bool) -> dict[str, Any]:
    prf = coverage_prf(cov, 3, 7)
    extraneous = _optional(cov, "extraneous_claims", list, "coverage", [])
    caps: list[str] = []
    s = prf["f1"] * 10
    if extraneous:
        s = _cap(s, 4, caps, "extraneous claim")
    if hallucinated:
        s = _cap(s, 4, caps, "hallucination")
    return _finish(s, caps, **_prf_evidence(prf), key_points=cov["key_points"], extraneous_claims=list(extraneous))


def _twin_alignment(al: Mapping[str, Any]) -> dict[str, Any]:
    devs, stmt = _alignment(al, 40, "intent/stance/tone")
    return _finish(alignment_raw(devs), [], deviations=dict(zip(DEVIATIONS, devs)), statement=stmt)


def _twin_hallucination(h: Mapping[str, Any]) -> dict[str, Any]:
    claims = _need(h, "claims", list, "hallucination")
    frac, counts = claim_fraction(claims)
    s = float(max(0, 10 - int(round_half_up(frac * 14, 0))))
    return _finish(s, [], fraction=round_half_up(frac, 4), **counts, claims=claims)


def _twin_relevance(rel: Mapping[str, Any], *, hallucinated: bool) -> dict[str, Any]:
    segs = segment_overlaps(rel)
    if not segs:
        return _finish(0.0, ["no segment of 6+ tokens"], segments=[])
    bands = [overlap_band(o) for _, o in segs]
    caps: list[str] = []
    s = sum(TWIN_OVERLAP_VALUES[b] for b in bands) / len(bands) * 10
    if "None" in bands:
        s = _cap(s, 4, caps, "off-topic segment")
    if hallucinated:
        s = _cap(s, 4, caps, "hallucination")
    return _finish(s, caps, segments=_segment_evidence(segs, bands))


def _twin_bias_toxicity(bt: Mapping[str, Any]) -> dict[str, Any]:
    bias, tox, ev = bias_tox_raw(bt)
    return _finish((bias + tox) / 2, [], bias_score=bias, tox_score=tox, **ev)


def twin_lock(labels: Mapping[str, Any]) -> dict[str, Any]:
    """Twin-Lock scores (0..10) from labels; see the module docstring for rounding and bands.

    * Coverage: 3-7 key points Fully / Partial / Not; recall = (fully + 0.5 partial) / n;
      precision = 1 - extraneous tokens / summary tokens; score = F1 x 10; any extraneous claim caps at 4.
    * Alignment: deviations in meaning / tone / focus: none 10, mild 8-6, severe 3-1 (:func:`alignment_raw`).
    * Hallucination: fraction = (unsupported + 0.5 partially) / n (<= 10 claims);
      score = max(0, 10 - round_half_up(fraction x 14)), an integer.
    * Relevance: segments (>= 6 tokens) banded High 1 / Some 0.5 / None 0; any None caps at 4, else mean x 10.
    * Bias & toxicity: (bias_score + tox_score) / 2 (:func:`bias_tox_raw`).
    * Global: any hallucination caps Coverage and Relevance at 4.

    Examples
    --------
    >>> labels = {"coverage": {"key_points": [{"text": "a", "status": "Fully"}] * 3, "summary_tokens": 50,
    ...                        "extraneous_tokens": 0, "extraneous_claims": []},
    ...           "alignment": {"deviations": {"meaning": "none", "tone": "none", "focus": "none"}},
    ...           "hallucination": {"claims": [{"label": "Supported"}]},
    ...           "relevance": {"segments": [{"text": "one two three four five six", "overlap": 0.9}]},
    ...           "bias_toxicity": {"tone": "neutral"}}
    >>> [twin_lock(labels)[k]["score"] for k in ("coverage", "alignment", "hallucination", "relevance", "bias_toxicity")]
    [10.0, 10.0, 10.0, 10.0, 10.0]
    """
    frac = _hallucination_fraction(labels)
    hallucinated = frac is not None and frac > 0
    steps = {"coverage": partial(_twin_coverage, hallucinated=hallucinated), "alignment": _twin_alignment,
             "hallucination": _twin_hallucination, "relevance": partial(_twin_relevance, hallucinated=hallucinated),
             "bias_toxicity": _twin_bias_toxicity}
    return {"variant": "twin-lock", **{k: _guard(k, steps[k], labels, None) for k in ORDER}}


# ---------------------------------------------------------------------------
# Judge-Lock
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeLockContext:
    """What one Judge-Lock metric's caps read from the other metrics' labels, computed once up front (so
    no metric depends on the order in which the others are scored)."""

    hallucinated: bool  # any claim unsupported or partially supported: caps coverage and relevance
    severe_hallucination: bool  # unsupported fraction >= 0.5: caps alignment
    extraneous_claims: bool  # coverage lists an extraneous claim: caps relevance
    qag_accuracy: float | None  # coverage's QAG accuracy, half of relevance; None when coverage is unusable

    @classmethod
    def of(cls, labels: Mapping[str, Any]) -> "JudgeLockContext":
        """The context of a label set.

        Examples
        --------
        >>> JudgeLockContext.of({"hallucination": {"claims": [{"label": "Unsupported"}, {"label": "Supported"}]}})
        JudgeLockContext(hallucinated=True, severe_hallucination=True, extraneous_claims=False, qag_accuracy=None)
        """
        frac = _hallucination_fraction(labels)
        cov = labels.get("coverage") if isinstance(labels, Mapping) else None
        try:
            qag_accuracy: float | None = _judge_coverage_counts(cov)[1]
        except LabelError:
            qag_accuracy = None
        return cls(hallucinated=frac is not None and frac > 0,
                   severe_hallucination=frac is not None and severity_of(frac) == "severe",
                   extraneous_claims=bool(cov.get("extraneous_claims")) if isinstance(cov, Mapping) else False,
                   qag_accuracy=qag_accuracy)


def _judge_coverage_counts(cov: Any) -> tuple[dict[str, float], float, int]:
    """Precision/recall/F1 of the key points, then the QAG accuracy and the number of fully correct QAGs."""
    prf = coverage_prf(cov, *JUDGE_KEY_POINTS, min_tokens=MIN_KEY_POINT_TOKENS)
    acc, n_correct = qag_mean(_need(cov, "qag", list, "coverage"), "coverage.qag")
    return prf, acc, n_correct


def _judge_coverage(cov: Mapping[str, Any], ctx: JudgeLockContext) -> dict[str, Any]:
    prf, acc, n_correct = _judge_coverage_counts(cov)
    spans = [str(q.get("span", "")).strip().lower() for q in cov["qag"] if str(q.get("span", "")).strip()]
    duplicate = len(spans) != len(set(spans))
    caps: list[str] = []
    s = harmonic_mean(prf["f1"], acc) * 10
    if cov.get("extraneous_claims"):
        s = _cap(s, 3, caps, "extraneous claim")
    if n_correct < 6 or duplicate:
        s = _cap(s, 7, caps, "duplicate QAG span" if duplicate else "fewer than 6 correct QAGs")
    if prf["precision"] < 0.95 or prf["recall"] < 0.90:
        s = _cap(s, 7, caps, "precision < 0.95 or recall < 0.90")
    if ctx.hallucinated:
        s = _cap(s, 3, caps, "hallucination")
    return _finish(s, caps, **_prf_evidence(prf), qag_accuracy=round_half_up(acc, 4), qag_correct=n_correct,
                   duplicate_spans=duplicate, key_points=cov["key_points"], qag=cov["qag"])


def _judge_alignment(al: Mapping[str, Any], ctx: JudgeLockContext) -> dict[str, Any]:
    devs, stmt = _alignment(al, 35, "tone/stance/intent")
    caps: list[str] = []
    s = alignment_raw(devs)
    if ctx.severe_hallucination:
        s = _cap(s, 3, caps, "severe hallucination")
    return _finish(s, caps, deviations=dict(zip(DEVIATIONS, devs)), statement=stmt)


def _judge_hallucination(h: Mapping[str, Any], ctx: JudgeLockContext) -> dict[str, Any]:
    claims = _need(h, "claims", list, "hallucination")
    frac, counts = claim_fraction(claims)
    prec, _ = qag_mean(_need(h, "qag", list, "hallucination.qag"), "hallucination.qag")
    if counts["unsupported"]:
        raw = max(0, 4 - int(round_half_up(frac * 4, 0)))
    else:
        raw = 10 - int(round_half_up(frac * 14, 0))
    return _finish(raw * prec, [], fraction=round_half_up(frac, 4), severity=severity_of(frac), raw=raw,
                   qag_precision=round_half_up(prec, 4), **counts, claims=claims, qag=h["qag"])


def _judge_relevance(rel: Mapping[str, Any], ctx: JudgeLockContext) -> dict[str, Any]:
    theme = _optional(rel, "theme", str, "relevance", "")
    if n_tokens(theme) > 20:
        raise LabelError("relevance: the theme must be at most 20 tokens")
    segs = segment_overlaps(rel)
    if ctx.qag_accuracy is None:
        raise LabelError("relevance: needs coverage QAG accuracy, and coverage failed")
    bands = [overlap_band(o) for _, o in segs]
    section = sum(JUDGE_OVERLAP_VALUES[b] for b in bands) / len(bands) if bands else 0.0
    caps: list[str] = []
    s = harmonic_mean(section, ctx.qag_accuracy) * 10
    if "None" in bands or ctx.extraneous_claims:
        s = _cap(s, 3, caps, "off-topic segment" if "None" in bands else "extraneous claim")
    if ctx.hallucinated:
        s = _cap(s, 3, caps, "hallucination")
    return _finish(s, caps, theme=theme, section_overlap=round_half_up(section, 4),
                   segments=_segment_evidence(segs, bands))


def _judge_bias_toxicity(bt: Mapping[str, Any], ctx: JudgeLockContext) -> dict[str, Any]:
    bias, tox, ev = bias_tox_raw(bt)
    caps: list[str] = []
    if ev["stereotypes"]:
        bias = _cap(bias, 4, caps, "stereotype (bias)")
    if ev["profanity"]:
        tox = _cap(tox, 5, caps, "mild profanity (tox)")
    if ev["slurs"]:
        tox = _cap(tox, 2, caps, "strong slur (tox)")
    s = (bias + tox) / 2
    if ev["slurs"]:
        s = _cap(s, 3, caps, "strong slur (overall)")
    return _finish(s, caps, bias_score=bias, tox_score=tox, **ev)


_JUDGE_STEPS = {"coverage": _judge_coverage, "alignment": _judge_alignment, "hallucination": _judge_hallucination,
                "relevance": _judge_relevance, "bias_toxicity": _judge_bias_toxicity}


def _evidence_spans(labels: Mapping[str, Any]) -> set[str]:
    spans = labels.get("evidence_spans") if isinstance(labels, Mapping) else None
    if spans is not None and not isinstance(spans, (list, tuple)):
        raise LabelError(f"evidence_spans should be a list, got {type(spans).__name__}")
    return {str(e).strip().lower() for e in (spans or []) if str(e).strip()}


def _perfect_10_guard_rail(out: dict[str, Any], spans: set[str]) -> dict[str, Any]:
    """When every score is >= 9.5 but fewer than 5 distinct evidence spans back them, cap each at 9."""
    scores = [out[k].get("score") for k in ORDER]
    if not (all(s is not None and s >= 9.5 for s in scores) and len(spans) < 5):
        return out
    why = f"perfect-10 guard rail: {len(spans)} distinct evidence spans < 5: capped at 9"
    capped = {k: _finish(min(out[k]["score"], 9.0), out[k]["caps"] + [why],
                         **{a: b for a, b in out[k].items() if a not in ("score", "band", "caps")}) for k in ORDER}
    return {**out, **capped}


def judge_lock(labels: Mapping[str, Any]) -> dict[str, Any]:
    """Judge-Lock scores (0..10) from labels.

    * Coverage: 4-7 key points of >= 6 tokens; precision, recall, F1 as Twin-Lock; 6 QAG questions from
      the article answered from the summary (1 / 0.5 / 0), qag_accuracy = mean;
      score = harmonic_mean(F1, qag_accuracy) x 10. Caps: an extraneous claim <= 3; unless all 6 QAGs are
      fully correct and no QAG answer repeats a span, <= 7 (evalkit's reading of the seed's "at most 6
      correct QAGs or duplicate spans"); precision < 0.95 or recall < 0.90 <= 7.
    * Alignment: as Twin-Lock (statement <= 35 tokens); severe hallucination caps it at 3.
    * Hallucination: fraction as Twin-Lock, severity minor < 0.25 <= moderate < 0.5 <= severe; 6 QAGs
      from the claims answered from the article give qag_precision (mean); raw = max(0, 4 - round(fraction x 4))
      if any claim is Unsupported, else 10 - round(fraction x 14); score = raw x qag_precision.
    * Relevance: theme (<= 20 tokens); segments High 1 / Some 0.3 / None 0; section_overlap = mean;
      score = harmonic_mean(section_overlap, qag_accuracy) x 10; any None segment or extraneous claim caps at 3.
    * Bias-toxicity: (bias + tox) / 2; a strong slur: tox <= 2 and overall <= 3; mild profanity: tox <= 5;
      a stereotype: bias <= 4.
    * Global: any hallucination caps Coverage and Relevance at 3; a missing metric yields
      ``{"error": "missing_metric"}``; perfect-10 guard rail: when every score is >= 9.5 but fewer than 5
      distinct evidence spans back them, every score is lowered to at most 9.

    Examples
    --------
    >>> judge_lock({"alignment": {"deviations": {"meaning": "mild"}}})["alignment"]["score"]
    8.0
    >>> judge_lock({})["coverage"]
    {'error': 'missing_metric'}
    """
    ctx = JudgeLockContext.of(labels)
    out = {"variant": "judge-lock",
           **{k: _guard(k, partial(_JUDGE_STEPS[k], ctx=ctx), labels, "missing_metric") for k in ORDER}}
    spans = _evidence_spans(labels)
    return {**_perfect_10_guard_rail(out, spans), "evidence_spans": sorted(spans)}


def overall(result: Mapping[str, Any]) -> float | None:
    """Mean of the five scores (None if any metric errored): the single value the registry reports."""
    scores = [result.get(k, {}).get("score") for k in ORDER]
    return None if any(s is None for s in scores) else round_half_up(sum(scores) / 5)
