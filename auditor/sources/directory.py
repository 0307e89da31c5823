"""Read an exported cluster: a directory tree of YAML/JSON files.

Accepts ``oc get <kind> -A -o yaml`` ``List`` files, multi-document streams,
single objects and nested folders (``cluster/`` + ``namespaces/<ns>/``).
Unwraps ``List`` items; never audits the VMs inside OpenShift ``Template``s or
``VirtualMachinePool`` templates (they are blueprints, not cluster state).
Everything that cannot be read is recorded as a :class:`CollectionProblem`
naming the file, object and field, and reading goes on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from auditor.kinds import (
    BY_KIND,
    KindSpec,
    kind_hinted,
    misspelt_kind,
    spec_for_file_stem,
    spec_for_object,
    unsupported_version,
)
from auditor.models import CollectionProblem
from auditor.sources.base import ClusterData, KindState, SourceInfo
from auditor.sources.export import apply_record
from auditor.sources.identity import identity_from_export
from auditor.sources.intake import (
    Entry,
    configmap_data_fault,
    name_fault,
    plain_entry,
    shape_fault,
    take_slim,
    take_whole,
)
from auditor.yamlstrict import (
    DEFAULT_MAX_FILE_BYTES,
    LoadError,
    StreamDeclined,
    documents,
    paused_gc,
    read_text,
    stream_list,
)

__all__ = ["DirectorySource", "ingest_objects"]

_SUFFIXES = (".yaml", ".yml", ".json")
_LIST_KINDS_SUFFIX = "List"


class DirectorySource:
    """A :class:`~auditor.sources.base.Source` over an exported directory.

    Args:
        root: the export directory (or a single file).
        cluster_name: the cluster's name for the report, when known.
        max_file_bytes: files above this size are refused (a collection problem).
        slim: keep the slim record of kinds that declare one (:attr:`KindSpec.keep`), as
            audits do; False keeps every object whole.
    """

    def __init__(
        self,
        root: Path,
        *,
        cluster_name: str | None = None,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        slim: bool = True,
    ) -> None:
        self.root = root
        self.cluster_name = cluster_name
        self.max_file_bytes = max_file_bytes
        self.slim = slim

    def files(self) -> list[Path]:
        """Return the YAML/JSON files under ``root``, sorted for a stable order.

        Raises:
            FileNotFoundError: ``root`` does not exist.
        """
        if not self.root.exists():
            raise FileNotFoundError(f"export directory {self.root} does not exist")
        if self.root.is_file():
            return [self.root]
        return sorted(
            p
            for p in self.root.rglob("*")
            # a symlink that leads nowhere (dangling, a loop) is read too, and named
            if (p.is_file() or (p.is_symlink() and not p.is_dir()))
            and p.suffix.lower() in _SUFFIXES
            and not any(part.startswith(".") for part in p.relative_to(self.root).parts)
        )

    def _info(self) -> SourceInfo:
        """The source info; without a given name, the export's Infrastructure names it."""
        location = str(self.root)
        if self.cluster_name:
            return SourceInfo(type="directory", location=location, cluster_name=self.cluster_name)
        found = None
        if self.root.is_dir():
            found = identity_from_export(self.root, max_bytes=self.max_file_bytes)
        if found is None:
            return SourceInfo(type="directory", location=location, name_source="unknown")
        return SourceInfo("directory", location, found.name, found.source)

    def collect(self) -> ClusterData:
        """Read every file; see the module docstring for what is accepted."""
        data = ClusterData(info=self._info())
        builder = _Builder(data, owned=True, slim=self.slim)
        with paused_gc():
            for path in self.files():
                rel = str(path.relative_to(self.root)) if self.root.is_dir() else path.name
                builder.read_file(path, rel, self.max_file_bytes)
            builder.finish()
        apply_record(self.root, data)  # what `auditor collect` could not put in the files
        return data


def ingest_objects(
    data: ClusterData, objects: list[tuple[str, Any]], *, owned: bool = False, slim: bool = True
) -> None:
    """Add ``(origin, object)`` pairs to ``data`` with the directory source's rules.

    Used by tests and by other sources that receive raw objects; the origin is
    a file name or URL used in problem messages. ``owned``: the objects were
    parsed for this call alone (the cluster source's pages), so they are
    redacted in place instead of deep-copied. ``slim``: keep the slim record of
    kinds that declare one (:func:`auditor.kinds.project`).
    """
    builder = _Builder(data, owned=owned, slim=slim)
    for origin, obj in objects:
        builder.add_document(obj, origin)
    builder.finish()


