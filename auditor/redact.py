"""Strip secret values from cluster objects before anything else sees them.

VM definitions carry cloud-init ``userData``/``networkData`` (plain or base64),
Windows ``sysprep`` answers and sometimes passwords in annotations; the
``kubectl.kubernetes.io/last-applied-configuration`` annotation repeats the
whole object, secrets included, so its value is dropped too. Sources call
:func:`redact` on every object they return, so no later layer (inventory,
report, logs, the ``collect`` export) can leak them. Secret *references* (a
Secret's name) are kept: a restorer needs to know which Secret to bring back.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import yaml

from auditor.kinds import is_resource_policy, project_fields, trim_within
from auditor.labelsyntax import REDACTED_VALUE
from auditor.netdata import FACTS_KEY, network_data_facts

__all__ = [
    "REDACTED",
    "shown_annotations",
    "shown_labels",
    "shown_url",
    "redact",
    "redact_in_place",
    "redact_projected",
    "redact_record",
    "SECRET_FIELD_NAMES",
]

REDACTED = REDACTED_VALUE  # "<redacted>": a label holding it is read as withheld (labelsyntax)

#: Keys whose *value* is secret wherever they appear in an object.
SECRET_FIELD_NAMES = frozenset(
    {
        "userData",
        "userDataBase64",
        "networkData",
        "networkDataBase64",
        "password",
        "passwd",
        "privateKey",
        "token",
        "stringData",
        "data",  # Secret/ConfigMap payloads (also nested data blobs in inline sysprep)
        "binaryData",
        # credentials under other names (red team, the ``collect`` export): object storage
        # and CSI keys, HTTP headers, mount options, environment values, Velero hook
        # commands; the auditor reads none of them
        "passphrase",
        "secretAccessKey",
        "secretKey",
        "accessKey",
        "sseCustomerKey",
        "apiKey",
        "apiToken",
        "apitoken",
        "clientSecret",
        "bearerToken",
        "chapPassword",
        "chapSecret",
        "adminKey",
        "userKey",
        "restuserkey",
        "extraHeaders",
        "secretExtraHeaders",
        "mountOptions",
        "env",
        "hooks",
    }
)

#: Keys whose value is a URL that may carry ``user:password@`` (DataVolume sources, CDI's
#: import endpoints, BackupStorageLocation endpoints): the credentials are cut, the URL kept.
#: CDI's import proxy (CDIConfig and CDI ``spec.config.importProxy``) too.
_URL_KEYS = frozenset(
    {"url", "s3Url", "publicUrl", "endpoint", "registryUrl", "proxy", "HTTPProxy", "HTTPSProxy"}
)
#: A CNI configuration: JSON text that may hold a password (NetworkAttachmentDefinition).
_JSON_TEXT_KEYS = frozenset({"config"})
_USERINFO = re.compile(r"(?<=://)[^/@\s]*@")

# Annotation and label keys that look like they carry a credential.
_SECRET_KEY = re.compile(
    r"(pass(word|wd)?|secret|token|credential|private[-_.]?key|api[-_.]?key"
    # and what the red team slipped past it: "encryption-key", "ssh-key", "auth",
    # "kubeconfig", "bootstrap-psk", "admin-pw", "webhook-url"
    r"|[-_./]key$|ssh|auth(?!or)|bearer|kubeconfig|psk|[-_./]pw$|webhook"
    # and shorter names (fz27): "pwd", "creds", a bare "pw" or "key" (with or without prefix)
    r"|pwd|creds?(?![a-z])|(?:^|/)(?:pw|key)$)",
    re.I,
)

# Annotations that hold a whole copy of the object as applied, secrets included.
_OBJECT_COPY_KEY = re.compile(r"last-applied-configuration$")

# Maps whose keys are checked for credential-looking names.
_META_MAPS = frozenset({"annotations", "labels"})

# Kinds whose ``data`` key is a payload; elsewhere ``data`` can be innocent structure.
_DATA_PAYLOAD_KINDS = frozenset({"Secret", "ConfigMap"})


#: Annotation keys whose values a report shows: KubeVirt's, OpenShift's and Velero's own
#: descriptive ones and ownership keys. Any other annotation is free text a user may have
#: put a password, token or kubeconfig in under an innocent key (red team: report.json and
#: report.html showed "corp.example/auth: Bearer ..." verbatim): its key is shown, its value
#: is not. Hook commands (``*.hook.backup.velero.io/*``) and CDI import endpoints can hold
#: credentials, so they are not on the list.
_SHOWN_ANNOTATION = re.compile(
    r"^(?:vm\.kubevirt\.io/|name\.os\.template\.kubevirt\.io/|kubevirt\.io/"
    r"|kubemacpool\.io/|app\.kubernetes\.io/|instancetype\.kubevirt\.io/"
    r"|backup\.velero\.io/backup-volumes(?:-excludes)?$|velero\.io/"
    r"|openshift\.io/(?:display-name|description)$|description$"
    r"|(?:[^/]*/)?(?:owner|team|owned-by|cost-center)$)"
)


def shown_annotations(annotations: dict[str, str]) -> dict[str, str]:
    """``annotations`` as a report may show them: every key, and the value only of the keys
    :data:`_SHOWN_ANNOTATION` names (else :data:`REDACTED`). Sources redact by key name
    only; a report shows what a reader needs, nothing more."""
    return {
        key: value if _SHOWN_ANNOTATION.search(key) or value == REDACTED else REDACTED
        for key, value in annotations.items()
    }


#: Label keys whose values a report shows: Kubernetes', KubeVirt's, OpenShift's and Velero's
#: own (``kubevirt.io/domain``, ``app.kubernetes.io/name``, ``velero.io/backup-name``) and
#: ownership keys. A label's value is limited to 63 characters of ``[A-Za-z0-9._-]``
#: (https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set),
#: which a password or token fits: under any other key it is shown as :data:`REDACTED`.
_SHOWN_LABEL = re.compile(
    r"^(?:(?:[^/]*\.)?(?:kubevirt\.io|kubernetes\.io|k8s\.io|openshift\.io|velero\.io)/"
    r"|(?:[^/]*/)?(?:owner|team|owned-by|cost-center|app|name|component|part-of|tier"
    r"|env|environment)$)"
)


def shown_labels(labels: dict[str, str], selected: frozenset[str] = frozenset()) -> dict[str, str]:
    """``labels`` as a report may show them: every key, and the value only of the keys
    :data:`_SHOWN_LABEL` names or a label selector names (``selected``: a reader compares
    those with the selector); any other value is :data:`REDACTED`."""
    return {
        key: value if key in selected or value == REDACTED or _SHOWN_LABEL.search(key) else REDACTED
        for key, value in labels.items()
    }


def shown_url(url: str) -> str:
    """``url`` without its ``user:password@`` part, query and fragment: what a report, a log
    line or an error message may show of an endpoint. Never raises (an unparsable URL is
    shown as ``<unreadable URL>``)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        return "<unreadable URL>"
    if not parts.scheme and not parts.netloc:
        return url.split("?", 1)[0].split("#", 1)[0].rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, host + port, parts.path, "", ""))


