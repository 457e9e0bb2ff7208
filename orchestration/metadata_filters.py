"""Constraints become filters: read from a sub-query, checked against its source's schema, and
given up when they leave the search with nothing worth reading (issue 37).

The offline reader works from what the words mean, never from one dataset's phrasing: a
declared value named in the text restricts its field; a comparison word before a number or a
date restricts the number or date field it is about. Every filter, the reader's or a model's,
passes :func:`validate_filters`, which keeps only what the schema allows and says why it
dropped the rest; nothing else reaches the store.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from ragq.orchestration.metadata_schema import parse_date
from ragq.orchestration.retrieval import weak_pass
from ragq.schemas.metadata import (
    ORDER_OPS,
    FieldType,
    FilterDecision,
    FilterOp,
    MetadataField,
    MetadataFilter,
    MetadataSchema,
)

#: Declared values shorter than this (codes such as "EU") count as named only when written
#: with their declared case as a whole word: in lower case they are ordinary words ("us").
MIN_VALUE_CHARS = 3
#: A value preceded by one of these (within three words) is excluded by the text, not wanted.
_NEGATIONS = ("not", "no", "except", "excluding", "without", "other than", "besides", "non")
#: Comparison words (lowercase) and the operator each means before a number or a date.
COMPARISONS: dict[str, FilterOp] = {
    "before": FilterOp.LT, "prior to": FilterOp.LT, "earlier than": FilterOp.LT,
    "until": FilterOp.LTE, "up to": FilterOp.LTE, "by": FilterOp.LTE,
    "after": FilterOp.GT, "later than": FilterOp.GT,
    "since": FilterOp.GTE, "from": FilterOp.GTE, "as of": FilterOp.GTE,
    "less than": FilterOp.LT, "fewer than": FilterOp.LT, "under": FilterOp.LT,
    "below": FilterOp.LT, "at most": FilterOp.LTE, "no more than": FilterOp.LTE,
    "more than": FilterOp.GT, "greater than": FilterOp.GT, "over": FilterOp.GT,
    "above": FilterOp.GT, "at least": FilterOp.GTE, "no less than": FilterOp.GTE,
}
_COMPARISON = "|".join(sorted((re.escape(w) for w in COMPARISONS), key=len, reverse=True))
_NUMBER = r"\$?(\d+(?:,\d{3})*(?:\.\d+)?)"
_DATE = r"(\d{4}-\d{2}-\d{2}|\d{4})"
#: How far (characters) a comparison may sit from the field it is about.
_NEAR = 40


def _phrase(text: str) -> str:
    """``text`` as the reader compares it: lowercase words separated by single spaces."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _named(value: str, text: str, original: str) -> bool:
    """Whether ``text`` (a :func:`_phrase` of ``original``) names ``value`` as whole words (a
    plural too), not right after a negation."""
    words = _phrase(value)
    if not words:
        return False
    if len(words) < MIN_VALUE_CHARS:
        text, words = " ".join(re.findall(r"[A-Za-z0-9]+", original)), value.strip()
        pattern = rf"(?<![A-Za-z0-9]){re.escape(words)}(?![A-Za-z0-9])"
    else:
        pattern = rf"\b{re.escape(words)}(?:s|es)?\b"
    for found in re.finditer(pattern, text):
        before = f" {' '.join(text[:found.start()].lower().split()[-3:])} "
        if not any(f" {n} " in before for n in _NEGATIONS):
            return True
    return False


def _value_filters(field: MetadataField, text: str, original: str) -> list[dict[str, Any]]:
    named = [v for v in field.values if _named(v, text, original)]
    # A value that is a part of another named value ("gold" in "gold plus") is the longer one.
    named = [v for v in named if not any(v != o and _phrase(v) in _phrase(o) for o in named)]
    if not named:
        return []
    if len(named) == 1:
        return [{"field": field.name, "op": "eq", "value": named[0]}]
    return [{"field": field.name, "op": "in", "value": sorted(named)}]


