"""Which sources a job may search: a ticket's ``sources``, within its batch's (issue 16).

``"all"`` means every source the tenant registered; names must be registered sources of the
tenant. A batch's selection restricts every ticket: a ticket without one gets the batch's, a
ticket naming a source outside it is refused. Neither given: the job searches the batch's
collection alone, as before sources existed.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragq.schemas.ticket import ALL_SOURCES, SourceSelection


class SourceSelectionError(ValueError):
    """Raised when a selection names an unknown source or leaves its batch's; the message
    lists what would have been valid."""


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
