"""The fair-share policy of the waiting line (issue 36), checked as properties over any line:
no idle place while something may start, no tenant over its limit, no tenant with something to
start left more than one round behind, interactive before bulk, a batch's jobs in line order."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from ragq.orchestration.fair_share import LineState, TenantShare, WaitingJob, claim_order
from ragq.schemas.ticket import Priority

TENANTS = ("a", "b", "c")
BATCHES = (None, "b1", "b2")


@st.composite
def lines(draw: st.DrawFn) -> LineState:
    specs = draw(st.lists(st.tuples(st.sampled_from(TENANTS), st.sampled_from(BATCHES),
                                    st.sampled_from(list(Priority))), max_size=40))
    waiting = [WaitingJob(f"j{n}", t, b, p) for n, (t, b, p) in enumerate(specs)]
    open_ = draw(st.dictionaries(st.tuples(st.sampled_from(TENANTS), st.sampled_from(BATCHES)),
                                 st.integers(0, 6), max_size=5))
    shares = draw(st.dictionaries(st.sampled_from(TENANTS), st.builds(
        TenantShare, st.integers(1, 4), st.none() | st.integers(0, 8)), max_size=3))
    free = draw(st.none() | st.integers(0, 30))
    return LineState(waiting, open_, shares, free)


def share(state: LineState, tenant: str) -> TenantShare:
    return state.shares.get(tenant, TenantShare())


def open_of(state: LineState, tenant: str) -> int:
    return sum(n for (t, _), n in state.open.items() if t == tenant)


def room(state: LineState, tenant: str) -> int | None:
    """How many more jobs the tenant may have open (None: no limit of its own)."""
    limit = share(state, tenant).max_open_jobs
    return None if limit is None else max(0, limit - open_of(state, tenant))


def by_id(state: LineState) -> dict[str, WaitingJob]:
    return {j.job_id: j for j in state.waiting}


@given(lines())
def test_no_place_idle_while_a_job_may_start(state: LineState):
    claimed = claim_order(state)
    assert len(claimed) == len(set(claimed)) and set(claimed) <= set(by_id(state))
    startable = 0
    for tenant in TENANTS:
        waiting = sum(1 for j in state.waiting if j.tenant == tenant)
        limit = room(state, tenant)
        startable += waiting if limit is None else min(waiting, limit)
    assert len(claimed) == (startable if state.free is None else min(state.free, startable))


@given(lines())
def test_a_tenant_never_passes_its_max_open_jobs(state: LineState):
    per_tenant = Counter(by_id(state)[j].tenant for j in claim_order(state))
    for tenant, n in per_tenant.items():
        limit = share(state, tenant).max_open_jobs
        assert limit is None or open_of(state, tenant) + n <= max(limit, open_of(state, tenant))
        assert limit is None or n <= room(state, tenant)  # type: ignore[operator]


@given(lines())
def test_no_tenant_that_may_start_is_left_more_than_one_round_behind(state: LineState):
    """Each place went to a tenant with the least open jobs per weight among those that could
    take one: so when the claim ends, a tenant still able to start a job is behind no one who
    was served by more than one job's worth of weight."""
    jobs = by_id(state)
    use = {t: Fraction(open_of(state, t), share(state, t).weight) for t in TENANTS}
    left = Counter(j.tenant for j in state.waiting)
    taken = Counter[str]()
    for job_id in claim_order(state):
        tenant = jobs[job_id].tenant
        able = [t for t in TENANTS if left[t] - taken[t] > 0 and (
            room(state, t) is None or taken[t] < room(state, t))]  # type: ignore[operator]
        assert tenant in able
        assert use[tenant] == min(use[t] for t in able)
        use[tenant] += Fraction(1, share(state, tenant).weight)
        taken[tenant] += 1


@given(lines())
def test_interactive_ahead_of_bulk_and_a_batch_in_line_order(state: LineState):
    jobs = by_id(state)
    claimed = set(claim_order(state))
    order = {j.job_id: n for n, j in enumerate(state.waiting)}
    for tenant in TENANTS:
        mine = [j for j in state.waiting if j.tenant == tenant]
        if any(j.priority == Priority.BULK and j.job_id in claimed for j in mine):
            assert all(j.job_id in claimed for j in mine if j.priority == Priority.INTERACTIVE)
    for job_id in claimed:  # within a lane (tenant, batch, priority) only the oldest go first
        job = jobs[job_id]
        older = [j for j in state.waiting[:order[job_id]] if (j.tenant, j.batch_id, j.priority)
                 == (job.tenant, job.batch_id, job.priority)]
        assert all(j.job_id in claimed for j in older)