class _Builder:
    """Accumulates objects into a :class:`ClusterData`, enforcing identity and shape.

    ``owned``: the objects were parsed for this builder alone, so redaction
    and dropping ``managedFields`` happen in place instead of on a copy.
    ``slim``: keep the slim record of kinds that declare one.
    """

    def __init__(self, data: ClusterData, *, owned: bool = False, slim: bool = True) -> None:
        self.data = data
        self.owned = owned
        self.slim = slim
        self.seen: dict[tuple[str, str, str], str] = {}
        self._by_ident: dict[tuple[str, str, str], Any] | None = None
        self.partial: set[str] = set()
        self.present: set[str] = set()
        #: kinds of the List being read, for an item that is not an object
        self._list_kinds: set[str] = set()
        #: metadata.uid -> the object kept with it (:meth:`_same_uid`)
        self.uids: dict[str, tuple[str, str, str]] = {}
        #: the namespace the folder of the file being read names (``namespaces/<ns>/``)
        self._folder_ns: str | None = None

    def read_file(self, path: Path, rel: str, max_bytes: int) -> None:
        self._folder_ns = folder_namespace(rel)
        try:
            text = read_text(path, max_bytes=max_bytes)
            if len(text) >= _STREAM_MIN_CHARS and self._stream(text, rel, path.stem):
                return
            held = False
            for index, doc in enumerate(documents(text)):
                origin = rel if index == 0 else f"{rel}#doc{index + 1}"
                held = held or doc is not None
                self.add_document(doc, origin, stem=path.stem)
            if not held:
                self._empty_file(rel, path.stem, text)
        except LoadError as exc:
            kinds = _kinds_in_unreadable(path)
            self.partial.update(kinds)
            self.problem(
                f"file {rel} could not be read: {exc}",
                file=rel,
                kinds=tuple(sorted(kinds)),
            )

    def _empty_file(self, rel: str, stem: str, text: str) -> None:
        """Name a file that holds no object: 0 bytes, or only comments and ``---``.

        ``oc get`` and ``auditor collect`` write an empty List for a kind without objects, so
        such a file was cut or blanked: the kind its name gives (every kind, when its name
        gives none) is partial, never an empty list (a 0-byte persistentvolumes.yaml read as
        a kind not read, with nothing naming the file)."""
        hinted = spec_for_file_stem(stem)
        kinds = _file_kinds(stem)
        self.partial.update(kinds)
        what = (
            "is empty (0 bytes)" if not text else "holds no document (only blanks, comments or ---)"
        )
        self.problem(
            f"file {rel} {what}; an export writes at least an empty List, so "
            + (f"its {hinted.kind} objects" if hinted is not None else "what it held")
            + " could not be read",
            file=rel,
            kinds=kinds,
        )

    def _stream(self, text: str, origin: str, stem: str) -> bool:
        """Read a large ``oc get`` List a piece of its items at a time, so only the slim
        records of the pieces read so far are kept; False (and nothing kept of it) when the
        text must be read whole instead. Each item is checked and its record made
        (:func:`auditor.sources.intake.take_slim`) in the process that parses it."""
        if not self.owned:
            return False  # the record is redacted in place: only for texts read for this builder
        found = stream_list(text, take_slim if self.slim else take_whole)
        if found is None:
            return False
        _, chunks = found
        mark = self._checkpoint()
        try:
            self._add_taken(chunks, origin, stem)
        except StreamDeclined:
            self._rollback(mark)
            return False
        return True

    def _checkpoint(self) -> tuple[Any, ...]:
        """What :meth:`_rollback` needs to forget every object added after this point."""
        return (
            {kind: len(objs) for kind, objs in self.data.objects.items()},
            len(self.data.problems),
            dict(self.data.skipped),
            set(self.partial),
            set(self.present),
        )

    def _rollback(self, mark: tuple[Any, ...]) -> None:
        lengths, problems, skipped, partial, present = mark
        for kind in list(self.data.objects):
            objs = self.data.objects[kind]
            for obj in objs[lengths.get(kind, 0) :]:
                meta = obj["metadata"]
                ns = (meta.get("namespace") or "") if BY_KIND[kind].namespaced else ""
                ident = (kind, ns, meta["name"])
                self.seen.pop(ident, None)
                self.data.origins.pop(ident, None)
                uid = meta.get("uid")
                if isinstance(uid, str) and self.uids.get(uid) == ident:
                    del self.uids[uid]
            if kind in lengths:
                del objs[lengths[kind] :]
            else:
                del self.data.objects[kind]
        del self.data.problems[problems:]
        self.data.skipped = skipped
        self.partial, self.present = partial, present

    def add_document(self, doc: Any, origin: str, stem: str | None = None) -> None:
        if doc is None:
            return
        if not isinstance(doc, dict):
            # it was some object of the file: its name's kind (any kind, when it names none)
            # is partial, never complete without it
            lost = _file_kinds(stem) if stem is not None else tuple(sorted(BY_KIND))
            self.partial.update(lost)
            self.problem(
                f"{origin}: document is {_type_word(doc)}, not a Kubernetes object",
                file=_file_of(origin),
                kinds=lost,
            )
            return
        kind = doc.get("kind")
        typed = (
            spec_for_file_stem(kind[: -len(_LIST_KINDS_SUFFIX)])
            if isinstance(kind, str) and kind.endswith(_LIST_KINDS_SUFFIX)
            else None
        )
        if isinstance(kind, str) and (
            ("items" in doc and kind.endswith(_LIST_KINDS_SUFFIX)) or kind == "List" or typed
        ):
            items = doc.get("items")
            if not isinstance(items, list):
                # kubectl writes "items: []" for an empty List: null, another type or no
                # items at all may have held anything of the List's kind (else the file's,
                # else any kind), which is then partial (red team: a null read as empty, and
                # sixteen FAILs went to N/A with nothing named; fz18: a List without items
                # was named as one nested in a List, every kind partial)
                lost = (
                    (typed.kind,)
                    if typed is not None
                    else _file_kinds(stem)
                    if stem is not None
                    else tuple(sorted(BY_KIND))
                )
                self.partial.update(lost)
                what = "missing" if "items" not in doc else _type_word(items)
                self.problem(
                    f"{origin}: {kind} field items is {what}, not a list",
                    file=_file_of(origin),
                    field="items",
                    kinds=lost,
                )
                return
            self.add_list(items, origin, stem)
            return
        self.add_object(doc, origin, None)

    def add_list(self, items: list[Any], origin: str, stem: str | None) -> None:
        """Add the items of a ``List`` read whole."""
        if not all(isinstance(item, dict) for item in items):
            # a non-object item was some object of this List: its kind's list is partial
            hinted = spec_for_file_stem(stem) if stem is not None else None
            kinds = {hinted.kind} if hinted is not None else set()
            for item in items:
                spec = (
                    spec_for_object(str(item.get("apiVersion")), str(item.get("kind")))
                    if isinstance(item, dict)
                    else None
                )
                if spec is not None:
                    kinds.add(spec.kind)
            self._list_kinds = kinds or set(BY_KIND)
        for index, item in enumerate(items):
            self.add_object(item, origin, f"items[{index}]")
        self._list_kinds = set()
        if not items and stem is not None:
            hinted = spec_for_file_stem(stem)
            if hinted is not None:
                self.present.add(hinted.kind)

    def _add_taken(self, pieces: Iterable[list[Any]], origin: str, stem: str) -> None:
        """Add a streamed List's items, given as consecutive pieces of what
        :func:`~auditor.sources.intake.take_slim` made of them: an entry to keep, or an item
        for :meth:`add_object` to name.

        Raises:
            StreamDeclined: an item that is not an object (its kind only the whole List can
                tell), or an entry that is not what ``take_slim`` makes.
        """
        index = 0
        for taken in pieces:
            for item in taken:
                if type(item) is not tuple or not item:
                    raise StreamDeclined("a piece came back in another form")
                if item[0] is True:
                    self._keep(_checked_entry(item), f"{origin} items[{index}]", origin)
                elif len(item) == 2 and isinstance(item[1], dict):
                    self.add_object(item[1], origin, f"items[{index}]")
                else:
                    raise StreamDeclined("a List item that is not an object")
                index += 1
        if not index:
            hinted = spec_for_file_stem(stem)
            if hinted is not None:
                self.present.add(hinted.kind)

    def _copy_of(self, ident: tuple[str, str, str]) -> Any:
        """The record kept for ``ident`` (an index built on the first duplicate only)."""
        if self._by_ident is None:
            self._by_ident = {}
            for kind, objs in self.data.objects.items():
                namespaced = BY_KIND[kind].namespaced
                for o in objs:
                    ns = (o["metadata"].get("namespace") or "") if namespaced else ""
                    self._by_ident[(kind, ns, o["metadata"]["name"])] = o
        found = self._by_ident.get(ident)
        if found is None:  # kept after the index was built
            kind, namespace, name = ident
            found = next(
                (
                    o
                    for o in reversed(self.data.objects.get(kind, []))
                    if o["metadata"]["name"] == name
                    and (o["metadata"].get("namespace") or "") == namespace
                ),
                None,
            )
            if found is not None:
                self._by_ident[ident] = found
        return found

    def _keep(self, entry: Entry, loc: str, origin: str) -> None:
        """Keep an object's record, unless an object of its kind, namespace and name was kept
        before (then the second is named and ignored)."""
        kind, namespace, name, clean = entry
        self.present.add(kind)
        ident = (kind, namespace or "", name)
        first = self.seen.get(ident)
        if first is not None:
            if self._copy_of(ident) == clean:
                self._kind_problem(
                    kind,
                    f"{kind} {_qual(namespace, name)} is defined twice, in {first} and in "
                    f"{loc}; the first is audited, the second ignored",
                    origin,
                    namespace=namespace,
                    name=name,
                )
                return
            # Two different copies: which one the cluster holds cannot be told. The kind's
            # list is partial (checks over it cannot conclude) and the object is marked, so a
            # VM's checks are ERROR (red team: a copy without a disk turned FAILs into PASS).
            self.partial.add(kind)
            self.data.conflicts.add(ident)
            self._kind_problem(
                kind,
                f"{kind} {_qual(namespace, name)} is defined twice with different content, in "
                f"{first} and in {loc}; which one the cluster holds cannot be told",
                origin,
                namespace=namespace,
                name=name,
            )
            return
        self.seen[ident] = loc
        self.data.objects.setdefault(kind, []).append(clean)
        self.data.origins[ident] = loc
        meta = clean.get("metadata")
        uid = meta.get("uid") if type(meta) is dict else None
        if type(uid) is str and uid:
            other = self.uids.setdefault(uid, ident)
            if other != ident:
                self._same_uid(ident, other, uid, loc, origin)
        elif uid is not None and type(uid) is not str and kind not in UID_READ_KINDS:
            # owner references and Velero's labels name an object by its UID, which the
            # API server writes as a string (b40): which object it is cannot be proven, so
            # its kind's list no longer proves an absence (the readers of UID_READ_KINDS
            # name it at their object, for the VM that relies on it)
            self._kind_problem(
                kind,
                f"{loc}: {kind} {_qual(namespace, name)} field metadata.uid is {_type_word(uid)}, "
                "not the UID string the API server writes; who owns it or what it copied "
                "cannot be told",
                origin,
                namespace=namespace,
                name=name,
                field="metadata.uid",
            )
        if (
            self._folder_ns is not None
            and BY_KIND[kind].namespaced
            and namespace != self._folder_ns
        ):
            self._filed_elsewhere(ident, loc, origin)

    def _same_uid(
        self,
        ident: tuple[str, str, str],
        other: tuple[str, str, str],
        uid: str,
        loc: str,
        origin: str,
    ) -> None:
        """Name two objects with one ``metadata.uid``: the API server gives every object it
        creates a UID distinct over the whole life of the cluster
        (https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#uids), so
        one of them was copied or edited, and which is the cluster's cannot be told. Both
        kinds' lists are partial and both objects marked as conflicting copies (the VMs
        they belong to give ERROR): a claim given another claim's UID borrowed the
        PodVolumeBackup Velero labels with that UID (``velero.io/pvc-uid``), and a VM whose
        disk had no copy read READY (bench.mutations uid_twice)."""
        kind, namespace, name = ident
        self.partial.update((kind, other[0]))
        self.data.conflicts.update((ident, other))
        first = self.seen.get(other, "?")
        self._kind_problem(
            kind,
            f"{loc}: {kind} {_qual(namespace or None, name)} has metadata.uid {uid}, the UID of "
            f"{other[0]} {_qual(other[1] or None, other[2])} (in {first}); the API server gives "
            "each object its own UID, so one of them was copied or edited and which the "
            "cluster holds cannot be told",
            origin,
            namespace=namespace or None,
            name=name,
            field="metadata.uid",
        )

    def _filed_elsewhere(self, ident: tuple[str, str, str], loc: str, origin: str) -> None:
        """Name a namespaced object filed under ``namespaces/<ns>/`` of another namespace
        than its ``metadata.namespace``: an export (``oc adm inspect``, must-gather, a
        per-namespace ``oc get``) files each object under its own namespace, so the file was
        moved or the object edited, and which namespace it lives in cannot be told. Its kind
        is partial and the object marked as a conflicting copy (bench.mutations
        filed_elsewhere: a claim moved into another namespace's folder was read in its own
        namespace with nothing named)."""
        kind, namespace, name = ident
        self.partial.add(kind)
        self.data.conflicts.add(ident)
        self._kind_problem(
            kind,
            f"{loc}: {kind} {_qual(namespace, name)} is filed under the folder of namespace "
            f"{self._folder_ns}, but its metadata.namespace is {namespace}; which namespace "
            "it lives in cannot be told",
            origin,
            namespace=namespace,
            name=name,
            field="metadata.namespace",
        )

    def add_object(self, obj: Any, origin: str, where: str | None) -> None:
        loc = f"{origin} {where}" if where else origin
        entry = plain_entry(obj, slim=self.slim, owned=self.owned)
        if entry is not None:
            self._keep(entry, loc, origin)
            return
        if not isinstance(obj, dict):
            kinds = self._list_kinds or set(BY_KIND)
            self.partial.update(kinds)
            self.problem(
                f"{loc}: item is {_type_word(obj)}, not an object",
                file=_file_of(origin),
                kinds=tuple(sorted(kinds)),
            )
            return
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str):
            # which kind it was: the one it names, else its List's, else its file's
            # (red team: a VM item without apiVersion vanished and the VM list read complete)
            named = (
                spec_for_object(str(api_version), str(kind)) if isinstance(kind, str) else None
            ) or kind_hinted(kind)
            hinted = named or spec_for_file_stem(Path(_file_of(origin)).stem.lower())
            # nothing tells the kind (a file of many kinds, outside a List): any kind may have
            # lost an object, so every kind is partial (fz39: a KubeVirt CR whose apiVersion
            # was a list vanished and its kind read complete with none: NOT_READY -> READY)
            kinds = {hinted.kind} if hinted is not None else set(self._list_kinds) or set(BY_KIND)
            self.partial.update(kinds)
            meta = obj.get("metadata")
            name = meta.get("name") if isinstance(meta, dict) else None
            ns = meta.get("namespace") if isinstance(meta, dict) else None
            ns = ns if isinstance(ns, str) else None
            if hinted is not None and isinstance(name, str) and name:
                # its kind is told (by the kind it names, or its file): a VM so refused is
                # still listed, UNKNOWN (ClusterData.refused; bench.mutations list_entry
                # no_api_version, seed 8001: the VM vanished from the report)
                self.data.refused.add((hinted.kind, ns or "", name))
            self.problem(
                f"{loc}: object has no apiVersion/kind strings; not read",
                file=_file_of(origin),
                field="apiVersion" if not isinstance(api_version, str) else "kind",
                kinds=tuple(sorted(kinds)),
                **({"name": name} if isinstance(name, str) else {}),
                **({"namespace": ns} if ns is not None else {}),
            )
            return
        spec = spec_for_object(api_version, kind)
        damaged = misspelt_kind(api_version, kind) if spec is None else None
        if damaged is not None or (spec is None and kind == "List"):
            # A copy of a kind the auditor reads under a kind or group the API server never
            # writes, or a List nested in a List: its object is not read, and its kind's list
            # is then incomplete (never evidence of absence)
            lost = (
                (damaged.kind,)
                if damaged is not None
                else tuple(sorted(self._list_kinds or BY_KIND))
            )
            self.partial.update(lost)
            meta = obj.get("metadata")
            meta = meta if isinstance(meta, dict) else {}
            ns, name = meta.get("namespace"), meta.get("name")
            ns = ns if isinstance(ns, str) else None
            name = name if isinstance(name, str) else None
            if damaged is not None and name:
                # a VM so refused is still listed, UNKNOWN (bench.mutations api_version,
                # seed 8010: a VirtualMachine at apiVersion v1 vanished from the report)
                self.data.refused.add((damaged.kind, ns or "", name))
            self.problem(
                f"{loc}: {api_version} {kind} {_qual(ns, str(name))} is not how the API server "
                f"writes a {damaged.kind} ({damaged.group or 'core'} group); not read"
                if damaged is not None
                else f"{loc}: a List nested in a List's items; its items are not read",
                file=_file_of(origin),
                kind=damaged.kind if damaged is not None else None,
                namespace=ns,
                name=name,
                field="apiVersion" if damaged is not None and damaged.kind == kind else "kind",
                kinds=lost,
            )
            return
        if spec is None or not spec.selects(obj):  # unknown kind, or a ConfigMap not for Velero
            key = f"{api_version} {kind}"
            self.data.skipped[key] = self.data.skipped.get(key, 0) + 1
            known = unsupported_version(api_version, kind)
            if known is not None:
                # Never evidence: the list of that kind is incomplete, so no check may rely on
                # the absence of such an object either.
                meta = obj.get("metadata")
                meta = meta if isinstance(meta, dict) else {}
                ns, name = meta.get("namespace"), meta.get("name")
                if isinstance(name, str) and name:
                    self.data.refused.add((known.kind, ns if isinstance(ns, str) else "", name))
                self._kind_problem(
                    known.kind,
                    f"{loc}: {kind} {_qual(ns if isinstance(ns, str) else None, str(name))} is "
                    f"at apiVersion {api_version}, which the auditor does not read (it reads "
                    f"{', '.join(known.group + '/' + v for v in known.versions)}); not counted "
                    "as evidence",
                    origin,
                    namespace=ns if isinstance(ns, str) else None,
                    name=name if isinstance(name, str) else None,
                    field="apiVersion",
                )
            elif spec is not None:
                self._unselected_config_map(obj, loc, origin)
            return
        self.present.add(spec.kind)
        meta = obj.get("metadata")
        name = meta.get("name") if isinstance(meta, dict) else None
        if not isinstance(name, str) or not name:
            self._kind_problem(
                spec.kind,
                f"{loc}: {spec.kind} has no metadata.name; not read",
                origin,
                field="metadata.name",
            )
            return
        assert isinstance(meta, dict)
        namespace = self._namespace(spec, meta, loc, origin, name)
        if namespace is None and spec.namespaced:
            return
        if not self._shape_ok(spec, obj, loc, origin, namespace, name):
            return
        bad = name_fault(name, namespace if spec.namespaced else None)
        if bad is not None:
            # named, and read as it is: the renderers escape any text (a VM is not dropped)
            fld, shown = bad
            reason = (
                f"{loc}: {spec.kind} {fld} {shown} is not a name the API server writes (it "
                "holds a control character, space, non-ASCII character or '/', or is too "
                "long): the export was altered"
            )
            if spec.kind == "VirtualMachine":
                self.problem(
                    reason,
                    file=_file_of(origin),
                    kind=spec.kind,
                    namespace=namespace,
                    name=name,
                    field=fld,
                )
            else:
                # which VM's object it was is unknown (a VMI, a Route or a PVC with a Cyrillic
                # letter in its namespace, bench.mutations confusable: the VM it belonged to
                # read as not running, or without the Route a check had failed, AT_RISK or
                # UNKNOWN -> READY): its kind's list no longer proves an absence
                self._kind_problem(
                    spec.kind, reason, origin, namespace=namespace, name=name, field=fld
                )
        # Only an object read into namespace "default" or with a name no API server writes
        # gets here (plain_entry took the rest).
        fixed = {**obj, "metadata": {**meta, "namespace": namespace}} if spec.namespaced else obj
        entry = plain_entry(fixed, slim=self.slim, owned=self.owned, names=False)
        if entry is None:  # pragma: no cover - every check plain_entry makes was passed above
            raise AssertionError(f"{loc}: an object passed every check but was not kept")
        self._keep(entry, loc, origin)

    def _unselected_config_map(self, obj: dict[str, Any], loc: str, origin: str) -> None:
        """Name a ConfigMap left unselected whose ``data`` is no mapping of strings
        (:func:`configmap_data_fault`): whether it holds the resource policy a Backup names
        cannot be read, so it is refused (the policy stays unknown, never "not exported")."""
        fault = configmap_data_fault(obj) if obj.get("kind") == "ConfigMap" else None
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        ns, name = meta.get("namespace"), meta.get("name")
        if fault is None or not isinstance(name, str) or not name:
            return
        ns = ns if isinstance(ns, str) else None
        self.data.refused.add(("ConfigMap", ns or "", name))
        self.problem(
            f"{loc}: ConfigMap {_qual(ns, name)} field data {fault} (the API server refuses "
            "any other), so whether it is a Velero resource policy cannot be read; not read",
            file=_file_of(origin),
            kind="ConfigMap",
            namespace=ns,
            name=name,
            field="data",
        )

    def _namespace(
        self, spec: KindSpec, meta: dict[str, Any], loc: str, origin: str, name: str
    ) -> str | None:
        ns = meta.get("namespace")
        if not spec.namespaced:
            return None
        if ns is None or ns == "":
            # What `kubectl apply` does with a manifest that names no namespace; but the API
            # server writes every namespaced object with its namespace, so in an export this
            # is damage: named, and the kind's list no longer proves an absence (the object
            # may belong to any namespace)
            self._kind_problem(
                spec.kind,
                f"{loc}: {spec.kind} {name} has no metadata.namespace; read in namespace "
                "default, as kubectl would apply it (an export from the API server names it)",
                origin,
                name=name,
                field="metadata.namespace",
            )
            return "default"
        if not isinstance(ns, str):
            # which namespace it is in cannot be read; a VM so refused is still listed,
            # UNKNOWN, under its folder's namespace or UNREADABLE_NAMESPACE, so it never drops
            # out of the report (fz39: a VM whose namespace was a mapping vanished, as
            # bench.mutations counts a VM it names but does not list)
            listed = folder_namespace(_file_of(origin)) or UNREADABLE_NAMESPACE
            self.data.refused.add((spec.kind, listed, name))
            self._kind_problem(
                spec.kind,
                f"{loc}: {spec.kind} {name} has a metadata.namespace that is not a string; not read",
                origin,
                namespace=listed,
                name=name,
                field="metadata.namespace",
            )
            return None
        return ns

    def _shape_ok(
        self, spec: KindSpec, obj: dict[str, Any], loc: str, origin: str, ns: str | None, name: str
    ) -> bool:
        fault = shape_fault(obj, obj["metadata"])  # a mapping: add_object read its name
        if fault is None:
            return True
        fld, what = fault
        self.data.refused.add((spec.kind, ns or "", name))
        self._kind_problem(
            spec.kind,
            f"{loc}: {spec.kind} {_qual(ns, name)} field {fld} {what}; not read",
            origin,
            namespace=ns,
            name=name,
            field=fld,
        )
        return False

    def _check_owners(self) -> None:
        """Name each object whose ownerReference's UID is not that of the object it names
        (:func:`_owner_fault`). Kubernetes' garbage collector looks the owner up by kind and
        name and takes it as absent when the UID differs, and deletes a dependent whose owners
        are all absent (https://kubernetes.io/docs/concepts/architecture/garbage-collection/
        #owners-dependents; kubernetes pkg/controller/garbagecollector/garbagecollector.go
        isDangling): a DataVolume or claim owned so is on its way out, or the reference was
        copied or edited. The object is marked as a conflicting copy (its VM's checks ERROR)
        and its kind partial (bench.mutations owner_uid). Once per audit, over the objects
        read: a dict look-up per reference."""
        own = {ident: uid for uid, ident in self.uids.items()}
        for kind, objs in self.data.objects.items():
            namespaced = BY_KIND[kind].namespaced
            for obj in objs:
                meta = obj["metadata"]
                refs = meta.get("ownerReferences")
                if type(refs) is not list:
                    continue
                ns = (meta.get("namespace") or "") if namespaced else ""
                for i, ref in enumerate(refs):
                    fault = _owner_fault(ref, ns, self.uids, own)
                    if fault is None:
                        continue
                    ident = (kind, ns, meta["name"])
                    self.data.conflicts.add(ident)
                    origin = self.data.origins.get(ident, "?")
                    self._kind_problem(
                        kind,
                        f"{origin}: {kind} {_qual(ns or None, meta['name'])} field "
                        f"metadata.ownerReferences[{i}].uid {fault}: Kubernetes' garbage "
                        "collector takes that owner as gone (and deletes what only it owns), "
                        "or the reference was copied or edited",
                        _file_of(origin.split(" ", 1)[0]),
                        namespace=ns or None,
                        name=meta["name"],
                        field=f"metadata.ownerReferences[{i}].uid",
                    )
                    break

    def problem(self, reason: str, **kw: Any) -> None:
        self.data.problems.append(CollectionProblem(reason=reason, **kw))

    def _kind_problem(self, kind: str, reason: str, origin: str, **kw: Any) -> None:
        """A problem with an object of ``kind`` read from ``origin``: named, and ``kind``'s
        list is then partial (it no longer proves an absence)."""
        self.partial.add(kind)
        self.problem(reason, file=_file_of(origin), kind=kind, kinds=(kind,), **kw)

    def finish(self) -> None:
        if self.uids:
            self._check_owners()
        for kind in self.present | self.partial:
            if kind not in BY_KIND:
                continue
            state = KindState.PARTIAL if kind in self.partial else KindState.COMPLETE
            current = self.data.states.get(kind)
            if current is not KindState.PARTIAL:
                self.data.states[kind] = state
        for objs in self.data.objects.values():
            objs.sort(key=lambda o: (o["metadata"].get("namespace") or "", o["metadata"]["name"]))


