"""Render the HTML report (and the HTML the PDF is printed from) with Jinja2.

Templates live in ``report_templates/`` at the project root; autoescape is on
for every template and undefined names raise (StrictUndefined), so a template
cannot print attacker-controlled cluster text as markup or silently print
nothing. The HTML report is one self-contained file: CSS and the optional
script are inlined and a Content-Security-Policy allows only those two (by
hash), no network, no other script.

Every printed value goes through :func:`visible_controls` (the environment's ``finalize``):
an invisible bidirectional control or zero-width character in cluster text is printed
as ``[U+XXXX]``, so a name cannot reverse or hide the report's own words around it.
"""

from __future__ import annotations

import base64
import hashlib
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape

from auditor.envelope.model import AuditReport
from auditor.report.cards import safe_segment
from auditor.report.view import ReportView, build_view

__all__ = [
    "TEMPLATES_DIR",
    "environment",
    "render_html",
    "render_pdf_html",
    "stream_html",
    "write_html",
]


def _find_templates() -> Path:
    """Return ``report_templates/``: in the source tree, else as installed by the wheel."""
    source = Path(__file__).resolve().parents[2] / "report_templates"
    installed = Path(sys.prefix) / "share" / "vm-recovery-auditor" / "report_templates"
    return source if source.is_dir() or not installed.is_dir() else installed


#: ``report_templates/`` at the repository root (editable install) or under
#: ``<prefix>/share/vm-recovery-auditor/`` (wheel install, e.g. the container image).
TEMPLATES_DIR = _find_templates()


@lru_cache(maxsize=4)
def environment(templates_dir: Path = TEMPLATES_DIR) -> Environment:
    """Return the Jinja2 environment: autoescape on, StrictUndefined, no trailing-newline loss.

    Raises:
        FileNotFoundError: ``templates_dir`` does not exist.
    """
    if not templates_dir.is_dir():
        raise FileNotFoundError(f"report templates not found: {templates_dir}")
    env = Environment(
        loader=FileSystemLoader(str(templates_dir)),
        autoescape=True,
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        auto_reload=False,
        finalize=visible_controls,
    )
    env.filters["commands"] = commands
    env.filters["ids"] = check_ids
    env.filters["card_segment"] = safe_segment
    env.tests["not_within"] = not_within
    return env


def not_within(items: Iterable[str], others: Iterable[str]) -> bool:
    """Jinja test: some of ``items`` is not among ``others`` (a root cause whose check ids
    are not all on the compact section's Info line)."""
    given = set(others)
    return any(i not in given for i in items)


#: Characters that change how the text around them is displayed, or that show nothing:
#: the bidi embeddings, overrides and isolates (LRE RLE PDF LRO RLO, LRI RLI FSI PDI), the
#: marks (LRM RLM ALM), zero width space, word joiner and BOM. An unterminated RLO in a VM
#: name ("vm-\u202eexe.pdf") displays the rest of its paragraph reversed: "PASS: ... of VM
#: app/vm-\u202eexe.pdf ..." (Unicode TR #9 X1-X8; "Trojan Source", CVE-2021-42574).
INVISIBLE_CONTROLS = frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u200b\u2060\ufeff"
)
_SHOW = {ord(c): f"[U+{ord(c):04X}]" for c in INVISIBLE_CONTROLS}
_FIND = re.compile("[" + "".join(sorted(INVISIBLE_CONTROLS)) + "]")


def visible_controls(value: Any) -> Any:
    """Return ``value`` with each :data:`INVISIBLE_CONTROLS` character as ``[U+XXXX]``.

    Text (and :class:`~markupsafe.Markup`, kept as markup: the replacement holds no markup
    character) is translated; any other value is returned as it is, for autoescape to print.
    """
    if not isinstance(value, str) or _FIND.search(value) is None:
        return value
    shown = value.translate(_SHOW)
    return Markup(shown) if isinstance(value, Markup) else shown


def check_ids(value: str | Iterable[str], sep: str = " ") -> Markup:
    """Each check id in a ``<span class="cid">``, which is never broken across lines (the
    hyphen of RR-PLT-005 is a break opportunity), joined by ``sep``."""
    items = [value] if isinstance(value, str) else list(value)
    return Markup(escape(sep)).join(Markup('<span class="cid">{}</span>').format(i) for i in items)


def commands(text: str) -> Markup:
    """Escape ``text`` and show its `backticked` parts as ``<code>`` (ready-to-paste commands)."""
    parts = str(text).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: print as it is
        return Markup(escape(text))
    return Markup("").join(
        Markup("<code>{}</code>").format(p) if i % 2 else escape(p) for i, p in enumerate(parts)
    )


def _asset(name: str, templates_dir: Path) -> str:
    return (templates_dir / name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def stream_html(
    report: AuditReport,
    *,
    trend: Mapping[str, Any] | None = None,
    view: ReportView | None = None,
    templates_dir: Path = TEMPLATES_DIR,
) -> Iterator[str]:
    """Yield the self-contained HTML report of ``report``  in pieces.

    Joined, the pieces are :func:`render_html`'s string; writing them one by
    one keeps a 10,000-VM report (over 100 MB of HTML) out of memory.
    """
    view = view or build_view(report, trend=trend)
    css = _asset("report.css", templates_dir)
    script = _asset("report.js", templates_dir)
    template = environment(templates_dir).get_template("report.html.j2")
    return template.generate(
        view=view,
        css=Markup(css),
        script=Markup(script),
        style_hash=_csp_hash(css),
        script_hash=_csp_hash(script),
    )


def render_html(
    report: AuditReport,
    *,
    trend: Mapping[str, Any] | None = None,
    view: ReportView | None = None,
    templates_dir: Path = TEMPLATES_DIR,
) -> str:
    """Return the self-contained HTML report of ``report``; same input, same string."""
    return "".join(stream_html(report, trend=trend, view=view, templates_dir=templates_dir))


def write_html(
    report: AuditReport,
    path: Path,
    *,
    trend: Mapping[str, Any] | None = None,
    view: ReportView | None = None,
    templates_dir: Path = TEMPLATES_DIR,
) -> Path:
    """Write the HTML report to ``path`` (UTF-8) piece by piece; return ``path``.

    Raises:
        OSError: ``path`` cannot be written.
    """
    pieces = stream_html(report, trend=trend, view=view, templates_dir=templates_dir)
    with path.open("w", encoding="utf-8", newline="") as out:
        buffer: list[str] = []
        size = 0
        for piece in pieces:
            buffer.append(piece)
            size += len(piece)
            if size >= 1 << 20:
                out.write("".join(buffer))
                buffer, size = [], 0
        out.write("".join(buffer))
    return path


def render_pdf_html(
    report: AuditReport,
    *,
    trend: Mapping[str, Any] | None = None,
    view: ReportView | None = None,
    templates_dir: Path = TEMPLATES_DIR,
) -> str:
    """Return the print HTML the PDF is made from (screen CSS plus ``pdf.css``, no script)."""
    view = view or build_view(report, trend=trend)
    css = _asset("report.css", templates_dir) + "\n" + _asset("pdf.css", templates_dir)
    template = environment(templates_dir).get_template("report_pdf.html.j2")
    return template.render(view=view, css=Markup(css))
