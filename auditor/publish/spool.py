"""Local spool: runs that could not be delivered wait here, nothing is lost.

Layout::

    <spool_dir>/<run-id>__<target-id>/
        spool.json      {"run_id", "audit_time", "cluster", "target": <PublishSettings>}
        run/            a copy of the run directory, manifest.json included

    quarantine/<run-id>__<target-id>/
        spool.json, run/, error.txt    a run that conflicts with the archive (kept, not retried)

    refused/<run-id>__<target-id>/
        spool.json, run/, error.txt    a run whose target is misconfigured (no such bucket, no
                                       Object Lock for the lock mode asked): no retry delivers
                                       it (kept, not retried; ``auditor serve`` moves it here)

:func:`~auditor.publish.publisher.publish_run` writes the entry *before* the
first upload and removes it only after every object was verified in the store,
so a publisher killed at any point leaves an entry that the next start delivers.
An entry is written to ``.<name>.tmp`` and renamed, so a half-copied run is
never delivered. Settings hold no credentials, so ``spool.json`` holds none either.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from auditor.config.publish import PublishSettings
from auditor.publish.errors import PublishError
from auditor.publish.jsondoc import load_object, text_field
from auditor.publish.manifest import MANIFEST_NAME, RunManifest

__all__ = [
    "SpoolEntry",
    "entry_path",
    "spool_run",
    "pending",
    "unreadable",
    "entry_run_id",
    "remove",
    "quarantine",
    "quarantined",
    "refuse",
    "refused",
]

QUARANTINE = "quarantine"
REFUSED = "refused"


@dataclass(frozen=True)
class SpoolEntry:
    """A spooled run: its directory copy, identity and original target."""

    path: Path
    run_id: str
    audit_time: str
    cluster: str
    target: PublishSettings

    @property
    def run_dir(self) -> Path:
        """The spooled copy of the run directory."""
        return self.path / "run"


def entry_path(spool_dir: Path, run_id: str, target: PublishSettings) -> Path:
    """The spool folder of run ``run_id`` for ``target`` (whether or not it exists)."""
    return spool_dir / f"{run_id}__{target.target_id()}"


def spool_run(
    spool_dir: Path, run_dir: Path, manifest: RunManifest, target: PublishSettings
) -> Path:
    """Copy ``run_dir`` (with its manifest) into the spool; return the entry path.

    Idempotent: an existing entry for the same run and target with the same
    manifest is kept. One with another manifest (another run of the same id, not yet
    delivered: same instant and input, other formats) is moved to quarantine, never
    deleted, and this run takes its place (new-user trial nu20: the earlier run was lost).

    Raises:
        PublishError: the spool directory cannot be written.
    """
    final = entry_path(spool_dir, manifest.run_id, target)
    name = final.name
    if (final / "spool.json").is_file():
        try:
            if (final / "run" / MANIFEST_NAME).read_bytes() == manifest.to_bytes():
                return final
        except OSError:
            pass
        kept = _quarantine_path(
            final,
            f"replaced in the spool by another run with id {manifest.run_id} and a different "
            "manifest before this one was delivered",
        )
        if kept == final:
            raise PublishError(
                f"cannot spool run {manifest.run_id}: {final} holds another run of this id "
                "and could not be moved to quarantine"
            )
    tmp = spool_dir / f".{name}.tmp"
    try:
        if tmp.exists():
            shutil.rmtree(tmp)
        shutil.copytree(run_dir, tmp / "run", symlinks=False)
        (tmp / "run" / MANIFEST_NAME).write_bytes(manifest.to_bytes())
        meta = {
            "run_id": manifest.run_id,
            "audit_time": manifest.audit_time,
            "cluster": manifest.cluster,
            "target": target.model_dump(mode="json"),
        }
        (tmp / "spool.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    except OSError as exc:
        raise PublishError(f"cannot spool run {manifest.run_id} to {spool_dir}: {exc}") from exc
    return final


def pending(spool_dir: Path, target: PublishSettings | None = None) -> list[SpoolEntry]:
    """Spooled runs, oldest audit first; only those for ``target`` when given.

    Entries whose ``spool.json`` is missing or unreadable are not here (they cannot be
    delivered): :func:`unreadable` names them, and they are left on disk.
    """
    entries = []
    for folder in _entry_folders(spool_dir):
        try:
            entry = _read_entry(folder)
        except ValueError:
            continue
        if target is None or entry.target.target_id() == target.target_id():
            entries.append(entry)
    return sorted(entries, key=lambda e: (e.audit_time, e.run_id))


def unreadable(spool_dir: Path, target: PublishSettings | None = None) -> list[tuple[Path, str]]:
    """Spool entries that cannot be delivered because their ``spool.json`` is missing or
    unreadable, with the reason naming the field; only those for ``target`` (by the target
    id in the entry's name) when given. Before, they were skipped in silence: ``publish
    --retry`` said "spool is empty" and exited 0 while the run waited for ever (trial ux32).
    """
    found = []
    for folder in _entry_folders(spool_dir):
        try:
            _read_entry(folder)
        except ValueError as exc:
            if target is None or folder.name.endswith(f"__{target.target_id()}"):
                found.append((folder, str(exc)))
    return found


def entry_run_id(folder: Path) -> str:
    """The run id in a spool entry's folder name (``<run-id>__<target-id>``)."""
    return folder.name.split("__", 1)[0]


def _entry_folders(spool_dir: Path) -> list[Path]:
    """The spool's entry folders: not quarantine, not a half-written (``.tmp``) entry."""
    if not spool_dir.is_dir():
        return []
    return sorted(
        p
        for p in spool_dir.iterdir()
        if p.is_dir() and not p.name.startswith(".") and p.name not in (QUARANTINE, REFUSED)
    )


def _read_entry(folder: Path) -> SpoolEntry:
    """Read ``folder/spool.json``.

    Raises:
        ValueError: missing, unreadable or malformed (the message names file and field).
    """
    meta_path = folder / "spool.json"
    try:
        meta = load_object(meta_path.read_bytes())
        entry = SpoolEntry(
            path=folder,
            run_id=text_field(meta, "run_id"),
            audit_time=text_field(meta, "audit_time"),
            cluster=text_field(meta, "cluster"),
            target=PublishSettings.model_validate(meta.get("target")),
        )
    except FileNotFoundError:
        raise ValueError(f"{meta_path} is missing") from None
    except OSError as exc:
        raise ValueError(f"{meta_path}: cannot read: {exc.strerror or exc}") from None
    except ValidationError as exc:
        where = ".".join(str(p) for p in exc.errors()[0]["loc"])
        field = f"target.{where}" if where else "target"
        raise ValueError(f"{meta_path}: field '{field}': {exc.errors()[0]['msg']}") from None
    except ValueError as exc:
        raise ValueError(f"{meta_path}: {exc}") from None
    return entry


def remove(entry: SpoolEntry | Path) -> None:
    """Delete a delivered entry (or the entry folder at a path) from the spool."""
    shutil.rmtree(entry if isinstance(entry, Path) else entry.path, ignore_errors=True)


def quarantine(entry: SpoolEntry, error: str) -> Path:
    """Move ``entry`` to ``<spool_dir>/quarantine/`` with ``error.txt``; return its new path.

    A quarantined run is kept (nothing is lost) but no longer retried, so it
    blocks no other run. Raises nothing: when the move fails the entry stays.
    """
    return _quarantine_path(entry.path, error)


def refuse(entry: SpoolEntry, error: str) -> Path:
    """Move ``entry`` to ``<spool_dir>/refused/`` with ``error.txt``; return its new path.

    For a run whose target is itself misconfigured (a
    :class:`~auditor.publish.errors.StoreConfigError`): no retry delivers it until the target
    is changed, so it leaves the retry loop, kept (publish its ``run/`` folder with ``auditor
    publish --from-run`` once the target is fixed). Raises nothing: when the move fails the
    entry stays.
    """
    return _quarantine_path(entry.path, error, REFUSED)


def refused(spool_dir: Path) -> list[Path]:
    """Entries moved out of the retry loop as their target is misconfigured, sorted by name."""
    folder = spool_dir / REFUSED
    return sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


def _quarantine_path(path: Path, error: str, where: str = QUARANTINE) -> Path:
    """:func:`quarantine` (or, ``where`` :data:`REFUSED`, :func:`refuse`) of the spool entry
    folder ``path``."""
    dest = path.parent / where / path.name
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        # an earlier quarantined entry of this name is kept too: the next free ``.N`` suffix
        number = 1
        while dest.exists():
            number += 1
            dest = dest.with_name(f"{path.name}.{number}")
        os.replace(path, dest)
        (dest / "error.txt").write_text(error + "\n", encoding="utf-8")
    except OSError:
        return path
    return dest


def quarantined(spool_dir: Path) -> list[Path]:
    """Quarantined entries, sorted by name."""
    folder = spool_dir / QUARANTINE
    return sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
