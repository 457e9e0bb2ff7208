"""How fast a backlog goes when the model is slow: jobs/s with N jobs in flight against a model
server of fixed latency, beside LlamaIndex's SubQuestionQueryEngine on the same workload.

Usage:  python bench/throughput.py [DATASET] [--latency-ms 50,200,1000] [--jobs 1,16,64,256]
                                   [--no-llamaindex] [--backlog 5000 [--backlog-latency-ms 1000]]

DATASET is an evaluation dataset folder (default: anthropic_docs beside the clone, in
shared/data). A throwaway embedded stack (bench/job_latency.py's way) runs with
``RAGQ_PROVIDER=openai`` against bench/loopback_llm.py, a loopback OpenAI-compatible server in
its own process that answers every request after exactly the run's latency and counts the
requests it holds at once; the embedder stays the local MiniLM, the evidence and plan caches are
off (``RAGQ_CACHE_ENABLED=false``) so every job does its work. Other ``RAGQ_`` variables in the
environment reach the stack (e.g. ``RAGQ_GENERAL_WORKER_THREADS``). The corpus is ingested, one
warm-up job runs, then for each latency and N: N questions (cycling through the dataset's) are
submitted as one batch and awaited. A question asked again in the same stack reuses its query
vector (the retrieval worker keeps the query vectors it made, as for any backlog with repeats),
so a run after one that asked the same questions, or with N above the dataset's questions,
embeds fewer queries than a backlog of distinct ones. Per run:

- wall: the batch's first job created to its last job finished (ledger timestamps); jobs/s = N/wall;
- critical path of a job: the sum of its model-call and retrieval latencies in the ledger
  (bench/job_latency.py's "work"). The server's rules give every job one sub-query, so its steps
  form one chain and this sum is the time the job cannot go below at this latency;
  ideal/wall = the longest job's critical path / wall (1.0: the backlog went as fast as the model
  allows);
- peak in flight: the most chat requests the server held at once;
- CPU per job: user+system CPU of every stack process (broker, workers, resident supervisor, and
  their children) over the run, from psutil, / N. The bench driver (submitting, polling the
  ledger) is reported apart; the model server is in neither.

With LlamaIndex installed (``pip install -e '.[bench]'``) the same N questions then go through
SubQuestionQueryEngine at asyncio concurrency N (bench/llamaindex_baseline.py) and the ratio
ragq jobs/s / LlamaIndex questions/s is printed, with both sides' model calls per question
(LlamaIndex's CPU is this driver's own, per question). Without it the comparison is skipped and
the reason printed.

Tickets are the dataset's own, read by ``ragq eval``'s reader (the one ticket parser), so each
keeps its fields; its ACL is its ``acl``, or ``["public"]`` when it names none (the default of a
ticket submitted without an API key). LlamaIndex has no ACL filter: with a dataset whose
tickets name any other ACL its side is skipped, as it would not read what ragq's jobs read.

``--backlog N`` adds a backlog run: N tickets written as a JSONL file and submitted as one batch
(``ragq submit``'s path) at ``--backlog-latency-ms`` (1000); it reports the time until every job
has finished, how many results the batch returns and with what status, and the peak RSS of
every stack process (sampled every 50 ms, as bench/http_submit.py samples the API's).

A table goes to stdout, the figures as JSON to bench/results/throughput-<UTC time>.json (or
``--out``). Nothing leaves 127.0.0.1: this process refuses any other connection.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
from sqlalchemy import func, select

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import llamaindex_baseline
from bench.loopback_llm import LoopbackLLM
from bench.stack_usage import StackCpu, StackRss, stack_processes
from ragq.evaluation.questions import EvalQuestion
from ragq.evaluation.run import collection_for, load_questions
from ragq.ingestion.submit import ingest_path
from ragq.ledger import batch_jobs, session_scope
from ragq.ledger.models import ModelCallRow, RetrievalRequestRow
from ragq.schemas.document import DEFAULT_ACL
from ragq.schemas.ticket import Ticket
from ragq.settings import Settings, build_settings
from ragq.submission import results, submit_file, submit_tickets, wait
from ragq.workers import supervisor
from ragq.workers.wiring import build_ledger_engine

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATASET = ROOT.parent / "shared" / "data" / "anthropic_docs"
LOOPBACK = {"127.0.0.1", "localhost", "::1", "", None}


def loopback_only() -> None:
    """Refuse, in this process, every connection and name lookup beyond loopback."""

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "socket.connect" and isinstance(args[1], tuple) \
                and args[1][0] not in LOOPBACK:
            raise ConnectionRefusedError(f"bench: no connection beyond loopback ({args[1]})")
        if event == "socket.getaddrinfo" and args[0] not in LOOPBACK \
                and not str(args[0]).startswith("127."):
            raise ConnectionRefusedError(f"bench: no lookup beyond loopback ({args[0]})")

    sys.addaudithook(hook)


@contextlib.contextmanager
def bench_stack(home: Path, llm: LoopbackLLM) -> Iterator[Settings]:
    """A throwaway stack under ``home`` whose model roles go to ``llm`` (MiniLM embeds, caches
    off); the environment is restored after ``ragq down``."""
    saved = dict(os.environ)
    os.environ.update({"RAGQ_HOME": str(home), "RAGQ_PROVIDER": "openai",
                       "RAGQ_OPENAI_BASE_URL": llm.v1_url, "RAGQ_OPENAI_API_KEY": "sk-bench",
                       "RAGQ_EMBEDDER": "minilm", "RAGQ_CACHE_ENABLED": "false"})
    settings = build_settings()
    try:
        supervisor.up(settings)
        yield settings
    finally:
        supervisor.down(settings)
        os.environ.clear()
        os.environ.update(saved)


def job_figures(settings: Settings, batch_id: str) -> dict[str, Any]:
    """Wall time, statuses and critical paths of a batch's jobs, from the ledger."""
    with session_scope(build_ledger_engine(settings), readonly=True) as session:
        jobs = batch_jobs(session, batch_id=batch_id)
        ids = [j.id for j in jobs]
        model = dict(session.execute(
            select(ModelCallRow.job_id, func.coalesce(func.sum(ModelCallRow.latency_ms), 0))
            .where(ModelCallRow.job_id.in_(ids)).group_by(ModelCallRow.job_id)).all())
        calls = dict(session.execute(
            select(ModelCallRow.job_id, func.count()).where(ModelCallRow.job_id.in_(ids))
            .group_by(ModelCallRow.job_id)).all())
        search = dict(session.execute(
            select(RetrievalRequestRow.job_id,
                   func.coalesce(func.sum(RetrievalRequestRow.latency_ms), 0))
            .where(RetrievalRequestRow.job_id.in_(ids))
            .group_by(RetrievalRequestRow.job_id)).all())
        created = min(j.created_at for j in jobs)
        finished = max(j.finished_at or j.created_at for j in jobs)
        statuses = Counter(str(j.status.value) for j in jobs)
        routes = Counter(str(j.route) for j in jobs)
        errors = Counter(str(j.error or j.stop_reason)[:300]
                         for j in jobs if j.status.value == "failed")
    paths = [float(model.get(i, 0)) + float(search.get(i, 0)) for i in ids]
    return {"wall_s": (finished - created).total_seconds(), "statuses": dict(statuses),
            "failures": dict(errors),
            "routes": dict(routes), "longest_critical_path_s": max(paths) / 1000,
            "mean_critical_path_s": sum(paths) / len(paths) / 1000,
            "model_calls_per_job": sum(calls.values()) / len(ids)}


