"""Recovery drill: SIGKILL one process of a running stack in the middle of a batch, let the
resident supervisor heal it, and measure what the batch went through.

Usage:  python bench/recovery.py [--jobs 50] [--faults general,vector,valkey] [--repeat 10]
                                 [--amqp URL --database URL --result-backend URL]

Starts a throwaway stack (embedded; or workers on RabbitMQ with a PostgreSQL ledger and a Redis
result backend), ingests examples/docs, then per fault submits a batch of ``--jobs`` tickets
(examples/tickets.jsonl, cycled), kills the process once a few jobs have ended, and waits for
the batch. Prints one row per fault: the jobs' end states, how many ran out of latency budget,
rows doubled in the ledger, and "restart to first step done" (per job open at the kill: its
first ledger charge or its end after the replacement was ready) as p50 and max. With
``--repeat N`` each fault is drilled N times in a row and a summary row per fault follows:
jobs stranded (not ended within the drill's timeout), jobs failed (each one's error goes to
stderr), doubled rows, recovery p50 and max over every run.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragq.ingestion.submit import ingest_path
from ragq.ledger import session_scope
from ragq.ledger.models import (
    AnswerRow,
    BudgetChargeRow,
    EvidenceItemRow,
    JobBudgetRow,
    JobRow,
)
from ragq.schemas.statuses import TERMINAL_JOB_STATUSES, ChargeOutcome, JobStatus
from ragq.settings import Settings, build_settings
from ragq.submission import submit_file, wait
from ragq.workers import supervisor
from ragq.workers.stack_state import load_state
from ragq.workers.wiring import build_ledger_engine

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@dataclass
class Drill:
    """What one fault did to one batch."""

    fault: str
    jobs: int
    open_at_kill: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    latency_exhausted: int = 0
    kill_to_ready_s: float = 0.0
    recovery_s: list[float] = field(default_factory=list)
    doubled: dict[str, int] = field(default_factory=dict)
    #: Why each failed job failed (job id -> its recorded error), so a red drill says why.
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def all_ended(self) -> bool:
        return sum(self.statuses.values()) == self.jobs

    def row(self, broker: str) -> str:
        ends = ", ".join(f"{n} {s}" for s, n in sorted(self.statuses.items()))
        p50 = statistics.median(self.recovery_s) if self.recovery_s else float("nan")
        worst = max(self.recovery_s, default=float("nan"))
        doubled = sum(self.doubled.values())
        return (f"| SIGKILL {self.fault} | {broker} | {self.jobs} jobs, killed with "
                f"{self.open_at_kill} open | {ends}; {self.latency_exhausted} out of latency; "
                f"{doubled} doubled rows | {self.kill_to_ready_s:.1f} s | {p50:.1f} s | "
                f"{worst:.1f} s |")


def tickets_file(path: Path, jobs: int, tag: str) -> Path:
    """``jobs`` tickets cycled from examples/tickets.jsonl, each with its own custom id."""
    lines = [json.loads(x) for x in (EXAMPLES / "tickets.jsonl").read_text().splitlines() if x]
    with path.open("w") as out:
        for i in range(jobs):
            ticket = dict(lines[i % len(lines)])
            ticket["custom_id"] = f"{tag}-{i}"
            out.write(json.dumps(ticket) + "\n")
    return path


def ledger_engine(settings: Settings) -> Engine:
    """One engine per ledger for the drills' polling. A new engine per poll (ten a second)
    opened a PostgreSQL connection each time and left it open until the garbage collector
    found the engine: about twenty idle connections at any moment, on a server whose
    ``max_connections`` the workers and every other stack on the machine share."""
    engine = _ENGINES.get(settings.ledger_url)
    if engine is None:
        engine = _ENGINES[settings.ledger_url] = build_ledger_engine(settings)
    return engine


def dispose_ledger_engine(settings: Settings) -> None:
    """Close the drills' connections to ``settings``' ledger (before its database is dropped)."""
    engine = _ENGINES.pop(settings.ledger_url, None)
    if engine is not None:
        engine.dispose()


_ENGINES: dict[str, Engine] = {}


def _open_jobs(settings: Settings, batch_id: str) -> list[str]:
    engine = ledger_engine(settings)
    with session_scope(engine, readonly=True) as session:
        return list(session.scalars(select(JobRow.id).where(
            JobRow.batch_id == batch_id, JobRow.status.not_in(list(TERMINAL_JOB_STATUSES)))))


def _kill(settings: Settings, name: str) -> int:
    """SIGKILL the recorded process ``name`` (the whole group: a worker's pool goes with it);
    returns the restart count it had."""
    state = load_state(settings)
    assert state is not None, "no stack is running"
    (record,) = [p for p in state.processes if p.name == name]
    os.killpg(record.pid, signal.SIGKILL)
    return record.restarts


def _restarted_at(settings: Settings, name: str, restarts: int, timeout_s: float) -> float:
    """When the supervisor's replacement of ``name`` was ready (epoch seconds)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state = load_state(settings)
        record = next((p for p in state.processes if p.name == name), None) if state else None
        if record and record.restarts > restarts and record.last_restart_at:
            return record.last_restart_at
        time.sleep(0.2)
    raise TimeoutError(f"{name} was not restarted within {timeout_s}s")


def drill(settings: Settings, fault: str, tickets: Path, collection: str, *,
          min_ended: int = 5, timeout_s: float = 600.0) -> Drill:
    """Submit ``tickets``, kill ``fault`` once ``min_ended`` jobs ended, wait for the batch;
    returns what happened."""
    sent = submit_file(settings, tickets, collection=collection)
    total = len(sent.job_ids)
    result = Drill(fault, total)
    deadline = time.monotonic() + timeout_s
    while len(open_jobs := _open_jobs(settings, sent.batch_id)) > total - min_ended:
        assert time.monotonic() < deadline, "the batch did not start"
        time.sleep(0.05)
    result.open_at_kill = len(open_jobs)
    killed_at = time.time()
    restarts = _kill(settings, fault)
    ready = _restarted_at(settings, fault, restarts, timeout_s=120)
    result.kill_to_ready_s = ready - killed_at
    wait(settings, sent.batch_id, timeout_s=timeout_s)
    _read_ledger(settings, result, sent.batch_id, set(open_jobs), killed_at, ready)
    return result


def _read_ledger(settings: Settings, result: Drill, batch_id: str, open_at_kill: set[str],
                 killed_at: float, ready: float) -> None:
    """Statuses, doubled rows, and each open job's recovery: from the replacement's ready
    moment to the job's first charge or its end after it. A job that ended between the kill
    and that moment (the replacement serves before the supervisor finishes restoring orphans
    and records it ready) recovered in 0 s; only jobs ended before the kill are left out."""
    after = datetime.fromtimestamp(ready, tz=UTC)
    killed = datetime.fromtimestamp(killed_at, tz=UTC)
    engine = ledger_engine(settings)
    with session_scope(engine, readonly=True) as session:
        jobs = session.execute(select(JobRow.id, JobRow.status, JobRow.exhausted_dimension,
                                      JobRow.finished_at, JobRow.error)
                               .where(JobRow.batch_id == batch_id)).all()
        ids = [j.id for j in jobs]
        result.statuses = Counter(JobStatus(j.status).value for j in jobs
                                  if j.status in TERMINAL_JOB_STATUSES)
        result.errors = {j.id: str(j.error) for j in jobs if j.status == JobStatus.FAILED}
        result.latency_exhausted = sum(1 for j in jobs if j.status == JobStatus.BUDGET_EXHAUSTED
                                       and str(j.exhausted_dimension) == "latency_ms")
        for job in jobs:
            if job.id not in open_at_kill or (job.finished_at and job.finished_at < killed):
                continue
            first = session.scalar(select(func.min(BudgetChargeRow.created_at)).where(
                BudgetChargeRow.job_id == job.id, BudgetChargeRow.created_at >= after))
            seen = min(t for t in (first, job.finished_at) if t is not None)
            result.recovery_s.append(max(0.0, (seen - after).total_seconds()))
        result.doubled = _doubled(session, ids)


def _doubled(session: object, ids: list[str]) -> dict[str, int]:
    """Rows the batch holds twice: answers per job, charges per key, evidence per request and
    chunk, and steps paid more than once (used steps vs granted step charges)."""
    from sqlalchemy.orm import Session

    assert isinstance(session, Session)
    answers = session.execute(select(func.count()).select_from(AnswerRow).where(
        AnswerRow.job_id.in_(ids)).group_by(AnswerRow.job_id).having(func.count() > 1)).all()
    charges = session.execute(select(func.count()).select_from(BudgetChargeRow).where(
        BudgetChargeRow.job_id.in_(ids)).group_by(
        BudgetChargeRow.job_id, BudgetChargeRow.idempotency_key).having(func.count() > 1)).all()
    evidence = session.execute(select(func.count()).select_from(EvidenceItemRow).where(
        EvidenceItemRow.job_id.in_(ids)).group_by(
        EvidenceItemRow.retrieval_request_id, EvidenceItemRow.chunk_id)
        .having(func.count() > 1)).all()
    granted = dict(session.execute(select(BudgetChargeRow.job_id, func.sum(BudgetChargeRow.amount))
                                   .where(BudgetChargeRow.job_id.in_(ids),
                                          BudgetChargeRow.dimension == "steps",
                                          BudgetChargeRow.outcome == ChargeOutcome.GRANTED)
                                   .group_by(BudgetChargeRow.job_id)).all())
    used = dict(session.execute(select(JobBudgetRow.job_id, JobBudgetRow.used_steps)
                                .where(JobBudgetRow.job_id.in_(ids))).all())
    overpaid = sum(1 for job, n in used.items() if int(granted.get(job, 0)) != int(n))
    return {"answers": len(answers), "charges": len(charges), "evidence": len(evidence),
            "steps paid twice": overpaid}


@contextmanager
def drill_stack(home: Path, **servers: str) -> Iterator[Settings]:
    """A stack for drills (offline provider, caches off so every job does its work) under
    ``home``, on the given servers (``broker_url``, ``database_url``, ``result_backend_url``)."""
    env = dict(os.environ)
    for key in [k for k in os.environ if k.startswith("RAGQ_")]:
        del os.environ[key]
    os.environ.update({"RAGQ_HOME": str(home), "RAGQ_CACHE_ENABLED": "false",
                       **{f"RAGQ_{k.upper()}": v for k, v in servers.items()}})
    settings = build_settings()
    try:
        supervisor.up(settings, owner_pid=os.getpid())  # killed, the drill leaves nothing
        ingest_path(settings, EXAMPLES / "docs", collection="drill")
        yield settings
    finally:
        dispose_ledger_engine(settings)
        supervisor.down(settings)
        os.environ.clear()
        os.environ.update(env)


HEADER = ("| fault | broker | what was tried | result | kill to ready | restart to first step "
          "done, p50 | max |\n|---|---|---|---|---|---|---|")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=50)
    parser.add_argument("--faults", default="general,vector,valkey")
    parser.add_argument("--amqp", help="a RabbitMQ URL: workers on it instead of embedded")
    parser.add_argument("--database", help="ledger URL (with --amqp)")
    parser.add_argument("--result-backend", help="Redis URL of results (with --amqp)")
    parser.add_argument("--home", type=Path, help="keep the stack's home (logs) here")
    parser.add_argument("--repeat", type=int, default=1, help="drills per fault, in a row")
    args = parser.parse_args()
    servers = {}
    broker = "embedded valkey"
    if args.amqp:
        servers = {"broker_url": args.amqp, "database_url": args.database or "",
                   "result_backend_url": args.result_backend or ""}
        broker = "RabbitMQ"
    rows = []
    with tempfile.TemporaryDirectory() as tmp, \
            drill_stack(args.home or Path(tmp) / "home", **servers) as s:
        summaries = []
        for fault in args.faults.split(","):
            runs = []
            for run in range(args.repeat):
                tickets = tickets_file(Path(tmp) / f"{fault}{run}.jsonl", args.jobs,
                                       f"{fault}{run}")
                runs.append(_drill_or_stranded(s, fault, tickets))
                rows.append(runs[-1].row(broker))
                print(rows[-1], file=sys.stderr, flush=True)
            summaries.append(summary_row(fault, broker, runs))
    print(HEADER)
    print("\n".join(rows))
    if args.repeat > 1:
        print(f"\n{SUMMARY}")
        print("\n".join(summaries))


