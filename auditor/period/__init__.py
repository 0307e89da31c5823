"""The monthly (period) report: RPO attainment, breaches, drills, waivers, readiness by day.

Reads the archived report.json of a month (:mod:`auditor.period.archive`), computes the
figures (:mod:`auditor.period.compute`) and writes period.json/csv/html/pdf
(:mod:`auditor.period.render`).
"""

from __future__ import annotations

from auditor.period.archive import (
    Archive,
    Period,
    one_per_instant,
    read_period,
    read_with_previous,
)
from auditor.period.compute import compute_period
from auditor.period.render import FORMATS, write_period

__all__ = [
    "Archive",
    "Period",
    "read_period",
    "read_with_previous",
    "one_per_instant",
    "compute_period",
    "write_period",
    "FORMATS",
]
