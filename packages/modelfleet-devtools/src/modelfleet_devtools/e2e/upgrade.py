"""Upgrading the installed Modelfleet release in place, as a platform team does.

The new release's packages are published, its functions start (where a cluster would pull the
new images and start their pods), every Function is moved to the new package version and then
the Configuration (new XRDs and Compositions). Once every new revision is Active and served and
the Configuration's new revision is Healthy, the previous release's function processes stop.
"""

from __future__ import annotations

from typing import Any

from ..release.build import release_functions
from . import functions, packages
from .kube import resource_path
from .processes import wait_for
from .release import Release
from .stack import RealControlPlane, configuration, publish, release_installed

FUNCTIONS = resource_path("pkg.crossplane.io/v1", "functions")
CONFIGURATIONS = resource_path("pkg.crossplane.io/v1", "configurations")
CONFIGURATION_REVISIONS = resource_path("pkg.crossplane.io/v1", "configurationrevisions")


def _version(revision: dict[str, Any]) -> str:
    return str((revision.get("spec") or {}).get("image", "")).rpartition(":")[2]


def _healthy(revision: dict[str, Any]) -> bool:
    conditions = (revision.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "RevisionHealthy" and c.get("status") == "True" for c in conditions)


def release_active(plane: RealControlPlane, version: str, function_names: list[str]) -> bool:
    """Every function's revision of `version` is the Active one and served at its endpoint;
    the Configuration's revision of `version` is Active and Healthy."""
    served = plane.runtime.served.get(version, {})
    for function in function_names:
        revisions = plane.client.list(
            functions.FUNCTION_REVISIONS, labelSelector=f"pkg.crossplane.io/package={function}"
        )
        active = [r for r in revisions if r["spec"].get("desiredState") == "Active"]
        if [_version(r) for r in active] != [version]:
            return False
        if (active[0].get("status") or {}).get("endpoint") != served.get(function):
            return False
    revisions = plane.client.list(CONFIGURATION_REVISIONS)
    current = [
        r for r in revisions if _version(r) == version and r["spec"].get("desiredState") == "Active"
    ]
    return bool(current) and _healthy(current[0])


def upgrade(plane: RealControlPlane, release: Release, *, timeout: float = 300) -> None:
    """Upgrade the installed release to `release` (see the module's docstring)."""
    previous = plane.release
    publish(plane, release)
    published = release_functions(release.root)
    installed = {f["metadata"]["name"] for f in plane.client.list(FUNCTIONS)}
    for function in sorted(set(published) & installed):
        plane.client.merge_patch(
            f"{FUNCTIONS}/{function}",
            {"spec": {"package": packages.package_name(function, release.version)}},
        )
    plane.apply(configuration(release.version))

    def active() -> bool:
        plane.check_alive()
        plane.point_revisions()
        return release_active(plane, release.version, published) and release_installed(
            plane.client, release
        )

    wait_for(active, what=f"release {release.version} installed and active", timeout=timeout)
    plane.runtime.retire(previous.version)
    plane.release = release
