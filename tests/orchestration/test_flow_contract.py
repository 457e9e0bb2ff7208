"""The evidence contract in the flow: a job whose planned sub-queries were all answered from a
cited source stops with no verifier call, and the ledger says why; one with a key unanswered
asks the verifier. Through the real decisions and step runner, in process."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ragq.cli.main import app
from ragq.ledger import add_job, make_engine, session_scope
from ragq.ledger.memory import MemoryJob, MemoryLedger
from ragq.ledger.sql_flow import SqlFlowLedger
from ragq.schemas.flow import (
    Evidence,
    Finding,
    Plan,
    PlannedSubQuery,
    Strategy,
    SufficiencyVerdict,
    Usage,
    Verification,
)
from ragq.tasks.inline import InlineDispatcher
from ragq.tasks.runner import Runner
from tests.fakes.flow_world import COLLECTION, config, seeded_world
from tests.ledger_template import migrated

PARTS = ["Who makes the Orion lens?", "Who makes the Vega lens?", "Who makes the Lyra lens?"]


def _world(answered: Sequence[bool], roles: list[str]) -> Any:
    """A world whose planner plans ``len(answered)`` parallel parts; part ``i``'s check is
    sufficient when ``answered[i]``; ``roles`` collects the roles the provider was asked."""
    world = seeded_world(3)
    provider = world.provider
    parts = PARTS[: len(answered)]

    def plan(question: str, **kw: object) -> tuple[Plan, Usage]:
        roles.append("planner")
        return Plan(sub_queries=[PlannedSubQuery(text=p) for p in parts],
                    strategy=Strategy.AGGREGATE), Usage(model="m")

    def check(sub_query: str, evidence: Sequence[Evidence], **kw: object
              ) -> tuple[SufficiencyVerdict, Usage]:
        roles.append("sufficiency")
        ok = sub_query in parts and answered[parts.index(sub_query)]
        return SufficiencyVerdict(sufficient=ok, score=0.9 if ok else 0.2,
                                  finding=Finding(text="Orion Labs")), Usage(model="m")

    def verify(question: str, evidence: Sequence[Evidence], *, findings: Sequence[str],
               missing: Sequence[str] = ()) -> tuple[Verification, Usage]:
        roles.append("verifier")
        roles.extend(f"missing {key}" for key in missing)
        return Verification(sufficient=True, confidence=0.9), Usage(model="m")

    provider.plan, provider.check_sufficiency = plan, check  # type: ignore[method-assign]
    provider.verify = verify  # type: ignore[method-assign]
    return world


def _job(answered: Sequence[bool], *, plans_stop: bool = False
         ) -> tuple[MemoryJob, list[str]]:
    roles: list[str] = []
    world = _world(answered, roles)
    ledger = MemoryLedger()
    job_id = ledger.add_job(_question(answered), collection=COLLECTION, meta={"route": "full"})
    flow = config(adaptive_expansion=False, contract_stops_plans=plans_stop)
    InlineDispatcher(Runner(ledger, world, flow)).run(job_id)
    return ledger.jobs[job_id], roles


def _question(answered: Sequence[bool]) -> str:
    """One question (not a ticket: its asks would each be planned)."""
    return f"Who makes each of the {len(answered)} lenses?"


@settings(max_examples=16, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=3), st.booleans())
def test_a_met_contract_stops_without_a_verifier_and_an_unmet_one_never_does(answered,
                                                                            plans_stop):
    """A met contract of one key ends the loop with no verifier call; of several keys too when
    ``contract_stops_plans`` is on, else the verifier reads it. A key unanswered: never."""
    job, roles = _job(answered, plans_stop=plans_stop)
    assert job.status in ("completed", "insufficient_evidence")
    first = job.verifications[0]
    if all(answered) and (len(answered) == 1 or plans_stop):
        assert "verifier" not in roles and job.stop_reason == "sufficient"
        assert "evidence contract met" in first.reason and "no verifier call" in first.reason
        assert all(p in first.reason for p in PARTS[: len(answered)])  # the contract, recorded
    else:
        assert roles.count("verifier") == 1 and "evidence contract" not in first.reason
        # the verifier is told which keys the searches left unanswered, and only those
        unanswered = [f"missing {i}: {p}" for i, (p, ok) in enumerate(zip(PARTS, answered,
                                                                           strict=False))
                      if not ok]
        assert [r for r in roles if r.startswith("missing ")] == unanswered


def test_ragq_ledger_job_shows_the_contract_and_the_check_that_ended_the_loop(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [k for k in os.environ if k.startswith("RAGQ_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("RAGQ_HOME", str(tmp_path))
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    migrated(url)
    ledger = SqlFlowLedger(make_engine(url))
    with session_scope(ledger.engine) as session:
        job_id = add_job(session, batch_id=None, custom_id=None, position=None, tenant="t",
                         collection=COLLECTION, question=_question([True, True]),
                         acl=["public"], metadata={"route": "full"}).id
    roles: list[str] = []
    flow = config(contract_stops_plans=True)
    InlineDispatcher(Runner(ledger, _world([True, True], roles), flow)).run(job_id)
    result = CliRunner().invoke(app, ["ledger", "job", job_id, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    (verification,) = report["verifications"]
    assert verification["sufficient"] and "evidence contract met: 2 key(s)" in \
        verification["reason"]
    assert f"'0: {PARTS[0]}': >= 1 source, cited" in verification["reason"]
    called = [c["role"] for c in report["model_calls"]]
    # two parts and the whole question (insurance, searched and checked, but no key)
    assert "verifier" not in called and called.count("sufficiency+finder") == 3
