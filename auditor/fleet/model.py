"""The typed fleet roll-up (``fleet.json``): one entry per cluster, root causes, owners.

Serialised by :func:`auditor.fleet.render.dump_fleet_json` (keys sorted, two-space
indent, UTF-8, trailing newline); its JSON Schema is :func:`fleet_schema` (shipped as
``docs/fleet-schema.json``, prose in ``docs/fleet.md``). Times are RFC 3339 UTC strings
with a ``Z`` suffix; ages are hours.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from auditor.envelope.model import Part
from auditor.models import Readiness, Severity

__all__ = [
    "FLEET_SCHEMA_VERSION",
    "ClusterStatus",
    "Signature",
    "FleetVerification",
    "FleetRun",
    "FleetPeriodFigures",
    "FleetCluster",
    "FleetRootCause",
    "FleetOwner",
    "FleetSummary",
    "FleetReport",
    "fleet_schema",
]

#: Version of the fleet.json shape; bump the minor for added fields, the major for changes.
FLEET_SCHEMA_VERSION = "1.2"

#: Worst first: ``unreadable`` (no trustworthy report), ``unverified`` (the manifest or the
#: signature does not match), ``incomplete`` (the run says it read only part of the
#: cluster; with ``--period``, or the month's figures rest on less than every archived run
#: of the cluster, each whole), ``stale`` (older than ``max_age_hours``), ``current``. Only ``current``
#: clusters count READY VMs as ready.
ClusterStatus = Literal["unreadable", "unverified", "incomplete", "stale", "current"]
CLUSTER_STATUSES: tuple[ClusterStatus, ...] = (
    "unreadable",
    "unverified",
    "incomplete",
    "stale",
    "current",
)

ReadinessCounts = dict[Readiness, int]
Signature = Literal["verified", "failed", "unsigned", "not-checked"]


class FleetVerification(Part):
    """How the run was checked against its ``manifest.json`` (``auditor verify``'s check)."""

    manifest: Literal["verified", "failed", "absent"] = Field(
        description="every artifact's size and SHA-256 match manifest.json; absent: no manifest"
    )
    signature: Signature = Field(
        description="Ed25519 signature of manifest.json; not-checked: no --public-key given"
    )
    detail: list[str] = Field(description="what differed, one line each (empty when clean)")


class FleetRun(Part):
    """The run a cluster's figures come from."""

    id: str
    audit_time: str = Field(description="RFC 3339 UTC")
    age_hours: float = Field(description="hours from audit_time to the fleet's reference time")
    complete: bool | None = Field(description="run.complete of the report; null when absent")
    location: str = Field(description="archive location of the run folder")
    tool_version: str | None
    schema_version: str | None = Field(description="report.json schema_version")


class FleetPeriodFigures(Part):
    """With ``--period``: the month's figures of this cluster (``auditor report --period``)."""

    runs: int = Field(description="full-fleet runs of the cluster in the period")
    vm_audits: int
    rpo_attainment: float | None = Field(description="0..1; null without audits")
    rpo_unknown: int = Field(description="VM audits whose RPO state was unknown")
    complete: bool = Field(
        description="the period report's complete: every archived run of the month was "
        "counted and each read its whole cluster (false makes the cluster incomplete)"
    )
    incomplete_reasons: list[str] = Field(
        description="why not complete, one line each (the period report's incomplete_reasons)"
    )
    partial: bool = Field(description="the month had not ended at the reference time")
    as_of: str = Field(description="RFC 3339 UTC: end of the month, or earlier when partial")


class FleetCluster(Part):
    """One cluster under the archive prefix and the run that stands for it."""

    name: str = Field(description="cluster segment of the archive keys")
    cluster_uid: str | None = Field(
        description="cluster identity (kube-system Namespace uid) of the run that stands "
        "(with --period: of the month's runs); null when unknown: no readable run, none "
        "recorded (archived before identities were), or two identities under the name"
    )
    status: ClusterStatus
    problems: list[str] = Field(description="why the status is not current, one line each")
    run: FleetRun | None = Field(description="null when no readable run was found")
    verification: FleetVerification | None
    period: FleetPeriodFigures | None = Field(description="only with --period")
    vms: int
    readiness: ReadinessCounts = Field(description="VMs per readiness as the run reported")
    readiness_counted: ReadinessCounts = Field(
        description="as counted fleet-wide: READY becomes UNKNOWN unless the status is current"
    )
    platform_failures: int = Field(description="cluster-level FAIL/ERROR findings")


class FleetRootCause(Part):
    """A root cause across the fleet: how many VMs in which clusters it keeps from ready."""

    id: str = Field(description="root cause id; a check id lower-cased for older reports")
    title: str
    severity: Severity = Field(description="the highest severity seen")
    check_ids: list[str] = Field(description="checks whose FAIL/ERROR findings it groups")
    first_action: str = Field(
        description="what to do first: the check catalog's remediation of its first check"
    )
    example_vm: str = Field(description="'<cluster> <namespace>/<name>' of the first VM seen")
    example_action: str | None = Field(
        description="that VM's first action, filled in with its names (null when absent)"
    )
    vms: int = Field(description="VMs it affects, fleet-wide")
    clusters: dict[str, int] = Field(description="cluster -> VMs affected there")
    derived: bool = Field(
        description="true when built from failing check ids (report without root_causes)"
    )


class FleetOwner(Part):
    """An owner's VMs across every cluster, readiness as counted fleet-wide."""

    owner: str
    clusters: list[str]
    vms: int
    readiness: ReadinessCounts
    not_ready_share: float = Field(description="0..1: VMs not counted READY / VMs")
    top_root_cause: str | None = Field(
        description="id of its most severe root cause (most VMs among equals)"
    )


class FleetSummary(Part):
    """Fleet-wide counts."""

    clusters: int
    clusters_by_status: dict[ClusterStatus, int]
    runs_verified: int = Field(description="runs whose manifest verified (signature too, if asked)")
    vms: int
    readiness: ReadinessCounts = Field(description="sum of readiness_counted over clusters")


class FleetReport(Part):
    """``fleet.json``: the latest (or one period's) report of every cluster, rolled up."""

    schema_version: str = FLEET_SCHEMA_VERSION
    generated_at: str = Field(description="the reference time (RFC 3339 UTC)")
    source: str = Field(description="the archive: s3://BUCKET/PREFIX or a directory")
    period: str | None = Field(description="YYYY-MM with --period, else null (latest runs)")
    max_age_hours: float = Field(description="a run older than this is stale")
    signatures_checked: bool = Field(description="public keys were given")
    summary: FleetSummary
    clusters: list[FleetCluster] = Field(description="sorted by name")
    root_causes: list[FleetRootCause] = Field(
        description="highest severity first, then most VMs, id"
    )
    owners: list[FleetOwner] = Field(description="worst first: most VMs not ready")
    problems: list[str] = Field(description="archive entries that could not be read")


def fleet_schema() -> dict[str, Any]:
    """Return the JSON Schema (draft 2020-12) of fleet.json, as serialised."""
    schema = FleetReport.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = f"fleet.json (schema_version {FLEET_SCHEMA_VERSION})"
    return schema