def _order_filters(field: MetadataField, text: str, only_date: bool) -> list[dict[str, Any]]:
    """A comparison and a number (date) near the field's name; for the only date field of a
    schema, a comparison and a date anywhere ("built before 1948")."""
    pattern = _DATE if field.type is FieldType.DATE else _NUMBER
    found: list[dict[str, Any]] = []
    name = _phrase(field.name.replace("_", " "))
    spans = [m.span() for m in re.finditer(rf"\b{re.escape(name)}\b", text)] if name else []
    for m in re.finditer(rf"\b({_COMPARISON}) {pattern}\b", text.lower()):
        near = any(abs(m.start() - e) <= _NEAR or abs(s - m.end()) <= _NEAR for s, e in spans)
        if not near and not (only_date and field.type is FieldType.DATE):
            continue
        op = COMPARISONS[m.group(1)]
        raw = m.group(2).replace(",", "")
        if field.type is FieldType.DATE:
            value: str | float = _year_bound(raw, op) if len(raw) == 4 else raw
            if len(raw) == 4 and op in (FilterOp.GT, FilterOp.LTE):
                op = FilterOp.GTE if op is FilterOp.GT else FilterOp.LT  # whole years
        else:
            value = float(raw)
        found.append({"field": field.name, "op": op.value, "value": value})
    return found


def _year_bound(year: str, op: FilterOp) -> str:
    """A year as the date bound a comparison means: "before 1948" is before its first day,
    "after 1948" and "until 1948" reach past its last (the next year's first day)."""
    return f"{int(year) + 1}-01-01" if op in (FilterOp.GT, FilterOp.LTE) else f"{year}-01-01"


def read_constraints(text: str, schema: MetadataSchema) -> list[dict[str, Any]]:
    """The filters ``text`` implies under ``schema``'s declared (not inferred) fields, as
    proposals for :func:`validate_filters`: a declared enum or keyword value named in the text
    (several of one field: ``in``), a comparison word before a number near a number field's
    name, or before a date near a date field's name (the only date field needs no name)."""
    phrase = _phrase(text)
    dates = [f for f in schema.fields if f.type is FieldType.DATE and not f.inferred]
    proposed: list[dict[str, Any]] = []
    for field in (f for f in schema.fields if not f.inferred):
        if field.type in (FieldType.ENUM, FieldType.KEYWORD):
            proposed += _value_filters(field, phrase, text)
        else:
            proposed += _order_filters(field, text, only_date=len(dates) == 1)
    return proposed


def _problem(flt: MetadataFilter, field: MetadataField | None, schema: MetadataSchema
             ) -> str | None:
    """Why ``flt`` may not be sent; None when it may."""
    if field is None:
        declared = ", ".join(f.name for f in schema.fields) or "none"
        return f"unknown field {flt.field!r}; declared: {declared}"
    if field.inferred:
        return (f"field {flt.field!r} was inferred from the documents and is not confirmed "
                "(`ragq sources confirm SOURCE`)")
    values = flt.value if isinstance(flt.value, list) else [flt.value]
    if (flt.op is FilterOp.IN) != isinstance(flt.value, list) or not values:
        takes = "a non-empty list" if flt.op is FilterOp.IN else "one value"
        return f"op {flt.op.value!r} takes {takes}"
    if flt.op in ORDER_OPS and field.type not in (FieldType.NUMBER, FieldType.DATE):
        return (f"{flt.op.value!r} compares numbers and dates; {field.name!r} is of type "
                f"{field.type.value}")
    if flt.op is FilterOp.IN and field.type in (FieldType.NUMBER, FieldType.DATE):
        return (f"'in' matches keyword and enum values; {field.name!r} is of type "
                f"{field.type.value}")
    if field.type is FieldType.ENUM:
        outside = [v for v in values if str(v) not in field.values]
        if outside:
            return f"{outside} not among {field.name!r}'s values {list(field.values)}"
    if field.type is FieldType.NUMBER and not all(_number(v) is not None for v in values):
        return f"{field.name!r} is of type number; got {values}"
    if field.type is FieldType.DATE and not all(parse_date(str(v)) for v in values):
        return f"{field.name!r} is of type date (ISO 8601); got {values}"
    return None


def _number(value: object) -> float | None:
    """A proposed value as a number: a JSON number, or text that reads as one."""
    if not isinstance(value, int | float | str):
        return None
    try:
        return float(value)
    except ValueError:
        return None


def _normalized(flt: MetadataFilter, field: MetadataField) -> MetadataFilter:
    """``flt`` with its values in the field's stored form and the field's type attached."""
    def one(v: object) -> str | float:
        if field.type is FieldType.NUMBER:
            if (number := _number(v)) is None:  # the check before refused such a filter
                raise ValueError(f"{v!r} is not a number")
            return number
        return parse_date(str(v)) or "" if field.type is FieldType.DATE else str(v)

    if isinstance(flt.value, list):
        value: Any = sorted({str(one(v)) for v in flt.value}) \
            if field.type in (FieldType.ENUM, FieldType.KEYWORD) else [one(v) for v in flt.value]
    else:
        value = one(flt.value)
    return MetadataFilter(field=flt.field, op=flt.op, value=value, kind=field.type)


