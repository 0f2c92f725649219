"""What judge calls cost: tokens times ``judge.prices`` (currency units per 1000 tokens), per metric and in total.

A price is a mapping ``{"input": X, "output": Y}``: X per 1000 prompt tokens, Y per 1000 completion tokens, in
whatever currency the prices are written in (evalkit never converts). A model without a price has no cost
(``None``), never a cost of 0.

Examples
--------
>>> call_cost(2000, 500, {"input": 0.5, "output": 1.5})
1.75
>>> usage_total({"faithfulness": {"http_calls": 2, "prompt_tokens": 100, "cost": 0.25},
...              "context_recall": {"http_calls": 1, "prompt_tokens": 50, "cost": 0.5}})
{'http_calls': 3.0, 'prompt_tokens': 150.0, 'cost': 0.75}
"""
from __future__ import annotations

from typing import Any, Mapping

TOTALLED = ("http_calls", "cache_hits", "retries", "failures", "repairs", "prompt_tokens", "completion_tokens", "cost")


def call_cost(prompt_tokens: float, completion_tokens: float, price: Mapping[str, float] | None) -> float | None:
    """``prompt_tokens / 1000 * input + completion_tokens / 1000 * output``; None without a price."""
    if not price:
        return None
    return prompt_tokens / 1000.0 * price["input"] + completion_tokens / 1000.0 * price["output"]


def price_for(prices: Mapping[str, Mapping[str, float]] | None, model: str | None) -> Mapping[str, float] | None:
    """The price of ``model`` in ``judge.prices`` (None when it has none)."""
    return (prices or {}).get(model or "") or None


def usage_total(usage: Mapping[str, Mapping[str, Any]] | None) -> dict[str, float]:
    """Calls, tokens and cost summed over metrics; ``cost`` only when every metric that made a call has one."""
    usage = usage or {}
    out: dict[str, float] = {}
    for key in TOTALLED:
        vals = [u.get(key) for u in usage.values()]
        if key == "cost":
            calling = [u for u in usage.values() if u.get("prompt_tokens") or u.get("completion_tokens")]
            if calling and all(u.get("cost") is not None for u in calling):
                out["cost"] = float(sum(u["cost"] for u in calling))
            elif not calling and any(v is not None for v in vals):
                out["cost"] = 0.0
            continue
        if any(v is not None for v in vals):
            out[key] = float(sum(v or 0 for v in vals))
    return out


def cost_text(cost: float | None) -> str:
    """A cost as the usage lines print it (4 significant digits; "no price" without one).

    >>> cost_text(0.000123456), cost_text(12.5), cost_text(None)
    ('0.0001235', '12.5', 'no price')
    """
    return "no price" if cost is None else f"{cost:.4g}"
