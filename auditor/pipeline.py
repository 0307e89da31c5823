"""The one orchestration path: source -> inventory -> checks -> report envelope -> trend.

The CLI's ``run`` and the service's scheduled jobs both call :func:`run_audit`
(the source chosen from the settings, the audit, the trend against the publish
archive) and then :func:`write_run` (artifacts, ``trend.json``, the sealed
manifest); nothing else wires the layers together. Tests and benches that hold
a :class:`~auditor.sources.base.ClusterData` already call :func:`audit_data`.
"""

from __future__ import annotations

import math
import os
import pickle
import re
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from auditor.checks.fleetview import PlatformFacts, platform_facts
from auditor.config import AuditSettings
from auditor.config.service import REPORT_FORMATS
from auditor.engine import AuditResult, Evaluation, Unpaired
from auditor.envelope import (
    AuditReport,
    dump_report_json,
    dump_report_schema,
    report_document,
    seed_report_document,
    write_report_json,
)
from auditor.envelope.build import (
    assemble_envelope,
    input_digest,
    owner_of,
    resolve_owner,
    unpaired_entry,
    vm_entry,
)
from auditor.envelope.model import VmEntry
from auditor.inventory.capture import ContentSummary, label_summaries
from auditor.inventory.index import meta_labels
from auditor.inventory.vmvalidate import validate_vm
from auditor.kubevalues import format_time
from auditor.lifetime import keep_until_exit
from auditor.models import CollectionProblem
from auditor.publish import dump_trend, publish_settings, trend_for
from auditor.publish.manifest import MANIFEST_NAME, clear_sealed_run, seal_run
from auditor.publish.trend import TREND_NAME
from auditor.sources.asof import leave_out_after
from auditor.sources.base import ClusterData
from auditor.sources.freshness import at_after_input
from auditor.sources.from_settings import source_from_settings
from auditor.sources.progress import CollectProgress
from auditor.sources.usable import NothingToAudit, require_vms, vm_list_gap
from auditor.split import aside, share_out
from auditor.yamlstrict import paused_gc

__all__ = [
    "run_audit",
    "audit_data",
    "AuditRun",
    "Clock",
    "write_run",
    "write_artifacts",
    "dump_report_json",
    "FORMATS",
    "UnknownOwnerError",
]

#: Every artifact format ``write_artifacts`` knows, in the order they are written.
FORMATS = REPORT_FORMATS

#: Returns the audit instant: an aware datetime (converted to UTC, whole seconds).
Clock = Callable[[], datetime]


class UnknownOwnerError(ValueError):
    """``owner`` owns none of the audited VMs.

    Attributes:
        owner: the owner asked for.
        known: every owner of an audited VM -> its number of VMs, sorted by owner.
    """

    def __init__(self, owner: str, known: dict[str, int]) -> None:
        self.owner = owner
        self.known = known
        names = ", ".join(f"{k} ({n} VMs)" for k, n in known.items()) or "none"
        super().__init__(f"unknown owner {owner!r}; known owners: {names}")


@dataclass(frozen=True)
class AuditRun:
    """One audit of :func:`run_audit`.

    Attributes:
        report: the report envelope (report.json).
        trend: the trend against the publish archive (``trend.json``, shape in
            ``docs/publishing.md``); None when the settings name no ``publish``
            target or its archive could not be read (logged as a warning).
        gap: why the VirtualMachine list was read only partly (the report then
            covers only the VMs read), else None.
        left_out: kind -> how many of its objects were left out as created after the
            audit instant (:func:`auditor.sources.asof.leave_out_after`), sorted by kind.
        at_after_input: why the audit instant is clearly after the input was taken
            (:func:`auditor.sources.freshness.at_after_input`; also ``run.at_after_input``
            of the report), else None.
    """

    report: AuditReport
    trend: dict[str, Any] | None
    gap: str | None
    left_out: dict[str, int] = field(default_factory=dict)
    at_after_input: str | None = None


