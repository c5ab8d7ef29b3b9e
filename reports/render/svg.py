"""Plots drawn as inline SVG by hand: no plotting library, no network, nothing to install.

Each function takes the few values it draws and returns an ``<svg>``
element as text, sized from its content, with a ``<title>`` on every mark so
hovering tells the exact numbers. Colours follow one table (:data:`STATUS_COLOURS`).
"""

from __future__ import annotations

from html import escape

STATUS_COLOURS = {"pass": "#2e7d32", "fail": "#c62828", "flaky": "#ef6c00", "skip": "#bdbdbd", None: "#ffffff"}
STATUS_WORDS = {"pass": "passes", "fail": "fails", "flaky": "flaky", "skip": "skipped", None: "not run"}
SERIES = ("#1565c0", "#6a1b9a", "#00838f", "#ad1457", "#558b2f", "#4e342e", "#283593", "#f9a825", "#37474f", "#d84315")
FONT = 'font-family="system-ui, sans-serif" font-size="11"'
CHAR_W = 6.2  # average glyph width at 11px, for sizing label areas


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _svg(width: float, height: float, body: list[str], element_id: str, label: str) -> str:
    return (
        f'<svg id="{element_id}" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{escape(label)}" {FONT}>'
        + "".join(body)
        + "</svg>"
    )


def heat_map(
    tests: list[str], cells: list[str], status: dict[tuple[str, str], tuple[str, str]], element_id: str = "heatmap"
) -> str:
    """Tests (rows) x cells (columns), each square coloured by status; ``status[(test, cell)] = (status, note)``."""
    size, label_chars, head_chars = 18, 72, 60
    left = min(max((len(t) for t in tests), default=10), label_chars) * CHAR_W + 10
    head = min(max((len(c) for c in cells), default=10), head_chars) * CHAR_W
    top = head * 0.82 + 12  # labels at -55 degrees rise sin(55) of their length
    width, height = left + size * len(cells) + head * 0.58 + 10, top + size * len(tests) + 10
    body = []
    for column, cell in enumerate(cells):
        x = left + column * size + size / 2
        body.append(
            f'<text transform="translate({x + 2:.1f},{top - 5:.1f}) rotate(-55)"><title>{escape(cell)}'
            f"</title>{escape(_clip(cell, head_chars))}</text>"
        )
    for row, test in enumerate(tests):
        y = top + row * size
        body.append(
            f'<text x="{left - 6:.1f}" y="{y + size - 3:.1f}" text-anchor="end"><title>{escape(test)}'
            f"</title>{escape(_clip(test, label_chars))}</text>"
        )
        for column, cell in enumerate(cells):
            state, note = status.get((test, cell), (None, ""))
            tip = f"{test}\n{cell}\n{STATUS_WORDS[state]}" + (f": {note}" if note else "")
            body.append(
                f'<rect class="hm hm-{state or "none"}" x="{left + column * size:.1f}" y="{y:.1f}" '
                f'width="{size - 1}" height="{size - 1}" fill="{STATUS_COLOURS[state]}" stroke="#e0e0e0">'
                f"<title>{escape(tip)}</title></rect>"
            )
    return _svg(width, height, body, element_id, f"heat map of {len(tests)} tests by {len(cells)} cells")


def legend(element_id: str = "legend") -> str:
    """The status colours, one swatch each."""
    body, x = [], 4
    for state, colour in STATUS_COLOURS.items():
        word = STATUS_WORDS[state]
        body.append(
            f'<rect x="{x}" y="4" width="12" height="12" fill="{colour}" stroke="#9e9e9e"/>'
            f'<text x="{x + 16}" y="14">{escape(word)}</text>'
        )
        x += 22 + len(word) * CHAR_W + 12
    return _svg(x, 20, body, element_id, "status colours")


def rate_colour(rate: float | None) -> str:
    """Red at 0%, through amber, to green at 100% (grey when nothing was decided)."""
    if rate is None:
        return STATUS_COLOURS["skip"]
    return f"hsl({rate**3 * 125:.0f}, 62%, 38%)"  # cubed: 90% is still visibly short of green


def bar_chart(bars: list[tuple[str, float | None, str]], element_id: str = "pass-rate-chart") -> str:
    """Horizontal bars of a rate in [0, 1]: ``(label, rate or None, note)``; the note is printed after the bar."""
    row, bar_w, label_chars = 20, 320, 70
    left = min(max((len(b[0]) for b in bars), default=10), label_chars) * CHAR_W + 12
    width, height = left + bar_w + 190, row * len(bars) + 24
    body = [
        f'<line x1="{left + bar_w * f:.1f}" y1="0" x2="{left + bar_w * f:.1f}" y2="{height - 18}" '
        f'stroke="#eeeeee"/><text x="{left + bar_w * f:.1f}" y="{height - 4}" text-anchor="middle" '
        f'fill="#757575">{int(f * 100)}%</text>'
        for f in (0, 0.25, 0.5, 0.75, 1.0)
    ]
    for index, (label, rate, note) in enumerate(bars):
        y = index * row + 2
        length = bar_w * (rate or 0.0)
        body.append(
            f'<text x="{left - 6:.1f}" y="{y + 13}" text-anchor="end"><title>{escape(label)}</title>'
            f"{escape(_clip(label, label_chars))}</text>"
            f'<rect class="bar" x="{left:.1f}" y="{y + 2}" width="{max(length, 1):.1f}" height="{row - 6}" '
            f'fill="{rate_colour(rate)}"><title>{escape(label)}: {escape(note)}</title></rect>'
            f'<text x="{left + bar_w + 6:.1f}" y="{y + 13}">{escape(note)}</text>'
        )
    return _svg(width, height, body, element_id, "pass rate per cell")


def history_chart(points: list[tuple[str, float | None, str]], element_id: str = "history-chart") -> str:
    """Pass rate per run in time order, one coloured series per cell: ``(series, rate, tooltip)``."""
    plot_w, plot_h, left, top = 640, 180, 44, 10
    series = list(dict.fromkeys(name for name, _, _ in points))
    step = plot_w / max(len(points) - 1, 1)
    body = [
        f'<line x1="{left}" y1="{top + plot_h * (1 - f):.1f}" x2="{left + plot_w}" y2="{top + plot_h * (1 - f):.1f}" '
        f'stroke="#eeeeee"/><text x="{left - 6}" y="{top + plot_h * (1 - f) + 4:.1f}" text-anchor="end" '
        f'fill="#757575">{int(f * 100)}%</text>'
        for f in (0, 0.5, 1.0)
    ]
    positions: dict[str, list[tuple[float, float]]] = {name: [] for name in series}
    for index, (name, rate, tip) in enumerate(points):
        if rate is None:
            continue
        x, y = left + index * step, top + plot_h * (1 - rate)
        positions[name].append((x, y))
        colour = SERIES[series.index(name) % len(SERIES)]
        body.append(
            f'<circle class="run" cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}"><title>{escape(tip)}</title></circle>'
        )
    for name, xy in positions.items():
        if len(xy) > 1:
            colour = SERIES[series.index(name) % len(SERIES)]
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
            body.insert(3, f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
    legend_top = top + plot_h + 24
    for index, name in enumerate(series):
        y = legend_top + index * 16
        body.append(
            f'<rect x="{left}" y="{y - 9}" width="10" height="10" fill="{SERIES[index % len(SERIES)]}"/>'
            f'<text x="{left + 16}" y="{y}">{escape(_clip(name, 110))}</text>'
        )
    height = legend_top + 16 * len(series) + 4
    return _svg(left + plot_w + 20, height, body, element_id, "pass rate per run over time")
