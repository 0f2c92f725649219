"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests, benchmarks and offline demos.

It is **not** an LLM: it recognises evalkit's prompts and answers them with simple, deterministic
lexical rules (word and number overlap), so the whole judge path (HTTP, retries, cache, JSON repair,
metrics) runs for real with no network. Numbers it produces are heuristics; never report them as a
judge's.

Fault triggers, by a marker anywhere in the prompt:
``FAULT_429`` (first request for that body answers 429, then succeeds), ``FAULT_500`` (always 500),
``FAULT_STALL`` (replies after ``stall_seconds``), ``FAULT_BADJSON`` (non-JSON first, valid JSON to the
repair request), ``FAULT_GARBAGE`` (never JSON).

Examples
--------
>>> with ScriptedJudgeServer() as srv:
...     srv.url.startswith("http://127.0.0.1:")
True
"""
from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Mapping

from ..text import content_words, extract_numbers, stop_words, word_tokens


_FIELDS = "QUESTION|CONTEXT|REFERENCE ANSWER|ANSWER|STATEMENTS|ARTICLE|SUMMARY|KEY POINTS"


def _field(prompt: str, name: str) -> str:
    m = re.search(rf"(?:^|\n){name}:\s*\n?(.*?)(?=\n+(?:{_FIELDS}):|\n\nReply with JSON)", prompt, re.S)
    return m.group(1).strip() if m else ""


def _content_words(text: str) -> set[str]:
    return set(content_words(text, min_len=3))


def _support(statement: str, context: str) -> float:
    words = _content_words(statement)
    ctx = _content_words(context)
    nums = {n.key for n in extract_numbers(statement)}
    if nums and not nums <= {n.key for n in extract_numbers(context)}:
        return 0.0
    return len(words & ctx) / len(words) if words else 1.0


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if len(word_tokens(s)) >= 2]


def ragas_reply(prompt: str) -> dict[str, Any] | None:
    """The deterministic JSON answer to one of ragas 0.4's collection prompts (None if not one)."""
    m = re.search(r"Now perform the same with the following input\s*\ninput: (\{.*\})\s*\nOutput:\s*$", prompt, re.S)
    t = re.search(r'"title":\s*"(\w+Output)"', prompt)
    if not m or not t:
        return None
    data, title = json.loads(m.group(1)), t.group(1)
    if title == "StatementGeneratorOutput":
        return {"statements": _sentences(data.get("answer", ""))}
    if title == "NLIStatementOutput":
        ctx = data.get("context", "")
        return {"statements": [{"statement": s, "reason": "scripted", "verdict": int(_support(s, ctx) >= 0.6)}
                               for s in data.get("statements", [])]}
    if title == "ContextRecallOutput":
        ctx = data.get("context", "")
        return {"classifications": [{"statement": s, "reason": "scripted", "attributed": int(_support(s, ctx) >= 0.5)}
                                    for s in _sentences(data.get("answer", ""))]}
    if title == "ContextPrecisionOutput":
        return {"reason": "scripted", "verdict": int(_support(data.get("answer", ""), data.get("context", "")) >= 0.3)}
    return None


_LABELER: Any = None


def summary_reply(prompt: str) -> dict[str, Any] | None:
    """Answers to the summary-label prompts, from evalkit's offline labeler (so the judge path is testable)."""
    global _LABELER
    if "ARTICLE:" not in prompt and "KEY POINTS:" not in prompt:
        return None
    from ..summary_labels import OfflineLabeler, _recall

    if _LABELER is None:
        _LABELER = OfflineLabeler()
    article, summary = _field(prompt, "ARTICLE"), _field(prompt, "SUMMARY")
    if "most important key points" in prompt:
        n_min = int(re.search(r"List the (\d+) to 7", prompt).group(1))
        variant = "judge" if n_min == 4 else "twin"
        return {"key_points": [k["text"] for k in _LABELER.labels(article, "", variant)["coverage"]["key_points"]]}
    if "KEY POINTS:" in prompt:
        kps = [re.sub(r"^\d+\.\s*", "", k) for k in _field(prompt, "KEY POINTS").splitlines() if k.strip()]
        words = set(content_words(summary))
        statuses = ["Fully" if _recall(k, words) >= 0.6 else ("Partial" if _recall(k, words) >= 0.3 else "Not")
                    for k in kps]
        return {"statuses": statuses, "extraneous_claims": [], "extraneous_tokens": 0}
    lab = _LABELER.labels(article, summary, "judge")
    if "factual claims. Label each" in prompt:
        return {"claims": [{"text": c["text"], "label": c["label"], "evidence": (c["evidence"] or [""])[0]}
                           for c in lab["hallucination"]["claims"]]}
    if "intent, stance and tone" in prompt:
        return {"statement": lab["alignment"]["statement"], "deviations": lab["alignment"]["deviations"],
                **lab["bias_toxicity"]}
    if "theme in at most 20 words" in prompt:
        strip = lambda q: {k: q[k] for k in ("question", "answer", "score", "span")}  # noqa: E731
        return {"theme": lab["relevance"]["theme"], "coverage_qag": [strip(q) for q in lab["coverage"]["qag"]],
                "hallucination_qag": [strip(q) for q in lab["hallucination"]["qag"]]}
    return None


