"""Find the nulls a VirtualMachine read from the API server cannot hold.

The API server prunes a null value of every custom-resource field whose schema is not
``nullable`` (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/
custom-resource-definitions/#defaulting-and-nullable), and never writes a null
``metadata.labels`` or ``metadata.annotations`` (``ObjectMeta``'s maps are ``omitempty``).
KubeVirt's VirtualMachine schema marks nullable only the fields in :data:`NULLABLE`
(kubevirt ``pkg/virt-operator/resource/generate/components/validations_generated.go``,
``"virtualmachine"``). A null anywhere else in ``spec`` is a damaged or edited copy: read as
"absent" it silently changed findings (``firmware: null`` dropped RR-FW-002's FAIL to
NOT_APPLICABLE, ``labels: null`` made Backups that select or exclude the VM by label miss
it, ``disks: null`` made every disk a volume of no bus; bench.mutations null_list), so each
is a named problem and the checks that read the field give ERROR.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from auditor.netdata import FACTS_KEY

__all__ = ["NULLABLE", "VMI_NULLABLE", "nulls_below", "pruned_nulls"]

#: Field paths of a VirtualMachine's ``spec`` (``[*]``: any list item) whose null the API
#: server keeps, with everything below them (``spec.template.metadata`` and the domain's
#: ``clock`` preserve unknown fields, as the ``creationTimestamp: null`` every exported
#: template holds); a DataVolume template itself may be null too, but not its ``spec``.
NULLABLE = (
    "spec.dataVolumeTemplates[*].metadata",
    "spec.dataVolumeTemplates[*].status",
    "spec.template.metadata",
    "spec.template.spec.domain.clock",
)
#: The same for a VirtualMachineInstance's ``spec`` and ``status`` (kubevirt
#: validations_generated.go, ``"virtualmachineinstance"``).
VMI_NULLABLE = (
    "spec.domain.clock",
    "status.changedBlockTracking",
    "status.conditions[*].lastProbeTime",
    "status.conditions[*].lastTransitionTime",
    "status.migrationState.endTimestamp",
    "status.migrationState.startTimestamp",
)
_REASON = "is null, which the API server never stores (a damaged or edited copy)"


def _regex(paths: tuple[str, ...], tail: str) -> re.Pattern[str]:
    return re.compile(
        "(?:"
        + "|".join(re.escape(p).replace(re.escape("[*]"), r"\[[^\]]*\]") for p in paths)
        + ")"
        + tail
    )


_SUBTREE = r"(?:$|[.\[])"
_VM_ITEM_RE = _regex(("spec.dataVolumeTemplates[*]",), "$")
_NEVER = re.compile(r"(?!)")


def pruned_nulls(vm: dict[str, Any]) -> list[tuple[str, str]]:
    """``(field path, reason)`` for each null of ``vm`` (a VirtualMachine dict) below
    ``spec`` outside :data:`NULLABLE`, for a null ``metadata.labels`` or
    ``metadata.annotations``, and for a null ``status``. List items are named by their ``name`` when they have a string
    one (``volumes[rootdisk]``, as :mod:`auditor.inventory.vmvalidate` names them), else by
    index."""
    out: list[tuple[str, str]] = []
    if "status" in vm and vm["status"] is None:
        # the status subresource is an object KubeVirt writes (never null; pruned if it
        # were): read as absent, the revisions a VM is pinned to (status.instancetypeRef,
        # status.preferenceRef) vanished and RR-BKP-012's FAIL with them (round m42,
        # mutation seed 4204: NOT_READY -> READY, unnamed)
        out.append(("status", _REASON))
    meta = vm.get("metadata")
    if isinstance(meta, dict):
        out += [
            (f"metadata.{k}", _REASON)
            for k in ("labels", "annotations")
            if k in meta and meta[k] is None
        ]
    return out + nulls_below(vm, ("spec",), NULLABLE, _VM_ITEM_RE)


def nulls_below(
    obj: dict[str, Any],
    roots: tuple[str, ...],
    nullable: tuple[str, ...] = (),
    nullable_item: re.Pattern[str] = _NEVER,
) -> list[tuple[str, str]]:
    """``(field path, reason)`` for each null below the top-level fields ``roots`` of
    ``obj`` (a custom resource's dict; ``roots`` themselves included) outside the
    ``nullable`` paths and their subtrees (``[*]``: any list item) and the paths
    ``nullable_item`` matches. A CRD whose schema allows no null (instancetypes and
    preferences: ``roots=("spec",)``, nothing nullable) names every one."""
    out: list[tuple[str, str]] = []
    allowed = _regex(nullable, _SUBTREE) if nullable else _NEVER
    for root in roots:
        if root in obj and obj[root] is None:
            out.append((root, _REASON))
        elif isinstance(obj.get(root), dict | list) and _may_hold_null(obj[root]):
            _walk(obj[root], root, out, allowed, nullable_item)
    return out


def _may_hold_null(value: dict[str, Any] | list[Any]) -> bool:
    """Whether ``value`` may hold a null: False only when its JSON text (written in C) has no
    ``null`` at all, which spares the path-building walk most objects (a VMI's spec and
    status are walked for every VMI: 1.3 s at 10,000 VMs). A value JSON cannot write (a
    key that is no string, an integer beyond 64 bits) is walked."""
    try:
        return b"null" in orjson.dumps(value)
    except orjson.JSONEncodeError:
        return True


def _walk(
    value: dict[str, Any] | list[Any],
    path: str,
    out: list[tuple[str, str]],
    allowed: re.Pattern[str],
    item: re.Pattern[str],
) -> None:
    if allowed.match(path):
        return
    pairs: list[tuple[str, Any]]
    if isinstance(value, dict):
        # the facts the reader keeps of cloud-init networkData in its place are the
        # auditor's own record (auditor.netdata), not the API server's: their nulls mean
        # "unknown" (fp29's malformed networkData turned the disk checks to ERROR)
        pairs = [(f"{path}.{k}", v) for k, v in value.items() if k != FACTS_KEY]
    else:
        pairs = [(f"{path}[{_label(v, i)}]", v) for i, v in enumerate(value)]
    for at, v in pairs:
        if v is None and not (allowed.match(at) or item.match(at)):
            out.append((at, _REASON))
        elif isinstance(v, dict | list):
            _walk(v, at, out, allowed, item)


def _label(item: Any, index: int) -> str:
    name = item.get("name") if isinstance(item, dict) else None
    return name if isinstance(name, str) and name else str(index)
