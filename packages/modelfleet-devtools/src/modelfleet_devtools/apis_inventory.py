"""What `apis/` holds, for the docs that count or list it: the XRDs, and the Functions the
Configuration (`apis/crossplane.yaml`) depends on."""

import textwrap

import yaml

from modelfleet_devtools.docs_sections import section_name
from modelfleet_devtools.paths import APIS_DIR, xrd_paths

CONFIGURATION = APIS_DIR / "crossplane.yaml"
PACKAGES_SECTION = section_name("modelfleet-generate", "kubectl get pkg")
_COMMAND = "kubectl get pkg    # "


def xrd_kinds() -> list[str]:
    """The kind of every XRD, in apis/'s order."""
    return [yaml.safe_load(p.read_text())["spec"]["names"]["kind"] for p in xrd_paths()]


def function_names() -> list[str]:
    """The Functions the Configuration depends on, by the name Crossplane installs each under
    (the last part of its package's path), in its order."""
    configuration = yaml.safe_load(CONFIGURATION.read_text())
    return [
        str(d["package"]).rsplit("/", 1)[-1]
        for d in configuration["spec"].get("dependsOn") or []
        if d.get("kind") == "Function"
    ]


def packages_section() -> str:
    """getting-started's check that the Configuration installed: what `kubectl get pkg` lists
    once it has (the Configuration, then every Function it depends on)."""
    listed = ", ".join(["the Configuration", *function_names()])
    words = f"{listed} (and the providers installed above): INSTALLED and HEALTHY True"
    width = 96 - len(_COMMAND)
    lines = textwrap.wrap(words, width, break_on_hyphens=False)
    comment = [_COMMAND + lines[0]] + [" " * (len(_COMMAND) - 2) + "# " + x for x in lines[1:]]
    wait = "kubectl wait xrd --all --for condition=Established"
    return "\n".join(["```sh", *comment, wait, "```"])
