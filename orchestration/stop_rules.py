"""When the verify -> follow-up loop ends.

Four reasons, checked in this order so the most useful one is reported when several hold:
the evidence is good enough (``sufficient``), the rounds are used up (``max_iterations``), the
loop stopped paying off (``no_new_evidence``: the last two rounds each added nothing new), or the
budget says stop (``budget``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

DEFAULT_MIN_CONFIDENCE = 0.7
DEFAULT_MAX_ROUNDS = 3
STALL_ROUNDS = 2  # consecutive rounds without new evidence that end the loop


class StopReason(StrEnum):
    """Why the loop ended."""

    SUFFICIENT = "sufficient"
    MAX_ITERATIONS = "max_iterations"
    NO_NEW_EVIDENCE = "no_new_evidence"
    BUDGET = "budget"


@dataclass(frozen=True)
class VerifyRound:
    """One verification round: the verdict and how many evidence items it brought that no
    earlier round had."""

    sufficient: bool
    confidence: float
    new_evidence: int


@dataclass(frozen=True)
class StopDecision:
    """``stop`` with its ``reason`` (None while the loop continues)."""

    stop: bool
    reason: StopReason | None = None
    detail: str = ""


def decide_stop(
    history: Sequence[VerifyRound],
    *,
    round_number: int | None = None,
    min_confidence: float = DEFAULT_MIN_CONFIDENCE,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    budget_allows_more: bool = True,
) -> StopDecision:
    """Whether to stop after the latest round of ``history``.

    ``round_number`` is the number of rounds done (default ``len(history)``). An empty
    history continues unless the budget or ``max_rounds`` (<= 0) forbid a first round.
    """
    done = len(history) if round_number is None else round_number
    last = history[-1] if history else None
    if last and last.sufficient and last.confidence >= min_confidence:
        return StopDecision(True, StopReason.SUFFICIENT,
                            f"sufficient with confidence {last.confidence:.2f} "
                            f">= {min_confidence:.2f}")
    if done >= max_rounds:
        return StopDecision(True, StopReason.MAX_ITERATIONS, f"{done} of {max_rounds} rounds used")
    recent = history[-STALL_ROUNDS:]
    if len(recent) == STALL_ROUNDS and all(r.new_evidence <= 0 for r in recent):
        return StopDecision(True, StopReason.NO_NEW_EVIDENCE,
                            f"the last {STALL_ROUNDS} rounds added no new evidence")
    if not budget_allows_more:
        return StopDecision(True, StopReason.BUDGET, "the budget allows no further round")
    return StopDecision(False, None, f"round {done + 1} of {max_rounds} may run")