def _owner_fault(
    ref: Any,
    namespace: str,
    uids: dict[str, tuple[str, str, str]],
    own: dict[tuple[str, str, str], str],
) -> str | None:
    """Why an ownerReference ``ref`` of an object in ``namespace`` cannot be the object it
    names: its ``uid`` is another object's, or the object of its kind and name was read with
    another UID; None when neither (or ``ref`` holds no kind, name and UID strings: shapes the
    records name). ``uids``: UID -> object read; ``own``: the reverse."""
    if type(ref) is not dict:
        return None
    uid, kind, name = ref.get("uid"), ref.get("kind"), ref.get("name")
    if type(uid) is not str or type(kind) is not str or type(name) is not str:
        return None
    spec = BY_KIND.get(kind)
    named = (kind, namespace if spec is not None and spec.namespaced else "", name)
    holder = uids.get(uid)
    if holder is not None and holder != named:
        return (
            f"is the UID of {holder[0]} {_qual(holder[1] or None, holder[2])}, not of {kind} {name}"
        )
    read = own.get(named)
    if read is not None and read != uid:
        return f"is not the UID of {kind} {name} ({read})"
    return None


def _checked_entry(item: tuple[Any, ...]) -> Entry:
    """The entry in ``(True, kind, namespace, name, record)`` as :func:`take_slim` makes it.

    Raises:
        StreamDeclined: ``item`` is not of that form (the read worker is not trusted blindly).
    """
    if (
        len(item) != 5
        or item[1] not in BY_KIND
        or not (item[2] is None or type(item[2]) is str)
        or type(item[3]) is not str
        or type(item[4]) is not dict
    ):
        raise StreamDeclined("a piece came back in another form")
    return item[1], item[2], item[3], item[4]


