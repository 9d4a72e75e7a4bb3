"""provider-kubernetes' `DeriveFromCelQuery` readiness: a CEL expression over the observed
remote object (variable `object`) that must evaluate to a bool."""

import functools
import hashlib
import json
from typing import Any

import celpy


class ReadinessError(ValueError):
    """The query cannot be compiled or does not yield a bool (the provider reports it)."""


@functools.cache
def _program(query: str) -> Any:
    env = celpy.Environment()
    try:
        return env.program(env.compile(query))
    except Exception as exc:  # celpy raises its own parse error types
        raise ReadinessError(f"cannot compile CEL query {query!r}: {exc}") from exc


# (query, digest of the remote object) -> the answer. The provider asks again every round
# (after each apply and each observe) about objects that mostly have not changed, and
# converting an object to CEL costs more than hashing it.
_answers: dict[tuple[str, bytes], bool] = {}
MAX_ANSWERS = 1 << 16


def evaluate(query: str, remote: dict[str, Any]) -> bool:
    """Whether `remote` is ready per `query`. A field the object does not have yet makes the
    query false, as with the provider (it reports the object not ready, not an error)."""
    text = json.dumps(remote, sort_keys=True, default=repr).encode()
    key = (query, hashlib.blake2b(text, digest_size=16).digest())
    if key not in _answers:
        if len(_answers) >= MAX_ANSWERS:
            _answers.clear()
        _answers[key] = _evaluate(query, remote)
    return _answers[key]


def _evaluate(query: str, remote: dict[str, Any]) -> bool:
    program = _program(query)
    try:
        result = program.evaluate({"object": celpy.json_to_cel(remote)})
    except Exception:
        return False
    if isinstance(result, celpy.CELEvalError):
        return False
    # celtypes.BoolType subclasses int, not bool
    if not isinstance(result, bool) and type(result).__name__ != "BoolType":
        raise ReadinessError(f"CEL query {query!r} returned {type(result).__name__}, not bool")
    return bool(result)
