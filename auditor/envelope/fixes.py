"""Fix templates for FAIL findings, one per check, filled with the VM's own values.

Each template is ``(facts, evidence) -> str``: a sentence saying what to change,
then ready-to-paste ``oc``/``virtctl``/``velero`` commands (always with ``-n``)
or the YAML field to set. ``oc patch -p`` takes YAML as well as JSON, so patches
are written in YAML flow style (``{spec: {...}}``): kubectl converts the patch
with ``yaml.ToJSON`` (kubernetes/kubectl pkg/cmd/patch/patch.go). Templates read
names from the finding's evidence and :class:`~auditor.envelope.fixfacts.FixFacts`;
they never read a VM spec, so no secret (cloud-init, sysprep) can reach the text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from auditor.envelope.fixfacts import FixFacts
from auditor.inventory.cdiadopt import POPULATED_FOR

__all__ = ["FAIL_FIXES", "Fix", "cron_for", "cron_max_gap_hours", "backup_now"]

#: A fix template: the VM's (or platform's) facts and the finding's evidence -> text.
Fix = Callable[[FixFacts, Mapping[str, Any]], str]


def _names(value: Any) -> list[str]:
    """Strings of a list evidence value (other items skipped)."""
    return [str(v) for v in value] if isinstance(value, list) else []


def _short(ref: Any) -> str:
    """``name`` of a ``namespace/name`` reference."""
    return str(ref).rsplit("/", 1)[-1]


def cron_for(rpo_hours: float) -> str:
    """A cron expression running at least once per RPO (daily at 01:00 for 24 h and more)."""
    if rpo_hours >= 24:
        return "0 1 * * *"
    step = max(1, int(rpo_hours))
    return f"0 */{step} * * *"


#: Names robfig/cron (Velero's Schedule parser) accepts in the month and day-of-week fields.
_CRON_NAMES = {
    **{
        m: i + 1
        for i, m in enumerate(
            ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        )
    },
    **{d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])},
}
#: robfig/cron's descriptors, as the longest gap (hours) between two runs.
_CRON_DESCRIPTORS = {
    "@yearly": 8784.0,
    "@annually": 8784.0,
    "@monthly": 744.0,
    "@weekly": 168.0,
    "@daily": 24.0,
    "@midnight": 24.0,
    "@hourly": 1.0,
}


def _cron_field(text: str, low: int, high: int) -> set[int] | None:
    """The values of one cron field (``*``, ``?``, lists, ranges, steps, names), or None."""
    values: set[int] = set()
    for part in text.lower().split(","):
        rng, _, step_text = part.partition("/")
        try:
            step = int(step_text) if step_text else 1
            if rng in ("*", "?"):
                first, last = low, high
            else:
                a, _, b = rng.partition("-")
                first = _CRON_NAMES[a] if a in _CRON_NAMES else int(a)
                last = (_CRON_NAMES[b] if b in _CRON_NAMES else int(b)) if b else first
                if step_text and not b:
                    last = high
        except (KeyError, ValueError):
            return None
        if step < 1 or not low <= first <= last <= high + (1 if high == 6 else 0):
            return None
        values.update(v % 7 if high == 6 else v for v in range(first, last + 1, step))
    return values


@functools.lru_cache(maxsize=256)
def cron_max_gap_hours(expr: str | None) -> float | None:
    """The longest time (hours) between two runs of a Velero Schedule's cron (robfig/cron's
    standard parser: five fields, descriptors, ``@every``), or None when it cannot be read."""
    if not expr:
        return None
    parts = expr.split()
    if parts and parts[0].startswith(("CRON_TZ=", "TZ=")):
        parts = parts[1:]
    if len(parts) == 2 and parts[0] == "@every":
        m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", parts[1])
        if not m or not any(m.groups()):
            return None
        h, mi, sec = (int(g or 0) for g in m.groups())
        return h + mi / 60 + sec / 3600 or None
    if len(parts) == 1:
        return _CRON_DESCRIPTORS.get(parts[0].lower())
    if len(parts) != 5:
        return None
    bounds = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 6))
    sets = [_cron_field(p, lo, hi) for p, (lo, hi) in zip(parts, bounds, strict=True)]
    if any(x is None for x in sets):
        return None
    minutes, hours, doms, months, dows = (x or set() for x in sets)
    either = not parts[2].startswith(("*", "?")) and not parts[4].startswith(("*", "?"))
    fires: list[datetime] = []
    day = datetime(2025, 1, 1)
    for _ in range(3 * 366):
        dom_ok, dow_ok = day.day in doms, (day.weekday() + 1) % 7 in dows
        if day.month in months and ((dom_ok or dow_ok) if either else (dom_ok and dow_ok)):
            fires += [
                day + timedelta(hours=h, minutes=m) for h in sorted(hours) for m in sorted(minutes)
            ]
        day += timedelta(days=1)
    if len(fires) < 2:
        return None
    gaps = (b - a for a, b in zip(fires, fires[1:], strict=False))
    return max(gaps).total_seconds() / 3600


def _vm(f: FixFacts) -> str:
    return f"VM {f.namespace}/{f.name}"


def _velero(f: FixFacts, args: str) -> str:
    return f"`velero {args} -n {f.velero_ns}`"


def backup_now(f: FixFacts) -> str:
    """Commands that capture the VM now and keep capturing it within the RPO."""
    if f.schedule:
        return (
            f"Take a backup of {_vm(f)} now from Schedule {f.schedule}: "
            + _velero(f, f"backup create {f.name}-now --from-schedule {f.schedule}")
            + "."
        )
    return (
        f"No Schedule covers {_vm(f)}. Back it up now: "
        + _velero(f, f"backup create {f.name}-now --include-namespaces {f.namespace}")
        + f", then schedule it within the RPO ({f.rpo_hours:g} h): "
        + _velero(
            f,
            f"schedule create {f.namespace}-vms --schedule '{cron_for(f.rpo_hours)}' "
            f"--include-namespaces {f.namespace} --ttl 720h0m0s",
        )
        + "."
    )


def _label_pvcs(f: FixFacts, pvcs: list[str]) -> str:
    if not pvcs:
        return ""
    if f.selector:
        labels = " ".join(f"{k}={v}" for k, v in f.selector)
        return (
            f" Give PVC(s) {', '.join(pvcs)} Schedule {f.schedule}'s labels: "
            f"`oc label pvc {' '.join(pvcs)} -n {f.namespace} {labels}`."
        )
    return (
        f" Make sure PVC(s) {', '.join(pvcs)} are in the backup's scope "
        f"(`oc get pvc {' '.join(pvcs)} -n {f.namespace} --show-labels`)."
    )


def _bkp001(f: FixFacts, ev: Mapping[str, Any]) -> str:
    why = [str(u.get("why")) for u in ev.get("unusable") or [] if isinstance(u, dict)]
    if ev.get("object_only"):
        missing = _names(ev.get("missing_pvcs"))
        return (
            f"The definition of {_vm(f)} is backed up but the data of {', '.join(missing)} "
            "is not."
            + _label_pvcs(f, missing)
            + " "
            + backup_now(f)
            + " Check it captured the disks: "
            + _velero(f, f"backup describe {f.name}-now --details")
            + "."
        )
    rows = [u for u in ev.get("unusable") or [] if isinstance(u, dict)]
    bad = next((u for u in rows if u.get("cause") == "location"), None)
    if bad is not None:
        loc = str(bad.get("location") or f.storage_location or "LOCATION")
        fix = (
            f"create it or point the Schedule's spec.template.storageLocation at one that "
            f"exists (`oc get backupstoragelocation -n {f.velero_ns}`)"
            if bad.get("location_phase") == "missing"
            else f"`oc describe backupstoragelocation {_short(loc)} -n {f.velero_ns}`"
        )
        return (
            f"{_vm(f)} was backed up ({bad.get('backup')}), but BackupStorageLocation {loc} "
            f"is {bad.get('location_phase') or 'not Available'}: fix it first (RR-PLT-001; a "
            f"new backup goes there too): {fix}. Then "
            + backup_now(f)[0].lower()
            + backup_now(f)[1:]
        )
    cut = next((u for u in rows if u.get("cause") == "filter" and u.get("schedule")), None)
    if cut is not None:
        sched = str(cut.get("schedule"))
        return (
            f"Schedule {sched}'s filters leave out {_vm(f)} (backup {cut.get('backup')}); a "
            f"new backup from it would too. Fix them: `oc edit schedule {sched} -n "
            f"{f.velero_ns}`: drop virtualmachines from spec.template.excludedResources "
            "and make labelSelector match the VM. Then "
            + _velero(f, f"backup create {f.name}-now --from-schedule {sched}")
            + "."
        )
    gone = next((u for u in rows if u.get("cause") == "expired"), None)
    if gone is not None and len(why) == sum(u.get("cause") == "expired" for u in rows):
        sched = f.schedule or "SCHEDULE"
        return (
            f"The backups of {_vm(f)} expired ({why[0]}) and no newer one is usable. "
            + backup_now(f)
            + f" Keep backups longer than the Schedule's interval: `oc get schedule {sched} "
            f"-n {f.velero_ns} -o yaml` (spec.template.ttl)."
        )
    head = f"{_vm(f)} has never been in a usable backup"
    if rows:
        head = f"{_vm(f)} is in no usable backup"
    if why:
        head += f" ({why[0]}{'; ...' if len(why) > 1 else ''})"
    return head + ". " + backup_now(f)


def _bkp002(f: FixFacts, ev: Mapping[str, Any]) -> str:
    paused = [
        _short(s.get("schedule"))
        for s in ev.get("schedules") or []
        if isinstance(s, dict) and s.get("paused")
    ]
    if paused:
        return (
            f"Schedule {paused[0]} covering {_vm(f)} is paused: "
            + _velero(f, f"schedule unpause {paused[0]}")
            + ", then "
            + _velero(f, f"backup create {f.name}-now --from-schedule {paused[0]}")
            + "."
        )
    rows = [s for s in ev.get("schedules") or [] if isinstance(s, dict)]
    own = next((s for s in rows if _short(s.get("schedule")) == f.schedule), None)
    gap = cron_max_gap_hours(own.get("cron")) if own is not None else None
    if ev.get("backup") and f.schedule and gap is not None and gap <= f.rpo_hours:
        sched = f.schedule
        return (
            f"Schedule {sched} (cron '{own.get('cron') if own else ''}') runs often enough for the "
            f"RPO ({f.rpo_hours:g} h), but its backups of {_vm(f)} have not been completing. "
            "Check it is Enabled and not paused: "
            + _velero(f, f"schedule describe {sched}")
            + "; and its last backups' phase: "
            + _velero(f, f"backup get -l velero.io/schedule-name={sched}")
            + ". "
            + backup_now(f)
        )
    if ev.get("backup") and f.schedule:
        return (
            f"The newest usable backup of {_vm(f)} is older than the RPO ({f.rpo_hours:g} h). "
            f"Run Schedule {f.schedule} at least once per RPO: `oc patch schedule {f.schedule} "
            f"-n {f.velero_ns} --type merge -p '{{spec: {{schedule: \"{cron_for(f.rpo_hours)}\"}}}}'`"
            f" and check why its last runs failed: "
            + _velero(f, "backup get")
            + ". "
            + backup_now(f)
        )
    return backup_now(f)


def _bkp013(f: FixFacts, ev: Mapping[str, Any]) -> str:
    by = ev.get("excluded_by")
    if isinstance(by, dict):
        return (
            f"Namespace {f.namespace} carries velero.io/exclude-from-backup=true, so no Backup "
            f"from now on holds {_vm(f)}. If it must stay protected, remove the label: "
            f"`oc label namespace {f.namespace} velero.io/exclude-from-backup-`; then "
            + _velero(f, f"backup create {f.name}-now --include-namespaces {f.namespace}")
            + "."
        )
    rows = [r for r in ev.get("schedules") or [] if isinstance(r, dict)]
    row = rows[0] if rows else {}
    ref = str(row.get("schedule") or f"{f.velero_ns}/SCHEDULE")
    ns, _, name = ref.rpartition("/")
    if row.get("filter") == "gone":
        return (
            f"Schedule {ref}, which made the backups of {_vm(f)}, no longer exists: cover it "
            "with a Schedule again: "
            + _velero(
                f,
                f"schedule create {f.namespace}-daily --schedule '{cron_for(f.rpo_hours)}' "
                f"--include-namespaces {f.namespace}",
            )
            + "."
        )
    why = str(row.get("why") or "")
    if "is paused" in why:
        return (
            f"Schedule {ref} covering {_vm(f)} is paused: "
            + _velero(f, f"schedule unpause {name}")
            + "."
        )
    if why.startswith("ControllerRevision ") and "metadata.deletionTimestamp" in why:
        # no template change brings back an object being deleted: Velero skips it (rt37)
        return (
            f"Schedule {ref} covers {_vm(f)}, but {why}. Keep the Backups taken before its "
            "deletion began, and once it is gone restore it from one of them before the VM "
            "next starts."
        )
    if "BackupStorageLocation" in why:
        return (
            f"Schedule {ref} covers {_vm(f)}, but {why}. Make that location Available "
            f"(`oc get backupstoragelocations -n {ns or f.velero_ns}`) or point the Schedule's "
            f"spec.template.storageLocation at an Available one: "
            f"`oc edit schedule {name} -n {ns or f.velero_ns}`."
        )
    what = {
        "namespaces": f"includedNamespaces takes {f.namespace} and excludedNamespaces does not",
        "resources": "includedResources/excludedResources take virtualmachines",
        "labels": f"labelSelector/orLabelSelectors match the labels of {_vm(f)}",
    }.get(str(row.get("filter")), f"its next backup holds {_vm(f)} and its disk data")
    return (
        f"Schedule {ref} covers {_vm(f)}, but {row.get('why')}. Edit its spec.template so "
        f"that {what}: `oc edit schedule {name} -n {ns or f.velero_ns}`."
    )


def _bkp003(f: FixFacts, ev: Mapping[str, Any]) -> str:
    name = _short(ev.get("backup") or "BACKUP")
    failed = _names(ev.get("failed_pvcs"))
    text = (
        f"Backup {name} ({ev.get('phase') or 'not completed'}) of {_vm(f)}: read why with "
        + _velero(f, f"backup describe {name} --details")
        + " and "
        + _velero(f, f"backup logs {name}")
        + "."
    )
    if ev.get("phase") == "FailedValidation":
        loc = ev.get("storage_location") or f.storage_location or "default"
        text += (
            f" FailedValidation usually names a missing or unavailable BackupStorageLocation: "
            f"`oc get backupstoragelocation {loc} -n {f.velero_ns}`."
        )
    if failed:
        text += f" PVC(s) {', '.join(failed)} were not captured."
    return text + " " + backup_now(f)


def _bkp004(f: FixFacts, ev: Mapping[str, Any]) -> str:
    missing = _names(ev.get("missing_pvcs"))
    backup = _short(ev.get("backup") or "")
    text = (
        f"Backup {backup} of {_vm(f)} lacks PVC(s) {', '.join(missing) or '-'}."
        if backup
        else f"No usable backup holds PVC(s) {', '.join(missing) or '-'} of {_vm(f)}."
    )
    rows = ev.get("pvcs")
    refused = _cdi_refused(rows)
    unlabelled = [p for p in missing if p not in refused]
    text += _label_pvcs(f, unlabelled)
    if refused:
        text += (
            f" DataVolume(s) {', '.join(refused)} come back as strangers to their restored "
            "PVCs: add kubevirt to the DataProtectionApplication's spec.configuration.velero."
            "defaultPlugins (it marks them populated), or annotate each DataVolume "
            f"`oc annotate dv {' '.join(refused)} -n {f.namespace} "
            "cdi.kubevirt.io/allowClaimAdoption=true`."
        )
    if isinstance(rows, list) and any(
        isinstance(r, dict) and r.get("method") == "fs-backup" and r.get("status") == "failed"
        for r in rows
    ):
        sched = _short(f.schedule or "SCHEDULE")
        text += (
            " The kubevirt plugin skips the virt-launcher pod on restore, so Velero never "
            "restores a file-system backup of its disks: copy them with CSI snapshots and the "
            f"data mover instead: `oc patch schedule {sched} -n {f.velero_ns} --type merge -p "
            "'{spec: {template: {defaultVolumesToFsBackup: false, snapshotMoveData: true}}}'`."
        )
    if any(p.startswith("persistent-state-for-") for p in missing) and not f.kubevirt_plugin:
        text += (
            " The persistent-state PVC is added to backups by the kubevirt Velero plugin: add "
            "kubevirt to the DataProtectionApplication's spec.configuration.velero.defaultPlugins."
        )
    return text + " " + backup_now(f)


def _cdi_refused(rows: object) -> list[str]:
    """The PVCs among RR-BKP-004's capture ``rows`` whose DataVolume CDI would refuse after a
    restore without the kubevirt plugin (auditor.inventory.cdiadopt names the unmarked PVC in
    the row's proof)."""
    if not isinstance(rows, list):
        return []
    return [
        str(r.get("pvc"))
        for r in rows
        if isinstance(r, dict)
        and r.get("status") != "captured"
        and any(f"no {POPULATED_FOR}=" in str(p) for p in r.get("proof") or [])
    ]


def _bkp005(f: FixFacts, ev: Mapping[str, Any]) -> str:
    missing = _names(ev.get("missing_pvcs"))
    if missing:
        return (
            f"{_vm(f)} has {ev.get('usable_backups')} usable backup(s) but "
            f"{ev.get('restore_points')} hold all its disks (RR-BKP-004): a longer TTL adds "
            "none." + _label_pvcs(f, missing) + " " + backup_now(f)
        )
    return (
        f"{_vm(f)} has {ev.get('restore_points')} usable backup(s); the policy wants "
        f"{ev.get('min_restore_points')}. Keep backups longer on Schedule "
        f"{f.schedule or 'SCHEDULE'}: `oc patch schedule {f.schedule or 'SCHEDULE'} "
        f"-n {f.velero_ns} --type merge -p '{{spec: {{template: {{ttl: 720h0m0s}}}}}}'`."
    )


def _bkp006(f: FixFacts, ev: Mapping[str, Any]) -> str:
    hours = float(ev.get("min_retention_hours") or 720)
    sched = _short(ev.get("schedule") or f.schedule or "SCHEDULE")
    return (
        f"Backups of {_vm(f)} are kept {ev.get('retention_hours')} h, less than {hours:g} h: "
        f"`oc patch schedule {sched} -n {f.velero_ns} --type merge "
        f"-p '{{spec: {{template: {{ttl: {int(hours)}h0m0s}}}}}}'`."
    )


def _bkp007(f: FixFacts, ev: Mapping[str, Any]) -> str:
    sched = _short(ev.get("schedule") or f.schedule or "SCHEDULE")
    if ev.get("endpoint_host"):
        location = str(ev.get("location") or "LOCATION")
        ns, _, name = location.partition("/")
        return (
            f"BackupStorageLocation {location} keeps {_vm(f)}'s copies on {ev['endpoint_host']}, "
            "inside this cluster. Point it (or a new location the Schedule uses) at object "
            "storage outside the cluster: "
            f"`oc get backupstoragelocation {_short(name)} -n {_short(ns)} -o yaml`, then set "
            "spec.config.s3Url (on OADP, in the DPA's backupLocations)."
        )
    pvcs = ", ".join(_names(ev.get("in_cluster_pvcs"))) or "the disks"
    return (
        f"Only in-cluster snapshots hold {pvcs} of {_vm(f)}. Move the data to object storage: "
        f"`oc patch schedule {sched} -n {f.velero_ns} --type merge "
        f"-p '{{spec: {{template: {{snapshotMoveData: true}}}}}}'`."
    )


def _bkp008(f: FixFacts, ev: Mapping[str, Any]) -> str:
    missing = _names(ev.get("missing"))
    return (
        f"Backup {ev.get('backup')} of {_vm(f)} lacks {', '.join(missing) or 'objects'}. Widen "
        f"Schedule {f.schedule or 'SCHEDULE'}'s includedResources/labelSelector to take them "
        f"(`oc get schedule {f.schedule or 'SCHEDULE'} -n {f.velero_ns} -o yaml`), or enable the "
        "kubevirt Velero plugin. " + backup_now(f)
    )


def _bkp009(f: FixFacts, ev: Mapping[str, Any]) -> str:
    fields = [
        str(d.get("field")) for d in ev.get("drift") or [] if isinstance(d, dict) and d.get("field")
    ]
    return (
        f"{_vm(f)} changed since backup {ev.get('backup')} ({', '.join(fields) or 'identity'}). "
        + backup_now(f)
    )


def _bkp010(f: FixFacts, ev: Mapping[str, Any]) -> str:
    gone = [
        str(b.get("backup"))
        for b in ev.get("backups") or []
        if isinstance(b, dict) and b.get("state") == "missing"
    ]
    return (
        f"Backup(s) {', '.join(gone) or '-'} of {_vm(f)} have no objects in the bucket: check the "
        "bucket's lifecycle rules (no expiry shorter than the Velero TTL), delete the stale "
        "Backup(s) ("
        + _velero(f, f"backup delete {gone[0] if gone else 'NAME'} --confirm")
        + "), then "
        + backup_now(f)[0].lower()
        + backup_now(f)[1:]
    )


def _bkp011(f: FixFacts, ev: Mapping[str, Any]) -> str:
    if ev.get("agent_connected") is True and ev.get("backup"):
        backup = _short(str(ev.get("backup")))
        return (
            f"Read why a hook failed in backup {backup}: `velero backup logs {backup} -n "
            f"{f.velero_ns} | grep -i hook` (virt-freezer on the virt-launcher pod of {_vm(f)}: "
            "a paused VM or a guest agent that stopped answering) and fix it. " + backup_now(f)
        )
    return (
        f"Install and start qemu-guest-agent inside {_vm(f)}, then check "
        f"`oc get vmi {f.name} -n {f.namespace} -o jsonpath='{{.status.conditions}}'` "
        "shows AgentConnected."
    )


def _bkp012(f: FixFacts, ev: Mapping[str, Any]) -> str:
    deleting = [
        str(r.get("name"))
        for r in ev.get("references") or []
        if isinstance(r, dict)
        and r.get("state") == "dropped"
        and "metadata.deletionTimestamp" in str(r.get("reason"))
    ]
    if deleting:
        # no filter change brings back an object being deleted: Velero skips it (rt37)
        return (
            f"{', '.join(deleting)}, which {_vm(f)} references, is being deleted and Velero "
            f"skips it: see what holds it (`oc get controllerrevision {deleting[0]} -n "
            f"{f.namespace} -o yaml`, metadata.finalizers); once it is gone, restore it from "
            "a Backup taken before its deletion began. " + backup_now(f)
        )
    dropped = _names(ev.get("filtered_out"))
    sched = _short(ev.get("schedule") or f.schedule or "SCHEDULE")
    kinds = sorted({d.split(" ", 1)[0].lower() + "s" for d in dropped}) or ["secrets", "configmaps"]
    return (
        f"Backup {_short(ev.get('backup') or '')} of {_vm(f)} drops {', '.join(dropped) or '-'} "
        f"(names only; values are never read). Let Schedule {sched} take {', '.join(kinds)}: "
        f"`oc edit schedule {sched} -n {f.velero_ns}`, remove them from "
        "spec.template.excludedResources (or add them to includedResources). " + backup_now(f)
    )


def _dsk001(f: FixFacts, ev: Mapping[str, Any]) -> str:
    disks = [str(d.get("disk")) for d in ev.get("bootable_disks") or [] if isinstance(d, dict)] or [
        "BOOTDISK"
    ]
    return (
        f"Set bootOrder: 1 on the boot disk of {_vm(f)}: `oc edit vm {f.name} -n {f.namespace}`, "
        f"field spec.template.spec.domain.devices.disks[name={disks[0]}].bootOrder: 1 "
        f"(and 2, 3... on {', '.join(disks[1:]) or 'the other disks'})."
    )


def _dsk002(f: FixFacts, ev: Mapping[str, Any]) -> str:
    vols = _names(ev.get("runtime_only_volumes")) or ["VOLUME"]
    return (
        "; ".join(
            f"`virtctl addvolume {f.name} -n {f.namespace} --volume-name={v} --persist`"
            for v in vols
        )
        + f" (makes the hotplugged volume(s) part of {_vm(f)}'s spec)."
    )


def _dsk003(f: FixFacts, ev: Mapping[str, Any]) -> str:
    machine = ev.get("machine_type")
    others = [ev.get(k) for k in ("disks", "nics", "boot_disk", "bootloader", "restart_required")]
    if isinstance(machine, dict) and machine.get("cluster_default") and not any(others):
        # the spec names no machine type: pin the one the guest runs on (the restore would
        # take the cluster's default)
        return (
            f"Pin the machine type {_vm(f)} runs on in its spec: `oc patch vm {f.name} -n "
            f"{f.namespace} --type merge -p '{{spec: {{template: {{spec: {{domain: {{machine: "
            f"{{type: {machine.get('running')}}}}}}}}}}}}}'` (the guest sees no change)."
        )
    changed = [
        f"disk {d.get('disk')} ({d.get('running')} -> {d.get('spec')})"
        for d in ev.get("disks") or []
        if isinstance(d, dict)
    ] + [
        f"interface {n.get('nic')} ({n.get('running')} -> {n.get('spec')})"
        for n in ev.get("nics") or []
        if isinstance(n, dict)
    ]
    for key, what in (
        ("boot_disk", "boot disk"),
        ("machine_type", "machine type"),
        ("bootloader", "firmware"),
    ):
        change = ev.get(key)
        if isinstance(change, dict):
            to = change.get("spec") or change.get("cluster_default")
            changed.append(f"{what} ({change.get('running')} -> {to})")
    return (
        f"Either restart {_vm(f)} in a window (`virtctl restart {f.name} -n {f.namespace}`) "
        f"and check the guest boots and keeps its network on {', '.join(changed) or 'the new hardware'}, "
        "then take a backup; or set those fields in the VM spec back to the running ones."
    )


def _fw001(f: FixFacts, ev: Mapping[str, Any]) -> str:
    uuid = f.running_uuid or ev.get("vmi_runtime_uuid") or ev.get("name_derived_uuid")
    source = (
        "runs with" if f.running_uuid or ev.get("vmi_runtime_uuid") else "derives from its name"
    )
    serial = f.running_serial or f.spec_serial
    patch = f"firmware: {{uuid: {uuid}" + (f", serial: {serial}" if serial else "") + "}"
    return (
        f"Pin the UUID {_vm(f)} {source} ({uuid}): `oc patch vm {f.name} -n {f.namespace} "
        f"--type merge -p '{{spec: {{template: {{spec: {{domain: {{{patch}}}}}}}}}}}'` "
        "(YAML field spec.template.spec.domain.firmware.uuid; the guest sees no change)."
    )


def arm64_efi_fix(f: FixFacts) -> str:
    """The fix for an arm64 VM KubeVirt gives no firmware it can boot (BIOS, or an empty
    bootloader): its own EFI bootloader, which also overrides its preference's."""
    return (
        f"Give {_vm(f)} an EFI bootloader (arm64 boots only UEFI; the VM's own bootloader "
        f"overrides its preference's): `oc patch vm {f.name} -n {f.namespace} --type merge -p "
        "'{spec: {template: {spec: {domain: {firmware: {bootloader: {bios: null, efi: "
        "{persistent: true}}}}}}}}'`, then include the "
        f"persistent-state-for-{f.name} PVC in backups."
    )


def _fw002(f: FixFacts, ev: Mapping[str, Any]) -> str:
    if ev.get("architecture") == "arm64" and ev.get("bootloader") != "efi":
        return arm64_efi_fix(f)
    fields = []
    if ev.get("efi_persistent") is False:
        fields.append("efi: {persistent: true}")
    tpm = "devices: {tpm: {persistent: true}}" if ev.get("tpm_persistent") is False else ""
    boot = f"firmware: {{bootloader: {{{fields[0]}}}}}" if fields else ""
    domain = (
        ", ".join(x for x in (boot, tpm) if x)
        or "firmware: {bootloader: {efi: {persistent: true}}}"
    )
    return (
        f"Make {_vm(f)}'s EFI/TPM state persistent (needs the VMPersistentState feature and "
        f"spec.configuration.vmStateStorageClass): `oc patch vm {f.name} -n {f.namespace} "
        f"--type merge -p '{{spec: {{template: {{spec: {{domain: {{{domain}}}}}}}}}}}'`, restart "
        f"it (`virtctl restart {f.name} -n {f.namespace}`), then include the "
        f"persistent-state-for-{f.name} PVC in backups."
    )


def _fw003(f: FixFacts, ev: Mapping[str, Any]) -> str:
    others = sorted(
        {
            str(o.get("vm"))
            for d in ev.get("duplicates") or []
            if isinstance(d, dict)
            for o in d.get("others") or []
            if isinstance(o, dict)
        }
    )
    return (
        f"{_vm(f)} shares its firmware identity with {', '.join(others) or 'another VM'}. Keep "
        f"the original's; give the copy a new UUID (`oc patch vm NAME -n NAMESPACE --type merge "
        f"-p '{{spec: {{template: {{spec: {{domain: {{firmware: {{uuid: NEW-UUID}}}}}}}}}}}}'`), or "
        "delete the stale copy; restore drills with velero.kubevirt.io/generate-new-firmware-uuid."
    )


def _net001(f: FixFacts, ev: Mapping[str, Any]) -> str:
    nads = _names(ev.get("missing_nads")) or ["NAMESPACE/NAD"]
    ns, _, nad = nads[0].rpartition("/")
    deleting = ev.get("deleting_nads")
    if not _names(ev.get("missing_nads")) and isinstance(deleting, dict) and deleting:
        ns, _, nad = str(next(iter(deleting))).rpartition("/")
        return (
            f"NetworkAttachmentDefinition {ns}/{nad} used by {_vm(f)} is being deleted: "
            f"recreate it from GitOps once it is gone (`oc apply -n {ns} -f {nad}-nad.yaml`), "
            f"or point the VM's network at another one (`oc edit vm {f.name} -n {f.namespace}`, "
            "field spec.template.spec.networks[].multus.networkName)."
        )
    return (
        f"Recreate NetworkAttachmentDefinition {nads[0]} used by {_vm(f)} "
        f"(`oc apply -n {ns or f.namespace} -f {nad}-nad.yaml` from GitOps), or point the VM's "
        f"network at an existing one (`oc edit vm {f.name} -n {f.namespace}`, field "
        "spec.template.spec.networks[].multus.networkName)."
    )


def _def001(f: FixFacts, ev: Mapping[str, Any]) -> str:
    missing = _names(ev.get("missing")) or ["KIND/NAME"]
    return (
        f"Recreate {', '.join(missing)} used by {_vm(f)} (from GitOps or the "
        "common-instancetypes bundle), or restore the ControllerRevision the VM is pinned to "
        f"(`oc get vm {f.name} -n {f.namespace} -o yaml`, fields spec.instancetype and "
        "spec.preference), and include them in its backups."
    )


def _net002(f: FixFacts, ev: Mapping[str, Any]) -> str:
    nads = sorted(
        {str(g.get("nad")) for g in ev.get("gaps") or [] if isinstance(g, dict) and g.get("nad")}
    )
    return (
        f"NAD(s) {', '.join(nads) or '-'} of {_vm(f)} are not in its backups (outside their "
        "scope, or created after they began): add "
        f"network-attachment-definitions to Schedule {f.schedule or 'SCHEDULE'}'s scope (back up "
        f"namespace {f.namespace} whole, or `oc label network-attachment-definitions NAME "
        f"-n {f.namespace} KEY=VALUE` with its selector), or keep them in GitOps."
    )


def _net003(f: FixFacts, ev: Mapping[str, Any]) -> str:
    outside = _names(ev.get("outside"))
    services = [o.split(" ", 1)[1] for o in outside if o.startswith("Service ")]
    labels = " ".join(f"{k}={v}" for k, v in f.selector)
    cmd = (
        f" `oc label service {' '.join(services)} -n {f.namespace} {labels}`."
        if services and labels
        else ""
    )
    return (
        f"{', '.join(outside)} naming {_vm(f)} are outside backup {ev.get('backup')}: include "
        f"services (and routes) in Schedule {f.schedule or 'SCHEDULE'}'s scope.{cmd}"
    )


def _nic001(f: FixFacts, ev: Mapping[str, Any]) -> str:
    nics = _names(ev.get("unpinned")) or _names(ev.get("mismatched")) or ["NIC"]
    return (
        f"Pin the MAC of interface(s) {', '.join(nics)} of {_vm(f)}: read the running ones "
        f"(`oc get vmi {f.name} -n {f.namespace} -o jsonpath="
        "'{range .status.interfaces[*]}{.name}={.mac} {end}'`) and set "
        "spec.template.spec.domain.devices.interfaces[].macAddress to them "
        f"(`oc edit vm {f.name} -n {f.namespace}`)."
    )


def _nic002(f: FixFacts, ev: Mapping[str, Any]) -> str:
    dupes = [
        (
            str(d.get("value")),
            [str(o.get("vm")) for o in d.get("others") or [] if isinstance(o, dict)],
        )
        for d in ev.get("duplicates") or []
        if isinstance(d, dict)
    ]
    text = "; ".join(f"MAC {mac} also on {', '.join(o)}" for mac, o in dupes) or "a MAC is shared"
    return (
        f"{_vm(f)}: {text}. Keep the original's MAC; clear the copy's "
        "(spec.template.spec.domain.devices.interfaces[].macAddress, `oc edit vm NAME -n NAMESPACE`) "
        "and restore drills with velero.kubevirt.io/clear-mac-address: 'true'."
    )


def _rst001(f: FixFacts, ev: Mapping[str, Any]) -> str:
    backup = ev.get("backup")
    source = f"--from-backup {backup}" if backup else f"--from-schedule {f.schedule or 'SCHEDULE'}"
    return (
        f"Run a restore drill of {_vm(f)} into a drill namespace and boot it: "
        + _velero(
            f,
            f"restore create {f.name}-drill {source} --include-namespaces {f.namespace} "
            f"--namespace-mappings {f.namespace}:{f.namespace}-drill --restore-volumes=true",
        )
        + f", then `virtctl start {f.name} -n {f.namespace}-drill`; repeat every "
        f"{f.restore_test_days:g} days."
    )


def _rst002(f: FixFacts, ev: Mapping[str, Any]) -> str:
    restore = _short(ev.get("restore") or "RESTORE")
    if ev.get("beside_original"):
        return (
            f"Restore {restore} put a copy of {_vm(f)} beside the original with its MACs and "
            "UUID: delete the copy or give it a new identity, and label future drills "
            "velero.kubevirt.io/clear-mac-address: 'true' and "
            "velero.kubevirt.io/generate-new-firmware-uuid: 'true' (kubevirt Velero plugin)."
        )
    return (
        f"Restore {restore} of {_vm(f)} in place changed its identity: never label a "
        "disaster-recovery restore with velero.kubevirt.io/generate-new-firmware-uuid or "
        f"clear-mac-address; re-pin the original UUID and MACs (`oc edit vm {f.name} "
        f"-n {f.namespace}`)."
    )


def _stg001(f: FixFacts, ev: Mapping[str, Any]) -> str:
    pvcs = _names(ev.get("unprotected")) or list(f.pvcs)
    return (
        f"Disk(s) {', '.join(pvcs)} of {_vm(f)} are on Delete-reclaim storage with no copy. "
        + backup_now(f)
        + f" Meanwhile keep the volumes: `oc patch pv $(oc get pvc {pvcs[0] if pvcs else 'PVC'} "
        f"-n {f.namespace} -o jsonpath='{{.spec.volumeName}}') --type merge "
        "-p '{spec: {persistentVolumeReclaimPolicy: Retain}}'`."
    )


def _stg002(f: FixFacts, ev: Mapping[str, Any]) -> str:
    return (
        f"{_vm(f)} is ephemeral ({', '.join(_names(ev.get('volume_types')))}): nothing to do if "
        "intended; otherwise move its state to a DataVolume-backed disk."
    )


def _stg003(f: FixFacts, ev: Mapping[str, Any]) -> str:
    bad = [
        p
        for p in ev.get("pvcs") or []
        if isinstance(p, dict) and p.get("verdict") not in ("ok", "exists", None)
    ]
    classes = sorted({str(p.get("restore_class")) for p in bad})
    return (
        f"PVC(s) {', '.join(str(p.get('pvc')) for p in bad) or '-'} of {_vm(f)} need StorageClass "
        f"{', '.join(classes) or '-'}, which a restore cannot use. Recreate it, or map it in a "
        f"ConfigMap in {f.velero_ns} labelled velero.io/change-storage-class=RestoreItemAction "
        f"(`oc create configmap change-storage-class -n {f.velero_ns} "
        f"--from-literal={classes[0] if classes else 'OLD'}=NEW-CLASS` then `oc label configmap "
        f"change-storage-class -n {f.velero_ns} velero.io/plugin-config="
        "velero.io/change-storage-class=RestoreItemAction`)."
    )


def _plt001(f: FixFacts, ev: Mapping[str, Any]) -> str:
    bad = [
        str(loc.get("bsl"))
        for loc in ev.get("locations") or []
        if isinstance(loc, dict) and loc.get("phase") != "Available"
    ]
    name = _short(bad[0]) if bad else "NAME"
    return (
        f"BackupStorageLocation {', '.join(bad) or '(none)'} is not Available: "
        f"`oc describe backupstoragelocation {name} -n {f.velero_ns}` names the error "
        "(credentials Secret, bucket, endpoint); fix it in the DataProtectionApplication's "
        f"spec.backupLocations (`oc edit dataprotectionapplication -n {f.velero_ns}`)."
    )


def _plt002(f: FixFacts, ev: Mapping[str, Any]) -> str:
    rows = [s for s in ev.get("schedules") or [] if isinstance(s, dict)]
    paused = [_short(s.get("schedule")) for s in rows if s.get("paused")]
    frozen = sorted({str(s["read_only_location"]) for s in rows if s.get("read_only_location")})
    parts = []
    if paused or not frozen:
        paused = paused or ["NAME"]
        parts.append(
            f"Schedule(s) {', '.join(paused)} in {f.velero_ns} are paused: "
            + "; ".join(_velero(f, f"schedule unpause {p}") for p in paused)
            + " (or delete the Schedule and cover its VMs in another)."
        )
    parts += [
        f"Once no restore runs from it, set BackupStorageLocation {loc} back to ReadWrite: "
        f"`oc patch backupstoragelocation {loc} -n {f.velero_ns} --type merge -p "
        "'{spec: {accessMode: ReadWrite}}'`."
        for loc in frozen
    ]
    return " ".join(parts)


def _plt003(f: FixFacts, ev: Mapping[str, Any]) -> str:
    drivers = _names(ev.get("missing")) or ["DRIVER"]
    return " ".join(
        f"Create a VolumeSnapshotClass for {d}: `oc apply -f - <<< '{{apiVersion: "
        "snapshot.storage.k8s.io/v1, kind: VolumeSnapshotClass, metadata: {name: "
        f'{d.split(".")[0]}-snapclass, labels: {{velero.io/csi-volumesnapshot-class: "true"}}}}, '
        f"driver: {d}, deletionPolicy: Retain}}'` (a file-system backup of a VM disk is not "
        "restored while the kubevirt plugin runs)."
        for d in drivers
    )


def _plt004(f: FixFacts, ev: Mapping[str, Any]) -> str:
    dpas = [str(d.get("dpa")) for d in ev.get("dpas") or [] if isinstance(d, dict)] or ["DPA"]
    name = _short(dpas[0])
    return (
        f"Add kubevirt to DataProtectionApplication {dpas[0]}: `oc edit "
        f"dataprotectionapplication {name} -n {f.velero_ns}`, field "
        "spec.configuration.velero.defaultPlugins: add - kubevirt."
    )


def _plt005(f: FixFacts, ev: Mapping[str, Any]) -> str:
    buckets = sorted(
        {str(loc.get("bucket")) for loc in ev.get("locations") or [] if isinstance(loc, dict)}
    )
    bucket = buckets[0] if buckets else "BUCKET"
    return (
        f"Enable versioning and Object Lock (COMPLIANCE or GOVERNANCE, at least the Velero TTL) on "
        f"bucket(s) {', '.join(buckets) or '-'}: `aws s3api put-object-lock-configuration "
        f"--bucket {bucket} --object-lock-configuration "
        "'ObjectLockEnabled=Enabled,Rule={DefaultRetention={Mode=GOVERNANCE,Days=30}}'` (needs "
        "versioning; on ODF/NooBaa and MinIO set it when creating the bucket)."
    )


def _plt006(f: FixFacts, ev: Mapping[str, Any]) -> str:
    kv = str(ev.get("kubevirt") or "openshift-cnv/kubevirt-kubevirt-hyperconverged")
    ns, _, name = kv.rpartition("/")
    return (
        f"Let KubeVirt {kv} start VMs with persistent EFI/TPM state: `oc edit kubevirt {name} "
        f"-n {ns or 'openshift-cnv'}`, set spec.configuration.vmStateStorageClass to an existing "
        "RWX Filesystem class (and the VMPersistentState feature gate before KubeVirt 1.5; on "
        "OpenShift set it through the HyperConverged CR)."
    )


#: The fix template of every check, by check id (a test asserts the catalog is covered).
FAIL_FIXES: dict[str, Fix] = {
    "RR-BKP-001": _bkp001,
    "RR-BKP-002": _bkp002,
    "RR-BKP-003": _bkp003,
    "RR-BKP-004": _bkp004,
    "RR-BKP-005": _bkp005,
    "RR-BKP-006": _bkp006,
    "RR-BKP-007": _bkp007,
    "RR-BKP-008": _bkp008,
    "RR-BKP-009": _bkp009,
    "RR-BKP-010": _bkp010,
    "RR-BKP-011": _bkp011,
    "RR-BKP-012": _bkp012,
    "RR-BKP-013": _bkp013,
    "RR-DEF-001": _def001,
    "RR-DSK-001": _dsk001,
    "RR-DSK-002": _dsk002,
    "RR-DSK-003": _dsk003,
    "RR-FW-001": _fw001,
    "RR-FW-002": _fw002,
    "RR-FW-003": _fw003,
    "RR-NET-001": _net001,
    "RR-NET-002": _net002,
    "RR-NET-003": _net003,
    "RR-NIC-001": _nic001,
    "RR-NIC-002": _nic002,
    "RR-RST-001": _rst001,
    "RR-RST-002": _rst002,
    "RR-STG-001": _stg001,
    "RR-STG-002": _stg002,
    "RR-STG-003": _stg003,
    "RR-PLT-001": _plt001,
    "RR-PLT-002": _plt002,
    "RR-PLT-003": _plt003,
    "RR-PLT-004": _plt004,
    "RR-PLT-005": _plt005,
    "RR-PLT-006": _plt006,
}
