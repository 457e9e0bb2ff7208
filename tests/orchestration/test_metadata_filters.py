"""Constraints read from a sub-query, validated against the schema (dropped with a reason),
keyed, and given up when weak (issue 37)."""

from __future__ import annotations

from typing import Any

import pytest

from ragq.orchestration.metadata_filters import (
    fallback_reason,
    filter_record,
    filters_label,
    read_constraints,
    request_filters,
    validate_filters,
)
from ragq.orchestration.retrieval_keys import retrieval_key
from ragq.schemas.metadata import FieldType, MetadataField, MetadataFilter, MetadataSchema

SCHEMA = MetadataSchema(fields=(
    MetadataField(name="plan", type=FieldType.ENUM, values=("Enterprise", "Pro", "Pro Plus")),
    MetadataField(name="region", type=FieldType.ENUM, values=("EU", "US")),
    MetadataField(name="product", type=FieldType.KEYWORD, values=("credit card", "savings")),
    MetadataField(name="price", type=FieldType.NUMBER),
    MetadataField(name="effective", type=FieldType.DATE),
))


def _read(text: str) -> list[dict[str, Any]]:
    return read_constraints(text, SCHEMA)


def test_a_declared_value_named_in_the_text_restricts_its_field() -> None:
    assert _read("the refund policy for EU customers on the Enterprise plan") == [
        {"field": "plan", "op": "eq", "value": "Enterprise"},
        {"field": "region", "op": "eq", "value": "EU"}]


def test_plural_and_case_do_not_hide_a_value_but_short_codes_need_their_case() -> None:
    assert _read("compare CREDIT CARDS") == [
        {"field": "product", "op": "eq", "value": "credit card"}]
    assert _read("tell us about it") == []  # "us" is a word, "US" a code


def test_several_values_of_one_field_are_one_in_filter_and_the_longer_value_wins() -> None:
    assert _read("Pro or Enterprise?") == [
        {"field": "plan", "op": "in", "value": ["Enterprise", "Pro"]}]
    assert _read("the Pro Plus plan") == [{"field": "plan", "op": "eq", "value": "Pro Plus"}]


def test_a_negated_value_is_not_a_filter() -> None:
    assert _read("plans other than Enterprise") == []
    assert _read("not in the EU") == []


def test_comparisons_before_numbers_and_dates() -> None:
    assert _read("plans with a price under $25") == [
        {"field": "price", "op": "lt", "value": 25.0}]
    assert _read("price of at least 1,000") == [{"field": "price", "op": "gte", "value": 1000.0}]
    # The only date field needs no name; a year is its whole span.
    assert _read("policies before 1948") == [
        {"field": "effective", "op": "lt", "value": "1948-01-01"}]
    assert _read("changes after 2023") == [
        {"field": "effective", "op": "gte", "value": "2024-01-01"}]
    assert _read("effective since 2024-03-01") == [
        {"field": "effective", "op": "gte", "value": "2024-03-01"}]


def test_a_number_far_from_any_number_field_is_not_read() -> None:
    assert _read("I have been a customer for more than 5 years") == []


@pytest.mark.parametrize(("proposed", "reason"), [
    ({"field": "colour", "value": "red"}, "unknown field 'colour'; declared: plan, region"),
    ({"field": "plan", "value": "Gold"}, "not among 'plan''s values"),
    ({"field": "plan", "op": "lt", "value": "Pro"}, "compares numbers and dates"),
    ({"field": "price", "op": "in", "value": ["1", "2"]}, "'in' matches keyword and enum"),
    ({"field": "price", "value": "cheap"}, "is of type number"),
    ({"field": "effective", "op": "gt", "value": "last year"}, "is of type date"),
    ({"field": "plan", "op": "in", "value": "Pro"}, "takes a non-empty list"),
    ({"field": "plan", "op": "in", "value": []}, "takes a non-empty list"),
    ({"field": "plan", "op": "eq", "value": ["Pro"]}, "takes one value"),
    ({"field": "plan", "op": "like", "value": "Pro"}, "malformed: op"),
    ({"value": "Pro"}, "malformed: field"),
    ({"field": "plan", "value": "Pro", "extra": 1}, "malformed: extra"),
])
def test_every_bad_filter_is_dropped_with_its_reason(proposed: dict[str, Any], reason: str
                                                     ) -> None:
    kept, decisions = validate_filters([proposed], SCHEMA, by="planner")
    assert kept == ()
    assert len(decisions) == 1 and not decisions[0].kept
    assert reason in decisions[0].reason
    assert decisions[0].by == "planner" and decisions[0].proposed == proposed


