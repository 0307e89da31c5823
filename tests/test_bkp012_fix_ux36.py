"""RR-BKP-012 ERROR's fix names the Schedule, the labels it selects and the command that
gives them to the referenced objects (trial ux36: a backup owner read "label the Secret to
match the label selector of the Schedule covering the VM" and had to find both).
"""

from __future__ import annotations

from pathlib import Path

from tests.test_evidence_gaps import _complete, _docs, _finding, _of

FIXTURE = "RR-BKP-012/error-cloudinit-secret-label-selected-no-plugin.yaml"


def test_the_fix_names_the_schedule_its_labels_and_the_oc_label_command(tmp_path: Path) -> None:
    docs = _docs(FIXTURE)
    [schedule] = _of(docs, "Schedule")
    schedule["spec"]["template"]["labelSelector"] = {"matchLabels": {"app": "vm1"}}
    finding = _finding(_complete(tmp_path, FIXTURE, docs), "RR-BKP-012")
    assert finding["status"] == "ERROR"
    fix = finding["remediation"]
    assert fix == (
        "Enable the kubevirt Velero plugin, or give secret vm1-cloudinit Schedule daily's labels: "
        "`oc label secret vm1-cloudinit -n app app=vm1`; then take a backup."
    )


def test_without_match_labels_the_fix_points_at_the_schedules_selector(tmp_path: Path) -> None:
    """The fixture's Schedule selects nothing by label (its Backup did): no labels to name,
    so the fix names the Schedule's field instead of making up a command."""
    finding = _finding(_complete(tmp_path, FIXTURE, _docs(FIXTURE)), "RR-BKP-012")
    fix = finding["remediation"]
    assert finding["status"] == "ERROR"
    assert fix == (
        "Enable the kubevirt Velero plugin, or give secret vm1-cloudinit the labels Schedule "
        "daily selects (spec.template.labelSelector); then take a backup."
    )
    assert "oc label" not in fix