def scripted_reply(prompt: str) -> dict[str, Any]:
    """The deterministic JSON answer to one of evalkit's (or ragas') prompts."""
    ragas = ragas_reply(prompt)
    if ragas is not None:
        return ragas
    summ = summary_reply(prompt)
    if summ is not None:
        return summ
    if "standalone factual statements" in prompt:
        answer = _field(prompt, "ANSWER")
        if re.search(r"\b(don't|do not) know\b|not sure|no information", answer, re.I):
            return {"statements": []}
        return {"statements": _sentences(answer)}
    if "numbered STATEMENT" in prompt:
        context = _field(prompt, "CONTEXT")
        stmts = [re.sub(r"^\d+\.\s*", "", s) for s in _field(prompt, "STATEMENTS").splitlines() if s.strip()]
        return {"verdicts": [{"statement": s, "verdict": int(_support(s, context) >= 0.6),
                              "reason": "scripted: word/number overlap"} for s in stmts]}
    if "was useful for arriving" in prompt:
        return {"verdict": int(_support(_field(prompt, "REFERENCE ANSWER"), _field(prompt, "CONTEXT")) >= 0.3),
                "reason": "scripted"}
    if "Split the REFERENCE ANSWER" in prompt:
        ctx = _field(prompt, "CONTEXT")
        return {"classifications": [{"statement": s, "attributed": int(_support(s, ctx) >= 0.5), "reason": "scripted"}
                                    for s in _sentences(_field(prompt, "REFERENCE ANSWER"))]}
    if "questions that the ANSWER" in prompt:
        answer = _field(prompt, "ANSWER")
        n = int(re.search(r"Write (\d+)", prompt).group(1))
        words = [w for w in word_tokens(answer) if w not in stop_words("sklearn")] or ["it"]
        qs = [f"What {' '.join(words[i:i + 6])}?" for i in range(0, n * 2, 2)][:n]
        nc = int(bool(re.search(r"\b(don't|do not) know\b|not sure|no information", answer, re.I)))
        return {"questions": qs, "noncommittal": nc}
    if "Rate how directly" in prompt:
        q, a = _content_words(_field(prompt, "QUESTION")), _content_words(_field(prompt, "ANSWER"))
        return {"score": round(len(q & a) / len(q), 3) if q else 0.0, "reason": "scripted"}
    if "grading an ANSWER against the REFERENCE" in prompt:
        ref, ans = _field(prompt, "REFERENCE ANSWER"), _field(prompt, "ANSWER")
        ref_nums = {n.key for n in extract_numbers(ref)}
        ans_nums = {n.key for n in extract_numbers(ans)}
        cov = _support(ref, ans) if not ref_nums else len(ref_nums & ans_nums) / len(ref_nums)
        words = _content_words(ref)
        comp = len(words & _content_words(ans)) / len(words) if words else 1.0
        consistent = not (ans_nums - ref_nums)
        return {"reasoning": "scripted", "correctness": round(10 * cov), "completeness": round(10 * comp),
                "consistency": 10 if consistent else 4}
    if '"CORRECT" if the answer' in prompt:
        ref, ans = _field(prompt, "REFERENCE ANSWER"), _field(prompt, "ANSWER")
        ok = _support(ref, ans) >= 0.5 if not extract_numbers(ref) else \
            {n.key for n in extract_numbers(ref)} <= {n.key for n in extract_numbers(ans)}
        return {"verdict": "CORRECT" if ok else "WRONG", "reason": "scripted"}
    return {"error": "scripted server does not know this prompt"}


class _Handler(BaseHTTPRequestHandler):
    server: "ScriptedJudgeServer._HTTP"

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # noqa: N802
        owner = self.server.owner
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with owner.lock:
            owner.requests += 1
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        req = json.loads(raw)
        messages = req.get("messages", [])
        user = "\n".join(m["content"] for m in messages if m["role"] == "user")
        first_user = next((m["content"] for m in messages if m["role"] == "user"), "")
        is_repair = len(messages) > 2
        key = hashlib.sha256(raw).hexdigest()
        with owner.lock:
            owner.bodies[key] += 1
            owner.prompts[hashlib.sha256(first_user.encode()).hexdigest()] += 1
            seen = owner.bodies[key]
        if "FAULT_500" in user:
            self._send(500, {"error": {"message": "scripted server error"}})
            return
        if "FAULT_429" in user and seen == 1:
            self._send(429, {"error": {"message": "rate limited"}}, {"Retry-After": "0"})
            return
        if "FAULT_STALL" in user:
            time.sleep(owner.stall_seconds)
        if "FAULT_GARBAGE" in user or ("FAULT_BADJSON" in user and not is_repair):
            content = "Sure! Here is my assessment: the answer looks fine."
        else:
            content = json.dumps(scripted_reply(first_user))
        ntok = len(user.split())
        self._send(200, {"id": f"scripted-{owner.requests}", "object": "chat.completion", "model": req.get("model"),
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": content}}],
                         "usage": {"prompt_tokens": ntok, "completion_tokens": len(content.split()),
                                   "total_tokens": ntok + len(content.split())}})


class ScriptedJudgeServer:
    """Start with ``with ScriptedJudgeServer() as srv:``; ``srv.url`` is the base URL (``.../v1``);
    ``srv.requests`` counts every HTTP request received."""

    class _HTTP(ThreadingHTTPServer):
        daemon_threads = True
        owner: "ScriptedJudgeServer"

    def __init__(self, host: str = "127.0.0.1", port: int = 0, stall_seconds: float = 3.0):
        self.lock = threading.Lock()
        self.requests = 0
        self.bodies: Counter = Counter()
        self.prompts: Counter = Counter()
        self.stall_seconds = stall_seconds
        self._httpd = self._HTTP((host, port), _Handler)
        self._httpd.owner = self
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> "ScriptedJudgeServer":
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
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
    """
    from .client import JudgeConfig

    cfg = dict(judge or {})
    if JudgeConfig.resolve(cfg).configured:
        return cfg, None
    server = ScriptedJudgeServer().start()
    cfg.update({"base_url": server.url, "model": "scripted-loopback", "cache_path": None})
    return cfg, server
