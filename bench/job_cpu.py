"""Where a job's CPU goes: the job flow in one process, without a broker, CPU milliseconds per
job by component.

Usage:  python bench/job_cpu.py [DATASET] [--jobs 64] [--json]

The flow runs as in bench/ledger_writes.py (bench/inline_flow.py: ``RAGQ_PROVIDER=openai``
against the loopback model server answering at once, a SQLite ledger, MiniLM and the embedded
store), one job after another, and the process's CPU time (``time.process_time``) is split by
what the runner was doing: its write transactions, its reads of the job (snapshots and
refreshes), each model role's call (prompt, the ``openai`` client, HTTP, parsing; the server's
own CPU is in its process), query embedding, the vector search around it, other work, and
recording the job. What is left is the decisions and the step loop. The sum is what a job
costs the stack's workers before the broker: the stack's CPU per job (bench/throughput.py)
minus this figure is what Celery, the broker and the hand-offs between processes add. Each
question gets a suffix of its run, so no query vector is reused. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.inline_flow import DEFAULT_DATASET, loopback_flow, questions_of
from ragq.ledger.sql_flow import SqlFlowLedger
from ragq.orchestration.flow import (
    LEDGER_WRITES,
    Action,
    CallRole,
    Event,
    FlowConfig,
    JobState,
    Probe,
    Search,
)
from ragq.tasks.inline import InlineAdapters
from ragq.tasks.runner import Runner

REST = "decisions and the step loop"


class Meter:
    """CPU seconds by component. A component measured inside another is taken out of the
    outer one, so the components add up to the time measured."""

    def __init__(self, clock: Callable[[], float] = time.process_time):
        self.seconds: Counter[str] = Counter()
        self._clock = clock
        self._inner: list[float] = []  # per open measurement: what nested ones spent

    @contextlib.contextmanager
    def measure(self, component: str) -> Iterator[None]:
        started = self._clock()
        self._inner.append(0.0)
        try:
            yield
        finally:
            spent = self._clock() - started
            self.seconds[component] += spent - self._inner.pop()
            if self._inner:
                self._inner[-1] += spent


class MeteredLedger:
    """The flow's ledger, its reads of the job measured (its transactions are the runner's)."""

    def __init__(self, ledger: SqlFlowLedger, meter: Meter):
        self._ledger = ledger
        self._meter = meter

    def snapshot(self, job_id: str, config: FlowConfig) -> JobState:
        with self._meter.measure("ledger reads"):
            return self._ledger.snapshot(job_id, config)

    def refresh(self, state: JobState) -> JobState:
        with self._meter.measure("ledger reads"):
            return self._ledger.refresh(state)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ledger, name)


class MeteredEmbedder:
    """The embedder, its embedding measured."""

    def __init__(self, embedder: Any, meter: Meter):
        self._embedder = embedder
        self._meter = meter

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        with self._meter.measure("query embedding"):
            result: list[list[float]] = self._embedder.embed(texts)
            return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._embedder, name)


@dataclass(frozen=True)
class MeteredRunner(Runner):
    """The runner, its write transactions and its work measured."""

    meter: Meter = field(default_factory=Meter)

    def apply(self, state: JobState, event: Event, actions: Sequence[Action]) -> list[Action]:
        if not any(isinstance(a, LEDGER_WRITES) for a in actions):
            return super().apply(state, event, actions)
        with self.meter.measure("ledger writes"):
            return super().apply(state, event, actions)

    def perform(self, work: Action, state: JobState) -> Event:
        with self.meter.measure(component_of(work)):
            return super().perform(work, state)


def component_of(work: Action) -> str:
    """The component a piece of work's CPU is counted under."""
    if isinstance(work, CallRole):
        return f"model call: {work.role}"
    if isinstance(work, Probe | Search):
        return "retrieval (without embedding)"
    return f"other work: {type(work).__name__}"


def metered(meter: Meter) -> Callable[[SqlFlowLedger, InlineAdapters, FlowConfig], Runner]:
    """A ``make_runner`` for :func:`bench.inline_flow.loopback_flow` measuring into ``meter``."""
    def make(ledger: SqlFlowLedger, adapters: InlineAdapters, config: FlowConfig) -> Runner:
        embedder = MeteredEmbedder(adapters.embedder, meter)
        return MeteredRunner(MeteredLedger(ledger, meter),
                             InlineAdapters(adapters.provider, embedder, adapters.vector_store),
                             config, meter)
    return make


def run(dataset: Path, jobs: int) -> dict[str, Any]:
    questions = questions_of(dataset)
    meter = Meter()
    with loopback_flow(dataset, metered(meter)) as flow:
        for question in questions[:3]:  # warm up: imports, statement caches, the model
            flow.job(f"{question} (warm-up)")
        meter.seconds.clear()
        started = time.process_time()
        for i in range(jobs):
            with meter.measure("recording the job"):
                job_id = flow.add(f"{questions[i % len(questions)]} (run {i})")
            flow.dispatcher.run(job_id)
        total = time.process_time() - started
    by_component = {**meter.seconds, REST: total - sum(meter.seconds.values())}
    return {"jobs": jobs, "cpu_ms_per_job": total / jobs * 1000,
            "by_component_ms": {k: v / jobs * 1000 for k, v in
                                sorted(by_component.items(), key=lambda kv: -kv[1])}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", nargs="?", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--jobs", type=int, default=64)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = run(args.dataset, args.jobs)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    total = figures["cpu_ms_per_job"]
    print(f"{'component':40} {'ms/job':>7} {'share':>6}")
    for component, ms in figures["by_component_ms"].items():
        print(f"{component:40} {ms:7.2f} {ms / total:6.1%}")
    print(f"{'a job in all':40} {total:7.2f}  ({figures['jobs']} jobs)")


if __name__ == "__main__":
    main()
