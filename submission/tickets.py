"""Reading a ticket batch: every line becomes a ticket or an error with its line number and
reason; limits on lines and bytes are enforced up front with a clear message (SPEC C2)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ragq.errors import InputError, LimitExceededError
from ragq.ingestion.sources import describe_validation_error
from ragq.schemas.ticket import MAX_QUESTION_CHARS, Budget, Ticket


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


def _too_long(number: int, data: object, max_question_chars: int) -> TicketError | None:
    question = data.get("question") if isinstance(data, dict) else None
    if isinstance(question, str) and len(question.strip()) > max_question_chars:
        return TicketError(number, _custom_id(data), "question_too_long",
                           f"question is {len(question.strip())} characters, over the limit of "
                           f"{max_question_chars} (RAGQ_MAX_QUESTION_CHARS)")
    return None


def parse_lines(lines: Iterable[str], *, source: str,
                max_question_chars: int = MAX_QUESTION_CHARS
                ) -> Iterator[tuple[int, Ticket | TicketError]]:
    """(line number, ticket or error) for each non-blank line; a repeated custom_id is an error
    (results are matched by it), and so is a question over ``max_question_chars``."""
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
        too_long = _too_long(number, data, max_question_chars)
        if too_long:
            yield number, too_long
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


@dataclass(frozen=True)
class Limits:
    """The submission limits (SPEC C2), from settings."""

    max_lines: int
    max_bytes: int
    max_question_chars: int = MAX_QUESTION_CHARS


def _refuse_long_questions(parsed: list[tuple[int, Ticket | TicketError]], source: str) -> None:
    for line, item in parsed:
        if isinstance(item, TicketError) and item.code == "question_too_long":
            raise LimitExceededError(item.message, limit="max_question_chars", source=source,
                                     line=line)


def read_tickets(stream: Iterable[str], *, limits: Limits, source: str
                 ) -> list[tuple[int, Ticket | TicketError]]:
    """Parse JSONL tickets (any iterable of lines), one line at a time. Raises
    LimitExceededError (nothing is submitted then) as soon as the tickets pass ``max_lines``, or
    when a question is over ``max_question_chars`` (naming its line); other bad lines come back
    as TicketErrors."""
    parsed: list[tuple[int, Ticket | TicketError]] = []
    for item in parse_lines(stream, source=source,
                            max_question_chars=limits.max_question_chars):
        parsed.append(item)
        if len(parsed) > limits.max_lines:
            raise LimitExceededError(
                f"more than {limits.max_lines} tickets (over the limit at line {item[0]}; "
                "RAGQ_MAX_BATCH_LINES)", limit="max_batch_lines", source=source, line=item[0])
    _refuse_long_questions(parsed, source)
    return parsed


def read_ticket_file(path: Path, *, max_lines: int, max_bytes: int,
                     max_question_chars: int = MAX_QUESTION_CHARS
                     ) -> list[tuple[int, Ticket | TicketError]]:
    """Parse a JSONL file of tickets. Raises InputError when the file is missing and
    LimitExceededError when it is over the limits (nothing is submitted then: a half-accepted
    oversize batch helps nobody)."""
    if not path.is_file():
        raise InputError("no such file", source=str(path))
    size = path.stat().st_size
    if size > max_bytes:
        raise LimitExceededError(
            f"{size} bytes is over the limit of {max_bytes} (RAGQ_MAX_BATCH_BYTES)",
            limit="max_batch_bytes", source=str(path))
    limits = Limits(max_lines, max_bytes, max_question_chars)
    with path.open(encoding="utf-8", errors="replace") as fh:
        return read_tickets(fh, limits=limits, source=str(path))


def parse_budget(text: str, *, source: str = "budget") -> dict[str, object]:
    """A batch budget given as JSON text (a CLI option, a query field), validated like a
    ticket's; InputError names the key that is wrong."""
    try:
        return Budget.model_validate_json(text).model_dump(exclude_none=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "JSON"
        raise InputError(f"{where}: {first['msg']}", source=source) from exc
