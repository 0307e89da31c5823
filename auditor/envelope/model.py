"""The typed report envelope: :class:`AuditReport` and its parts.

``report.json`` is ``AuditReport`` serialised by :func:`auditor.envelope.dump_report_json`
(keys sorted, two-space indent, UTF-8, trailing newline); its JSON Schema is
:func:`report_schema` (shipped as ``docs/report-schema.json``, prose in
``docs/report-schema.md``). Renderers take these models as they are; readers
of a report.json on disk validate it with ``AuditReport.model_validate_json``.

Conventions: times are RFC 3339 UTC strings with a ``Z`` suffix, second
precision; ages and durations are hours (float); sizes are bytes (int) next to
the original Kubernetes quantity string.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from auditor.config import Thresholds
from auditor.models import Basis, Readiness, Severity, Status
from auditor.sources.base import KindState

__all__ = [
    "SCHEMA_VERSION",
    "Part",
    "Source",
    "StorageLocationRun",
    "StoredVolumeRun",
    "BackupRecordRun",
    "BackupStorageRun",
    "Run",
    "Cluster",
    "CollectionProblemEntry",
    "CheckEntry",
    "WaiverSelector",
    "WaiverRecord",
    "WaiverEntry",
    "FindingEntry",
    "RootCauseEntry",
    "NewestBackup",
    "BackupSummary",
    "ObjectRef",
    "RevisionRef",
    "BindingFrom",
    "NicIdentityCard",
    "NetworkIdentityCard",
    "FirmwareCard",
    "PvcCard",
    "BackupCopy",
    "VolumeSnapshotCopy",
    "VmSnapshotCopy",
    "CopyCard",
    "VolumeRef",
    "DiskCard",
    "NetworkRef",
    "NicCard",
    "CardVm",
    "RecoveryCard",
    "VmEntry",
    "Summary",
    "AuditReport",
    "report_schema",
]

#: Version of the report.json shape; bump the minor for added fields, the major for changes.
SCHEMA_VERSION = "1.5"

#: A map of readiness state -> number of VMs (every state present, zeros included).
ReadinessCounts = dict[Readiness, int]


class Part(BaseModel):
    """Base of every envelope part: immutable, unknown keys refused."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False)

    def model_post_init(self, context: Any, /) -> None:
        """Share one set of the fields given among the parts of one class given the same.

        pydantic keeps a set of the fields given with every instance (``model_fields_set``),
        about 700 bytes for a finding's: 37 KB per VM entry, 1.8 GB of a 50,000-VM report
        that did not fit a 16 GB machine. A part is frozen, so its set is never added to
        (``model_copy`` copies it before an update).
        """
        given = self.__pydantic_fields_set__
        shared = _FIELDS_GIVEN.setdefault((type(self), frozenset(given)), given)
        if shared is not given:
            object.__setattr__(self, "__pydantic_fields_set__", shared)


#: (part class, fields given) -> the one set of them its instances share (Part.model_post_init)
_FIELDS_GIVEN: dict[tuple[type[Part], frozenset[str]], set[str]] = {}


class Source(Part):
    """Where the audited objects came from: ``directory`` (a path) or ``cluster`` (API URL)."""

    type: str
    location: str


class StorageLocationRun(Part):
    """What was read from one BackupStorageLocation's bucket this run."""

    location: str
    bucket: str
    prefix: str
    endpoint: str | None
    state: str = Field(description="read or error")
    detail: str
    versioning: str | None
    object_lock: bool | None
    lock_mode: str | None
    lock_days: int | None
    bucket_only: int = Field(description="backups in the bucket the cluster does not list")


class StoredVolumeRun(Part):
    """One PVC's data as a Backup's bucket objects record it."""

    pvc: str = Field(description="namespace/name")
    method: str
    outcome: str
    detail: str
    size_bytes: int | None


class BackupRecordRun(Part):
    """What one Backup's bucket objects say."""

    backup: str
    location: str
    state: str
    detail: str
    objects: int | None = Field(description="objects in the resource list; null when unread")
    vm_manifests: list[str] = Field(description="namespace/name of VM manifests read")
    errors: int | None
    warnings: int | None
    volumes: list[StoredVolumeRun] | None


