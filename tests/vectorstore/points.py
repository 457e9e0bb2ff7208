"""Points shaped like the ones ingest writes, for the vector store tests."""

from __future__ import annotations

import uuid

import numpy as np

from ragq.schemas.document import Chunk
from ragq.vectorstore import VectorPoint

DIM = 8
NAMESPACE = uuid.UUID("2f1d3c1e-0000-4000-8000-000000000000")


def random_unit(rng: np.random.Generator) -> list[float]:
    v = rng.standard_normal(DIM)
    return (v / np.linalg.norm(v)).tolist()


def point(
    doc_id: str,
    index: int,
    vector: list[float],
    *,
    version: str = "v1",
    acl: tuple[str, ...] = ("public",),
    title: str | None = None,
    title_vector: list[float] | None = None,
) -> VectorPoint:
    """A chunk point with the payload ingest writes; its id depends on doc and index only."""
    chunk = Chunk(
        chunk_id=f"{doc_id}:{index}",
        doc_id=doc_id,
        chunk_index=index,
        title=title if title is not None else f"Title of {doc_id}",
        text=f"text {index} of {doc_id} ({version})",
        source_version=version,
        acl=acl,
        authority_tier=2,
    )
    point_id = str(uuid.uuid5(NAMESPACE, f"{doc_id}/{index}"))
    return VectorPoint(point_id, vector, chunk.payload(), title_vector=title_vector)


def axis(i: int, tilt: float = 0.0) -> list[float]:
    """Unit-ish vector along axis ``i``, tilted towards axis ``i + 1``."""
    v = [0.0] * DIM
    v[i] = 1.0
    v[(i + 1) % DIM] = tilt
    return v
