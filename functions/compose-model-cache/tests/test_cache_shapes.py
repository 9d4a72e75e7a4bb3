"""What the cache composes on a cluster, stamped from the shape shared by every cluster, is
exactly what building it for that cluster gives, for any cluster and any kind of cache."""

from compose_model_cache.fingerprint import source_fingerprint
from compose_model_cache.shard.manifests import (
    CacheRef,
    claim_object,
    cluster_values,
    finished_job_object,
    job_object,
    secret_object,
)
from compose_model_cache.staging import spec_problem
from hypothesis import given
from hypothesis import strategies as st
from modelfleet_contracts.clusters import ClusterView
from modelfleet_contracts.models.modelcache import ModelCacheSpec
from modelfleet_contracts.spec import parse_spec

SPECS = {
    "public model": {"source": "HuggingFace", "huggingFace": {"repo": "Qwen/Qwen3-0.6B"}},
    "gated model, own storage class, retained": {
        "source": "HuggingFace",
        "huggingFace": {"repo": "meta/llama", "tokenSecretRef": {"name": "hf", "key": "t"}},
        "storage": {"storageClassName": "nfs", "reclaimPolicy": "Retain"},
    },
    "S3 with credentials": {
        "source": "S3",
        "s3": {"uri": "s3://models/qwen/", "region": "eu", "credentialsSecretRef": {"name": "s3"}},
    },
    "bring your own claim": {
        "source": "HuggingFace",
        "huggingFace": {"repo": "Qwen/Qwen3-0.6B"},
        "storage": {"existingClaimName": "shared"},
    },
}
names = st.text("abcdefghijklmnopqrstuvwxyz0123456789-.", min_size=1, max_size=20)
clusters = st.builds(
    ClusterView,
    name=names,
    labels=st.just({}),
    provider_config_name=names,
    workload_namespace=names,
    connected=st.just(True),
    storage_class_name=st.none() | names,
    shared_storage_ready=st.just(True),
    hydrator_service_account=names,
)


@given(st.sampled_from(sorted(SPECS)), clusters)
def test_stamped_objects_are_the_built_ones(kind, cluster):
    spec = parse_spec(ModelCacheSpec, SPECS[kind] | {"sizeGiB": 10}, spec_problem)
    assert isinstance(spec, ModelCacheSpec)
    cache = CacheRef("qwen", "ml-team", spec, source_fingerprint(spec))
    values = cluster_values(cluster)
    assert cache.claim_shape.stamp(values).to_dict() == claim_object(cache, cluster)
    assert cache.job_shape.stamp(values).to_dict() == job_object(cache, cluster)
    assert cache.finished_job_shape.stamp(values).to_dict() == finished_job_object(cache, cluster)
    secret = secret_object(cache, cluster)
    if cache.secret_shape is None:
        assert secret is None
    else:
        assert cache.secret_shape.stamp(values).to_dict() == secret
