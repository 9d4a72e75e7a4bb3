"""Kubernetes resource quantities (`10Gi`, `1.5T`, `500M`, `1e9`, `10737418240`), read
exactly, so two spellings compare as the API server compares them (`1Ti` > `1000Gi` >
`1T`).

The grammar is apimachinery's `resource.Quantity`: an optionally signed decimal number, then
a binary suffix (Ki Mi Gi Ti Pi Ei), a decimal one (n u m k M G T P E, or none) or a decimal
exponent (`e3`, `E-2`). `1E` is an exabyte, `1E3` a thousand.
"""

import re
from fractions import Fraction
from typing import Any

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_QUANTITY = re.compile(
    r"(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+))"
    r"(?:(?P<suffix>[KMGTPE]i|[numkMGTPE])|[eE](?P<exponent>[+-]?\d{1,3}))?"
)
# Longer than any quantity a claim carries; refused rather than read (no text-sized numbers).
_MAX_LENGTH = 64

GIB = 2**30


def parse_quantity(value: Any) -> Fraction | None:
    """The quantity `value` spells (a string, or a whole number as YAML may give one), exactly;
    None when it is no quantity Kubernetes would accept."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(int(value)) if value.is_integer() else None
    if not isinstance(value, str) or len(value) > _MAX_LENGTH:
        return None
    found = _QUANTITY.fullmatch(value)
    if not found:
        return None
    number = Fraction(found["number"])
    if found["exponent"] is not None:
        return number * Fraction(10) ** int(found["exponent"])
    suffix = found["suffix"] or ""
    if suffix in _BINARY:
        return number * 1024 ** _BINARY[suffix]
    return number * Fraction(10) ** _DECIMAL[suffix]


def gib_ceiling(size: Fraction) -> int:
    """The least whole number of GiB that holds `size` bytes."""
    return -(-size // GIB) if size > 0 else 0
