"""Documents as they are ingested, and the chunks ingest cuts them into."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ragq.schemas.text import reject_bad_input

DEFAULT_ACL: tuple[str, ...] = ("public",)
"""The labels of a document that names none, and of a ticket submitted without an API key that
names none (with a key, a ticket that names none gets the key's labels: docs/formats.md)."""


def acl_labels(value: Iterable[str]) -> tuple[str, ...]:
    """The labels of ``value`` stripped, in order, each once: the one reading of an ACL for
    documents, tickets, ``ragq ask`` and ``ragq search``. Raises ValueError for an empty list or
    a blank label: an ACL with no label would match nothing or, in some stores, everything."""
    labels = tuple(dict.fromkeys(a.strip() for a in value))
    if not labels or any(not a for a in labels):
        raise ValueError("acl must be a non-empty list of non-blank labels, e.g. [\"public\"]")
    return labels


class Document(BaseModel):
    """One document of the generic JSONL format (docs/formats.md).

    A missing ``source_version`` is derived from the content, so an edited document without an
    explicit version still replaces its old chunks on re-ingest.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=512)
    title: str = ""
    text: str = Field(min_length=1)
    source_version: str = ""
    acl: tuple[str, ...] = DEFAULT_ACL
    authority_tier: int = Field(2, ge=1, le=10, strict=True)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _no_bad_text(cls, data: Any) -> Any:
        return reject_bad_input(data)

    @field_validator("id")
    @classmethod
    def _id_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("id must not be blank")
        return value

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("text must not be blank")
        return value

    @field_validator("acl")
    @classmethod
    def _acl_not_empty(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return acl_labels(value)

    @model_validator(mode="after")
    def _derive_version(self) -> Document:
        if not self.source_version:
            digest = hashlib.sha256(f"{self.title}\x00{self.text}".encode()).hexdigest()[:16]
            object.__setattr__(self, "source_version", f"sha256:{digest}")
        return self


class Chunk(BaseModel):
    """A piece of a document small enough to embed; it keeps its document's identity."""

    model_config = ConfigDict(frozen=True)

    chunk_id: str
    doc_id: str
    chunk_index: int = Field(ge=0)
    title: str
    text: str
    source_version: str
    acl: tuple[str, ...]
    authority_tier: int
    #: The document's declared metadata (``orchestration.metadata_schema.payload_meta``);
    #: stored as the payload's ``meta`` object, which metadata filters read.
    meta: dict[str, Any] = Field(default_factory=dict)

    def payload(self) -> dict[str, Any]:
        """The payload stored beside the vector; filters and evidence read these keys."""
        return {
            "doc_id": self.doc_id,
            "chunk_id": self.chunk_id,
            "chunk_index": self.chunk_index,
            "title": self.title,
            "text": self.text,
            "source_version": self.source_version,
            "acl": list(self.acl),
            "authority_tier": self.authority_tier,
            **({"meta": dict(self.meta)} if self.meta else {}),
        }
