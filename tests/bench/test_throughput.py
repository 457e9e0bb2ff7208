"""bench/throughput.py on a real stack: a run's figures come from the ledger, the loopback
server and the stack's processes, and a backlog batch returns every result. Counts only, no
timing: the figures that are times are checked to be there and positive."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.loopback_llm import LoopbackLLM
from bench.throughput import bench_stack, run_backlog, run_ragq
from ragq.evaluation.run import collection_for, load_questions
from ragq.ingestion.submit import ingest_path
from tests.conftest import inherited_settings

DATASET = Path(__file__).resolve().parents[2] / "examples" / "eval"
# The first three questions are single lookups: routed simple in process (no router call), each
# job's one model call is the synthesizer's.
CALLS_PER_JOB = 1


@pytest.mark.stack
def test_a_run_and_a_backlog_report_what_the_stack_did(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The bench lets RAGQ_ variables reach its stack on purpose; here they would be those of a
    # session stack still running (its broker and database), whose workers take this stack's
    # tasks, so the test's stack describes only itself.
    for key in inherited_settings():
        monkeypatch.delenv(key)
    questions = load_questions(DATASET, None)
    collection = collection_for(DATASET)
    with LoopbackLLM(0) as llm, bench_stack(tmp_path / "home", llm) as settings:
        ingest_path(settings, DATASET / "corpus.jsonl", collection=collection)
        run = run_ragq(settings, llm, collection, questions, 3, "t")
        backlog = run_backlog(settings, llm, collection, questions, 5, tmp_path)
    assert run["statuses"] == {"completed": 3}, run["failures"]
    assert run["routes"] == {"simple": 3}
    assert run["model_calls_per_job"] == CALLS_PER_JOB
    assert run["model_requests"] == 3 * CALLS_PER_JOB
    assert run["requests_by_kind"] == {"ragq:synthesizer": 3}
    assert 1 <= run["peak_in_flight"] <= (settings.general_worker_processes
                                          * settings.general_worker_threads)
    assert run["wall_s"] > 0 and run["longest_critical_path_s"] > 0
    assert run["cpu_s_per_job"] > 0 and {"valkey", "vector", "general"} <= set(
        run["cpu_s_by_process"])
    assert backlog["every_result_present"] and backlog["results_by_status"] == {"completed": 5}
    assert backlog["results_with_answer"] == 5
    assert {"valkey", "vector", "general"} <= set(backlog["peak_rss_mb_by_process"])
    assert all(mb > 0 for mb in backlog["peak_rss_mb_by_process"].values())