def run_audit(
    settings: AuditSettings,
    clock: Clock,
    *,
    owner: str | None = None,
    progress: CollectProgress | None = None,
    formats: Sequence[str] | None = None,
    given_at: bool = False,
) -> AuditRun:
    """Read the source of ``settings``, audit it and compare it with the publish archive.

    The source is ``settings.source`` (the live cluster when None; see
    :func:`auditor.sources.from_settings.source_from_settings`). ``clock`` is
    called once, before reading, for the audit instant. The trend is computed
    against ``settings.publish`` when set (the same target the run is
    published to), so the scheduled service and ``auditor run`` get the same
    trend section. ``owner`` limits the report to one owner's VMs; ``progress``
    is told about a live cluster read; ``formats``: the artifact formats
    :func:`write_run` will write (part of the run id, as :func:`audit_data`);
    ``given_at``: ``clock`` gives an instant the user chose (``--at``), which is then
    compared with when the input was taken (:func:`auditor.sources.freshness.at_after_input`).

    Raises:
        auditor.sources.usable.NothingToAudit: no VirtualMachine found, or the
            VM list unreadable (never a clean empty report).
        auditor.sources.kubeclient.ClusterAccessError: the cluster credentials
            cannot be loaded; ClusterLostError: the API server was lost mid-read.
        FileNotFoundError: the export directory does not exist.
        UnknownOwnerError: ``owner`` owns none of the audited VMs.
        auditor.publish.StoreConfigError: ``settings.publish`` is invalid.
    """
    at = clock().astimezone(UTC).replace(microsecond=0)
    archive = publish_settings(settings.publish) if settings.publish is not None else None
    started = time.monotonic()
    data = source_from_settings(settings, progress=progress).collect()
    read_until = at + live_read_grace(data, time.monotonic() - started)
    read = len(data.of("VirtualMachine"))
    late = at_after_input(data, at, datetime.now(UTC)) if given_at else None
    # objects created after the audit instant did not exist then (auditor.sources.asof)
    data = leave_out_after(data, read_until, at=at)
    if read and not data.of("VirtualMachine"):
        raise NothingToAudit(
            f"no VirtualMachine in {data.info.location} existed at the audit instant "
            f"{format_time(at)}: all {read} were created after it; the input shows the "
            "cluster as it was read and cannot show it at that instant"
        )
    require_vms(data)
    report = audit_data(
        data,
        settings,
        at=at,
        owner=owner,
        formats=formats,
        read_until=read_until,
        at_note=late,
    )
    keep_until_exit(data)  # the console script then ends without freeing it (0.6 s at 10,000 VMs)
    trend = trend_for(report_document(report), archive) if archive is not None else None
    return AuditRun(
        report=report,
        trend=trend,
        gap=vm_list_gap(data),
        left_out=dict(sorted(data.left_out.items())),
        at_after_input=late,
    )


#: Clock difference between the API server (which stamps ``creationTimestamp``) and this
#: machine that a live read allows for.
LIVE_CLOCK_SKEW = timedelta(minutes=5)


def live_read_grace(data: ClusterData, read_seconds: float) -> timedelta:
    """How long after the audit instant an object may have been created and still count as
    read at it: for a live cluster, the read's own duration (a VMI started, a Backup made
    while the lists were paged) plus :data:`LIVE_CLOCK_SKEW`; for an export, nothing (its
    objects were all there when it was taken, after the audit instant when any is later)."""
    if data.info.type != "cluster":
        return timedelta(0)
    return timedelta(seconds=math.ceil(read_seconds)) + LIVE_CLOCK_SKEW


def write_run(
    run: AuditRun, out_dir: Path, formats: Sequence[str], *, signing_key: Path | None = None
) -> list[Path]:
    """Write the artifacts of ``run`` (:func:`write_artifacts`), ``trend.json`` when it has a
    trend, and the sealed ``manifest.json`` (signed with ``signing_key``, an Ed25519 PEM
    private key, when given); return the paths written, the manifest last. An earlier run
    sealed in ``out_dir`` is cleared first (:func:`~auditor.publish.manifest.clear_sealed_run`),
    so its artifacts are never sealed as this run's. When writing or sealing fails, the files
    this call wrote are removed again: an unsealed half-run (report.json without its manifest,
    after a bad signing key or a failed PDF) is no evidence, and it made the next run into the
    folder refuse it as holding files no run wrote (trial ux30).

    Raises:
        ValueError: an unknown format name.
        OSError: ``out_dir`` cannot be written.
        auditor.publish.RunDirError, auditor.publish.signing.SigningError: the
            manifest cannot be written or signed.
    """
    clear_sealed_run(out_dir)
    before = _files_in(out_dir)
    try:
        paths = write_artifacts(run.report, out_dir, formats, trend=run.trend)
        if run.trend is not None:
            (out_dir / TREND_NAME).write_bytes(dump_trend(run.trend))
            paths.append(out_dir / TREND_NAME)
        seal_run(out_dir, signing_key, report=report_document(run.report))  # no re-parse
    except BaseException:
        _remove_new(out_dir, before)
        raise
    paths.append(out_dir / MANIFEST_NAME)
    return paths


def _files_in(folder: Path) -> set[Path]:
    """Every path under ``folder`` (empty when it does not exist)."""
    return set(folder.rglob("*")) if folder.is_dir() else set()


