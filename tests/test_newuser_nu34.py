"""A new user's trial (nu34): what a reader takes away from one artifact read alone, the HTML VM
table with long names, and the CLI's answers to bad input (named, documented exit code, no
traceback: docs/exit-codes.md).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from auditor.config import AuditSettings
from auditor.pipeline import audit_data, write_artifacts
from auditor.sources.directory import DirectorySource
from tests.conftest import AUDIT_AT

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "small-cluster"


def _example_report(root: Path = EXAMPLE) -> Any:
    return audit_data(
        DirectorySource(root).collect(), AuditSettings(cluster_name="example-cluster"), at=AUDIT_AT
    )


def test_a_recovery_card_read_alone_says_when_which_run_and_how_complete(tmp_path: Path) -> None:
    """A card printed and taken to a restore carried no audit time, run id or completeness:
    nothing on it said when it was true or whether the audit behind it saw everything."""
    report = _example_report()
    write_artifacts(report, tmp_path, ["cards"])
    card = json.loads((tmp_path / "recovery-cards/billing/billing-win.json").read_text())
    audit = card.pop("audit")
    vm = next(v for v in report.vms if v.name == "billing-win")
    assert card == vm.recovery_card.model_dump(mode="json")
    assert audit["run_id"] == report.run.id and audit["run_id"].startswith("20261130T060000Z-")
    assert audit["audit_time"] == "2026-11-30T06:00:00Z"
    assert audit["cluster"] == "example-cluster"
    assert audit["audit_complete"] is True and audit["incomplete_checks"] == []
    assert audit["readiness"] == "NOT_READY" and audit["unknown_checks"] == []
    assert "2026-11-30T06:00:00Z" in audit["note"] and report.run.id in audit["note"]


def test_a_card_from_an_incomplete_audit_says_so(tmp_path: Path) -> None:
    """Without the VolumeSnapshot files the audit is incomplete; each card says it."""
    root = tmp_path / "export"
    shutil.copytree(EXAMPLE, root)
    (root / "volumesnapshots.yaml").unlink()
    report = _example_report(root)
    assert report.run.complete is False
    write_artifacts(report, tmp_path / "out", ["cards"])
    audit = json.loads((tmp_path / "out/recovery-cards/web/web-api.json").read_text())["audit"]
    assert audit["audit_complete"] is False
    assert audit["incomplete_checks"] == report.run.incomplete_checks != []
    assert "INCOMPLETE" in audit["note"]
    vm = next(v for v in report.vms if v.name == "web-api")
    assert audit["unknown_checks"] == sorted(
        f.check_id for f in vm.findings if f.status.value == "ERROR"
    )


def _tables_wider_than_the_page(html: Path, width_px: int) -> list[tuple[str, float]]:
    """Lay ``html`` out on a ``width_px`` wide page (weasyprint: the screen CSS, no @page of
    the report's own) and return each table that runs past the page's right edge."""
    weasyprint = pytest.importorskip("weasyprint")

    def walk(box: Any) -> Any:
        yield box
        for child in getattr(box, "children", None) or []:
            yield from walk(child)

    page_css = weasyprint.CSS(string=f"@page {{ size: {width_px}px 40000px; margin: 0 }}")
    doc = weasyprint.HTML(filename=str(html)).render(stylesheets=[page_css])
    wide = []
    for page in doc.pages:
        for box in walk(page._page_box):
            element = getattr(box, "element", None)
            if type(box).__name__ == "TableBox" and element is not None:
                right = box.position_x + box.border_width()
                if right > page.width + 0.5:
                    wide.append((str(element.get("class")), float(right)))
    return wide


@pytest.mark.parametrize("what", ["vm", "namespace"])
def test_html_vm_table_wraps_a_long_vm_or_namespace_name(tmp_path: Path, what: str) -> None:
    """A 63-character VM name with no hyphen sat in a no-wrap cell: the VM table grew to
    1224 px on a 1024 px screen and pushed Age / RPO and Restore points off it (the namespace
    cell had no break either)."""
    root = tmp_path / "export"
    shutil.copytree(EXAMPLE, root)
    old = "lab-ephemeral" if what == "vm" else "lab"
    long = "labephemeral" + "x" * 51  # 63 characters: the longest VM or namespace name
    for path in root.glob("*.yaml"):
        text = path.read_text(encoding="utf-8")
        if what == "vm":
            text = text.replace(old, long)
        else:
            text = text.replace("namespace: lab\n", f"namespace: {long}\n")
            text = text.replace("name: lab\n", f"name: {long}\n")
        path.write_text(text, encoding="utf-8")
    report = _example_report(root)
    assert any(long in (v.name, v.namespace) for v in report.vms)
    [html] = write_artifacts(report, tmp_path / "out", ["html"])
    assert _tables_wider_than_the_page(html, 1024) == []


def test_an_export_of_crds_only_is_named_as_read_not_as_nothing_readable(tmp_path: Path) -> None:
    """An export holding only the CustomResourceDefinitions (``oc get crd -o yaml``): exit 4
    said "nothing readable", as for an empty folder, though the file was read; it now names
    the kinds it held that the auditor does not read."""
    from tests.conftest import invoke_run

    export = tmp_path / "export"
    export.mkdir()
    crd = (
        "- apiVersion: apiextensions.k8s.io/v1\n  kind: CustomResourceDefinition\n"
        "  metadata: {{name: {0}.kubevirt.io}}\n"
        "  spec: {{group: kubevirt.io, scope: Namespaced, versions: []}}\n"
    )
    items = "".join(crd.format(n) for n in ("virtualmachines", "virtualmachineinstances"))
    (export / "customresourcedefinitions.yaml").write_text(
        "apiVersion: v1\nkind: List\nitems:\n" + items
    )
    result = invoke_run(export, tmp_path / "out")
    assert result.exit_code == 4, result.output
    assert "nothing readable" not in result.output
    assert (
        "(no object of a kind the auditor reads; 2 object(s) of kinds it does not read: "
        "apiextensions.k8s.io/v1 CustomResourceDefinition (2))" in result.output
    )
    assert not (tmp_path / "out" / "report.json").exists()


def test_every_csv_row_says_when_and_which_run() -> None:
    """A vms.csv or findings.csv row taken out of its file (pasted into a ticket) said
    whether the audit was complete, but not when it was true or which run wrote it."""
    import csv
    import io

    from auditor.report.csvout import findings_csv, vms_csv

    report = _example_report()
    for data in (vms_csv(report), findings_csv(report)):
        rows = list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))
        assert rows and {(r["audit_time"], r["run_id"]) for r in rows} == {
            ("2026-11-30T06:00:00Z", report.run.id)
        }
        assert list(rows[0])[-3:] == ["audit_complete", "audit_time", "run_id"]


def test_every_fleet_csv_row_says_when_it_was_counted(tmp_path: Path) -> None:
    """fleet-owners.csv and fleet-root-causes.csv rows carried no time at all, and
    fleet-clusters.csv wrote ``complete`` as Python's ``True`` where every other CSV says
    ``true``."""
    import csv
    import io

    from click.testing import CliRunner

    from auditor.cli import main
    from tests.conftest import invoke_run

    archive = tmp_path / "archive"
    published = invoke_run(
        EXAMPLE,
        tmp_path / "run",
        "--cluster-name",
        "example-cluster",
        "--publish",
        str(archive),
        "--spool-dir",
        str(tmp_path / "spool"),
    )
    assert published.exit_code == 0, published.output
    out = tmp_path / "fleet"
    args = ["fleet", "--from", str(archive), "--out", str(out), "--format", "csv"]
    result = CliRunner().invoke(main, [*args, "--at", "2026-11-30T07:00:00Z"])
    assert result.exit_code == 0, result.output
    for name in ("fleet-clusters.csv", "fleet-root-causes.csv", "fleet-owners.csv"):
        text = (out / name).read_text(encoding="utf-8")
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
        assert rows and {r["fleet_as_of"] for r in rows} == {"2026-11-30T07:00:00Z"}, name
    clusters = list(csv.DictReader(io.StringIO((out / "fleet-clusters.csv").read_text())))
    assert [(r["cluster"], r["complete"]) for r in clusters] == [("example-cluster", "true")]


@pytest.mark.parametrize("text", ["", "# owners and waivers go here\n", "---\n"])
def test_a_blank_config_file_is_refused_not_read_as_the_defaults(tmp_path: Path, text: str) -> None:
    """``validate-config`` called a 0-byte config "valid" and ``run --config`` audited with the
    defaults: a ConfigMap mounted empty or a file cut short silently dropped every stricter
    policy (an off-cluster copy required, a shorter RPO) and could only improve verdicts."""
    from click.testing import CliRunner

    from auditor.cli import main
    from tests.conftest import invoke_run

    config = tmp_path / "auditor.yaml"
    config.write_text(text, encoding="utf-8")
    checked = CliRunner().invoke(main, ["validate-config", str(config)])
    assert checked.exit_code == 2, checked.output
    assert "<file>: holds no settings (empty, or only comments)" in checked.output
    result = invoke_run(EXAMPLE, tmp_path / "out", "--config", str(config))
    assert result.exit_code == 2, result.output
    assert f"invalid configuration {config}" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out" / "report.json").exists()


def test_an_audit_incomplete_for_a_missing_kind_says_which_kind_not_none(tmp_path: Path) -> None:
    """Without volumesnapshots.yaml the audit is incomplete (RR-STG-001) with no collection
    problem: the cover said only "0 collection problem(s): some data could not be read" and
    Appendix B said "None: every kind the checks need was read completely", which is false."""
    import re

    root = tmp_path / "export"
    shutil.copytree(EXAMPLE, root)
    (root / "volumesnapshots.yaml").unlink()
    report = _example_report(root)
    assert not report.run.complete and report.collection_problems == []
    [html] = write_artifacts(report, tmp_path / "out", ["html"])
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html.read_text(encoding="utf-8")))
    assert "every kind the checks need was read completely" not in text
    unread = "VolumeSnapshot"
    assert f"Incomplete audit. 0 collection problem(s), 1 kind(s) not read ({unread}):" in text
    assert (
        f"Not read (no file in the export, forbidden or failed): {unread}. "
        "The checks that need them report ERROR: RR-STG-001." in text
    )


@pytest.mark.parametrize(
    "args",
    [
        ["fleet", "--from", "{f}", "--out", "{out}"],
        ["report", "--period", "2026-11", "--from", "{f}", "--cluster", "c", "--out", "{out}"],
        ["history", "--cluster", "c", "--to", "{f}"],
    ],
    ids=["fleet", "report", "history"],
)
def test_an_archive_that_is_a_file_is_named_as_a_file(tmp_path: Path, args: list[str]) -> None:
    """``fleet --from FILE`` said "archive directory FILE does not exist" of a file that
    exists (report --period and history too): exit 2 as documented, now with the truth."""
    from click.testing import CliRunner

    from auditor.cli import main

    archive = tmp_path / "archive.tar"
    archive.write_bytes(b"not a folder")
    argv = [a.format(f=archive, out=tmp_path / "out") for a in args]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2, result.output
    assert f"archive directory {archive} is a file, not a directory" in result.output
    assert "does not exist" not in result.output and "Traceback" not in result.output


def test_publish_from_run_with_retry_is_refused_not_ignored(tmp_path: Path) -> None:
    """``publish --from-run DIR --retry`` said "spool is empty" and exited 0: DIR was never
    published and nothing said so. A bad option combination is exit 2 (docs/exit-codes.md)."""
    from click.testing import CliRunner

    from auditor.cli import main
    from tests.conftest import invoke_run

    run = tmp_path / "run"
    assert invoke_run(EXAMPLE, run).exit_code == 0
    archive = tmp_path / "archive"
    argv = ["publish", "--from-run", str(run), "--to", str(archive), "--retry"]
    result = CliRunner().invoke(main, [*argv, "--spool-dir", str(tmp_path / "spool")])
    assert result.exit_code == 2, result.output
    assert "--retry delivers the runs kept in the spool and takes no --from-run" in result.output
    assert not archive.exists()


def test_from_dir_with_velero_namespace_names_the_option_given(tmp_path: Path) -> None:
    """``run --from-dir X --velero-namespace velero`` was refused with "--from-dir cannot be
    combined with --kubeconfig/--context/-n", naming three options not given and not the one
    that was."""
    from tests.conftest import invoke_run

    result = invoke_run(EXAMPLE, tmp_path / "out", "--velero-namespace", "velero")
    assert result.exit_code == 2, result.output
    assert "--from-dir cannot be combined with --velero-namespace:" in result.output
    both = invoke_run(EXAMPLE, tmp_path / "out", "--context", "c", "-n", "web")
    assert "--from-dir cannot be combined with --context, -n:" in both.output
