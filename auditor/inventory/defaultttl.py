"""How long Velero keeps the Backups of a Schedule whose template sets no ``ttl``.

Velero's backup controller gives a Backup without ``spec.ttl`` (or with 0) the server's
``--default-backup-ttl``, 720 h unless set, and computes ``status.expiration`` from it
(velero pkg/controller/backup_controller.go ``prepareBackupRequest``,
https://github.com/vmware-tanzu/velero/blob/main/pkg/controller/backup_controller.go;
pkg/cmd/server/config/config.go ``defaultBackupTTL``). OADP passes
``--default-backup-ttl`` from the DPA's ``spec.configuration.velero.args.default-backup-ttl``,
an integer of nanoseconds (oadp-operator pkg/velero/server/args.go ``GetArgs``;
api/v1alpha1/dataprotectionapplication_types.go ``DefaultBackupTTL *time.Duration``,
https://github.com/openshift/oadp-operator/blob/master/pkg/velero/server/args.go), and
passes no flag when the field is unset. Red team r41c: a DPA giving 24 h left a Schedule
without a template ttl read as keeping its Backups 720 h (RR-BKP-006 PASS).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from auditor.kubevalues import dig

__all__ = ["VELERO_DEFAULT_TTL", "server_default_ttl"]

VELERO_DEFAULT_TTL = timedelta(hours=720)
_UNSUPPORTED_ARGS = "oadp.openshift.io/unsupported-velero-server-args"


def _dpa_ttl(dpa: dict[str, Any]) -> tuple[timedelta | None, str]:
    """``(ttl, why)`` one DPA gives Velero's server; ttl None when it cannot be told."""
    annotations = dig(dpa, "metadata", "annotations")
    if isinstance(annotations, dict) and _UNSUPPORTED_ARGS in annotations:
        return None, "its server arguments come from a ConfigMap that is not read"
    args = dig(dpa, "spec", "configuration", "velero", "args")
    if args is None:
        return VELERO_DEFAULT_TTL, "no --default-backup-ttl passed: Velero's default, 720 h"
    value = args.get("default-backup-ttl") if isinstance(args, dict) else "?"
    if value is None:
        return VELERO_DEFAULT_TTL, "no args.default-backup-ttl: Velero's default, 720 h"
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None, f"its velero.args.default-backup-ttl is no duration ({value!r})"
    return timedelta(microseconds=value // 1000), f"velero.args.default-backup-ttl={value}"


def server_default_ttl(dpas: list[dict[str, Any]], namespace: str) -> tuple[timedelta | None, str]:
    """The ttl Velero in ``namespace`` gives a Backup that sets none, and where that is read:
    ``(ttl, source)``; ttl None (the source saying why) when it cannot be told. ``dpas``: the
    DataProtectionApplications read. Without one in ``namespace`` (plain Velero, whose
    Deployment arguments are not read): Velero's built-in 720 h, as before."""
    own = [d for d in dpas if dig(d, "metadata", "namespace") == namespace]
    if not own:
        return VELERO_DEFAULT_TTL, "Velero's default, 720 h (no DataProtectionApplication)"
    said = {_dpa_ttl(d) for d in own}
    if len({ttl for ttl, _ in said}) > 1:
        return None, f"the DataProtectionApplications in {namespace} disagree on it"
    ttl, why = sorted(said, key=lambda s: s[1])[0]
    return ttl, f"DataProtectionApplication in {namespace}: {why}"
