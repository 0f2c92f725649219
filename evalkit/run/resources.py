"""The resources a run shares, in one table (issue 26, item 3).

A metric names what it needs in its registry entry (``Metric.resources``: ``"nlp"``, ``"encoder"``,
``"judge"``, ...). Each name has one :class:`Resource` in :data:`RESOURCES`, which says

* how it is made from the run's configuration (``load``; made once per run, on first use, never just to be signed),
* why it cannot be made here (``problem``: a missing extra, an unconfigured judge), checked before any work, and
* its piece of the run's signature, sacrebleu-style: a loaded resource signs itself (``sign``), a shipped model
  file by its hash without being loaded (``fingerprint``).

:class:`Resources` is one run's store of them. A keyed resource (each metric's own judge, each summary-label
provider) is made once per key.

Examples
--------
>>> from evalkit.base.config import EvalConfig
>>> sorted(RESOURCES)
['bertscore', 'encoder', 'grounding_model', 'judge', 'labels', 'nlp', 'ragas', 'rules', 'support_model']
>>> res = Resources(EvalConfig())
>>> res.signatures()  # nothing loaded, nothing signed
{}
>>> needed_resources(REGISTRY["grounding_risk"], EvalConfig())
('nlp', 'encoder', 'grounding_model', 'support_model')
>>> sorted(shipped_models(["relevance"]))
[]
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from evalkit.base.config import EvalConfig
from evalkit.metrics import REGISTRY, Metric

NO_KEY = ""  # the unkeyed resource (the run's judge, as opposed to a metric's own)


@dataclass(frozen=True)
class Resource:
    """One shared resource: how it loads, why it cannot, and how it signs.

    load : (run's Resources, key) -> the object; ``key`` is :data:`NO_KEY` unless the resource is keyed.
    problem : (config, metric name) -> why it cannot load with this configuration, or None.
    sign : (key, loaded object) -> {signature key: part}; None when the resource signs by ``fingerprint``.
    fingerprint : () -> the identity of a shipped file (read, not loaded), or None when none is installed.
    eager : made when the run starts, before any row (a bad input file fails the run at once).
    """

    name: str
    load: Callable[["Resources", str], Any] | None = None
    problem: Callable[[EvalConfig, str], str | None] | None = None
    sign: Callable[[str, Any], dict[str, str]] | None = None
    fingerprint: Callable[[], dict[str, str] | None] | None = None
    eager: bool = False  # made when the run starts (its errors are the input's), not on first use


# --- loaders ----------------------------------------------------------------------------------------------------

def _load_nlp(res: "Resources", _key: str):
    from evalkit.base.nlp import NlpPipeline

    return NlpPipeline(res.config.spacy_model, res.config.batch_size)


def _load_encoder(res: "Resources", _key: str):
    from evalkit.base.encoders import get_encoder

    name = res.config.embedding_model
    return get_encoder(name).bound(res.states_memo(name))


def _load_bertscore(res: "Resources", _key: str):
    from evalkit.base.encoders import get_bert_scorer

    name = res.config.bertscore_model
    return get_bert_scorer(name, res.config.bertscore_layers).bound(res.states_memo(name))


def _load_judge(res: "Resources", metric: str):
    """The run's judge (no key), or ``metric``'s own: the run's ``judge:`` with its overrides on top."""
    from evalkit.judge import make_judge

    own = res.own_judge(metric) if metric else None
    return (res.judge_factory or make_judge)({**res.config.judge, **own} if own else res.config.judge)


def _load_ragas(res: "Resources", _key: str):
    """The resolved judge settings the ragas metrics call through (so ragas' version enters the signature)."""
    from evalkit.judge import JudgeConfig

    return JudgeConfig.resolve(res.config.judge)


def _load_labels(res: "Resources", provider: str):
    from evalkit.metrics.summarization import make_labeler

    judge = res.judge if provider == "judge" else None
    return make_labeler(provider, judge, res.nlp, res.context_index)


def _load_rules(res: "Resources", _key: str):
    """The experiment's per-question rules file (``fact_checks:``), read and validated; None when it names none."""
    if not res.config.fact_checks:
        return None
    from evalkit.metrics.factchecks import load_rules

    return load_rules(res.config.fact_checks)


def _load_support_model(_res: "Resources", _key: str):
    from evalkit.metrics.support import get_support_model

    return get_support_model()


def _load_grounding_model(_res: "Resources", _key: str):
    from evalkit.metrics.grounding import load_model

    return load_model()


# --- availability -----------------------------------------------------------------------------------------------

def judge_configured(config: EvalConfig, metric: str | None = None) -> bool:
    """Is a judge configured (for ``metric``: its own ``metric_params.<metric>.judge`` on top of the run's)?"""
    from evalkit.judge import JudgeConfig

    own = (config.metric_params.get(metric) or {}).get("judge") if metric else None
    return JudgeConfig.resolve({**config.judge, **(own or {})}).configured


def _judge_problem(config: EvalConfig, metric: str) -> str | None:
    if judge_configured(config, metric):
        return None
    from evalkit.judge import NOT_CONFIGURED

    return NOT_CONFIGURED


def _embed_problem(_config: EvalConfig, _metric: str) -> str | None:
    from evalkit.base.encoders import INSTALL_HINT, available

    return None if available() else INSTALL_HINT


def _ragas_problem(_config: EvalConfig, _metric: str) -> str | None:
    from evalkit.metrics.ragas import RAGAS_INSTALL, available

    return None if available() else RAGAS_INSTALL


# --- signature parts ----------------------------------------------------------------------------------------------

def _signed_as(key: str) -> Callable[[str, Any], dict[str, str]]:
    return lambda _k, obj: {key: obj.signature()}


def _sign_judge(metric: str, judge) -> dict[str, str]:
    if not metric:
        return {"judge": judge.signature()}
    return {f"judge_{metric}": f"judge[{metric}]:{judge.signature()}"}  # a metric's own judge, named with it


def _sign_ragas(_k: str, judge_config) -> dict[str, str]:
    from evalkit.metrics.ragas import ragas_signature

    return {"ragas": ragas_signature(judge_config)}


def _support_fingerprint():
    from evalkit.base.signature import support_model_signature

    return support_model_signature()


def _grounding_fingerprint():
    from evalkit.base.signature import grounding_model_signature

    return grounding_model_signature()


RESOURCES: dict[str, Resource] = {r.name: r for r in (
    Resource("nlp", _load_nlp, sign=_signed_as("nlp")),
    Resource("encoder", _load_encoder, _embed_problem, _signed_as("encoder")),
    Resource("bertscore", _load_bertscore, _embed_problem, _signed_as("bertscore")),
    Resource("judge", _load_judge, _judge_problem, _sign_judge),
    Resource("ragas", _load_ragas, _ragas_problem, _sign_ragas),
    Resource("labels", _load_labels, sign=lambda provider, lab: {f"labels_{provider}": lab.signature()}),
    Resource("rules", _load_rules, eager=True),  # read before any row: a bad file fails the run at once
    # the shipped models: signed by their file's hash whenever a metric that reads them ran
    Resource("support_model", _load_support_model, _embed_problem, fingerprint=_support_fingerprint),
    Resource("grounding_model", _load_grounding_model, fingerprint=_grounding_fingerprint),
)}


def needed_resources(metric: Metric, config: EvalConfig) -> tuple[str, ...]:
    """What ``metric`` needs with this configuration: its registry entry's resources, plus the judge when its
    ``provider`` is the judge and the encoder when its ``method`` or ``align`` is the embedding one."""
    own = config.metric_params.get(metric.name, {})
    extra = ("judge",) * (own.get("provider") == "judge") + \
        ("encoder",) * (own.get("method") == "embedding" or own.get("align") == "embedding")
    return tuple(dict.fromkeys((*metric.resources, *extra)))


def wants_judge(metric: Metric, config: EvalConfig) -> bool:
    """Does ``metric`` call the LLM judge with this configuration (judged metrics, ragas', judge-labelled summaries)?"""
    return "judge" in needed_resources(metric, config)


def resource_problem(metric: Metric, config: EvalConfig) -> str | None:
    """Why ``metric`` cannot run with this configuration (None when it can): the first resource it needs that
    cannot be made here, the judge first (its message says how to configure one)."""
    needed = sorted(needed_resources(metric, config), key=lambda r: r != "judge")
    for name in needed:
        check = RESOURCES[name].problem
        if check is not None and (why := check(config, metric.name)) is not None:
            return why
    return None


def shipped_models(metrics: Iterable[str]) -> dict[str, dict[str, str] | None]:
    """The fingerprint of every shipped model file read by these metrics (resource name -> identity)."""
    names = [r for m in metrics if m in REGISTRY for r in REGISTRY[m].resources]
    return {r: RESOURCES[r].fingerprint() for r in dict.fromkeys(names) if RESOURCES[r].fingerprint is not None}


# --- one run's store ----------------------------------------------------------------------------------------------

@dataclass
class Resources:
    """The resources of one run, each made on first use and kept (loaded once, used by many metrics)."""

    config: EvalConfig
    context_index: dict = field(default_factory=dict)
    # contexts read into clauses, amounts and dates once per run for the evalkit profile's three checks
    read_passages: dict = field(default_factory=dict)
    # makes each judge from its settings (default: evalkit.judge.make_judge); a dry run's judge counts, never calls
    judge_factory: Any = None
    _loaded: dict = field(default_factory=dict)  # (resource, key) -> object, in the order they were made
    # token states per encoder model for this call: semantic_similarity and bert_score_f1 read the same texts
    _token_states: dict = field(default_factory=dict)

    def get(self, name: str, key: str = NO_KEY):
        """The resource ``name`` (for ``key``), made now if this run has not made it yet."""
        if (name, key) not in self._loaded:
            self._loaded[(name, key)] = RESOURCES[name].load(self, key)
        return self._loaded[(name, key)]

    def load_eager(self, metrics: Iterable[Metric]) -> None:
        """Make now the eager resources these metrics need."""
        for name in dict.fromkeys(r for m in metrics for r in m.resources):
            if RESOURCES[name].eager:
                self.get(name)

    def provide(self, name: str, obj: Any, key: str = NO_KEY) -> None:
        """Use ``obj`` as the resource ``name`` (a test's stand-in, or one already made elsewhere)."""
        if name not in RESOURCES:
            raise KeyError(f"unknown resource {name!r}; known: {', '.join(sorted(RESOURCES))}")
        self._loaded[(name, key)] = obj

    def loaded(self, name: str, key: str = NO_KEY):
        """The resource if this run made it, else None (nothing is made just to be asked about)."""
        return self._loaded.get((name, key))

    def states_memo(self, model: str):
        from evalkit.base.encoders import StateMemo

        return self._token_states.setdefault(model, StateMemo())

    @property
    def nlp(self):
        return self.get("nlp")

    @property
    def encoder(self):
        return self.get("encoder")

    @property
    def bert_scorer(self):
        return self.get("bertscore")

    @property
    def judge(self):
        return self.get("judge")

    @property
    def judge_config(self):
        """The resolved judge settings; the ragas metrics ask for them so that ragas' version and the judge it
        called (through evalkit's own client, :func:`evalkit.metrics.ragas.judge_llm`) enter the signature."""
        return self.get("ragas")

    def labeler(self, provider: str):
        """The summary-label provider ('offline' or 'judge'), created once per run."""
        return self.get("labels", provider)

    def own_judge(self, metric: str) -> Mapping[str, Any] | None:
        """``metric_params.<metric>.judge``: the settings that override the run's judge for ``metric``, or None."""
        own = (self.config.metric_params.get(metric) or {}).get("judge")
        return own or None

    def judge_for(self, metric: str):
        """The judge ``metric`` calls: its own (the run's ``judge:`` with its overrides on top; the API key still
        from the environment variable ``api_key_env`` names), else the run's."""
        return self.judge if self.own_judge(metric) is None else self.get("judge", metric)

    def for_metric(self, metric: str) -> "Resources":
        """These resources as ``metric`` sees them: ``judge`` is its own judge when it has one."""
        return self if self.own_judge(metric) is None else _MetricResources(self, metric)

    def metric_judges(self) -> dict[str, Any]:
        """The judges of the metrics that have their own, by metric name."""
        return dict(sorted((k, v) for (n, k), v in self._loaded.items() if n == "judge" and k))

    def judges(self) -> dict[str, Any]:
        """Every judge this run created: ``""`` for the run's, else the metric's name."""
        run = self.loaded("judge")
        return {**({NO_KEY: run} if run is not None else {}), **self.metric_judges()}

    def signatures(self) -> dict[str, str]:
        """The signature part of every resource this run made; nothing is made just to be signed."""
        out: dict[str, str] = {}
        for (name, key), obj in self._loaded.items():
            sign = RESOURCES[name].sign
            if sign is not None:
                out.update(sign(key, obj))
        return out


class _MetricResources:
    """A run's :class:`Resources` as one metric sees them: its own judge in place of the run's."""

    def __init__(self, resources: Resources, metric: str):
        self._resources, self._metric = resources, metric

    @property
    def judge(self):
        return self._resources.judge_for(self._metric)

    def __getattr__(self, name: str):
        return getattr(self._resources, name)
