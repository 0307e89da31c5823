"""Make one CSV cell safe to open in a spreadsheet (OWASP "CSV Injection").

Excel, LibreOffice Calc and Google Sheets run a cell as a formula when its text starts
with ``=``, ``+``, ``-`` or ``@``; tab and CR first are listed too (OWASP CSV Injection;
OWASP ASVS 4/5 V1.2 adds NUL). Cluster names, labels, annotations and messages that
quote them are attacker-influenced, so every text cell of every CSV this tool writes
(findings.csv, vms.csv, period.csv, fleet-*.csv) goes through :func:`csv_cell`.

A cell is escaped (a leading ``'``, which spreadsheets consume as "treat as text") when,
after any leading whitespace or control characters (space, tab, CR, LF, NUL, no-break
space ...), its first character is a trigger or its full-width form (``＝ ＋ － ＠``, which
East Asian input methods and some spreadsheet locales turn into the ASCII sign). A plain
number (``-1.5``, ``+3``) and a lone ``-`` (the reports' "none") stay as they are, so
numeric columns still parse; numbers passed as int/float are never touched.
"""

from __future__ import annotations

from typing import Any

__all__ = ["csv_cell", "needs_escape"]

_TRIGGERS = frozenset("=+-@\uff1d\uff0b\uff0d\uff20")
_NUMBER_CHARS = frozenset("0123456789+-.eE")


def _lead(text: str) -> str:
    """The first character that is neither whitespace nor a control character ("" if none)."""
    for ch in text:
        if not (ch.isspace() or ord(ch) < 32 or ch == "\x7f"):
            return ch
    return ""


def _plain_number(text: str) -> bool:
    """``text`` is a decimal number written with ASCII digits, sign, point and exponent only."""
    if not text or not set(text) <= _NUMBER_CHARS:
        return False
    try:
        float(text)
    except ValueError:
        return False
    return True


def needs_escape(text: str) -> bool:
    """Whether a spreadsheet could read ``text`` as a formula (see the module docstring)."""
    if text == "-" or _plain_number(text):
        return False
    if text[:1] in ("\t", "\r", "\n", "\x00"):
        return True
    return _lead(text) in _TRIGGERS


def csv_cell(value: Any, fmt: Any = str) -> Any:
    """Return ``value`` ready for :mod:`csv`: text escaped with a leading ``'`` when needed.

    ``None`` becomes ``""``; int, float and bool stay as they are (the csv module writes
    them); any other value is turned into text with ``fmt`` (default :class:`str`) first.
    """
    if value is None:
        return ""
    if isinstance(value, (bool, int, float)):
        return value
    text = value if isinstance(value, str) else str(fmt(value))
    return "'" + text if text and needs_escape(text) else text