def _absent(value: object) -> bool:
    return value is None


class BackupStorageRun(Part):
    """``run.backup_storage``: whether buckets were configured and what was read from them."""

    configured: bool
    note: str | None = Field(default=None, exclude_if=_absent)
    locations: list[StorageLocationRun] | None = Field(default=None, exclude_if=_absent)
    backup_records: list[BackupRecordRun] | None = Field(default=None, exclude_if=_absent)
    backups: dict[str, int] | None = Field(
        default=None, exclude_if=_absent, description="Backup content state -> count"
    )


class Run(Part):
    """One audit run: when, by which version, on what input, and how complete."""

    id: str = Field(
        description="audit time + first 8 hex of sha256 over input_digest, tool version, source "
        "and the settings that shape the verdicts (thresholds, policies, waivers, ownership, "
        "cluster name, owner filter) and the artifact formats written, "
        "e.g. 20261130T060000Z-3f2a9c1b"
    )
    audit_time: str = Field(description="RFC 3339 UTC, second precision")
    tool_version: str
    source: Source
    input_digest: str = Field(
        description="sha256:<hex> of the secret-stripped objects audited and of what could not"
        " be read (kind states, collection problems, conflicts, namespaces read, bucket records)"
    )
    complete: bool = Field(
        description="false when any collection problem or incomplete check exists"
    )
    incomplete_checks: list[str] = Field(description="checks whose input was missing or partial")
    thresholds: Thresholds = Field(description="the default policy's thresholds")
    owner_filter: str | None = Field(description="set when --owner limited the report")
    backup_storage: BackupStorageRun
    at_after_input: str | None = Field(
        default=None,
        exclude_if=_absent,
        description="set when the audit time (--at) is clearly after the input was taken: "
        "the report then shows the cluster as read, not at audit_time",
    )


class Cluster(Part):
    """What was read: object counts, per-kind read state, kinds skipped as not audited."""

    name: str | None
    name_source: Literal["config", "infrastructure", "kubeconfig-context", "unknown"] = Field(
        description="where name came from: the configured cluster_name, OpenShift's "
        "Infrastructure 'cluster', the kubeconfig context of a live run, or unknown (name null)"
    )
    uid: str | None = Field(
        default=None,
        description="the cluster's identity: metadata.uid of its kube-system Namespace; null "
        "when unknown (no kube-system Namespace read, or defined twice, or no uid). Two "
        "clusters sharing a name are told apart by it in the archive",
    )
    uid_source: Literal["kube-system-namespace", "unknown"] = Field(
        default="unknown", description="where uid came from; unknown when uid is null"
    )
    counts: dict[str, int] = Field(description="objects read per kind")
    kind_states: dict[str, KindState] = Field(description="every kind the auditor reads")
    skipped: dict[str, int] = Field(description="'<apiVersion> <kind>' not audited -> count")


class CollectionProblemEntry(Part):
    """Something the source could not read or trust, located as far as known."""

    reason: str
    file: str | None
    kind: str | None
    namespace: str | None
    name: str | None
    field: str | None
    kinds: list[str] = Field(description="kinds whose data is incomplete because of it")


class CheckEntry(Part):
    """One check of the catalog."""

    id: str
    title: str
    family: str
    severity: Severity = Field(description="default severity of a FAIL")
    rationale: str
    remediation: str
    references: list[str]
    requires: list[str] = Field(description="kinds whose complete list the check needs")
    scope: str = Field(description="vm or platform")


class WaiverSelector(Part):
    """Which VMs a waiver covers: namespace and name globs, equal labels."""

    namespace: str
    name: str
    labels: dict[str, str]


class WaiverRecord(Part):
    """A waiver as put on a WAIVED finding."""

    id: str
    check_id: str
    selector: WaiverSelector
    reason: str
    approver: str
    created: str = Field(description="RFC 3339 UTC")
    expires: str = Field(description="RFC 3339 UTC")


