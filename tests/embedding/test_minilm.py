"""The local MiniLM embedder: shapes, unit length, determinism, meaning, and agreement with the
reference vectors shipped in the ``tryaii`` package (its benchmark centroids)."""

from __future__ import annotations

import json
import threading
from importlib import resources

import numpy as np
import pytest

import ragq.embedding.minilm as minilm
from ragq.embedding import MiniLmEmbedder
from ragq.errors import EmbeddingError

PARAPHRASES = [
    ("How do I reset my password?", "I forgot my password and need to change it."),
    ("The invoice was charged twice this month.", "I was billed two times for the same bill."),
    ("The app crashes when I upload a photo.", "Uploading an image makes the application fail."),
    ("Where can I download my data export?", "How do I get a copy of my exported data?"),
]
UNRELATED = [
    ("How do I reset my password?", "The recipe needs two cups of flour."),
    ("The invoice was charged twice this month.", "Penguins live in the southern hemisphere."),
    ("The app crashes when I upload a photo.", "The orchestra played a symphony by Brahms."),
    ("Where can I download my data export?", "It rained all weekend in the mountains."),
]


@pytest.fixture(scope="module")
def embedder() -> MiniLmEmbedder:
    return MiniLmEmbedder(threads=2)


def matrix(embedder: MiniLmEmbedder, texts: list[str]) -> np.ndarray:
    return np.asarray(embedder.embed(texts), dtype=np.float64)


def cosine(embedder: MiniLmEmbedder, a: str, b: str) -> float:
    va, vb = matrix(embedder, [a, b])
    return float(va @ vb)


def test_vectors_have_the_model_dimension_and_unit_length(embedder):
    vectors = matrix(embedder, ["one short text", "another, somewhat longer text " * 5, ""])
    assert embedder.dim == 384 and embedder.model_id == "all-MiniLM-L6-v2-onnx-int8"
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert all(isinstance(x, float) for x in embedder.embed(["x"])[0])


def test_no_texts_give_no_vectors(embedder):
    assert embedder.embed([]) == []


def test_a_text_gets_the_same_vector_alone_or_in_any_batch(embedder):
    text = "Refunds are issued to the original payment method within five days."
    alone = matrix(embedder, [text])[0]
    again = matrix(embedder, [text])[0]
    batch = ["short", "a much longer neighbour that forces a lot of padding " * 8, text, "mid"]
    in_batch = matrix(embedder, batch)[2]
    assert np.array_equal(alone, again)
    assert float(alone @ in_batch) > 0.99999


@pytest.mark.parametrize(("same", "other"), list(zip(PARAPHRASES, UNRELATED, strict=True)))
def test_paraphrases_are_clearly_closer_than_unrelated_texts(embedder, same, other):
    assert cosine(embedder, *same) > 0.5
    assert cosine(embedder, *same) > cosine(embedder, *other) + 0.3


def _starter_file(name: str) -> dict:
    path = resources.files("tryaii.catalog").joinpath("data", "starter", name)
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def rebuilt_centroids(embedder: MiniLmEmbedder) -> dict[str, np.ndarray]:
    """Each benchmark's centroid rebuilt from our vectors of its training queries (the
    normalised mean), embedded once for both reference files."""
    queries = _starter_file("training_queries.json")["benchmarks"]
    rebuilt = {}
    for name, spec in queries.items():
        mean = matrix(embedder, spec["queries"]).mean(axis=0)
        rebuilt[name] = mean / np.linalg.norm(mean)
    return rebuilt


@pytest.mark.parametrize(
    ("centroids", "floor"),
    [
        ("centroids.all-MiniLM-L6-v2-onnx-int8.json", 0.99999),  # same file, same pipeline
        ("centroids.json", 0.998),  # the fp32 sentence-transformers model
    ],
)
def test_vectors_reproduce_the_reference_centroids_shipped_with_tryaii(rebuilt_centroids,
                                                                      centroids, floor):
    """Each centroid is the normalised mean of its training queries' vectors; rebuilding it from
    our vectors must land on the published one."""
    reference = _starter_file(centroids)["centroids"]
    assert set(rebuilt_centroids) <= set(reference)
    for name, rebuilt in rebuilt_centroids.items():
        assert float(rebuilt @ np.asarray(reference[name])) > floor, name


def test_text_beyond_max_tokens_is_truncated_not_refused(embedder):
    head = " ".join(f"word{i}" for i in range(400))  # far more than 256 tokens
    long_text = head + " " + "completely different ending about volcanoes " * 500
    assert np.allclose(matrix(embedder, [long_text])[0], matrix(embedder, [head])[0], atol=1e-6)


def test_max_tokens_counts_wordpieces_including_cls_and_sep(embedder):
    first_ten = "one two three four five six seven eight nine ten"  # one wordpiece each
    text = first_ten + " and then a long tail about volcanoes" * 40
    short = MiniLmEmbedder(threads=1, max_tokens=12)
    assert np.allclose(short.embed([text])[0], short.embed([first_ten])[0], atol=1e-6)
    assert not np.allclose(embedder.embed([text])[0], short.embed([text])[0], atol=1e-3)


def test_embedding_from_many_threads_loads_once_and_matches_serial(monkeypatch):
    loads: list[int] = []
    real_load = minilm._load

    def counting_load(*args: object) -> object:
        loads.append(1)
        return real_load(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(minilm, "_load", counting_load)
    fresh = MiniLmEmbedder(threads=1)
    assert loads == []  # constructing is free: the model loads on first use
    texts = [f"ticket number {i} about topic {i % 5}" for i in range(24)]
    results: dict[int, list[list[float]]] = {}
    workers = [
        threading.Thread(target=lambda k=k: results.__setitem__(k, fresh.embed(texts[k::4])))
        for k in range(4)
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    assert loads == [1]
    serial = fresh.embed(texts)
    for k in range(4):
        assert np.allclose(results[k], serial[k::4], atol=1e-6)


@pytest.mark.parametrize("bad", ["a bare string", ["ok", None], ["ok", 3]])
def test_inputs_that_are_not_texts_are_refused_clearly(embedder, bad):
    with pytest.raises(EmbeddingError):
        embedder.embed(bad)


@pytest.mark.parametrize(
    "kwargs", [{"threads": 0}, {"max_tokens": 2}, {"max_tokens": 513}, {"batch_size": 0}]
)
def test_impossible_settings_fail_at_construction(kwargs):
    with pytest.raises(ValueError):
        MiniLmEmbedder(**kwargs)


def test_local_embedding_is_billed_nothing(embedder):
    """The model runs in-process: however much is embedded, no provider bills a token."""
    texts = ["one short text", "a much longer text about refunds " * 200, ""]
    assert embedder.billed_tokens(texts) == 0 and embedder.billed_tokens([]) == 0


def test_a_search_sized_batch_runs_beside_a_large_one_with_the_same_vectors(embedder):
    """Small batches (a search's queries) have a one-thread session of their own: they neither
    wait for the large-batch lock nor give other vectors than a large batch does."""
    texts = [f"Invoices are emailed on day {n} of each month." for n in range(12)]
    large = matrix(embedder, texts)
    done: list[np.ndarray] = []
    with embedder._run_lock:  # a large batch is running
        beside = threading.Thread(
            target=lambda: done.append(matrix(embedder, texts[:minilm.SMALL_BATCH])), daemon=True)
        beside.start()
        beside.join(timeout=30)
    assert done, "a small batch waited for the large-batch lock"
    assert np.allclose(done[0], large[:minilm.SMALL_BATCH], atol=1e-5)
