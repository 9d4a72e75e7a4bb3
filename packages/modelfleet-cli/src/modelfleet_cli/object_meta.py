"""What the API server checks of an object's name and namespace before anything else, with
its words (k8s.io/apimachinery's validation): a custom resource's `metadata.name` is a
lowercase RFC 1123 subdomain, its `metadata.namespace` a lowercase RFC 1123 label.

A name the API server accepts can still be refused later: Crossplane names composed
resources from the XR's name, and CLI v2.5's `crossplane composition render` refuses such a
name (`cannot apply composed resource ... because it has an invalid name`); these checks
refuse the XR first, at the point `kubectl apply` would.
"""

import re
from collections.abc import Mapping
from typing import Any

SUBDOMAIN_MAX = 253
LABEL_MAX = 63
SUBDOMAIN_PATTERN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
LABEL_PATTERN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    f"regex used for validation is '{SUBDOMAIN_PATTERN}')"
)
LABEL_MESSAGE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    f"regex used for validation is '{LABEL_PATTERN}')"
)
# A value longer than this is shown shortened, with its length (the message stays one line).
SHOWN = 64


def _shown(value: str) -> str:
    if len(value) <= SHOWN:
        return f'"{value}"'
    return f'"{value[:SHOWN]}..." ({len(value)} characters)'


def _invalid(path: str, value: str, detail: str) -> str:
    return f"{path}: Invalid value: {_shown(value)}: {detail}"


def _rfc1123_errors(path: str, value: str, pattern: str, message: str, limit: int) -> list[str]:
    errors = []
    if len(value) > limit:
        errors.append(_invalid(path, value, f"must be no more than {limit} characters"))
    if not re.fullmatch(pattern, value):
        errors.append(_invalid(path, value, message))
    return errors


def metadata_errors(obj: Mapping[str, Any], *, namespaced: bool) -> list[str]:
    """The API server's refusals of `obj`'s name and (for a namespaced kind) namespace."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping):
        return ["metadata.name: Required value: name or generateName is required"]
    errors = []
    name = metadata.get("name")
    if name is None or name == "":
        errors.append("metadata.name: Required value: name or generateName is required")
    elif not isinstance(name, str):
        errors.append(f"metadata.name: Invalid value: {name!r}: must be a string")
    else:
        errors += _rfc1123_errors(
            "metadata.name", name, SUBDOMAIN_PATTERN, SUBDOMAIN_MESSAGE, SUBDOMAIN_MAX
        )
    namespace = metadata.get("namespace")
    if namespaced and namespace not in (None, ""):
        if not isinstance(namespace, str):
            errors.append(f"metadata.namespace: Invalid value: {namespace!r}: must be a string")
        else:
            errors += _rfc1123_errors(
                "metadata.namespace", namespace, LABEL_PATTERN, LABEL_MESSAGE, LABEL_MAX
            )
    return errors
