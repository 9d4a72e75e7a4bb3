"""The engine block's CEL rules, in words, for both XRDs that carry it (ModelDeployment and
ModelReplica): what their generated models do not check."""

from typing import Protocol


class EngineBlock(Protocol):
    @property
    def framework(self) -> object: ...
    @property
    def command(self) -> object: ...
    @property
    def multiNodeLauncher(self) -> object: ...


def engine_problem(engine: EngineBlock | None) -> str | None:
    """Why `engine` cannot be composed, or None."""
    if engine is None:
        return None
    if engine.framework == "Custom" and not engine.command:
        return "engine.command is required when engine.framework is Custom"
    if engine.multiNodeLauncher == "Ray" and engine.framework == "Custom":
        return (
            "engine.multiNodeLauncher Ray applies to framework vLLM only "
            "(a Custom engine starts its own gang)"
        )
    return None
