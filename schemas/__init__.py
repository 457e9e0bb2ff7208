"""Pydantic contracts shared by every layer. No I/O lives here."""

from schemas.document import Chunk, Document

__all__ = [
    # ingest
    "Chunk",
    "Document",
]