def redact(obj: dict[str, Any]) -> dict[str, Any]:
    """Return a deep copy of ``obj`` with every secret value replaced by ``<redacted>``.

    Handles any depth, so a VirtualMachineSnapshotContent embedding a VM spec,
    or a Template embedding VMs, is covered too. Non-dict input is returned as is.
    """
    return redact_in_place(copy.deepcopy(obj))


def redact_in_place(obj: dict[str, Any]) -> dict[str, Any]:
    """Replace every secret value in ``obj`` by ``<redacted>``, in place; return ``obj``.

    For freshly parsed objects that nothing else holds (the sources): no copy
    of a 400,000-object estate is made. Same rules as :func:`redact`.
    """
    kind = obj.get("kind") if isinstance(obj, dict) else None
    if isinstance(obj, dict) and kind == "ConfigMap" and _is_storage_class_map(obj):
        return _storage_class_map(obj)
    if isinstance(obj, dict) and kind == "ConfigMap" and is_resource_policy(obj):
        return _resource_policy(obj)
    if isinstance(obj, dict | list):
        _walk(obj, str(kind) in _DATA_PAYLOAD_KINDS, False)
    return obj


def redact_record(record: dict[str, Any]) -> dict[str, Any]:
    """:func:`redact_in_place` for a slim record (:func:`auditor.kinds.project`): sections
    whose own keys are no secret field are not looked at key by key, only their nested
    mappings and lists (labels and annotations as such). Same result, fewer calls.
    """
    kind = record.get("kind")
    if str(kind) in _DATA_PAYLOAD_KINDS or not _SPECIAL_KEYS.isdisjoint(record):
        return redact_in_place(record)
    for section in record.values():
        if isinstance(section, dict):
            if not _SPECIAL_KEYS.isdisjoint(section):
                return redact_in_place(record)
            for key, value in section.items():
                if isinstance(value, _NESTED):
                    _walk(value, False, key in _META_MAPS)
        elif isinstance(section, list):
            _walk(section, False, False)
    return record