class WaiverEntry(WaiverRecord):
    """A configured waiver in the appendix, with its state at audit time."""

    state: str = Field(description="active, expired or pending")
    days_left: int = Field(
        description="whole days until expiry, negative once expired (-15: expired 15 whole "
        "days before the audit; 0: within a day of it)"
    )


class FindingEntry(Part):
    """The result of one check on one VM (or on the platform).

    ``evidence`` holds JSON values only: object names, UIDs, RFC 3339 times,
    ages in hours. ``waiver`` is present only on WAIVED findings.
    """

    check_id: str
    status: Status
    severity: Severity
    message: str
    evidence: dict[str, Any]
    basis: Basis | None = Field(
        default=None, description="observed or inferred; null when not stated"
    )
    waiver: WaiverRecord | None = Field(
        default=None, exclude_if=_absent, description="only on WAIVED findings"
    )
    remediation: str | None = Field(
        default=None,
        description="the fix filled with this VM's values (namespace, names, running UUID, "
        "Schedule or BackupStorageLocation), ready to paste; set on FAIL and ERROR, null otherwise",
    )


class RootCauseEntry(Part):
    """One gap on one VM and the FAIL/ERROR findings it produces (``docs/reports.md``).

    ``id`` is a named cause (e.g. ``no-usable-backup``) or a check id lower-cased
    when the finding is its own cause; ``check_ids`` lists its findings, the head
    first; ``severity`` is the worst among them; ``first_action`` is the head's fix.
    """

    id: str
    title: str
    severity: Severity
    check_ids: list[str]
    first_action: str
    age_hours: float | None = Field(
        default=None,
        description="how long the gap has been open as far as evidence shows: hours since the "
        "newest usable backup, or since the VM was created when it never had one; null when "
        "unknown",
    )


class NewestBackup(Part):
    """The newest usable Backup holding the VM."""

    name: str
    phase: str | None
    completed: str | None = Field(description="RFC 3339 UTC")
    data_time: str | None = Field(
        default=None,
        description="(1.3) RFC 3339 UTC: the instant age_hours counts from, the Backup's "
        "start (its data is no newer; completion if the status contradicts itself); null in "
        "older reports",
    )
    age_hours: float | None = Field(description="hours from data_time to the audit time")
    expires: str | None = Field(
        default=None,
        description="(1.4) RFC 3339 UTC: when Velero may delete this restore point (its "
        "status.expiration, else creationTimestamp + spec.ttl: expires_from says which); "
        "null when neither is set or in older reports",
    )
    expires_from: Literal["status.expiration", "spec.ttl"] | None = Field(
        default=None,
        description="(1.4) status.expiration: recorded by Velero (observed); spec.ttl: "
        "computed from the creation time and the TTL (inferred); null with expires null",
    )


class BackupSummary(Part):
    """Backup facts for tables (null values when unknown)."""

    newest_usable: NewestBackup | None = Field(
        description="the newest restore point: a usable backup holding the VM object and every "
        "disk's data on evidence"
    )
    rpo_hours: float
    within_rpo: bool | None = Field(
        description="the newest restore point is within the RPO; false when none is (backups "
        "holding the object only count as none); null when no backup holds the VM, or a backup "
        "within the RPO may hold the disks without evidence"
    )
    restore_points: int = Field(
        description="usable backups holding the VM object and every disk's data on evidence"
    )
    data_captured: bool | None = Field(
        default=None,
        description="true when a restore point (object and every disk's data) exists; false when "
        "no usable backup holds the disk data (no backup, or the definition only); null when "
        "unknown",
    )


class ObjectRef(Part):
    """A referenced object by kind and name (instancetype, preference)."""

    model_config = ConfigDict(frozen=True, extra="allow")

    kind: str | None = None
    name: str | None = None


class RevisionRef(Part):
    """The instancetype or preference a VM resolved, and from where."""

    what: str = Field(description="instancetype or preference")
    kind: str
    name: str
    revision: str | None = Field(description="the pinned ControllerRevision name")
    resolved_from: str = Field(description="revision, live or missing")
    note: str


