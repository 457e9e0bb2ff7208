"""Steps of one process take turns at their Python and give the turn up while they wait on
the model server (ragq.tasks.turns)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from ragq.schemas.tasks import Queue
from ragq.tasks.flow import step_turns
from ragq.tasks.turns import StepTurns
from ragq.workers.app import create_app
from tests.fakes.broker import memory_settings


def test_one_turn_lets_a_second_step_run_only_while_the_first_waits_on_the_model() -> None:
    turns = StepTurns(1)
    log: list[str] = []
    first_waiting, second_ran = threading.Event(), threading.Event()

    def first() -> None:
        with turns.step():
            log.append("first decides")
            with turns.waiting():
                first_waiting.set()
                assert second_ran.wait(timeout=30)  # the other step ran meanwhile
            log.append("first records")

    def second() -> None:
        assert first_waiting.wait(timeout=30)
        with turns.step():
            log.append("second runs")
        second_ran.set()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert log == ["first decides", "second runs", "first records"]


def test_steps_on_turns_never_run_more_at_once_than_the_turns() -> None:
    turns = StepTurns(2)
    running, most = 0, 0
    guard = threading.Lock()
    start = threading.Barrier(8)

    def python(pause: float) -> None:
        """Count this thread as running Python on a turn while it pauses (the turn is given
        up inside ``waiting``, so only the parts outside it count)."""
        nonlocal running, most
        with guard:
            running += 1
            most = max(most, running)
        time.sleep(pause)  # the others try meanwhile
        with guard:
            running -= 1

    def step() -> None:
        start.wait(timeout=30)
        for _ in range(50):
            with turns.step():
                python(0.001)
                with turns.waiting():
                    time.sleep(0.0005)
                python(0.0005)

    threads = [threading.Thread(target=step) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert 1 <= most <= 2


def test_a_step_run_in_place_keeps_the_outer_turn() -> None:
    turns = StepTurns(1)
    done = threading.Event()

    def nested() -> None:
        with turns.step(), turns.step(), turns.waiting():
            pass
        done.set()

    thread = threading.Thread(target=nested, daemon=True)
    thread.start()
    assert done.wait(timeout=10)  # one turn, taken twice by one thread, never deadlocks
    with turns.step():  # and it was given back
        pass


def test_without_a_limit_waiting_and_steps_do_not_block() -> None:
    """Eight steps are inside a turn at once (they meet there), nested steps and waits
    included; a limit would leave some outside, the barrier would time out and say so."""
    turns = StepTurns(None)
    inside = threading.Barrier(8, timeout=10)
    failures: list[BaseException] = []

    def step() -> None:
        try:
            with turns.step(), turns.step():
                inside.wait()
                with turns.waiting():
                    inside.wait()
        except BaseException as exc:  # reported by the assertion below
            failures.append(exc)

    threads = [threading.Thread(target=step, daemon=True) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    assert not any(t.is_alive() for t in threads)
    assert failures == []


def test_only_a_worker_serving_model_calls_takes_its_process_turns(tmp_path) -> None:
    """The CPU pool's steps run beside a step holding the process's only turn; the I/O pool's
    steps take that turn."""
    io_pool, cpu_pool = create_app(memory_settings(tmp_path)), create_app(memory_settings(tmp_path))
    io_pool.amqp.queues.select([Queue.MODELS.value, Queue.BOOKKEEPING.value])  # `-Q`
    cpu_pool.amqp.queues.select([Queue.RETRIEVAL.value, Queue.INGEST.value])
    process = io_pool.conf.ragq_resources
    assert process.settings.active_steps == 1
    assert step_turns(io_pool, process) is process.step_turns

    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with process.step_turns.step():
            held.set()
            release.wait(timeout=30)

    ran = threading.Event()

    def retrieval_step() -> None:
        with step_turns(cpu_pool, process).step():
            ran.set()

    threading.Thread(target=holder).start()
    assert held.wait(timeout=30)
    step = threading.Thread(target=retrieval_step)
    step.start()
    step.join(timeout=10)
    finished = ran.is_set()  # before the turn is given back: it did not wait for it
    release.set()
    assert finished


def _until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, "the threads never queued for a turn"
        time.sleep(0.001)


def test_an_interactive_step_takes_the_next_free_turn_ahead_of_bulk_steps_waiting() -> None:
    """Three bulk steps wait for the one turn, then an interactive one: it runs first when the
    turn frees; back from the model, it takes the next free turn ahead of the two bulk steps
    still waiting."""
    turns = StepTurns(1)
    order: list[str] = []
    release, answered, go_on = threading.Event(), threading.Event(), threading.Event()

    def holder() -> None:
        with turns.step():
            assert release.wait(timeout=30)

    def step(name: str, first: bool) -> None:
        with turns.step(first=first):
            order.append(name)
            if first:
                with turns.waiting():  # on the model: a bulk step takes the turn meanwhile
                    assert answered.wait(timeout=30)
                order.append("interactive again")
            else:
                assert go_on.wait(timeout=30)

    queued = turns._turns
    assert queued is not None
    threads = [threading.Thread(target=holder)]
    threads[0].start()
    _until(lambda: queued._free == 0)
    for n in range(3):
        threads.append(threading.Thread(target=step, args=(f"bulk{n}", False)))
        threads[-1].start()
        _until(lambda n=n: len(queued._turn._waiters) == n + 1)  # type: ignore[attr-defined]
    threads.append(threading.Thread(target=step, args=("interactive", True)))
    threads[-1].start()
    _until(lambda: queued._first == 1)
    release.set()
    _until(lambda: len(order) == 2)  # the interactive step on the model, a bulk one on the turn
    answered.set()
    _until(lambda: queued._first == 1)  # back, waiting for that bulk step's turn
    go_on.set()
    for t in threads:
        t.join(timeout=30)
    assert order[0] == "interactive" and order[2] == "interactive again"
    assert sorted(order[1:2] + order[3:]) == ["bulk0", "bulk1", "bulk2"]
