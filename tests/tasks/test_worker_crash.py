"""A worker killed in the middle of a paid step: the resident supervisor restarts
it and hands its task to the replacement, the job completes, and the budget is charged once."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from ragq.ingestion.submit import ingest_path
from ragq.ledger import session_scope
from ragq.ledger.models import BudgetChargeRow, JobBudgetRow
from ragq.schemas.statuses import ChargeOutcome
from ragq.submission import results, submit_file, wait
from ragq.workers.stack_state import load_state
from ragq.workers.wiring import build_ledger_engine
from tests.conftest import Stack, running_stack
from tests.fakes import FakeOpenAIServer
from tests.tasks.conftest import openai_overrides
from tests.tasks.test_flow import BRIDGE_DOCS, write_jsonl

pytestmark = pytest.mark.stack


@pytest.fixture(scope="module")
def crash_stack(chat_server: FakeOpenAIServer, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[Stack]:
    # The default visibility timeout (11 minutes): the task comes back because the supervisor
    # restores it, not because the broker's sweep does.
    overrides = openai_overrides(chat_server, tmp_path_factory.mktemp("ragq-crash"),
                                 openai_timeout_s=120)
    with running_stack(overrides) as stack:
        yield stack


def _kill_general_worker(stack: Stack) -> None:
    state = load_state(stack.settings)
    assert state is not None
    (worker,) = [p for p in state.processes if p.name == "general"]
    os.kill(worker.pid, signal.SIGKILL)
    _until(lambda: not worker.is_running(), 10)  # a signal is delivered, not obeyed, at once


def _until(condition, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_a_worker_killed_after_charging_is_redelivered_and_charges_once(
        crash_stack: Stack, chat_server: FakeOpenAIServer, collection: str, tmp_path: Path):
    settings = crash_stack.settings
    ingest_path(settings, write_jsonl(tmp_path / "docs.jsonl", BRIDGE_DOCS),
                collection=collection)
    chat_server.delay("synthesizer", 60)  # the first synthesis hangs until we kill its worker
    sent = submit_file(settings, write_jsonl(tmp_path / "t.jsonl", [
        {"custom_id": "crash", "question": "Who makes the Zephyr camera?", "route": "simple"}]),
        collection=collection)
    _until(lambda: chat_server.chat_by_role["synthesizer"] == 1, 60)
    _kill_general_worker(crash_stack)

    assert wait(settings, sent.batch_id, timeout_s=150)["counts"]["completed"] == 1
    (result,) = results(settings, sent.batch_id)
    assert result["status"] == "completed" and result["answer"]
    assert chat_server.chat_by_role["synthesizer"] == 2  # the step really ran twice
    with session_scope(build_ledger_engine(settings)) as session:
        job_id = result["job_id"]
        paid = session.scalar(select(func.count()).select_from(BudgetChargeRow).where(
            BudgetChargeRow.job_id == job_id,
            BudgetChargeRow.idempotency_key == "synthesize:pre/steps"))
        granted_steps = session.scalar(select(func.sum(BudgetChargeRow.amount)).where(
            BudgetChargeRow.job_id == job_id, BudgetChargeRow.dimension == "steps",
            BudgetChargeRow.outcome == ChargeOutcome.GRANTED))
        budget = session.get(JobBudgetRow, job_id)
    assert paid == 1  # ... and paid once
    assert budget is not None and budget.used_steps == int(granted_steps)
