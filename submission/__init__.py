"""The core behind the front doors: submit, follow, read and cancel batches and jobs."""

from submission.batches import (
    Submitted,
    ask,
    cancel,
    describe,
    errors,
    results,
    submit_file,
    submit_tickets,
    wait,
)
from submission.tickets import TicketError, parse_lines, read_ticket_file

__all__ = [
    # submitting
    "Submitted",
    "ask",
    "submit_file",
    "submit_tickets",
    # following and reading
    "describe",
    "errors",
    "results",
    "wait",
    # cancelling
    "cancel",
    # parsing
    "TicketError",
    "parse_lines",
    "read_ticket_file",
]