@given(st.integers(1, 64), st.integers(0, 100))
def test_a_tenant_alone_takes_the_whole_window(window: int, backlog: int):
    waiting = [WaitingJob(f"j{n}", "a", "b1") for n in range(backlog)]
    assert claim_order(LineState(waiting, free=window)) == [
        f"j{n}" for n in range(min(window, backlog))]


def _fill(window: int, weights: dict[str, int], ends: list[int]) -> Counter[str]:
    """Two backlogs sharing a window from empty, then jobs ending (by index into the open
    ones) and their places claimed again: the open jobs per tenant at the end."""
    waiting = [WaitingJob(f"{t}{n}", t, f"bat-{t}") for n in range(200) for t in weights]
    shares = {t: TenantShare(w) for t, w in weights.items()}
    open_jobs: list[WaitingJob] = []
    for end in [None, *ends]:
        if end is not None and open_jobs:
            open_jobs.pop(end % len(open_jobs))
        counts = Counter((j.tenant, j.batch_id) for j in open_jobs)
        state = LineState(waiting, counts, shares, window - len(open_jobs))
        claimed = set(claim_order(state))
        open_jobs += [j for j in waiting if j.job_id in claimed]
        waiting = [j for j in waiting if j.job_id not in claimed]
    return Counter(j.tenant for j in open_jobs)


@settings(max_examples=50)
@given(st.integers(2, 40), st.lists(st.integers(0, 1000), max_size=60))
def test_two_backlogs_each_hold_half_the_window(window: int, ends: list[int]):
    held = _fill(window, {"a": 1, "b": 1}, ends)
    assert held["a"] + held["b"] == window and abs(held["a"] - held["b"]) <= 1


@settings(max_examples=50)
@given(st.integers(3, 40), st.lists(st.integers(0, 1000), max_size=60))
def test_weights_divide_the_window(window: int, ends: list[int]):
    held = _fill(window, {"a": 2, "b": 1}, ends)
    assert held["a"] + held["b"] == window
    assert abs(held["a"] - 2 * held["b"]) <= 2


def test_a_single_ticket_behind_a_full_window_takes_the_next_place():
    """Issue 36's case: tenant a's backlog fills the window; b's one ticket, newer than all of
    it, goes first when a place frees."""
    waiting = [*(WaitingJob(f"a{n}", "a", "bat-a") for n in range(300)),
               WaitingJob("b0", "b", None, Priority.INTERACTIVE)]
    assert claim_order(LineState(waiting, {("a", "bat-a"): 7}, free=1)) == ["b0"]


def test_a_tenants_batches_share_its_places():
    waiting = [*(WaitingJob(f"x{n}", "a", "old") for n in range(10)),
               *(WaitingJob(f"y{n}", "a", "new") for n in range(10))]
    claimed = claim_order(LineState(waiting, {("a", "old"): 4}, free=6))
    assert claimed == ["y0", "y1", "y2", "y3", "x0", "y4"]


def test_a_weight_below_one_is_refused():
    try:
        TenantShare(0)
    except ValueError as exc:
        assert "at least 1" in str(exc)
    else:
        raise AssertionError("weight 0 accepted")


@given(lines(), st.integers(0, 10))
def test_the_reserve_takes_interactive_jobs_alone_after_the_free_places(state: LineState,
                                                                        reserve: int):
    """The free places go as they would without a reserve; past them, only interactive jobs,
    at most ``reserve``, no tenant over its limit, and none left waiting that could start
    while a reserved place is left (no limit, no window: no reserve either)."""
    jobs = by_id(state)
    without = claim_order(state)
    claimed = claim_order(replace(state, reserve=reserve))
    assert claimed[:len(without)] == without
    extra = claimed[len(without):]
    if state.free is None:
        assert extra == []
        return
    assert len(extra) <= reserve
    assert all(jobs[j].priority == Priority.INTERACTIVE for j in extra)
    taken = Counter(jobs[j].tenant for j in claimed)
    for tenant, n in taken.items():
        limit = room(state, tenant)
        assert limit is None or n <= limit
    if len(extra) < reserve:
        for job in state.waiting:
            limit = room(state, job.tenant)
            if job.priority == Priority.INTERACTIVE and job.job_id not in claimed:
                assert limit is not None and taken[job.tenant] >= limit


def test_a_single_ticket_behind_a_full_window_starts_at_once_in_the_reserve():
    """Issue 36's case with the window full: b's interactive ticket takes a reserved place
    now, a's bulk backlog none of them."""
    waiting = [*(WaitingJob(f"a{n}", "a", "bat-a") for n in range(300)),
               WaitingJob("b0", "b", None, Priority.INTERACTIVE)]
    assert claim_order(LineState(waiting, {("a", "bat-a"): 8}, free=0, reserve=4)) == ["b0"]
