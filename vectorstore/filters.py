"""What a :class:`SearchFilter` means, stated once for every adapter.

Each adapter only renders :class:`FilterPlan` into its library's filter types; which payload
field a restriction reads, and whether it is a ``must`` or a ``must_not``, is decided here, so
the embedded engine and a Qdrant server can never disagree about who may see a chunk.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragq.vectorstore.base import SearchFilter

DOC_ID = "doc_id"
ACL = "acl"
SOURCE_VERSION = "source_version"

#: Payload fields filtered on by searches and deletes; adapters index them as keywords.
KEYWORD_FIELDS: tuple[str, ...] = (DOC_ID, ACL, SOURCE_VERSION)


@dataclass(frozen=True)
class AnyOf:
    """The payload field ``key`` holds (or, for a list field, contains) one of ``values``."""

    key: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class FilterPlan:
    """All ``must`` conditions hold and no ``must_not`` condition holds."""

    must: tuple[AnyOf, ...] = ()
    must_not: tuple[AnyOf, ...] = ()

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
        return not self.must and not self.must_not


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
    return FilterPlan(must=must, must_not=must_not)


def plan_stale(doc_id: str, keep_source_version: str) -> FilterPlan:
    """The chunks of ``doc_id`` whose ``source_version`` is not ``keep_source_version``."""
    return FilterPlan(
        must=(AnyOf(DOC_ID, (doc_id,)),),
        must_not=(AnyOf(SOURCE_VERSION, (keep_source_version,)),),
    )
