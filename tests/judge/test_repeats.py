"""Repeats and the shared concurrency limit of the judge client, against the scripted judge server."""
import threading

from evalkit.base.config import JudgeConfig
from evalkit.judge import OpenAIJudge, load_prompts
from evalkit.judge.cache import JudgeCache
from evalkit.testing import ScriptedJudgeServer

P = load_prompts()["answer_correct"]


def judge_for(srv, cache=None, **kw):
    return OpenAIJudge(JudgeConfig(base_url=srv.url, model="scripted", cache_path=None, **kw), cache=cache)


def ask(j, n=604):
    return j.complete(P, {"question": "Q?", "reference": f"The fee is ${n}.", "answer": f"It is {n}."}, metric="m")


def test_each_repeat_sends_its_seed_and_has_its_own_cache_entry():
    cache = JudgeCache(None)
    with ScriptedJudgeServer() as srv:
        j = judge_for(srv, cache, repeats=3, seed=5)
        for r in range(3):
            ask(j.for_repeat(r))
        assert srv.requests == 3 and srv.seeds == {5: 1, 6: 1, 7: 1}
        again = judge_for(srv, cache, repeats=3, seed=5)
        assert all(ask(again.for_repeat(r)).cached for r in range(3))
        assert srv.requests == 3
    assert j.signature() == "openai-chat:scripted@t0,rf=json_schema,k=3,seed=5"


def test_without_repeats_no_seed_is_sent():
    with ScriptedJudgeServer() as srv:
        ask(judge_for(srv))
        assert srv.seeds == {None: 1}


def test_noisy_server_answers_a_repeated_seed_the_same_and_other_seeds_differently():
    with ScriptedJudgeServer(noise=0.5) as srv:
        j = judge_for(srv, repeats=40)
        verdicts = [ask(j.for_repeat(r)).data["verdict"] for r in range(40)]
        fresh = judge_for(srv, repeats=40)  # no shared cache: the server is asked again, with the same seeds
        assert [ask(fresh.for_repeat(r)).data["verdict"] for r in range(40)] == verdicts
    assert set(verdicts) == {"CORRECT", "WRONG"}


def _together(j, numbers):
    """Ask ``j`` about each number from its own thread, all released at once."""
    start = threading.Barrier(len(numbers))
    replies = {}

    def call(i, n):
        start.wait()
        replies[i] = ask(j, n)

    threads = [threading.Thread(target=call, args=(i, n)) for i, n in enumerate(numbers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [replies[i] for i in range(len(numbers))]


def _in_flight(concurrency):
    with ScriptedJudgeServer(latency=0.2) as srv:
        _together(judge_for(srv, concurrency=concurrency), list(range(8)))
        return srv.max_in_flight


def test_the_same_question_asked_at_once_is_sent_once():
    with ScriptedJudgeServer(latency=0.2) as srv:
        j = judge_for(srv, concurrency=8)
        replies = _together(j, [604] * 8)
        assert srv.requests == 1
    assert len({r.data["verdict"] for r in replies}) == 1 and sum(r.cached for r in replies) == 7
    assert j.usage()["m"]["http_calls"] == 1 and j.usage()["m"]["cache_hits"] == 7


def test_concurrency_bounds_calls_in_flight_whoever_makes_them():
    assert _in_flight(2) == 2
    assert _in_flight(8) > 2  # the server itself answers in parallel: the limit above is the client's
