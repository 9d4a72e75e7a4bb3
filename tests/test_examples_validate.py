"""Every example, checked offline by Crossplane's own validator against the XRDs in apis/.

`crossplane resource validate` (v2.5 CLI; `beta validate` in the v2.2 CLI) runs the API
server's validation library: each XR example against its XRD's schema and CEL rules, the
Function objects and core kinds against Crossplane's and Kubernetes' schemas. Crossplane's
own CRDs come from ../shared/realcp/crds, seeded into the CLI's cache so nothing is
downloaded. The render/ folders (observed composed resources fed to `modelfleet render`) are
checked too, against provider-kubernetes' and provider-helm's CRDs.
"""

import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml
from modelfleet_devtools import realcp
from modelfleet_devtools.paths import EXAMPLES_DIR, SHARED_SCHEMAS_DIR, xrd_paths

# The Crossplane core whose CRDs ../shared/realcp/crds holds (its README's table).
CORE_VERSION = "v2.3.4"
CORE_CRDS_DIR = realcp.SHARED_REALCP_DIR / "crds" / "crossplane"
PROVIDER_KUBERNETES_CRDS_DIR = realcp.SHARED_REALCP_DIR / "crds" / "provider-kubernetes"
HELM_RELEASE_CRD = SHARED_SCHEMAS_DIR / "helm.m.crossplane.io_releases.yaml"
# provider-helm's ClusterProviderConfig CRD is in neither shared folder: render inputs holding
# one are reported as unschema'd, and only that kind may be.
HELM_PROVIDER_CONFIG = "helm.m.crossplane.io/v1beta1, Kind=ClusterProviderConfig"

TOTAL_LINE = re.compile(
    r"Total (\d+) resources: (\d+) missing schemas, (\d+) success cases, (\d+) failure cases"
)
MISSING_LINE = re.compile(r"could not find CRD/XRD for: (.+)$", re.MULTILINE)

# (binary, its validate subcommand, kinds it cannot know offline)
VALIDATORS = [
    pytest.param("crossplane", ("resource", "validate"), set(), id="cli-v2.5-resource-validate"),
    # The v2.2 CLI carries no core Kubernetes schemas: a Secret is unknown to it.
    pytest.param("crossplane-v2.2", ("beta", "validate"), {"/v1, Kind=Secret"}, id="cli-v2.2-beta"),
]


def _manifests(folder: Path) -> list[Path]:
    """An example's own manifests: not its simulation scenario, not its render inputs."""
    return sorted(p for p in folder.glob("*.yaml") if p.name != "simulation.yaml")


EXAMPLE_SETS = [
    pytest.param(_manifests(folder), id=folder.name)
    for folder in sorted(p for p in EXAMPLES_DIR.iterdir() if p.is_dir())
] + [pytest.param([EXAMPLES_DIR / "functions.yaml"], id="functions.yaml")]
RENDER_SETS = [
    pytest.param(sorted(folder.glob("*.yaml")), id=f"{folder.parent.name}-render")
    for folder in sorted(EXAMPLES_DIR.glob("*/render"))
]


def _document_count(files: list[Path]) -> int:
    return sum(1 for f in files for doc in yaml.safe_load_all(f.read_text()) if doc)


def _binary(name: str) -> Path:
    try:
        return realcp.realcp_binary(name)
    except realcp.RealcpUnavailable as missing:
        pytest.skip(f"crossplane CLI unavailable ({missing})")


@pytest.fixture(scope="session")
def core_schema_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A --cache-dir holding Crossplane's core CRDs where the CLI would have downloaded them."""
    if not CORE_CRDS_DIR.is_dir():
        pytest.skip(f"no Crossplane CRDs at {CORE_CRDS_DIR}: {realcp.HOW_TO_GET_THEM}")
    cache = tmp_path_factory.mktemp("validate-cache")
    package = cache / "xpkg.crossplane.io" / "crossplane" / f"crossplane@{CORE_VERSION}"
    package.mkdir(parents=True)
    crds = [p.read_text() for p in sorted(CORE_CRDS_DIR.glob("*.yaml"))]
    (package / "package.yaml").write_text("\n---\n".join(crds))
    return cache


