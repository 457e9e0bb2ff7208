"""Who is asking: a tenant and the ACL its key caps retrieval to (SPEC C16).

The CLI acts as the configured tenant without a cap; an API key brings its tenant and its ACL.
A ticket's ACL is intersected with the cap; a ticket that names none gets the cap itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragq.errors import NotFoundError
from ragq.ledger.errors import LedgerNotFoundError
from ragq.schemas.ticket import Ticket
from ragq.submission.tickets import TicketError


@dataclass(frozen=True)
class Caller:
    """A tenant, and the ACL labels its jobs may read (None: no cap, the local CLI);
    ``name`` says who acts (an API key's id, ``cli``), for what the ledger records of them."""

    tenant: str
    acl_cap: tuple[str, ...] | None = None
    name: str = "cli"


def capped_acl(ticket: Ticket, caller: Caller, line: int) -> tuple[str, ...] | TicketError:
    """The ACL the ticket's job runs with, or an error when nothing of it is allowed."""
    if caller.acl_cap is None:
        return ticket.acl
    if "acl" not in ticket.model_fields_set:
        return caller.acl_cap
    allowed = tuple(a for a in ticket.acl if a in caller.acl_cap)
    if not allowed:
        return TicketError(line, ticket.custom_id, "acl_not_allowed",
                           f"acl {list(ticket.acl)} has no label this API key may read; "
                           f"allowed: {list(caller.acl_cap)}")
    return allowed


def require_tenant(row: object, caller: Caller | None, *, kind: str, key: str) -> None:
    """Raise NotFoundError when ``row`` belongs to another tenant (it is not theirs to see)."""
    if caller is not None and getattr(row, "tenant", None) != caller.tenant:
        raise NotFoundError(f"no {kind} {key!r}", kind=kind, key=key)


def not_found(exc: LedgerNotFoundError, kind: str, key: str) -> NotFoundError:
    """The front-door error for an unknown id."""
    return NotFoundError(f"no {kind} {key!r}: expected an id of a {kind} you submitted",
                         kind=kind, key=key)
