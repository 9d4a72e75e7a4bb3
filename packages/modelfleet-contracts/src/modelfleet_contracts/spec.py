"""An XR's spec as its generated model, or why it cannot be acted on."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

Spec = TypeVar("Spec", bound=BaseModel)
T = TypeVar("T")


@dataclass(frozen=True)
class InvalidSpec:
    """A spec the function cannot act on; `message` names the first problem."""

    message: str


def _has_null(value: Any) -> bool:
    if isinstance(value, dict):
        return any(v is None or _has_null(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_null(v) for v in value)
    return False


def parse_spec(
    model: type[Spec], raw: Any, check: Callable[[Spec], str | None] | None = None
) -> Spec | InvalidSpec:
    """`raw` (the spec as Crossplane sends it: numbers as floats) as `model`, with its
    declared types and defaults, or the first problem in words: the schema's, then what
    `check` finds (the XRD's CEL rules, which the generated model does not carry).

    An explicit null reads as absent, so the field takes its declared default (the API
    server prunes nulls; a spec built by hand may still carry them)."""
    try:
        spec = model.model_validate(raw)
        if _has_null(raw):
            spec = model.model_validate(
                spec.model_dump(mode="json", exclude_none=True, warnings=False)
            )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(["spec", *(str(p) for p in first["loc"])])
        return InvalidSpec(f"{where}: {first['msg']} ({exc.error_count()} problem(s) in total)")
    problem = check(spec) if check else None
    return InvalidSpec(problem) if problem else spec


def filled(value: T | None) -> T:
    """A field the XRD gives a default, as `parse_spec` returns it: never None (a null reads
    as absent, so the default applies). The generated type still says `| None`; this says
    what parse_spec guarantees, and fails loudly if a spec did not come from it."""
    if value is None:
        raise ValueError("a field with a declared default is None: not a parse_spec result")
    return value
