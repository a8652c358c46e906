"""Where a finding is, as machine-readable reports name it: paths relative to the repository root (what GitHub
code scanning and workflow annotations resolve), and 1-based rows and columns of text offsets."""

from __future__ import annotations

import bisect
import functools
from pathlib import Path

# Where the rules are documented: docs/rules.md, one page per rule in docs/rules/ (`jaxfix rule CODE` prints the
# same page, and the SARIF report carries it too). One place to change when the project's home moves.
RULES_URL = "https://github.com/jaxfix/jaxfix/blob/main/docs/rules.md"


def rule_url(code: str) -> str:
    return f"https://github.com/jaxfix/jaxfix/blob/main/docs/rules/{code}.md"


@functools.lru_cache(maxsize=256)
def repository_root(folder: Path) -> Path:
    """The root of the git checkout holding `folder`, else the current folder."""
    for candidate in [folder, *folder.parents]:
        if (candidate / ".git").exists():
            return candidate
    return Path.cwd().resolve()


def repository_path(path: str) -> str:
    """`path` relative to its repository root, with forward slashes (absolute when it lies outside)."""
    resolved = Path(path).resolve()
    root = repository_root(resolved.parent)
    try:
        return resolved.relative_to(root).as_posix()
    except ValueError:
        return resolved.as_posix()


def absolute_path(path: str) -> str:
    return str(Path(path).resolve()) if path != "-" else "-"


class LineIndex:
    """Character offsets of `text` to 1-based (row, column), as editors count them."""

    def __init__(self, text: str) -> None:
        self.starts = [0]
        for index, char in enumerate(text):
            if char == "\n":
                self.starts.append(index + 1)

    def position(self, offset: int) -> tuple[int, int]:
        row = bisect.bisect_right(self.starts, offset) - 1
        return row + 1, offset - self.starts[row] + 1