def _remove_new(folder: Path, before: set[Path]) -> None:
    """Remove what appeared under ``folder`` since ``before`` (files, then emptied folders);
    best effort: a path that cannot be removed stays."""
    new = sorted(_files_in(folder) - before, key=lambda p: len(p.parts), reverse=True)
    for path in new:
        try:
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            else:
                path.unlink()
        except OSError:
            pass


def audit_data(
    data: ClusterData,
    settings: AuditSettings,
    *,
    at: datetime,
    owner: str | None = None,
    formats: Sequence[str] | None = None,
    read_until: datetime | None = None,
    at_note: str | None = None,
) -> AuditReport:
    """Audit ``data`` at instant ``at`` (UTC) and return the report envelope.
    ``at_note``: why ``at`` is after the input was taken (``run.at_after_input``), if it is.

    Objects created after ``read_until`` (default ``at``) are left out as no evidence at
    ``at`` (:func:`auditor.sources.asof.leave_out_after`).

    ``owner`` limits the report to one owner's VMs. ``formats``: the artifact formats the
    run writes; they are part of the run id (:func:`auditor.envelope.digest.run_key`), so
    runs of one instant with other formats are archived side by side (None: not a run
    written to disk; the id then covers no formats). Never raises for bad
    cluster data: it becomes collection problems and ERROR findings. When
    ``settings.backup_storage`` is set and ``data.backup_contents`` is still
    None, the BackupStorageLocation buckets are read first (read-only, S3
    requests; :func:`auditor.sources.bucket.read_backup_storage`).

    Raises:
        UnknownOwnerError: ``owner`` owns none of the audited VMs.
    """
    # see auditor.sources.asof (data as is when run_audit did it at this instant)
    data = leave_out_after(data, read_until or at, at=at)
    if settings.backup_storage is not None and data.backup_contents is None:
        from auditor.sources.bucket.load import read_backup_storage

        read_backup_storage(data, settings)
    with paused_gc():  # see paused_gc: keeps a 10,000-VM audit linear in the VM count
        # What needs no index is made by a forked child while the index is built here
        # (_SideWork; each part it does not give is made here).
        side = _SideWork(data)
        try:
            ev = Evaluation(data, settings, at=at, validated=side.validated)
            # Each VM is paired, checked and entered here or in a forked worker.
            here = os.getpid()  # the process that writes the report (see _Share.documents)
            chunks = share_out(
                len(ev),
                lambda vms: _check_share(ev, settings, owner, vms, here),
                _encode_share,
                lambda raw, vms: _decode_share(raw, vms, owner),
                prepare=lambda: ev.before_fork(side.summaries()),
            )
        except BaseException:
            side.close()
            raise
        keep_until_exit(ev)  # its index, as ``data`` in run_audit (see auditor.lifetime)
        digest = side.digest()
        shares = [share for _, share in chunks]
        unread = _unread_share(ev, settings, owner)
        if unread is not None:
            shares.append(unread)
        owners = sum((s.owners for s in shares), Counter[str]())
        if owner is not None and owner not in owners:
            raise UnknownOwnerError(owner, dict(sorted(owners.items())))
        problems = list(ev.problems)
        for share in shares:
            problems += share.problems
            ev.incomplete |= share.incomplete
        platform = ev.platform(
            [f for s in shares for f in s.facts],
            problems,
            unpaired=[ref for s in shares for ref in s.unpaired],
        )
        result = AuditResult(ev.index, [], platform, problems, sorted(ev.incomplete))
        entries = [e for s in shares for e in s.entries]
        documents = [d for s in shares for d in s.documents]
        if unread is not None:
            # the unread VMs' entries came last: put them in the (namespace, name) order of
            # the others (entries and their documents alike)
            order = sorted(range(len(entries)), key=lambda k: _entry_key(entries[k]))
            entries = [entries[k] for k in order]
            documents = [documents[k] for k in order]
        report = assemble_envelope(
            data,
            result,
            entries,
            settings,
            at=at,
            owner=owner,
            digest=digest,
            formats=formats,
            at_note=at_note,
        )
        seed_report_document(report, documents)
        return report


def _entry_key(entry: VmEntry) -> tuple[str, str]:
    """The order of report.vms: namespace, then name."""
    return entry.namespace, entry.name


