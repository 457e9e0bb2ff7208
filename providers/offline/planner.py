"""Heuristic decomposition (SPEC C4): comparisons, several questions in one, and nested
descriptions become sub-queries; anything else stays one sub-query.

The decomposers form a registry tried in order; the first that recognises the question's shape
writes the plan. Plans are proposals: orchestration.plan validates them like any model's.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ragq.orchestration.text import content_words, words
from ragq.providers.offline.lexicon import GENERIC, WH_WORDS, entities
from ragq.providers.offline.shapes import comparison_pair, conjunction_parts, focus_split
from ragq.providers.offline.structure import decompose_chain, normalize_heads
from ragq.schemas.flow import Plan, PlannedSubQuery, Strategy

Decomposer = Callable[[str, int], Plan | None]

_COMPARISON_WORDS = frozenset({"both", "either", "neither", "same", "versus", "vs", "compared",
                               "compare", "difference", "differences", "between", "or", "and",
                               "key", "terms"})
_ANAPHORA = re.compile(r"\b(?:this|that|these|those|it|its|they|them|their|such)\b", re.I)


def _compare(question: str, limit: int) -> Plan | None:
    pair = comparison_pair(question)
    if pair is None or limit < 2:
        return None
    own = {w for side in pair for w in words(side)}
    attribute = " ".join(w for w in content_words(question) if w not in own
                         and w not in _COMPARISON_WORDS | WH_WORDS | GENERIC)
    subs = [PlannedSubQuery(text=f"{side} {attribute}".strip(),
                            reason=f"the compared fact for {side!r}") for side in pair]
    return Plan(sub_queries=subs, strategy=Strategy.COMPARE,
                reason=f"comparison of {pair[0]!r} and {pair[1]!r}")


def _topic(part: str) -> str:
    """What a part is about, to resolve "this"/"it" in the parts after it."""
    named = entities(part)
    if named:
        return " ".join(named[:2])
    return " ".join([w for w in content_words(part) if w not in WH_WORDS][:4])


def _conjunction(question: str, limit: int) -> Plan | None:
    parts = conjunction_parts(question)[:limit]
    if len(parts) < 2:
        return None
    topic = _topic(parts[0])
    subs = []
    for index, part in enumerate(parts):
        text = f"{part} ({topic})" if index and _ANAPHORA.search(part) and topic else part
        subs.append(PlannedSubQuery(text=f"{text}?", reason=f"part {index + 1} of the question"))
    return Plan(sub_queries=subs, strategy=Strategy.AGGREGATE,
                reason=f"{len(parts)} questions joined into one")


def _focus(question: str, limit: int) -> Plan | None:
    split = focus_split(question)
    if split is None or limit < 2:
        return None
    first, second = split
    return Plan(sub_queries=[
        PlannedSubQuery(text=first, reason="identify the entity the question is about"),
        PlannedSubQuery(text=second, depends_on=[0], reason="ask the question of that entity"),
    ], strategy=Strategy.CHAIN, reason="a statement whose last entity carries the question")


def _chain(question: str, limit: int) -> Plan | None:
    hops: list[str] = []
    final = decompose_chain(normalize_heads(question.strip()), hops, max_hops=limit - 1)
    if not hops:
        return None
    texts = [*hops, final]
    subs = [
        PlannedSubQuery(
            text=text,
            depends_on=sorted({int(m) for m in re.findall(r"\{(\d+)\}", text)}),
            reason="resolve the described entity" if i < len(hops) else "answer the question",
        )
        for i, text in enumerate(texts)
    ]
    return Plan(sub_queries=subs, strategy=Strategy.CHAIN,
                reason=f"{len(hops)} nested description(s) resolved before the question")


DECOMPOSERS: dict[str, Decomposer] = {
    "compare": _compare,
    "conjunction": _conjunction,
    "chain": _chain,
    "focus": _focus,
}


def plan(question: str, *, max_sub_queries: int) -> Plan:
    """A plan for ``question`` with at most ``max_sub_queries`` sub-queries (at least one)."""
    limit = max(1, max_sub_queries)
    if limit > 1:
        for decompose in DECOMPOSERS.values():
            found = decompose(question, limit)
            if found is not None:
                return found
    return Plan(sub_queries=[PlannedSubQuery(text=question.strip() or question,
                                             reason="answered by one search")],
                strategy=Strategy.SINGLE, reason="no compound shape recognised")
