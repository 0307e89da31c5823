"""Hand probes of named fields on ``bench.mutations``' workspace (round h47c).

``bench.mutations`` changes only the fields an export holds; this sets each field listed in
:data:`FIELDS` (present or absent, added at the deepest mapping it has) to a value of the
shared fuzz cases' kinds: an invalid enum string, the value in another case, ``42``,
``true``, ``["x"]``, ``{x: y}``, null, ``""`` or a list's first entry alone. With ``--refs``
it sets every string field named ``*Name``/``*Ref``/``name``/``image``/``path`` (outside
``metadata``) of the kinds in :data:`REF_KINDS` to ``42``, ``["x"]``, ``{x: y}``, null,
``true`` or ``[value]``. ``--vm`` probes :data:`VM_FIELDS` instead of :data:`FIELDS`.

Usage: ``python -m bench.field_probe [--vm | --refs] SEED COUNT EXPORT [EXPORT ...]`` (an
export is a directory or a fixture file). It prints each mutation that improved a VM's
readiness rank, raised, or changed a finding with nothing naming the object, a progress line
every 25, and the totals. "improved" is a VM's readiness rank (``bench.mutations``): a finding
made better while another FAIL holds the verdict shows only as "changed".
"""

from __future__ import annotations

import argparse
import logging
import random
import tempfile
import time
from collections import Counter
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from bench import mutations as bm

__all__ = ["FIELDS", "REF_KINDS", "VM_FIELDS", "field_mutations", "main", "ref_mutations"]

