"""The `ragq eval` tables: two readable tables, cost figures shown, missing ones and those that
do not apply as a dash, every figure whole at 100 columns and, split, at 80."""

from __future__ import annotations

import io

from rich.console import Console

from ragq.cli.evaluate import COST, NOT_APPLICABLE, QUALITY, print_tables, tables
from ragq.evaluation.metrics import question_row
from ragq.evaluation.run import _by_route, retrievals_by_source


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
    for table in tables(report, width):
        console.print(table)
    return console.export_text()


def _wide_report() -> dict[str, object]:
    """Figures as wide as a real run prints: a long route name, minutes of latency, tiny costs."""
    rows = [question_row(["d1", "d2"], ["an answer"], evidence=["d1", "d2"], context=["d1"],
                         answer="an answer", retrieval_calls=12, model_calls=41,
                         latency_ms=53_612.0, cost_usd=0.000123, route="investigative",
                         status="completed", tokens=123_456)]
    base = [question_row(["d1", "d2"], ["an answer"], evidence=["d1"], context=["d1"],
                         answer="", retrieval_calls=1, model_calls=0, latency_ms=17.0,
                         cost_usd=0.0, route="investigative")]
    return {"dataset": "/data/a_long_dataset_name", "context_chunks_mean": 7.5,
            "agentic": _by_route(rows), "baseline": _by_route(base)}


def _values(report: dict[str, object]) -> list[str]:
    """Every figure the tables must show whole."""
    return ["investigative", "53,612", "0.000123", "123,456", "12.00", "41.00"]


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
    assert len(baseline) == 2 and all(row[6] == NOT_APPLICABLE for row in baseline)


def test_each_table_fits_a_100_column_terminal() -> None:
    text = _render(_wide_report(), width=100)
    assert "…" not in text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 100
    assert all(value in text for value in _values(_wide_report()))
    assert "(1/2)" not in text  # at 100 columns no table needs splitting


def test_at_80_columns_a_table_splits_into_parts_that_show_every_figure_whole() -> None:
    text = _render(_wide_report(), width=80)
    assert "…" not in text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80
    assert all(value in text for value in _values(_wide_report()))
    headers = [line.split() for line in text.splitlines() if line.split()[:2] == ["flow", "route"]]
    assert len(headers) == 4  # each table in two parts, each repeating flow and route
    assert len(headers[0]) > 3 and len(headers[1]) > 3  # balanced: no one-column stub


def _rows_of(text: str, flow: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.split()[:1] == [flow]]


def test_the_baseline_shows_a_dash_for_answer_and_latency_figures() -> None:
    text = _render(_wide_report(), width=200)
    (quality, _), (cost, _) = _rows_of(text, "baseline")[:2], _rows_of(text, "baseline")[2:]
    assert quality[-2:] == [NOT_APPLICABLE, NOT_APPLICABLE]  # answer F1, answer in text
    assert cost[-2:] == [NOT_APPLICABLE, NOT_APPLICABLE]  # latency p50, p95
    agentic_quality, agentic_cost = _rows_of(text, "agentic")[0], _rows_of(text, "agentic")[2]
    assert agentic_quality[-2:] == ["1.000", "1.000"]
    assert agentic_cost[-2:] == ["53,612", "53,612"]


def test_off_a_terminal_the_tables_are_laid_out_for_100_columns_not_80() -> None:
    out = io.StringIO()
    print_tables(_wide_report(), Console(file=out, force_terminal=False, width=80))
    text = out.getvalue()
    assert "…" not in text and max(len(line.rstrip()) for line in text.splitlines()) <= 100
    assert all(value in text for value in _values(_wide_report()))


def test_eval_into_a_file_writes_progress_lines_before_the_tables(stack, tmp_path) -> None:
    """`ragq eval … > out.txt` as a user runs it against a running stack: the file gets the
    progress lines as the run goes, then the tables; `--json FILE` gets the report, with a
    row per question, and `--html FILE` the page of it."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    dataset = Path(__file__).resolve().parents[2] / "examples" / "eval"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGQ_")}
    env["RAGQ_HOME"] = str(stack.settings.home)
    for name in ("broker_url", "result_backend_url", "database_url"):
        if getattr(stack.settings, name):
            env[f"RAGQ_{name.upper()}"] = str(getattr(stack.settings, name))
    out, report, page = tmp_path / "out.txt", tmp_path / "report.json", tmp_path / "r.html"
    with out.open("w") as fh:
        done = subprocess.run([sys.executable, "-m", "ragq.cli", "eval", str(dataset), "--limit",
                               "4", "--json", str(report), "--progress-every", "2",
                               "--html", str(page)], env=env,
                              stdout=fh, stderr=subprocess.PIPE, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = out.read_text().splitlines()
    progress = [line for line in lines if line.startswith(("ingest:", "answer:"))]
    assert progress[0].startswith("ingest: 0/10") and progress[-1].startswith("answer: 4/4")
    assert any(line.startswith("answer: 0/4") for line in progress)  # the stage's first line
    first_table = next(n for n, line in enumerate(lines) if "answer quality" in line)
    assert lines.index(progress[-1]) < first_table
    assert "…" not in out.read_text()
    written = json.loads(report.read_text())
    assert written["agentic"]["overall"]["questions"] == 4
    assert len(written["questions"]) == 4
    assert {q["route"] for q in written["questions"]} <= set(written["agentic"])
    html = page.read_text()
    assert 'id="recall-table"' in html and html.count("<circle ") == 4
    assert f"report written to {page}" in out.read_text()


def test_retrieval_calls_are_reported_per_source() -> None:
    answered = [{"usage": {"retrieval_calls_by_source": {"api-reference": 3,
                                                         "billing-policy": 1}}},
                {"usage": {"retrieval_calls_by_source": {"api-reference": 2}}},
                {"usage": {}}]
    figures = retrievals_by_source(answered)
    assert figures == {
        "api-reference": {"calls": 5, "questions": 2, "calls_per_question": 5 / 3},
        "billing-policy": {"calls": 1, "questions": 1, "calls_per_question": 1 / 3}}
    report = _report() | {"sources": {"agentic": figures, "baseline": retrievals_by_source(
        [{"usage": {"retrieval_calls_by_source": {"eval_set": 1}}}] * 3)}}
    rows = [line.split() for line in _render(report).splitlines()
            if line.split()[:1] in (["agentic"], ["baseline"]) and len(line.split()) == 5]
    assert ["agentic", "api-reference", "5", "2", "1.67"] in rows
    assert ["agentic", "billing-policy", "1", "1", "0.33"] in rows
    assert ["baseline", "eval_set", "3", "3", "1.00"] in rows
