"""The filled-in fix of a FAIL or ERROR finding (``FindingEntry.remediation``).

A FAIL gets its check's template from :data:`auditor.envelope.fixes.FAIL_FIXES`.
An ERROR (the auditor could not evaluate) gets what to export or grant so the
next run can see the input: a kind that could not be listed, objects partly
unread, a malformed field, or the check's own unknown (e.g. a bucket the
auditor may not read). PASS, NOT_APPLICABLE and WAIVED get none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.checks import CATALOG
from auditor.envelope.fixes import FAIL_FIXES, arm64_efi_fix
from auditor.envelope.fixfacts import FixFacts
from auditor.kinds import BY_KIND
from auditor.models import Finding, Status

__all__ = ["remediation_for", "unknown_fix"]


def _resource(kind: str) -> str:
    spec = BY_KIND.get(kind)
    if spec is None:
        return kind.lower() + "s"
    return f"{spec.plural}.{spec.group}" if spec.group else spec.plural


def _export(kinds: list[str]) -> str:
    resources = [_resource(k) for k in kinds]
    cmds = "; ".join(f"`oc get {r} -A -o yaml > export/{r.split('.')[0]}.yaml`" for r in resources)
    return (
        f"The auditor could not list {', '.join(kinds)}. Export it ({cmds}) or grant the "
        f"auditor's ServiceAccount get/list/watch on {', '.join(resources)} in its ClusterRole "
        "(`auditor preflight` checks the grants), then re-run."
    )


def _not_evidenced_fix(
    check_id: str, facts: FixFacts, ev: Mapping[str, Any], not_evidenced: list[str]
) -> str:
    """What shows whether the disks' data is in the Backup: the capture kinds not read, or,
    when all were read, Velero's per-volume listing of the Backup."""
    vm = f"VM {facts.namespace}/{facts.name}"
    if check_id == "RR-BKP-005":  # its not_evidenced are Backups, not PVCs
        what, backup = f"the disks of {vm}", not_evidenced[0]
        where = f" in backup(s) {', '.join(not_evidenced[:3])}{', ...' if len(not_evidenced) > 3 else ''}"
    else:
        what, backup = f"PVC(s) {', '.join(not_evidenced)} of {vm}", str(ev.get("backup") or "")
        where = ""
    backup = backup.rsplit("/", 1)[-1] or "BACKUP"
    unread = list(facts.unread_capture_kinds)
    if unread:
        plurals = {"DataUpload": "DataUploads", "PodVolumeBackup": "PodVolumeBackups"}
        cmds = []
        named = [_resource(k) for k in unread if k in plurals]
        if named:
            cmds.append(f"`oc get {','.join(named)} -n {facts.velero_ns} -o yaml`")
        if "VolumeSnapshotContent" in unread:
            cmds.append("`oc get volumesnapshotcontents -o yaml`")
        kinds = ", ".join(plurals.get(k, k + "s") for k in unread)
        return (
            f"Nothing shows whether {what} were captured{where}: export {kinds} "
            f"({'; '.join(cmds)}), or configure bucket reading (backup_storage in the config), "
            "then re-run."
        )
    return (
        f"Nothing read shows whether {what} were captured{where} (DataUploads, PodVolumeBackups "
        "and VolumeSnapshotContents were read). See which volumes failed: "
        f"`velero backup describe {backup} --details -n {facts.velero_ns}`."
    )


def _bkp012_unknown(facts: FixFacts, ev: Mapping[str, Any]) -> str:
    """RR-BKP-012 ERROR: objects the VM references whose labels the auditor does not read
    (Secrets above all), under a Backup that selects by label without the kubevirt plugin.

    Names the Schedule that made the Backup (evidence ``schedule``, else the first covering
    one) and the ``oc label`` that gives the objects the Schedule's ``matchLabels`` (or
    the Schedule's field when it has none): the fix said "the label selector of the Schedule
    covering the VM", naming neither (trial ux36). Velero takes an object under a label
    selector only when its own labels match
    (https://velero.io/docs/main/resource-filtering/#--selector).
    """
    unsure: dict[str, list[str]] = {}
    for r in ev.get("references") or []:
        if isinstance(r, Mapping) and r.get("state") == "unknown" and r.get("name"):
            unsure.setdefault(str(r.get("kind") or "object").lower(), []).append(str(r["name"]))
    named = "; ".join(f"{kind} {', '.join(names)}" for kind, names in unsure.items())
    named = named or "the objects the VM references"
    wanted = str(ev.get("schedule") or facts.schedule or "")
    labels = next((sel for _, name, sel in facts.schedules if name == wanted), ())
    sched = f"Schedule {wanted}" if wanted else "the Schedule covering the VM"
    if labels and unsure:
        pairs = " ".join(f"{k}={v}" for k, v in labels)
        cmds = "; ".join(
            f"`oc label {k} {' '.join(n)} -n {facts.namespace} {pairs}`" for k, n in unsure.items()
        )
        give = f"give {named} {sched}'s labels: {cmds}"
    else:
        give = f"give {named} the labels {sched} selects (spec.template.labelSelector)"
    return f"Enable the kubevirt Velero plugin, or {give}; then take a backup."


