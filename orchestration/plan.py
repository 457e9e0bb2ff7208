"""Plan validation and layering: no plan is executed as the planner wrote it.

A planner (a model or a heuristic) may return cycles, dangling or forward references,
duplicates, empty sub-queries or more sub-queries than the budget allows. :func:`validate_plan`
repairs what it can and falls back to a single-shot plan (the question itself) when nothing
usable remains; it never raises on a bad plan, and every repair is recorded as a sentence, so the
ledger can say why the executed plan differs from the proposed one.

After validation every dependency points to an EARLIER index, so the plan is a DAG by
construction and :func:`layers` needs no cycle check.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ragq.errors import RagqError
from ragq.orchestration.text import normalize_query
from ragq.schemas.flow import Plan, PlannedSubQuery, Strategy

PLACEHOLDER = re.compile(r"\{(\d+)\}")


class PlanError(RagqError):
    """Raised when a plan cannot even be validated (e.g. a budget of zero sub-queries)."""


@dataclass(frozen=True)
class ValidatedPlan:
    """A plan safe to execute: backward-only dependencies, placeholders that match them, within
    budget. ``repairs`` says what was changed, in order; ``fallback`` is True when the plan was
    replaced by the single-shot plan."""

    sub_queries: tuple[PlannedSubQuery, ...]
    strategy: Strategy
    repairs: tuple[str, ...] = ()
    fallback: bool = False

    def as_plan(self, reason: str = "") -> Plan:
        """The validated plan as the pydantic contract (for the ledger and the plan cache)."""
        return Plan(sub_queries=list(self.sub_queries), strategy=self.strategy, reason=reason)


@dataclass
class _Repair:
    """Working state of one validation: kept sub-queries and the old -> new index map."""

    kept: list[PlannedSubQuery] = field(default_factory=list)
    new_index: dict[int, int] = field(default_factory=dict)
    seen: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def validate_plan(plan: Plan, *, question: str, max_sub_queries: int) -> ValidatedPlan:
    """Repair ``plan`` or replace it by the single-shot plan; never raises on a bad plan.

    Raises :class:`PlanError` only when ``max_sub_queries`` < 1 (no plan could fit).
    """
    if max_sub_queries < 1:
        raise PlanError(f"max_sub_queries must be at least 1, got {max_sub_queries}")
    state = _Repair()
    for old, sub in enumerate(plan.sub_queries):
        _admit(state, old, sub, plan.sub_queries)
    if len(state.kept) > max_sub_queries:
        dropped = len(state.kept) - max_sub_queries
        # Dependencies point backwards, so the dropped tail holds every dependent of a dropped
        # item: truncation never leaves a dangling reference.
        state.kept = state.kept[:max_sub_queries]
        state.notes.append(
            f"dropped the last {dropped} sub-quer{'y' if dropped == 1 else 'ies'}: the budget "
            f"allows {max_sub_queries}"
        )
    if not state.kept:
        state.notes.append("no usable sub-query left: fell back to the question itself")
        single = PlannedSubQuery(text=question.strip() or question, reason="single-shot fallback")
        return ValidatedPlan((single,), Strategy.SINGLE, tuple(state.notes), fallback=True)
    strategy = plan.strategy
    if len(state.kept) == 1 and strategy is not Strategy.SINGLE:
        state.notes.append(f"one sub-query left: strategy {strategy.value} became single")
        strategy = Strategy.SINGLE
    return ValidatedPlan(tuple(state.kept), strategy, tuple(state.notes))


def _admit(state: _Repair, old: int, sub: PlannedSubQuery, all_subs: list[PlannedSubQuery]) -> None:
    """Repair sub-query ``old`` against the ones kept so far and keep it unless it is empty,
    unresolvable or a duplicate."""
    label = f"sub-query {old}"
    if not sub.text.strip():
        state.notes.append(f"{label} is empty: dropped")
        return
    deps = _valid_dependencies(state, old, sub, all_subs)
    if deps is None:
        return
    text = _remap_placeholders(state, old, sub.text.strip())
    if text is None:
        return
    for dep in sorted(_placeholders(text) - set(deps)):
        state.notes.append(f"{label}: placeholder {{{dep}}} implies depends_on {dep}: added")
        deps.append(dep)
    if not text.strip() or not normalize_query(PLACEHOLDER.sub("", text)):
        state.notes.append(f"{label} has no words besides placeholders: dropped")
        return
    key = normalize_query(text)
    if key in state.seen:
        state.new_index[old] = state.seen[key]
        state.notes.append(f"{label} duplicates sub-query {state.seen[key]}: merged into it")
        return
    new = len(state.kept)
    state.kept.append(PlannedSubQuery(text=text, depends_on=sorted(set(deps)), reason=sub.reason,
                                      filters=sub.filters))
    state.new_index[old] = new
    state.seen[key] = new


def _valid_dependencies(
    state: _Repair, old: int, sub: PlannedSubQuery, all_subs: list[PlannedSubQuery]
) -> list[int] | None:
    """New indexes of the earlier sub-queries ``old`` depends on; None when it needs the
    finding of a dropped sub-query (its placeholder could never be filled)."""
    label = f"sub-query {old}"
    deps: list[int] = []
    for dep in dict.fromkeys(sub.depends_on):
        if dep == old:
            state.notes.append(f"{label} depends on itself: edge dropped")
        elif dep < 0 or dep >= len(all_subs):
            state.notes.append(f"{label} depends on {dep}, which does not exist: edge dropped")
        elif dep > old:
            kind = "a cycle" if _reaches(all_subs, dep, old) else "a forward reference"
            state.notes.append(f"{label} depends on later sub-query {dep} ({kind}): edge dropped")
        elif dep not in state.new_index:
            if f"{{{dep}}}" in sub.text:
                state.notes.append(f"{label} needs dropped sub-query {dep}: dropped too")
                return None
            state.notes.append(f"{label} depends on dropped sub-query {dep}: edge dropped")
        else:
            deps.append(state.new_index[dep])
    return deps


def _remap_placeholders(state: _Repair, old: int, text: str) -> str | None:
    """``text`` with placeholders renumbered to new indexes; unresolvable ones removed (None
    when the text needs a dropped sub-query's finding)."""

    def renumber(match: re.Match[str]) -> str:
        ref = int(match.group(1))
        if ref < old and ref in state.new_index:
            return f"{{{state.new_index[ref]}}}"
        state.notes.append(f"sub-query {old}: placeholder {{{ref}}} names no earlier kept "
                           "sub-query: removed")
        return ""

    for ref in _placeholders(text):
        if ref < old and ref not in state.new_index:
            state.notes.append(f"sub-query {old} needs dropped sub-query {ref}: dropped too")
            return None
    return " ".join(PLACEHOLDER.sub(renumber, text).split())


def _placeholders(text: str) -> set[int]:
    return {int(m.group(1)) for m in PLACEHOLDER.finditer(text)}


def _reaches(subs: list[PlannedSubQuery], start: int, target: int) -> bool:
    """Whether ``target`` is reachable from ``start`` along the proposed (unrepaired) edges."""
    stack, seen = [start], set()
    while stack:
        node = stack.pop()
        if node == target:
            return True
        if node in seen or not 0 <= node < len(subs):
            continue
        seen.add(node)
        stack.extend(subs[node].depends_on)
    return False


def depths(depends_on: Sequence[Sequence[int]]) -> list[int]:
    """Each node's layer in a DAG given in topological order: 0 without dependencies, else one
    past its deepest dependency's. A dependency that is not an earlier node counts as none."""
    depth: list[int] = []
    for deps in depends_on:
        depth.append(1 + max((depth[d] for d in deps if 0 <= d < len(depth)), default=-1))
    return depth


def layers(validated: ValidatedPlan) -> list[list[int]]:
    """Topological layers: layer k holds the sub-queries whose dependencies all sit in layers
    before k (so a layer runs as one parallel chord). Every index appears exactly once."""
    depth = depths([sub.depends_on for sub in validated.sub_queries])
    out: list[list[int]] = [[] for _ in range(max(depth, default=-1) + 1)]
    for index, level in enumerate(depth):
        out[level].append(index)
    return out
