"""Which documents of an ingest batch need work, decided from what the registry already holds."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from enum import StrEnum

from ragq.schemas.document import Document


class DocumentAction(StrEnum):
    """What ingest does with one document."""

    NEW = "new"  # never seen: chunk, embed, upsert
    REPLACE = "replace"  # version or content changed: upsert new chunks, delete the old ones
    REPAIR = "repair"  # registry says ingested but the store disagrees: write it again
    SKIP = "skip"  # same content already stored: nothing to do


@dataclass(frozen=True)
class StoredDocument:
    """What the registry and the vector store know of a document."""

    source_version: str
    content_hash: str
    chunk_count: int
    points_in_store: int


def content_hash(doc: Document) -> str:
    """Hash of everything that ends up in a chunk's vector or payload.

    ACL and authority tier are included: changing who may read a document must rewrite its
    payloads even when its text and version stay the same; so is its metadata, when it has any.
    """
    parts: list[object] = [doc.title, doc.text, sorted(doc.acl), doc.authority_tier]
    if doc.metadata:  # filters read it (issue 37); documents without keep their old hash
        parts.append(doc.metadata)
    material = json.dumps(parts, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(material.encode()).hexdigest()


def decide(doc: Document, stored: StoredDocument | None) -> DocumentAction:
    """The action for ``doc`` given what is stored (None when the document is unknown)."""
    if stored is None:
        return DocumentAction.NEW
    if stored.source_version != doc.source_version or stored.content_hash != content_hash(doc):
        return DocumentAction.REPLACE
    if stored.points_in_store != stored.chunk_count:
        return DocumentAction.REPAIR
    return DocumentAction.SKIP
