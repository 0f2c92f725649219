"""Threshold profiles, in one place: the file calibration writes (:func:`profile_entry`, :func:`write_profile`) and
the verdict reads (:func:`read_profile`, :func:`thresholds_from_profile`), versioned and checked key by key.

A profile is YAML: ``evalkit_profile`` (the format's version), ``evalkit_version``, ``calibrated_on`` (the table
and its SHA-256), ``date`` and ``metrics: {name: {threshold, flag, inclusive, direction, ...evidence}}``; each
entry becomes one :class:`evalkit.base.thresholds.Threshold`.

>>> from evalkit.base.config import VerdictThresholds
>>> t = thresholds_from_profile({"evalkit_profile": 2, "metrics": {"hallucination": {"threshold": 0.4,
...                               "flag": "above", "inclusive": True}}}, VerdictThresholds(named="seed"))
>>> t.hallucination_fail, str(t.profile[0])
(0.4, 'hallucination >= 0.4')
"""
from __future__ import annotations

import math
import dataclasses
from dataclasses import asdict
from pathlib import Path
from typing import Any, Mapping

from evalkit.decide.aggregate import json_ready
from evalkit.base.config import VerdictThresholds, read_yaml_mapping
from evalkit.metrics import REGISTRY, canonical_name, verdict_roles
from evalkit.base.safeio import write_text
from evalkit.base.thresholds import Threshold, ThresholdError
from evalkit.decide.verdict import ProfileError  # ProfileError: the verdict raises it too (a profile it cannot apply)


def read_profile(profile: Mapping[str, Any] | str | Path) -> dict[str, Any]:
    """A profile as a dict (from a dict or a YAML path), with a clear error when unreadable."""
    if isinstance(profile, Mapping):
        return dict(profile)
    path = Path(profile)
    doc = read_yaml_mapping(path, ProfileError, "threshold profile")
    if not isinstance(doc.get("metrics"), dict):
        raise ProfileError(f"{path}: a threshold profile has a 'metrics' mapping (as written by evalkit calibrate)")
    return doc


PROFILE_VERSIONS = (1, 2)  # evalkit_profile values this version reads (a profile without one is version 1)


def _check_version(doc: Mapping[str, Any], where: str) -> None:
    v = doc.get("evalkit_profile", 1)
    if isinstance(v, bool) or v not in PROFILE_VERSIONS:
        raise ProfileError(f"{where}evalkit_profile: unknown version {v!r} (this evalkit reads {list(PROFILE_VERSIONS)}); "
                           "re-run evalkit calibrate -o to write a current profile")


# the keys a profile may hold (what write_profile and profile_entry write, and the rule's own keys); any other key
# is refused, so a misspelt ``inclusiv: false`` cannot leave the rule at its default unnoticed
PROFILE_KEYS = frozenset({"evalkit_profile", "evalkit_version", "calibrated_on", "date", "metrics"})
ENTRY_KEYS = frozenset({"threshold", "flag", "inclusive", "direction", "outcome", "criterion", "label", "positive",
                        "threshold_ci", "roc_auc", "pr_auc", "n", "n_pos", "confusion", "protocol", "reported_on",
                        "n_resamples", "seed", "guarantee"})


def _check_keys(keys: Any, known: frozenset, at: str) -> None:
    """Refuse a key this version does not read, naming the nearest known one."""
    import difflib

    for key in keys:
        if key not in known:
            near = difflib.get_close_matches(str(key), sorted(known), n=1, cutoff=0.6)
            raise ProfileError(f"{at}{key}: unknown key" + (f"; did you mean {near[0]!r}?" if near else "")
                               + f" (a profile reads {', '.join(sorted(known))})")


def _check_entry(metric: str, entry: Any, where: str) -> None:
    """A hand-edited entry, checked key by key: known keys, types, the metric's scale, direction agreeing with
    flag."""
    at = f"{where}metrics.{metric}"
    if not isinstance(entry, Mapping):
        raise ProfileError(f"{at}: expected a mapping with threshold, flag and inclusive, got {entry!r}")
    _check_keys(entry, ENTRY_KEYS, f"{at}.")
    value = entry.get("threshold")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ProfileError(f"{at}.threshold: must be a finite number, got {value!r}")
    rng = REGISTRY[metric].range
    if rng is not None and not rng[0] <= value <= rng[1]:
        raise ProfileError(f"{at}.threshold: {value!r} is outside {metric}'s scale {rng[0]:g}..{rng[1]:g}")
    if "inclusive" in entry and not isinstance(entry["inclusive"], bool):
        raise ProfileError(f"{at}.inclusive: must be true or false (a YAML boolean), got {entry['inclusive']!r}")
    if "flag" in entry and entry["flag"] not in ("above", "below"):
        raise ProfileError(f"{at}.flag: must be 'above' or 'below', got {entry['flag']!r}")
    if "direction" in entry and entry["direction"] not in ("higher", "lower"):
        raise ProfileError(f"{at}.direction: must be 'higher' or 'lower', got {entry['direction']!r}")
    if "flag" in entry and "direction" in entry and \
            (entry["direction"] == "higher") != (entry["flag"] == "above"):
        raise ProfileError(f"{at}: direction {entry['direction']!r} contradicts flag {entry['flag']!r} "
                           "(higher flags above the threshold, lower below)")


