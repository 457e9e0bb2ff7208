"""Fill a dependent sub-query with what its dependencies found.

A planner writes ``Who founded {0}?``; once sub-query 0 has found ``Ford Motor Company`` the
dependent searches ``Who founded Ford Motor Company?``. When a dependency found nothing, the
dependency's own query text stands in (a search for "the company that makes the Model T"
still points at the right neighbourhood); only when there is not even that is the placeholder
dropped. Every fallback is noted, so the ledger shows which hops ran on a guess.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ragq.orchestration.plan import PLACEHOLDER
from ragq.schemas.flow import PlannedSubQuery

# Words a dropped placeholder would leave dangling ("the founder of" -> "the founder").
_DROPPED = "\x00"
_DANGLING = re.compile(r"(?:\s+(?:of|in|for|by|from|at|to|with|the|a|an))*\s*\x00", re.I)


@dataclass(frozen=True)
class Substituted:
    """The text to search and why it differs from the planned text."""

    text: str
    notes: tuple[str, ...] = ()


def _clean(text: str) -> str:
    text = _DANGLING.sub("", text)
    text = " ".join(text.split())
    return re.sub(r"\s+([?.!,;:])", r"\1", text).strip()


def substitute(
    sub_query: PlannedSubQuery,
    findings: Mapping[int, str | None],
    *,
    dependency_texts: Mapping[int, str] | None = None,
) -> Substituted:
    """``sub_query``'s text with each ``{i}`` replaced by ``findings[i]``.

    A missing or blank finding falls back to ``dependency_texts[i]`` (the dependency's query),
    else the placeholder is removed. Dependencies named in ``depends_on`` without a placeholder
    have their findings appended, so the search still carries them. Never raises: braces that
    are not ``{digits}`` are left alone.
    """
    fallbacks = dependency_texts or {}
    notes: list[str] = []

    def value(index: int) -> str:
        found = (findings.get(index) or "").strip()
        if found:
            return found
        stand_in = PLACEHOLDER.sub("", fallbacks.get(index, "")).strip(" ?.!")
        if stand_in:
            notes.append(f"{{{index}}}: no finding; used its query text {stand_in!r}")
            return stand_in
        notes.append(f"{{{index}}}: no finding and no query text; placeholder dropped")
        return _DROPPED

    text = PLACEHOLDER.sub(lambda m: value(int(m.group(1))), sub_query.text)
    named = {int(m.group(1)) for m in PLACEHOLDER.finditer(sub_query.text)}
    extra = [
        found.strip()
        for dep in sub_query.depends_on
        if dep not in named and (found := findings.get(dep) or "").strip()
    ]
    if extra:
        text = f"{text.rstrip()} ({'; '.join(extra)})"
        notes.append(f"appended findings of dependencies without a placeholder: {extra}")
    return Substituted(_clean(text) or _clean(sub_query.text.replace(_DROPPED, "")),
                       tuple(notes))
