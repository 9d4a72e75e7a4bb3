"""The CLI's docs say what the commands do: docs/cli.md's exit-code table is the code's, and
examples/README.md describes the multinode render as it prints, and the timelines quoted in
the docs are what `modelfleet simulate` prints."""

import re
from pathlib import Path

import yaml
from click.testing import CliRunner
from modelfleet_cli.exit_codes import ExitCode
from modelfleet_cli.main import main
from modelfleet_cli.simulate import simulate
from modelfleet_cli.simulate.timeline import NAMED
from modelfleet_cli.simulate.waits import NEXT_CHECK
from modelfleet_devtools.docs_sections import section_body

CLI_DOC = Path(__file__).resolve().parents[3] / "docs" / "cli.md"


def exit_code_rows() -> dict[int, str]:
    section = CLI_DOC.read_text().split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\d+)` \| `([A-Z_]+)` \|", section, re.MULTILINE)
    return {int(code): name for code, name in rows}


def test_the_exit_code_table_lists_every_code_with_its_name():
    assert exit_code_rows() == {int(code): code.name for code in ExitCode}


EXAMPLES = CLI_DOC.parents[1] / "examples"


def rendered_status(example: str, xr: str, required: str) -> dict:
    """The XR's status `modelfleet render` prints for an example's XR and required file."""
    outcome = CliRunner().invoke(
        main,
        [
            "render",
            str(EXAMPLES / example / xr),
            "--required-resources",
            str(EXAMPLES / example / "render" / required),
        ],
    )
    assert outcome.exit_code == 0, outcome.stderr
    return next(yaml.safe_load_all(outcome.stdout))["status"]


def test_the_examples_readme_lists_every_example():
    readme = (EXAMPLES / "README.md").read_text()
    listed = set(re.findall(r"^\| \[`([\w.-]+)/?`\]", readme, re.MULTILINE))
    on_disk = {p.name for p in EXAMPLES.iterdir() if p.is_dir() or p.suffix == ".yaml"}
    assert listed == on_disk


def test_the_examples_readme_says_what_render_prints_for_multinode():
    """The multinode row of examples/README.md names the Scheduled condition and the
    rejected cluster's row as `modelfleet render` prints them."""
    status = rendered_status("multinode", "modeldeployment.yaml", "required.yaml")
    scheduled = next(c for c in status["conditions"] if c["type"] == "Scheduled")
    [east] = [r for r in status["clusters"] if r["name"] == "gke-us-east"]
    readme = (EXAMPLES / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| [`multinode/`]"))
    assert f"`Scheduled={scheduled['status']}`" in row
    assert f"`{east['phase']}`" in row and f"`{east['message']}`" in row
    assert east["message"] in scheduled["message"]
    if scheduled["reason"] != "SharedStorageRequired":
        assert "rejected with `SharedStorageRequired`" not in row


DOCS_QUOTING_SIMULATE = ["cli.md", "getting-started.md"]
BLOCK = re.compile(r"^```\n(round .*?)^```", re.MULTILINE | re.DOTALL)


def test_docs_quote_the_quickstart_timeline_as_simulate_prints_it():
    """Every quoted line is printed, in the quoted order (`...` and abridging skip lines)."""
    outcome = CliRunner().invoke(simulate, [str(EXAMPLES / "quickstart"), "--quiet"])
    assert outcome.exit_code == 0, outcome.output
    printed = outcome.stdout.splitlines()
    quoted_blocks = 0
    for name in DOCS_QUOTING_SIMULATE:
        for block in BLOCK.findall((CLI_DOC.parent / name).read_text()):
            quoted_blocks += 1
            position = 0
            for line in block.splitlines():
                if line == "...":
                    continue
                assert line in printed[position:], f"{name}: not printed (in order): {line!r}"
                position = printed.index(line, position) + 1
    assert quoted_blocks == len(DOCS_QUOTING_SIMULATE)


def documented_fault_run() -> list[str]:
    """The `--fault` arguments of the simulate command docs/cli.md shows."""
    [command] = [
        line
        for line in CLI_DOC.read_text().splitlines()
        if line.startswith("uv run") and "--fault" in line
    ]
    return command.split()[command.split().index("simulate") + 2 :]


def test_the_documented_faults_act_in_the_rounds_the_docs_say():
    """docs/cli.md: `hydration-fails:gke-dev@3` fails the quickstart Job's attempt in round 3
    and the cache reports it in round 4; `@5` finds no Job running (it ran in rounds 3 and 4)."""
    faults = documented_fault_run()
    assert "hydration-fails:gke-dev@3" in faults
    outcome = CliRunner().invoke(simulate, [str(EXAMPLES / "quickstart"), *faults, "--quiet"])
    assert outcome.exit_code == ExitCode.OK, outcome.output
    printed = outcome.stdout.splitlines()
    assert "round 3   ! fault injected: hydration-fails:gke-dev@3" in printed
    failed = [p for p in printed if "1 of 4 attempts failed so far" in p]
    assert failed and "1 of 4 attempts failed so far" in CLI_DOC.read_text()
    cache_header = printed.index(
        next(p for p in printed if p.startswith("round 4") and "ModelCache" in p)
    )
    assert printed[cache_header + 1] == failed[0], "the cache reports it first in round 4"
    assert "fault hydration-fails:gke-dev@3: survived" in printed

    later = CliRunner().invoke(
        simulate, [str(EXAMPLES / "quickstart"), "--fault", "hydration-fails:gke-dev@5", "--quiet"]
    )
    assert later.exit_code == ExitCode.FAULT_NOT_SURVIVED
    assert "fault hydration-fails:gke-dev@5: did not take effect" in later.stdout
    assert "`hydration-fails:gke-dev@5` finds no Job running" in CLI_DOC.read_text()


def test_the_docs_say_when_ready_creating_has_no_message():
    """A first reconcile's ModelCache: the function marks it not ready, so Ready is Creating
    without a message (as both real Crossplane CLIs print it) and ArtifactReady says why;
    docs/cli.md says so instead of promising the unready resources."""
    status = rendered_status("quickstart", "modelcache.yaml", "clusters.yaml")
    by_type = {c["type"]: c for c in status["conditions"]}
    assert (by_type["Ready"]["reason"], by_type["Ready"].get("message")) == ("Creating", None)
    assert by_type["ArtifactReady"]["message"]
    assert "`Creating` without a message when the function marks the XR not ready" in " ".join(
        CLI_DOC.read_text().split()
    )


def test_modelfleet_says_its_version():
    outcome = CliRunner().invoke(main, ["--version"])
    assert outcome.exit_code == 0
    assert re.fullmatch(r"modelfleet, version \d+\.\d+\.\d+\S*\n", outcome.output)


PROGRESS = re.compile(
    r"simulate: round \d+/\d+, "
    r"(reconciling \S+ \S+|providers (applying|observing) managed resources) \(\d+/\d+\)"
)
BIG_FLEET_HEADER = re.compile(r"^round \d+ +(\S+ \S+) {2,}(\d+ clusters: .*)$")


def test_cli_md_shows_the_big_fleet_run_as_the_benchmark_wrote_it():
    """docs/cli.md's 300-cluster output is the section bench_simulate.py --write-docs (or
    --write-timeline) writes: progress within a round naming the XR or step and how far, the
    XRs' lines counting their clusters by phase and staying short, messages a few, when
    each XR is checked next said in one line, and the closing line."""
    body = section_body(CLI_DOC.read_text(), "bench_simulate.py: timeline")
    assert re.match(
        r"Produced by `uv run python packages/modelfleet-cli/benchmarks/bench_simulate\.py "
        r"--write-(docs|timeline)` \(300 clusters, 10 models\)",
        body,
    )
    progress, output = re.findall(r"```text\n(.*?)```", body, re.DOTALL)
    assert progress.splitlines() and all(
        PROGRESS.fullmatch(line) for line in progress.splitlines()
    ), progress
    lines = output.splitlines()
    assert re.fullmatch(r"all \d+ XRs Ready after \d+ rounds", lines[-1])
    headers = [line for line in lines if line.startswith("round ")]
    assert len(headers) == 4, "the first and last lines of a ModelCache and a ModelDeployment"
    for header in headers:
        match = BIG_FLEET_HEADER.match(header)
        assert match and match[2].startswith("300 clusters: "), header
        assert len(header) < 200, header
    waits = [line.strip() for line in lines if line.strip().startswith(NEXT_CHECK)]
    assert waits and all(": waiting for " in w or "nothing left" in w for w in waits), waits
    messages = [
        line
        for line in lines
        if line.startswith(" ") and not re.match(r" +\w+=", line) and line.strip() not in waits
    ]
    assert len(messages) <= 2 * (NAMED + 1), messages
