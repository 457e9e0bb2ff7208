"""The normalized key of a retrieval request: two requests with the same key would
return the same hits, so the key is what dedup and the evidence cache look up."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from ragq.orchestration.text import normalize_query

KEY_VERSION = 2
"""Bumped when the same request starts returning other hits for the same inputs, so evidence
cached by an earlier version is never served as this one's (2: dense and sparse searches keep
their hits spread over documents)."""


def retrieval_key(
    text: str, *, collection: str, acl: Sequence[str] | None, top_k: int, source_version: str = "",
    mode: str = "dense", filters: str = "",
) -> str:
    """A hex digest over the normalized query, the collection, the ACL (order-free), top_k,
    the collection's source version stamp, the search mode (``dense``, ``sparse``,
    ``hybrid-rrf``, ``hybrid-dbsf``: each ranks other hits), the metadata filters (their
    canonical label, :func:`~orchestration.metadata_filters.filters_label`; a request without
    any keeps the key it had before filters existed) and :data:`KEY_VERSION`."""
    parts: list[object] = [normalize_query(text), collection,
                           sorted(set(acl)) if acl is not None else None, top_k,
                           source_version, mode, KEY_VERSION]
    if filters:
        parts.append(filters)
    material = json.dumps(parts, ensure_ascii=False)
    return hashlib.sha256(material.encode()).hexdigest()
