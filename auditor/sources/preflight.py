"""Ask the API server, with SelfSubjectAccessReviews, whether the audit may read each kind.

One review per kind and verb (``list``, ``get``), per namespace when namespaces
are given (cluster-scoped kinds are checked cluster-wide; with namespaces the
Namespace kind is checked as ``get`` of each named namespace). Creating a
SelfSubjectAccessReview changes nothing in the cluster; it is the one POST the
auditor makes, and only here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from auditor.kinds import KINDS, KindSpec
from auditor.redact import shown_url
from auditor.sources.kubeclient import ClusterAccessError

__all__ = ["Permission", "check_permissions", "VERBS"]

#: The verbs the audit needs on every kind it reads.
VERBS = ("list", "get")


@dataclass(frozen=True)
class Permission:
    """One answered review: may we ``verb`` ``resource`` (plural.group) in ``namespace``?"""

    kind: str
    resource: str
    namespace: str | None
    verb: str
    allowed: bool
    reason: str = ""


def check_permissions(api_client: Any, namespaces: tuple[str, ...] = ()) -> list[Permission]:
    """Return one :class:`Permission` per kind, verb and namespace, in KINDS order.

    Raises:
        ClusterAccessError: a review could not be created (server unreachable,
            or the SelfSubjectAccessReview API itself refused).
    """
    # imported when used: a directory audit never loads the Kubernetes client
    from kubernetes import client as k8s_client

    api = k8s_client.AuthorizationV1Api(api_client)
    out: list[Permission] = []
    for spec in KINDS:
        for namespace, verb in _questions(spec, namespaces):
            out.append(_ask(api, spec, namespace, verb))
    return out


def _questions(spec: KindSpec, namespaces: tuple[str, ...]) -> list[tuple[str | None, str]]:
    if spec.kind == "Namespace" and namespaces:
        return [(ns, "get") for ns in namespaces]
    scopes: tuple[str | None, ...] = namespaces if spec.namespaced and namespaces else (None,)
    return [(ns, verb) for ns in scopes for verb in VERBS]


def _ask(api: Any, spec: KindSpec, namespace: str | None, verb: str) -> Permission:
    import urllib3
    from kubernetes import client as k8s_client
    from kubernetes.client.exceptions import ApiException

    name = namespace if spec.kind == "Namespace" and namespace else None
    body = k8s_client.V1SelfSubjectAccessReview(
        spec=k8s_client.V1SelfSubjectAccessReviewSpec(
            resource_attributes=k8s_client.V1ResourceAttributes(
                group=spec.group, resource=spec.plural, verb=verb, namespace=namespace, name=name
            )
        )
    )
    try:
        review = api.create_self_subject_access_review(body=body)
    except (ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
        raise ClusterAccessError(
            f"cannot create a SelfSubjectAccessReview at {shown_url(str(api.api_client.configuration.host))}: "
            f"{getattr(exc, 'status', '')} {getattr(exc, 'reason', exc)}"
        ) from exc
    status = review.status
    resource = f"{spec.plural}.{spec.group}" if spec.group else spec.plural
    return Permission(
        kind=spec.kind,
        resource=resource,
        namespace=namespace,
        verb=verb,
        allowed=bool(status and status.allowed),
        reason=str(status.reason or "") if status else "",
    )
