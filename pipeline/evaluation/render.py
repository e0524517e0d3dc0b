"""``pipeline eval`` output: a text table, JSON, and an HTML report with inline SVG plots."""

from __future__ import annotations

import json
from typing import Sequence

from pipeline.evaluation.quality import RECALL_AT, Measure, Row

COLORS = {"summarize": "#1f77b4", "mask_tool_results": "#ff7f0e", "hybrid": "#2ca02c"}


def fmt(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    if unit == "%":
        return f"{100 * value:.1f}%"
    if unit == "x":
        return f"{value:.2f}x"
    if unit == "n":
        return f"{value:.0f}"
    return f"{value:.3f}"


def text_table(rows: Sequence[Row]) -> str:
    head = ["strategy", *(f"recall@{k}" for k in RECALL_AT), "F1 read", "F1 mod", "validity", "compression",
            "tokens sent", "saving"]
    body = [[r.strategy, *(fmt(r.recall[k], "%") for k in RECALL_AT), fmt(r.f1_read), fmt(r.f1_modified),
             fmt(r.validity, "%"), fmt(r.compression, "x"), fmt(r.tokens_sent, "n"), fmt(r.saving, "%")] for r in rows]
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(line, widths)))
             for line in [head, *body]]
    return "\n".join(lines)


def to_json(rows: Sequence[Row], measures: Sequence[Measure], meta: dict) -> str:
    return json.dumps({**meta, "strategies": [r.to_json() for r in rows],
                       "sessions": [m.to_json() for m in measures]}, indent=1)


def _recall_plot(rows: Sequence[Row]) -> dict:
    width, height, left, right, top, bottom = 520, 260, 50, 400, 20, 220
    xs = {k: left + (right - left) * i / (len(RECALL_AT) - 1) for i, k in enumerate(RECALL_AT)}
    y = lambda v: bottom - (bottom - top) * v  # noqa: E731
    lines = []
    for row in rows:
        points = [(xs[k], y(row.recall[k])) for k in RECALL_AT if row.recall[k] is not None]
        if points:
            lines.append({"strategy": row.strategy, "color": COLORS.get(row.strategy, "#555"),
                          "points": " ".join(f"{px:.1f},{py:.1f}" for px, py in points), "label_y": points[-1][1] + 4})
    placed: list[float] = []
    for line in sorted(lines, key=lambda item: item["label_y"]):  # labels of close lines kept apart
        line["label_y"] = max(line["label_y"], placed[-1] + 13) if placed else line["label_y"]
        placed.append(line["label_y"])
    return {"width": width, "height": height, "left": left, "right": right, "top": top, "bottom": bottom,
            "lines": lines, "x_ticks": [{"x": xs[k], "label": f"{k}"} for k in RECALL_AT],
            "y_ticks": [{"y": y(v), "label": f"{int(v * 100)}%"} for v in (0, 0.25, 0.5, 0.75, 1)]}


def _saving_bars(rows: Sequence[Row]) -> dict:
    left, full = 140, 300
    bars = [{"strategy": r.strategy, "y": 10 + 28 * i, "width": max(full * (r.saving or 0), 1),
             "label": fmt(r.saving, "%"), "color": COLORS.get(r.strategy, "#555")} for i, r in enumerate(rows)]
    return {"width": left + full + 80, "height": 20 + 28 * len(rows), "left": left, "bars": bars}


def html_report(rows: Sequence[Row], measures: Sequence[Measure], meta: dict) -> str:
    from pipeline.report.templating import render_template

    return render_template("eval.html.j2", rows=rows, measures=measures, recall_at=RECALL_AT, fmt=fmt,
                           plot=_recall_plot(rows), bars=_saving_bars(rows), **meta)
