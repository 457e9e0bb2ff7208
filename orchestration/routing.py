"""Which path a routed question takes, and the default budget knobs of each path.

The mapping is a registry, not an if-chain: adding a question class means adding one entry to
each dict, and a missing entry fails loudly where the class is looked up.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ragq.errors import RagqError
from ragq.schemas.flow import QuestionClass


class RoutePath(StrEnum):
    """How much machinery a question gets."""

    SIMPLE = "simple"  # one retrieval, then synthesis
    BOUNDED = "bounded"  # a small plan, few rounds
    FULL = "full"  # a full DAG plan with verification rounds
    ESCALATE = "escalate"  # the largest budget; flagged for a human or a stronger model


#: Routes from the narrowest to the widest.
ROUTE_ORDER = [RoutePath.SIMPLE, RoutePath.BOUNDED, RoutePath.FULL, RoutePath.ESCALATE]


class UnknownRouteError(RagqError):
    """Raised when a question class or path has no registry entry; the message lists the known
    ones."""

    def __init__(self, name: str, known: list[str]):
        self.name = name
        self.known = known
        super().__init__(f"no route for {name!r}; known: {', '.join(known)}")


@dataclass(frozen=True)
class RouteBudget:
    """The knobs of one path. ``max_retrieval_attempts`` counts the first search plus rewrites
    per sub-query; ``max_verify_rounds`` counts verifier calls (0: no verification)."""

    max_sub_queries: int
    max_retrieval_attempts: int = 3
    max_verify_rounds: int = 3

    def __post_init__(self) -> None:
        if self.max_sub_queries < 1 or self.max_retrieval_attempts < 1:
            raise ValueError(f"a route needs at least one sub-query and one attempt: {self!r}")
        if self.max_verify_rounds < 0:
            raise ValueError(f"max_verify_rounds must be >= 0: {self!r}")


ROUTE_PATHS: dict[QuestionClass, RoutePath] = {
    QuestionClass.SIMPLE_FACT: RoutePath.SIMPLE,
    QuestionClass.PROCEDURAL: RoutePath.BOUNDED,
    QuestionClass.MULTI_HOP: RoutePath.FULL,
    QuestionClass.INVESTIGATIVE: RoutePath.ESCALATE,
}

ROUTE_BUDGETS: dict[RoutePath, RouteBudget] = {
    # simple questions cost exactly one retrieval: no rewrite, no verification round
    RoutePath.SIMPLE: RouteBudget(max_sub_queries=1, max_retrieval_attempts=1,
                                  max_verify_rounds=0),
    RoutePath.BOUNDED: RouteBudget(max_sub_queries=3, max_retrieval_attempts=3,
                                   max_verify_rounds=2),
    RoutePath.FULL: RouteBudget(max_sub_queries=5),
    RoutePath.ESCALATE: RouteBudget(max_sub_queries=6),
}


def path_for(question_class: QuestionClass | str) -> RoutePath:
    """The path of a question class; raises :class:`UnknownRouteError` for an unknown class."""
    try:
        return ROUTE_PATHS[QuestionClass(question_class)]
    except (ValueError, KeyError) as exc:
        raise UnknownRouteError(str(question_class), [c.value for c in ROUTE_PATHS]) from exc


def budget_for(path: RoutePath | str) -> RouteBudget:
    """The default knobs of a path; raises :class:`UnknownRouteError` for an unknown path."""
    try:
        return ROUTE_BUDGETS[RoutePath(path)]
    except (ValueError, KeyError) as exc:
        raise UnknownRouteError(str(path), [p.value for p in ROUTE_BUDGETS]) from exc