def _validate(
    binary: str, command: tuple[str, ...], cache: Path, extensions: list[Path], files: list[Path]
) -> tuple[subprocess.CompletedProcess[str], tuple[int, int, int, int], Counter[str]]:
    """Run the validator; (process, (total, missing, valid, invalid), kinds without a schema)."""
    result = subprocess.run(
        [
            str(_binary(binary)),
            *command,
            ",".join(str(p) for p in extensions),
            ",".join(str(p) for p in files),
            f"--cache-dir={cache}",
            f"--crossplane-image=xpkg.crossplane.io/crossplane/crossplane:{CORE_VERSION}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = result.stdout + result.stderr
    total = TOTAL_LINE.search(output)
    assert total, f"no summary from {binary}:\n{output}"
    figures = (int(total[1]), int(total[2]), int(total[3]), int(total[4]))
    return result, figures, Counter(m.strip() for m in MISSING_LINE.findall(output))


@pytest.mark.parametrize(("binary", "command", "unknowable"), VALIDATORS)
@pytest.mark.parametrize("files", EXAMPLE_SETS)
def test_example_validates_against_the_xrds(core_schema_cache, binary, command, unknowable, files):
    result, (total, missing, valid, invalid), unschemed = _validate(
        binary, command, core_schema_cache, xrd_paths(), files
    )
    output = result.stdout + result.stderr
    assert total == _document_count(files), f"the validator skipped documents:\n{output}"
    assert invalid == 0, output
    assert set(unschemed) <= unknowable, f"kinds without a schema:\n{output}"
    assert valid == total - missing, output
    if not unschemed:
        assert result.returncode == 0, output


@pytest.mark.parametrize("files", RENDER_SETS)
def test_render_inputs_validate_against_the_provider_crds(core_schema_cache, files):
    if not (PROVIDER_KUBERNETES_CRDS_DIR.is_dir() and HELM_RELEASE_CRD.is_file()):
        pytest.skip(f"provider CRDs missing: {realcp.HOW_TO_GET_THEM} and ../shared/schemas")
    extensions = [*xrd_paths(), PROVIDER_KUBERNETES_CRDS_DIR, HELM_RELEASE_CRD]
    result, (total, missing, valid, invalid), unschemed = _validate(
        "crossplane", ("resource", "validate"), core_schema_cache, extensions, files
    )
    output = result.stdout + result.stderr
    assert total == _document_count(files), f"the validator skipped documents:\n{output}"
    assert invalid == 0, output
    assert set(unschemed) <= {HELM_PROVIDER_CONFIG}, output
    assert valid == total - missing, output


BROKEN = [
    pytest.param({"bogusField": 1}, 'unknown field: "bogusField"', id="unknown-spec-field"),
    pytest.param(
        {"huggingFace": {"repo": "Qwen/a..b"}},
        "repo must not contain '..'",
        id="cel-rule-repo-with-dotdot",
    ),
]


@pytest.mark.parametrize(("spec_change", "message"), BROKEN)
def test_a_broken_example_is_refused(core_schema_cache, tmp_path, spec_change, message):
    """The check can fail: the quickstart's ModelCache, broken, is refused with the reason."""
    cache = yaml.safe_load((EXAMPLES_DIR / "quickstart" / "modelcache.yaml").read_text())
    cache["spec"].update(spec_change)
    broken = tmp_path / "modelcache.yaml"
    broken.write_text(yaml.safe_dump(cache))
    result, (_, _, _, invalid), _ = _validate(
        "crossplane", ("resource", "validate"), core_schema_cache, xrd_paths(), [broken]
    )
    assert result.returncode != 0
    assert invalid == 1
    assert message in result.stdout + result.stderr
