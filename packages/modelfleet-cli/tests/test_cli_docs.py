"""docs/cli.md says what the commands do: its exit-code table is the code's."""

import re
from pathlib import Path

from modelfleet_cli.exit_codes import ExitCode

CLI_DOC = Path(__file__).resolve().parents[3] / "docs" / "cli.md"


def exit_code_rows() -> dict[int, str]:
    section = CLI_DOC.read_text().split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\d+)` \| `([A-Z_]+)` \|", section, re.MULTILINE)
    return {int(code): name for code, name in rows}


def test_the_exit_code_table_lists_every_code_with_its_name():
    assert exit_code_rows() == {int(code): code.name for code in ExitCode}
