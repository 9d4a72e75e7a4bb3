"""`uv run modelfleet-release --registry HOST:PORT [--tag TAG] [--output json]`."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from modelfleet_contracts.hydration import RELEASE_VERSION

from ..paths import REPO_ROOT
from ..realcp import RealcpUnavailable, realcp_binary
from . import images
from .build import Artifact, ReleaseBuild, Tools, build_epoch

ARCHITECTURES = {"linux/amd64": "amd64", "linux/arm64": "arm64"}


def build_release(
    tree: Path,
    registry: str,
    tag: str,
    work: Path,
    tools: Tools,
    *,
    platforms: list[str],
    epoch: int,
    progress: Callable[[str], None] = lambda _: None,
) -> list[Artifact]:
    """Build and push everything for each platform; with several, one index per name."""
    if len(platforms) == 1:
        build = ReleaseBuild(
            tree, registry, tag, work, tools, epoch=epoch,
            architecture=ARCHITECTURES[platforms[0]], progress=progress,
        )  # fmt: skip
        return build.run()
    per_platform = []
    for platform in platforms:
        architecture = ARCHITECTURES[platform]
        build = ReleaseBuild(
            tree, registry, f"{tag}-{architecture}", work / architecture, tools, epoch=epoch,
            architecture=architecture, progress=progress,
        )  # fmt: skip
        per_platform.append(build.run())
    merged = []
    for same in zip(*per_platform, strict=True):
        first = same[0]
        reference = first.reference.rpartition(":")[0] + f":{tag}"
        digest = images.push_index(tools.crane, reference, [a.pinned for a in same])
        merged.append(Artifact(first.name, first.kind, reference, digest))
    return merged


def _tools() -> Tools:
    return Tools(crossplane=realcp_binary("crossplane"), crane=realcp_binary("crane"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="modelfleet-release",
        description="Build the hydrator and function images, the Function packages (runtime "
        "embedded) and the Configuration from this checkout, push them to REGISTRY, and print "
        "each reference with its digest.",
    )
    parser.add_argument(
        "--registry", required=True,
        help="where to push: HOST:PORT or HOST/PATH (loopback registries are spoken to over HTTP)",
    )  # fmt: skip
    parser.add_argument(
        "--tag", default=RELEASE_VERSION,
        help=f"the tag of every image and package (default {RELEASE_VERSION}, the version "
        "this tree's functions compose the hydrator image at)",
    )  # fmt: skip
    parser.add_argument(
        "--platform", action="append", choices=sorted(ARCHITECTURES),
        help="repeat for a multi-platform release (default linux/amd64)",
    )  # fmt: skip
    parser.add_argument("--output", choices=("text", "json"), default="text")
    parser.add_argument("--work-dir", type=Path, help="keep the build's files here")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    epoch = build_epoch(REPO_ROOT)
    try:
        tools = _tools()
    except RealcpUnavailable as error:
        print(f"modelfleet-release: {error}", file=sys.stderr)
        return 2
    if args.tag != RELEASE_VERSION:
        print(
            f"modelfleet-release: warning: this tree's functions compose the hydrator image at "
            f"{RELEASE_VERSION} (modelfleet_contracts.hydration.RELEASE_VERSION), not at "
            f"{args.tag}: bump RELEASE_VERSION for a release, or caches must name the image in "
            "spec.hydration.image",
            file=sys.stderr,
        )
    started = time.monotonic()

    def progress(step: str) -> None:
        print(f"[{time.monotonic() - started:5.0f}s] {step}", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="modelfleet-release-") as scratch:
        work = args.work_dir or Path(scratch)
        try:
            pushed = build_release(
                REPO_ROOT, args.registry, args.tag, work, tools,
                platforms=args.platform or ["linux/amd64"], epoch=epoch, progress=progress,
            )  # fmt: skip
        except RuntimeError as error:
            print(f"modelfleet-release: {error}", file=sys.stderr)
            return 1
    if args.output == "json":
        print(json.dumps([a.as_dict() for a in pushed], indent=2))
    else:
        width = max(len(a.name) for a in pushed)
        for artifact in pushed:
            print(f"{artifact.name:<{width}}  {artifact.kind:<13}  {artifact.pinned}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
