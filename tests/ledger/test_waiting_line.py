"""The waiting line of a backlog: at most ``window`` jobs open, the rest sent oldest first as
jobs end, a lost send claimed again, and concurrent claims never hand out a job twice or
overfill the window (both backends)."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import Engine

from ragq.ledger import (
    WaitingLine,
    add_job,
    cancel_job,
    claim_due,
    claim_next,
    create_batch,
    get_job,
    jobs_by_tenant,
    open_job_count,
    session_scope,
    set_tenant_share,
    start_batch,
)
from ragq.ledger.jobs import set_job_status
from ragq.ledger.models import utcnow
from ragq.ledger.waiting_line import has_waiting, waiting_job_count
from ragq.orchestration.fair_share import TenantShare
from ragq.schemas.statuses import JobStatus
from ragq.schemas.ticket import Priority
from tests.ledger.conftest import Race
from tests.ledger.test_jobs import finish, new_batch

LINE = WaitingLine(window=3, resend_after=timedelta(minutes=10))


def claim(engine: Engine, line: WaitingLine = LINE, **at: object) -> list[str]:
    with session_scope(engine) as session:
        return [c.job_id for c in claim_next(session, line, **at)]  # type: ignore[arg-type]


def opened(engine: Engine) -> int:
    with session_scope(engine, readonly=True) as session:
        return open_job_count(session)


def start(engine: Engine, job_id: str) -> None:
    with session_scope(engine) as session:
        set_job_status(session, job_id=job_id, status=JobStatus.ROUTING)


def test_a_backlog_is_sent_a_window_at_a_time_in_line_order(engine: Engine):
    _, ids = new_batch(engine, 7)
    assert claim(engine) == ids[:3]
    assert claim(engine) == []  # the window is full: nothing more until a job ends
    assert opened(engine) == 3
    finish(engine, ids[1])
    assert claim(engine) == [ids[3]]
    for job_id in (ids[0], ids[2], ids[3]):
        finish(engine, job_id, JobStatus.FAILED)
    assert claim(engine) == ids[4:7]
    assert opened(engine) == 3


def test_an_older_batch_goes_first_and_a_cancelled_waiting_job_is_skipped(engine: Engine):
    _, first = new_batch(engine, 2)
    _, second = new_batch(engine, 3)
    with session_scope(engine) as session:
        cancel_job(session, job_id=first[1])
    assert claim(engine) == [first[0], *second[:2]]


def test_without_a_limit_every_waiting_job_is_sent_once(engine: Engine):
    _, ids = new_batch(engine, 5)
    unlimited = WaitingLine(window=None, resend_after=timedelta(minutes=10))
    assert claim(engine, unlimited) == ids
    assert claim(engine, unlimited) == []


def test_a_send_lost_on_its_way_is_claimed_again_only_after_resend_after(engine: Engine):
    _, ids = new_batch(engine, 4)
    assert claim(engine) == ids[:3]
    start(engine, ids[0])  # its route step ran; the other two never arrived
    soon = utcnow() + timedelta(minutes=9)
    assert claim(engine, now=soon) == []
    later = utcnow() + timedelta(minutes=11)
    assert claim(engine, now=later) == ids[1:3]
    assert claim(engine, now=later) == []  # sent again now: their wait starts over
    with session_scope(engine, readonly=True) as session:
        assert get_job(session, job_id=ids[3]).dispatched_at is None


def test_concurrent_claims_never_share_a_job_nor_overfill_the_window(engine: Engine, race: Race):
    _, ids = new_batch(engine, 20)
    line = WaitingLine(window=5, resend_after=timedelta(minutes=10))
    claimed = race(8, lambda _: claim(engine, line))
    everyone = [job_id for part in claimed for job_id in part]
    assert sorted(everyone) == sorted(ids[:5])
    assert opened(engine) == 5


def test_nothing_waits_once_every_job_was_sent_until_a_send_is_lost(engine: Engine):
    _, ids = new_batch(engine, 2)

    def waits(**at: object) -> bool:
        with session_scope(engine, readonly=True) as session:
            return has_waiting(session, LINE, **at)  # type: ignore[arg-type]

    assert waits()
    assert [c.job_id for c in claim_due(engine, LINE)] == ids
    assert not waits() and claim_due(engine, LINE) == []
    later = utcnow() + timedelta(minutes=11)
    assert waits(now=later)  # neither started: their route steps count as lost then
    start(engine, ids[0])
    start(engine, ids[1])
    assert not waits(now=later)


def test_the_waiting_count_is_the_backlog_behind_the_window(engine: Engine):
    new_batch(engine, 5)
    with session_scope(engine, readonly=True) as session:
        assert waiting_job_count(session) == 5
    assert len(claim(engine)) == 3
    with session_scope(engine, readonly=True) as session:
        assert (waiting_job_count(session), opened(engine)) == (2, 3)


# --- fair shares (issue 36): the policy is ragq.orchestration.fair_share; these check the
# ledger hands it the line as it is, on both backends ---------------------------------------


def tenant_jobs(engine: Engine, tenant: str, jobs: int, *, batch: bool = True,
                priority: str = "bulk") -> list[str]:
    with session_scope(engine) as session:
        batch_id = create_batch(session, tenant=tenant, collection="c",
                                input_filename=None).id if batch else None
        ids = [add_job(session, batch_id=batch_id, custom_id=f"{tenant}{i}",
                       position=i + 1 if batch else None, tenant=tenant, collection="c",
                       question="q?", acl=["public"], priority=priority).id
               for i in range(jobs)]
        if batch_id:
            start_batch(session, batch_id=batch_id)
        return ids


def test_a_later_tenant_takes_the_next_free_place_ahead_of_a_backlog(engine: Engine):
    backlog = tenant_jobs(engine, "a", 10)
    assert claim(engine) == backlog[:3]
    single = tenant_jobs(engine, "b", 1, batch=False, priority="interactive")
    finish(engine, backlog[0])
    assert claim(engine) == single
    finish(engine, backlog[1])
    assert claim(engine) == [backlog[3]]  # b has nothing more waiting: a takes the place


def test_two_backlogs_share_the_window_and_interactive_goes_first(engine: Engine):
    line = WaitingLine(window=4, resend_after=timedelta(minutes=10))
    a = tenant_jobs(engine, "a", 6)
    b = tenant_jobs(engine, "b", 6)
    b_now = tenant_jobs(engine, "b", 1, priority="interactive")
    claimed = claim(engine, line)
    assert sorted(claimed) == sorted([a[0], a[1], b_now[0], b[0]])
    assert claimed.index(b_now[0]) < claimed.index(b[0])


def test_a_tenants_max_open_jobs_and_weight_are_honoured(engine: Engine):
    line = WaitingLine(window=6, resend_after=timedelta(minutes=10))
    with session_scope(engine) as session:
        set_tenant_share(session, tenant="a", share=TenantShare(weight=2))
        set_tenant_share(session, tenant="c", share=TenantShare(max_open_jobs=1))
    a, b, c = (tenant_jobs(engine, t, 8) for t in "abc")
    claimed = set(claim(engine, line))
    assert claimed == {*a[:3], *b[:2], c[0]}
    with session_scope(engine, readonly=True) as session:
        assert jobs_by_tenant(session) == {"a": (3, 5), "b": (2, 6), "c": (1, 7)}


def test_a_claim_carries_each_jobs_priority_a_lost_send_too(engine: Engine):
    """Whoever claims sends each route step with its job's broker priority: the claim says
    which, for the waiting jobs and for a lost send claimed again."""
    backlog = tenant_jobs(engine, "a", 2)
    single = tenant_jobs(engine, "b", 1, batch=False, priority="interactive")
    with session_scope(engine) as session:
        first = claim_next(session, LINE)
    assert {(c.job_id, c.priority) for c in first} == {
        (backlog[0], Priority.BULK), (backlog[1], Priority.BULK),
        (single[0], Priority.INTERACTIVE)}
    later = utcnow() + timedelta(minutes=11)  # none of them started: their sends were lost
    with session_scope(engine) as session:
        again = claim_next(session, LINE, now=later)
    assert sorted(again) == sorted(first)


def test_interactive_jobs_take_the_reserve_past_a_full_window_and_bulk_ones_do_not(
        engine: Engine):
    line = WaitingLine(window=3, resend_after=timedelta(minutes=10), reserve=2)
    backlog = tenant_jobs(engine, "a", 10)
    assert claim(engine, line) == backlog[:3]  # the window is full
    asked = tenant_jobs(engine, "b", 3, batch=False, priority="interactive")
    assert claim(engine, line) == asked[:2]  # the reserve: two places, now in use
    assert claim(engine, line) == []
    finish(engine, asked[0])  # a reserved place frees: the third interactive job takes it
    assert claim(engine, line) == [asked[2]]
    finish(engine, backlog[0])
    finish(engine, asked[1])
    finish(engine, asked[2])  # nothing interactive waits: the window's places go to bulk
    assert claim(engine, line) == [backlog[3]]
