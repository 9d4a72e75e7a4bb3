"""Tolerant reads of observed objects: a field of the wrong shape reads as empty, never raises.

Observed resources come from other controllers and users; a function reading a few fields
of them must not crash because one of those fields has an unexpected type.
"""

from typing import Any


def mapping_at(obj: Any, key: str) -> dict[str, Any]:
    """`obj[key]` when both are mappings, else `{}`."""
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, dict) else {}


def list_at(obj: Any, key: str) -> list[Any]:
    """`obj[key]` when `obj` is a mapping and the value a list, else `[]`."""
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, list) else []


def mapping_path(obj: Any, *keys: str) -> dict[str, Any]:
    """The mapping at `obj[k1][k2]...`, `{}` if any step is missing or not a mapping."""
    for key in keys:
        obj = mapping_at(obj, key)
    return obj if isinstance(obj, dict) else {}


def as_int(value: Any, default: int = 0) -> int:
    """`value` as an int (Crossplane sends numbers as floats, so 3.0 is 3); `default` when it
    is no number (None, a string, a bool) or no finite one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    try:
        return int(value)
    except (OverflowError, ValueError):
        return default


def int_at(obj: Any, key: str, default: int = 0) -> int:
    """`obj[key]` as an int (`as_int`), `default` if it is not one."""
    return as_int(obj.get(key) if isinstance(obj, dict) else None, default)
