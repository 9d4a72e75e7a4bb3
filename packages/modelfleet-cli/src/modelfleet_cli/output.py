"""Printing objects as a YAML stream the way `crossplane render` does: every document starts
with `---`, keys sorted (Kubernetes' serializer sorts map keys), and whole numbers printed as
integers (protobuf Structs carry every number as a double; Go prints 8.0 as 8)."""

from collections.abc import Iterable, Mapping
from typing import Any

import yaml


def whole_numbers_as_int(value: Any) -> Any:
    """`value` with every float that is a whole number turned into an int, recursively."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {k: whole_numbers_as_int(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [whole_numbers_as_int(v) for v in value]
    return value


def yaml_stream(documents: Iterable[Mapping[str, Any]]) -> str:
    return "".join(
        "---\n"
        + yaml.safe_dump(whole_numbers_as_int(doc), sort_keys=True, default_flow_style=False)
        for doc in documents
    )
