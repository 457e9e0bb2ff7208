"""Reading JSONL input one line at a time, so that one bad line fails alone: each line is
decoded as UTF-8 by itself (a byte-order mark on line 1 is dropped, as ``utf-8-sig`` would),
and parsed as strict JSON (no NaN, no nesting deep enough to overflow the parser)."""

from __future__ import annotations

import json


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not valid JSON")


def decode_line(raw: str | bytes, number: int) -> str:
    """The text of line ``number`` (1-based). Raises ValueError naming the byte offset of
    invalid UTF-8."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"invalid UTF-8 at byte {exc.start + 1} of the line") from exc
    return raw.removeprefix("\ufeff") if number == 1 else raw


def load_json_line(text: str) -> object:
    """One JSON value. Raises ValueError with a one-line reason starting ``invalid JSON:`` for
    a syntax error, NaN or Infinity, nesting too deep for the parser, or an integer of more
    digits than Python converts."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON: {exc.msg} at column {exc.colno}") from exc
    except RecursionError as exc:
        raise ValueError("invalid JSON: nested too deeply") from exc
    except ValueError as exc:
        raise ValueError(f"invalid JSON: {exc}") from exc
