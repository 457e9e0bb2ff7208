"""A fake OpenAI-compatible server on loopback HTTP, driven by the real ``openai`` client.

``POST /v1/embeddings`` answers deterministic vectors derived from a hash of each text, in the
API's shape (``data[].index``, ``usage``, float or base64 encoding). Errors come in the API's
error shape. More routes (chat completions, …) are added with :meth:`LoopbackServer.route`.
"""

from __future__ import annotations

import base64
import hashlib
import random
import struct
from typing import Any

from tests.fakes.http import LoopbackServer, Reply, Request

EMBEDDINGS = "/v1/embeddings"

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
    (the API allows any order, clients must sort by ``index``).
    """

    def __init__(
        self, *, dim: int = 8, api_key: str | None = "sk-test", reverse_order: bool = False
    ):
        super().__init__()
        self.dim = dim
        self.api_key = api_key
        self.reverse_order = reverse_order
        self.route("POST", EMBEDDINGS, self._embeddings)

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

    def handle(self, request: Request) -> Reply:
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


def _encode(vector: list[float], as_base64: bool) -> Any:
    if not as_base64:
        return vector
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
