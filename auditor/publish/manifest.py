"""``manifest.json``: what a published run consists of, with a SHA-256 per artifact.

Shape (``manifest_version`` "1.0", or "1.1" with ``cluster_uid``; keys sorted, two-space indent, UTF-8)::

    {
      "manifest_version": "1.0",
      "run": {"id": "20261130T060000Z-3f2a9c1b", "audit_time": "2026-11-30T06:00:00Z",
              "tool_version": "0.1.0", "input_digest": "sha256:<hex>",
              "complete": true, "owner_filter": null},
      "cluster": "ocp-prod-east",
      "cluster_uid": "3c1e...-...",            // manifest_version 1.1 only: report.json's
                                               // cluster.uid (kube-system's uid) or null
      "summary": {"vms": 12, "readiness": {"READY": 2, "AT_RISK": 2, "NOT_READY": 8, "UNKNOWN": 0}},
      "artifacts": [{"path": "report.json", "size": 48213, "sha256": "<hex>"}, ...]
    }

``run`` is copied from report.json's ``run`` section; ``artifacts`` lists every
regular file under the run directory (recursively, ``/``-separated paths,
sorted), except ``manifest.json`` itself and its signature ``manifest.json.sig``
(:mod:`auditor.publish.signing`). ``cluster_uid`` is written when report.json has
``cluster.uid`` (reports from this version on; null when the identity is unknown); a
manifest without the key (version 1.0) was written before identities were recorded, and the
same old run folder still seals to the same bytes. :func:`seal_run` writes both into the run folder. The same run directory always gives
the same manifest bytes, so re-publishing is idempotent.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from auditor.jsonfast import loads
from auditor.publish.errors import RunDirError
from auditor.publish.jsondoc import artifact_list, load_object
from auditor.yamlstrict import paused_gc

__all__ = [
    "check_seal",
    "MANIFEST_NAME",
    "SIGNATURE_NAME",
    "seal_run",
    "clear_sealed_run",
    "foreign_files",
    "Artifact",
    "RunManifest",
    "build_manifest",
    "cluster_segment",
    "run_prefix",
    "sha256_hex",
]

MANIFEST_NAME = "manifest.json"
SIGNATURE_NAME = "manifest.json.sig"
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
_RUN_ID = re.compile(r"^[0-9]{8}T[0-9]{6}Z-[0-9a-f]+$")


def file_sha256(path: Path) -> tuple[int, str]:
    """``(size in bytes, hex sha256)`` of the file at ``path``, read a block at a time into
    one reused buffer (:func:`hashlib.file_digest`): a 10,000-VM report.json is 300 MB, which
    read whole took as much fresh memory, page by page, to hash what was just written.

    Raises:
        OSError: the file cannot be read.
    """
    with path.open("rb") as stream:
        digest = hashlib.file_digest(stream, "sha256")
        return stream.tell(), digest.hexdigest()


def sha256_hex(data: bytes) -> str:
    """Lowercase hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def cluster_segment(name: Any) -> str:
    """Key-safe cluster name: report's ``cluster.name`` or ``unknown-cluster``."""
    text = _SAFE.sub("-", str(name)).strip("-.") if name else ""
    return text or "unknown-cluster"


def run_prefix(cluster: str, run_id: str, audit_time: str) -> str:
    """Key prefix of a run: ``<cluster>/<YYYY>/<MM>/<DD>/<run-id>`` (audit time's UTC date)."""
    return f"{cluster}/{audit_time[0:4]}/{audit_time[5:7]}/{audit_time[8:10]}/{run_id}"


@dataclass(frozen=True)
class Artifact:
    """One file of a run: ``path`` relative to the run dir (``/``-separated), bytes, hex digest."""

    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class RunManifest:
    """A parsed run directory: identity, artifacts and the manifest document."""

    run_id: str
    audit_time: str
    cluster: str
    artifacts: tuple[Artifact, ...]
    document: dict[str, Any]

    @property
    def run_prefix(self) -> str:
        """``<cluster>/<YYYY>/<MM>/<DD>/<run-id>`` (date of the audit time, UTC)."""
        return run_prefix(self.cluster, self.run_id, self.audit_time)

    def key(self, path: str) -> str:
        """Store key of an artifact path within this run."""
        return f"{self.run_prefix}/{path}"

    def to_bytes(self) -> bytes:
        """Canonical JSON bytes of the manifest (sorted keys, two-space indent, newline)."""
        return (json.dumps(self.document, indent=2, sort_keys=True) + "\n").encode()


