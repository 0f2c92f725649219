"""Persistent cache of judge calls in SQLite, keyed by backend, model, messages and generation parameters.

Every successful call is committed as soon as it returns, so a run that was killed half-way resumes
without repeating finished calls, and re-running the same scoring makes zero HTTP calls. Safe to share
between threads (one connection per thread, WAL journal).
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any


def request_key(backend: str, model: str, messages: list[dict], params: dict[str, Any], *, endpoint: str = "",
                repeat: int | None = None) -> str:
    """The cache key: everything that changes the answer (the endpoint too, unless it is given empty; the repeat
    index of a repeated call, so each repeat keeps its own answer)."""
    fields: dict[str, Any] = {"backend": backend, "model": model, "messages": messages, "params": params}
    if endpoint:
        fields["endpoint"] = endpoint
    if repeat is not None:
        fields["repeat"] = repeat
    blob = json.dumps(fields, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


class JudgeCache:
    """``get(key)`` / ``put(key, value)`` on an SQLite file; ``path=None`` keeps it in memory."""

    def __init__(self, path: str | Path | None):
        self.path = str(path) if path else ":memory:"
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._memory_conn = sqlite3.connect(":memory:", check_same_thread=False) if not path else None
        self._init(self._conn())

    def _conn(self) -> sqlite3.Connection:
        if self._memory_conn is not None:
            return self._memory_conn
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30)
            conn.execute("PRAGMA journal_mode=WAL")
            self._local.conn = conn
        return conn

    @staticmethod
    def _init(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.commit()

    def get(self, key: str) -> Any | None:
        with self._lock:
            row = self._conn().execute("SELECT value FROM calls WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value: Any) -> None:
        with self._lock:
            conn = self._conn()
            conn.execute("INSERT OR REPLACE INTO calls (key, value) VALUES (?, ?)", (key, json.dumps(value)))
            conn.commit()

    def output_tokens_by_prompt(self) -> dict[str, float]:
        """The mean ``completion_tokens`` of the cached replies, per prompt name (replies cached before the name was
        stored, or without usage, are not counted).

        >>> c = JudgeCache(None)
        >>> c.put("k1", {"data": {}, "usage": {"completion_tokens": 10}, "prompt": "p"})
        >>> c.put("k2", {"data": {}, "usage": {"completion_tokens": 20}, "prompt": "p"})
        >>> c.put("k3", {"data": {}, "usage": {}})
        >>> c.output_tokens_by_prompt()
        {'p': 15.0}
        """
        with self._lock:
            rows = self._conn().execute(
                "SELECT json_extract(value, '$.prompt'), AVG(json_extract(value, '$.usage.completion_tokens')) "
                "FROM calls WHERE json_extract(value, '$.prompt') IS NOT NULL "
                "AND json_extract(value, '$.usage.completion_tokens') IS NOT NULL GROUP BY 1").fetchall()
        return {name: float(mean) for name, mean in rows}

    def __len__(self) -> int:
        with self._lock:
            return self._conn().execute("SELECT COUNT(*) FROM calls").fetchone()[0]
