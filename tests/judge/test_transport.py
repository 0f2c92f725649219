"""judge.timeout is a deadline for a whole call: a server that trickles its reply byte by byte (real HTTP on
127.0.0.1) cannot hold a call past it. No timings are asserted: each test counts requests and reads the error;
the work runs in a thread joined with a generous bound, so a call that ignored the deadline (a trickled reply
here takes minutes) fails the test instead of hanging it."""
import threading

import evalkit
from evalkit.judge import JudgeConfig, JudgeError, OpenAIJudge, load_prompts
from evalkit.judge.transport import deadline, remaining
from evalkit.testing import ScriptedJudgeServer

P = load_prompts()
VARS = {"question": "Q?", "reference": "The fee is $604.", "answer": "The fee is 604."}


def _run_bounded(fn, bound=60.0):
    """``fn()`` in a thread: (finished, result or exception)."""
    out = {}

    def target():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the test
            out["value"] = e

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(bound)
    return not t.is_alive(), out.get("value")


def test_trickled_reply_fails_at_the_deadline_and_is_retried():
    # ~400 response bytes, one every 0.5 s: 200 s to finish; each read returns well within the 1.5 s timeout
    with ScriptedJudgeServer(trickle=0.5) as srv:
        j = OpenAIJudge(JudgeConfig(base_url=srv.url, model="m", cache_path=None, timeout=1.5, max_retries=1,
                                    backoff=0.01))
        assert j.whole_call_deadline
        finished, err = _run_bounded(lambda: j.complete(P["answer_correct"], VARS, metric="m"))
        assert finished, "a trickling server held the call past judge.timeout"
        assert isinstance(err, JudgeError)
        assert "failed after 2 attempts" in str(err) and "ReadTimeout" in str(err)
        assert "within 1.5s (judge.timeout bounds the whole call" in str(err)
        assert srv.requests == 2 and j.usage()["m"]["retries"] == 1 and j.usage()["m"]["failures"] == 1


def test_trickling_judge_trips_the_circuit_breaker_and_every_row_says_why(sample_path):
    df = evalkit.load(sample_path).head(5)
    with ScriptedJudgeServer(trickle=0.5) as srv:
        cfg = {"judge": {"base_url": srv.url, "model": "m", "cache_path": None, "timeout": 1.0, "max_retries": 0,
                         "circuit_breaker": 2, "concurrency": 1}}
        finished, out = _run_bounded(lambda: evalkit.evaluate(df, ["answer_class"], cfg, progress=False))
        calls = srv.requests
    assert finished and not isinstance(out, BaseException), out
    errors = out["error"].tolist()
    assert all(e and "answer_class" in e for e in errors)
    assert sum("judge.timeout bounds the whole call" in e for e in errors) >= 2
    assert sum("stopped calling it (judge.circuit_breaker)" in e for e in errors) >= 1
    assert calls <= 3


def test_a_reply_within_the_deadline_is_unaffected():
    with ScriptedJudgeServer() as srv:
        j = OpenAIJudge(JudgeConfig(base_url=srv.url, model="m", cache_path=None, timeout=30))
        assert j.complete(P["answer_correct"], VARS, metric="m").data["verdict"] == "CORRECT"
        assert srv.requests == 1


def test_deadline_is_per_thread_and_restored():
    assert remaining() is None
    with deadline(100):
        outer = remaining()
        with deadline(1):
            assert remaining() <= 1
        assert remaining() > 1 and outer <= 100
        seen = []
        t = threading.Thread(target=lambda: seen.append(remaining()))
        t.start()
        t.join()
        assert seen == [None]  # another thread's calls are not bounded by this one's deadline
    assert remaining() is None
