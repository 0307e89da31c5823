"""Whether a VolumeSnapshot, or a VirtualMachineSnapshot, shows a restorable copy of a disk.

One rule for a VolumeSnapshot read on its own and for one a VirtualMachineSnapshotContent
names (round s42): a VirtualMachineRestore provisions each disk from the VolumeSnapshot of its
``volumeBackups`` entry, through the same external-provisioner code as any PVC restored from
a snapshot, so what fails one fails the other. Before, the VM snapshot's VolumeSnapshot was
checked for readiness only: one cut from another claim, bound to another volume's content or
to a content of another driver still counted as the disk's copy.

Each function returns why no copy is shown, naming the object and field, or None.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from auditor.inventory.capture import (
    content_shows_snapshot,
    deleting_snapshot,
    pvc_facts,
    unready_content_reason,
)
from auditor.inventory.index import VM_SNAPSHOT_PHASES, ClusterIndex
from auditor.inventory.volbound import lost_with_volume
from auditor.kubevalues import dig, parse_go_duration, parse_time

__all__ = [
    "IN_VOLUME",
    "PROVISIONER_SRC",
    "VM_SNAPSHOT_SRC",
    "snapshot_fault",
    "snapshot_indications",
    "vm_snapshot_fault",
    "vm_snapshot_terminating",
]

PROVISIONER_SRC = "https://github.com/kubernetes-csi/external-provisioner/blob/master/pkg/controller/controller.go"
VM_SNAPSHOT_SRC = "https://github.com/kubevirt/kubevirt/blob/main/pkg/storage/snapshot/snapshot.go"
#: The fault of a content kept inside its volume; :mod:`auditor.inventory.insidenotes` names it.
IN_VOLUME = "kept inside its volume"


def snapshot_fault(
    ix: ClusterIndex,
    s: dict[str, Any],
    pvc: dict[str, Any] | None,
    claim: str,
    *,
    own: bool = True,
) -> str | None:
    """Why VolumeSnapshot ``s`` restores no copy of claim ``claim`` (``pvc``, None when it
    does not exist), or None.

    external-provisioner ``getSnapshotSource`` refuses a snapshot being deleted, one bound to
    no content, one whose content's ``spec.volumeSnapshotRef`` names another snapshot
    ("bound to a different snapshot"), one whose content's ``spec.driver`` is not the
    provisioner of the class the claim is restored to ("handled by a different CSI driver"),
    one not ready, and one without ``status.snapshotHandle`` (:data:`PROVISIONER_SRC`). A
    snapshot cut from another claim (``spec.source.persistentVolumeClaimName``, immutable),
    before this claim existed, or of another volume (the content's
    ``spec.source.volumeHandle``) holds another disk's data. A content the index could not
    read in a partial list is given the benefit of the doubt, as before.

    ``own`` False judges the VolumeSnapshot a VirtualMachineSnapshotContent names for claim
    ``claim`` (its volumeBackup's): a VirtualMachineRestore re-creates the VM's claims, so a
    claim newer than the snapshot is no reason to refuse it (fp15, rt13), and its volume is
    compared only while the claim is the one the snapshot was cut from.
    """
    name = f"VolumeSnapshot {dig(s, 'metadata', 'name')}"
    ready = dig(s, "status", "readyToUse")
    if ready is not True:
        return f"{name} status.readyToUse={ready}"
    if dig(s, "metadata", "deletionTimestamp") is not None:
        return f"{name} metadata.deletionTimestamp is set (being deleted)"
    source = dig(s, "spec", "source", "persistentVolumeClaimName")
    if isinstance(source, str) and source != claim:
        return f"{name} spec.source.persistentVolumeClaimName={source}, not {claim}"
    bound = dig(s, "status", "boundVolumeSnapshotContentName")
    content = ix.snapshot_contents.get(bound) if isinstance(bound, str) else None
    if content is None and _content_gone(ix, bound):
        return f"{name} status.boundVolumeSnapshotContentName={bound}: no such content"
    later = _time_fault(s, pvc, name)
    fault = _content_fault(ix, s, content, pvc, later is None) if content is not None else None
    return fault or (later if own else None)


def _content_fault(
    ix: ClusterIndex,
    s: dict[str, Any],
    content: dict[str, Any],
    pvc: dict[str, Any] | None,
    same_claim: bool,
) -> str | None:
    """Why the VolumeSnapshotContent ``content`` bound to ``s`` restores no copy of ``pvc``
    (whose volume it must be of when ``same_claim``: the claim existed when it was cut)."""
    name = f"VolumeSnapshotContent {dig(content, 'metadata', 'name')}"
    if not content_shows_snapshot(content):
        status = content.get("status")
        if isinstance(status, dict) and status.get("error"):
            return f"{name} status.error is set"
        return f"{name} {unready_content_reason(status)}"
    if deleting_snapshot(content):
        return f"{name} is being deleted with spec.deletionPolicy={dig(content, 'spec', 'deletionPolicy')}"
    ref = dig(content, "spec", "volumeSnapshotRef")
    if isinstance(ref, dict):
        for key, own in (
            ("name", dig(s, "metadata", "name")),
            ("namespace", dig(s, "metadata", "namespace")),
            ("uid", dig(s, "metadata", "uid")),
        ):
            theirs = ref.get(key)
            if (
                isinstance(theirs, str)
                and theirs
                and isinstance(own, str)
                and own
                and theirs != own
            ):
                return (
                    f"{name} spec.volumeSnapshotRef.{key}={theirs}, not {own}: bound to "
                    "another snapshot"
                )
    facts = pvc_facts(ix, pvc) if pvc is not None else None
    driver = dig(content, "spec", "driver")
    if facts is not None and facts.driver and isinstance(driver, str) and driver != facts.driver:
        return (
            f"{name} spec.driver={driver}, not the disk's CSI driver {facts.driver}: the "
            "provisioner refuses to restore it"
        )
    of = dig(content, "spec", "source", "volumeHandle")
    if (
        same_claim
        and facts is not None
        and facts.handle
        and isinstance(of, str)
        and of
        and of != facts.handle
    ):
        return f"{name} spec.source.volumeHandle={of}, not the disk's volume {facts.handle}"
    if lost_with_volume(ix, content, pvc):
        return IN_VOLUME
    return None


def _time_fault(s: dict[str, Any], pvc: dict[str, Any] | None, name: str) -> str | None:
    """A snapshot cut before its claim existed is of an earlier claim of that name."""
    stamp = dig(s, "status", "creationTime")
    cut = parse_time(stamp)
    if stamp is not None and cut is None:
        return f"{name} status.creationTime is unreadable"
    cut = cut or parse_time(dig(s, "metadata", "creationTimestamp"))
    born = parse_time(dig(pvc, "metadata", "creationTimestamp")) if pvc is not None else None
    if born is not None and cut is not None and cut < born:
        return f"{name} was cut at {stamp}, before its claim was created"
    return None


def _content_gone(ix: ClusterIndex, bound: Any) -> bool:
    """Whether a VolumeSnapshot is bound to a content (``bound``, its
    ``status.boundVolumeSnapshotContentName``) that is not among the VolumeSnapshotContents,
    all of which were read, or is bound to none: it has nothing left to restore from.

    Without that name the VolumeSnapshot "has not been successfully bound to a
    VolumeSnapshotContent object yet", whatever its ``readyToUse`` says, and a PVC is
    restored from it through that content (external-snapshotter
    client/apis/volumesnapshot/v1/types.go ``VolumeSnapshotStatus``; red team rt11, bug case
    18 variant: a failed VM snapshot's VolumeSnapshot marked ready, bound to nothing, counted).
    """
    if not isinstance(bound, str) or not bound:
        return True
    return (
        bound not in ix.snapshot_contents
        and ix.data.known("VolumeSnapshotContent")
        and "VolumeSnapshotContent" not in ix.partial
    )


def vm_snapshot_fault(
    s: dict[str, Any], content: dict[str, Any] | None, disk: str | None, vs_name: str | None
) -> str | None:
    """Why VirtualMachineSnapshot ``s`` (its content ``content``) shows no copy of volume
    ``disk`` (VolumeSnapshot ``vs_name``), beyond readiness and phase, or None.

    KubeVirt (:data:`VM_SNAPSHOT_SRC`): a snapshot may only be of ``kubevirt.io``
    ``VirtualMachine`` (pkg/storage/admitters/vmsnapshot.go refuses any other source); its
    ``status.error`` is its content's, which ``updateVMSnapshotContent`` sets only while the
    content is not ready or a VolumeSnapshot reports an error, and clears otherwise;
    ``status.snapshotVolumes.excludedVolumes`` lists the volumes without a volumeBackup
    (``updateSnapshotSnapshotableVolumes``); the content's ``status.volumeSnapshotStatus``
    holds one entry per VolumeSnapshot it made, with that snapshot's readiness and error.
    An excluded disk, an error, or an entry not ready says the copy is not shown.
    """
    name = f"VirtualMachineSnapshot {dig(s, 'metadata', 'name')}"
    group, kind = dig(s, "spec", "source", "apiGroup"), dig(s, "spec", "source", "kind")
    if group != "kubevirt.io" or kind != "VirtualMachine":
        return f"{name} spec.source is {group}/{kind}, not kubevirt.io/VirtualMachine"
    # An ``Error`` is a pointer KubeVirt writes only when set: any value but absent is one
    # (an empty mapping included); one of another type (named by the index) proves no
    # absence of an error. A volume list of another type proves nothing excluded (round h47c).
    if dig(s, "status", "error") is not None:
        return f"{name} status.error is set ({_message(dig(s, 'status', 'error'))})"
    lists = dig(s, "status", "snapshotVolumes")
    excluded = lists.get("excludedVolumes") if isinstance(lists, dict) else None
    if lists is not None and not isinstance(lists, dict):
        return f"{name} status.snapshotVolumes is unreadable (not a mapping)"
    if excluded is not None and not isinstance(excluded, list):
        return f"{name} status.snapshotVolumes.excludedVolumes is unreadable (not a list)"
    if isinstance(excluded, list) and (
        disk in excluded or not all(isinstance(v, str) for v in excluded)
    ):
        return f"{name} status.snapshotVolumes.excludedVolumes lists {disk} (or is unreadable)"
    if content is None:
        return None
    cname = f"VirtualMachineSnapshotContent {dig(content, 'metadata', 'name')}"
    status = content.get("status")
    for key in ("error", "volumeSnapshotStatus"):
        if isinstance(status, dict) and key in status and status[key] is None:
            # written null, which the API server never stores (named by the index): what it
            # said is unknown, never "not written" (round h47c)
            return f"{cname} status.{key} is null (unreadable)"
    if dig(content, "status", "error") is not None:
        return f"{cname} status.error is set ({_message(dig(content, 'status', 'error'))})"
    statuses = dig(content, "status", "volumeSnapshotStatus")
    if statuses is not None and not isinstance(statuses, list):
        # a mapping or a scalar (named by the index): what it says of each VolumeSnapshot
        # is unknown, never "not written" (round h47c)
        return f"{cname} status.volumeSnapshotStatus is unreadable (not a list)"
    if statuses is None or not vs_name:
        return None  # not written (older KubeVirt, or no volume): the VolumeSnapshot decides
    # ``[]`` is none KubeVirt writes (omitempty drops an empty list): it holds no entry for
    # the VolumeSnapshot, below, rather than "not written" (round h47c)
    entry = next(
        (e for e in statuses if isinstance(e, dict) and e.get("volumeSnapshotName") == vs_name),
        None,
    )
    if entry is None:
        return f"{cname} status.volumeSnapshotStatus has no entry for {vs_name}"
    if entry.get("readyToUse") is not True or entry.get("error") is not None:
        return (
            f"{cname} status.volumeSnapshotStatus[{vs_name}] readyToUse="
            f"{entry.get('readyToUse')}" + (", error set" if entry.get("error") is not None else "")
        )
    return None


def vm_snapshot_terminating(s: dict[str, Any], at: datetime | None) -> bool:
    """Whether KubeVirt is ending VirtualMachineSnapshot ``s``: being deleted, ``Failed``, or
    still in progress past ``spec.failureDeadline`` (default 5m, 0 none) from its creation at
    instant ``at`` (``vmSnapshotTerminating``, pkg/storage/snapshot/util.go
    ``timeUntilDeadline``). Its content is then deleted unless ``spec.deletionPolicy`` is
    ``Retain`` and the content is ready (``shouldDeleteContent``), and the VolumeSnapshots the
    content owns go with it (:data:`VM_SNAPSHOT_SRC`)."""
    if dig(s, "metadata", "deletionTimestamp") is not None:
        return True
    phase = dig(s, "status", "phase")
    if phase == "Failed":
        return True
    if phase is not None and phase not in VM_SNAPSHOT_PHASES:
        # no phase KubeVirt writes (named by the index): it may be Failed, so its content may
        # be going (round h47c: ``phase: failed`` kept a failed snapshot's copies, unnamed)
        return True
    if phase == "Succeeded" or at is None:
        return False
    raw = dig(s, "spec", "failureDeadline")
    # a metav1.Duration: Go's ParseDuration takes a sign ("-1m": past already) and "0"
    deadline = parse_go_duration(raw) if raw is not None else timedelta(minutes=5)
    if deadline is None:
        return True  # unreadable (named by the index): the deadline may have passed
    born = parse_time(dig(s, "metadata", "creationTimestamp"))
    if born is None or not deadline:
        return False
    return born + deadline < at


def _message(error: Any) -> str:
    message = error.get("message") if isinstance(error, dict) else None
    return str(message) if message else "no message"


def snapshot_indications(s: dict[str, Any]) -> tuple[set[str], str | None]:
    """The indications VirtualMachineSnapshot ``s`` records, from the deprecated
    ``status.indications`` and from ``status.sourceIndications[].indication`` (KubeVirt writes
    both since v1.8, ``updateSnapshotSourceIndications`` in :data:`VM_SNAPSHOT_SRC`), and the
    first field of the wrong shape (``"status.indications is ..."``), or None. Reading stops
    at that field: what it held is unknown."""
    found: set[str] = set()
    old = dig(s, "status", "indications")
    if old is not None:
        if not isinstance(old, list) or not all(isinstance(v, str) for v in old):
            return found, f"status.indications is {str(old)[:60]!r}, not a list of strings"
        found.update(old)
    new = dig(s, "status", "sourceIndications")
    if new is not None:
        if not isinstance(new, list):
            return found, f"status.sourceIndications is a {type(new).__name__}, not a list"
        for i, entry in enumerate(new):
            value = entry.get("indication") if isinstance(entry, dict) else None
            if not isinstance(value, str):
                return found, f"status.sourceIndications[{i}].indication is not a string"
            found.add(value)
    return found, None
