"""One role call over chat completions: structured output, one repair, fallback, metering.

The order of defence: the transport retries what is transient (:mod:`.transport`); an answer
that cannot be used (not JSON, wrong shape, refused, cut off) is sent back to the model once
with the problem; after that, or when the server stays unavailable, the role's fallback answers
and the reason is recorded. A wrong key or an unknown model is raised, never retried: no
fallback can fix it, and every further call would fail the same way.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import openai
from openai.types.chat import ChatCompletion
from pydantic import BaseModel

from ragq.errors import ProviderAuthError, ProviderError, ProviderModelNotFoundError
from ragq.orchestration.backoff import RetryPolicy
from ragq.providers.openai import prompts
from ragq.providers.openai.metering import Meter, describe
from ragq.providers.openai.transport import is_retryable, send
from ragq.providers.openai.wire import strict_schema
from ragq.schemas.flow import ModelRole, RoleModels, Usage
from ragq.schemas.pricing import PriceTable

log = logging.getLogger(__name__)

#: The chat endpoint, relative to the client's base URL.
COMPLETIONS = "/chat/completions"
W = TypeVar("W", bound=BaseModel)
T = TypeVar("T")


class OutputError(ValueError):
    """An answer arrived but cannot be used: refused, cut off, or empty."""


@dataclass(frozen=True)
class RoleCall(Generic[W, T]):
    """What one role asks: its messages, the wire model of the answer, how that becomes the
    role's contract, and what answers when the model cannot (given the reason)."""

    role: ModelRole
    messages: prompts.Messages
    wire: type[W]
    convert: Callable[[W], T]
    fallback: Callable[[str], T]


def rejects_json_schema(exc: openai.OpenAIError) -> bool:
    """True when a server says it cannot do ``response_format`` json_schema (HTTP 400/422)."""
    if not isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError):
        return False
    text = str(exc).lower()
    return "response_format" in text or "json_schema" in text


def checked_content(completion: Any) -> str:
    """The answer text; raises :class:`OutputError` for a refusal, a cut-off or no text."""
    if not getattr(completion, "choices", None):
        raise OutputError("the response has no choices")
    choice = completion.choices[0]
    refusal = getattr(choice.message, "refusal", None)
    if refusal:
        raise OutputError(f"the model refused: {refusal}")
    if choice.finish_reason == "length":
        raise OutputError("the answer was cut off (finish_reason=length): answer shorter")
    if not choice.message.content:
        raise OutputError("the answer is empty")
    return str(choice.message.content)


class RoleCaller:
    """Runs :class:`RoleCall` s against one server. Remembers, for its lifetime, that the server
    lacks strict JSON-schema support once it said so, and then asks for ``json_object``."""

    def __init__(self, client: openai.OpenAI, *, default_model: str, models: RoleModels,
                 prices: PriceTable, policy: RetryPolicy,
                 sleep: Callable[[float], None] = time.sleep,
                 rand: Callable[[], float] = random.random):
        self.client = client
        self.default_model = default_model
        self.models = models
        self.prices = prices
        self.policy = policy
        self.json_object_mode = False
        self._sleep = sleep
        self._rand = rand

    def run(self, call: RoleCall[W, T]) -> tuple[T, Usage]:
        """The role's answer and its usage; raises :class:`ProviderAuthError` (401/403) or
        :class:`ProviderModelNotFoundError` (404) with the attempts in ``usage``."""
        meter = Meter(self.models.for_role(call.role, self.default_model), self.prices)
        messages, problem = list(call.messages), ""
        for _ in range(2):  # the answer, then one repair
            try:
                completion = self._complete(call, messages, meter)
            except openai.OpenAIError as exc:
                self._raise_fatal(exc, call.role, meter)
                return self._fall_back(call, meter, f"no answer from the server: {describe(exc)}")
            try:
                content = checked_content(completion)
                return call.convert(call.wire.model_validate_json(content)), meter.usage()
            except ValueError as exc:  # OutputError, pydantic's ValidationError, convert's
                problem = " ".join(str(exc).split())[:600]
                meter.reject_last(problem)
                messages = [*call.messages,
                            {"role": "assistant", "content": _raw_content(completion) or "-"},
                            {"role": "user", "content": prompts.repair(problem)}]
        return self._fall_back(call, meter, f"unusable answer after one repair: {problem}")

    def _complete(self, call: RoleCall[W, T], messages: prompts.Messages, meter: Meter) -> Any:
        try:
            return self._request(call, messages, meter)
        except openai.OpenAIError as exc:
            if self.json_object_mode or not rejects_json_schema(exc):
                raise
            log.warning("role=%s model=%s: the server rejects json_schema; using json_object "
                        "from now on", call.role.value, meter.model)
            self.json_object_mode = True
            return self._request(call, messages, meter)

    def _request(self, call: RoleCall[W, T], messages: prompts.Messages, meter: Meter) -> Any:
        """One completion (after the transport's retries), metered."""
        schema = strict_schema(call.wire)
        if self.json_object_mode:
            fmt: dict[str, Any] = {"type": "json_object"}
            first = messages[0]
            messages = [{**first, "content": first["content"] + "\n"
                         + prompts.json_object_instructions(schema)}, *messages[1:]]
        else:
            fmt = {"type": "json_schema", "json_schema": {
                "name": f"ragq_{call.role.value}", "schema": schema, "strict": True}}
        body = {"model": meter.model, "messages": messages, "response_format": fmt,
                "temperature": 0}
        # Posted as the plain JSON it already is: ``chat.completions.create`` walks every
        # message through the client's typed-dict transform first, which changes nothing here
        # and was an eighth of a job's CPU. Same client, same endpoint, same response type.
        completion, latency = send(
            lambda: self.client.post(COMPLETIONS, body=body, cast_to=ChatCompletion),
            self.policy, on_failure=meter.failed, sleep=self._sleep, rand=self._rand)
        meter.answered(getattr(completion, "usage", None), messages, _raw_content(completion),
                       latency)
        return completion

    def _raise_fatal(self, exc: openai.OpenAIError, role: ModelRole, meter: Meter) -> None:
        kind: type[ProviderError] | None = None
        hint = ""
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            kind, hint = ProviderAuthError, "the API key was rejected: check RAGQ_OPENAI_API_KEY"
        elif isinstance(exc, openai.NotFoundError):
            kind, hint = ProviderModelNotFoundError, (
                f"model {meter.model!r} (or the endpoint) is unknown: check RAGQ_OPENAI_MODEL, "
                "RAGQ_OPENAI_MODELS and RAGQ_OPENAI_BASE_URL")
        if kind is None:
            if not is_retryable(exc):
                log.warning("role=%s model=%s request refused: %s", role.value, meter.model,
                            describe(exc))
            return
        raise kind(f"the model server at {self.client.base_url} answered HTTP "
                   f"{getattr(exc, 'status_code', '?')} for role {role.value}: {hint}",
                   role=role.value, model=meter.model,
                   status_code=getattr(exc, "status_code", None), usage=meter.usage()) from exc

    def _fall_back(self, call: RoleCall[W, T], meter: Meter, reason: str) -> tuple[T, Usage]:
        log.warning("role=%s model=%s falls back: %s", call.role.value, meter.model, reason)
        meter.fell_back(reason)
        return call.fallback(reason), meter.usage()


def _raw_content(completion: Any) -> str:
    if not getattr(completion, "choices", None):
        return ""
    return str(completion.choices[0].message.content or "")

