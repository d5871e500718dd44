"""Shared pieces of the benchmark suite: percentiles, one result row per figure, the Markdown table."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by nearest rank; NaN for no samples."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def med(values: list[float]) -> float:
    return statistics.median(values) if values else math.nan


def ms(value: float) -> str:
    return "n/a" if math.isnan(value) else (f"{value:.2f} ms" if value < 10 else f"{value:.1f} ms")


@dataclass
class Row:
    """One line of the results table."""

    figure: str
    measured: str
    reference: str
    ratio: str
    target: str
    met: bool | None
    note: str = ""
    raw: dict[str, Any] = field(default_factory=dict)

    def markdown(self) -> str:
        mark = {True: "✅ met", False: "❌ missed", None: "—"}[self.met]
        return f"| {self.figure} | {self.measured} | {self.reference} | {self.ratio} | {self.target} | {mark} |"


HEADER = ("| figure | measured (median / p99) | reference (median / p99) | ratio | target | status |\n"
          "|---|---|---|---|---|---|")


def table(rows: list[Row]) -> str:
    return "\n".join([HEADER, *(r.markdown() for r in rows)])