#: Where a NIC's binding on the recovery card comes from (``auditor.inventory.vmspec.Nic``
#: ``binding_from``): ``vm`` read from the VM spec; ``kubevirt-cr`` and ``inferred`` for the
#: interface KubeVirt adds to a VM listing none (pkg/network/vmispec/defaults.go
#: ``SetDefaultNetworkInterface``), from the KubeVirt CR or, unread, its built-in default.
BindingFrom = Literal["vm", "kubevirt-cr", "inferred"]


class NicIdentityCard(Part):
    """One NIC's network identity: binding, MAC, NAD and whether its addresses are static."""

    name: str
    binding: str | None
    binding_from: BindingFrom | None = Field(
        default=None, description="(1.5) vm, kubevirt-cr or inferred, as the NIC's binding_from"
    )
    mac: str | None
    network: str | None = Field(description="pod or multus")
    nad: str | None = Field(description="namespace/name of the NetworkAttachmentDefinition")
    nad_found: bool | None
    nad_config: dict[str, Any] | None = Field(description="cni_type, bridge, vlan, topology...")
    static_addresses: bool | None = Field(description="from cloud-init; null when unknown")


class NetworkIdentityCard(Part):
    """Hostname, subdomain, NICs, the Services selecting the VM's pods and their Routes."""

    hostname: str | None
    subdomain: str | None
    nics: list[NicIdentityCard]
    services: list[dict[str, Any]]
    routes: list[dict[str, Any]] = Field(default_factory=list)


class FirmwareCard(Part):
    """Firmware identity and boot state; ``resolved_from`` says where values came from."""

    uuid: str | None
    serial: str | None
    bootloader: str = Field(description="efi, bios or unknown")
    secure_boot: bool | None
    efi_persistent: bool | None
    tpm: bool | None = Field(
        description="null when unknown: the VM sets no TPM and its preference was not read, or "
        "the VM's spec was not read"
    )
    tpm_persistent: bool | None
    machine_type: str | None
    resolved_from: dict[str, str] = Field(
        description="field -> vm | preference | default | vmi (uuid only: the running VMI's, "
        "not pinned in the VM)"
    )


class PvcCard(Part):
    """A PVC behind a disk (or the persistent-state PVC)."""

    name: str
    size: str | None = Field(description="quantity as written, e.g. 40Gi")
    size_bytes: int | None
    storage_class: str | None
    volume_mode: str
    access_modes: list[str]
    reclaim_policy: str | None
    volume_name: str | None


class _CopyBase(Part):
    """A restorable copy of a disk's data (the newest one is on the card)."""

    name: str
    time: str | None = Field(
        description="RFC 3339 UTC: when the copy's data was taken, the instant age_hours "
        "counts from (a Backup's start, a snapshot's creationTime)"
    )
    off_cluster: bool
    survives_namespace_loss: bool
    age_hours: float | None


class BackupCopy(_CopyBase):
    """A usable Velero Backup that captured the disk's PVC."""

    kind: Literal["Backup"]
    basis: str | None = Field(description="observed or inferred capture")


class VolumeSnapshotCopy(_CopyBase):
    """A ready CSI VolumeSnapshot of the disk's PVC."""

    kind: Literal["VolumeSnapshot"]
    deletion_policy: str | None = Field(description="its VolumeSnapshotContent's deletionPolicy")


class VmSnapshotCopy(_CopyBase):
    """A ready VirtualMachineSnapshot including the disk."""

    kind: Literal["VirtualMachineSnapshot"]
    indications: list[Any]
    restorable: bool
    not_restorable_reason: str | None


#: The newest copy of a disk, by kind.
CopyCard = Annotated[BackupCopy | VolumeSnapshotCopy | VmSnapshotCopy, Field(discriminator="kind")]


class VolumeRef(Part):
    """The volume behind a disk: its type (dataVolume, persistentVolumeClaim, ...) and name."""

    type: str | None
    name: str | None


class DiskCard(Part):
    """One disk, in boot order."""

    name: str
    boot_order: int | None
    device: str | None
    bus: str | None
    bus_from: str | None
    serial: str | None
    volume: VolumeRef
    pvc: PvcCard | None
    newest_copy: CopyCard | None


