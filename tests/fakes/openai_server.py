"""A fake OpenAI-compatible server on loopback HTTP, driven by the real ``openai`` client.

``POST /v1/embeddings`` answers deterministic vectors derived from a hash of each text, in the
API's shape (``data[].index``, ``usage``, float or base64 encoding). ``POST /v1/chat/completions``
answers each ragq role by rule (:mod:`tests.fakes.openai_chat`) unless a test scripted the next
answers (:meth:`FakeOpenAIServer.script`); it counts requests per role and the tokens it
reported. Errors come in the API's error shape.
"""

from __future__ import annotations

import base64
import hashlib
import random
import struct
from collections import Counter, deque
from typing import Any

from tests.fakes.http import LoopbackServer, Reply, Request
from tests.fakes.openai_chat import ChatAnswer, completion, role_of, rule_answer

EMBEDDINGS = "/v1/embeddings"
CHAT = "/v1/chat/completions"
Scripted = Reply | ChatAnswer

_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}


def fake_embedding(text: str, dim: int) -> list[float]:
    """The vector the fake returns for ``text``: seeded by its sha256, deliberately not unit."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    rng = random.Random(seed)
    return [rng.uniform(-1.0, 1.0) * 3.0 for _ in range(dim)]


def openai_error(
    status: int, message: str | None = None, *, headers: dict[str, str] | None = None
) -> Reply:
    """A reply in the OpenAI error shape for ``status``."""
    kind, code = _ERROR_TYPES.get(status, ("server_error", None))
    body = {"error": {"message": message or f"fake error {status}", "type": kind, "code": code}}
    return Reply(status, body, headers or {})


class FakeOpenAIServer(LoopbackServer):
    """Loopback OpenAI API. ``api_key``: when set, other keys get 401.

    ``dim`` is the length of every vector; ``reverse_order`` returns ``data`` last-index-first
    (the API allows any order, clients must sort by ``index``). Chat knobs:
    ``supports_json_schema=False`` answers 400 to ``response_format`` json_schema (as servers
    without strict structured output do); ``omit_usage`` leaves ``usage`` out of completions;
    ``chat_delay_s`` delays every completion.
    """

    def __init__(
        self, *, dim: int = 8, api_key: str | None = "sk-test", reverse_order: bool = False
    ):
        super().__init__()
        self.dim = dim
        self.api_key = api_key
        self.reverse_order = reverse_order
        self.supports_json_schema = True
        self.omit_usage = False
        self.chat_delay_s = 0.0
        self._delays: dict[str, deque[float]] = {}
        self.chat_by_role: Counter[str] = Counter()
        self.reported_prompt_tokens = 0
        self.reported_completion_tokens = 0
        self._scripts: dict[str | None, deque[Scripted]] = {}
        self.route("POST", EMBEDDINGS, self._embeddings)
        self.route("POST", CHAT, self._chat)

    @property
    def v1_url(self) -> str:
        """The ``base_url`` an OpenAI client takes."""
        return f"{self.base_url}/v1"

    @property
    def embedding_requests(self) -> int:
        return self.count("POST", EMBEDDINGS)

    def fail(self, status: int, *, times: int | None = 1, message: str | None = None) -> None:
        """Answer the next ``times`` requests (None: all) with an API error of ``status``."""
        self.fail_next(openai_error(status, message), times=times)

    @property
    def chat_requests(self) -> int:
        """Chat requests received, answered or not (401s and injected faults included)."""
        return self.count("POST", CHAT)

    @property
    def chat_bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of the chat requests, in order."""
        with self._lock:
            return [r.json() for r in self.requests if r.path == CHAT]

    def script(self, role: str | None, *answers: Scripted) -> None:
        """Answer the next requests of ``role`` (None: of any role) with ``answers`` in order,
        before any rule: a :class:`ChatAnswer` (content, truncation, refusal, delay) or any
        HTTP :class:`Reply` (an error with headers, a slow reply)."""
        with self._lock:
            self._scripts.setdefault(role, deque()).extend(answers)

    def delay(self, role: str, seconds: float, *, times: int = 1) -> None:
        """Hold the next ``times`` rule-based answers to ``role`` for ``seconds`` (a slow model
        call that a test can interrupt, e.g. by killing the worker making it)."""
        with self._lock:
            self._delays.setdefault(role, deque()).extend([seconds] * times)

    def handle(self, request: Request) -> Reply:
        if request.path == CHAT:
            role = role_of(request.json() or {})
            with self._lock:
                self.chat_by_role[role] += 1
        if self.api_key and request.headers.get("authorization") != f"Bearer {self.api_key}":
            with self._lock:
                self.requests.append(request)
            return openai_error(401, "Incorrect API key provided")
        return super().handle(request)

    def _embeddings(self, request: Request) -> Reply:
        body = request.json()
        inputs = body.get("input")
        texts = [inputs] if isinstance(inputs, str) else inputs
        if (
            not isinstance(texts, list)
            or not texts
            or not all(isinstance(t, str) and t for t in texts)
        ):
            return openai_error(400, "'input' must be a non-empty string or array of them")
        b64 = body.get("encoding_format") == "base64"
        vectors = [_encode(fake_embedding(t, self.dim), b64) for t in texts]
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        if self.reverse_order:
            data.reverse()
        tokens = sum(len(t.split()) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        model = body.get("model")
        return Reply(200, {"object": "list", "data": data, "model": model, "usage": usage})

    def _chat(self, request: Request) -> Reply:
        body = request.json()
        role = role_of(body)
        wants_schema = (body.get("response_format") or {}).get("type") == "json_schema"
        if wants_schema and not self.supports_json_schema:
            return openai_error(400, "response_format json_schema is not supported by this "
                                     "server; use json_object")
        scripted = self._next_scripted(role)
        if isinstance(scripted, Reply):
            return scripted
        answer = scripted or rule_answer(role, body)
        reply, prompt, output = completion(body, answer, with_usage=not self.omit_usage)
        if not self.omit_usage:
            with self._lock:
                self.reported_prompt_tokens += prompt
                self.reported_completion_tokens += output
        with self._lock:
            pending = self._delays.get(role)
            held = pending.popleft() if pending else 0.0
        return Reply(200, reply, delay_s=held or answer.delay_s or self.chat_delay_s)

    def _next_scripted(self, role: str) -> Scripted | None:
        with self._lock:
            for key in (role, None):
                queue = self._scripts.get(key)
                if queue:
                    return queue.popleft()
        return None


def _encode(vector: list[float], as_base64: bool) -> Any:
    if not as_base64:
        return vector
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