def renamed(questions: list[EvalQuestion], n: int, label: str) -> list[Ticket]:
    """N tickets cycling through the questions' own, each under a custom_id of its own."""
    return [questions[i % len(questions)].ticket.model_copy(update={"custom_id": f"{label}-{i}"})
            for i in range(n)]


def run_ragq(settings: Settings, llm: LoopbackLLM, collection: str,
             questions: list[EvalQuestion], n: int, label: str) -> dict[str, Any]:
    """N questions as one batch; the run's figures."""
    tickets = list(enumerate(renamed(questions, n, label), start=1))
    llm.reset()
    driver = psutil.Process()
    with StackCpu(stack_processes(settings)) as cpu:
        driver_before = sum(driver.cpu_times()[:2])
        submitted = submit_tickets(settings, tickets, collection=collection, source=label)
        wait(settings, submitted.batch_id, timeout_s=24 * 3600, poll_s=0.1)
        driver_s = sum(driver.cpu_times()[:2]) - driver_before
    figures = job_figures(settings, submitted.batch_id)
    stats = llm.stats()
    return {**figures, "jobs": n, "jobs_per_s": n / figures["wall_s"],
            "ideal_over_wall": figures["longest_critical_path_s"] / figures["wall_s"],
            "peak_in_flight": stats["peak_in_flight"], "model_requests": stats["requests"],
            "requests_by_kind": stats["by_kind"], "cpu_s_per_job": cpu.total_s / n,
            "cpu_s_by_process": cpu.by_name, "driver_cpu_s_per_job": driver_s / n}


