"""How long a job holds the ledger's write lock: each step's write transaction, timed in one
process, by the event the step decided on.

Usage:  python bench/ledger_writes.py [DATASET] [--jobs 30]

On SQLite every write transaction of every process of a stack holds the database's one write
lock, so the sum of a job's write transactions bounds how many jobs per second the whole stack
can end. This runs the job flow exactly as the workers do, in one process
(bench/inline_flow.py: the loopback model server answering at once, a SQLite ledger, MiniLM and
the embedded store), and times ``Runner.apply`` (one write transaction) per event. Besides
milliseconds it prints each figure in units of the ``CheckDue`` transaction (it records one
charge and nothing else): the machine's speed, which swings from one minute to the next on a
shared host, cancels out of that ratio, so two versions can be compared run against run.
Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.inline_flow import DEFAULT_DATASET, loopback_flow, questions_of
from ragq.orchestration.flow import LEDGER_WRITES, Action, Event, JobState
from ragq.tasks.runner import Runner

UNIT = "CheckDue"


@dataclass(frozen=True)
class TimedRunner(Runner):
    """The runner, timing each write transaction by the event it was decided on."""

    seconds: Counter[str] = field(default_factory=Counter)
    count: Counter[str] = field(default_factory=Counter)

    def apply(self, state: JobState, event: Event, actions: Sequence[Action]) -> list[Action]:
        if not any(isinstance(a, LEDGER_WRITES) for a in actions):
            return super().apply(state, event, actions)
        call = getattr(event, "call", None)
        key = type(event).__name__ + (f"/{call.role}" if call is not None else "")
        started = time.perf_counter()
        try:
            return super().apply(state, event, actions)
        finally:
            self.seconds[key] += time.perf_counter() - started
            self.count[key] += 1


def run(dataset: Path, jobs: int) -> dict[str, Any]:
    questions = questions_of(dataset)
    with loopback_flow(dataset, TimedRunner) as flow:
        runner = flow.runner
        assert isinstance(runner, TimedRunner)
        for question in questions[:3]:  # warm up: imports, statement caches, the model
            flow.job(question)
        runner.seconds.clear()
        runner.count.clear()
        for i in range(jobs):
            flow.job(questions[i % len(questions)])
    unit = runner.seconds[UNIT] / runner.count[UNIT]
    per_tx = {k: runner.seconds[k] / runner.count[k] for k in sorted(runner.count)}
    return {"jobs": jobs, "unit_ms": unit * 1000,
            "per_job_ms": sum(runner.seconds.values()) / jobs * 1000,
            "per_job_units": sum(runner.seconds.values()) / jobs / unit,
            "transactions_per_job": sum(runner.count.values()) / jobs,
            "by_event": {k: {"ms": v * 1000, "units": v / unit,
                             "per_job": runner.count[k] / jobs} for k, v in per_tx.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", nargs="?", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--jobs", type=int, default=30)
    args = parser.parse_args()
    figures = run(args.dataset, args.jobs)
    print(f"{'event':32} {'ms':>7} {'units':>6} {'per job':>7}")
    for key, row in figures["by_event"].items():
        print(f"{key:32} {row['ms']:7.2f} {row['units']:6.2f} {row['per_job']:7.1f}")
    print(f"per job: {figures['per_job_ms']:.1f} ms = {figures['per_job_units']:.1f} units of "
          f"{UNIT} ({figures['unit_ms']:.2f} ms), {figures['transactions_per_job']:.1f} "
          "write transactions")


if __name__ == "__main__":
    main()
