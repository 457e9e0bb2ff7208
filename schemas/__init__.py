"""Pydantic contracts shared by every layer. No I/O lives here."""

from ragq.schemas.document import Chunk, Document

__all__ = [
    # ingest
    "Chunk",
    "Document",
]
