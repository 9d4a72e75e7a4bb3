"""The scale benchmark's command line (scale.py's `main`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from modelfleet_contracts.models.inferencecluster import Connection
from pydantic import ValidationError

from ..docs_sections import BENCHMARKS_DOC
from .scale_changes import LIMIT_SECONDS


def check_interval(text: str) -> str:
    """`text` if spec.connection.checkInterval takes it (the XRD's generated model says)."""
    try:
        Connection.model_validate({"providerConfigName": "bench", "checkInterval": text})
    except ValidationError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a duration such as 20s, 1m or 1m30s"
        ) from None
    return text


def bench_arguments(description: str, *, idle_minutes: float) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="modelfleet-scale-bench", description=description)
    parser.add_argument(
        "--clusters", default="20,100,300,1000", help="fleet sizes, comma-separated"
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/modelfleet-scale"))
    parser.add_argument(
        "--write-docs", action="store_true", help=f"write the table into {BENCHMARKS_DOC.name}"
    )
    parser.add_argument(
        "--limit-minutes", type=float, default=60, help="give up on a cache not Ready by then"
    )
    parser.add_argument(
        "--changes-at",
        default="300",
        help="fleet sizes at which to time how soon changes on a cluster are seen, at rest",
    )
    parser.add_argument(
        "--connection-limit-seconds",
        type=float,
        default=LIMIT_SECONDS,
        help="how long a lost connection, then its return, may take to show on its cluster",
    )
    parser.add_argument(
        "--idle-minutes",
        type=float,
        default=idle_minutes,
        help="how long to watch the registered fleet's CPU before the cache (one full round of "
        "its routine work)",
    )
    parser.add_argument(
        "--steady-minutes",
        type=float,
        default=0,
        help="watch the Ready cache this long and say what compose-model-cache answered",
    )
    parser.add_argument(
        "--keep-requests",
        action="store_true",
        help="keep every request compose-model-cache was sent (WORK/nN/calls/requests)",
    )
    parser.add_argument("--audit", action="store_true", help="say who wrote what while staging")
    parser.add_argument(
        "--hydrator-containers",
        action="store_true",
        help="run every hydration Job as a hydrator container on this machine (else simulated)",
    )
    parser.add_argument(
        "--side-by-side",
        action="store_true",
        help="run every size's control plane at once, each in a network namespace of its own "
        "(needs root), for their idle windows; then stage one size at a time, smallest first",
    )
    # A size's process under --side-by-side: wait for this file before staging, then leave
    # the row beside it (scale_side_by_side.py).
    parser.add_argument("--turn", type=Path, help=argparse.SUPPRESS)
    parser.add_argument(
        "--check-interval",
        type=check_interval,
        help="every InferenceCluster's spec.connection.checkInterval (else its default, 20s): "
        "how often its connection is observed, the idle fleet's cost against how soon a lost "
        "connection shows",
    )
    return parser