def redact_projected(
    obj: dict[str, Any], keep: tuple[tuple[str, tuple[str, ...]], ...]
) -> dict[str, Any]:
    """``redact_record(project(obj, spec))`` in one pass (``keep``: ``spec.keep``, see
    :func:`auditor.kinds.project`): the slim record of ``obj``, redacted. Its sections are
    new mappings; what they hold is ``obj``'s own, nested mappings redacted in place (for an
    object parsed for the reader alone, as :func:`redact_in_place`).

    For :func:`auditor.sources.intake.plain_entry` only, after its shape check: ``obj``'s
    ``metadata.labels`` and ``metadata.annotations`` are absent or mappings of strings to
    strings, so a map whose keys were all judged no credential before is not looked at again
    (one set test in C instead of a call per key: a VolumeSnapshotContent per Backup and
    PVC, hundreds of thousands). Where that shortcut cannot be exact (a Secret or ConfigMap,
    or a kept field or section with a secret name), this is ``redact_record(project(...))``.
    """
    kind = obj.get("kind")
    if str(kind) in _DATA_PAYLOAD_KINDS or not _plain_keep(keep):
        return redact_record(project_fields(obj, keep))
    out: dict[str, Any] = {"apiVersion": obj.get("apiVersion"), "kind": kind}
    for section, fields in keep:
        part = obj.get(section)
        if not isinstance(part, dict):
            if part is None and section in obj:
                out[section] = None  # written null: kept to be named (kinds.project)
            continue
        kept: dict[str, Any] = {}
        for key in fields:
            if key in part:
                value = kept[key] = part[key]
                if isinstance(value, _NESTED):
                    meta_map = key in _META_MAPS
                    if not (
                        meta_map
                        and section == "metadata"
                        and isinstance(value, dict)
                        and _SAFE_META_KEYS.issuperset(value)
                    ):
                        _walk(value, False, meta_map)
        trim_within(kept)
        out[section] = kept
    return out


def _plain_keep(keep: tuple[tuple[str, tuple[str, ...]], ...]) -> bool:
    """Whether no section or field ``keep`` names is a secret field name (cached per ``keep``)."""
    known = _PLAIN_KEEP.get(keep)
    if known is None:
        known = _PLAIN_KEEP[keep] = not any(
            section in _SPECIAL_KEYS or not _SPECIAL_KEYS.isdisjoint(fields)
            for section, fields in keep
        )
    return known


_PLAIN_KEEP: dict[tuple[tuple[str, tuple[str, ...]], ...], bool] = {}


# Velero's change-storage-class plugin ConfigMap: ``data`` maps StorageClass names to
# StorageClass names (https://velero.io/docs/main/restore-reference/). Only entries whose key
# and value are both valid object names are kept; anything else is redacted like any payload.
_CHANGE_SC = ("velero.io/change-storage-class", "RestoreItemAction")
_OBJECT_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


def _is_storage_class_map(obj: dict[str, Any]) -> bool:
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return isinstance(labels, dict) and labels.get(_CHANGE_SC[0]) == _CHANGE_SC[1]


