"""`ragq eval --html`: one self-contained page whose tables hold the report's figures and whose
inline SVG charts draw them, checked in the markup and, where a Chromium is installed, in a
real headless browser's screenshot of the file, cut off from every host."""

from __future__ import annotations

import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from ragq.evaluation.metrics import question_row
from ragq.evaluation.report_html import (
    REVIEW_COLOR,
    ROUTE_COLORS,
    SERIES_COLORS,
    render_html,
)
from ragq.evaluation.run import _by_route, per_question_row
from tests.api.test_docs_page import FLAGS, _browser


def _report() -> dict[str, Any]:
    """Two routes: ``full`` finds its gold document in both questions (2 and 9 model calls),
    one of them escalated to review; ``simple`` misses it (1 call). The baseline finds it in
    the evidence of both ``full`` questions and in the context of the first."""
    spec = [("q1", "full", ["d1"], 2, True), ("q2", "full", ["d1"], 9, False),
            ("q3", "simple", [], 1, False)]
    agentic = [question_row(["d1"], [], evidence=found, context=found, answer="",
                            retrieval_calls=1, model_calls=calls, latency_ms=10.0,
                            cost_usd=0.0, route=route, escalated=escalated)
               for _, route, found, calls, escalated in spec]
    baseline = [question_row(["d1"], [], evidence=ev, context=ev[:1] if a is agentic[0] else [],
                             answer="", retrieval_calls=1, model_calls=0, latency_ms=1.0,
                             cost_usd=0.0, route=a["route"])
                for a, ev in zip(agentic, (["d1"], ["d1"], []), strict=True)]
    return {"dataset": "/data/tiny_set", "batch_id": "bat_1", "context_chunks_mean": 3.0,
            "agentic": _by_route(agentic), "baseline": _by_route(baseline),
            "questions": [per_question_row(cid, a, b) for (cid, *_), a, b
                          in zip(spec, agentic, baseline, strict=True)]}


class _Page(HTMLParser):
    """Table rows by table id, and the elements inside each SVG chart by chart id."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.charts: dict[str, list[tuple[str, dict[str, str]]]] = {}
        self.tags: list[str] = []
        self._table: str | None = None
        self._chart: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.tags.append(tag)
        if tag == "table":
            self._table = a.get("id", "")
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = []
        elif tag == "svg":
            self._chart = a.get("id", "")
            self.charts[self._chart] = [("svg", a)]
        elif self._chart is not None:
            self.charts[self._chart].append((tag, a))

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._table = None
        elif tag in ("td", "th") and self._cell is not None and self._table is not None:
            self.tables[self._table][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "svg":
            self._chart = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _parse(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    return parser


def test_the_tables_hold_recall_per_flow_and_route_and_the_review_rate() -> None:
    page = _parse(render_html(_report()))
    recall = {row[0]: row[1:] for row in page.tables["recall-table"][1:]}
    # questions, agentic evidence, agentic context, baseline evidence, baseline context
    assert recall["overall"] == ["3", "0.667", "0.667", "0.667", "0.333"]
    assert recall["full"] == ["2", "1.000", "1.000", "1.000", "0.500"]
    assert recall["simple"] == ["1", "0.000", "0.000", "0.000", "0.000"]
    review = {row[0]: row[1:] for row in page.tables["review-table"][1:]}
    assert review["full"][:2] == ["2", "50.0%"] and review["simple"][:2] == ["1", "0.0%"]
    assert review["overall"][1] == "33.3%"
    per_question = page.tables["questions-table"][1:]
    assert [(r[0], r[1], r[3], r[6]) for r in per_question] == [
        ("q1", "full", "2", "1.00"), ("q2", "full", "9", "1.00"), ("q3", "simple", "1", "0.00")]


def test_the_charts_draw_one_bar_per_figure_and_one_dot_per_question() -> None:
    page = _parse(render_html(_report()))
    bars = [a for tag, a in page.charts["recall-chart"] if tag == "rect"]
    # 3 routes × 4 series; a bar of recall 0 is drawn with height 0
    assert len(bars) == 12
    heights = {a["fill"]: [] for a in bars}
    for a in bars:
        heights[a["fill"]].append(float(a["height"]))
    assert set(heights) == set(SERIES_COLORS.values())
    full_h = heights[SERIES_COLORS[("agentic", "context_recall")]]  # overall, full, simple
    assert full_h[1] > full_h[0] > full_h[2] == 0.0
    dots = [a for tag, a in page.charts["calls-scatter"] if tag == "circle"]
    assert len(dots) == 3
    # more model calls sit further right; a found gold document sits higher (smaller y)
    by_x = sorted(dots, key=lambda a: float(a["cx"]))
    assert float(by_x[0]["cy"]) > float(by_x[1]["cy"])  # 1 call and recall 0: lowest
    review = [a for tag, a in page.charts["review-chart"] if tag == "rect"]
    assert len(review) == 3 and {a["fill"] for a in review} == {REVIEW_COLOR}


def test_the_page_is_self_contained() -> None:
    page = render_html(_report())
    lowered = page.lower()
    for reference in ("http", "<script", "src=", "href", "url(", "@import", "<link", "<img"):
        assert reference not in lowered, reference
    assert "script" not in _parse(page).tags


def test_a_report_without_per_question_figures_still_renders() -> None:
    report = {k: v for k, v in _report().items() if k != "questions"}
    page = _parse(render_html(report))
    assert "recall-table" in page.tables and "calls-scatter" not in page.charts


def _png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and rows of RGB(A) pixels of an 8-bit, non-interlaced PNG (what
    Chromium's screenshot writes), with the scanline filters undone."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, header = 8, [], b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
    bpp = 3 if color == 2 else 4
    raw, stride, rows = zlib.decompress(b"".join(chunks)), width * bpp, []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, bpp, rows


def _rgb(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


def _count(pixels: tuple[int, int, list[bytes]], rgb: tuple[int, int, int], tol: int = 6) -> int:
    width, bpp, rows = pixels
    return sum(1 for row in rows for x in range(0, width * bpp, bpp)
               if all(abs(row[x + i] - rgb[i]) <= tol for i in range(3)))


@pytest.mark.skipif(_browser() is None, reason="no Chromium/Chrome installed "
                    "(apt-get install -y chromium)")
def test_a_headless_browser_offline_draws_every_chart(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(_report()), encoding="utf-8")
    shot = tmp_path / "shot.png"
    command = [_browser() or "", *FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
               "--hide-scrollbars", "--window-size=1000,1800", "--force-device-scale-factor=1",
               f"--screenshot={shot}", page.as_uri()]
    subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    pixels = _png_pixels(shot)
    # Every bar series and the review bars are painted in their own colour (a bar of 0.5 on
    # a 190-pixel plot is about 14 × 95 pixels; legend swatches add a few)...
    for color in [*SERIES_COLORS.values(), REVIEW_COLOR]:
        assert _count(pixels, _rgb(color)) > 400, color
    # ...and the scatter's dots of the two routes, 60 % opaque on white.
    for color in ROUTE_COLORS[:2]:
        dot = tuple(round(0.6 * v + 0.4 * 255) for v in _rgb(color))
        assert _count(pixels, dot) > 30, color  # type: ignore[arg-type]
