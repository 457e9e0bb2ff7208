"""A source's metadata schema: inferred from its documents, kept over by a stored one,
overridden by the user's file, and the payload each chunk stores for it (issue 37)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ragq.orchestration.chunking import chunk_document
from ragq.orchestration.ingest import content_hash
from ragq.orchestration.metadata_schema import (
    ENUM_MAX_VALUES,
    SchemaFileError,
    apply_override,
    infer_schema,
    merge_schemas,
    payload_meta,
)
from ragq.schemas.document import Document
from ragq.schemas.metadata import FieldType, MetadataField, MetadataSchema

DOCS = [
    {"plan": "Enterprise", "region": "EU", "price": 10, "effective": "2024-01-01",
     "sku": "A-1", "tags": ["refund", "billing"], "nested": {"a": 1}, "flag": True},
    {"plan": "Pro", "region": "US", "price": 20.5, "effective": "2023-05-01", "sku": "A-2",
     "tags": ["billing"]},
    {"plan": "Enterprise", "region": "US", "price": 30, "effective": "2022-01-01T10:00:00Z",
     "sku": "A-3", "tags": ["refund"]},
]


def _types(schema: MetadataSchema) -> dict[str, FieldType]:
    return {f.name: f.type for f in schema.fields}


def test_inference_types_each_field_by_its_values() -> None:
    schema = infer_schema(DOCS)
    assert _types(schema) == {"plan": FieldType.ENUM, "region": FieldType.ENUM,
                              "price": FieldType.NUMBER, "effective": FieldType.DATE,
                              "sku": FieldType.KEYWORD, "tags": FieldType.ENUM}
    plan = schema.field("plan")
    assert plan is not None and plan.values == ("Enterprise", "Pro")
    sku = schema.field("sku")
    assert sku is not None and set(sku.values) == {"A-1", "A-2", "A-3"}  # known, not limiting


def test_objects_booleans_mixed_types_and_bad_names_are_not_filterable() -> None:
    schema = infer_schema([{"n": 1, "bad name": "x", "mixed": 1}, {"n": 2, "mixed": "a"},
                           {"n": 3, "obj": {"k": "v"}, "flag": False}])
    assert _types(schema) == {"n": FieldType.NUMBER}


def test_many_distinct_strings_are_a_keyword_not_an_enum() -> None:
    many = [{"code": f"c{i}"} for i in range(ENUM_MAX_VALUES + 5)] * 2
    assert _types(infer_schema(many)) == {"code": FieldType.KEYWORD}


def test_documents_without_metadata_declare_nothing() -> None:
    assert infer_schema([{}, {}]).fields == ()


def test_a_stored_schema_wins_over_a_new_guess_and_new_fields_are_added() -> None:
    stored = MetadataSchema(fields=(MetadataField(name="plan", type=FieldType.KEYWORD,
                                                  description="the customer's plan"),))
    merged = merge_schemas(stored, infer_schema(DOCS))
    assert merged.field("plan") == stored.fields[0]
    assert merged.field("region") is not None


def test_the_override_replaces_adds_and_drops_fields() -> None:
    schema = apply_override(infer_schema(DOCS), {
        "fields": [{"name": "plan", "type": "enum", "description": "plan tier",
                    "values": ["Enterprise", "Pro", "Free"]},
                   {"name": "version", "type": "number"}],
        "drop": ["sku", "tags"]})
    assert schema.field("plan") == MetadataField(name="plan", type=FieldType.ENUM,
                                                 description="plan tier",
                                                 values=("Enterprise", "Pro", "Free"))
    assert schema.field("version") is not None
    assert schema.field("sku") is None and schema.field("tags") is None
    assert schema.field("price") is not None  # untouched fields stay


@pytest.mark.parametrize(("override", "says"), [
    ({"fieldz": []}, "unknown key"),
    ({"fields": [{"name": "plan", "type": "colour"}]}, "fields.0.type"),
    ({"fields": [{"name": "plan", "type": "enum"}]}, "needs its allowed values"),
    ({"fields": [{"name": "a b", "type": "keyword"}]}, "fields.0.name"),
    ({"fields": [{"name": "p", "type": "number"}, {"name": "p", "type": "date"}]},
     "more than once"),
    ({"drop": ["nothing_like_it"]}, "no such field"),
    ({"drop": "plan"}, "list of field names"),
])
def test_a_bad_override_is_refused_with_the_reason(override: dict[str, object], says: str
                                                   ) -> None:
    with pytest.raises(SchemaFileError, match=says):
        apply_override(infer_schema(DOCS), override)


def test_a_number_or_date_field_lists_no_values() -> None:
    with pytest.raises(ValidationError):
        MetadataField(name="n", type=FieldType.NUMBER, values=("1",))


def test_chunks_store_only_the_declared_fields_in_their_stored_form() -> None:
    schema = infer_schema(DOCS)
    assert payload_meta(DOCS[0], schema) == {
        "plan": "Enterprise", "region": "EU", "price": 10.0, "effective": "2024-01-01",
        "sku": "A-1", "tags": ["refund", "billing"]}
    # A value that does not fit its field's type is left out, not stored as something else.
    assert payload_meta({"price": "cheap", "effective": "soon"}, schema) == {}


def test_chunks_carry_meta_only_under_a_schema() -> None:
    doc = Document(id="d", title="T", text="some words here", metadata={"plan": "Pro"})
    schema = MetadataSchema(fields=(MetadataField(name="plan", type=FieldType.ENUM,
                                                  values=("Pro",)),))
    with_schema = chunk_document(doc, collection="c", size_words=50, overlap_words=5,
                                 schema=schema)
    without = chunk_document(doc, collection="c", size_words=50, overlap_words=5)
    assert with_schema[0].payload()["meta"] == {"plan": "Pro"}
    assert "meta" not in without[0].payload()


def test_the_content_hash_changes_with_metadata_and_not_for_documents_without() -> None:
    plain = Document(id="d", title="T", text="x")
    assert content_hash(plain) == content_hash(Document(id="d", title="T", text="x",
                                                        metadata={}))
    assert content_hash(Document(id="d", title="T", text="x", metadata={"plan": "Pro"})) != \
        content_hash(Document(id="d", title="T", text="x", metadata={"plan": "Free"}))


def test_an_inferred_field_is_never_filtered_on_until_confirmed():
    from ragq.orchestration.metadata_filters import read_constraints, validate_filters
    from ragq.orchestration.metadata_schema import confirm_fields

    inferred = infer_schema([{"region": "EU"}, {"region": "US"}, {"region": "EU"},
                             {"region": "US"}])
    assert inferred.field("region") is not None and inferred.field("region").inferred
    query = "the refund policy for EU customers"
    assert read_constraints(query, inferred) == []  # the rules propose nothing on a guess
    kept, decisions = validate_filters([{"field": "region", "op": "eq", "value": "EU"}],
                                       inferred, by="planner")
    assert kept == () and "not confirmed" in decisions[0].reason  # a model's proposal: dropped
    confirmed = confirm_fields(inferred, ["region"])
    assert not confirmed.field("region").inferred
    kept, _ = validate_filters(read_constraints(query, confirmed), confirmed)
    assert [(f.field, f.value) for f in kept] == [("region", "EU")]
    with pytest.raises(KeyError, match="cannot confirm"):
        confirm_fields(inferred, ["colour"])


def test_a_schema_file_declares_or_confirms_fields():
    inferred = infer_schema(DOCS)
    names = [f.name for f in inferred.fields]
    confirmed = apply_override(inferred, {"confirm": names[:1]})
    assert not confirmed.field(names[0]).inferred
    assert all(f.inferred for f in confirmed.fields[1:])
    declared = apply_override(inferred, {"fields": [{"name": "shelf", "type": "keyword"}]})
    assert not declared.field("shelf").inferred  # the user's own field is theirs as written
    with pytest.raises(SchemaFileError, match="cannot confirm"):
        apply_override(inferred, {"confirm": ["nowhere"]})
    with pytest.raises(SchemaFileError, match="'confirm' must be a list"):
        apply_override(inferred, {"confirm": "all"})
