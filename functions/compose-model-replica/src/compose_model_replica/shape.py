"""The shape of a replica's workload, read once from its typed spec: what the pods, probes,
engine command lines and the workload itself all derive from."""

from dataclasses import dataclass

from modelfleet_contracts.models.modelreplica import Engine, Gang, ModelReplicaSpec
from modelfleet_contracts.spec import filled


@dataclass(frozen=True)
class ReplicaShape:
    nodes: int  # pods per serving group: 1 is a Deployment, more a LeaderWorkerSet gang
    gpus: int  # GPUs each engine pod claims (0: none)
    port: int  # the port the engine serves HTTP on
    framework: str  # vLLM (turnkey command) or Custom (the user's command)
    startup: str  # the gang's startupPolicy as composed (startup_policy)
    asked_startup: str | None  # the gang's startupPolicy as the spec writes it (None: unset)
    engine: Engine  # the engine block with the XRD's defaults applied
    served_model_name: str | None = None  # the name clients send, as the deployment resolved it

    @property
    def gang(self) -> bool:
        return self.nodes > 1

    @property
    def tensor_parallel(self) -> int:
        """Tensor parallelism: the pod's GPUs, and at least one device."""
        return max(1, self.gpus)

    @property
    def startup_overridden(self) -> bool:
        """A gang composed with another startupPolicy than its spec asks (startup_policy)."""
        return self.gang and self.asked_startup not in (None, self.startup)


LEADER_CREATED = "LeaderCreated"
LEADER_READY = "LeaderReady"
# Why a vLLM gang is not started as asked, in the replica's condition and a Warning event.
STARTUP_OVERRIDDEN = (
    "gang.startupPolicy {asked} is composed as LeaderCreated: a vLLM gang's leader is Ready only "
    "once its workers have joined it, so under {asked} its workers would never be created"
)


def startup_policy(framework: str, asked: str | None) -> str:
    """The gang's startupPolicy: as asked (LeaderReady when unset), except that a vLLM gang
    starts `LeaderCreated`. Its leader is Ready only once it serves, which needs its workers
    (probes.py): under `LeaderReady` they would never be created."""
    if framework == "vLLM":
        return LEADER_CREATED
    return asked or LEADER_READY


def replica_shape(spec: ModelReplicaSpec) -> ReplicaShape:
    engine = spec.engine or Engine()
    gang = spec.gang or Gang()
    framework = str(filled(engine.framework))
    asked = str(gang.startupPolicy) if gang.startupPolicy is not None else None
    return ReplicaShape(
        nodes=spec.nodes,
        # gpusPerNode as placed by the scheduler; a replica written by hand without it
        # claims one GPU.
        gpus=1 if spec.gpusPerNode is None else spec.gpusPerNode,
        port=filled(engine.port),
        framework=framework,
        startup=startup_policy(framework, asked),
        asked_startup=asked,
        engine=engine,
        served_model_name=spec.servedModelName,
    )
