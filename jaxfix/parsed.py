"""One `ast` parse per file and run. The project index parses every file for its summary, then the check parses
the same files again for its syntax check and screens: a process that made a summary keeps the tree, and the
check of the same content in the same process takes it instead of parsing again (the engine's workers check a
file, where they can, in the worker that summarised it). The parse was 9% of a cold check's CPU on 1,401 real
files. The trees kept are bounded by the size of their sources (an `ast` takes about 38 bytes per byte of
source), so that checking one file of a big project does not hold every tree of it. A notebook's JSON is read
once too: the summary's reading (its cells, IPython masked) is kept for its check, within NOTEBOOK_BUDGET bytes
of notebook files (reading them twice cost 0.22 s of CPU over the 48 notebooks of the 10 real trees)."""

from __future__ import annotations

import ast
import warnings

# Sources of at most this many bytes in all have their trees kept, per process (about 300 MB of trees).
BUDGET = 8 << 20
# Notebook files of at most this many bytes in all have their reading kept, per process (a reading holds the
# decoded JSON: about the file's size).
NOTEBOOK_BUDGET = 64 << 20

_kept: dict[bytes, ast.Module] = {}
_kept_bytes = 0
_notebooks: dict[bytes, object] = {}
_notebook_bytes = 0


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """The module's `ast`, as the compiler parses it: no `__future__` flag of jaxfix's own modules is inherited,
    and the syntax warnings of the user's code (`x is 1`) are not jaxfix's to print. Raises SyntaxError or
    ValueError for what Python rejects."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile(source, filename, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)


def keep(data: bytes, tree: ast.Module) -> None:
    """Keep `tree`, parsed from `data`, for a later `take` of the same content in this process (within BUDGET)."""
    global _kept_bytes
    if data not in _kept and _kept_bytes + len(data) <= BUDGET:
        _kept[data] = tree
        _kept_bytes += len(data)


def take(data: bytes) -> ast.Module | None:
    """The tree kept for `data`, given once (the taker may annotate it), or None."""
    global _kept_bytes
    tree = _kept.pop(data, None)
    if tree is not None:
        _kept_bytes -= len(data)
    return tree


def keep_notebook(raw: bytes, book: object) -> None:
    """Keep `book`, read from the notebook file's bytes `raw`, for a later `take_notebook` (within NOTEBOOK_BUDGET)."""
    global _notebook_bytes
    if raw not in _notebooks and _notebook_bytes + len(raw) <= NOTEBOOK_BUDGET:
        _notebooks[raw] = book
        _notebook_bytes += len(raw)


def take_notebook(raw: bytes) -> object | None:
    """The notebook kept for `raw`, given once, or None."""
    global _notebook_bytes
    book = _notebooks.pop(raw, None)
    if book is not None:
        _notebook_bytes -= len(raw)
    return book


def forget() -> None:
    """Let every kept tree and notebook go (the run is over)."""
    global _kept_bytes, _notebook_bytes
    _kept.clear()
    _kept_bytes = 0
    _notebooks.clear()
    _notebook_bytes = 0
