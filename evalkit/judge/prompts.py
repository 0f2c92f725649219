"""Prompts as versioned data files (``evalkit/judge/prompts/*.txt``): YAML front matter + a template.

Front matter: ``name``, ``version`` and ``returns`` (the JSON keys the reply must have, with their
types: list, str, int, number, bool); optionally ``items`` (the type of a list's entries: a type name, or a
mapping of keys to types for a list of objects) and ``extra`` (keys the reply should also carry, such as
``reason``, that are not checked). These make the JSON schema sent as a structured-output request
(:meth:`Prompt.json_schema`). The template fills ``{{variable}}`` placeholders; single braces
are literal, so JSON examples need no escaping. Each prompt's hash and the hash of the whole set
travel with the results.

Examples
--------
>>> p = load_prompts()["answer_correct"]
>>> p.version, sorted(p.returns)
(1, ['verdict'])
>>> "{{" in p.render(question="Q", reference="R", answer="A")
False
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from types import MappingProxyType
from typing import Any, Mapping

import yaml

_VAR = re.compile(r"\{\{(\w+)\}\}")
TYPES = {"list": list, "str": str, "int": int, "number": (int, float), "bool": bool, "dict": dict}
JSON_TYPES = {"list": "array", "str": "string", "int": "integer", "number": "number", "bool": "boolean",
              "dict": "object"}


class PromptError(ValueError):
    """A prompt file is malformed or a variable is missing."""


@dataclass(frozen=True)
class Prompt:
    name: str
    version: int
    returns: Mapping[str, str]
    template: str
    items: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, str] = field(default_factory=dict)

    @property
    def variables(self) -> set[str]:
        return set(_VAR.findall(self.template))

    @property
    def sha256(self) -> str:
        return hashlib.sha256(f"{self.name}|{self.version}|{self.template}".encode()).hexdigest()

    def render(self, **values: Any) -> str:
        missing = self.variables - set(values)
        if missing:
            raise PromptError(f"prompt {self.name!r}: missing variable(s) {sorted(missing)}")
        return _VAR.sub(lambda m: str(values[m.group(1)]), self.template)

    def json_schema(self) -> dict[str, Any]:
        """The JSON schema of the reply, strict in OpenAI's sense (every key required, no other keys).

        >>> load_prompts()["answer_correct"].json_schema()["properties"]
        {'verdict': {'type': 'string'}, 'reason': {'type': 'string'}}
        """
        keys = {**self.returns, **self.extra}
        return _object_schema({k: _type_schema(t, self.items.get(k)) for k, t in keys.items()})

    def check(self, data: Any) -> str | None:
        """None when ``data`` has the expected shape, else what is wrong."""
        if not isinstance(data, dict):
            return f"expected a JSON object, got {type(data).__name__}"
        for key, typ in self.returns.items():
            if key not in data:
                return f"missing key {key!r}"
            want = TYPES[typ]
            v = data[key]
            if isinstance(v, bool) and typ in ("int", "number"):
                return f"key {key!r} should be {typ}, got bool"
            if not isinstance(v, want):
                return f"key {key!r} should be {typ}, got {type(v).__name__}"
        return None


def _type_schema(typ: str, items: Any = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": JSON_TYPES[typ]}
    if typ == "list" and items is not None:
        schema["items"] = _object_schema({k: _type_schema(t) for k, t in items.items()}) \
            if isinstance(items, Mapping) else _type_schema(items)
    return schema


def _object_schema(properties: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": dict(properties), "required": list(properties),
            "additionalProperties": False}


def _check_types(meta: Mapping[str, Any], source: str) -> None:
    bad = {k: v for k, v in meta["returns"].items() if v not in TYPES}
    bad.update({k: v for k, v in (meta.get("extra") or {}).items() if v not in TYPES})
    for key, items in (meta.get("items") or {}).items():
        inner = items.values() if isinstance(items, Mapping) else [items]
        if key not in meta["returns"] or meta["returns"][key] != "list":
            raise PromptError(f"{source}: items names {key!r}, which is not a list in returns")
        bad.update({key: v for v in inner if v not in TYPES})
    if bad:
        raise PromptError(f"{source}: unknown return types {bad}; use {sorted(TYPES)}")


def parse_prompt(text: str, source: str = "<prompt>") -> Prompt:
    m = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.S)
    if not m:
        raise PromptError(f"{source}: expected YAML front matter between '---' lines")
    meta = yaml.safe_load(m.group(1)) or {}
    for key in ("name", "version", "returns"):
        if key not in meta:
            raise PromptError(f"{source}: front matter lacks {key!r}")
    _check_types(meta, source)
    return Prompt(str(meta["name"]), int(meta["version"]), dict(meta["returns"]), m.group(2).strip() + "\n",
                  MappingProxyType(dict(meta.get("items") or {})), MappingProxyType(dict(meta.get("extra") or {})))


@lru_cache(maxsize=None)
def load_prompts() -> dict[str, Prompt]:
    """Every prompt shipped in ``evalkit/judge/prompts``, by name."""
    out = {}
    for f in sorted(resources.files("evalkit.judge").joinpath("prompts").iterdir(), key=lambda p: p.name):
        if f.name.endswith(".txt"):
            p = parse_prompt(f.read_text(encoding="utf-8"), f.name)
            out[p.name] = p
    return out


def prompts_sha256(names: list[str] | None = None) -> str:
    """One hash over the named prompts (all by default), for the run signature."""
    ps = load_prompts()
    names = sorted(names or ps)
    return hashlib.sha256("".join(ps[n].sha256 for n in names).encode()).hexdigest()
