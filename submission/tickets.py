"""Reading a ticket batch: every line becomes a ticket or an error with its line number and
reason; limits on lines and bytes are enforced up front with a clear message."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragq.errors import InputError, LimitExceededError, TicketRefusedError
from ragq.ingestion.jsonl import decode_line, load_json_line
from ragq.ingestion.sources import describe_validation_error
from ragq.schemas.document import acl_labels
from ragq.schemas.text import collection_name_problem, input_problem
from ragq.schemas.ticket import (
    MAX_QUESTION_CHARS,
    Budget,
    Priority,
    SourceSelection,
    Ticket,
    sources_from_text,
)


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


def _with_annotations_as_metadata(data: dict[str, Any]) -> dict[str, Any]:
    """An evaluation line: keys that are no ticket field (question type, hops, asks) move
    into the ticket's metadata, so the line is otherwise read exactly as a ticket."""
    known = set(Ticket.model_fields)
    extra = {k: v for k, v in data.items() if k not in known}
    if not extra:
        return data
    metadata = data.get("metadata")
    merged = {**extra, **metadata} if isinstance(metadata, dict) else metadata
    return {k: v for k, v in data.items() if k in known} | {"metadata": merged or extra}


def parse_ticket(data: object, *, line: int, max_question_chars: int = MAX_QUESTION_CHARS,
                 annotations: bool = False) -> Ticket | TicketError:
    """The one reading of a ticket, whatever path it came by (a batch line, a JSON batch's
    item, ``POST /v1/jobs``, ``ragq ask``'s options, an evaluation line): the ticket, or why
    not as a :class:`TicketError` with its code. ``annotations``: an evaluation line, whose
    unknown keys become metadata instead of being refused."""
    if not isinstance(data, dict):
        return TicketError(line, None, "invalid_ticket",
                           f"expected a JSON object, got {type(data).__name__}")
    if annotations:
        data = _with_annotations_as_metadata(data)
    too_long = _too_long(line, data, max_question_chars)
    if too_long:
        return too_long
    try:
        return Ticket.model_validate(data)
    except ValidationError as exc:
        return TicketError(line, _custom_id(data), "invalid_ticket", describe_ticket_error(exc))


def ticket_or_refusal(data: object, *, max_question_chars: int, source: str | None = None
                      ) -> Ticket:
    """:func:`parse_ticket` for a path with one ticket: raises TicketRefusedError (its code
    and message) instead of returning the error."""
    item = parse_ticket(data, line=1, max_question_chars=max_question_chars)
    if isinstance(item, TicketError):
        raise refusal(item, source=source, line=None)
    return item


def refusal(error: TicketError, *, source: str | None = None, line: int | None = None
            ) -> TicketRefusedError:
    """The exception of a ticket refused where it cannot fail alone in an errors file."""
    return TicketRefusedError(error.message, code=error.code, source=source, line=line,
                              custom_id=error.custom_id)


def _ticket_or_error(number: int, raw: str | bytes, max_question_chars: int,
                     annotations: bool = False) -> Ticket | TicketError | None:
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
    return parse_ticket(data, line=number, max_question_chars=max_question_chars,
                        annotations=annotations)


def parse_lines(lines: Iterable[str | bytes], *, source: str,
                max_question_chars: int = MAX_QUESTION_CHARS, annotations: bool = False
                ) -> Iterator[tuple[int, Ticket | TicketError]]:
    """(line number, ticket or error) for each non-blank line (text, or bytes decoded as
    UTF-8 here so one bad line fails alone); a repeated custom_id is an error (results are
    matched by it), and so is a question over ``max_question_chars``. ``annotations``: an
    evaluation file (see :func:`parse_ticket`)."""
    seen: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        item = _ticket_or_error(number, raw, max_question_chars, annotations)
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
    """The submission limits, from settings."""

    max_lines: int
    max_bytes: int
    max_question_chars: int = MAX_QUESTION_CHARS


def read_tickets(stream: Iterable[str | bytes], *, limits: Limits, source: str,
                 annotations: bool = False) -> list[tuple[int, Ticket | TicketError]]:
    """Parse JSONL tickets (any iterable of lines, text or UTF-8 bytes), one line at a time.
    Raises LimitExceededError (nothing is submitted then) as soon as the tickets pass
    ``max_lines``: only limits on the whole upload refuse it. A bad line, an over-long
    question included, comes back as a TicketError and fails alone."""
    parsed: list[tuple[int, Ticket | TicketError]] = []
    for item in parse_lines(stream, source=source, max_question_chars=limits.max_question_chars,
                            annotations=annotations):
        parsed.append(item)
        if len(parsed) > limits.max_lines:
            raise LimitExceededError(
                f"more than {limits.max_lines} tickets (over the limit at line {item[0]}; "
                "RAGQ_MAX_BATCH_LINES)", limit="max_batch_lines", source=source, line=item[0])
    return parsed


def read_ticket_file(path: Path, *, max_lines: int, max_bytes: int,
                     max_question_chars: int = MAX_QUESTION_CHARS, annotations: bool = False
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
        return read_tickets(fh, limits=limits, source=str(path), annotations=annotations)


def parse_budget(text: str, *, source: str = "budget") -> dict[str, object]:
    """A batch budget given as JSON text (a CLI option, a query field), validated like a
    ticket's; InputError names the key that is wrong."""
    try:
        return Budget.model_validate_json(text).model_dump(exclude_none=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "JSON"
        raise InputError(f"{where}: {first['msg']}", source=source) from exc


def parse_sources(text: str, *, source: str = "sources") -> SourceSelection:
    """A batch's sources given as text (``--sources``, a query or form field): ``all`` or
    comma-separated names; InputError for one that names nothing."""
    try:
        return sources_from_text(text)
    except ValueError as exc:
        raise InputError(str(exc), source=source) from exc


def parse_priority(text: str, *, source: str = "--priority") -> Priority:
    """A batch's priority given as text (``ragq submit --priority``, a query or form field);
    InputError naming the two that are valid."""
    try:
        return Priority(text.strip())
    except ValueError as exc:
        raise InputError(f"priority must be one of {', '.join(Priority)}, got {text!r}",
                         source=source) from exc


def parse_acl(text: str, *, source: str = "--acl") -> tuple[str, ...]:
    """Comma-separated ACL labels of an option (``ragq search --acl``), read as every ACL is
    (:func:`ragq.schemas.document.acl_labels`); InputError for an empty or blank one: a search
    with no label would otherwise run without an ACL filter."""
    try:
        return acl_labels(text.split(","))
    except ValueError as exc:
        raise InputError(str(exc), source=source) from exc


def check_collection(name: str, *, source: str = "collection") -> str:
    """``name`` when it may name a collection; InputError saying which names are valid (a
    bad name would only fail later, in a worker, after the jobs were accepted)."""
    problem = collection_name_problem(name)
    if problem:
        raise InputError(problem, source=source)
    return name
