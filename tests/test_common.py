"""Checks every registered metric as a whole: range, determinism, empty-input policy, declared properties,
and every module's docstring examples."""
import doctest
import importlib
import inspect
import pkgutil

import pytest

import evalkit
from evalkit.metrics import DEFAULT_METRICS, REGISTRY, Score

ROW = {"question": "What is the base premium for Territory 118?",
       "answer": "The base premium for Territory 118 is $604 per year, according to the manual.",
       "contexts": ["The base premium for Territory 118 is $604 per year."],
       "ground_truth": "The base premium for Territory 118 is $604 per year.",
       "id": "q02", "question_type": "numeric"}
EMPTY = {"question": "", "answer": "", "contexts": [], "ground_truth": "", "id": "x", "question_type": None}
NONE = {"question": None, "answer": None, "contexts": None, "ground_truth": None, "id": None, "question_type": None}


NUMBERS = {"faithfulness": 80.0, "context_precision": None, "context_recall": 50.0, "answer_relevance": 70.0}


@pytest.fixture(scope="module")
def kit(scripted_judge, encoder, judge_server):
    from evalkit.base.encoders import get_bert_scorer
    from evalkit.judge import JudgeConfig

    return {"judge": scripted_judge, "encoder": encoder, "scorer": get_bert_scorer(),
            "judge_config": JudgeConfig(base_url=judge_server.url, model="scripted", cache_path=None)}


def call(m, row, kit):
    source = {**row, **NUMBERS} if m.derived else row
    kwargs = {k: source[k] for k in m.needs + m.optional}
    params = inspect.signature(m.fn).parameters
    kwargs.update({k: v for k, v in kit.items() if k in params})
    return m.fn(**kwargs)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_declared_properties(name):
    m = REGISTRY[name]
    assert m.name == name and m.better in ("higher", "lower", "none") and m.kind in ("score", "bool", "label")
    assert m.range is None or m.range[0] < m.range[1]
    assert m.empty_policy and m.formula
    params = inspect.signature(m.fn).parameters
    assert all(n in params for n in m.needs + m.optional), "fn must accept every declared input"
    assert (m.fn.__doc__ or "").strip(), "metrics document themselves"


@pytest.fixture
def fresh_judge(judge_server):
    """A judge with an empty cache: a second call through it is a new HTTP request, not a cache read."""
    from evalkit.judge import JudgeConfig, OpenAIJudge

    j = OpenAIJudge(JudgeConfig(base_url=judge_server.url, model="scripted", cache_path=None, backoff=0.01))
    yield j
    j.close()


@pytest.mark.parametrize("name", list(REGISTRY))
@pytest.mark.parametrize("row", [ROW, EMPTY, NONE], ids=["row", "empty", "none"])
def test_range_type_and_determinism(name, row, kit, fresh_judge):
    m = REGISTRY[name]
    if "raises" in m.empty_policy and row is not ROW:
        with pytest.raises(ValueError):
            call(m, row, kit)
        return
    a, b = call(m, row, kit), call(m, row, {**kit, "judge": fresh_judge})
    assert isinstance(a, Score) and a == b
    if "judge" in m.resources and "ragas" not in m.resources and row is ROW:
        assert sum(u["http_calls"] for u in fresh_judge.usage().values()) > 0, "the second call must ask again"
    if a.value is None:
        assert a.details.get("reason"), "an undetermined value must say why"
        return
    if m.kind == "bool":
        assert isinstance(a.value, bool)
    elif m.kind == "label":
        assert isinstance(a.value, str)
    else:
        assert m.range[0] <= a.value <= m.range[1] and a.value == a.value


# How each batch function relates to its metric's row function (every batched metric is in one group):
# the row function encodes one pair alone, the batch pads many (float32: ~1e-6 relative apart)
INDEPENDENT_ROW = {"semantic_similarity": 1e-5, "bert_score_f1": 1e-5}
# the batch shares work across its rows (a vocabulary, parsed contexts, a labeler); the row function is
# that batch on one row, so the comparison that means something is with different batch companions
SHARES_WORK = ("relevance", "hallucination", "grounding_risk", "twin_lock", "judge_lock", "unsupported_facts",
               "reference_conflict", "answers_question", "question_coverage")
