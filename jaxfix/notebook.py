"""Jupyter notebooks (nbformat 4) as one Python module: the code cells in order, each opened by a marker comment,
with IPython syntax masked; and back: only the source of the cells a rewrite changed is written, spliced into the
original JSON text, so that outputs, execution counts, metadata, ids, indentation, key order and the trailing
newline stay byte for byte as they were.

Why not nbformat: `nbformat.writes` serializes the whole document again with sorted keys and its own indentation,
which reorders and reindents notebooks written by other tools (Colab, VS Code) and so changes every line of their
diff. Here the JSON is scanned once for where each cell's `source` sits, and only those spans are replaced.

Masking: a cell that does not compile as Python is tried again with each IPython line (`%magic`, `!shell`,
`x = !ls`, `x?`, `?x`) replaced by `...  # ipython-masked:N`, which keeps the line count and runs as a no-op;
a cell that starts with a cell magic whose body is Python (`%%time`, `%%timeit`, `%%capture`) has that first
line masked. Other cell magics (`%%bash`, `%%writefile`) and cells that still do not compile stay out of the
module and are never changed. After a rewrite, each masked line must still be there, once, in its own cell,
with its indentation and the same block around it; otherwise NotebookError names the cell, whose fixes the
engine then leaves out.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from dataclasses import dataclass, field
from json.decoder import scanstring

SUFFIX = ".ipynb"
MARKER = "# jaxfix-cell:"  # `# jaxfix-cell:7`: opens the code of cell 7 in the module text
_MARKER_LINE = re.compile(r"^# jaxfix-cell:(\d+)[ \t]*$")
_MASK = "...  # ipython-masked:{}"
_MASKED_LINE = re.compile(r"^([ \t]*)\.\.\.  # ipython-masked:(\d+)$")
# Cell magics whose body is Python: the body is analysed and may be rewritten; the magic line stays.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "python", "python3", "memit"})
_IPYTHON_LINE = re.compile(
    r"""^[ \t]*(?:
        %%?[A-Za-z_]            # %magic, %%magic
      | !                       # !shell, !!shell
      | \?\??[A-Za-z_]          # ?name, ??name
      | [\w.]+\?\??[ \t]*$      # name?, name??
      | [\w.,\[\]\ \t()*]+=[ \t]*[!%]   # out = !ls, t = %timeit -o f()
    )""",
    re.VERBOSE,
)


class NotebookError(Exception):
    """A file that is not a notebook jaxfix can read, or a rewrite that cannot be put back into its cells; the
    message is the one-line reason shown to the user. `cell`: the cell a rewrite could not be put back into,
    where it is one cell's doing."""

    def __init__(self, message: str, cell: int | None = None) -> None:
        super().__init__(message)
        self.cell = cell


def is_notebook(path: str) -> bool:
    return str(path).lower().endswith(SUFFIX)


@dataclass
class Cell:
    number: int  # 1-based, counting every cell (Markdown ones too), as a reader counts them down the page
    kind: str  # "code", "markdown", "raw"
    source: str
    span: tuple[int, int] | None  # where the `source` value sits in the JSON text
    id: str | None = None
    # how the module holds a code cell: "python" as it is, "masked" with IPython lines masked, or "frozen"
    # (not Python: left out and never changed); None for other cells
    role: str | None = None
    masked: str = ""  # the cell's text as the module holds it
    masked_lines: dict[int, str] = field(default_factory=dict)  # mask number → the original line
    note: str | None = None  # why a code cell is frozen, when the user should hear it


@dataclass(frozen=True)
class CellMap:
    """Module lines to cell positions: line L of the module is line `lines[L-1][1]` of cell `lines[L-1][0]`
    (cell 0 on marker lines). Small and picklable: it travels in FileResult to the renderers."""

    lines: tuple[tuple[int, int], ...]
    ids: tuple[tuple[int, str], ...] = ()  # (cell number, cell id) where the notebook has ids

    def locate(self, line: int) -> tuple[int, int]:
        if 1 <= line <= len(self.lines):
            cell, row = self.lines[line - 1]
            if cell:
                return cell, row
            for cell, row in self.lines[line:]:  # a marker line: the first line of the next cell
                if cell:
                    return cell, 1
        return (self.lines[-1] if self.lines else (1, 1))

    def module_line(self, cell: int, row: int) -> int | None:
        for index, (number, line) in enumerate(self.lines):
            if number == cell and line == row:
                return index + 1
        return None

    def cell_id(self, cell: int) -> str | None:
        return dict(self.ids).get(cell)


