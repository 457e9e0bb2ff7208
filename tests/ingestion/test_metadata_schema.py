"""Ingest declares a source's metadata schema (issue 37): inferred from the documents, a
stored schema kept, the user's file applied last; the chunks then carry the declared fields
and a filtered search finds them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragq.errors import InputError
from ragq.ingestion.submit import read_schema_file, source_schema_for
from ragq.ledger import make_engine
from ragq.schemas.document import Document
from ragq.schemas.metadata import FieldType, MetadataFilter, MetadataSchema
from ragq.settings import build_settings
from ragq.tasks.ingest import ingest_batch
from ragq.vectorstore import EdgeVectorStore, SearchFilter
from tests.fakes.flow_world import HashEmbedder
from tests.ledger_template import migrated

DOCS = [Document(id=f"d{i}", title=f"Page {i}", text=f"refund rules number {i}",
                 metadata={"plan": plan, "year": 2020 + i})
        for i, plan in enumerate(["Pro", "Enterprise", "Pro"])]


def test_a_source_without_metadata_declares_nothing() -> None:
    assert source_schema_for([Document(id="a", title="", text="x")], None, None) is None


def test_the_schema_is_inferred_then_overridden() -> None:
    inferred = source_schema_for(DOCS, None, None)
    assert inferred is not None
    assert {f.name: f.type for f in inferred.fields} == {"plan": FieldType.ENUM,
                                                          "year": FieldType.NUMBER}
    overridden = source_schema_for(DOCS, None, {
        "fields": [{"name": "plan", "type": "enum", "description": "the plan",
                    "values": ["Pro", "Enterprise", "Free"]}], "drop": ["year"]})
    assert overridden is not None and [f.name for f in overridden.fields] == ["plan"]
    assert overridden.fields[0].values == ("Pro", "Enterprise", "Free")


def test_a_stored_schema_is_kept_over_a_new_guess() -> None:
    stored = {"fields": [{"name": "plan", "type": "keyword", "description": "confirmed"}]}
    schema = source_schema_for(DOCS, stored, None)
    assert schema is not None and schema.field("plan") is not None
    assert schema.field("plan").description == "confirmed"  # type: ignore[union-attr]


def test_a_bad_schema_file_is_an_input_error_naming_the_option(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such field"):
        source_schema_for(DOCS, None, {"drop": ["colour"]})
    bad = tmp_path / "schema.json"
    bad.write_text("[1, 2]")
    with pytest.raises(InputError, match="JSON object"):
        read_schema_file(bad)
    with pytest.raises(InputError, match="cannot read"):
        read_schema_file(tmp_path / "missing.json")
    bad.write_text(json.dumps({"fields": []}))
    assert read_schema_file(bad) == {"fields": []}


def test_ingested_chunks_carry_the_declared_fields_and_filter_on_them(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    migrated(url)
    schema = source_schema_for(DOCS, None, None)
    assert isinstance(schema, MetadataSchema)
    embedder = HashEmbedder()
    settings = build_settings(home=tmp_path)
    with EdgeVectorStore(tmp_path / "vectors") as store:
        ingest_batch(DOCS, collection="kb", settings=settings, store=store, embedder=embedder,
                     engine=make_engine(url), schema=schema)
        query = embedder.embed(["refund rules"])[0]
        pro = store.search("kb", query, 10, SearchFilter(acl=("public",), metadata=(
            MetadataFilter(field="plan", value="Pro", kind=FieldType.ENUM),)))
        later = store.search("kb", query, 10, SearchFilter(acl=("public",), metadata=(
            MetadataFilter(field="year", op="gte", value=2021.0, kind=FieldType.NUMBER),)))
    assert {h.payload["doc_id"] for h in pro} == {"d0", "d2"}
    assert {h.payload["doc_id"] for h in later} == {"d1", "d2"}
    assert pro[0].payload["meta"]["plan"] == "Pro"
