"""A one-line progress bar on stderr for long runs, shown only on a terminal: never in CI logs, pipes or with
--quiet. `check` and `apply` count files and show the bar only once a run has lasted long enough to need one
(a quick run never flickers); `bench` names the function being measured and the seconds since it began, from
the start, since each function takes seconds."""

from __future__ import annotations

import sys
import time
from typing import TextIO

DELAY = 0.5  # seconds before the bar first appears (the default)
WIDTH = 30
ITEM_WIDTH = 50  # the end of a long item name is kept: `...before.py::step`


class Progress:
    """`[#########---------] 3/10 files`, redrawn in place. With `items=True` it also says what is running now
    (`start(name)`) and the seconds since it began: `[###------] 3/10 functions: a.py::f  12 s`; a single item
    is then worth a bar, while counting alone shows one only for two or more."""

    def __init__(
        self,
        total: int,
        *,
        enabled: bool = True,
        stream: TextIO | None = None,
        label: str = "files",
        items: bool = False,
        delay: float | None = None,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.done = 0
        self.label = label
        self.items = items
        self.current = ""
        self.delay = delay
        self.enabled = enabled and total > (0 if items else 1) and _is_terminal(self.stream)
        self._start = time.monotonic()
        self._shown = False
        self._last_draw = 0.0

    def start(self, item: str) -> None:
        """`item` is what runs now: drawn at once (past the delay), whatever the last draw."""
        self.current = item
        self._draw(time.monotonic())

    def advance(self, count: int = 1) -> None:
        self.done += count
        now = time.monotonic()
        if now - self._last_draw < 0.05 and self.done < self.total:
            return
        self._draw(now)

    finish_one = advance

    def clear(self) -> None:
        """Erase the bar (before other output is printed; it comes back with the next draw)."""
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False

    close = clear

    def text(self, now: float) -> str:
        filled = WIDTH * self.done // max(self.total, 1)
        line = f"[{'#' * filled}{'-' * (WIDTH - filled)}] {self.done}/{self.total} {self.label}"
        if self.items:
            line += (f": {self.current[-ITEM_WIDTH:]}" if self.current else "") + f"  {now - self._start:.0f} s"
        return line

    def _draw(self, now: float) -> None:
        if not self.enabled or now - self._start < (DELAY if self.delay is None else self.delay):
            return
        self._last_draw = now
        self.stream.write("\r\x1b[K" + self.text(now))
        self.stream.flush()
        self._shown = True


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
