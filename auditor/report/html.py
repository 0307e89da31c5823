"""Render the HTML report (and the HTML the PDF is printed from) with Jinja2.

Templates live in ``report_templates/`` at the project root; autoescape is on
for every template and undefined names raise (StrictUndefined), so a template
cannot print attacker-controlled cluster text as markup or silently print
nothing. The HTML report is one self-contained file: CSS and the optional
script are inlined and a Content-Security-Policy allows only those two (by
hash), no network, no other script.
"""

from __future__ import annotations

import base64
import hashlib
import sys
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from auditor.report.view import ReportView, build_view

__all__ = ["TEMPLATES_DIR", "render_html", "render_pdf_html", "environment"]


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
    return Environment(
        loader=FileSystemLoader(str(templates_dir)),
        autoescape=True,
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        auto_reload=False,
    )


def _asset(name: str, templates_dir: Path) -> str:
    return (templates_dir / name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def render_html(
    report: Mapping[str, Any],
    *,
    trend: Mapping[str, Any] | None = None,
    view: ReportView | None = None,
    templates_dir: Path = TEMPLATES_DIR,
) -> str:
    """Return the self-contained HTML report of ``report`` (a report.json dict).

    Same ``report`` and ``trend`` give the same string. Pass ``view`` to reuse
    one already built.
    """
    view = view or build_view(report, trend=trend)
    css = _asset("report.css", templates_dir)
    script = _asset("report.js", templates_dir)
    template = environment(templates_dir).get_template("report.html.j2")
    return template.render(
        view=view,
        css=Markup(css),
        script=Markup(script),
        style_hash=_csp_hash(css),
        script_hash=_csp_hash(script),
    )


def render_pdf_html(
    report: Mapping[str, Any],
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
