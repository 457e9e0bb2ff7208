"""What a :class:`SearchFilter` means, stated once for every adapter.

Each adapter only renders :class:`FilterPlan` into its library's filter types; which payload
field a restriction reads, and whether it is a ``must`` or a ``must_not``, is decided here, so
the embedded engine and a Qdrant server can never disagree about who may see a chunk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragq.schemas.metadata import FieldType, FilterOp, MetadataFilter
from ragq.vectorstore.base import SearchFilter

DOC_ID = "doc_id"
ACL = "acl"
SOURCE_VERSION = "source_version"

#: Payload fields filtered on by searches and deletes; adapters index them as keywords.
KEYWORD_FIELDS: tuple[str, ...] = (DOC_ID, ACL, SOURCE_VERSION)
#: Where a chunk's declared metadata lives in its payload (a nested object).
META = "meta"


def meta_key(name: str) -> str:
    """The payload key of declared metadata field ``name``."""
    return f"{META}.{name}"


@dataclass(frozen=True)
class AnyOf:
    """The payload field ``key`` holds (or, for a list field, contains) one of ``values``."""

    key: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class InRange:
    """The payload field ``key`` lies within the given bounds (None: unbounded); ``dates``:
    the bounds are RFC 3339 datetimes (the values ISO dates), else numbers."""

    key: str
    gt: float | str | None = None
    gte: float | str | None = None
    lt: float | str | None = None
    lte: float | str | None = None
    dates: bool = False


@dataclass(frozen=True)
class FilterPlan:
    """All ``must`` conditions and ``ranges`` hold and no ``must_not`` condition holds."""

    must: tuple[AnyOf, ...] = ()
    must_not: tuple[AnyOf, ...] = ()
    ranges: tuple[InRange, ...] = ()

    @property
    def matches_nothing(self) -> bool:
        """True when a ``must`` allows no value (e.g. a requester without ACL labels).

        Adapters answer such queries without asking the engine, rather than trusting each
        engine to treat an empty match list as "nothing" rather than "anything".
        """
        return any(not cond.values for cond in self.must)

    @property
    def is_empty(self) -> bool:
        """True when the plan restricts nothing."""
        return not self.must and not self.must_not and not self.ranges


def plan_search(flt: SearchFilter | None) -> FilterPlan:
    """The conditions of a search or count filter.

    ``acl`` matches a chunk whose ``acl`` list shares at least one label with the requester's;
    ``doc_ids`` / ``source_versions`` keep only those documents / versions; ``exclude_doc_ids``
    drops those documents. ``None`` fields do not restrict.
    """
    if flt is None:
        return FilterPlan()
    must = tuple(
        AnyOf(key, tuple(values))
        for key, values in (
            (ACL, flt.acl),
            (DOC_ID, flt.doc_ids),
            (SOURCE_VERSION, flt.source_versions),
        )
        if values is not None
    )
    must_not = (AnyOf(DOC_ID, tuple(flt.exclude_doc_ids)),) if flt.exclude_doc_ids else ()
    meta_any, meta_ranges = plan_metadata(flt.metadata)
    return FilterPlan(must=must + meta_any, must_not=must_not, ranges=meta_ranges)


def _rfc3339(value: str) -> str:
    """An ISO date bound as both engines parse it (a bare date is its midnight, UTC)."""
    return f"{value}T00:00:00Z" if len(value) == 10 else value


_BOUND = {FilterOp.GT: "gt", FilterOp.GTE: "gte", FilterOp.LT: "lt", FilterOp.LTE: "lte"}


def plan_metadata(filters: tuple[MetadataFilter, ...]
                  ) -> tuple[tuple[AnyOf, ...], tuple[InRange, ...]]:
    """The conditions of validated metadata filters: keyword and enum fields match one of the
    values; number and date fields compare (equality: both bounds at the value)."""
    any_of: list[AnyOf] = []
    ranges: list[InRange] = []
    for f in filters:
        key = meta_key(f.field)
        values = f.value if isinstance(f.value, list) else [f.value]
        if f.kind in (FieldType.NUMBER, FieldType.DATE):
            dates = f.kind is FieldType.DATE
            bound = [_rfc3339(str(v)) if dates else float(v) for v in values]
            if f.op in _BOUND:
                ranges.append(InRange(key, dates=dates, **{_BOUND[f.op]: bound[0]}))
            else:  # eq: validation sends no 'in' on numbers and dates
                ranges.append(InRange(key, gte=bound[0], lte=bound[0], dates=dates))
        else:
            any_of.append(AnyOf(key, tuple(str(v) for v in values)))
    return tuple(any_of), tuple(ranges)


def plan_stale(doc_id: str, keep_source_version: str) -> FilterPlan:
    """The chunks of ``doc_id`` whose ``source_version`` is not ``keep_source_version``."""
    return FilterPlan(
        must=(AnyOf(DOC_ID, (doc_id,)),),
        must_not=(AnyOf(SOURCE_VERSION, (keep_source_version,)),),
    )


@dataclass(frozen=True)
class FilterTypes:
    """One client library's filter constructors (qdrant-edge's, qdrant-client's): what
    :func:`render_plan` builds a :class:`FilterPlan` from. Both libraries name the same parts
    the same way, so one rendering serves both adapters and they cannot drift apart."""

    filter: Callable[..., Any]
    field_condition: Callable[..., Any]
    match_any: Callable[..., Any]
    number_range: Callable[..., Any]
    date_range: Callable[..., Any]


def render_plan(plan: FilterPlan, types: FilterTypes) -> Any:
    """``plan`` in ``types``' library: every ``must`` and range condition, no ``must_not`` one
    (an empty list of either is left out, as the libraries expect)."""

    def any_of(condition: AnyOf) -> Any:
        return types.field_condition(key=condition.key,
                                     match=types.match_any(any=list(condition.values)))

    def in_range(r: InRange) -> Any:
        bounds = {"gt": r.gt, "gte": r.gte, "lt": r.lt, "lte": r.lte}
        if r.dates:
            return types.field_condition(key=r.key, range=types.date_range(**{
                k: str(v) for k, v in bounds.items() if v is not None}))
        return types.field_condition(key=r.key, range=types.number_range(**{
            k: float(v) for k, v in bounds.items() if v is not None}))

    return types.filter(
        must=[*(any_of(c) for c in plan.must), *(in_range(r) for r in plan.ranges)] or None,
        must_not=[any_of(c) for c in plan.must_not] or None,
    )