def thresholds_from_profile(profile: Mapping[str, Any] | str | Path, base: VerdictThresholds | None = None) -> VerdictThresholds:
    """Apply a calibrated threshold profile (dict or YAML path) on top of ``base``.

    A profile has ``metrics: {metric_name: {threshold, flag, inclusive, ...}}`` (as written by
    :func:`evalkit.decide.calibrate.write_profile`; older entries with ``direction`` are read too). Any
    registered metric with a direction may be named; the verdict applies its rule.
    """
    doc = read_profile(profile)
    where = f"{profile}: " if isinstance(profile, (str, Path)) else ""
    _check_version(doc, where)
    _check_keys(doc, PROFILE_KEYS, where)
    base = base or VerdictThresholds()
    rules = []
    for metric, entry in doc["metrics"].items():
        metric = canonical_name(metric)
        if metric not in REGISTRY or REGISTRY[metric].better not in ("higher", "lower"):
            raise ProfileError(f"{where}profile names {metric!r}, which is not a registered metric with a direction "
                               f"(a threshold needs a score that is better one way)")
        _check_entry(metric, entry, where)
        try:
            rules.append(Threshold.from_dict(metric, entry))
        except (ThresholdError, TypeError) as e:
            raise ProfileError(f"{where}profile entry {metric!r}: {e}") from None
    # the base's named profile and every cut value kept; a rule on one of that profile's metrics sets its value
    keys = {name: role.threshold for name, role in verdict_roles(base.named)}
    return dataclasses.replace(base, **{keys[r.metric]: float(r.value) for r in rules if r.metric in keys},
                               profile=tuple(rules))


def profile_entry(result: Any, metric: str, label: str, positive: Any = None) -> dict[str, Any]:
    """One metric's entry in a threshold profile: the rule (exact value, flagged side, inclusive) and
    the evidence it was chosen on (with ``positive``, the label class it flags). The value is written
    unrounded so that rows sitting exactly on the threshold are flagged by the verdict as they were
    counted by calibration."""
    rule = Threshold.from_direction(metric, result.threshold, result.direction)
    at = result.at_threshold
    evidence = json_ready({"criterion": result.criterion, "label": label,
                           **({"positive": str(positive)} if positive is not None else {}),
                           # a guaranteed threshold carries its guarantee, not a bootstrap interval
                           **({} if getattr(result, "guarantee", None) else
                              {"threshold_ci": [result.threshold_ci.low, result.threshold_ci.high]}),
                           "roc_auc": asdict(result.roc_auc), "n": result.n, "n_pos": result.n_pos,
                           "confusion": {k: getattr(at, k).estimate for k in ("tp", "fp", "tn", "fn")} if at else None,
                           "protocol": result.protocol, "reported_on": result.reported_on,
                           "n_resamples": result.n_resamples, "seed": result.seed,
                           **({"guarantee": result.guarantee} if getattr(result, "guarantee", None) else {})})
    return {"threshold": float(rule.value), "flag": rule.flag, "inclusive": rule.inclusive,
            "direction": result.direction, **evidence}


def write_profile(path, entries: Mapping[str, dict[str, Any]], *, dataset_sha256: str | None,
                  source: str | None = None, date: str | None = None) -> None:
    """Write a YAML threshold profile ``{metrics: {name: entry}}`` that the verdict and CLI consume
    (``evalkit verdict RESULTS --thresholds profile.yaml``; :func:`thresholds_from_profile`).

    ``calibrated_on`` names the table the thresholds were chosen on (``source``) and its SHA-256
    (``dataset_sha256``: the hash of that file, a results table or a plain score/label table).
    """
    import datetime

    import yaml

    from evalkit._version import __version__

    doc = {"evalkit_profile": 2, "evalkit_version": __version__,
           "calibrated_on": {"file": source, "sha256": dataset_sha256},
           "date": date or datetime.date.today().isoformat(), "metrics": dict(entries)}
    write_text(path, yaml.safe_dump(doc, sort_keys=False))  # atomic: a kill leaves the old profile or the new