#: The Velero and snapshot fields probed, by kind (dotted paths from the object's root).
FIELDS: dict[str, str] = {
    "Restore": "spec.restorePVs spec.includeClusterResources spec.existingResourcePolicy "
    "spec.preserveNodePorts spec.scheduleName spec.itemOperationTimeout status.failureReason "
    "status.validationErrors spec.labelSelector spec.orLabelSelectors spec.excludedResources "
    "spec.includedResources spec.excludedNamespaces spec.includedNamespaces "
    "spec.namespaceMapping status.phase status.errors status.progress.itemsRestored "
    "spec.backupName",
    "Backup": "spec.volumeSnapshotLocations spec.csiSnapshotTimeout spec.itemOperationTimeout "
    "spec.datamover spec.uploaderConfig status.validationErrors status.errors status.warnings "
    "status.backupItemOperationsFailed status.volumeSnapshotsAttempted "
    "status.volumeSnapshotsCompleted spec.includedClusterScopedResources "
    "spec.excludedNamespaceScopedResources spec.includedNamespaceScopedResources "
    "spec.labelSelector spec.hooks metadata.deletionTimestamp status.expiration "
    "spec.storageLocation spec.ttl status.phase spec.includedNamespaces spec.excludedResources "
    "spec.snapshotVolumes spec.snapshotMoveData spec.defaultVolumesToFsBackup "
    "status.progress.itemsBackedUp status.csiVolumeSnapshotsAttempted "
    "status.csiVolumeSnapshotsCompleted",
    "Schedule": "spec.useOwnerReferencesInBackup spec.skipImmediately "
    "spec.template.includeClusterResources spec.template.defaultVolumesToFsBackup "
    "spec.template.snapshotMoveData spec.template.storageLocation "
    "spec.template.includedNamespaces spec.template.excludedResources "
    "spec.template.labelSelector spec.template.orLabelSelectors spec.schedule spec.paused "
    "status.phase status.lastBackup spec.template.ttl spec.template.snapshotVolumes",
    "BackupStorageLocation": "spec.default spec.accessMode spec.objectStorage.bucket "
    "spec.provider spec.validationFrequency status.lastValidationTime status.phase",
    "DataUpload": "spec.snapshotType spec.cancel spec.operationTimeout status.progress "
    "status.message status.phase spec.sourcePVC spec.sourceNamespace",
    "PodVolumeBackup": "spec.uploaderType status.progress spec.volume status.phase spec.pod",
    "VolumeSnapshot": "spec.volumeSnapshotClassName status.restoreSize "
    "metadata.deletionTimestamp status.readyToUse status.error "
    "spec.source.persistentVolumeClaimName status.boundVolumeSnapshotContentName "
    "status.creationTime metadata.ownerReferences",
    "VolumeSnapshotContent": "spec.deletionPolicy spec.volumeSnapshotClassName "
    "spec.volumeSnapshotRef spec.volumeSnapshotRef.name spec.driver status.restoreSize "
    "status.readyToUse metadata.deletionTimestamp status.snapshotHandle "
    "spec.source.volumeHandle status.error",
    "VolumeSnapshotClass": "deletionPolicy driver parameters",
    "VirtualMachineSnapshot": "spec.deletionPolicy spec.failureDeadline status.phase "
    "status.readyToUse status.error status.indications status.snapshotVolumes.includedVolumes "
    "status.snapshotVolumes.excludedVolumes metadata.deletionTimestamp status.sourceUID "
    "status.conditions status.virtualMachineSnapshotContentName spec.source.name "
    "spec.source.kind",
    "VirtualMachineSnapshotContent": "status.readyToUse status.error status.volumeSnapshotStatus "
    "spec.virtualMachineSnapshotName spec.volumeBackups metadata.deletionTimestamp "
    "status.creationTime metadata.ownerReferences spec.source.virtualMachine",
}
#: The VirtualMachine and VMI fields probed with ``--vm``.
VM_FIELDS: dict[str, str] = {
    "VirtualMachine": "status.printableStatus status.conditions status.volumeSnapshotStatuses "
    "status.created status.ready spec.runStrategy spec.running status.runStrategy "
    "status.desiredGeneration status.observedGeneration spec.template.spec.evictionStrategy "
    "spec.template.spec.domain.devices.interfaces spec.template.spec.networks "
    "spec.template.spec.volumes spec.template.spec.domain.devices.disks spec.dataVolumeTemplates "
    "spec.template.spec.domain.firmware spec.template.spec.domain.firmware.bootloader "
    "spec.template.spec.domain.devices.tpm spec.template.spec.domain.features "
    "spec.template.spec.accessCredentials spec.template.spec.architecture spec.instancetype "
    "spec.preference status.stateChangeRequests status.volumeRequests status.memoryDumpRequest",
    "VirtualMachineInstance": "status.phase status.volumeStatus status.interfaces "
    "status.guestOSInfo status.guestOSInfo.id status.conditions status.migrationState "
    "spec.volumes spec.networks spec.domain.devices.interfaces spec.domain.devices.disks "
    "status.nodeName status.activePods status.launcherContainerImageVersion "
    "spec.domain.firmware spec.domain.firmware.uuid status.machine status.migrationMethod "
    "status.kernelBootStatus status.currentCPUTopology spec.architecture "
    "status.virtualMachineRevisionName",
}
#: The kinds whose reference fields ``--refs`` probes.
REF_KINDS = (
    "VirtualMachine",
    "VirtualMachineInstance",
    "VirtualMachineSnapshot",
    "VirtualMachineSnapshotContent",
    "VolumeSnapshot",
    "VolumeSnapshotContent",
    "Backup",
    "Restore",
    "Schedule",
    "DataUpload",
    "PodVolumeBackup",
)
_VALUES: tuple[Any, ...] = ("Bogus", "<case>", 42, True, ["x"], {"x": "y"}, None, "", "<first>")
_REF_KEYS = ("name", "image", "path", "serviceAccountName", "networkName")


def _values(present: bool, current: Any, values: tuple[Any, ...] = _VALUES) -> list[Any]:
    """The ``values`` a field is set to: ``<case>`` (the current string in another case),
    ``<first>`` (a list's first entry) and ``<list>`` (the current scalar or mapping in a
    one-entry list) only where they apply; never the current value itself."""
    out = []
    for v in values:
        if v == "<case>":
            if not (present and isinstance(current, str) and current):
                continue
            v = current.lower() if current != current.lower() else current.upper()
        elif v == "<first>":
            if not (present and isinstance(current, list) and current):
                continue
            if not isinstance(current[0], str | int):
                continue
            v = current[0]
        elif v == "<list>":
            if not (present and isinstance(current, str | int | bool | dict)):
                continue
            v = [current]
        if not (present and v == current):
            out.append(v)
    return out


