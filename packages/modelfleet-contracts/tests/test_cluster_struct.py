"""clusters: an InferenceCluster reads as the same ClusterView straight from protobuf as from
plain data, whatever shape its fields have, and reading never adds a key."""

from hypothesis import given
from hypothesis import strategies as st
from modelfleet_contracts.clusters import read_cluster
from modelfleet_contracts.edge.clusters import read_cluster_struct
from modelfleet_devtools.fuzz import read_both_ways, struct_of
from modelfleet_devtools.world import inference_cluster

odd = (
    st.none() | st.booleans() | st.text(max_size=6) | st.floats() | st.lists(st.none(), max_size=2)
)
text = st.sampled_from(["", "gpu-a", "modelfleet", "ReadWriteMany", "Connected", "True"]) | odd
condition = st.dictionaries(
    st.sampled_from(["type", "status", "reason"]),
    st.sampled_from(["Connected", "Ready", "True", "False", "Unknown", "FatalError"]) | odd,
    max_size=3,
)
storage = st.dictionaries(
    st.sampled_from(["storageClassName", "accessMode", "ready"]), text | odd, max_size=3
)
pool = st.dictionaries(
    st.sampled_from(["name", "nodeCount", "gpu", "nodeSelector"]),
    text | st.integers(0, 8) | st.dictionaries(st.sampled_from(["count", "pool"]), text),
    max_size=4,
)
status = st.dictionaries(
    st.sampled_from(
        [
            "providerConfigName",
            "workloadNamespace",
            "hydratorServiceAccount",
            "conditions",
            "storage",
            "nodePools",
        ]
    ),
    text | st.lists(condition | odd, max_size=3) | storage | st.lists(pool | odd, max_size=2),
    max_size=6,
)
cluster = st.dictionaries(
    st.sampled_from(["metadata", "status"]),
    st.dictionaries(
        st.sampled_from(["name", "labels"]),
        text | st.dictionaries(st.sampled_from(["tier", "region"]), text, max_size=2),
    )
    | status
    | odd,
)


@given(cluster)
def test_protobuf_and_plain_readers_agree_on_any_shape(data):
    fast, oracle = read_both_ways(read_cluster_struct, read_cluster, data)
    assert fast == oracle


def test_a_connected_cluster_with_rwx_storage_reads_as_reachable_with_shared_storage():
    ic = inference_cluster("gpu-a", labels={"tier": "gpu"})
    view = read_cluster_struct(struct_of(ic))
    assert view == read_cluster(ic)
    assert view.reachable and view.has_shared_storage and view.labels == {"tier": "gpu"}
    assert view.node_pools, "the pools are read unless left out"


def test_leaving_node_pools_out_reads_everything_else():
    ic = inference_cluster("gpu-a")
    view = read_cluster_struct(struct_of(ic), node_pools=False)
    assert view.node_pools == () and view.name == "gpu-a" and view.reachable


def test_the_hydrator_service_account_is_read_once_reported():
    assert read_cluster_struct(struct_of(inference_cluster("gpu-a"))).hydrator_service_account == (
        "modelfleet-hydrator"
    )
    before = inference_cluster("gpu-a", hydrator_access=False)
    assert read_cluster_struct(struct_of(before)).hydrator_service_account is None
    assert read_cluster(before).hydrator_service_account is None
