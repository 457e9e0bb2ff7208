"""The on-disk layout of an embedded store root: which collections exist, and their shards.

Per collection, ``<collection>/collection.json`` records the dimension and the named vectors (its
presence is what makes the collection exist) beside ``<collection>/shard/``, the engine's own
files. The record is written last, atomically, so a crash while creating leaves no half-made
collection behind. A record without the ``text`` and ``title`` vectors (a collection made before
title vectors) is refused on open, before the engine would refuse it less clearly. A record
without ``"sparse": ["terms"]`` (made before hybrid search) opens dense-only: the engine cannot
add a sparse vector to an existing shard, so such a collection gets one only by ingesting anew.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

import qdrant_edge as qe

from ragq.schemas.metadata import FieldType
from ragq.vectorstore.edge_errors import translate_edge_errors
from ragq.vectorstore.errors import CollectionLayoutError
from ragq.vectorstore.filters import KEYWORD_FIELDS, FilterPlan, FilterTypes, render_plan
from ragq.vectorstore.fusion import VECTOR_NAMES
from ragq.vectorstore.modes import TERMS

META_FILE = "collection.json"
SHARD_DIR = "shard"


@dataclass
class EdgeCollection:
    """An open shard and its dimension; ``has_terms``: it holds the sparse ``terms`` vector.
    ``write_lock`` serialises this shard's writers."""

    name: str
    shard: qe.EdgeShard
    dim: int
    has_terms: bool = True
    write_lock: threading.Lock = field(default_factory=threading.Lock)


EDGE_TYPES = FilterTypes(filter=qe.Filter, field_condition=qe.FieldCondition,
                         match_any=qe.MatchAny, number_range=qe.RangeFloat,
                         date_range=qe.RangeDateTime)


def edge_filter(plan: FilterPlan) -> qe.Filter:
    """Render the shared filter semantics (:mod:`vectorstore.filters`) in qdrant-edge's types."""
    filter_: qe.Filter = render_plan(plan, EDGE_TYPES)
    return filter_


#: The engine's payload index for each declared field type.
EDGE_INDEX: dict[FieldType, qe.PayloadSchemaType] = {
    FieldType.KEYWORD: qe.PayloadSchemaType.Keyword,
    FieldType.ENUM: qe.PayloadSchemaType.Keyword,
    FieldType.NUMBER: qe.PayloadSchemaType.Float,
    FieldType.DATE: qe.PayloadSchemaType.Datetime,
}


class ShardDirectory:
    """Opens and creates the shards under ``root``; the caller serialises calls."""

    def __init__(self, root: Path):
        self.root = root

    def names(self) -> list[str]:
        """Names of the existing collections, sorted."""
        return sorted(p.parent.name for p in self.root.glob(f"*/{META_FILE}"))

    def open(self, name: str) -> EdgeCollection | None:
        """Open the shard of ``name``; None when the collection does not exist."""
        meta = self.root / name / META_FILE
        if not meta.is_file():
            return None
        record = json.loads(meta.read_text())
        if record.get("vectors") != list(VECTOR_NAMES):
            raise CollectionLayoutError(
                f"collection {name!r} at {meta.parent} holds vectors "
                f"{record.get('vectors', ['(one unnamed)'])}, not {list(VECTOR_NAMES)} (it was "
                "made before title vectors): ingest into a new collection, or delete that "
                "directory and ingest again",
                collection=name,
            )
        return self._shard(name, int(record["dim"]), TERMS in record.get("sparse", []))

    def create(self, name: str, dim: int) -> EdgeCollection:
        """Create the shard (both named vectors, cosine; the sparse ``terms`` vector, IDF) and
        keyword indexes, then its record."""
        coll = self._shard(name, dim, has_terms=True)
        with translate_edge_errors(name):
            for key in KEYWORD_FIELDS:
                coll.shard.update(
                    qe.UpdateOperation.create_field_index(key, qe.PayloadSchemaType.Keyword)
                )
            coll.shard.flush()
        meta = self.root / name / META_FILE
        tmp = meta.with_suffix(".tmp")
        record = {
            "dim": dim, "vectors": list(VECTOR_NAMES), "distance": "cosine",
            "sparse": [TERMS], "modifier": "idf", "engine": "qdrant-edge",
        }
        tmp.write_text(json.dumps(record))
        os.replace(tmp, meta)
        return coll

    def _shard(self, name: str, dim: int, has_terms: bool) -> EdgeCollection:
        """Load the shard, or create it when its directory is empty (new, or a crash before
        the first write); loading with ``dim`` makes the engine check it matches."""
        path = self.root / name / SHARD_DIR
        params = qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine)
        sparse = {TERMS: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)} if has_terms else None
        config = qe.EdgeConfig(vectors=dict.fromkeys(VECTOR_NAMES, params), sparse_vectors=sparse)
        with translate_edge_errors(name):
            if path.is_dir() and any(path.iterdir()):
                shard = qe.EdgeShard.load(str(path), config)
            else:
                shard = qe.EdgeShard.create(str(path), config)
        return EdgeCollection(name, shard, dim, has_terms)