def unknown_fix(check_id: str, facts: FixFacts, ev: Mapping[str, Any]) -> str:
    """What to export, grant or repair so ``check_id`` can be evaluated next run."""
    unavailable = [str(k) for k in ev.get("unavailable_kinds") or []]
    if unavailable:
        return _export(unavailable)
    malformed = [m for m in ev.get("malformed_objects") or [] if isinstance(m, dict)]
    if malformed:
        m = malformed[0]
        kind, obj = str(m.get("kind")), str(m.get("object"))
        ns, _, name = obj.rpartition("/")
        where = f" -n {ns}" if ns else ""
        return (
            f"Repair field {m.get('field')} of {kind} {obj} ({m.get('reason')}): "
            f"`oc edit {_resource(kind)} {name}{where}`; the check re-runs on the next audit."
        )
    partial = [str(k) for k in ev.get("incomplete_kinds") or []]
    if partial:
        return (
            f"Some {', '.join(partial)} objects could not be read: fix what the report's "
            "collection problems name (file, object, field or a forbidden namespace), then re-run."
        )
    if "exception" in ev:
        return (
            f"{check_id} failed inside the auditor ({ev.get('exception')}): re-run with "
            "--log-level debug and report the traceback; nothing on the cluster to change."
        )
    if ev.get("location") or ev.get("locations") or ev.get("backups"):
        return (
            "The auditor could not read the backup bucket: give its bucket credentials read "
            "(s3:ListBucket, s3:GetObject, s3:GetBucketObjectLockConfiguration, "
            "s3:GetBucketVersioning) on the BackupStorageLocation's bucket and prefix, then re-run."
        )
    if check_id == "RR-PLT-006":
        return _export(["KubeVirt"])
    if check_id == "RR-FW-002" and ev.get("architecture") == "arm64":
        return arm64_efi_fix(facts)
    if check_id == "RR-BKP-012":
        return _bkp012_unknown(facts, ev)
    not_evidenced = [str(p) for p in ev.get("not_evidenced") or []]
    if not_evidenced:
        return _not_evidenced_fix(check_id, facts, ev, not_evidenced)
    spec = CATALOG.get(check_id)
    needs = list(spec.requires) if spec else []
    if needs:
        return (
            f"{check_id} lacked the input to decide ({spec.title if spec else ''}). Export "
            f"{', '.join(needs)} completely (or grant list on them) and re-run; "
            "the finding's message says what was missing."
        )
    return "Re-run once the input named in the finding's message is readable."


def remediation_for(finding: Finding, facts: FixFacts) -> str | None:
    """The filled fix of ``finding``: text for FAIL and ERROR, None otherwise.

    Raises nothing: a template that trips over odd evidence falls back to the
    check's catalog text with the VM named, never to no fix.
    """
    ev = finding.evidence if isinstance(finding.evidence, Mapping) else {}
    try:
        if finding.status is Status.ERROR:
            return unknown_fix(finding.check_id, facts, ev)
        if finding.status is Status.FAIL:
            template = FAIL_FIXES.get(finding.check_id)
            if template is not None:
                return template(facts, ev)
    except (TypeError, ValueError, AttributeError, IndexError, KeyError):
        pass
    else:
        if finding.status is not Status.FAIL:
            return None
    spec = CATALOG.get(finding.check_id)
    where = f"VM {facts.namespace}/{facts.name}: " if facts.name else ""
    return where + (spec.remediation if spec else "see the check's catalog entry")