@dataclass
class Notebook:
    text: str  # the JSON text, as read
    cells: list[Cell]
    language: str | None
    ensure_ascii: bool  # whether the file escapes non-ASCII characters (\u00e9) rather than writing them

    @property
    def code_cells(self) -> list[Cell]:
        return [c for c in self.cells if c.kind == "code"]

    def skip_reason(self) -> str | None:
        """Why jaxfix leaves the whole notebook alone, or None."""
        if self.language is not None and self.language.lower() not in ("python", "python3", "ipython", "ipython3"):
            return f"skipped: the notebook's kernel language is {self.language}, not Python"
        if not self.code_cells:
            return "skipped: the notebook has no code cells"
        return None

    def notes(self) -> list[str]:
        return [f"cell {c.number}: {c.note}" for c in self.cells if c.note]

    # ---- to a module and back ---------------------------------------------------------------------------------

    def module(self) -> tuple[str, CellMap]:
        """The code cells as one module: each opened by its marker line, each ending with a newline."""
        parts: list[str] = []
        lines: list[tuple[int, int]] = []
        for cell in self.code_cells:
            parts.append(f"{MARKER}{cell.number}\n")
            lines.append((0, 0))
            if cell.role == "frozen":
                continue
            body = cell.masked if cell.masked.endswith("\n") or not cell.masked else cell.masked + "\n"
            parts.append(body)
            lines.extend((cell.number, row) for row in range(1, body.count("\n") + 1))
        ids = tuple((c.number, c.id) for c in self.cells if c.id is not None)
        return "".join(parts), CellMap(tuple(lines), ids)

    def cell_sources(self, module_text: str) -> dict[int, str]:
        """The new source of each code cell that `module_text` (the module, rewritten) changes. Raises
        NotebookError when the rewrite cannot be mapped back onto the cells faithfully."""
        by_number = {c.number: c for c in self.code_cells}
        pieces = _emptied(_split(module_text), [c.number for c in self.code_cells], by_number)
        preamble = pieces[0][1]
        changed: dict[int, str] = {}
        for number, text in pieces[1:]:
            cell = by_number[number]
            if preamble.strip() and cell.role != "frozen":  # an import added above the first cell goes into it
                text, preamble = preamble + text, ""
            if cell.role == "frozen":
                if text.strip():
                    raise NotebookError(f"the rewrite added code to cell {number}, which is not Python", number)
                continue
            new = _unmask(cell, text)
            if new.strip():  # as many newlines at its end as the cell had (a removed statement leaves blank lines)
                new = new.rstrip("\n") + "\n" * (len(cell.source) - len(cell.source.rstrip("\n")))
            if new != cell.source:
                changed[number] = new
        if preamble.strip():
            raise NotebookError("the rewrite added code where no cell can hold it")
        return changed

    def with_sources(self, sources: dict[int, str]) -> str:
        """The JSON text with the `source` of the given cells replaced and every other byte as it was."""
        out = []
        position = 0
        for cell in self.cells:
            if cell.number not in sources:
                continue
            start, end = cell.span
            out.append(self.text[position:start])
            newline = "\r\n" if "\r\n" in self.text else "\n"
            out.append(_source_json(sources[cell.number], self.text[start:end], self._indent_of(start), self.ensure_ascii, newline))
            position = end
        out.append(self.text[position:])
        return "".join(out)

    def _indent_of(self, start: int) -> str:
        """The whitespace before the `"source"` key on its line (for a list written out from an empty `[]`)."""
        line_start = self.text.rfind("\n", 0, start) + 1
        line = self.text[line_start:start]
        return line[: len(line) - len(line.lstrip())]


def place(module_text: str, line: int) -> tuple[int, int] | None:
    """(cell, line in it) of line `line` of a notebook's module text, read from its marker lines; None on one."""
    lines = module_text.splitlines()
    for index in range(min(line, len(lines)) - 1, -1, -1):
        match = _MARKER_LINE.match(lines[index])
        if match:
            return (int(match.group(1)), line - index - 1) if index != line - 1 else None
    return None


def edit_fits_a_cell(module_text: str, start: int, end: int, replacement: str) -> bool:
    """Whether replacing module_text[start:end] with `replacement` stays within one cell and leaves its masked
    IPython lines alone: then the edit, placed in that cell, is what the fix does to the cell's source."""
    touched = module_text[start:end] + replacement
    if "# jaxfix-cell:" in touched or "# ipython-masked:" in touched:
        return False
    line_start = module_text.rfind("\n", 0, start) + 1
    return not _MARKER_LINE.match(module_text[line_start:].split("\n", 1)[0]) and module_text.count("# jaxfix-cell:", start, end) == 0


