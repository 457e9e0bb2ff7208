"""Which route a ticket is reviewed for: the median of its asks' routes, so one investigative
need among routine ones does not send the whole ticket to a human."""

from __future__ import annotations

import pytest

from ragq.orchestration.flow import FlowConfig
from ragq.orchestration.flow.answer import reviewed_route
from ragq.orchestration.flow.state import AskState, JobState
from ragq.schemas.statuses import JobStatus


def _job(routes: list[str], route: str) -> JobState:
    asks = tuple(AskState(i, f"ask {i}", r) for i, r in enumerate(routes))
    return JobState("job", "q", "kb", ("public",), JobStatus.SYNTHESIZING, FlowConfig(),
                    route=route, asks=asks)


@pytest.mark.parametrize(("routes", "expected"), [
    (["escalate"], "escalate"),
    (["escalate", "simple", "simple", "simple"], "simple"),
    (["escalate", "escalate", "simple", "simple"], "escalate"),
    (["escalate", "full", "bounded"], "full"),
    (["bounded", "escalate", "full", "simple", "simple"], "bounded"),
])
def test_a_ticket_is_reviewed_for_the_route_half_its_asks_reach(routes, expected):
    assert reviewed_route(_job(routes, max(routes, key=len))) == expected
