"""The `ragq eval` tables: two readable tables, cost figures shown, missing ones as a dash."""

from __future__ import annotations

from rich.console import Console

from ragq.cli.evaluate import COST, QUALITY, tables
from ragq.evaluation.metrics import question_row
from ragq.evaluation.run import _by_route


def _report() -> dict[str, object]:
    rows = [question_row(["d1"], [], evidence=found, context=found, answer="",
                         retrieval_calls=2, model_calls=3, latency_ms=40.0, cost_usd=0.00125,
                         route="full", status=status, tokens=1500)
            for found, status in ((["d1"], "completed"), ([], "budget_exhausted"))]
    misses = [question_row(["d1"], [], evidence=[], context=[], answer="", retrieval_calls=1,
                           model_calls=0, latency_ms=5.0, cost_usd=0.0, route="simple")]
    return {"dataset": "set", "context_chunks_mean": 4.0, "agentic": _by_route(rows),
            "baseline": _by_route(misses)}


def _render(report: dict[str, object], width: int = 120) -> str:
    console = Console(width=width, record=True, color_system=None)
    for table in tables(report):
        console.print(table)
    return console.export_text()


def test_eval_prints_quality_and_cost_tables_with_every_column_whole() -> None:
    text = _render(_report())
    for _, label, _ in QUALITY + COST:
        assert label in text
    assert "0.001250" in text  # $/q of the agentic flow
    assert "0.002500" in text  # $/correct: 0.0025 total over one all-gold question
    assert "50.0%" in text  # one of two questions ran out of budget
    assert "1,500" in text  # tokens per question


def test_a_flow_without_correct_answers_shows_a_dash_for_cost_per_correct() -> None:
    lines = _render(_report()).splitlines()
    cost_rows = [line.split() for line in lines[lines.index(next(
        line for line in lines if "$/correct" in line and "$/q" in line)):]]
    baseline = [row for row in cost_rows if row[:1] == ["baseline"]]
    assert len(baseline) == 2 and all(row[6] == "—" for row in baseline)


def test_each_table_fits_a_100_column_terminal() -> None:
    text = _render(_report(), width=100)
    assert "…" not in text