def _objects_of(
    target: bm.Target, kinds: Collection[str]
) -> Iterator[tuple[Path, int, tuple[Any, ...], dict[str, Any], str, str]]:
    """``(file, document index, path prefix, object, kind, name)`` of each object of
    ``kinds`` in ``target``'s files, in file order."""
    for f in target.files:
        for di, doc in enumerate(bm._docs(f)):
            for prefix, obj in bm._objects(doc):
                kind = obj.get("kind")
                if kind in kinds:
                    yield f, di, prefix, obj, kind, str((obj.get("metadata") or {}).get("name"))


def field_mutations(target: bm.Target, fields: dict[str, str]) -> list[bm.Mutation]:
    """Every value of :func:`_values` at every field of ``fields`` of every object of
    ``target`` (an absent field is added at the deepest mapping the object has on its way)."""
    out = []
    for f, di, prefix, obj, kind, name in _objects_of(target, fields):
        for dotted in fields[kind].split():
            steps = dotted.split(".")
            at: Any = obj
            depth = 0
            for s in steps:
                if not (isinstance(at, dict) and s in at):
                    break
                at = at[s]
                depth += 1
            present = depth == len(steps)
            holder: Any = obj
            for s in steps[: min(depth, len(steps) - 1)]:
                holder = holder[s]
            if not isinstance(holder, dict):
                continue
            cut = steps if present else steps[: depth + 1]
            for v in _values(present, at):
                new = v
                for k in reversed(steps[depth + 1 :] if not present else []):
                    new = {k: new}
                out.append(
                    bm.Mutation("absent_typed", target, f, di, (*prefix, *cut), new, kind, name)
                )
    return out


def ref_mutations(target: bm.Target) -> list[bm.Mutation]:
    """Each string reference field of :data:`REF_KINDS` set to another type, null or a
    one-entry list."""
    out = []
    for f, di, prefix, obj, kind, name in _objects_of(target, REF_KINDS):
        for rel, value in bm._walk(obj, ()):
            if not rel or rel[0] == "metadata" or not isinstance(rel[-1], str):
                continue
            key = rel[-1]
            if not (key.endswith(("Name", "Ref", "name")) or key in _REF_KEYS):
                continue
            if not isinstance(value, str):
                continue
            for v in (42, ["x"], {"x": "y"}, None, True, [value]):
                out.append(bm.Mutation("other_type", target, f, di, (*prefix, *rel), v, kind, name))
    return out


def main() -> None:
    """Run a probe and print what it found (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vm", action="store_true", help="probe VM_FIELDS")
    parser.add_argument("--refs", action="store_true", help="probe reference fields")
    parser.add_argument("seed", type=int)
    parser.add_argument("count", type=int)
    parser.add_argument("exports", type=Path, nargs="+")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    pool = [
        m
        for e in args.exports
        for m in (
            ref_mutations(bm.Target(e))
            if args.refs
            else field_mutations(bm.Target(e), VM_FIELDS if args.vm else FIELDS)
        )
    ]
    chosen = rng.sample(pool, min(args.count, len(pool)))
    chosen.sort(key=lambda m: (str(m.target.path), str(m.file), m.doc))
    print(f"pool {len(pool)} chosen {len(chosen)}", flush=True)
    handler = bm._Tracebacks()
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.INFO)
    seen: Counter[str] = Counter()
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        ws = None
        for i, m in enumerate(chosen):
            if ws is None or ws.target != m.target:
                ws = bm._Workspace(m.target, Path(tmp) / str(i))
            out = ws.run(m, handler)
            seen["tried"] += 1
            where = m.target.path.name
            if out.improved:
                seen["improved"] += 1
                print("IMPROVED", where, m.describe(), out.improved, flush=True)
            if out.traceback:
                seen["traceback"] += 1
                print("TRACEBACK", where, m.describe(), out.traceback[:300], flush=True)
            if out.changed:
                seen["changed"] += 1
            if out.changed and not out.named:
                seen["unnamed"] += 1
                print("UNNAMED", where, m.describe(), flush=True)
            if i % 25 == 0:
                print("progress", i, dict(seen), round(time.time() - t0), flush=True)
    print("TOTAL", dict(seen), flush=True)


if __name__ == "__main__":
    main()