def run_llamaindex(baseline: llamaindex_baseline.Baseline, llm: LoopbackLLM,
                   questions: list[str], n: int) -> dict[str, Any]:
    """The same N questions through SubQuestionQueryEngine, all at once."""
    asked = [questions[i % len(questions)] for i in range(n)]
    llm.reset()
    driver = psutil.Process()
    before = sum(driver.cpu_times()[:2])
    wall, answers = baseline.run(asked)
    cpu = sum(driver.cpu_times()[:2]) - before
    stats = llm.stats()
    return {"questions": n, "wall_s": wall, "questions_per_s": n / wall,
            "answered": sum(1 for a in answers if a.strip()),
            "model_calls_per_question": stats["requests"] / n,
            "requests_by_kind": stats["by_kind"], "peak_in_flight": stats["peak_in_flight"],
            "cpu_s_per_question": cpu / n}


def run_backlog(settings: Settings, llm: LoopbackLLM, collection: str,
                questions: list[EvalQuestion], n: int, folder: Path) -> dict[str, Any]:
    """N tickets as a JSONL batch file; time until every job ended, results, peak RSS."""
    path = folder / f"backlog-{n}.jsonl"
    with path.open("w") as out:
        for ticket in renamed(questions, n, "b"):
            out.write(ticket.model_dump_json(exclude_none=True) + "\n")
    llm.reset()
    with StackRss(stack_processes(settings), interval_s=0.05) as rss, \
            StackCpu(stack_processes(settings)) as cpu:
        started = time.perf_counter()
        submitted = submit_file(settings, path, collection=collection)
        accepted = time.perf_counter() - started
        wait(settings, submitted.batch_id, timeout_s=24 * 3600, poll_s=1.0)
        finished = time.perf_counter() - started
    rows = results(settings, submitted.batch_id)
    figures = job_figures(settings, submitted.batch_id)
    stats = llm.stats()
    return {"tickets": n, "accept_s": accepted, "time_to_finish_s": finished,
            "ledger_wall_s": figures["wall_s"], "jobs_per_s": n / figures["wall_s"],
            "results": len(rows), "results_by_status": dict(Counter(r["status"] for r in rows)),
            "results_with_answer": sum(1 for r in rows if r.get("answer")),
            "failures": figures["failures"],
            "stop_reasons": dict(Counter(str(r.get("stop_reason")) for r in rows)),
            "every_result_present": len(rows) == n and len({r["custom_id"] for r in rows}) == n,
            "longest_critical_path_s": figures["longest_critical_path_s"],
            "ideal_over_wall": figures["longest_critical_path_s"] / figures["wall_s"],
            "model_calls_per_job": figures["model_calls_per_job"],
            "peak_in_flight": stats["peak_in_flight"], "cpu_s_per_job": cpu.total_s / n,
            "peak_rss_mb_by_process": {k: round(v / 2**20, 1) for k, v in rss.peak.items()}}


ROW = ("| {latency_ms:>6g} | {jobs:>4} | {wall_s:>7.2f} | {jobs_per_s:>7.2f} | "
       "{longest_critical_path_s:>8.2f} | {ideal_over_wall:>5.2f} | {peak_in_flight:>5} | "
       "{model_calls_per_job:>5.2f} | {cpu_s_per_job:>7.3f} | {li} |")
