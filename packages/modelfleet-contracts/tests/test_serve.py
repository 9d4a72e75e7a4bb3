"""Every function's console script accepts requests of a 1000-cluster fleet by default."""

from click.testing import CliRunner
from modelfleet_contracts.edge.serve import DEFAULT_MAX_MESSAGE_MIB, function_cli


def test_the_default_request_limit_is_64_mib_and_help_says_so():
    command = function_cli(lambda: None, "compose-test")  # type: ignore[arg-type,return-value]
    option = next(p for p in command.params if p.name == "max_recv_message_size")
    assert option.default == DEFAULT_MAX_MESSAGE_MIB == 64
    help_text = CliRunner().invoke(command, ["--help"]).output
    assert "[default: 64]" in help_text
    assert "--insecure" in help_text and "--address" in help_text
