"""A benchmark script's command line (modelfleet_devtools.bench.run_script), run with a fake
function and a temporary docs file: what --write-docs writes is what the script printed, at
every default size; it takes no sizes, and a missing marker stops it before it measures."""

from pathlib import Path
from types import SimpleNamespace

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_devtools import bench
from modelfleet_devtools.bench import Scenario, run_script
from modelfleet_devtools.docs_sections import markers, replace_section, section_body

MIB = 1024 * 1024
SIZES = (1, 3)


@pytest.fixture(autouse=True)
def no_full_collections(monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness collects garbage before every timed call, which in a test session's heap
    costs about 0.1 s each: a fake function's table needs no quiet heap."""
    monkeypatch.setattr(bench, "gc", SimpleNamespace(collect=lambda: 0))


class FakeFunction:
    """Answers every request with a response of `response_bytes`, noting the sizes asked."""

    def __init__(self, response_bytes: int = 10) -> None:
        self.sizes: list[int] = []
        self.response = fnv1.RunFunctionResponse()
        self.response.meta.tag = "x" * response_bytes

    def run(self, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
        self.sizes.append(int(req.meta.tag))
        return self.response


def request(size: int) -> fnv1.RunFunctionRequest:
    return fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag=str(size)))


SCRIPT = "bench_fake.py"
SCENARIOS = [
    Scenario("fake: N small things", request, table="small"),
    Scenario("fake: N large things", request, table="large"),
]
SMALL, LARGE = f"{SCRIPT}: small", f"{SCRIPT}: large"


def docs_with(*names: str) -> str:
    sections = [f"{markers(n)[0]}\nold figures\n{markers(n)[1]}" for n in names]
    return "# Benchmarks\n\nProse before.\n\n" + "\n\nProse between.\n\n".join(sections) + "\n"


def script(tmp_path: Path) -> Path:
    return (tmp_path / SCRIPT).resolve()


def run(tmp_path: Path, docs: str, argv: list[str], function: FakeFunction) -> tuple[int, Path]:
    path = tmp_path / "benchmarks.md"
    path.write_text(docs)
    status = run_script(
        "A fake.", script(tmp_path), function, SCENARIOS, SIZES, argv=argv, docs=path
    )
    return status, path


def table_sizes(block: str) -> list[int]:
    rows = [line for line in block.splitlines() if line.startswith("| ")][1:]
    return [int(row.split("|")[1]) for row in rows]


def test_write_docs_writes_each_table_as_printed_at_every_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    function = FakeFunction()
    status, path = run(tmp_path, docs_with(SMALL, LARGE), ["--write-docs"], function)
    printed = capsys.readouterr().out
    text = path.read_text()
    small, large = section_body(text, SMALL), section_body(text, LARGE)
    assert status == 0
    assert printed == f"{small}\n\n{large}\n\n"  # the docs show what the command printed
    for body, title in ((small, "fake: N small things"), (large, "fake: N large things")):
        heading, measured_by, table = body.split("\n\n")
        assert heading == f"### {title}"
        assert measured_by.startswith(f"Measured by `uv run python {script(tmp_path)}` on ")
        assert "CPUs, Python 3." in measured_by
        assert "load average" in measured_by
        assert table.startswith("| clusters | request | response | latency | floor | ratio |")
        assert table_sizes(table) == list(SIZES)
    assert set(function.sizes) == set(SIZES)
    outside = replace_section(replace_section(text, SMALL, "old figures"), LARGE, "old figures")
    assert outside == docs_with(SMALL, LARGE)  # the prose around the sections is untouched


def test_sizes_on_the_command_line_print_only_those_and_leave_the_docs_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    function = FakeFunction()
    status, path = run(tmp_path, docs_with(), ["3"], function)  # no sections needed
    printed = capsys.readouterr().out
    assert status == 0
    assert set(function.sizes) == {3}
    assert printed.count("### fake:") == 2
    assert f"Measured by `uv run python {script(tmp_path)} 3` on " in printed
    assert [table_sizes(block) for block in printed.split("### ")[1:]] == [[3], [3]]
    assert path.read_text() == docs_with()


@pytest.mark.parametrize(
    ("docs", "argv", "says"),
    [
        pytest.param(
            docs_with(SMALL, LARGE),
            ["--write-docs", "1"],
            "error: --write-docs measures every default size: give no sizes with it",
            id="sizes with --write-docs",
        ),
        pytest.param(
            docs_with(SMALL),
            ["--write-docs"],
            f"--write-docs: {{docs}}: the marker {markers(LARGE)[0]} is missing",
            id="a section missing",
        ),
        pytest.param(
            docs_with(SMALL, LARGE, SMALL),
            ["--write-docs"],
            f"--write-docs: {{docs}}: the marker {markers(SMALL)[0]} is there 2 times",
            id="a section twice",
        ),
    ],
)
def test_refused_before_anything_is_measured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], docs: str, argv: list[str], says: str
) -> None:
    function = FakeFunction()
    with pytest.raises(SystemExit) as stopped:
        run(tmp_path, docs, argv, function)
    path = tmp_path / "benchmarks.md"
    # A marker's error is the exit's message; argparse prints its usage error and exits 2.
    code = stopped.value.code
    message = code if isinstance(code, str) else capsys.readouterr().err
    assert code != 0
    assert says.format(docs=path.resolve()) in str(message)
    assert function.sizes == []
    assert path.read_text() == docs


def test_a_response_of_4_mib_is_flagged_and_fails_the_script(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    function = FakeFunction(response_bytes=4 * MIB)
    status, _ = run(tmp_path, docs_with(), ["2000"], function)  # few repeats at that size
    assert status == 1
    assert capsys.readouterr().out.count("MiB ⚠ >4 MiB |") == 2


def test_two_tables_of_one_script_cannot_share_a_section(tmp_path: Path) -> None:
    function = FakeFunction()
    twins = [Scenario("fake: one", request), Scenario("fake: another", request)]
    with pytest.raises(ValueError, match="two scenarios would write the same docs section"):
        run_script("A fake.", script(tmp_path), function, twins, SIZES, argv=[])
    assert function.sizes == []