HEADER = ("| lat ms | N | wall s | jobs/s | crit. s | ideal/wall | peak | calls/job | "
          "CPU s/job | ragq ÷ LlamaIndex (q/s, calls/q) |\n|" + "---|" * 10)


def table(runs: list[dict[str, Any]]) -> str:
    lines = [HEADER]
    for run in runs:
        li = run.get("llamaindex")
        shown = (f"{run['ratio']:.2f} ({li['questions_per_s']:.2f}, "
                 f"{li['model_calls_per_question']:.1f})" if li else "skipped")
        lines.append(ROW.format(**run, li=shown))
    return "\n".join(lines)


def _acl_mismatch(questions: list[EvalQuestion]) -> str | None:
    """Why LlamaIndex (no ACL filter) cannot be compared: a ticket names an ACL other than
    the default one, or None."""
    named = sorted({q.ticket.acl for q in questions if q.ticket.acl not in (None, DEFAULT_ACL)})
    return f"the tickets name ACL {list(named[0])}; LlamaIndex has no ACL filter" if named else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", nargs="?", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--latency-ms", default="200", help="comma-separated, e.g. 50,200,1000")
    parser.add_argument("--jobs", default="1,16", help="jobs in flight, e.g. 1,16,64,256")
    parser.add_argument("--no-llamaindex", action="store_true")
    parser.add_argument("--backlog", type=int, default=0, help="tickets of a backlog run")
    parser.add_argument("--backlog-latency-ms", type=float, default=1000.0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    latencies = [float(x) for x in args.latency_ms.split(",") if x]
    sizes = [int(x) for x in args.jobs.split(",") if x]
    loopback_only()
    questions = load_questions(args.dataset, None)
    texts = [q.question for q in questions]
    collection = collection_for(args.dataset)
    why_not = "--no-llamaindex" if args.no_llamaindex else (
        llamaindex_baseline.missing() or _acl_mismatch(questions))
    report: dict[str, Any] = {"dataset": args.dataset.name, "cpus": os.cpu_count(),
                              "load_average_at_start": os.getloadavg(), "runs": [],
                              "llamaindex_skipped": why_not}
    with tempfile.TemporaryDirectory() as home, LoopbackLLM(0) as llm, \
            bench_stack(Path(home) / "home", llm) as settings:
        baseline = None
        try:
            ingest_path(settings, args.dataset / "corpus.jsonl", collection=collection)
            run_ragq(settings, llm, collection, questions, 1, "warmup")
            if not why_not:
                baseline = llamaindex_baseline.Baseline(
                    settings, args.dataset / "corpus.jsonl", llm.v1_url)
                baseline.run(texts[:1])  # warm up
            for latency in latencies:
                llm.set_delay(latency)
                for n in sizes:
                    run = {"latency_ms": latency, **run_ragq(
                        settings, llm, collection, questions, n, f"l{latency:g}-n{n}")}
                    if baseline is not None:
                        run["llamaindex"] = run_llamaindex(baseline, llm, texts, n)
                        run["ratio"] = run["jobs_per_s"] / run["llamaindex"]["questions_per_s"]
                    report["runs"].append(run)
                    print(json.dumps(run), file=sys.stderr, flush=True)
            if args.backlog:
                llm.set_delay(args.backlog_latency_ms)
                report["backlog"] = {"latency_ms": args.backlog_latency_ms, **run_backlog(
                    settings, llm, collection, questions, args.backlog, Path(home))}
        finally:
            if baseline is not None:
                baseline.close()
    out = args.out or ROOT / "bench" / "results" / time.strftime(
        "throughput-%Y%m%dT%H%M%SZ.json", time.gmtime())
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(table(report["runs"]))
    if why_not:
        print(f"LlamaIndex comparison skipped: {why_not}")
    if "backlog" in report:
        print("backlog:", json.dumps(report["backlog"], indent=2))
    print(f"written: {out}")


if __name__ == "__main__":
    main()