def _split(module_text: str) -> list[tuple[int, str]]:
    """[(0, text before the first marker), (cell number, its text), ...]."""
    pieces: list[tuple[int, list[str]]] = [(0, [])]
    for line in module_text.splitlines(keepends=True):
        match = _MARKER_LINE.match(line.rstrip("\r\n"))
        if match:
            pieces.append((int(match.group(1)), []))
        else:
            pieces[-1][1].append(line)
    return [(number, "".join(lines)) for number, lines in pieces]


def _emptied(pieces: list[tuple[int, str]], expected: list[int], cells: dict[int, "Cell"]) -> list[tuple[int, str]]:
    """`pieces` with an empty piece for each cell whose marker the rewrite removed together with all of the
    cell's code (LibCST drops the comment above a statement it removes, such as an import no longer used).
    Every line of such a cell must be gone from the piece before it; any other missing marker, or markers out
    of order, raise NotebookError."""
    found = [number for number, _ in pieces[1:]]
    if found == expected:
        return pieces
    if len(set(found)) != len(found) or any(n not in expected for n in found) or found != sorted(found, key=expected.index):
        raise NotebookError("the rewrite moved code across the notebook's cell boundaries")
    texts = dict(pieces[1:])
    result = [pieces[0]]
    previous = pieces[0][1]
    for number in expected:
        if number in texts:
            result.append((number, texts[number]))
            previous = texts[number]
            continue
        cell = cells[number]
        remaining = {line.strip() for line in previous.splitlines()}
        gone = cell.role == "python" and all(line.strip() not in remaining for line in cell.masked.splitlines() if line.strip())
        if not gone:
            raise NotebookError("the rewrite moved code across the notebook's cell boundaries")
        result.append((number, ""))
    return result


def _unmask(cell: Cell, text: str) -> str:
    """The cell's text with its masked lines restored; NotebookError when a masked line was moved or dropped."""
    if not cell.masked_lines:
        return text
    original_lines = cell.masked.splitlines()
    new_lines = text.splitlines(keepends=True)
    seen: set[int] = set()
    for index, line in enumerate(new_lines):
        match = _MASKED_LINE.match(line.rstrip("\r\n"))
        if not match:
            continue
        number = int(match.group(2))
        if number not in cell.masked_lines or number in seen:
            raise NotebookError(f"the rewrite moved IPython syntax in cell {cell.number}", cell.number)
        seen.add(number)
        at = _mask_index(original_lines, number)
        before = _block_header(original_lines, at)
        after = _block_header([l.rstrip("\r\n") for l in new_lines], index)
        if match.group(1) != _indent(original_lines[at]) or before != after:
            raise NotebookError(f"the rewrite moved IPython syntax in cell {cell.number}", cell.number)
        ending = line[len(line.rstrip("\r\n")):]
        new_lines[index] = cell.masked_lines[number] + ending
    if seen != set(cell.masked_lines):
        raise NotebookError(f"the rewrite removed IPython syntax from cell {cell.number}", cell.number)
    return "".join(new_lines)


def _mask_index(lines: list[str], number: int) -> int:
    suffix = f"# ipython-masked:{number}"
    return next(i for i, line in enumerate(lines) if line.endswith(suffix))


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _block_header(lines: list[str], index: int) -> str | None:
    """The nearest line above `index` that is indented less (the header of the block holding it), or None."""
    width = len(_indent(lines[index]))
    if width == 0:
        return None
    for line in reversed(lines[:index]):
        if line.strip() and len(_indent(line)) < width:
            return line.rstrip()
    return None


