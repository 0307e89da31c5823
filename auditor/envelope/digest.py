"""The input digest: what a run read and what it could not read, as one sha256.

The run id is the audit time plus the digest's first 8 hex digits
(:func:`auditor.envelope.build.assemble_envelope`), and publishing keys the
evidence by it. Two runs whose verdicts can differ must therefore get different
digests: an audit that read every file and one that could not read one of them
(a malformed file, a forbidden list, an unreachable bucket) hold the same
objects, so the digest covers the record of what was missing too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from auditor import __version__
from auditor.config import AuditSettings
from auditor.jsonfast import canonical_lines
from auditor.kinds import KINDS
from auditor.sources.base import ClusterData, KindState
from auditor.sources.bucket.cache import contents_to_dict

__all__ = ["input_digest", "run_key", "unread_record"]

#: Objects serialised per digest batch (bounds the joined bytes to a few MB).
_DIGEST_BATCH = 2000


def input_digest(data: ClusterData) -> str:
    """``sha256:<hex>`` over the (already secret-stripped) objects, canonical JSON, one line
    each, kinds sorted; then one line of :func:`unread_record` when it is not empty."""
    h = hashlib.sha256()
    for kind in sorted(data.objects):
        objs = data.objects[kind]
        for start in range(0, len(objs), _DIGEST_BATCH):
            h.update(canonical_lines(objs[start : start + _DIGEST_BATCH]))
    record = unread_record(data)
    if record:
        # A line no object gives: objects are Kubernetes mappings with apiVersion and kind.
        h.update(canonical_lines([{"unread": record}]))
    return "sha256:" + h.hexdigest()


def run_key(
    data: ClusterData,
    digest: str,
    settings: AuditSettings,
    owner: str | None,
    formats: Sequence[str] | None = None,
) -> str:
    """Hex sha256 of ``digest`` (:func:`input_digest`) and of what else shapes the report:
    the tool version, the source (type and location), thresholds, policies, waivers,
    ownership rules, the configured cluster name and the ``--owner`` filter. The run id is
    the audit time plus its first 8 hex digits, so an ``--owner`` run, a run with another
    RPO or another tool version at the same instant is not taken for a conflicting copy of
    the other; the same input and settings keep one id (re-publishing is idempotent).

    ``formats``: the artifact formats the run writes (any order, any case), None when the
    envelope is not written as a run. A run folder is sealed as a whole (manifest.json
    lists every artifact), so two runs of one instant with other ``--format`` sets are two
    pieces of evidence: each gets its own id and is archived beside the other, rather than
    the second being quarantined as a conflicting copy of the first."""
    shaping = {
        "input_digest": digest,
        "tool_version": __version__,
        "source": [data.info.type, data.info.location],
        "owner_filter": owner,
        "cluster_name": settings.cluster_name,
        "ownership": settings.ownership.model_dump(mode="json"),
        "thresholds": settings.thresholds.model_dump(mode="json"),
        "policies": [p.model_dump(mode="json") for p in settings.policies],
        "waivers": [w.model_dump(mode="json") for w in settings.waivers],
    }
    if formats is not None:
        shaping["formats"] = sorted({f.strip().lower() for f in formats})
    return hashlib.sha256(canonical_lines([shaping])).hexdigest()


def unread_record(data: ClusterData) -> dict[str, Any]:
    """What the verdicts rest on besides the objects read; empty when every list was complete.

    ``states``: every audited kind whose list is not complete (unavailable, partial, not
    installed); ``problems``: the source's collection problems (report.json form; files are
    named relative to the export, so the same export copied elsewhere keeps its digest);
    ``conflicts``: objects defined twice with different content; ``read_in``: the
    namespaces a kind was limited to; ``backup_storage``: what each bucket gave, without
    the request counters (a cached read and a fresh one give the same facts).
    """
    out: dict[str, Any] = {}
    states = {
        k.kind: str(data.state(k.kind))
        for k in sorted(KINDS, key=lambda k: k.kind)
        if data.state(k.kind) is not KindState.COMPLETE
    }
    if states:
        out["states"] = states
    if data.problems:
        out["problems"] = [p.to_dict() for p in data.problems]
    if data.conflicts:
        out["conflicts"] = [list(c) for c in sorted(data.conflicts)]
    if data.read_in:
        out["read_in"] = {k: sorted(v) for k, v in sorted(data.read_in.items())}
    if data.storage_locations is not None:
        out["backup_storage"] = {
            "locations": {
                name: [
                    s.bucket,
                    s.prefix,
                    s.endpoint,
                    s.state,
                    s.detail,
                    s.versioning,
                    s.object_lock,
                    s.lock_mode,
                    s.lock_days,
                    sorted(s.bucket_only),
                ]
                for name, s in sorted(data.storage_locations.items())
            },
            "backups": {
                name: contents_to_dict(c)
                for name, c in sorted((data.backup_contents or {}).items())
            },
        }
    return out
