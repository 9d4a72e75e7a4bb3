"""Sweeping the hydrator's S3 transfer settings (s3_download.py: CHUNK_BYTES, CONCURRENCY,
IN_ORDER_WINDOW) on staging_speed.py's model and loopback S3, unpaced, beside boto3's
transfer manager with its defaults. Each setting runs ROUNDS rounds, the settings in turn
(alternating the order); printed: the median wall time, CPU time and peak RSS of each.

Run: uv run python packages/modelfleet-hydrator/benchmarks/s3_knobs.py --python PY \\
         --settings 8:10:10,16:10:10,8:20:10
(a setting is CHUNK_MIB:CONCURRENCY:WINDOW; --python needs boto3, as staging_speed.py's.)
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from staging_sources import FINGERPRINT, MIB, Launcher, model, s3_source  # noqa: E402

SOURCE_PATHS = [HERE.parent / "src", HERE.parents[1] / "modelfleet-contracts" / "src"]
# The hydrator's entry point with the settings replaced (argv[1:4]); the Job's flags follow.
WITH_SETTINGS = """
import sys
from modelfleet_hydrator import hydrate, s3_download
chunk, s3_download.CONCURRENCY, s3_download.IN_ORDER_WINDOW = map(int, sys.argv[1:4])
s3_download.CHUNK_BYTES = chunk * 1024 * 1024
sys.exit(hydrate.main(sys.argv[4:]))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", required=True)
    parser.add_argument("--settings", default="8:10:10")
    parser.add_argument("--big-files", type=int, default=3)
    parser.add_argument("--big-mib", type=float, default=384)
    parser.add_argument("--small-files", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    launcher = Launcher()
    m = model(args.big_files, args.big_mib, args.small_files)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": os.pathsep.join(str(p) for p in SOURCE_PATHS),
        "NO_PROXY": "127.0.0.1",
    }
    settings = [s for s in args.settings.split(",") if s]
    contenders = [*settings, "boto3 defaults"]
    runs: dict[str, list] = {name: [] for name in contenders}
    load = [os.getloadavg()[0]]
    with (
        tempfile.TemporaryDirectory(prefix="i50-s3-knobs-") as tmp,
        s3_source(m, env, args.python) as source,
    ):
        env["HOME"] = tmp
        into = Path(tmp) / "into"
        for r in range(args.rounds):
            for name in contenders if r % 2 == 0 else contenders[::-1]:
                shutil.rmtree(into, ignore_errors=True)
                into.mkdir()
                if name == "boto3 defaults":
                    argv = source.plain(into)
                else:
                    flags = [f"--cache-dir={into}", f"--fingerprint={FINGERPRINT}"]
                    argv = [args.python, "-c", WITH_SETTINGS, *name.split(":"), *flags]
                    argv += source.hydrator_args
                runs[name].append(launcher.run(argv, {**source.env, "HOME": tmp}))
        shutil.rmtree(into, ignore_errors=True)
    launcher.close()
    load.append(os.getloadavg()[0])
    print(
        f"model {m.size / MIB:.0f} MiB in {len(m.files)} files; load {load[0]:.1f} -> {load[1]:.1f}"
    )
    print("| chunk MiB : concurrency : window | median wall | CPU | peak RSS | all runs (s) |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name, rs in runs.items():
        wall = statistics.median(r.wall for r in rs)
        cpu = statistics.median(r.cpu for r in rs)
        every = ", ".join(f"{r.wall:.2f}" for r in rs)
        rss = max(r.rss_mib for r in rs)
        print(f"| {name} | {wall:.2f} s | {cpu:.2f} s | {rss:.0f} MiB | {every} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
