"""Text forms of report.json values shared by every renderer (HTML, PDF, CSV).

Pure functions of their input, so the same report gives the same text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.models import SEVERITY_ORDER as _SEVERITIES
from auditor.report.evidence import plain

__all__ = [
    "READINESS_ORDER",
    "READINESS_LABEL",
    "READINESS_COLOR",
    "STATUS_ORDER",
    "SEVERITY_ORDER",
    "VALUE_LIMIT",
    "fmt_hours",
    "fmt_value",
    "fmt_evidence",
    "evidence_pairs",
]

#: Worst first: the order tables and charts list readiness states in.
READINESS_ORDER = ("NOT_READY", "AT_RISK", "UNKNOWN", "READY")
READINESS_LABEL = {
    "READY": "Ready",
    "AT_RISK": "At risk",
    "NOT_READY": "Not ready",
    "UNKNOWN": "Unknown",
}
#: Fill colours of the readiness chart (the same as the CSS badge colours).
READINESS_COLOR = {
    "READY": "#2e7d32",
    "AT_RISK": "#b26a00",
    "NOT_READY": "#c62828",
    "UNKNOWN": "#6d6d6d",
}
#: Longest text shown for one evidence, label or annotation value (characters).
VALUE_LIMIT = 1000
#: Findings that need attention come first in a VM's section.
STATUS_ORDER = ("FAIL", "ERROR", "WAIVED", "PASS", "NOT_APPLICABLE")
SEVERITY_ORDER = tuple(s.value for s in _SEVERITIES)


def fmt_hours(hours: float | int | None) -> str:
    """Return an age in hours as ``"4.8 h"`` (under 48 h) or ``"8.3 d"``; ``"-"`` when unknown."""
    if hours is None or isinstance(hours, bool):
        return "-"
    value = float(hours)
    if value < 48:
        return f"{value:.1f} h"
    return f"{value / 24:.1f} d"


def fmt_value(value: Any) -> str:
    """Return a JSON value as short text: scalars plainly, lists comma-joined, maps ``k: v; k: v``.

    Never JSON or Python notation: readers of the HTML and PDF see names and values.
    """
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list | tuple) and all(not isinstance(v, dict | list) for v in value):
        return ", ".join(fmt_value(v) for v in value) if value else "(none)"
    return plain(value)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters in report.json)"


def evidence_pairs(evidence: Any, *, limit: int = VALUE_LIMIT) -> tuple[tuple[str, str], ...]:
    """Return evidence as sorted ``(key, text)`` pairs (a non-dict: one ``value`` pair).

    Each text is cut to ``limit`` characters, saying how much was left out: a
    platform finding can list thousands of VMs, and one huge table cell makes
    PDF layout take minutes.
    """
    if not isinstance(evidence, Mapping):
        return () if evidence is None else (("value", _cut(fmt_value(evidence), limit)),)
    return tuple((str(k), _cut(fmt_value(evidence[k]), limit)) for k in sorted(evidence, key=str))


def fmt_evidence(evidence: Any, *, limit: int = 500) -> str:
    """Return evidence as one line ``"k=v; k=v"`` cut to ``limit`` characters (for CSV cells)."""
    text = "; ".join(f"{k}={v}" for k, v in evidence_pairs(evidence))
    return text if len(text) <= limit else text[: limit - 1] + "…"
