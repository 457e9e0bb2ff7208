"""`ragq eval --html FILE`: the evaluation report as one self-contained page.

The page must open anywhere a report is copied to (a CI artifact, a mail attachment, an
offline laptop), so it holds everything it shows: styles inline, charts as inline SVG drawn
here, no script, no font, no image and no address of anything outside it. Rendering is a pure
function of the report dict :func:`ragq.evaluation.run_eval` returns (the ``--json`` report),
so it is tested without a stack.

It shows recall in evidence and in context for the agentic flow and the baseline, per route;
model calls per question against recall (one dot per question, from the report's
``questions``); and the review rate per route.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

__all__ = ["render_html"]

FLOWS = ("agentic", "baseline")
RECALLS = (("evidence_recall", "evidence"), ("context_recall", "context"))
SERIES_COLORS = {
    ("agentic", "evidence_recall"): "#1f5fa8", ("agentic", "context_recall"): "#7fb0e0",
    ("baseline", "evidence_recall"): "#b45309", ("baseline", "context_recall"): "#f5b971",
}
"""One colour per (flow, recall) bar; the tests look for these in a screenshot."""
REVIEW_COLOR = "#7c3aed"
ROUTE_COLORS = ("#0f766e", "#be123c", "#4d7c0f", "#a16207", "#1d4ed8", "#6b21a8", "#334155")
"""Dots of the scatter, one colour per route (in the order routes first appear)."""
NOT_APPLICABLE = "–"

STYLE = """
body { font-family: sans-serif; margin: 2em; color: #111; max-width: 60em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { padding: 0.2em 0.8em; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child, td.key { text-align: left; }
caption { text-align: left; font-weight: bold; padding-bottom: 0.3em; }
svg { display: block; margin: 0.5em 0 1.5em; }
svg text { font-size: 11px; fill: #333; }
.axis { stroke: #555; stroke-width: 1; }
.grid { stroke: #e5e5e5; stroke-width: 1; }
.legend span { display: inline-block; width: 0.9em; height: 0.9em; margin: 0 0.3em 0 1em;
               vertical-align: middle; }
"""


def _fmt(value: Any, spec: str = "{:.3f}") -> str:
    return NOT_APPLICABLE if value is None else spec.format(value)


def _routes(report: Mapping[str, Any]) -> list[str]:
    """``overall`` first, then every route either flow reports, in order."""
    seen = [r for flow in FLOWS for r in (report.get(flow) or {}) if r != "overall"]
    return ["overall", *dict.fromkeys(sorted(seen))]


def _figure(report: Mapping[str, Any], flow: str, route: str, key: str) -> float | None:
    value = ((report.get(flow) or {}).get(route) or {}).get(key)
    return None if value is None else float(value)


def _table(caption: str, headers: Sequence[str], rows: Sequence[Sequence[str]],
           table_id: str) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f'<td class="key">{escape(c)}</td>' if i == 0 else f"<td>{escape(c)}</td>"
                         for i, c in enumerate(row)) + "</tr>" for row in rows)
    return (f'<table id="{table_id}"><caption>{escape(caption)}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def recall_table(report: Mapping[str, Any]) -> str:
    """Questions, evidence and context recall of each flow, per route."""
    rows = []
    for route in _routes(report):
        n = _figure(report, "agentic", route, "questions")
        rows.append([route, _fmt(n, "{:.0f}"),
                     *[_fmt(_figure(report, flow, route, key))
                       for flow in FLOWS for key, _ in RECALLS]])
    headers = ["route", "questions", "agentic evidence", "agentic context",
               "baseline evidence", "baseline context"]
    return _table("Recall of gold documents, per route", headers, rows, "recall-table")


def review_table(report: Mapping[str, Any]) -> str:
    """The agentic flow's review rate (jobs escalated to the review queue) and the share
    escalated for a contradiction, per route; the baseline reviews nothing."""
    rows = [[route, _fmt(_figure(report, "agentic", route, "questions"), "{:.0f}"),
             _fmt(_figure(report, "agentic", route, "escalation_rate"), "{:.1%}"),
             _fmt(_figure(report, "agentic", route, "contradiction_review_rate"), "{:.1%}")]
            for route in _routes(report)]
    return _table("Review rate of the agentic flow, per route",
                  ["route", "questions", "review rate", "for a contradiction"], rows,
                  "review-table")


def _svg(chart_id: str, width: int, height: int, title: str, parts: Sequence[str]) -> str:
    return (f'<svg id="{chart_id}" class="chart" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">'
            f"<title>{escape(title)}</title>{''.join(parts)}</svg>")


def _y_axis(left: int, top: int, plot_h: int, right: int, ticks: Sequence[float],
            top_value: float, label: str = "{:.2f}") -> list[str]:
    parts = []
    for tick in ticks:
        y = top + plot_h - tick / top_value * plot_h
        parts.append(f'<line class="grid" x1="{left}" x2="{right}" y1="{y:.1f}" y2="{y:.1f}"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">'
                     f"{label.format(tick)}</text>")
    parts.append(f'<line class="axis" x1="{left}" x2="{left}" y1="{top}" '
                 f'y2="{top + plot_h}"/>')
    parts.append(f'<line class="axis" x1="{left}" x2="{right}" y1="{top + plot_h}" '
                 f'y2="{top + plot_h}"/>')
    return parts


def bar_chart(chart_id: str, title: str, groups: Sequence[str],
              series: Sequence[tuple[str, str]], values: Mapping[tuple[str, str], float | None],
              *, top_value: float = 1.0, tick_label: str = "{:.2f}") -> str:
    """Grouped bars: one group per entry of ``groups``, one bar per ``(name, colour)`` of
    ``series`` with height ``values[(group, name)]`` on a 0..``top_value`` axis; a missing
    value draws no bar."""
    left, top, bottom, bar_w, gap = 48, 12, 36, 16, 22
    group_w = bar_w * len(series) + gap
    width = left + group_w * max(1, len(groups)) + 12
    height, plot_h = 240, 240 - top - bottom
    parts = _y_axis(left, top, plot_h, width - 6, [top_value * i / 4 for i in range(5)],
                    top_value, tick_label)
    for g, group in enumerate(groups):
        x0 = left + gap / 2 + g * group_w
        for s, (name, color) in enumerate(series):
            value = values.get((group, name))
            if value is None:
                continue
            h = max(0.0, min(value, top_value)) / top_value * plot_h
            parts.append(f'<rect x="{x0 + s * bar_w:.1f}" y="{top + plot_h - h:.1f}" '
                         f'width="{bar_w - 2}" height="{h:.1f}" fill="{color}">'
                         f"<title>{escape(group)} {escape(name)}: {value:.3f}</title></rect>")
        parts.append(f'<text x="{x0 + bar_w * len(series) / 2:.1f}" y="{height - bottom + 16}" '
                     f'text-anchor="middle">{escape(group)}</text>')
    return _svg(chart_id, width, height, title, parts)


def _legend(items: Sequence[tuple[str, str]]) -> str:
    return '<p class="legend">' + "".join(
        f'<span style="background:{color}"></span>{escape(label)}' for label, color in items
    ) + "</p>"


def recall_chart(report: Mapping[str, Any]) -> str:
    """Bars of the recall table: four per route (flow × evidence/context)."""
    routes = _routes(report)
    series = [(f"{flow} {label}", SERIES_COLORS[(flow, key)])
              for flow in FLOWS for key, label in RECALLS]
    values = {(route, f"{flow} {label}"): _figure(report, flow, route, key)
              for route in routes for flow in FLOWS for key, label in RECALLS}
    return (_legend(series) + bar_chart("recall-chart", "Recall per route", routes, series,
                                        values))


def review_chart(report: Mapping[str, Any]) -> str:
    """The review rate per route, on a 0..100 % axis."""
    routes = _routes(report)
    values = {(route, "review rate"): _figure(report, "agentic", route, "escalation_rate")
              for route in routes}
    return bar_chart("review-chart", "Review rate per route", routes,
                     [("review rate", REVIEW_COLOR)], values, tick_label="{:.0%}")


def _ceiling(value: float) -> int:
    """A round top for an axis of counts: 1, 2, 5 or 10 times a power of ten, at least 1."""
    if value <= 1:
        return 1
    power = 10 ** math.floor(math.log10(value))
    return next(int(m * power) for m in (1, 2, 5, 10) if m * power >= value)


def calls_scatter(questions: Sequence[Mapping[str, Any]]) -> str:
    """One dot per question: model calls (x) against recall in context (y), coloured by
    route; half-transparent, so questions at the same point show darker."""
    routes = list(dict.fromkeys(str(q.get("route")) for q in questions))
    colors = {route: ROUTE_COLORS[i % len(ROUTE_COLORS)] for i, route in enumerate(routes)}
    left, top, bottom, plot_w = 62, 12, 40, 560
    width, height = left + plot_w + 16, 280
    plot_h = height - top - bottom
    x_top = _ceiling(max((float(q.get("model_calls") or 0) for q in questions), default=1))
    parts = _y_axis(left, top, plot_h, left + plot_w, [i / 4 for i in range(5)], 1.0)
    for i in range(6):
        tick = x_top * i / 5
        x = left + tick / x_top * plot_w
        parts.append(f'<text x="{x:.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
                     f"{tick:g}</text>")
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 4}" text-anchor="middle">'
                 "model calls per question</text>")
    parts.append(f'<text transform="rotate(-90)" x="{-(top + plot_h / 2):.1f}" y="14" '
                 'text-anchor="middle">recall in context</text>')
    for q in questions:
        calls, got = float(q.get("model_calls") or 0), float(q.get("context_recall") or 0)
        x, y = left + calls / x_top * plot_w, top + plot_h - got * plot_h
        route = str(q.get("route"))
        tip = f"{q.get('custom_id')} ({route}): {calls:g} calls, context recall {got:.2f}"
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{colors[route]}" '
                     f'fill-opacity="0.6"><title>{escape(tip)}</title></circle>')
    return (_legend([(route, colors[route]) for route in routes])
            + _svg("calls-scatter", width, height,
                   "Model calls per question against recall in context", parts))


def questions_table(questions: Sequence[Mapping[str, Any]]) -> str:
    """Every question's figures (folded away: a dataset has hundreds)."""
    rows = [[str(q.get("custom_id")), str(q.get("route")), str(q.get("status", "")),
             _fmt(q.get("model_calls"), "{:g}"), _fmt(q.get("retrieval_calls"), "{:g}"),
             _fmt(q.get("evidence_recall"), "{:.2f}"), _fmt(q.get("context_recall"), "{:.2f}"),
             _fmt(q.get("baseline_context_recall"), "{:.2f}"),
             "yes" if q.get("escalated") else "no"] for q in questions]
    headers = ["question", "route", "status", "model calls", "retrieval calls",
               "evidence recall", "context recall", "baseline context recall", "review"]
    return ("<details><summary>Every question</summary>"
            + _table("Per question (agentic flow, and the baseline's context recall)", headers,
                     rows, "questions-table") + "</details>")


def render_html(report: Mapping[str, Any]) -> str:
    """The whole page for ``report`` (the dict ``run_eval`` returns)."""
    questions = list(report.get("questions") or [])
    dataset = escape(str(report.get("dataset", "")))
    scatter = (calls_scatter(questions) + questions_table(questions) if questions else
               "<p>This report holds no per-question figures (it predates them).</p>")
    body = [
        f"<h1>ragq eval: {dataset}</h1>",
        f"<p>Batch {escape(str(report.get('batch_id', NOT_APPLICABLE)))}; mean context "
        f"{_fmt(report.get('context_chunks_mean'), '{:.1f}')} chunks (the baseline gets the "
        "same number per question). Recall is the share of a question's gold documents found: "
        "in the evidence gathered, and in the context the answer was written from.</p>",
        "<h2>Recall</h2>", recall_table(report), recall_chart(report),
        "<h2>Model calls against recall</h2>", scatter,
        "<h2>Review rate</h2>", review_table(report), review_chart(report),
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>ragq eval: {dataset}</title><style>{STYLE}</style></head>"
            f"<body>{''.join(body)}</body></html>\n")
