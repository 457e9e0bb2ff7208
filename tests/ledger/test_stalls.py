"""Idle jobs (ragq.ledger.stalls): a job under way that nothing has moved for the idle time is
named with the message it was last handed on with; a charge, a resumption or its end takes it
off the list (both backends)."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine

from ragq.ledger import WaitingLine, claim_next, session_scope
from ragq.ledger.budgets import charge_many, create_job_budget
from ragq.ledger.jobs import set_job_status
from ragq.ledger.models import utcnow
from ragq.ledger.sql_flow import SqlFlowLedger
from ragq.ledger.stalls import idle_jobs, mark_resumed, step_json, step_of
from ragq.orchestration.flow import Enqueue, EnqueueLayer, RecordNextStep
from ragq.schemas.statuses import BudgetDimension, JobStatus
from ragq.schemas.tasks import Task
from tests.ledger.test_jobs import finish, new_batch

IDLE_S = 30.0
LAYER = EnqueueLayer(0, 1, (2, 3))
VERIFY = Enqueue(Task.VERIFY, (0,))


def under_way(engine: Engine, job_id: str, step: Enqueue | EnqueueLayer | None) -> None:
    """The job started, paid a step, and (with ``step``) recorded it as its next message,
    the way a flow step writes it."""
    with session_scope(engine) as session:
        set_job_status(session, job_id=job_id, status=JobStatus.RETRIEVING)
        create_job_budget(session, job_id=job_id, limits={BudgetDimension.STEPS: 10})
        pay(session, job_id, "first")
    if step is not None:
        with SqlFlowLedger(engine).transaction() as tx:
            tx.write(job_id, RecordNextStep(step))


def pay(session: object, job_id: str, key: str) -> None:
    charge_many(session, job_id=job_id, amounts={BudgetDimension.STEPS: 1},  # type: ignore[arg-type]
                idempotency_key=key)


def idle(engine: Engine, after_s: float) -> dict[str, Enqueue | EnqueueLayer]:
    with session_scope(engine, readonly=True) as session:
        now = utcnow() + timedelta(seconds=after_s)
        return {j.job_id: j.step for j in idle_jobs(session, idle_s=IDLE_S, now=now)}


def test_a_job_nothing_moved_for_the_idle_time_is_named_with_its_next_message(engine: Engine):
    _, (layer_job, verify_job, fresh) = new_batch(engine, 3)
    under_way(engine, layer_job, LAYER)
    under_way(engine, verify_job, VERIFY)
    under_way(engine, fresh, VERIFY)
    assert idle(engine, after_s=IDLE_S - 5) == {}  # not idle yet
    assert idle(engine, after_s=IDLE_S + 5) == {layer_job: LAYER, verify_job: VERIFY,
                                                fresh: VERIFY}


def test_a_charge_moves_a_job_and_an_ended_or_waiting_job_is_never_idle(engine: Engine):
    _, (paying, ended, waiting) = new_batch(engine, 3)
    under_way(engine, paying, LAYER)
    under_way(engine, ended, LAYER)
    finish(engine, ended)
    later = IDLE_S + 5
    assert set(idle(engine, after_s=later)) == {paying}
    with session_scope(engine) as session:  # a step paid just now: the job moves
        pay(session, paying, "second")
        session.flush()
    assert idle(engine, after_s=IDLE_S - 5) == {}
    assert waiting not in idle(engine, after_s=10 * later)


def test_a_resumed_job_is_left_alone_for_the_idle_time(engine: Engine):
    _, (job_id, other) = new_batch(engine, 2)
    under_way(engine, job_id, VERIFY)
    under_way(engine, other, VERIFY)
    at = utcnow() + timedelta(seconds=IDLE_S + 5)
    with session_scope(engine) as session:
        assert mark_resumed(session, [job_id], now=at) == [job_id]
    assert set(idle(engine, after_s=IDLE_S + 5)) == {other}
    assert set(idle(engine, after_s=2 * IDLE_S + 10)) == {job_id, other}


def test_a_job_its_resumption_did_not_move_is_idle_again_as_the_same_stall(engine: Engine):
    """The sweeper moves a deadline once per stall: it must tell a job its last resumption left
    where it was (``again``) from one that moved after it and stalled anew."""
    _, (stuck, moved) = new_batch(engine, 2)
    under_way(engine, stuck, VERIFY)
    under_way(engine, moved, VERIFY)
    first = utcnow() + timedelta(seconds=IDLE_S + 5)
    with session_scope(engine, readonly=True) as session:
        assert [j.again for j in idle_jobs(session, idle_s=IDLE_S, now=first)] == [False, False]
    with session_scope(engine) as session:  # resumed a moment ago, then one of them paid
        resumed = utcnow()  # after the first charge, before the next
        assert set(mark_resumed(session, [stuck, moved], now=resumed)) == {stuck, moved}
    with session_scope(engine) as session:
        pay(session, moved, "after the resumption")
    later = utcnow() + timedelta(seconds=3 * IDLE_S)
    with session_scope(engine, readonly=True) as session:
        again = {j.job_id: j.again for j in idle_jobs(session, idle_s=IDLE_S, now=later)}
    assert again == {stuck: True, moved: False}


def test_only_jobs_under_way_are_marked_resumed(engine: Engine):
    _, (ended, running) = new_batch(engine, 2)
    under_way(engine, ended, VERIFY)
    under_way(engine, running, VERIFY)
    finish(engine, ended, JobStatus.CANCELLED)
    with session_scope(engine) as session:
        assert mark_resumed(session, [ended, running]) == [running]


def test_a_job_with_no_recorded_step_is_resumed_only_from_its_route(engine: Engine):
    _, (routing, retrieving) = new_batch(engine, 2)
    under_way(engine, retrieving, None)  # recorded before next steps were kept
    with session_scope(engine) as session:
        set_job_status(session, job_id=routing, status=JobStatus.ROUTING)
    assert idle(engine, after_s=IDLE_S + 5) == {routing: Enqueue(Task.ROUTE, ())}


def test_a_job_sent_from_the_waiting_line_and_never_started_resumes_from_its_route(
        engine: Engine):
    """Its route step was lost between the claim's commit and the send (a worker killed
    there): the waiting line would send it again only after the redelivery time."""
    _, (sent, waiting) = new_batch(engine, 2)
    with session_scope(engine) as session:
        claimed = claim_next(session, WaitingLine(1, timedelta(minutes=11)))
        assert [c.job_id for c in claimed] == [sent]
    assert idle(engine, after_s=IDLE_S - 5) == {}
    assert idle(engine, after_s=IDLE_S + 5) == {sent: Enqueue(Task.ROUTE, ())}
    with session_scope(engine) as session:
        assert mark_resumed(session, [sent, waiting]) == [sent]  # the unsent one is not open
    with session_scope(engine) as session:
        set_job_status(session, job_id=sent, status=JobStatus.ROUTING)
        create_job_budget(session, job_id=sent, limits={BudgetDimension.STEPS: 10})
        pay(session, sent, "route")
    assert idle(engine, after_s=IDLE_S - 5) == {}


steps = st.one_of(
    st.builds(Enqueue, st.sampled_from([Task.ROUTE, Task.PLAN, Task.VERIFY, Task.SYNTHESIZE]),
              st.tuples(st.integers(0, 9)) | st.tuples(st.text(max_size=20))),
    st.builds(EnqueueLayer, st.integers(0, 5), st.integers(0, 5),
              st.lists(st.integers(0, 20), min_size=1, max_size=6).map(tuple)))


@given(steps)
def test_a_kept_step_reads_back_as_it_was(step: Enqueue | EnqueueLayer) -> None:
    assert step_of(step_json(step)) == step

