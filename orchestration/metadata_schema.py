"""A source's metadata schema: inferred from its documents, confirmed or overridden by the user,
and the payload each chunk stores for it (issue 37).

Inference only proposes: an inferred field is shown (``ragq sources show``) and never filtered
on until the user confirms it (``ragq sources confirm``, or ``confirm`` in the schema file) or
declares it. The user's file (``ragq ingest --metadata-schema FILE``) has the last word, and a
schema stored by an earlier ingest is kept over a new guess, so a confirmed field never changes
type because one more file was ingested.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

from pydantic import ValidationError

from ragq.schemas.metadata import FIELD_NAME_PATTERN, FieldType, MetadataField, MetadataSchema

#: A string field with at most this many distinct values, each seen on more than one document
#: on average, is an enum; beyond, a keyword (ids, titles, free labels).
ENUM_MAX_VALUES = 30
#: The keyword values a schema keeps (most frequent first), for the offline reader to look for.
KEYWORD_MAX_VALUES = 100
#: Where a chunk's payload holds its document's declared metadata.
META_KEY = "meta"

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$")
_NAME = re.compile(FIELD_NAME_PATTERN)


class SchemaFileError(ValueError):
    """Raised when a ``--metadata-schema`` file is not a valid schema (the message says why)."""


def parse_date(value: object) -> str | None:
    """``value`` as an ISO date (``YYYY-MM-DD``) or datetime string; None when it is not one."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if not isinstance(value, str) or not _ISO_DATE.match(value.strip()):
        return None
    text = value.strip().replace(" ", "T")
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return text


def _scalars(value: object) -> list[object] | None:
    """The values of one metadata entry (a list's items); None for what cannot be filtered on
    (objects, lists of objects, booleans)."""
    items = value if isinstance(value, list) else [value]
    if not items or any(isinstance(v, bool | dict | list) or v is None for v in items):
        return None
    return list(items)


def _type_of(values: list[object], documents: int) -> FieldType | None:
    if all(isinstance(v, int | float) for v in values):
        return FieldType.NUMBER
    if all(isinstance(v, str) for v in values):
        if all(parse_date(v) for v in values):
            return FieldType.DATE
        distinct = len(set(values))
        return FieldType.ENUM if distinct <= ENUM_MAX_VALUES and distinct < documents \
            else FieldType.KEYWORD
    return None  # mixed numbers and strings: nothing one comparison can mean


def infer_schema(metadata: Iterable[Mapping[str, Any]]) -> MetadataSchema:
    """The fields the documents' ``metadata`` imply: numbers, ISO dates, strings with few
    repeated values (enum, with those values), other strings (keyword, with the most frequent
    values). Keys that are not valid field names, objects, booleans and mixed types are left
    out: no comparison would mean one thing for them."""
    seen: dict[str, list[object]] = {}
    carried: Counter[str] = Counter()
    unusable: set[str] = set()
    for meta in metadata:
        for key, raw in meta.items():
            values = _scalars(raw)
            if values is None or not _NAME.match(key):
                unusable.add(key)
                continue
            seen.setdefault(key, []).extend(values)
            carried[key] += 1
    fields = []
    for key in sorted(set(seen) - unusable):
        values = seen[key]
        kind = _type_of(values, carried[key])
        if kind is None:
            continue
        kept: tuple[str, ...] = ()
        if kind is FieldType.ENUM:
            kept = tuple(sorted({str(v) for v in values}))
        elif kind is FieldType.KEYWORD:
            kept = tuple(v for v, _ in Counter(map(str, values)).most_common(KEYWORD_MAX_VALUES))
        fields.append(MetadataField(name=key, type=kind, values=kept, inferred=True))
    return MetadataSchema(fields=tuple(fields))


def merge_schemas(stored: MetadataSchema | None, inferred: MetadataSchema) -> MetadataSchema:
    """The schema after one more ingest: the stored fields as they are, plus the inferred
    fields the stored schema does not name."""
    if stored is None:
        return inferred
    names = {f.name for f in stored.fields}
    return MetadataSchema(fields=(*stored.fields,
                                  *(f for f in inferred.fields if f.name not in names)))


def apply_override(schema: MetadataSchema, override: Mapping[str, Any]) -> MetadataSchema:
    """``schema`` with the user's file applied: its ``fields`` replace (or add) the fields of
    the same name, its ``drop`` names are removed. Raises :class:`SchemaFileError` naming what
    is wrong (unknown keys, a bad field, a dropped field that was never declared)."""
    unknown = sorted(set(override) - {"fields", "drop", "confirm"})
    if unknown:
        raise SchemaFileError(f"unknown key(s) {unknown} in the metadata schema file; valid: "
                              "'fields' (a list of {name, type, description, values}), "
                              "'confirm' (inferred fields to filter on as they are), 'drop'")
    try:
        given = MetadataSchema(fields=override.get("fields") or ())
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise SchemaFileError(f"invalid metadata schema file: {problems}") from exc
    drop = override.get("drop") or []
    if not isinstance(drop, list) or not all(isinstance(d, str) for d in drop):
        raise SchemaFileError("'drop' must be a list of field names")
    declared = {f.name for f in schema.fields} | {f.name for f in given.fields}
    missing = sorted(set(drop) - declared)
    if missing:
        raise SchemaFileError(f"cannot drop {missing}: no such field; declared: "
                              f"{sorted(declared) or 'none'}")
    replaced = {f.name: f for f in given.fields}
    fields = [replaced.pop(f.name, f) for f in schema.fields]
    fields += replaced.values()
    kept = MetadataSchema(fields=tuple(f for f in fields if f.name not in set(drop)))
    confirm = override.get("confirm") or []
    if not isinstance(confirm, list) or not all(isinstance(c, str) for c in confirm):
        raise SchemaFileError("'confirm' must be a list of field names")
    try:
        return confirm_fields(kept, confirm)
    except KeyError as exc:
        raise SchemaFileError(str(exc.args[0])) from exc


def confirm_fields(schema: MetadataSchema, names: Sequence[str]) -> MetadataSchema:
    """``schema`` with the inferred fields ``names`` (every field when empty) confirmed: from
    now on a sub-query's constraints may filter on them. Raises KeyError naming a field the
    schema does not declare."""
    declared = {f.name for f in schema.fields}
    missing = sorted(set(names) - declared)
    if missing:
        raise KeyError(f"cannot confirm {missing}: no such field; declared: "
                       f"{sorted(declared) or 'none'}")
    chosen = set(names) or declared
    return MetadataSchema(fields=tuple(
        f.model_copy(update={"inferred": False}) if f.name in chosen else f
        for f in schema.fields))


def payload_meta(metadata: Mapping[str, Any], schema: MetadataSchema) -> dict[str, Any]:
    """The declared fields of a document's ``metadata`` as its chunks store them: numbers as
    floats, dates as ISO strings, the rest as strings (lists kept as lists). A value that does
    not fit its field's type is left out rather than stored as something a filter misreads."""
    stored: dict[str, Any] = {}
    for f in schema.fields:
        if f.name not in metadata:
            continue
        values = _scalars(metadata[f.name])
        if values is None:
            continue
        converted = [_convert(v, f.type) for v in values]
        if any(c is None for c in converted):
            continue
        stored[f.name] = converted if isinstance(metadata[f.name], list) else converted[0]
    return stored


def _convert(value: object, kind: FieldType) -> object | None:
    if kind is FieldType.NUMBER:
        return float(value) if isinstance(value, int | float) else None
    if kind is FieldType.DATE:
        return parse_date(value)
    return str(value)