SUMMARY = ("| fault | broker | runs | jobs stranded | jobs failed | doubled rows | recovery p50 "
           "| max |\n|---|---|---|---|---|---|---|---|")


def _drill_or_stranded(settings: Settings, fault: str, tickets: Path) -> Drill:
    """A drill whose batch did not end counts its open jobs as stranded (``all_ended`` False)
    instead of stopping the series. Why each failed job failed goes to stderr."""
    try:
        result = drill(settings, fault, tickets, "drill")
    except Exception as exc:  # a timeout: the batch did not end
        print(f"{fault}: {exc}", file=sys.stderr, flush=True)
        return Drill(fault, len(tickets.read_text().splitlines()))
    for job_id, error in result.errors.items():
        print(f"{fault}: {job_id} failed: {error}", file=sys.stderr, flush=True)
    return result


def summary_row(fault: str, broker: str, runs: list[Drill]) -> str:
    stranded = sum(r.jobs - sum(r.statuses.values()) for r in runs)
    failed = sum(r.statuses.get(JobStatus.FAILED.value, 0) for r in runs)
    doubled = sum(sum(r.doubled.values()) for r in runs)
    times = [t for r in runs for t in r.recovery_s]
    p50 = statistics.median(times) if times else float("nan")
    return (f"| SIGKILL {fault} | {broker} | {len(runs)} | {stranded} | {failed} | {doubled} | "
            f"{p50:.1f} s | {max(times, default=float('nan')):.1f} s |")


if __name__ == "__main__":
    main()