def _unread_share(ev: Evaluation, settings: AuditSettings, owner: str | None) -> _Share | None:
    """The entries of the VMs a collection problem names but the source did not read
    (:meth:`Evaluation.unread_vms`: UNKNOWN, every check ERROR), as one more share; None
    when there are none. Their problems are the source's, already in ``ev.problems``."""
    lost = ev.unread_vms()
    if not lost:
        return None
    share = _Share([], [], [], Counter(), set())
    for vm in lost:
        share.unpaired.append(vm.ref)
        who = owner_of(settings, ev.index, vm.namespace, {}, {})
        share.owners[who] += 1
        if owner is None or who == owner:
            share.entries.append(unpaired_entry(vm, who))
    share.documents = _documents(share.entries)
    return share


#: What :func:`~auditor.envelope.build.input_digest` gives, encoded.
_DIGEST = re.compile(rb"sha256:[0-9a-f]{64}")


class _SideWork:
    """What a forked child (:func:`auditor.split.aside`) makes from the data as read while
    this process builds the index, in the order this process needs it: each VirtualMachine's
    malformed fields (:func:`~auditor.inventory.vmvalidate.validate_vm`, once the index is
    built), each Backup label's VolumeSnapshotContent summary
    (:func:`~auditor.inventory.capture.label_summaries`, just before the per-VM worker forks)
    and the input digest (for the envelope). About 5 s of work at 10,000 VMs, off this
    process's path.

    Each getter gives None where no child ran or it gave nothing usable: the caller then
    makes it here, and the report is the same either way (``tests/test_split.py``).
    """

    def __init__(self, data: ClusterData) -> None:
        vms = data.of("VirtualMachine")
        self._vms = len(vms)
        self._job = aside(
            [
                lambda: pickle.dumps([validate_vm(vm) for vm in vms], pickle.HIGHEST_PROTOCOL),
                lambda: pickle.dumps(label_summaries(data), pickle.HIGHEST_PROTOCOL),
                lambda: input_digest(data).encode(),
            ],
            len(vms),
        )
        self._taken = 0

    def _take(self, part: int) -> bytes | None:
        """The child's ``part``-th value (0-based), once; the ones before it are dropped."""
        value = None
        while self._job is not None and self._taken <= part:
            value = self._job.result()
            self._taken += 1
        return value if self._taken == part + 1 else None

    def validated(self) -> list[list[tuple[str, str]]] | None:
        """Each VM's ``validate_vm`` in ``data.of("VirtualMachine")`` order, or None."""
        found = _unpickled(self._take(0))
        if not isinstance(found, list) or len(found) != self._vms:
            return None
        return found if all(isinstance(f, list) for f in found) else None

    def summaries(self) -> dict[str, tuple[int, ContentSummary]] | None:
        """``label_summaries`` of the data, or None."""
        found = _unpickled(self._take(1))
        if isinstance(found, dict) and all(
            isinstance(v, tuple) and len(v) == 2 and isinstance(v[1], ContentSummary)
            for v in found.values()
        ):
            return found
        return None

    def digest(self) -> str | None:
        """The input digest, or None (``assemble_envelope`` then takes it)."""
        raw = self._take(2)
        return raw.decode() if raw is not None and _DIGEST.fullmatch(raw) else None

    def close(self) -> None:
        """Stop the child, if one runs."""
        if self._job is not None:
            self._job.close()


def _unpickled(raw: bytes | None) -> Any:
    """``raw`` unpickled (it comes from this process's own fork), or None when it is none or
    does not unpickle."""
    if raw is None:
        return None
    try:
        return pickle.loads(raw)
    except Exception:  # noqa: BLE001 - whatever it is, it is made here instead
        return None


@dataclass
class _Share:
    """What checking a run of VMs gives the envelope: ``owner``'s entries (every VM's when
    None), the collection problems they add, every VM's platform facts and owner, and the
    ids of checks found incomplete. ``documents``: the entries' report.json forms, made in
    the process that writes the report (there, not at the end: the forked worker checks
    more VMs meanwhile, and nothing is dumped twice or sent as JSON). ``unpaired``: the VMs
    (``namespace/name``) whose record could not be built: they have an entry and an owner,
    and no platform facts."""

    entries: list[VmEntry]
    problems: list[CollectionProblem]
    facts: list[PlatformFacts]
    owners: Counter[str]
    incomplete: set[str]
    documents: list[dict[str, Any]] = field(default_factory=list)
    #: ``namespace/name`` of the VMs whose record could not be built (no platform facts)
    unpaired: list[str] = field(default_factory=list)


