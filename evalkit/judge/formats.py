"""Structured outputs: how a judge is asked for JSON, and falling back when a server refuses a way of asking.

``json_schema`` sends the reply's JSON schema (OpenAI's ``{"type": "json_schema", "json_schema": {"name", "schema",
"strict": true}}``; OpenAI and vLLM accept it), ``json_object_schema`` sends it the way llama-cpp-python takes it
(``{"type": "json_object", "schema": ...}``), ``json_object`` asks for any JSON object, ``none`` relies on the
prompt. ``auto`` tries them in that order: when the server rejects a request (HTTP 400/422, or a 500 whose body
names ``response_format``) and the next mode succeeds, the client keeps the next mode for the rest of its life
and warns once. :class:`FormatNegotiator` holds that state for one client; :func:`parse_reply` reads the JSON
out of a reply (fenced or with prose around it).

>>> n = FormatNegotiator("auto", base_url="http://judge")
>>> n.chain(n.current)
['json_schema', 'json_object_schema', 'json_object', 'none']
>>> parse_reply('Sure! ```json {"verdict": 1} ```')
{'verdict': 1}
"""
from __future__ import annotations

import json
import logging
import re
import threading
from collections import Counter
from typing import Any, Mapping

FALLBACK = {"json_schema": "json_object_schema", "json_object_schema": "json_object", "json_object": "none"}
FALLBACK_STATUS = (400, 422, 500)  # 500 only when its body names response_format (see evalkit.judge.transport)
MODES = ("json_schema", "json_object_schema", "json_object", "none")
log = logging.getLogger("evalkit")


class FormatNegotiator:
    """The response format one client asks with now, the chain of modes it may fall back along, and the modes
    that returned answers (for the signature). Thread-safe; a fallback only ever moves forward."""

    def __init__(self, configured: str, base_url: str = ""):
        self.configured, self.base_url = configured, base_url
        self._mode = "json_schema" if configured == "auto" else configured
        self._lock = threading.Lock()
        self.modes_used: Counter = Counter()  # response_format of every answer returned (cached ones too)

    @property
    def current(self) -> str:
        """The mode new requests use now (after any fallback this client made)."""
        with self._lock:
            return self._mode

    def chain(self, mode: str) -> list[str]:
        """``mode`` and, under ``auto``, the modes after it."""
        out = [mode]
        while self.configured == "auto" and out[-1] in FALLBACK:
            out.append(FALLBACK[out[-1]])
        return out

    def used(self, mode: str) -> None:
        with self._lock:
            self.modes_used[mode] += 1

    def used_text(self) -> str:
        """The modes that returned answers, joined by ``/`` (the configured one before any answer)."""
        with self._lock:
            return "/".join(sorted(self.modes_used)) or self.configured

    def fell_back(self, mode: str) -> None:
        """Remember a fallback the server forced (warned once per client: later calls start at ``mode``)."""
        with self._lock:  # only ever forward along the chain, whichever thread gets here first
            before = self._mode
            self._mode = max(before, mode, key=MODES.index)
        if before != self._mode:
            log.warning("judge at %s rejected response_format %s (HTTP %s); using %s from now on (set "
                        "judge.response_format to choose)", self.base_url, before,
                        "/".join(map(str, FALLBACK_STATUS)), self._mode)


def response_format(mode: str, name: str, schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``response_format`` request field of ``mode`` for a reply named ``name`` with JSON ``schema``."""
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": dict(schema), "strict": True}}
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": dict(schema)}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def parse_reply(content: str) -> Any:
    """The JSON object in a reply: the whole text, a fenced block, or the outermost ``{...}`` in prose."""
    text = content.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fence:
        text = fence.group(1).strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        start, end = text.find("{"), text.rfind("}")
        if start >= 0 and end > start:
            return json.loads(text[start:end + 1])
        raise
