"""The core behind the front doors: submit, follow, read and cancel batches and jobs."""

from ragq.submission.access import Caller, acl_within, capped_acl
from ragq.submission.batches import (
    BatchOptions,
    Submitted,
    SubmittedJob,
    ask,
    caller_of,
    cancel,
    job_metadata,
    limits_of,
    submit_file,
    submit_job,
    submit_stream,
    submit_tickets,
    wait,
)
from ragq.submission.reviews import CLI_REVIEWER, resolution_of, resolve, review_queue
from ragq.submission.tickets import (
    Limits,
    TicketError,
    check_collection,
    describe_ticket_error,
    parse_acl,
    parse_budget,
    parse_lines,
    parse_priority,
    parse_sources,
    parse_ticket,
    read_ticket_file,
    read_tickets,
    ticket_or_refusal,
)
from ragq.submission.views import (
    batch_view,
    describe,
    errors,
    evidence,
    job_view,
    list_batch_views,
    results,
    source_detail,
    source_list,
    trail,
)

__all__ = [
    # who asks
    "Caller",
    "caller_of",
    "acl_within",
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
    "job_metadata",
    # following and reading
    "batch_view",
    "describe",
    "errors",
    "evidence",
    "job_view",
    "list_batch_views",
    "results",
    "source_detail",
    "source_list",
    "trail",
    "wait",
    # cancelling
    "cancel",
    # the review queue
    "CLI_REVIEWER",
    "resolution_of",
    "resolve",
    "review_queue",
    # parsing and limits
    "Limits",
    "TicketError",
    "check_collection",
    "describe_ticket_error",
    "limits_of",
    "parse_acl",
    "parse_lines",
    "parse_priority",
    "parse_sources",
    "parse_ticket",
    "read_ticket_file",
    "read_tickets",
    "ticket_or_refusal",
    "parse_budget",
]
