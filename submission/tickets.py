"""Reading a ticket batch: every line becomes a ticket or an error with its line number and
reason; limits on lines and bytes are enforced up front with a clear message (SPEC C2)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ragq.errors import InputError, LimitExceededError
from ragq.ingestion.jsonl import decode_line, load_json_line
from ragq.ingestion.sources import describe_validation_error
from ragq.schemas.text import collection_name_problem, input_problem
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
        custom_id: str = raw["custom_id"]
        return custom_id if input_problem(custom_id) is None else None
    return None


def _too_long(number: int, data: object, max_question_chars: int) -> TicketError | None:
    question = data.get("question") if isinstance(data, dict) else None
    if isinstance(question, str) and len(question.strip()) > max_question_chars:
        return TicketError(number, _custom_id(data), "question_too_long",
                           f"question is {len(question.strip())} characters, over the limit of "
                           f"{max_question_chars} (RAGQ_MAX_QUESTION_CHARS)")
    return None


def describe_ticket_error(exc: ValidationError) -> str:
    """One line naming each bad field of a ticket and why (never the value itself)."""
    return describe_validation_error(exc).replace("(document)", "(ticket)")


def _ticket_or_error(number: int, raw: str | bytes, max_question_chars: int
                     ) -> Ticket | TicketError | None:
    """The ticket of one line, its error, or None for a blank line."""
    try:
        text = decode_line(raw, number)
    except ValueError as exc:
        return TicketError(number, None, "invalid_utf8", str(exc))
    if not text.strip():
        return None
    try:
        data = load_json_line(text)
    except ValueError as exc:
        return TicketError(number, None, "invalid_json", str(exc))
    if not isinstance(data, dict):
        return TicketError(number, None, "invalid_ticket",
                           f"expected a JSON object, got {type(data).__name__}")
    too_long = _too_long(number, data, max_question_chars)
    if too_long:
        return too_long
    try:
        return Ticket.model_validate(data)
    except ValidationError as exc:
        return TicketError(number, _custom_id(data), "invalid_ticket", describe_ticket_error(exc))


def parse_lines(lines: Iterable[str | bytes], *, source: str,
                max_question_chars: int = MAX_QUESTION_CHARS
                ) -> Iterator[tuple[int, Ticket | TicketError]]:
    """(line number, ticket or error) for each non-blank line (text, or bytes decoded as
    UTF-8 here so one bad line fails alone); a repeated custom_id is an error (results are
    matched by it), and so is a question over ``max_question_chars``."""
    seen: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        item = _ticket_or_error(number, raw, max_question_chars)
        if item is None:
            continue
        if isinstance(item, Ticket) and item.custom_id in seen:
            item = TicketError(number, item.custom_id, "duplicate_custom_id",
                               f"custom_id {item.custom_id!r} already used at line "
                               f"{seen[item.custom_id]}")
        elif isinstance(item, Ticket):
            seen[item.custom_id] = number
        yield number, item


@dataclass(frozen=True)
class Limits:
    """The submission limits (SPEC C2), from settings."""

    max_lines: int
    max_bytes: int
    max_question_chars: int = MAX_QUESTION_CHARS


def read_tickets(stream: Iterable[str | bytes], *, limits: Limits, source: str
                 ) -> list[tuple[int, Ticket | TicketError]]:
    """Parse JSONL tickets (any iterable of lines, text or UTF-8 bytes), one line at a time.
    Raises LimitExceededError (nothing is submitted then) as soon as the tickets pass
    ``max_lines``: only limits on the whole upload refuse it. A bad line, an over-long
    question included, comes back as a TicketError and fails alone."""
    parsed: list[tuple[int, Ticket | TicketError]] = []
    for item in parse_lines(stream, source=source,
                            max_question_chars=limits.max_question_chars):
        parsed.append(item)
        if len(parsed) > limits.max_lines:
            raise LimitExceededError(
                f"more than {limits.max_lines} tickets (over the limit at line {item[0]}; "
                "RAGQ_MAX_BATCH_LINES)", limit="max_batch_lines", source=source, line=item[0])
    return parsed


def read_ticket_file(path: Path, *, max_lines: int, max_bytes: int,
                     max_question_chars: int = MAX_QUESTION_CHARS
                     ) -> list[tuple[int, Ticket | TicketError]]:
    """Parse a JSONL file of tickets (UTF-8, a byte-order mark allowed). Raises InputError when
    the file is missing and LimitExceededError when it is over the limits (nothing is submitted
    then: a half-accepted oversize batch helps nobody)."""
    if not path.is_file():
        raise InputError("no such file", source=str(path))
    size = path.stat().st_size
    if size > max_bytes:
        raise LimitExceededError(
            f"{size} bytes is over the limit of {max_bytes} (RAGQ_MAX_BATCH_BYTES)",
            limit="max_batch_bytes", source=str(path))
    limits = Limits(max_lines, max_bytes, max_question_chars)
    with path.open("rb") as fh:  # bytes: each line is decoded alone, see decode_line
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


def check_collection(name: str, *, source: str = "collection") -> str:
    """``name`` when it may name a collection; InputError saying which names are valid (a
    bad name would only fail later, in a worker, after the jobs were accepted)."""
    problem = collection_name_problem(name)
    if problem:
        raise InputError(problem, source=source)
    return name
