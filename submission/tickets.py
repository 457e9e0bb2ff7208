"""Reading a ticket batch: every line becomes a ticket or an error with its line number and
reason; limits on lines and bytes are enforced up front with a clear message (SPEC C2)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ingestion.sources import describe_validation_error
from ragq.errors import InputError
from schemas.ticket import Ticket


@dataclass(frozen=True)
class TicketError:
    """A line that is not a valid ticket."""

    line: int
    custom_id: str | None
    code: str
    message: str


def _custom_id(raw: object) -> str | None:
    if isinstance(raw, dict) and isinstance(raw.get("custom_id"), str):
        return raw["custom_id"]
    return None


def parse_lines(lines: Iterator[str], *, source: str) -> Iterator[tuple[int, Ticket | TicketError]]:
    """(line number, ticket or error) for each non-blank line; a repeated custom_id is an error
    (results are matched by it)."""
    seen: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            yield number, TicketError(number, None, "invalid_json",
                                      f"invalid JSON: {exc.msg} at column {exc.colno}")
            continue
        try:
            ticket = Ticket.model_validate(data)
        except ValidationError as exc:
            yield number, TicketError(number, _custom_id(data), "invalid_ticket",
                                      describe_validation_error(exc))
            continue
        if ticket.custom_id in seen:
            yield number, TicketError(number, ticket.custom_id, "duplicate_custom_id",
                                      f"custom_id {ticket.custom_id!r} already used at line "
                                      f"{seen[ticket.custom_id]}")
            continue
        seen[ticket.custom_id] = number
        yield number, ticket


def read_ticket_file(path: Path, *, max_lines: int, max_bytes: int
                     ) -> list[tuple[int, Ticket | TicketError]]:
    """Parse a JSONL file of tickets. Raises InputError when the file is missing or over the
    limits (nothing is submitted then: a half-accepted oversize batch helps nobody)."""
    if not path.is_file():
        raise InputError("no such file", source=str(path))
    size = path.stat().st_size
    if size > max_bytes:
        raise InputError(f"{size} bytes is over the limit of {max_bytes} (RAGQ_MAX_BATCH_BYTES)",
                         source=str(path))
    with path.open(encoding="utf-8", errors="replace") as fh:
        parsed = list(parse_lines(iter(fh), source=str(path)))
    if len(parsed) > max_lines:
        raise InputError(f"{len(parsed)} tickets is over the limit of {max_lines} "
                         "(RAGQ_MAX_BATCH_LINES)", source=str(path))
    return parsed
