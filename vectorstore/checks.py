"""Checks on what enters a vector store, shared by every adapter so both reject the same input.

Done before the engine sees the input because the engines are lenient in unhelpful ways: a NaN
query returns no hits instead of an error, and a bad name would become a path on disk.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ragq.schemas.text import collection_name_problem
from ragq.vectorstore.base import VectorPoint
from ragq.vectorstore.errors import (
    InvalidCollectionNameError,
    InvalidVectorError,
    VectorDimensionError,
)


def check_collection_name(name: str) -> str:
    """Return ``name`` if it is safe as a directory name and as a Qdrant collection name.

    Raises ``InvalidCollectionNameError`` saying which names are valid.
    """
    problem = collection_name_problem(name)
    if problem:
        raise InvalidCollectionNameError(problem, collection=name)
    return name


def check_top_k(top_k: int) -> int:
    """Return ``top_k`` if it asks for at least one hit; raise ``ValueError`` otherwise."""
    if top_k < 1:
        raise ValueError(f"top_k must be at least 1, got {top_k}")
    return top_k


def as_vector(collection: str, vector: Sequence[float], dim: int) -> list[float]:
    """``vector`` as a list of floats of length ``dim``.

    Raises ``VectorDimensionError`` on a length mismatch and ``InvalidVectorError`` when a
    component is NaN or infinite.
    """
    if len(vector) != dim:
        raise VectorDimensionError(collection, expected=dim, got=len(vector))
    values = [float(x) for x in vector]
    if not all(math.isfinite(x) for x in values):
        raise InvalidVectorError(
            f"vector for collection {collection!r} holds NaN or infinite values; "
            "check the embedder's output",
            collection=collection,
        )
    return values


def point_vectors(collection: str, point: VectorPoint, dim: int) -> tuple[list[float], list[float]]:
    """The ``(text, title)`` vectors to store for ``point``: the title vector is the text vector
    again when the point has none, so a title search still scores the chunk by its text.

    Raises as :func:`as_vector` does, for either vector.
    """
    text = as_vector(collection, point.vector, dim)
    title = text if point.title_vector is None else as_vector(collection, point.title_vector, dim)
    return text, title
