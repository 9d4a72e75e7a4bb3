"""The packaging and validation commands the docs show work as written, from the repository root,
with the real Crossplane CLI (v2.5) and no network.

Every `crossplane xpkg build` and `crossplane resource validate` command in a shell block of the
docs (and in apis/crossplane.yaml's header) runs through bash, in a copy of the repository's
apis/ and examples/, with the real `crossplane` first on PATH and every proxy pointed at a closed
port, so an attempt to download fails the command. The upstream CRD folders the docs ask for
are the ones in ../shared/realcp/crds. The install manifests the docs show (Providers, their
DeploymentRuntimeConfig, the Configuration, ImageConfigs) are validated against Crossplane's own
CRDs.
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from modelfleet_devtools import realcp
from modelfleet_devtools.paths import APIS_DIR, EXAMPLES_DIR, REPO_ROOT
from test_examples_validate import CORE_CRDS_DIR, PROVIDER_KUBERNETES_CRDS_DIR, TOTAL_LINE, _binary

PAGES = [*sorted((REPO_ROOT / "docs").glob("*.md")), REPO_ROOT / "README.md"]
PAGES += [EXAMPLES_DIR / "README.md"]
SHELL_BLOCK = re.compile(r"^( *)```(?:sh|shell|bash)\n(.*?)^\1```", re.MULTILINE | re.DOTALL)
DOCUMENTED = ("crossplane xpkg build", "crossplane resource validate")
INLINE = re.compile(r"\| `(crossplane [^`\n]+)` \|")  # a table cell holding a command
OFFLINE = {
    key: "http://127.0.0.1:9"
    for key in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY")
}


def _commands(text: str) -> list[str]:
    """Shell commands, continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", text)
    lines = (line.split(" #", 1)[0].strip() for line in joined.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def documented_commands() -> list[tuple[str, str]]:
    """(where, command) for every packaging or validation command the docs show."""
    found = []
    for page in PAGES:
        text = page.read_text()
        for _, block in SHELL_BLOCK.findall(text):
            found += [(page.name, c) for c in _commands(block) if c.startswith(DOCUMENTED)]
        # In a table of tasks (development.md's), one command to a cell.
        found += [(page.name, c) for c in INLINE.findall(text) if c.startswith(DOCUMENTED)]
    # apis/crossplane.yaml says how it is built, in its header comment.
    header = "\n".join(
        line.removeprefix("#").removeprefix(" ")
        for line in (APIS_DIR / "crossplane.yaml").read_text().splitlines()
        if line.startswith("#")
    )
    found += [("apis/crossplane.yaml", c) for c in _commands(header) if c.startswith(DOCUMENTED)]
    return found


COMMANDS = documented_commands()


def test_the_docs_show_the_build_and_both_validations() -> None:
    shown = [command for _, command in COMMANDS]
    assert sum(c.startswith("crossplane xpkg build") for c in shown) >= 3, shown
    assert sum(c.startswith("crossplane resource validate") for c in shown) >= 2, shown


@pytest.fixture
def repository_copy(tmp_path: Path) -> Path:
    """apis/ and examples/ as the repository root has them, in a folder of its own."""
    if not (CORE_CRDS_DIR.is_dir() and PROVIDER_KUBERNETES_CRDS_DIR.is_dir()):
        pytest.skip(f"no Crossplane CRDs at {CORE_CRDS_DIR}: {realcp.HOW_TO_GET_THEM}")
    root = tmp_path / "modelfleet"
    shutil.copytree(APIS_DIR, root / "apis")
    shutil.copytree(EXAMPLES_DIR, root / "examples")
    return root


def _run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    cli = _binary("crossplane")
    env = {
        "PATH": f"{cli.parent}:/usr/bin:/bin",
        "HOME": str(cwd.parent),  # the CLI's default cache, were it to write one
        "PROVIDER_KUBERNETES_CRDS": str(PROVIDER_KUBERNETES_CRDS_DIR),
        "CROSSPLANE_CRDS": str(CORE_CRDS_DIR),
        **OFFLINE,
    }
    assert cli.name == "crossplane"
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(("where", "command"), COMMANDS, ids=[c[:60] for _, c in COMMANDS])
def test_the_documented_command_works_offline(repository_copy: Path, where: str, command: str):
    result = _run(command, repository_copy)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{where}: `{command}` failed:\n{output}"
    if command.startswith("crossplane xpkg build"):
        [written] = re.findall(r"--package-file[= ](\S+)", command)
        package = repository_copy / written
        assert package.is_file() and package.stat().st_size > 0, output
    else:
        total = TOTAL_LINE.search(output)
        assert total, output
        count, missing, valid, invalid = (int(total[i]) for i in range(1, 5))
        assert count > 0 and missing == 0 and invalid == 0 and valid == count, output


def test_without_an_examples_root_the_build_fails_as_the_docs_say(repository_copy: Path) -> None:
    """Why the documented build passes --examples-root: ./examples holds files that are not
    Kubernetes objects (the simulation.yaml scenarios)."""
    default = "crossplane xpkg build --package-root=apis --package-file=x.xpkg"
    result = _run(default, repository_copy)
    assert result.returncode != 0
    assert "failed to parse examples" in result.stderr


def _indented_yaml_blocks(text: str) -> list[object]:
    docs: list[object] = []
    for indent, block in re.findall(r"^( *)```yaml\n(.*?)^\1```", text, re.MULTILINE | re.DOTALL):
        dedented = "\n".join(line.removeprefix(indent) for line in block.splitlines())
        docs += [d for d in yaml.safe_load_all(dedented) if d]
    return docs


def test_the_install_manifests_validate_against_crossplanes_crds(tmp_path: Path) -> None:
    if not CORE_CRDS_DIR.is_dir():
        pytest.skip(f"no Crossplane CRDs at {CORE_CRDS_DIR}: {realcp.HOW_TO_GET_THEM}")
    install = [
        d
        for path in sorted((REPO_ROOT / "docs" / "install").glob("*.yaml"))
        for d in yaml.safe_load_all(path.read_text())
        if d
    ]
    shown = _indented_yaml_blocks((REPO_ROOT / "docs" / "getting-started.md").read_text())
    packages = [
        d
        for d in install + shown
        if isinstance(d, dict) and str(d.get("apiVersion", "")).startswith("pkg.crossplane.io/")
    ]
    kinds = {d["kind"] for d in packages}
    assert kinds == {"DeploymentRuntimeConfig", "Provider", "Configuration", "ImageConfig"}
    manifests = tmp_path / "install.yaml"
    manifests.write_text(yaml.safe_dump_all(packages))
    result = subprocess.run(
        [
            str(_binary("crossplane")),
            *("resource", "validate", str(CORE_CRDS_DIR), str(manifests)),
            "--crossplane-image=",
            "--error-on-missing-schemas",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={"HOME": str(tmp_path), **OFFLINE},
    )
    output = result.stdout + result.stderr
    total = TOTAL_LINE.search(output)
    assert total and int(total[1]) == len(packages), output
    assert int(total[2]) == 0 and int(total[4]) == 0, output
    assert result.returncode == 0, output


def test_validating_against_apis_as_a_folder_downloads_as_the_docs_say(repository_copy: Path):
    """Why the documented validation names the XRDs: apis/crossplane.yaml is the Configuration's
    metadata, whose dependencies the validator fetches."""
    result = _run(
        "crossplane resource validate apis examples/quickstart --crossplane-image=",
        repository_copy,
    )
    assert result.returncode != 0
    # One of the Configuration's dependencies (which one first varies).
    assert "cannot cache package dependencies: cannot download package xpkg." in result.stderr
