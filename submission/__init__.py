"""The core behind the front doors: submit, follow, read and cancel batches and jobs."""

from ragq.submission.access import Caller, capped_acl
from ragq.submission.batches import (
    BatchOptions,
    Submitted,
    SubmittedJob,
    ask,
    caller_of,
    cancel,
    limits_of,
    submit_file,
    submit_job,
    submit_stream,
    submit_tickets,
    wait,
)
from ragq.submission.tickets import (
    Limits,
    TicketError,
    parse_budget,
    parse_lines,
    read_ticket_file,
    read_tickets,
)
from ragq.submission.views import (
    batch_view,
    describe,
    errors,
    evidence,
    job_view,
    list_batch_views,
    results,
    source_list,
    trail,
)

__all__ = [
    # who asks
    "Caller",
    "caller_of",
    "capped_acl",
    # submitting
    "BatchOptions",
    "Submitted",
    "SubmittedJob",
    "ask",
    "submit_file",
    "submit_job",
    "submit_stream",
    "submit_tickets",
    # following and reading
    "batch_view",
    "describe",
    "errors",
    "evidence",
    "job_view",
    "list_batch_views",
    "results",
    "source_list",
    "trail",
    "wait",
    # cancelling
    "cancel",
    # parsing and limits
    "Limits",
    "TicketError",
    "limits_of",
    "parse_lines",
    "read_ticket_file",
    "read_tickets",
    "parse_budget",
]