def test_a_malformed_proposal_that_is_not_an_object_is_dropped_too() -> None:
    kept, decisions = validate_filters(["plan=Pro"], SCHEMA)  # type: ignore[list-item]
    assert kept == () and "malformed" in decisions[0].reason


def test_valid_filters_are_kept_normalized_and_typed_and_repeats_dropped() -> None:
    kept, decisions = validate_filters([
        {"field": "price", "op": "gt", "value": "10"},
        {"field": "plan", "op": "in", "value": ["Pro", "Enterprise", "Pro"]},
        {"field": "price", "op": "gt", "value": 10},
    ], SCHEMA)
    assert kept == (
        MetadataFilter(field="price", op="gt", value=10.0, kind=FieldType.NUMBER),
        MetadataFilter(field="plan", op="in", value=["Enterprise", "Pro"], kind=FieldType.ENUM))
    assert [d.kept for d in decisions] == [True, True, False]
    assert decisions[2].reason == "same as an earlier filter"


def test_a_proposer_cannot_set_the_type_of_a_filter() -> None:
    kept, _ = validate_filters([{"field": "plan", "value": "Pro", "kind": "number"}], SCHEMA)
    assert kept[0].kind is FieldType.ENUM


def test_without_a_schema_nothing_is_sent() -> None:
    for schema in (None, MetadataSchema()):
        kept, decisions = validate_filters([{"field": "plan", "value": "Pro"}], schema)
        assert kept == () and decisions[0].reason == "the source declares no metadata schema"


def test_only_a_search_of_one_source_with_a_schema_is_filtered() -> None:
    text = "the Enterprise plan"
    assert request_filters(text, ("kb",), {})[0] == ()
    assert request_filters(text, ("kb", "other"), {"kb": SCHEMA, "other": SCHEMA}) == ((), ())
    kept, decisions = request_filters(text, ("kb",), {"kb": SCHEMA})
    assert [f.value for f in kept] == ["Enterprise"] and decisions[0].kept


def test_filters_are_part_of_the_retrieval_key() -> None:
    a = MetadataFilter(field="plan", value="Pro", kind=FieldType.ENUM)
    b = MetadataFilter(field="region", value="EU", kind=FieldType.ENUM)

    def key(label: str) -> str:
        return retrieval_key("refund policy", collection="kb", acl=["public"], top_k=5,
                             filters=label)

    assert filters_label([]) == ""
    # No filter: the key requests had before filters existed.
    assert key("") == retrieval_key("refund policy", collection="kb", acl=["public"], top_k=5)
    assert key(filters_label([a])) != key("")
    assert key(filters_label([a])) != key(filters_label([b]))
    assert key(filters_label([a, b])) == key(filters_label([b, a]))  # order-free


def test_the_ledger_record_says_what_was_kept_dropped_and_why_the_search_fell_back() -> None:
    kept, decisions = validate_filters([{"field": "plan", "value": "Pro"},
                                        {"field": "colour", "value": "red"}], SCHEMA)
    record = filter_record(kept, decisions, "filtered search weak (no hits): searched unfiltered")
    assert record["label"] == filters_label(kept)
    assert [d["kept"] for d in record["decisions"]] == [True, False]
    assert record["fallback"].startswith("filtered search weak")
    assert filter_record((), (), None) == {}


def test_a_filtered_search_falls_back_when_empty_or_weak_only() -> None:
    assert fallback_reason([], min_top_score=0.45) is not None
    assert "0.300" in (fallback_reason([0.3, 0.2], min_top_score=0.45) or "")
    assert fallback_reason([0.6, 0.2], min_top_score=0.45) is None