def _read_report(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "report.json"
    try:
        raw = path.read_bytes()
        with paused_gc():  # 250 MB at 10,000 VMs: see paused_gc
            report = loads(raw)  # not UTF-8: UnicodeDecodeError, as before
    except FileNotFoundError:
        raise RunDirError(f"{path}: not found; is {run_dir} an audit run directory?") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunDirError(f"{path}: cannot read report: {exc}") from None
    if not isinstance(report, dict):
        raise RunDirError(f"{path}: top level must be an object")
    return report


def _run_field(report: dict[str, Any], name: str, path: Path) -> str:
    value = (report.get("run") or {}).get(name)
    if not isinstance(value, str) or not value:
        raise RunDirError(f"{path}: field run.{name} is missing or not a string")
    return value


def build_manifest(run_dir: Path, *, report: dict[str, Any] | None = None) -> RunManifest:
    """Hash every artifact of ``run_dir`` and build its manifest.

    ``report``: the document ``run_dir/report.json`` was just written from, when the
    caller has it (a 10,000-VM report.json is 250 MB to parse again); else it is read.

    Raises:
        RunDirError: report.json is missing/invalid, or run.id / run.audit_time
            is missing or malformed.
    """
    if report is None:
        report = _read_report(run_dir)
    report_path = run_dir / "report.json"
    run_id = _run_field(report, "id", report_path)
    audit_time = _run_field(report, "audit_time", report_path)
    if not _RUN_ID.match(run_id):
        raise RunDirError(f"{report_path}: run.id {run_id!r} is not '<YYYYMMDDTHHMMSSZ>-<hex>'")
    if not re.match(r"^\d{4}-\d{2}-\d{2}T", audit_time):
        raise RunDirError(f"{report_path}: run.audit_time {audit_time!r} is not RFC 3339")
    artifacts = []
    for file in sorted(run_dir.rglob("*")):
        rel = file.relative_to(run_dir).as_posix()
        if not file.is_file() or file.is_symlink() or rel in (MANIFEST_NAME, SIGNATURE_NAME):
            continue
        size, digest = file_sha256(file)
        artifacts.append(Artifact(path=rel, size=size, sha256=digest))
    run = report["run"]
    summary = report.get("summary") or {}
    about = report.get("cluster") or {}
    cluster = cluster_segment(about.get("name") if isinstance(about, dict) else None)
    document: dict[str, Any] = {
        "manifest_version": "1.0",
        "run": {
            "id": run_id,
            "audit_time": audit_time,
            "tool_version": run.get("tool_version"),
            "input_digest": run.get("input_digest"),
            "complete": run.get("complete"),
            "owner_filter": run.get("owner_filter"),
        },
        "cluster": cluster,
        "summary": {"vms": summary.get("vms"), "readiness": summary.get("readiness")},
        "artifacts": [{"path": a.path, "size": a.size, "sha256": a.sha256} for a in artifacts],
    }
    if isinstance(about, dict) and "uid" in about:
        # the cluster's identity (kube-system's uid, auditor.sources.identity.cluster_uid):
        # two clusters sharing a name are told apart by it in the archive
        uid = about["uid"]
        document["cluster_uid"] = uid if isinstance(uid, str) and uid else None
        document["manifest_version"] = "1.1"
    return RunManifest(run_id, audit_time, cluster, tuple(artifacts), document)


def check_seal(run_dir: Path, *, added: Collection[str] = ()) -> None:
    """Refuse a run folder whose files no longer match the ``manifest.json`` sealing it.

    A file the manifest lists must be unchanged: re-sealing a changed report.json would
    publish (and sign) it as authentic evidence. A file it does not list may be only one the
    caller itself just added (``added``: relative POSIX paths, ``trend.json`` written by
    ``publish``): any other was put there after the run (a note, a copied report, a symlink)
    and the folder is sealed again before publishing, so it would be digested, signed and
    published as the run's evidence (new-user trial ux30). A folder without a manifest
    (written by an older version) passes.

    Raises:
        RunDirError: the manifest is unreadable, a file it lists is missing or changed, or a
            file it does not list is in the folder (each named, the first five).
    """
    path = run_dir / MANIFEST_NAME
    if not path.is_file():
        return
    try:
        listed = {
            str(a["path"]): str(a["sha256"]) for a in artifact_list(load_object(path.read_bytes()))
        }
    except OSError as exc:
        raise RunDirError(
            f"{path}: unreadable manifest ({exc.strerror or exc}); run the audit again"
        ) from None
    except ValueError as exc:
        raise RunDirError(f"{path}: unreadable manifest ({exc}); run the audit again") from None
    changed = []
    for rel, digest in sorted(listed.items()):
        file = run_dir / rel
        try:
            inside = file.resolve().is_relative_to(run_dir.resolve())
            ok = inside and file.is_file() and file_sha256(file)[1] == digest
        except OSError:
            ok = False
        if not ok:
            changed.append(rel)
    if changed:
        raise RunDirError(
            f"{run_dir}: {', '.join(changed[:5])}{' ...' if len(changed) > 5 else ''} changed or "
            f"missing since {MANIFEST_NAME} sealed the run (`auditor verify {run_dir}`); "
            "not re-sealed: run the audit again"
        )
    try:
        extra = [rel for rel in foreign_files(run_dir) if rel not in added]
    except OSError as exc:
        raise RunDirError(f"{run_dir}: cannot list the run folder: {exc}") from None
    if extra:
        raise RunDirError(
            f"{run_dir}: {', '.join(extra[:5])}{' ...' if len(extra) > 5 else ''} "
            f"({len(extra)} file(s)) not listed in the {MANIFEST_NAME} that sealed the run: "
            "added after the run, they would be sealed and published as its evidence; not "
            "published: remove them from the folder, or run the audit again"
        )


def seal_run(
    run_dir: Path, signing_key: Path | None = None, *, report: dict[str, Any] | None = None
) -> RunManifest:
    """Write ``manifest.json`` (and, with ``signing_key``, ``manifest.json.sig``) into ``run_dir``.

    Every run folder is sealed, published or not, so ``auditor verify`` can check
    it. A signature left from an earlier, different manifest is removed when no
    key is given (it would no longer verify). Files are written to a temporary
    name and renamed. ``report``: see :func:`build_manifest`.

    Raises:
        RunDirError: see :func:`build_manifest`; also when a file cannot be written.
        auditor.publish.signing.SigningError: the key file is unusable.
    """
    manifest = build_manifest(run_dir, report=report)
    data = manifest.to_bytes()
    target = run_dir / MANIFEST_NAME
    sig_path = run_dir / SIGNATURE_NAME
    try:
        old = target.read_bytes() if target.is_file() else None
        signature = None
        if signing_key is not None:
            from auditor.publish.signing import load_private_key, sign_manifest

            signature = sign_manifest(data, load_private_key(signing_key))
        _write_atomic(target, data)
        if signature is not None:
            _write_atomic(sig_path, signature)
        elif old != data and sig_path.exists():
            sig_path.unlink()
    except OSError as exc:
        raise RunDirError(f"{run_dir}: cannot write {MANIFEST_NAME}: {exc}") from None
    return manifest


def clear_sealed_run(run_dir: Path) -> list[str]:
    """Remove the artifacts an earlier run sealed into ``run_dir`` (those its ``manifest.json``
    lists), that manifest and its signature, and the folders left empty; return the paths
    removed (relative, POSIX).

    A new run written into the same folder is then sealed alone: the earlier run's HTML, PDF,
    CSVs and recovery cards (a card of a VM since deleted among them) are not signed and
    published as the new run's (new-user trial, helper-47). Files the manifest does not list
    are left, and so are listed paths that are no regular file inside ``run_dir`` (a symlink,
    or a path leading out of it).

    Raises:
        RunDirError: ``manifest.json`` exists but is not a manifest this tool wrote (which
            files belong to the earlier run cannot be told), or a file cannot be removed.
    """
    target = run_dir / MANIFEST_NAME
    if not target.is_file():
        return []
    try:
        doc = load_object(target.read_bytes())
        paths = [str(a["path"]) for a in artifact_list(doc, paths_only=True)]
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise RunDirError(
            f"{target}: not a run manifest ({reason}); which files belong to the "
            "earlier run cannot be told: remove the folder's old artifacts or write elsewhere"
        ) from None
    root = run_dir.resolve()
    removed: list[str] = []
    parents: set[Path] = set()
    try:
        for rel in [*paths, MANIFEST_NAME, SIGNATURE_NAME]:
            file = run_dir / rel
            if file.is_symlink() or not file.is_file() or not file.resolve().is_relative_to(root):
                continue
            file.unlink()
            removed.append(rel)
            parents.update(
                p for p in file.parents if p.resolve() != root and p.is_relative_to(run_dir)
            )
        for folder in sorted(parents, key=lambda p: len(p.parts), reverse=True):
            if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
                folder.rmdir()
    except OSError as exc:
        raise RunDirError(f"{run_dir}: cannot remove the earlier run's artifacts: {exc}") from None
    return removed


def foreign_files(run_dir: Path, *, limit: int | None = None) -> list[str]:
    """Files in ``run_dir`` (recursively; relative, POSIX, sorted) that no earlier run of this
    tool sealed there: neither listed in its ``manifest.json`` nor that manifest and its
    signature. :func:`seal_run` seals every file of the folder, so writing a run into a
    folder holding any of these would seal and publish them as the run's evidence
    (new-user trial ux27). Empty when ``run_dir`` is missing, and when its manifest cannot
    be read (:func:`clear_sealed_run` refuses that folder by name). ``limit``: stop after
    ``limit + 1`` are found (``--out /`` walked the whole file system), in the order found.

    Raises:
        OSError: a folder inside ``run_dir`` cannot be listed (``/proc/1/cwd``).
    """
    if not run_dir.is_dir():
        return []
    target = run_dir / MANIFEST_NAME
    listed: set[str] = set()
    if target.is_file():
        try:
            listed = {str(a["path"]) for a in json.loads(target.read_bytes())["artifacts"]}
        except (OSError, ValueError, KeyError, TypeError):
            return []
    own = listed | {MANIFEST_NAME, SIGNATURE_NAME}
    found = []
    for file in run_dir.rglob("*"):
        if file.is_dir() and not file.is_symlink():
            continue
        rel = file.relative_to(run_dir).as_posix()
        if rel not in own or file.is_symlink():
            found.append(rel)
            if limit is not None and len(found) > limit:
                break
    return sorted(found)


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
