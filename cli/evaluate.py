"""`ragq eval DATASET_DIR`: the report tables, agentic beside the single-shot baseline.

The tables fit 100 columns; on a narrower terminal a table is split into parts that each fit,
every part repeating the flow and route columns, so no figure is ever cut to ``0.0000…``. A
figure that does not apply to a flow, or has no value (no correct answer to divide by), is
shown as :data:`NOT_APPLICABLE`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from ragq.cli.output import console, emit_json, err_console
from ragq.cli.progress import StageProgress
from ragq.settings import Settings

Column = tuple[str, str, str]  # (figure key, header, format)
QUALITY: list[Column] = [
    ("questions", "n", "{:.0f}"), ("evidence_recall", "evid. recall", "{:.3f}"),
    ("context_recall", "ctx recall", "{:.3f}"), ("all_gold_rate", "all-gold", "{:.3f}"),
    ("answer_f1", "ans. F1", "{:.3f}"), ("answer_in_text", "ans. in text", "{:.3f}"),
]
COST: list[Column] = [
    ("retrieval_calls_mean", "retr./q", "{:.2f}"), ("model_calls_mean", "LLM/q", "{:.2f}"),
    ("tokens_mean", "tokens/q", "{:,.0f}"), ("cost_usd_mean", "$/q", "{:.6f}"),
    ("cost_per_correct_answer", "$/correct", "{:.6f}"),
    ("budget_exhaustion_rate", "exhausted", "{:.1%}"),
    ("escalation_rate", "review", "{:.1%}"),
    ("contradiction_review_rate", "conflict", "{:.1%}"),
    ("latency_ms_p50", "p50 ms", "{:,.0f}"), ("latency_ms_p95", "p95 ms", "{:,.0f}"),
]
"""The printed figures; p95 of calls, EM and totals are in the JSON report only."""

NOT_APPLICABLE = "–"
FLOW_NA: dict[str, set[str]] = {
    # The baseline writes no answer, and its latency is one batched search divided by the
    # questions of the batch: the same number for each, not a per-question latency.
    "baseline": {"answer_f1", "answer_in_text", "latency_ms_p50", "latency_ms_p95",
                 "escalation_rate", "contradiction_review_rate"},
}
"""Figures the JSON report carries for a flow that mean nothing for it."""

TABLE_WIDTH = 100
"""Width the tables are laid out for when the output is not a terminal (a file, a pipe)."""
KEYS = (("flow", "flow"), ("route", "route"))


def _cell(flow: str, figures: dict[str, Any], key: str, fmt: str) -> str:
    value = figures.get(key)
    if value is None or key in FLOW_NA.get(flow, set()):
        return NOT_APPLICABLE
    return fmt.format(value)


def _rows(report: dict[str, Any], columns: list[Column]) -> list[list[str]]:
    """Cells of every (flow, route): the key cells, then one per column."""
    return [[flow, route, *[_cell(flow, figures, key, fmt) for key, _, fmt in columns]]
            for flow in ("agentic", "baseline") for route, figures in report[flow].items()]


def _table(title: str, headers: list[str], rows: list[list[str]], part: list[int]) -> Table:
    table = Table(title=title or None, box=box.SIMPLE_HEAD, collapse_padding=True,
                  pad_edge=False)
    for i in range(len(KEYS)):
        table.add_column(headers[i], no_wrap=True)
    for i in part:
        table.add_column(headers[i], justify="right", no_wrap=True)
    for row in rows:
        table.add_row(*row[: len(KEYS)], *[row[i] for i in part])
    return table


_MEASURE = Console(width=10_000, color_system=None)


def _width(headers: list[str], rows: list[list[str]], part: list[int]) -> int:
    """Columns a table of ``part`` needs to show every cell whole (a title wraps)."""
    return _MEASURE.measure(_table("", headers, rows, part)).maximum


def _tables(report: dict[str, Any], title: str, columns: list[Column], width: int
            ) -> list[Table]:
    """The table of ``columns``, or, when it is wider than ``width``, its value columns split
    into as few parts as fit, each repeating the key columns (a column too wide for any part
    still gets one of its own). Parts are balanced where they fit, so no part is a stub."""
    headers = [label for _, label in KEYS] + [label for _, label, _ in columns]
    rows = _rows(report, columns)
    values = list(range(len(KEYS), len(headers)))
    greedy: list[list[int]] = [[]]
    for i in values:
        if greedy[-1] and _width(headers, rows, [*greedy[-1], i]) > width:
            greedy.append([])
        greedy[-1].append(i)
    if len(greedy) == 1:
        return [_table(title, headers, rows, values)]
    k = len(greedy)
    even = [values[n * len(values) // k:(n + 1) * len(values) // k] for n in range(k)]
    parts = even if all(_width(headers, rows, p) <= width for p in even) else greedy
    return [_table(title if n == 1 else "", headers, rows, part) for n, part in
            enumerate(parts, start=1)]


def source_table(report: dict[str, Any]) -> Table:
    """Retrieval calls per source and flow: how many, by how many questions, per question."""
    table = Table(title="retrieval calls per source", box=box.SIMPLE_HEAD,
                  collapse_padding=True, pad_edge=False)
    for header in ("flow", "source"):
        table.add_column(header, no_wrap=True)
    for header in ("calls", "questions", "calls/q"):
        table.add_column(header, justify="right", no_wrap=True)
    for flow in ("agentic", "baseline"):
        for name, figures in (report.get("sources") or {}).get(flow, {}).items():
            table.add_row(flow, name, f"{figures['calls']:.0f}", f"{figures['questions']:.0f}",
                          f"{figures['calls_per_question']:.2f}")
    return table


def tables(report: dict[str, Any], width: int = TABLE_WIDTH) -> list[Table]:
    """Answer quality, then cost and effort, each per flow and route, each split into parts
    that fit ``width`` columns; then the retrieval calls per source."""
    quality = (f"{report['dataset']}: answer quality (mean context "
               f"{report['context_chunks_mean']:.1f} chunks; the baseline gets the same number "
               "per question)")
    cost = ("cost and effort per question ($/correct = total cost / all-gold questions; "
            "exhausted = budget_exhausted jobs; review = jobs escalated to the review queue; "
            "conflict = of them, for a contradiction; "
            f"{NOT_APPLICABLE} = does not apply)")
    by_source = [source_table(report)] if report.get("sources") else []
    return [*_tables(report, quality, QUALITY, width), *_tables(report, cost, COST, width),
            *by_source]


def print_tables(report: dict[str, Any], out: Console) -> None:
    """The tables at the terminal's width, or at :data:`TABLE_WIDTH` off a terminal (where
    rich would otherwise assume 80 columns and cut figures)."""
    width, kept = (out.width if out.is_terminal else TABLE_WIDTH), out.width
    out.width = width
    try:
        for part in tables(report, width):
            out.print(part)
    finally:
        out.width = kept


def evaluate(settings: Settings, dataset: Path, *, limit: int | None, json_out: Path | None,
             as_json: bool, every: int | None = None, html_out: Path | None = None) -> None:
    """Run the evaluation, following it on the stream the report goes to: stdout for the
    tables (so ``> out.txt`` shows progress while it runs), stderr when stdout carries JSON."""
    from ragq.evaluation import run_eval, write_report
    from ragq.evaluation.report_html import render_html

    with StageProgress(err_console if as_json else console, every=every) as progress:
        report = run_eval(settings, dataset, limit=limit, on_progress=progress.update)
    if json_out:
        write_report(report, json_out)
    if html_out:
        html_out.write_text(render_html(report), encoding="utf-8")
    if as_json:
        emit_json(report)
    else:
        print_tables(report, console)
        for written in (json_out, html_out):
            if written:  # one line, however long the path: it is copied from here
                console.print(f"report written to {written}", highlight=False, soft_wrap=True)
