"""Structured outputs (judge.response_format) against the scripted judge server on 127.0.0.1: what each mode
sends, how ``auto`` falls back when the server rejects a mode, the mode in the signature and the cache key, and
the valid-JSON rate the client measures."""
import logging

import pytest

from evalkit.base.config import JudgeConfig
from evalkit.judge import JudgeError, OpenAIJudge, load_prompts
from evalkit.judge.cache import JudgeCache
from evalkit.testing import ScriptedJudgeServer

P = load_prompts()
# 40 distinct questions: enough for the hash-chosen malformed share to land strictly between 0 and 1
ANSWERS = [f"The fee for territory {n} is ${n * 7}." for n in range(100, 140)]


def judge_for(srv, cache=None, **kw):
    cfg = {"base_url": srv.url, "model": "scripted", "cache_path": None, "backoff": 0.01, "max_retries": 1, **kw}
    return OpenAIJudge(JudgeConfig(**cfg), cache=cache)


def ask(j, answer="The fee is 604.", metric="m"):
    return j.complete(P["answer_correct"], {"question": "Q?", "reference": "The fee is $604.", "answer": answer},
                      metric=metric)


def test_json_schema_mode_sends_the_prompts_schema():
    with ScriptedJudgeServer() as srv:
        j = judge_for(srv, response_format="json_schema")
        assert ask(j).data["verdict"] == "CORRECT"
        [req] = srv.received
    rf = req["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["name"] == "answer_correct"
    assert rf["json_schema"]["strict"] is True
    # built from the prompt's front matter: returns {verdict: str} plus extra {reason: str}
    assert rf["json_schema"]["schema"] == {"type": "object", "additionalProperties": False,
                                           "properties": {"verdict": {"type": "string"}, "reason": {"type": "string"}},
                                           "required": ["verdict", "reason"]}
    assert j.signature() == "openai-chat:scripted@t0,rf=json_schema"


def test_list_items_get_their_schema():
    schema = P["faithfulness_verdicts"].json_schema()
    item = schema["properties"]["verdicts"]["items"]
    assert item["required"] == ["statement", "verdict", "reason"]
    assert item["properties"]["verdict"] == {"type": "integer"} and not item["additionalProperties"]


@pytest.mark.parametrize("mode, sent", [("json_object", {"type": "json_object"}), ("none", None)])
def test_other_modes_send_what_they_say(mode, sent):
    with ScriptedJudgeServer() as srv:
        j = judge_for(srv, response_format=mode)
        ask(j)
        [req] = srv.received
    assert req.get("response_format") == sent
    assert j.signature() == f"openai-chat:scripted@t0,rf={mode}"


def _valid_rate(srv, mode):
    j = judge_for(srv, response_format=mode)
    for a in ANSWERS:
        ask(j, a)
    return j.usage()["m"]


@pytest.mark.parametrize("mode", ["json_object", "none"])
def test_valid_json_rate_without_a_schema_counts_the_servers_malformed_replies(mode):
    with ScriptedJudgeServer(malformed_share=0.3) as srv:
        u = _valid_rate(srv, mode)
        malformed = srv.malformed_sent
    # the server decided which replies to break; the client measured it from what it received
    assert 0 < malformed < len(ANSWERS)
    assert u["first_replies"] == len(ANSWERS) and u["valid_json"] == len(ANSWERS) - malformed
    assert u["valid_json_rate"] == pytest.approx(1 - malformed / len(ANSWERS))
    assert u["repairs"] == malformed and not u.get("failures")  # each repaired once, then valid


def test_valid_json_rate_with_a_schema_is_one_on_a_server_that_honours_it():
    with ScriptedJudgeServer(malformed_share=0.3) as srv:
        u = _valid_rate(srv, "json_schema")
        assert srv.malformed_sent == 0
    assert u["valid_json_rate"] == 1.0 and not u.get("repairs")


def test_auto_falls_back_to_json_object_and_remembers(caplog):
    with ScriptedJudgeServer(rejects=("json_schema", "json_object+schema")) as srv:
        j = judge_for(srv)
        assert j.response_format == "json_schema"
        with caplog.at_level(logging.WARNING, logger="evalkit"):
            for a in ANSWERS[:3]:
                assert ask(j, a).data["verdict"] in ("CORRECT", "WRONG")
        # one rejected request per refused mode, then every request in the mode that worked
        assert srv.response_formats == {"json_schema": 1, "json_object+schema": 1, "json_object": 3}
    assert j.response_format == "json_object" and j.signature() == "openai-chat:scripted@t0,rf=json_object"
    warnings = [r.getMessage() for r in caplog.records if "rejected response_format" in r.getMessage()]
    assert len(warnings) == 1 and "using json_object from now on" in warnings[0]
    u = j.usage()["m"]
    assert not u.get("failures") and u["http_calls"] == 5  # the rejected requests are calls, not failures


def test_auto_falls_back_to_the_prompt_alone_when_json_mode_is_rejected_too():
    with ScriptedJudgeServer(rejects=("json_schema", "json_object+schema", "json_object")) as srv:
        j = judge_for(srv)
        ask(j)
        ask(j, "The fee is 605.")
        assert srv.response_formats == {"json_schema": 1, "json_object+schema": 1, "json_object": 1, "none": 2}
    assert j.response_format == "none" and j.signature() == "openai-chat:scripted@t0,rf=none"


def test_a_400_that_no_mode_cures_is_an_error_and_changes_nothing():
    with ScriptedJudgeServer() as srv:
        j = judge_for(srv)
        with pytest.raises(JudgeError, match="HTTP 400"):
            ask(j, "FAULT_400")
        assert srv.response_formats == {"json_schema": 1, "json_object+schema": 1, "json_object": 1, "none": 1}
        assert j.response_format == "json_schema" and j.usage()["m"]["failures"] == 1


def test_a_stated_mode_does_not_fall_back():
    with ScriptedJudgeServer(rejects=("json_schema",)) as srv:
        j = judge_for(srv, response_format="json_schema")
        with pytest.raises(JudgeError, match="HTTP 400.*json_schema"):
            ask(j)
        assert srv.requests == 1 and j.response_format == "json_schema"


def test_the_mode_is_in_the_cache_key():
    cache = JudgeCache(None)
    with ScriptedJudgeServer() as srv:
        ask(judge_for(srv, cache, response_format="json_object"))
        ask(judge_for(srv, cache, response_format="json_object"))
        assert srv.requests == 1  # the same mode replays
        ask(judge_for(srv, cache, response_format="json_schema"))
        assert srv.requests == 2  # another mode is another request


def test_a_rerun_after_a_fallback_replays_the_cache_with_zero_calls():
    cache = JudgeCache(None)
    with ScriptedJudgeServer(rejects=("json_schema", "json_object+schema")) as srv:
        first = judge_for(srv, cache)
        answers = [ask(first, a).data for a in ANSWERS[:5]]
        calls = srv.requests
        second = judge_for(srv, cache)  # a new client starts at json_schema again
        assert [ask(second, a).data for a in ANSWERS[:5]] == answers
        assert srv.requests == calls and second.usage()["m"]["cache_hits"] == 5
    assert second.signature() == "openai-chat:scripted@t0,rf=json_object"


def test_response_format_from_environment_and_validation():
    env = {"EVALKIT_JUDGE_RESPONSE_FORMAT": "json_object", "EVALKIT_JUDGE_REPEATS": "3", "EVALKIT_JUDGE_SEED": "7"}
    cfg = JudgeConfig.resolve({}, env=env)
    assert (cfg.response_format, cfg.repeats, cfg.seed) == ("json_object", 3, 7)
    assert JudgeConfig.resolve({"response_format": "none"}, env=env).response_format == "none"  # config wins
    with pytest.raises(ValueError, match="response_format must be one of"):
        JudgeConfig(response_format="xml")
    with pytest.raises(ValueError, match="repeats must be an integer >= 1"):
        JudgeConfig(repeats=0)
    assert JudgeConfig(json_mode=False).response_format == "none"  # the older switch keeps its meaning


def test_auto_sends_the_schema_the_llama_cpp_way_when_the_server_refuses_json_schema_with_a_500():
    """llama-cpp-python 0.3.36 answers OpenAI's json_schema type with HTTP 500 naming response_format (seen against
    the real server, tests/test_server_llama.py); it takes the schema inside a json_object instead."""
    with ScriptedJudgeServer(rejects=("json_schema",), reject_status=500) as srv:
        j = judge_for(srv)
        for a in ANSWERS[:3]:
            assert ask(j, a).data["verdict"] in ("CORRECT", "WRONG")
        assert srv.response_formats == {"json_schema": 1, "json_object+schema": 3}  # no retries of the 500
        sent = [r["response_format"] for r in srv.received][-1]
        assert sent["type"] == "json_object" and sent["schema"]["type"] == "object"
    assert j.signature() == "openai-chat:scripted@t0,rf=json_object_schema" and not j.usage()["m"].get("failures")


def test_a_500_that_does_not_name_response_format_is_retried_not_a_format_refusal():
    with ScriptedJudgeServer() as srv:  # FAULT_500: a plain server error, retried like any 5xx
        j = judge_for(srv, max_retries=1)
        with pytest.raises(JudgeError, match="after 2 attempts; last error: HTTP 500"):
            ask(j, "FAULT_500")
        assert srv.response_formats == {"json_schema": 2} and j.response_format == "json_schema"


# --- issue 40: a judge that answers the schema minimally (one verdict for three passages) ----------------------
THREE = ["The base premium is $604 per year.", "Territory 118 covers the north shore.", "Office hours are 9 to 5."]


def test_the_context_verdicts_schema_is_pinned_to_the_rows_passages():
    from evalkit.metrics.judged import context_precision

    with ScriptedJudgeServer() as srv:
        context_precision("What is the base premium?", THREE, "$604 per year.",
                          judge=judge_for(srv, response_format="json_schema"))
        [req] = srv.received
    verdicts = req["response_format"]["json_schema"]["schema"]["properties"]["verdicts"]
    assert (verdicts["minItems"], verdicts["maxItems"]) == (3, 3)
    assert verdicts["items"]["properties"]["context"] == {"type": "integer", "enum": [1, 2, 3]}


def test_a_judge_that_miscounts_twice_is_asked_one_passage_at_a_time():
    from evalkit.metrics.judged import context_precision, context_recall

    # the server answers every context_verdicts prompt with one verdict (useful) and one attributed statement,
    # whatever the number of passages: a small model answering the schema minimally
    one = {"verdicts": [{"context": 1, "verdict": 1, "reason": "r"}],
           "classifications": [{"statement": "$604 per year.", "attributed": 1, "reason": "r"}]}
    with ScriptedJudgeServer(replies=[{"when": "REFERENCE ANSWER:", "reply": one}]) as srv:
        j = judge_for(srv)
        s = context_precision("What is the base premium?", THREE, "$604 per year.", judge=j)
        # by hand: the 3-passage request and its one repair miscount (2 calls); then one call per passage, each
        # answered with a valid single verdict, 1: mean 3/3 = 100; then the statements, asked as before (1 call)
        assert srv.requests == 2 + 3 + 1
        assert s.value == 100.0 and [v["verdict"] for v in s.details["verdicts"]] == [1, 1, 1]
        assert s.details["reason"] == "the judge miscounted the passages twice: each was asked alone"
        r = context_recall("What is the base premium?", THREE, "$604 per year.", judge=j)
        # a miscounted reply is not cached, so recall asks the 3-passage request and its repair again (2 calls);
        # the per-passage verdicts and the statements then come from the cache
        assert r.value == 100.0 and srv.requests == 6 + 2
    with ScriptedJudgeServer(replies=[{"when": "REFERENCE ANSWER:", "reply": one}]) as srv:  # one passage: no
        assert context_precision("Q?", THREE[:1], "$604 per year.", judge=judge_for(srv)).value == 100.0
        assert srv.requests == 1                                                      # fallback needed


def test_the_run_summary_counts_repaired_replies_and_rows_asked_per_passage(tmp_path, monkeypatch, capsys):
    import json

    from evalkit import cli

    one = {"verdicts": [{"context": 1, "verdict": 1, "reason": "r"}],
           "classifications": [{"statement": "$604 per year.", "attributed": 1, "reason": "r"}]}
    rows = [{"question": "What is the base premium?", "answer": "$604.", "contexts": THREE,
             "ground_truth": "$604 per year."},
            {"question": "Which territory?", "answer": "118.", "contexts": THREE[:1], "ground_truth": "Territory 118."},
            {"question": "When is the office open?", "answer": "9 to 5.", "contexts": THREE[1:],
             "ground_truth": "From 9 to 5."}]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with ScriptedJudgeServer(replies=[{"when": "REFERENCE ANSWER:", "reply": one}]) as srv:
        (tmp_path / "c.yaml").write_text(f"judge: {{base_url: '{srv.url}', model: scripted, cache_path: null, "
                                         "backoff: 0.01}\n")
        monkeypatch.chdir(tmp_path)
        rc = cli.main(["score", "d.jsonl", "--config", "c.yaml", "--metrics", "context_precision", "-o", "o.parquet"])
    out = capsys.readouterr().out
    assert rc == 0
    # by hand: rows 1 (3 passages) and 3 (2 passages) miscount, are repaired once each and still miscount, so each
    # is asked one passage at a time; row 2 has one passage and one verdict: no repair
    assert "2 replies repaired" in out, out
    assert "judge context_precision: 2 rows asked one passage at a time" in out, out
