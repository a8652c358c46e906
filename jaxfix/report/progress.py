"""A one-line progress bar on stderr for long runs, shown only on a terminal: never in CI logs, pipes or with
--quiet, and only once a run has lasted long enough to need one (a quick run never flickers)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

DELAY = 0.5  # seconds before the bar first appears
WIDTH = 30


class Progress:
    def __init__(self, total: int, *, enabled: bool = True, stream: TextIO | None = None, label: str = "files") -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.done = 0
        self.label = label
        self.enabled = enabled and total > 1 and _is_terminal(self.stream)
        self._start = time.monotonic()
        self._shown = False
        self._last_draw = 0.0

    def advance(self, count: int = 1) -> None:
        self.done += count
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._start < DELAY or (now - self._last_draw < 0.05 and self.done < self.total):
            return
        self._last_draw = now
        filled = WIDTH * self.done // max(self.total, 1)
        bar = "#" * filled + "-" * (WIDTH - filled)
        self.stream.write(f"\r\x1b[K[{bar}] {self.done}/{self.total} {self.label}")
        self.stream.flush()
        self._shown = True

    def clear(self) -> None:
        """Erase the bar (before other output is printed; it comes back with the next advance)."""
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False

    close = clear


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