def _source_json(text: str, original: str, key_indent: str, ensure_ascii: bool, newline: str = "\n") -> str:
    """`text` as a JSON `source` value in the style of `original` (the value it replaces): a list of lines with
    the same whitespace between items, or one string."""
    if not original.startswith("["):
        return json.dumps(text, ensure_ascii=ensure_ascii)
    lines = text.splitlines(keepends=True)
    if not lines:
        return "[]"
    items = [json.dumps(line, ensure_ascii=ensure_ascii) for line in lines]
    inner = original[1:-1]
    if inner.strip():
        opening = inner[: len(inner) - len(inner.lstrip())]
        closing = inner[len(inner.rstrip()):]
        separator_match = re.search(r'"\s*,(\s*)"', inner)
        separator = "," + (separator_match.group(1) if separator_match else opening)
    else:  # `[]` before: lay the list out as Jupyter does, one item a line, one step deeper than the key
        step = key_indent[: max(1, len(key_indent) // 3)] if key_indent else ""
        opening = newline + key_indent + step if key_indent else ""
        closing = newline + key_indent if opening else ""
        separator = "," + (opening or " ")
    return "[" + opening + separator.join(items) + closing + "]"


# ---- reading ----------------------------------------------------------------------------------------------------


def python_source(raw: bytes, keep: bool = False) -> str | None:
    """The module the rules read from the notebook in `raw` (its code cells as one module, IPython masked), for the
    project index; None where the notebook cannot be read or is skipped (another kernel language, no code).
    `keep`: the reading is kept for the notebook's check in this process (parsed.take_notebook)."""
    try:
        book = read(raw)
    except NotebookError:
        return None
    if keep:
        from jaxfix import parsed

        parsed.keep_notebook(raw, book)
    return None if book.skip_reason() is not None else book.module()[0]


def read(raw: bytes) -> Notebook:
    """The notebook in `raw` (its file's bytes), its code cells prepared for the module. Raises NotebookError."""
    try:
        text = raw.decode("utf-8-sig") if raw.startswith(b"\xef\xbb\xbf") else raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise NotebookError(f"not a notebook: cannot decode as UTF-8 (byte 0x{raw[error.start]:02x} at offset {error.start})") from None
    try:
        document, cell_spans = _scan(text)
    except IndexError:
        raise NotebookError("not a notebook: invalid JSON (it ends too early)") from None
    except ValueError as error:
        raise NotebookError(f"not a notebook: invalid JSON ({str(error).splitlines()[0]})") from None
    if not isinstance(document, dict) or "nbformat" not in document:
        raise NotebookError("not a notebook: no nbformat version")
    major = document.get("nbformat")
    if major != 4:
        raise NotebookError(f"nbformat {major} is not supported (jaxfix reads nbformat 4; `jupyter nbconvert --to notebook --nbformat 4` converts)")
    if not isinstance(document.get("cells"), list):
        raise NotebookError("not a notebook: no list of cells")
    metadata = document.get("metadata") if isinstance(document.get("metadata"), dict) else {}
    cells = []
    for index, (raw_cell, span) in enumerate(zip(document["cells"], cell_spans)):
        if not isinstance(raw_cell, dict):
            raise NotebookError(f"not a notebook: cell {index + 1} is not an object")
        source = raw_cell.get("source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source = "".join(source)
        elif not isinstance(source, str):
            raise NotebookError(f"not a notebook: the source of cell {index + 1} is neither text nor a list of lines")
        cell_id = raw_cell.get("id") if isinstance(raw_cell.get("id"), str) else None
        cell = Cell(index + 1, str(raw_cell.get("cell_type", "")), source, span, cell_id)
        if cell.kind == "code":
            if span is None:
                raise NotebookError(f"not a notebook: code cell {cell.number} has no source")
            _prepare(cell)
        cells.append(cell)
    non_ascii_raw = not text.isascii()
    return Notebook(text, cells, _language(metadata), ensure_ascii="\\u" in text and not non_ascii_raw)


def from_sources(cells: list[tuple[str, str]], language: str | None = None) -> Notebook:
    """A notebook as an editor holds it (the language server): the (kind, source) of each cell in order, kind
    "code" for a code cell. It has no JSON text: `module` and `cell_sources` work, `with_sources` does not."""
    built = []
    for number, (kind, source) in enumerate(cells, 1):
        cell = Cell(number, kind, source, None)
        if kind == "code":
            _prepare(cell)
        built.append(cell)
    return Notebook("", built, language, ensure_ascii=False)


def _language(metadata: dict) -> str | None:
    for key, field_name in (("kernelspec", "language"), ("language_info", "name")):
        table = metadata.get(key)
        if isinstance(table, dict) and isinstance(table.get(field_name), str):
            return table[field_name]
    return None


def _prepare(cell: Cell) -> None:
    """Decide how the module holds the cell, masking its IPython lines where it needs that to compile."""
    first = cell.source.lstrip().split("\n", 1)[0]
    if first.startswith("%%"):
        name = first[2:].split(None, 1)[0] if first[2:].strip() else ""
        if name not in PYTHON_CELL_MAGICS:
            cell.role = "frozen"  # %%bash, %%writefile, ...: not Python, nothing to say about it
            return
    if first.startswith("%%") or _compile_error(cell.source) is not None:
        masked, table = _masked(cell.source)
        error = _compile_error(masked)
        if error is not None and _compile_error(masked, ast.PyCF_ALLOW_TOP_LEVEL_AWAIT) is None:
            cell.role, cell.note = "frozen", "top-level `await` (IPython runs it; a module cannot hold it): the cell was not checked"
            return
        if error is not None:
            cell.role, cell.note = "frozen", f"syntax error, {error}; the cell was left as it is"
            return
        cell.role, cell.masked, cell.masked_lines = "masked", masked, table
        return
    cell.role, cell.masked = "python", cell.source


def _masked(source: str) -> tuple[str, dict[int, str]]:
    lines = source.splitlines(keepends=True)
    table: dict[int, str] = {}
    continued = False
    first_code = next((i for i, line in enumerate(lines) if line.strip()), None)
    for index, line in enumerate(lines):
        body = line.rstrip("\r\n")
        is_cell_magic = index == first_code and body.lstrip().startswith("%%")
        if continued or is_cell_magic or _IPYTHON_LINE.match(body):
            number = len(table) + 1
            table[number] = body
            indent = "" if continued or is_cell_magic else _indent(body)
            lines[index] = indent + _MASK.format(number) + line[len(body):]
            continued = body.endswith("\\") and not is_cell_magic
        else:
            continued = False
    return "".join(lines), table


def _compile_error(source: str, flags: int = 0) -> str | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, "<cell>", "exec", flags=flags, dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        line = getattr(error, "lineno", None)
        return f"line {line}: {getattr(error, 'msg', error)}" if line else str(error)
    return None


def _scan(text: str) -> tuple[object, list[tuple[int, int] | None]]:
    """The parsed document (key order kept) and, for each cell of its `cells` list, where that cell's `source`
    value sits in `text`. Raises ValueError for invalid JSON."""
    decoder = json.JSONDecoder()
    spaces = re.compile(r"[ \t\n\r]*")

    def skip(i: int) -> int:
        return spaces.match(text, i).end()

    def expect(i: int, char: str) -> int:
        if i >= len(text) or text[i] != char:
            raise ValueError(f"expected {char!r} at offset {i}")
        return i + 1

    def obj(i: int, on_member=None, top: bool = False) -> tuple[dict, int]:
        """An object at text[i] == '{'; `on_member(key, start, end)` hears where each value sits; in the `top`
        object, the `cells` list is scanned for its cells' spans."""
        result: dict = {}
        i = skip(expect(i, "{"))
        if text[i] == "}":
            return result, i + 1
        while True:
            i = expect(skip(i), '"')
            key, i = scanstring(text, i)
            i = skip(expect(skip(i), ":"))
            start = i
            if top and key == "cells" and text[i] == "[":
                value, i = cells_list(i)
            else:
                value, i = decoder.raw_decode(text, i)
            if on_member is not None:
                on_member(key, start, i)
            result[key] = value
            i = skip(i)
            if text[i] == ",":
                i += 1
                continue
            return result, expect(i, "}")

    spans: list[tuple[int, int] | None] = []

    def cells_list(i: int) -> tuple[list, int]:
        items: list = []
        i = skip(expect(i, "["))
        if text[i] == "]":
            return items, i + 1
        while True:
            i = skip(i)
            if text[i] == "{":
                found: dict[str, tuple[int, int]] = {}
                value, i = obj(i, lambda key, s, e: found.__setitem__(key, (s, e)))
                spans.append(found.get("source"))
            else:
                value, i = decoder.raw_decode(text, i)
                spans.append(None)
            items.append(value)
            i = skip(i)
            if text[i] == ",":
                i += 1
                continue
            return items, expect(i, "]")

    start = skip(0)
    if start >= len(text) or text[start] != "{":
        raise ValueError("the document is not a JSON object")
    document, end = obj(start, top=True)
    if skip(end) != len(text):
        raise ValueError(f"extra data at offset {skip(end)}")
    return document, spans


def rewritten(raw: bytes, module_text: str) -> tuple[bytes, list[tuple[int, str, str]]]:
    """The notebook in `raw` with its code cells made what `module_text` (its module, rewritten) holds: the new
    file's bytes and (cell, old source, new source) of each changed cell. Raises NotebookError."""
    book = read(raw)
    sources = book.cell_sources(module_text)
    by_number = {c.number: c for c in book.cells}
    bom = "\ufeff" if raw.startswith(b"\xef\xbb\xbf") else ""
    changes = [(number, by_number[number].source, new) for number, new in sorted(sources.items())]
    return (bom + book.with_sources(sources)).encode("utf-8"), changes