def _storage_class_map(obj: dict[str, Any]) -> dict[str, Any]:
    had_data = "data" in obj
    data = obj.pop("data", None)
    _walk(obj, True, False)
    if isinstance(data, dict):
        obj["data"] = {
            str(k): v
            if isinstance(v, str) and _OBJECT_NAME.match(str(k)) and _OBJECT_NAME.match(v)
            else REDACTED
            for k, v in data.items()
        }
    elif had_data:
        obj["data"] = REDACTED
    return obj


#: The top-level keys of a Velero resource-policy document besides ``version`` (velero
#: internal/resourcepolicies/resource_policies.go ``ResourcePolicies``).
_POLICY_KEYS = frozenset({"volumePolicies", "includeExcludePolicy"})


def _resource_policy(obj: dict[str, Any]) -> dict[str, Any]:
    """A Velero resource-policy ConfigMap: its policy YAML is kept (conditions and actions
    name volumes, classes and drivers, no secret), less any ``custom`` action's
    ``parameters`` (a plugin's, free-form); a value that is no policy document (no
    ``volumePolicies``/``includeExcludePolicy`` key: a credential kept beside it, say), and
    any other top-level key of one, is redacted."""
    data = obj.pop("data")
    _walk(obj, True, False)
    kept: dict[str, Any] = {}
    for key, text in data.items():
        try:
            doc = yaml.safe_load(text) if isinstance(text, str) else None
        except yaml.YAMLError:
            doc = None
        if not isinstance(doc, dict) or not _POLICY_KEYS.intersection(doc):
            # another entry of the ConfigMap (a credential beside the policy, say): not kept
            kept[str(key)] = REDACTED
            continue
        # only the keys of Velero's ResourcePolicies document; any other is no policy field
        doc = {k: (v if k in _POLICY_KEYS | {"version"} else REDACTED) for k, v in doc.items()}
        for item in doc.get("volumePolicies") or []:
            action = item.get("action") if isinstance(item, dict) else None
            if isinstance(action, dict) and "parameters" in action:
                action["parameters"] = REDACTED
        kept[str(key)] = yaml.safe_dump(doc, sort_keys=False)
    obj["data"] = kept
    return obj


#: Keys whose mapping :func:`_walk` must look at key by key (every other mapping: only its
#: nested mappings and lists are visited).
#: KubeVirt's cloud-init volume sources (``CloudInitNoCloudSource``,
#: ``CloudInitConfigDriveSource``, https://github.com/kubevirt/kubevirt/blob/main/staging/src/kubevirt.io/api/core/v1/schema.go):
#: mappings of userData/networkData (redacted by name) and Secret references; any other
#: shape is the payload written in the wrong place.
_CLOUD_INIT_KEYS = frozenset({"cloudInitNoCloud", "cloudInitConfigDrive"})
_SPECIAL_KEYS = SECRET_FIELD_NAMES | {"sysprep"} | _CLOUD_INIT_KEYS | _URL_KEYS | _JSON_TEXT_KEYS
_NESTED = (dict, list)


def _walk(value: Any, data_is_payload: bool, in_meta_map: bool) -> None:
    """Redact ``value`` (a dict or list) in place; ``in_meta_map``: it is (in) annotations or labels."""
    if isinstance(value, list):
        for item in value:
            if isinstance(item, _NESTED):
                _walk(item, data_is_payload, in_meta_map)
        return
    if not in_meta_map and _SPECIAL_KEYS.isdisjoint(value):
        # The common case, decided in C: no key here is secret (a non-string key's str()
        # never spells one), so only the nested values need a look.
        for key, item in value.items():
            if isinstance(item, _NESTED):
                _walk(item, data_is_payload, key in _META_MAPS)
        return
    facts: Any = None
    for key, item in value.items():
        skey = key if isinstance(key, str) else str(key)
        if in_meta_map and _secret_meta_key(skey):
            value[key] = REDACTED
        elif (
            isinstance(item, str)
            and ("@" in item or "?" in item)
            and (in_meta_map or skey in _URL_KEYS)
        ):
            value[key] = _url_text(item)
        elif skey in _JSON_TEXT_KEYS and isinstance(item, str) and not in_meta_map:
            value[key] = _json_text(item)
        elif skey in SECRET_FIELD_NAMES and (skey != "data" or data_is_payload):
            if item not in (None, "", {}, []):
                value[key] = REDACTED
            if skey.startswith("networkData") and item != REDACTED:
                # A yes/no fact a restorer needs, taken before stripping (an export already
                # stripped keeps the facts taken from the original text).
                facts = network_data_facts(skey, item) or facts
        elif skey == "sysprep" and item is not None:
            value[key] = _sysprep(item) if isinstance(item, dict) else REDACTED
        elif skey in _CLOUD_INIT_KEYS and item is not None:
            value[key] = _cloud_init(item, data_is_payload)
        elif isinstance(item, _NESTED):
            _walk(item, data_is_payload, skey in _META_MAPS)
    if facts is not None:
        value[FACTS_KEY] = facts


