"""Helpers shared by the test modules."""

from worksheet.model import to_array as floats  # noqa: F401  (float64 array of an exact matrix)


def one_line_error(result) -> str:
    """A user error: exit code 2 and exactly one line on stderr starting 'error: '."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]