class NetworkRef(Part):
    """The network of a NIC: ``pod`` or ``multus`` (with ``ns/nad``)."""

    type: str | None
    name: str | None


class NicCard(Part):
    """One NIC."""

    name: str
    mac: str | None
    #: ``vmi`` when the VM pins no MAC and ``mac`` is the one the running guest has (a restore
    #: keeps it only when it is pinned); absent when ``mac`` is the VM's own (schema 1.3)
    mac_from: str | None = Field(
        default=None, exclude_if=_absent, description="vmi: not pinned, the running MAC"
    )
    model: str | None
    model_from: str | None
    binding: str | None
    binding_from: BindingFrom | None = Field(
        default=None,
        description="(1.5) where binding comes from: vm (the interface's own binding key in "
        "the VM spec, read); kubevirt-cr (an interface the VM spec does not list, which "
        "KubeVirt adds on the pod network, bound as the KubeVirt CR's "
        "defaultNetworkInterface says); inferred (such an added interface with no KubeVirt "
        "CR read whole: KubeVirt's built-in default bridge, inferred); null in older reports",
    )
    network: NetworkRef


class CardVm(Part):
    """The VM a recovery card describes."""

    namespace: str
    name: str
    uid: str | None
    created: str | None = Field(description="RFC 3339 UTC")
    run_strategy: str | None


class RecoveryCard(Part):
    """Identity a restorer needs even when the cluster is gone; never secret values."""

    vm: CardVm
    owner: str
    instancetype: ObjectRef | None
    preference: ObjectRef | None
    revisions: list[RevisionRef] = Field(description="sorted by what")
    network_identity: NetworkIdentityCard
    firmware: FirmwareCard
    disks: list[DiskCard] = Field(description="boot order first, then as listed")
    persistent_state_pvc: PvcCard | None
    nics: list[NicCard]


class VmEntry(Part):
    """One audited VM: identity, readiness, backup summary, findings, recovery card."""

    namespace: str
    name: str
    uid: str | None
    owner: str
    os: str = Field(description="windows, linux or unknown")
    policy: str = Field(description="recovery policy whose thresholds applied")
    readiness: Readiness
    inferred: list[str] = Field(
        default_factory=list,
        description="check ids whose PASS rests on inference (configuration alone, no record "
        "that it happened), sorted; a READY with any is READY partly on inference",
    )
    labels: dict[str, str]
    annotations: dict[str, str]
    backup: BackupSummary
    findings: list[FindingEntry] = Field(description="one per check, sorted by check_id")
    root_causes: list[RootCauseEntry] = Field(
        default_factory=list,
        description="every FAIL/ERROR finding in exactly one root cause; worst severity first",
    )
    recovery_card: RecoveryCard


class Summary(Part):
    """Counts over the VMs in the report."""

    vms: int
    readiness: ReadinessCounts
    findings_by_status: dict[Status, int]
    fails_by_severity: dict[Severity, int]
    fails_by_check: dict[str, int]
    vms_by_root_cause: dict[str, int] = Field(
        default_factory=dict, description="root cause id -> VMs with that root cause"
    )
    by_namespace: dict[str, ReadinessCounts]
    by_owner: dict[str, ReadinessCounts]


class AuditReport(Part):
    """The report.json envelope: every artifact is rendered from this."""

    schema_version: str = SCHEMA_VERSION
    run: Run
    cluster: Cluster
    collection_problems: list[CollectionProblemEntry]
    checks: list[CheckEntry] = Field(description="the check catalog, sorted by id")
    platform_findings: list[FindingEntry] = Field(description="cluster-level findings")
    waivers: list[WaiverEntry] = Field(description="every configured waiver, sorted by id")
    summary: Summary
    vms: list[VmEntry] = Field(description="sorted by namespace, name")


def report_schema() -> dict[str, Any]:
    """Return the JSON Schema (draft 2020-12) of report.json, as serialised."""
    schema = AuditReport.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = f"report.json (schema_version {SCHEMA_VERSION})"
    return schema
