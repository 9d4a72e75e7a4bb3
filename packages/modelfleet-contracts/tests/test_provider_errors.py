"""What a provider-kubernetes error says is missing: one row per message it writes (its
wording: crossplane-runtime's managed reconciler around provider-kubernetes' Object client)."""

import pytest
from modelfleet_contracts.provider_errors import (
    provider_config_absent,
    reference_absent,
    remote_absent,
)
from modelfleet_devtools.provider_words import (
    OBSERVE_ONLY_ABSENT,
    UNAUTHORIZED,
    connection_refused,
    kubeconfig_secret_gone,
    provider_config_gone,
    referenced_secret_gone,
)

PC_GONE = provider_config_gone()
KUBECONFIG_GONE = kubeconfig_secret_gone("gke-us")
LEGACY_PC_GONE = (
    'cannot get ProviderConfig: ProviderConfig.kubernetes.crossplane.io "gke-us" not found'
)
SECRET_GONE = referenced_secret_gone("hf-token")
REFUSED = connection_refused("/apis/storage.k8s.io/v1/storageclasses/filestore-rwx")
FORBIDDEN = (
    'observe failed: cannot get object: storageclasses.storage.k8s.io "filestore-rwx" is '
    'forbidden: User "system:serviceaccount:default:modelfleet" cannot get resource '
    '"storageclasses" in API group "storage.k8s.io" at the cluster scope'
)
TIMEOUT = (
    'observe failed: cannot get object: Get "https://10.0.0.1:443/api/v1/namespaces/'
    'modelfleet": context deadline exceeded'
)
NAMED_NOT_FOUND = 'cannot get object: storageclasses.storage.k8s.io "filestore-rwx" not found'


@pytest.mark.parametrize(
    ("message", "remote", "secret", "provider_config"),
    [
        pytest.param(OBSERVE_ONLY_ABSENT, True, False, False, id="Observe-only: does not exist"),
        pytest.param(NAMED_NOT_FOUND, True, False, False, id="the object's own NotFound"),
        pytest.param(PC_GONE, False, False, True, id="its ClusterProviderConfig is missing"),
        pytest.param(LEGACY_PC_GONE, False, False, True, id="a legacy ProviderConfig is missing"),
        pytest.param(
            KUBECONFIG_GONE, False, False, False, id="a kubeconfig Secret of the config's name"
        ),
        pytest.param(SECRET_GONE, False, True, False, id="the patchesFrom Secret is missing"),
        pytest.param(REFUSED, False, False, False, id="cluster unreachable"),
        pytest.param(UNAUTHORIZED, False, False, False, id="unauthorized"),
        pytest.param(FORBIDDEN, False, False, False, id="forbidden, naming the object"),
        pytest.param(TIMEOUT, False, False, False, id="timeout"),
        pytest.param("", False, False, False, id="no error"),
    ],
)
def test_a_provider_error_is_read_for_what_it_says_is_missing(
    message, remote, secret, provider_config
):
    assert remote_absent(message, "filestore-rwx") is remote
    assert reference_absent(message, "hf-token") is secret
    assert provider_config_absent(message, "gke-us") is provider_config


@pytest.mark.parametrize(
    "message",
    [
        pytest.param(SECRET_GONE.replace("hf-token", "s3-creds"), id="another Secret"),
        pytest.param(NAMED_NOT_FOUND.replace("filestore-rwx", "standard"), id="another class"),
        pytest.param(PC_GONE.replace('"gke-us"', '"gke-eu"'), id="another provider config"),
    ],
)
def test_a_not_found_of_another_name_is_not_this_object(message):
    assert not remote_absent(message, "filestore-rwx")
    assert not reference_absent(message, "hf-token")
    assert not provider_config_absent(message, "gke-us")