#: Files this large (in characters) that are an ``oc get`` List are read a piece at a time.
_STREAM_MIN_CHARS = 16 << 20
_SCAN_BYTES = 64 << 20  # bytes of an unreadable file scanned for the kinds it names
_KIND_LINE = re.compile(rb"^[ \t-]*kind:[ \t]*[\"']?([A-Za-z]+)", re.MULTILINE)


def _kinds_in_unreadable(path: Path) -> set[str]:
    """The kinds an unreadable file may hold: its name's kind and every ``kind:`` line of a
    kind the auditor reads (found in the raw bytes, so truncated, non-UTF-8 or duplicate-key
    files still say). A file that names none could hold any kind: all of them."""
    hinted = spec_for_file_stem(path.stem)
    kinds = {hinted.kind} if hinted is not None else set()
    try:
        with path.open("rb") as fh:
            raw = fh.read(_SCAN_BYTES + 1)
    except OSError:
        raw = b""
    if len(raw) > _SCAN_BYTES:  # too large to scan: it may hold anything
        return set(BY_KIND)
    kinds |= {k for m in _KIND_LINE.finditer(raw) if (k := m.group(1).decode()) in BY_KIND}
    return kinds or set(BY_KIND)


#: The namespace a refused object whose ``metadata.namespace`` is no string is listed under
#: (no namespace can be named so: a DNS-1123 label has no parentheses)
UNREADABLE_NAMESPACE = "(unreadable)"


