"""Checks on text that enters ragq from outside, shared by every schema that takes it: lone
surrogates (valid in JSON escapes, invalid as UTF-8, so the ledger or a response would fail
later) and collection names (they become directories and Qdrant collection names)."""

from __future__ import annotations

import math
import re
from typing import Any

COLLECTION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
COLLECTION_RULE = ("use 1-64 letters, digits, '_', '-' or '.', starting with a letter or digit "
                   "and not ending with '.'")
_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_DEPTH = 64


def collection_name_problem(name: object) -> str | None:
    """Why ``name`` cannot be a collection name, or None when it can."""
    if not isinstance(name, str) or not COLLECTION_NAME.fullmatch(name) or name.endswith("."):
        shown = name if not isinstance(name, str) or len(name) <= 80 else name[:77] + "..."
        return f"invalid collection name {shown!r}: {COLLECTION_RULE}"
    return None


def _problem_here(value: Any) -> str | None:
    if isinstance(value, str) and _SURROGATE.search(value):
        return "text holds a lone UTF-16 surrogate (not valid Unicode)"
    if isinstance(value, str) and "\x00" in value:
        return "text holds a NUL character (\\u0000)"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value} is not a finite number"
    return None


def input_problem(value: Any, path: str = "", depth: int = 0) -> str | None:
    """What makes ``value`` (parsed JSON) unfit to keep, naming where: a string or key holding
    a lone UTF-16 surrogate such as ``\\udfff`` (valid as a JSON escape, invalid as UTF-8, so
    the ledger or a response would fail later) or a NUL (PostgreSQL text cannot hold it), a NaN
    or infinite number, or nesting deeper than 64 levels. None when there is nothing."""
    where = path or "(value)"
    if depth > _MAX_DEPTH:
        return f"{where.split('[')[0]}: nested deeper than {_MAX_DEPTH} levels"
    here = _problem_here(value)
    if here:
        return f"{where}: {here}"
    children: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and (_SURROGATE.search(key) or "\x00" in key):
                return f"{where}: a key holds a lone surrogate or a NUL (not valid text)"
            children.append((f"{path}.{key}" if path else str(key), item))
    elif isinstance(value, list | tuple):
        children = [(f"{path}[{i}]", item) for i, item in enumerate(value)]
    for child_path, item in children:
        found = input_problem(item, child_path, depth + 1)
        if found:
            return found
    return None


def reject_bad_input(value: Any) -> Any:
    """``value`` unchanged; raises ValueError saying what :func:`input_problem` found (a
    pydantic ``mode="before"`` model validator)."""
    found = input_problem(value)
    if found:
        raise ValueError(found)
    return value
