"""Leave out of an audit at instant T the objects created after T.

An export (or a live read) shows the cluster as it was when it was read. Audited at an
earlier ``--at``, an object whose ``metadata.creationTimestamp`` is after that instant did
not exist then: a NetworkAttachmentDefinition, BackupStorageLocation or Schedule created
later would pass a check for a VM that lacked it at T, and a VM created later would be
judged at an instant it did not exist (trial ux27: ``--at 2000-01-01`` judged five VMs
created in 2026 with no word of it). Kubernetes sets ``creationTimestamp`` when the object
is created and never changes it (k8s.io/apimachinery pkg/apis/meta/v1/types.go,
ObjectMeta.CreationTimestamp: "It represents the server time when this object was created
... Populated by the system. Read-only"). Each kind left out is named as a collection
problem (file, first object, field), so the report says it is not the cluster as read.
An unreadable timestamp is left to the field validators: the object stays.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from auditor.kubevalues import dig, format_time, parse_rfc3339
from auditor.models import CollectionProblem
from auditor.sources.base import ClusterData

__all__ = ["leave_out_after", "CREATED_AFTER"]

#: The words every problem of :func:`leave_out_after` carries (the CLI warns on them).
CREATED_AFTER = "created after the audit instant"


def leave_out_after(data: ClusterData, at: datetime) -> dict[str, int]:
    """Remove from ``data`` every object created after ``at`` (UTC) and add one collection
    problem per kind naming how many, the first and its ``metadata.creationTimestamp``;
    return kind -> number left out (empty when none: then ``data`` is untouched)."""
    left_out: dict[str, int] = {}
    for kind in sorted(data.objects):
        kept: list[tuple[datetime | None, dict[str, Any]]] = []
        later: list[tuple[datetime, dict[str, Any]]] = []
        for obj in data.objects[kind]:
            created = parse_rfc3339(dig(obj, "metadata", "creationTimestamp"))
            if created is not None and created > at:
                later.append((created, obj))
            else:
                kept.append((created, obj))
        if not later:
            continue
        data.objects[kind] = [obj for _, obj in kept]
        left_out[kind] = len(later)
        created, first = min(later, key=lambda p: (p[0], _ref(p[1])))
        ns, name = (
            str(dig(first, "metadata", "namespace") or ""),
            str(dig(first, "metadata", "name") or ""),
        )
        data.problems.append(
            CollectionProblem(
                reason=(
                    f"{len(later)} {kind} object(s) {CREATED_AFTER} {format_time(at)} left "
                    f"out (the first, {_ref(first)}, created {format_time(created)}): they "
                    "did not exist then, so they are no evidence at that instant; the input "
                    "shows the cluster as it was read, later than the audit instant"
                ),
                file=data.origins.get((kind, ns, name)),
                kind=kind,
                namespace=ns or None,
                name=name or None,
                field="metadata.creationTimestamp",
            )
        )
    return left_out


def _ref(obj: dict[str, Any]) -> str:
    ns, name = dig(obj, "metadata", "namespace"), dig(obj, "metadata", "name")
    return f"{ns}/{name}" if ns else str(name)