def folder_namespace(rel: str) -> str | None:
    """The namespace a file's folder names: ``<ns>`` in ``namespaces/<ns>/...`` (a file,
    or a folder of files, below it), the first such part of ``rel`` (a path relative to the
    export root, ``/``-separated); None when it names none."""
    parts = rel.replace("\\", "/").split("/")
    for i, part in enumerate(parts[:-2]):
        if part == "namespaces" and parts[i + 1]:
            return parts[i + 1]
    return None


def _file_kinds(stem: str) -> tuple[str, ...]:
    """The kinds a file may hold by its name: the kind it names, else every kind."""
    hinted = spec_for_file_stem(stem)
    return (hinted.kind,) if hinted is not None else tuple(sorted(BY_KIND))


#: Kinds whose readers name a ``metadata.uid`` that is no string at the object, tied to the
#: VM relying on it (``auditor.inventory.records.PARSERS`` and the VM validation), so the
#: builder leaves it to them
UID_READ_KINDS = frozenset(
    {
        "VirtualMachine",
        "VirtualMachineInstance",
        "PersistentVolumeClaim",
        "PersistentVolume",
        "StorageClass",
        "DataVolume",
    }
)


def _type_word(value: Any) -> str:
    """A YAML reader's word for a value's type ("null", "a string"), not Python's."""
    if value is None:
        return "null"
    words = {
        str: "a string",
        int: "a number",
        float: "a number",
        bool: "a boolean",
        list: "a list",
        dict: "a mapping",
    }
    return words.get(type(value), f"a {type(value).__name__}")


def _file_of(origin: str) -> str:
    return origin.split("#", 1)[0]


def _qual(namespace: str | None, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name
