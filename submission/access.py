"""Who is asking: a tenant and the ACL its key caps retrieval to.

The CLI acts as the configured tenant without a cap; an API key brings its tenant and its ACL.
A ticket's ACL is intersected with the cap. The default ACL is one rule: a ticket that names
none runs with its submitter's default, :attr:`Caller.default_acl` (the key's labels, or
``["public"]`` without a key), on every path (docs/formats.md, "Default ACL").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ragq.errors import NotFoundError
from ragq.ledger.errors import LedgerNotFoundError
from ragq.schemas.document import DEFAULT_ACL
from ragq.schemas.ticket import Ticket
from ragq.submission.tickets import TicketError


@dataclass(frozen=True)
class Caller:
    """A tenant, and the ACL labels its jobs may read (None: no cap, the local CLI);
    ``name`` says who acts (an API key's id, ``cli``), for what the ledger records of them."""

    tenant: str
    acl_cap: tuple[str, ...] | None = None
    name: str = "cli"

    @property
    def default_acl(self) -> tuple[str, ...]:
        """The ACL of a ticket that names none: the key's labels, or ``public`` without one."""
        return self.acl_cap if self.acl_cap is not None else DEFAULT_ACL


def capped_acl(ticket: Ticket, caller: Caller, line: int) -> tuple[str, ...] | TicketError:
    """The ACL the ticket's job runs with (its own within the caller's cap, or the caller's
    default when it names none), or an error when nothing of it is allowed."""
    if ticket.acl is None:
        return caller.default_acl
    if caller.acl_cap is None:
        return ticket.acl
    allowed = tuple(a for a in ticket.acl if a in caller.acl_cap)
    if not allowed:
        return TicketError(line, ticket.custom_id, "acl_not_allowed",
                           f"acl {list(ticket.acl)} has no label this API key may read; "
                           f"allowed: {list(caller.acl_cap)}")
    return allowed


def acl_within(acl: Iterable[str] | None, caller: Caller | None) -> bool:
    """True when a job that ran with ``acl`` may be read by ``caller``: every label it searched
    with is one the caller's key may read (the local CLI, with no cap, reads everything). A
    ``public`` key so never sees what a ``staff`` job retrieved, even in its own tenant."""
    if caller is None or caller.acl_cap is None:
        return True
    return set(acl or ()) <= set(caller.acl_cap)


def require_readable(row: object, caller: Caller | None, *, kind: str, key: str) -> None:
    """Raise NotFoundError unless ``row`` is the caller's tenant's and, for a job, ran with an
    ACL within the caller's (:func:`acl_within`)."""
    require_tenant(row, caller, kind=kind, key=key)
    if kind == "job" and not acl_within(getattr(row, "acl", ()), caller):
        raise NotFoundError(f"no {kind} {key!r}", kind=kind, key=key)


def require_tenant(row: object, caller: Caller | None, *, kind: str, key: str) -> None:
    """Raise NotFoundError when ``row`` belongs to another tenant (it is not theirs to see)."""
    if caller is not None and getattr(row, "tenant", None) != caller.tenant:
        raise NotFoundError(f"no {kind} {key!r}", kind=kind, key=key)


def not_found(exc: LedgerNotFoundError, kind: str, key: str) -> NotFoundError:
    """The front-door error for an unknown id."""
    return NotFoundError(f"no {kind} {key!r}: expected an id of a {kind} you submitted",
                         kind=kind, key=key)
