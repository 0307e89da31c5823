"""Resolve a VM's instancetype and preference from the ControllerRevision it is pinned to.

KubeVirt copies the instancetype and preference a VM uses into a ControllerRevision owned by
the VM and pins the VM to it (``spec.instancetype/preference.revisionName``, or
``status.instancetypeRef/preferenceRef.controllerRevisionRef``); later edits of the live
object do not reach the VM. The revision, not the live object, is what the VM runs with and
what a restore brings back (the kubevirt Velero plugin backs the revisions up with the VM).
Sources: https://github.com/kubevirt/kubevirt/blob/main/pkg/instancetype/preference/find/revision.go,
https://kubevirt.io/user-guide/user_workloads/instancetypes/#versioning
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from auditor.kubevalues import dig
from auditor.sources.base import KindState

__all__ = ["PinnedRef", "resolve_pinned", "OBJECT_NAME_LABEL", "canonical_kind"]

#: label KubeVirt puts on its instancetype/preference ControllerRevisions
OBJECT_NAME_LABEL = "instancetype.kubevirt.io/object-name"
_DEFAULT_KIND = {
    "instancetype": "VirtualMachineClusterInstancetype",
    "preference": "VirtualMachineClusterPreference",
}
#: The spellings KubeVirt reads a matcher's ``kind`` in: its resource names, singular or
#: plural, in any case (kubevirt staging/src/kubevirt.io/api/instancetype/register.go;
#: pkg/instancetype/find/spec.go and pkg/instancetype/preference/find/spec.go switch on
#: ``strings.ToLower(kind)``), mapped to the kind.
_KIND_SPELLINGS = {
    spelling: kind
    for kind in (
        "VirtualMachineInstancetype",
        "VirtualMachineClusterInstancetype",
        "VirtualMachinePreference",
        "VirtualMachineClusterPreference",
    )
    for spelling in (kind.lower(), kind.lower() + "s")
}


def canonical_kind(kind: Any, what: str) -> str:
    """The kind ``spec.<what>.kind`` (``what``: ``instancetype`` or ``preference``) names, as
    KubeVirt reads it: unset or empty is the cluster-wide kind, a resource name in any case
    (``virtualmachineclusterinstancetypes``, ``VirtualMachinePreference``) is its kind;
    any other string is returned as written (KubeVirt refuses it: "got unexpected kind")."""
    if not isinstance(kind, str) or not kind:
        return _DEFAULT_KIND[what]
    return _KIND_SPELLINGS.get(kind.lower(), kind)


@dataclass(frozen=True)
class PinnedRef:
    """One resolved reference.

    ``source``: ``revision`` (the pinned ControllerRevision), ``live`` (the live object:
    not pinned, or the ControllerRevisions could not be read), or ``missing`` (nothing found;
    ``obj`` is None). ``obj`` is the resolved (Cluster)Instancetype/Preference object.
    """

    what: str
    kind: str
    name: str
    revision: str | None
    source: str
    note: str
    obj: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        """Evidence / recovery-card form."""
        return {
            "what": self.what,
            "kind": self.kind,
            "name": self.name,
            "revision": self.revision,
            "resolved_from": self.source,
            "note": self.note,
        }


def resolve_pinned(
    data_state: KindState,
    revisions: dict[tuple[str, str], dict[str, Any]],
    live: dict[str, dict[str, Any] | None],
    vm: dict[str, Any],
    namespace: str,
    what: str,
) -> PinnedRef | None:
    """Resolve ``spec.<what>`` (``instancetype`` or ``preference``) of ``vm``; None if unset.

    ``revisions`` maps (namespace, name) to ControllerRevisions, ``data_state`` is their
    kind's state; ``live`` maps the lower-cased kind to the live object found (or None).
    """
    ref = dig(vm, "spec", what)
    if not isinstance(ref, dict) or not isinstance(ref.get("name"), str):
        return None
    name = ref["name"]
    kind = canonical_kind(ref.get("kind"), what)
    live_obj = live.get(kind.lower())
    raw = ref.get("revisionName")
    if raw is not None and not isinstance(raw, str):
        return PinnedRef(
            what, str(kind), name, None, "missing", "revisionName is not a string", None
        )
    rev = raw or None
    if not rev:
        status_rev = dig(vm, "status", f"{what}Ref", "controllerRevisionRef", "name")
        rev = status_rev if isinstance(status_rev, str) and status_rev else None

    def out(source: str, note: str, obj: dict[str, Any] | None) -> PinnedRef:
        return PinnedRef(what, str(kind), name, rev, source, note, obj)

    if rev is None:
        if live_obj is None:
            return out("missing", f"{kind} {name} not found", None)
        return out("live", "not pinned to a revision: the live object applies", live_obj)
    cr = revisions.get((namespace, rev))
    if cr is not None:
        labelled = dig(cr, "metadata", "labels", OBJECT_NAME_LABEL)
        body = cr.get("data")
        if isinstance(body, dict) and isinstance(body.get("spec"), dict):
            if labelled not in (None, name):
                return out("missing", f"revision {rev} is for {labelled}, not {name}", None)
            return out("revision", f"pinned revision {rev}", body)
        return out("missing", f"revision {rev} holds no {kind} spec", None)
    if data_state is KindState.COMPLETE:
        return out("missing", f"pinned revision {rev} does not exist", None)
    if data_state is KindState.PARTIAL:
        # the pinned revision may be one of those that could not be read (issue 17)
        return out(
            "missing", f"revision {rev} may be among the unreadable ControllerRevisions", None
        )
    if live_obj is None:
        return out("missing", f"revision {rev} not read and {kind} {name} not found", None)
    return out(
        "live",
        f"ControllerRevisions not read: the live {kind} stands in for revision {rev} (inferred)",
        live_obj,
    )
