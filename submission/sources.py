"""Which sources a job may search: a ticket's ``sources``, within its batch's (issue 16).

``"all"`` means every source the tenant registered; names must be registered sources of the
tenant. A batch's selection restricts every ticket: a ticket without one gets the batch's, a
ticket naming a source outside it is refused. Neither given: the job searches the collection
its submitter named; a named collection that holds no document is refused
(``unknown_collection``). None named either (issue 31): the default collection (RAGQ_COLLECTION)
when it holds documents, else every source of the tenant that holds documents, routed per
sub-query as any selection is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragq.schemas.ticket import ALL_SOURCES, SourceSelection


class SourceSelectionError(ValueError):
    """Raised when a selection names an unknown source or leaves its batch's; the message
    lists what would have been valid."""


class UnknownCollectionError(ValueError):
    """Raised when a ticket's named collection holds no document; the message lists the
    tenant's collections that do."""


@dataclass(frozen=True)
class TenantSources:
    """A tenant's sources: all it registered, and those that hold documents; ``named_holds``:
    whether the collection its submitter named holds documents (named collections are not
    owned by a tenant: any tenant may name one, as before sources existed)."""

    registered: tuple[str, ...]
    holding: tuple[str, ...]
    named_holds: bool = False


@dataclass(frozen=True)
class Scope:
    """Where a job searches: its collection, and its sources (None: the collection alone)."""

    collection: str
    sources: tuple[str, ...] | None = None


def job_scope(ticket: SourceSelection | None, batch: tuple[str, ...] | None, *,
              named: str | None, default: str, tenant: TenantSources) -> Scope:
    """Where one ticket's job searches (the module's rule). Raises SourceSelectionError for
    a bad selection and UnknownCollectionError for a named collection that holds nothing."""
    sources = job_sources(ticket, batch, tenant.registered)
    if sources:
        return Scope(sources[0], sources)
    if named is not None:
        if not tenant.named_holds:
            held = ", ".join(tenant.holding) or "none yet"
            raise UnknownCollectionError(
                f"collection {named!r} holds no documents; ingest into it first "
                f"(collections with documents: {held})")
        return Scope(named)
    if default in tenant.holding or not tenant.holding:
        return Scope(default)
    if len(tenant.holding) == 1:
        return Scope(tenant.holding[0])
    return Scope(tenant.holding[0], tenant.holding)


def expand(selection: SourceSelection | None, registered: Sequence[str], *, where: str
           ) -> tuple[str, ...] | None:
    """The names ``selection`` stands for (None for none); raises SourceSelectionError."""
    if selection is None:
        return None
    known = ", ".join(registered) or "none (ingest with --source-description to register one)"
    if selection == ALL_SOURCES:
        if not registered:
            raise SourceSelectionError(f'{where}: sources "all" but the tenant has no sources; '
                                       f"registered: {known}")
        return tuple(registered)
    unknown = [n for n in selection if n not in registered]
    if unknown:
        raise SourceSelectionError(f"{where}: unknown source(s) {', '.join(unknown)}; "
                                   f"registered: {known}")
    return tuple(selection)


def job_sources(ticket: SourceSelection | None, batch: tuple[str, ...] | None,
                registered: Sequence[str]) -> tuple[str, ...] | None:
    """The sources of one ticket's job within its batch's (already expanded) selection; raises
    SourceSelectionError."""
    mine = expand(ticket, registered, where="ticket")
    if mine is None or batch is None:
        return mine or batch
    if ticket == ALL_SOURCES:
        return batch
    outside = [n for n in mine if n not in batch]
    if outside:
        raise SourceSelectionError(f"ticket: source(s) {', '.join(outside)} outside the "
                                   f"batch's sources: {', '.join(batch)}")
    return mine
