"""Fake credential values for tests, defined once so the suite-wide audit can look for them.

Tests that need a token put one of these values where a real one would live: in a
control-plane Secret among the required or observed resources, never in the XR (the
function must not need, nor see, the value). The audit plugin (`modelfleet_devtools.audit`)
then fails the run if any of them shows up in a response, a log line, an event, a status or
CLI output.
"""

import base64
from typing import Any

HF_TOKEN = "hf_modelfleetTESTtokenDoNotShip0x7f3a9c"
AWS_ACCESS_KEY_ID = "AKIAMODELFLEETTEST7Q2Z"
AWS_SECRET_ACCESS_KEY = "mfTestSecretKey/9aXq+Vb3Lk0Wn8Pd2Rt5Yu7Io1As4Df6Gh"
KUBECONFIG_TOKEN = "eyJmodelfleet-test-kubeconfig-bearer.c2lnbmF0dXJl"

# The placeholders the examples' Secrets carry (examples/gated-model, examples/s3,
# examples/oci, whose registry credentials are FAKE:PLACEHOLDER in base64): the
# examples render through the CLI in the tests, so these are audited like any test token.
EXAMPLE_HF_TOKEN = "hf_FAKE_PLACEHOLDER_replace_with_your_own_token"
EXAMPLE_AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example key
EXAMPLE_AWS_SECRET_ACCESS_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
EXAMPLE_REGISTRY_AUTH = "RkFLRTpQTEFDRUhPTERFUg=="
EXAMPLE_DOCKER_CONFIG_JSON = (
    '{"auths": {"registry.internal.example:5000": {"auth": "' + EXAMPLE_REGISTRY_AUTH + '"}}}'
)

TEST_TOKENS: dict[str, str] = {
    "HF_TOKEN": HF_TOKEN,
    "AWS_ACCESS_KEY_ID": AWS_ACCESS_KEY_ID,
    "AWS_SECRET_ACCESS_KEY": AWS_SECRET_ACCESS_KEY,
    "KUBECONFIG_TOKEN": KUBECONFIG_TOKEN,
    "example HF_TOKEN": EXAMPLE_HF_TOKEN,
    "example AWS_ACCESS_KEY_ID": EXAMPLE_AWS_ACCESS_KEY_ID,
    "example AWS_SECRET_ACCESS_KEY": EXAMPLE_AWS_SECRET_ACCESS_KEY,
    "example .dockerconfigjson": EXAMPLE_DOCKER_CONFIG_JSON,
    "example registry auth": EXAMPLE_REGISTRY_AUTH,
}


def encodings(value: str) -> list[str]:
    """The forms a leaked value could take: as is, and base64 as in a Secret's `data`."""
    return [value, base64.b64encode(value.encode()).decode()]


def secret(name: str, namespace: str, data: dict[str, str]) -> dict[str, Any]:
    """A control-plane Secret holding `data` (plain values, stored base64 like the API does)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "type": "Opaque",
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
    }
