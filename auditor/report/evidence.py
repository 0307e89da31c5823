"""Evidence as people read it: labelled values, durations and small tables; never JSON.

A finding's ``evidence`` (report.json) is JSON values. :func:`evidence_items`
turns it into :class:`EvidenceItem` rows: a label ("age", "schedules"), a text
for scalars, lists and flat maps, or a :class:`EvidenceTable` for a list of
records (e.g. the Schedules covering a VM). Hours become "4.8 h" / "15.1 d";
nested values become ``key: value`` text. Nothing here prints braces or
brackets, so neither HTML nor PDF shows a raw structure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["EvidenceTable", "EvidenceItem", "evidence_items", "plain", "TABLE_ROW_LIMIT"]

#: Rows shown of one evidence table; the rest is counted ("4 more rows in report.json").
TABLE_ROW_LIMIT = 6
#: Longest text shown for one value (characters); the rest stays in report.json.
TEXT_LIMIT = 300
#: Longest text shown in one table cell (characters).
CELL_LIMIT = 160


@dataclass(frozen=True)
class EvidenceTable:
    """A list of records: column headers and rows of cell texts; ``more`` rows left out."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    more: int


@dataclass(frozen=True)
class EvidenceItem:
    """One evidence entry: ``label`` and either ``text`` or ``table``."""

    label: str
    text: str
    table: EvidenceTable | None = None


def _label(key: str) -> str:
    text = str(key)
    for suffix in ("_hours", "_bytes"):
        if text.endswith(suffix):
            text = text[: -len(suffix)]
    return text.replace("_", " ")


def _hours(value: float) -> str:
    if value < 48:
        return f"{value:.1f} h"
    return f"{value / 24:.1f} d"


def _cut(text: str, limit: int = TEXT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (+{len(text) - limit} characters in report.json)"


def plain(value: Any, key: str = "", nested: bool = False) -> str:
    """A JSON value as plain text: scalars plainly, lists comma-joined, maps ``k: v; k: v``.

    ``key`` ending in ``_hours`` formats a number as a duration. A map inside a list or
    map (``nested``) joins its pairs with ", " so records stay apart ("; " between them).
    """
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        if key.endswith("_hours"):
            return _hours(float(value))
        return f"{value:g}" if isinstance(value, float) else str(value)
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        if not value:
            return "(none)"
        sep = ", " if nested else "; "
        return sep.join(f"{_label(k)}: {plain(v, str(k), True)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        if not value:
            return "(none)"
        records = any(isinstance(v, Mapping | list | tuple) for v in value)
        return ("; " if records else ", ").join(plain(v, key, True) for v in value)
    return str(value)


def _table(rows: list[Mapping[str, Any]], limit: int, cell: int = CELL_LIMIT) -> EvidenceTable:
    keys: list[str] = []
    for row in rows:
        for k in row:
            if k not in keys:
                keys.append(str(k))
    shown = rows[:limit]
    return EvidenceTable(
        headers=tuple(_label(k) for k in keys),
        rows=tuple(tuple(_cut(plain(r.get(k), k), cell) for k in keys) for r in shown),
        more=len(rows) - len(shown),
    )


def evidence_items(
    evidence: Any, *, limit: int = TABLE_ROW_LIMIT, cell: int = CELL_LIMIT, text: int = TEXT_LIMIT
) -> tuple[EvidenceItem, ...]:
    """Return ``evidence`` as items in key order (a non-map: one ``value`` item).

    ``limit`` caps the rows of a table, ``cell`` the characters of a table cell, ``text``
    those of any other value.
    """
    if evidence is None:
        return ()
    if not isinstance(evidence, Mapping):
        return (EvidenceItem("value", _cut(plain(evidence), text)),)
    items = []
    for key in sorted(evidence, key=str):
        value = evidence[key]
        if (
            isinstance(value, list)
            and value
            and all(isinstance(v, Mapping) for v in value)
            and len(value) > 0
        ):
            items.append(EvidenceItem(_label(key), "", _table(list(value), limit, cell)))
        else:
            items.append(EvidenceItem(_label(key), _cut(plain(value, str(key)), text)))
    return tuple(items)
