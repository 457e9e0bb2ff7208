"""bench/job_cpu.py: its meter splits time without counting any of it twice, and a run on the
real flow puts every piece of a job's work under its own component. No timing is asserted:
the meter's test reads a fake clock, the run's figures are checked for their shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.job_cpu import REST, Meter, run

DATASET = Path(__file__).resolve().parents[2] / "examples" / "eval"
# The model calls of the lean chain (routing and reranking play in process: DecideLocally)
ROLES = ("planner", "sufficiency", "synthesizer")
JOBS = 7  # the first seven questions: single lookups (simple route) and compound ones (planned)


def meter_reading(*readings: float) -> Meter:
    clock = iter(readings)
    return Meter(clock=lambda: next(clock))


def test_a_nested_component_is_taken_out_of_every_one_around_it() -> None:
    # outer 0..20 { middle 2..12 { inner 3..8 } }, then inner again 30..31 on its own
    meter = meter_reading(0, 2, 3, 8, 12, 20, 30, 31)
    with meter.measure("outer"), meter.measure("middle"), meter.measure("inner"):
        pass
    with meter.measure("inner"):
        pass
    assert meter.seconds == {"inner": 5 + 1, "middle": 10 - 5, "outer": 20 - 10}
    assert sum(meter.seconds.values()) == 20 + 1


def test_a_component_that_raises_is_still_measured() -> None:
    meter = meter_reading(0, 1, 3, 7)
    with pytest.raises(ValueError), meter.measure("outer"), meter.measure("inner"):
        raise ValueError("the work failed")
    assert meter.seconds == {"inner": 2, "outer": 7 - 2}


def test_a_run_splits_every_job_by_what_its_steps_did() -> None:
    figures = run(DATASET, JOBS)
    parts = figures["by_component_ms"]
    assert figures["jobs"] == JOBS
    assert {f"model call: {role}" for role in ROLES} <= set(parts)
    assert "other work: DecideLocally" in parts
    assert not {"model call: router", "model call: reranker", "model call: finder"} & set(parts)
    for component in ("ledger writes", "ledger reads", "query embedding",
                      "retrieval (without embedding)", "recording the job", REST):
        assert parts[component] > 0, component
    assert sum(parts.values()) == pytest.approx(figures["cpu_ms_per_job"])
