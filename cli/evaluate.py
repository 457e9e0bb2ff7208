"""`ragq eval DATASET_DIR`: the report table, agentic beside the single-shot baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich import box
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ragq.cli.output import console, emit_json, err_console
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
    ("latency_ms_p50", "p50 ms", "{:,.0f}"), ("latency_ms_p95", "p95 ms", "{:,.0f}"),
]
"""The printed figures; p95 of calls, EM and totals are in the JSON report only."""


def _cell(figures: dict[str, Any], key: str, fmt: str) -> str:
    value = figures.get(key)
    return "—" if value is None else fmt.format(value)


def _table(report: dict[str, Any], title: str, columns: list[Column]) -> Table:
    out = Table(title=title, box=box.SIMPLE_HEAD, collapse_padding=True)
    out.add_column("flow", no_wrap=True)
    out.add_column("route", no_wrap=True)
    for _, label, _ in columns:
        out.add_column(label, justify="right", no_wrap=True)
    for flow in ("agentic", "baseline"):
        for route, figures in report[flow].items():
            out.add_row(flow, route, *[_cell(figures, key, fmt) for key, _, fmt in columns])
    return out


def tables(report: dict[str, Any]) -> list[Table]:
    """Answer quality, then cost and effort, each per flow and route (two narrow tables)."""
    quality = (f"{report['dataset']}: answer quality (mean context "
               f"{report['context_chunks_mean']:.1f} chunks; the baseline gets the same number "
               "per question)")
    cost = ("cost and effort per question ($/correct = total cost / all-gold questions; "
            "exhausted = budget_exhausted jobs)")
    return [_table(report, quality, QUALITY), _table(report, cost, COST)]


def evaluate(settings: Settings, dataset: Path, *, limit: int | None, json_out: Path | None,
             as_json: bool) -> None:
    from ragq.evaluation import run_eval, write_report

    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=err_console, disable=as_json)
    bars: dict[str, Any] = {}

    def update(stage: str, done: int, total: int) -> None:
        if stage not in bars:
            bars[stage] = progress.add_task(stage, total=total)
        progress.update(bars[stage], completed=done, total=total)

    with progress:
        report = run_eval(settings, dataset, limit=limit, on_progress=update)
    if json_out:
        write_report(report, json_out)
    if as_json:
        emit_json(report)
    else:
        for part in tables(report):
            console.print(part)