#: Annotation and label keys already judged by :func:`_secret_meta_key` (the same few keys
#: repeat on every object); bounded, so input with millions of distinct keys cannot grow it.
_META_KEY_VERDICTS: dict[str, bool] = {}
_META_KEY_VERDICTS_MAX = 1 << 16
#: The keys of :data:`_META_KEY_VERDICTS` judged no credential (same bound).
_SAFE_META_KEYS: set[str] = set()


def _secret_meta_key(key: str) -> bool:
    """Whether an annotation or label ``key`` names a credential or a copy of the object."""
    verdict = _META_KEY_VERDICTS.get(key)
    if verdict is None:
        verdict = bool(_SECRET_KEY.search(key) or _OBJECT_COPY_KEY.search(key))
        if len(_META_KEY_VERDICTS) < _META_KEY_VERDICTS_MAX:
            _META_KEY_VERDICTS[key] = verdict
            if not verdict:
                _SAFE_META_KEYS.add(key)
    return verdict


def _url_text(text: str) -> str:
    """``text`` with the ``user:password@`` of any URL in it cut, and the query of a URL
    (``https://host/disk.img?X-Amz-Signature=...``: a presigned URL's signature, a registry
    token) replaced by :data:`REDACTED`; the scheme, host and path stay (what the auditor
    reads of an endpoint)."""
    text = _USERINFO.sub(f"{REDACTED}@", text)
    if "://" in text and "?" in text:
        text = _QUERY.sub(rf"\1?{REDACTED}", text)
    return text


#: The query of a URL: from ``?`` to a fragment, blank or the end.
_QUERY = re.compile(r"(?<=://)([^?\s]*)\?[^#\s]*")


def _json_text(text: str) -> str:
    """JSON text (a CNI configuration) with its secret fields redacted; the text itself when
    it holds none or is no JSON object (then a secret-looking word makes it all redacted)."""
    lowered = text.lower()
    if not any(w in lowered for w in ("pass", "secret", "token", "key", "credential")):
        return text
    try:
        doc = json.loads(text)
    except ValueError:
        return REDACTED
    if not isinstance(doc, dict | list):
        return text
    before = json.dumps(doc, sort_keys=True)
    _walk(doc, False, False)
    return text if json.dumps(doc, sort_keys=True) == before else json.dumps(doc)


#: The reference fields of a cloud-init source; every other field is (or holds) payload.
_CLOUD_INIT_REFS = frozenset({"secretRef", "networkDataSecretRef", FACTS_KEY})


def _cloud_init(item: Any, data_is_payload: bool) -> Any:
    """A cloud-init source with every field but its Secret references redacted (a field
    under a name KubeVirt does not have, ``userdata`` or ``user_data``, is payload all the
    same); one that is no mapping (its text written in place of the source) is payload."""
    if not isinstance(item, dict):
        return REDACTED
    _walk(item, data_is_payload, False)
    for key, value in item.items():
        if key not in _CLOUD_INIT_REFS and value not in (None, "", {}, [], REDACTED):
            item[key] = REDACTED
    return item


def _sysprep(item: dict[str, Any]) -> dict[str, Any]:
    """Keep only the ConfigMap/Secret reference of a sysprep volume."""
    kept: dict[str, Any] = {}
    for ref in ("configMap", "secret"):
        src = item.get(ref)
        if isinstance(src, dict) and "name" in src:
            kept[ref] = {"name": src["name"]}
    return kept or {"value": REDACTED}