def _check_share(
    ev: Evaluation, settings: AuditSettings, owner: str | None, vms: range, here: int
) -> _Share:
    """Pair, check and enter the VMs numbered ``vms`` (each VMResult is dropped once its
    entry is built); in process ``here`` (a pid), also the entries' documents."""
    share = _Share([], [], [], Counter(), ev.incomplete)
    for i in vms:
        # One guard per VM (the hot path: no wrapper per call). An exception while pairing,
        # checking or entering one VM makes that VM UNKNOWN (every check ERROR) and the audit
        # incomplete, naming the VM, the stage and the exception; the others go on.
        stage = "pairing"
        try:
            rec = ev.record(i)
            stage = "checking"
            result, found = ev.check(i, rec)
            stage = "platform facts"
            facts = platform_facts(rec, ev.index)
            stage = "owner"
            who = resolve_owner(settings, ev.index, result)
            stage = "report entry"
            entry = vm_entry(result, who) if owner is None or who == owner else None
        except Exception as exc:  # noqa: BLE001 - named in the report, never a verdict
            lost = ev.unpaired(i, stage, exc)
            share.problems.append(lost.problem)
            share.unpaired.append(lost.ref)
            who = owner_of(settings, ev.index, lost.namespace, lost.labels, _annotations_of(lost))
            share.owners[who] += 1
            if owner is None or who == owner:
                share.entries.append(unpaired_entry(lost, who))
            continue
        share.problems += found
        share.facts.append(facts)
        share.owners[who] += 1
        if entry is not None:
            share.entries.append(entry)
    if os.getpid() == here:
        share.documents = _documents(share.entries)
    return share


def _annotations_of(vm: Unpaired) -> dict[str, str]:
    """The annotations of an unpaired VM (``metadata.annotations``, junk left out)."""
    return meta_labels(vm.obj, "annotations")


def _documents(entries: list[VmEntry]) -> list[dict[str, Any]]:
    """The report.json forms of ``entries`` (see :func:`seed_report_document`)."""
    return _ENTRIES.dump_python(entries, mode="json")  # type: ignore[no-any-return]


#: A worker's entries travel as pydantic's Python-mode dump (plain dicts, pickled) and are
#: validated back by pydantic's Rust core: their values come back exactly as the worker
#: held them (a JSON round trip would turn tuples into lists).
_ENTRIES = TypeAdapter(list[VmEntry])


def _encode_share(share: _Share) -> bytes:
    rest = (share.problems, share.facts, share.owners, share.incomplete, share.unpaired)
    return pickle.dumps((_ENTRIES.dump_python(share.entries), *rest), pickle.HIGHEST_PROTOCOL)


def _decode_share(raw: bytes, vms: range, owner: str | None) -> _Share:
    """The worker's share of the VMs numbered ``vms`` (``owner``'s entries, every VM's when
    None).

    Raises:
        ValueError: (or pydantic's ValidationError, a ValueError) bytes that do not read back
            as a share, or a share that does not account for every VM of ``vms``: one
            platform fact and one owner per VM, and one entry per VM kept (a VM left out
            would vanish from the report with nothing named).
        TypeError: bytes of another shape.
    """
    entries, problems, facts, owners, incomplete, unpaired = pickle.loads(raw)
    if not isinstance(owners, Counter) or not isinstance(facts, list):
        raise TypeError("not a share")
    if not isinstance(unpaired, list):
        raise TypeError("not a share")
    kept = len(vms) if owner is None else owners.get(owner, 0)
    if len(facts) + len(unpaired) != len(vms) or owners.total() != len(vms) or len(entries) != kept:
        raise ValueError(f"the share of VMs {vms.start}-{vms.stop - 1} does not account for each")
    share = _Share(_ENTRIES.validate_python(entries), problems, facts, owners, incomplete)
    share.unpaired = unpaired
    share.documents = _documents(share.entries)  # here, the process that writes the report
    return share


def write_artifacts(
    report: AuditReport,
    out_dir: Path,
    formats: Sequence[str],
    *,
    trend: Mapping[str, Any] | None = None,
) -> list[Path]:
    """Write the requested formats into ``out_dir``; return the paths written.

    ``json`` writes ``report.json`` and its JSON Schema ``report.schema.json``.

    Raises:
        ValueError: an unknown format name.
        OSError: ``out_dir`` cannot be written.
    """
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown:
        raise ValueError(f"unknown format(s) {', '.join(unknown)}; known: {', '.join(FORMATS)}")
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    if "json" in formats:
        write_report_json(report, out_dir / "report.json")
        schema = out_dir / "report.schema.json"
        schema.write_bytes(dump_report_schema())
        written += [out_dir / "report.json", schema]
    others = [f for f in formats if f != "json"]
    if others:
        from auditor.report.writers import write_formats

        written += write_formats(report, out_dir, others, trend=trend)
    return written