# the batch maps the row function over rows (a loop, a thread pool, ragas' gather): comparing is meaningless
MAPS_ROWS = ("completeness", "fact_checks", "faithfulness", "context_precision", "context_recall", "answer_relevance",
             "factual_accuracy", "answer_class", "ragas_faithfulness", "ragas_context_precision",
             "ragas_context_recall")


def test_every_batch_function_is_classified():
    batched = sorted(n for n, m in REGISTRY.items() if m.batch is not None)
    assert sorted([*INDEPENDENT_ROW, *SHARES_WORK, *MAPS_ROWS]) == batched


def _batch_setup(name, sample_df, kit):
    from evalkit.base.config import EvalConfig
    from evalkit.run.runner import Resources, _metric_params

    m = REGISTRY[name]
    rows = sample_df.head(12)
    inputs = {c: rows[c].tolist() for c in m.needs + m.optional if c in rows.columns}
    jc = kit["judge_config"]
    res = Resources(EvalConfig(judge={"base_url": jc.base_url, "model": jc.model, "cache_path": None}))
    for name, obj in (("judge", kit["judge"]), ("encoder", kit["encoder"]), ("bertscore", kit["scorer"])):
        res.provide(name, obj)
    return m, inputs, _metric_params(m, EvalConfig(), res), res


@pytest.mark.parametrize("name", list(INDEPENDENT_ROW))
def test_batch_equals_independent_row_function(name, sample_df, kit):
    m, inputs, params, res = _batch_setup(name, sample_df, kit)
    batch = m.batch(inputs, params, res)
    for i in range(len(batch)):
        single = call(m, {k: v[i] for k, v in inputs.items()}, kit)
        assert batch[i].value == pytest.approx(single.value, rel=INDEPENDENT_ROW[name], abs=1e-9)


@pytest.mark.parametrize("name", SHARES_WORK)
def test_score_does_not_depend_on_batch_companions(name, sample_df, kit):
    m, inputs, params, res = _batch_setup(name, sample_df, kit)
    forward = m.batch(inputs, params, res)
    backward = m.batch({k: v[::-1] for k, v in inputs.items()}, params, res)[::-1]
    alone = [m.batch({k: [v[i]] for k, v in inputs.items()}, params, res)[0] for i in range(len(forward))]
    assert [s.value for s in forward] == [s.value for s in backward] == [s.value for s in alone]


def test_defaults_are_registered():
    assert set(DEFAULT_METRICS) <= set(REGISTRY)


# principle 15, both ways: the name's suffix says which way is better, and the registry agrees
SUFFIX_DIRECTION = {"_score": "higher", "_risk": "lower", "_error": "lower", "_rate": "lower"}


@pytest.mark.parametrize("name", list(REGISTRY))
def test_names_say_direction(name):
    for suffix, direction in SUFFIX_DIRECTION.items():
        if name.endswith(suffix):
            assert REGISTRY[name].better == direction, f"{name} ends in {suffix}: {direction} must be better"



MODULES = sorted(mod.name for mod in pkgutil.walk_packages(evalkit.__path__, "evalkit."))


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module, monkeypatch):
    from pathlib import Path

    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    mod = importlib.import_module(module)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_lazy_reference_of_an_entry_resolves(name):
    """#41: the built-ins name their code as "module:attribute" so that reading the registry imports none of it;
    a renamed module or function must fail here, not in the middle of a user's run. Every such string of every
    entry is resolved, and names a function, or a class where a details type is declared."""
    m = REGISTRY[name]
    for field in ("fn", "batch", "evidence", "worked", "details"):
        raw = object.__getattribute__(m, field)
        if isinstance(raw, str):
            assert raw.startswith("evalkit."), (field, raw)
            target = getattr(m, field)  # resolved by the entry, as a run does
            assert callable(target), (field, raw)
            assert not (field == "details") or isinstance(target, type), (field, raw)
