"""The name clients send for a deployment's model, and the condition that says where it
comes from (`modelfleet_contracts.served_names` has the precedence)."""

from modelfleet_contracts.conditions import Status
from modelfleet_contracts.models.modeldeployment import ModelDeploymentSpec
from modelfleet_contracts.observed import StagedCache
from modelfleet_contracts.served_names import (
    CONFLICT,
    ENGINE_DEFAULT,
    FROM_ENGINE_ARGS,
    FROM_MODEL_CACHE,
    FROM_SPEC,
    SERVED_MODEL_NAME_FLAG,
    ServedName,
    resolve_served_name,
)
from modelfleet_contracts.spec import filled

SERVED_NAME_CONDITION = "ServedModelNameResolved"


def served_name(spec: ModelDeploymentSpec, cache: StagedCache | None) -> ServedName:
    """The name clients send (`served_names` has the precedence)."""
    engine = spec.engine
    return resolve_served_name(
        framework=str(filled(engine.framework)) if engine else "vLLM",
        engine_args=[a.root for a in (engine.args or [])] if engine else [],
        spec_name=spec.servedModelName,
        natural=cache.natural_name if cache is not None else "",
    )


def served_name_condition(served: ServedName) -> Status:
    """ServedModelNameResolved: which name clients send and where it comes from; False when
    engine.args and spec.servedModelName disagree (the engine args win)."""
    if served.overridden is not None:
        return Status.false(
            SERVED_NAME_CONDITION,
            CONFLICT,
            f"engine.args sets {SERVED_MODEL_NAME_FLAG}={served.name}, which wins over "
            f"spec.servedModelName {served.overridden}: clients send {served.name!r}; "
            "remove one of the two",
        )
    said = {
        FROM_ENGINE_ARGS: f"from {SERVED_MODEL_NAME_FLAG} in engine.args",
        FROM_SPEC: "from spec.servedModelName",
        FROM_MODEL_CACHE: "the ModelCache source's id",
    }
    if served.name is None:
        return Status(
            SERVED_NAME_CONDITION,
            True,
            ENGINE_DEFAULT,
            "no spec.servedModelName and no ModelCache to name the model: the engine serves it "
            "under its own default (vLLM: the --model value)",
        )
    return Status(
        SERVED_NAME_CONDITION,
        True,
        served.origin,
        f"clients send model {served.name!r} ({said[served.origin]})",
    )