def validate_filters(proposed: Sequence[Mapping[str, Any]], schema: MetadataSchema | None, *,
                     by: str = "rules") -> tuple[tuple[MetadataFilter, ...],
                                                  tuple[FilterDecision, ...]]:
    """The filters that may be sent, and a decision for every proposal (kept, or dropped with
    the reason). Dropped: a malformed filter, an unknown field, a value outside an enum or of
    the wrong type, an order comparison on a keyword, a repeat; everything when the source
    declares no schema."""
    kept: list[MetadataFilter] = []
    decisions: list[FilterDecision] = []
    for raw in proposed:
        shown = dict(raw) if isinstance(raw, Mapping) else {"value": repr(raw)}
        shown.pop("kind", None)
        reason = None
        try:
            flt = MetadataFilter.model_validate({k: v for k, v in shown.items()})
        except ValidationError as exc:
            reason = "malformed: " + "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'filter'}: {e['msg']}" for e in exc.errors())
            flt = None
        if flt is not None:
            if schema is None or not schema.fields:
                reason = "the source declares no metadata schema"
            else:
                field = schema.field(flt.field)
                reason = _problem(flt, field, schema)
                if reason is None and field is not None:
                    flt = _normalized(flt, field)
                    if flt in kept:
                        reason = "same as an earlier filter"
        if reason is None and flt is not None:
            kept.append(flt)
        decisions.append(FilterDecision(proposed=_jsonable(shown), kept=reason is None,
                                        reason=reason or "valid under the schema", by=by))
    return tuple(kept), tuple(decisions)


def _jsonable(value: dict[str, Any]) -> dict[str, object]:
    plain: dict[str, object] = json.loads(json.dumps(value, default=repr))
    return plain


def filters_label(filters: Sequence[MetadataFilter]) -> str:
    """The filters as one canonical string (order-free) for the retrieval key; "" for none."""
    if not filters:
        return ""
    return json.dumps(sorted(json.dumps(f.model_dump(mode="json", exclude={"kind"}),
                                        sort_keys=True) for f in filters))


def fallback_reason(scores: Sequence[float], *, min_top_score: float) -> str | None:
    """Why a filtered search's hits should be given up for the unfiltered search (C6's weak
    pass: no hits, or a top score below ``min_top_score``); None when they are worth keeping."""
    weak = weak_pass(scores, min_top_score=min_top_score, min_margin=0.0)
    return None if weak is None else f"filtered search weak ({weak}): searched unfiltered"


def request_filters(query: str, sources: Sequence[str], schemas: Mapping[str, MetadataSchema],
                    planned: Sequence[Mapping[str, Any]] = ()
                    ) -> tuple[tuple[MetadataFilter, ...], tuple[FilterDecision, ...]]:
    """The filters one search of ``query`` in ``sources`` carries, and the decision on each
    proposal: the ``planned`` ones (a model planner's, for this sub-query) and the constraints
    the rules read from the query. None is kept unless the search is of one source that
    declares a schema (a filter means something only under the schema it was read with); a
    planner's proposal is then recorded as dropped, with that reason."""
    schema = schemas.get(sources[0]) if len(sources) == 1 else None
    if schema is None:
        return (), validate_filters(planned, None, by="planner")[1]
    kept, decisions = validate_filters(planned, schema, by="planner")
    read, read_decisions = validate_filters(read_constraints(query, schema), schema)
    merged = list(kept)
    for flt, decision in zip(read, (d for d in read_decisions if d.kept), strict=True):
        if flt in merged:
            read_decisions = tuple(
                d.model_copy(update={"kept": False, "reason": "same as the planner's filter"})
                if d is decision else d for d in read_decisions)
        else:
            merged.append(flt)
    return tuple(merged), decisions + read_decisions


def filter_record(filters: Sequence[MetadataFilter], decisions: Sequence[FilterDecision],
                  fallback: str | None) -> dict[str, Any]:
    """What the ledger keeps of a request's metadata filters: the kept filters' label (what
    its key covers), every decision and, when the filtered search was given up, why; empty
    when nothing was proposed."""
    if not decisions:
        return {}
    record: dict[str, Any] = {"label": filters_label(filters),
                              "decisions": [d.model_dump(mode="json") for d in decisions]}
    if fallback:
        record["fallback"] = fallback
    return record
