"""Jupyter notebooks on the command line: findings named by cell, byte-for-byte round trips on notebooks written by
other tools (Jupyter through nbformat, Colab, an older Jupyter with escaped non-ASCII text and Windows line
endings), IPython syntax kept, cells that do not parse left alone, and the notebooks jaxfix skips."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from jaxfix import notebook, workers
from tests.helpers import invoke_in

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "notebooks"
WRITTEN_BY_OTHERS = ["jupyter.ipynb", "colab.ipynb", "escaped_crlf.ipynb"]  # each has one jax.tree_map, in cell 3


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for path in DATA.glob("*.ipynb"):
        shutil.copy(path, tmp_path / path.name)
    return tmp_path


def _source_span(raw: bytes, cell: int) -> tuple[int, int]:
    """Where cell `cell`'s `source` value sits, in characters of the decoded text."""
    return notebook.read(raw).cells[cell - 1].span


# ---- round trips ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", WRITTEN_BY_OTHERS)
def test_nothing_to_fix_leaves_the_bytes(folder: Path, name: str) -> None:
    before = (folder / name).read_bytes()
    result = invoke_in(folder, "apply", "--no-cache", "--ignore", "JF901", name)
    assert result.exit_code == 0, result.output
    assert (folder / name).read_bytes() == before
    assert "1 file checked, 0 changed" in result.output


@pytest.mark.parametrize("name", WRITTEN_BY_OTHERS)
def test_a_fix_changes_only_that_cells_source(folder: Path, name: str) -> None:
    before = (folder / name).read_bytes()
    result = invoke_in(folder, "apply", "--no-cache", name)
    assert result.exit_code == 0 and f"fixed {name} (1 fix)" in result.output, result.output
    after = (folder / name).read_bytes()
    old, new = (json.loads(data.decode("utf-8")) for data in (before, after))
    assert list(old) == list(new) and {k: v for k, v in old.items() if k != "cells"} == {k: v for k, v in new.items() if k != "cells"}
    changed = [i for i, (a, b) in enumerate(zip(old["cells"], new["cells"], strict=True)) if a != b]
    assert changed == [2]
    assert {k: v for k, v in old["cells"][2].items() if k != "source"} == {k: v for k, v in new["cells"][2].items() if k != "source"}
    assert list(old["cells"][2]) == list(new["cells"][2])  # key order too
    assert "".join(new["cells"][2]["source"]) == "".join(old["cells"][2]["source"]).replace("jax.tree_map", "jax.tree.map")
    # every byte outside that cell's source is as it was: indentation, line endings, escapes, trailing newline
    (start, end_old), (_, end_new) = _source_span(before, 3), _source_span(after, 3)
    old_text, new_text = before.decode("utf-8"), after.decode("utf-8")
    assert new_text[:start] == old_text[:start] and new_text[end_new:] == old_text[end_old:]
    # and the source keeps its JSON style: a list of lines stays one, laid out as before; escapes stay escapes
    assert type(new["cells"][2]["source"]) is type(old["cells"][2]["source"])
    assert new_text[start:end_new] == old_text[start:end_old].replace("jax.tree_map", "jax.tree.map")
    again = invoke_in(folder, "apply", "--no-cache", name)
    assert again.exit_code == 0 and (folder / name).read_bytes() == after


def test_the_corpus_notebooks_fixed_are_left_as_they_are(tmp_path: Path) -> None:
    from jaxfix import corpus

    for case in corpus.notebook_cases():
        shutil.copy(case.after, tmp_path / f"{case.name}.ipynb")
    files = sorted(tmp_path.glob("*.ipynb"))
    before = [p.read_bytes() for p in files]
    result = invoke_in(tmp_path, "apply", "--no-cache", "--unsafe-fixes", ".")
    assert result.exit_code in (0, 1), result.output
    assert [p.read_bytes() for p in files] == before


# ---- what the user sees --------------------------------------------------------------------------------------

MAGIC = {
    "cells": [
        {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": ["# Timing a jitted function"]},
        {"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [],
         "source": ["!pip install -q jax\n", "import jax\n", "import jax.numpy as jnp"]},
        {"cell_type": "code", "execution_count": None, "id": "c2", "metadata": {}, "outputs": [],
         "source": ["@jax.jit\n", "def step(x):\n", "    print(x)\n", "    return x * 2\n", "\n", "%timeit step(1.0)"]},
        {"cell_type": "code", "execution_count": None, "id": "c3", "metadata": {}, "outputs": [],
         "source": ["def broken(:\n", "    pass"]},
        {"cell_type": "code", "execution_count": None, "id": "c4", "metadata": {}, "outputs": [],
         "source": ["%%bash\n", "echo jax.tree_map"]},
        {"cell_type": "code", "execution_count": None, "id": "c5", "metadata": {}, "outputs": [],
         "source": ["for n in range(3):\n", "    %time step(float(n))\n", "files = !ls\n", "jnp.tanh?\n", "out = jax.tree_map(jnp.sin, {'a': 1.0})"]},
    ],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


@pytest.fixture
def magic(tmp_path: Path) -> Path:
    (tmp_path / "nb.ipynb").write_text(json.dumps(MAGIC, indent=1) + "\n", encoding="utf-8")
    return tmp_path


def test_check_names_the_cell_and_the_line_in_it(magic: Path) -> None:
    result = invoke_in(magic, "check", "--no-cache", "nb.ipynb")
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert "nb.ipynb:cell 3:3:5: JF601 [*] print() of a traced value runs at trace time and shows tracers; use jax.debug.print" in lines
    assert any(line.startswith("nb.ipynb:cell 6:5:7: JF901 [*]") for line in lines), lines
    assert "nb.ipynb: note: cell 4: syntax error, line 1: invalid syntax; the cell was left as it is" in lines
    assert not any("cell 5" in line for line in lines)  # %%bash: not Python, nothing to say
    assert "Checked 1 file: 2 findings, 2 fixable." in lines


def test_a_message_naming_another_line_names_its_cell(tmp_path: Path) -> None:
    cells = [
        "import jax\n\nscale = 1.0\n\n@jax.jit\ndef f(x):\n    return x * scale",
        "y = f(1.0)",
        "# a later experiment\nscale = 2.0",
        "z = f(1.0)",
    ]
    book = {
        "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": c} for c in cells],
        "metadata": {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "nb.ipynb").write_text(json.dumps(book, indent=1) + "\n", encoding="utf-8")
    result = invoke_in(tmp_path, "check", "--no-cache", "--select", "JF804", "nb.ipynb")
    assert result.exit_code == 1, result.output
    assert (
        "nb.ipynb:cell 1:7:16: JF804 `f` is compiled with jax.jit and reads the global `scale`, which the module rebinds "
        "at cell 3, line 2, after a use of `f`, and uses `f` again at cell 4, line 1:"
    ) in result.output, result.output


def test_apply_keeps_ipython_lines_and_the_unparsable_cell(magic: Path) -> None:
    result = invoke_in(magic, "apply", "--no-cache", "nb.ipynb")
    assert result.exit_code == 0, result.output
    cells = json.loads((magic / "nb.ipynb").read_text(encoding="utf-8"))["cells"]
    sources = ["".join(c["source"]) for c in cells]
    original = ["".join(c["source"]) for c in MAGIC["cells"]]
    assert sources[2] == original[2].replace("print(x)", 'jax.debug.print("{}", x)')
    assert sources[5] == original[5].replace("jax.tree_map", "jax.tree.map")
    assert sources[:2] + sources[3:5] == original[:2] + original[3:5]


def test_diff_is_per_cell(magic: Path) -> None:
    before = (magic / "nb.ipynb").read_bytes()
    result = invoke_in(magic, "apply", "--diff", "--no-cache", "nb.ipynb")
    assert result.exit_code == 1
    assert "--- a/nb.ipynb:cell 3\n+++ b/nb.ipynb:cell 3\n" in result.output
    assert "-    print(x)\n+    jax.debug.print(\"{}\", x)\n" in result.output
    assert "--- a/nb.ipynb:cell 6\n" in result.output and "cell 4" not in result.output.split("note:")[0]
    assert (magic / "nb.ipynb").read_bytes() == before


def test_machine_readable_reports_carry_the_cell(magic: Path) -> None:
    found = json.loads(invoke_in(magic, "check", "--no-cache", "-q", "--output-format", "json", "nb.ipynb").stdout)
    first = next(d for d in found if d["code"] == "JF601")
    assert (first["cell"], first["cell_id"], first["location"], first["noqa_row"]) == (3, "c2", {"row": 3, "column": 5}, 3)
    sarif = json.loads(invoke_in(magic, "check", "--no-cache", "-q", "--output-format", "sarif", "nb.ipynb").stdout)
    from tests.test_output_formats import validate

    validate(sarif)
    location = sarif["runs"][0]["results"][0]["locations"][0]
    assert location["properties"] == {"cell": 3} and location["physicalLocation"]["region"]["startLine"] == 3
    github = invoke_in(magic, "check", "--no-cache", "-q", "--output-format", "github", "nb.ipynb").stdout
    assert "::warning file=nb.ipynb,title=JF601::cell 3:3:5: print() of a traced value" in github


def test_add_noqa_comments_the_cells(magic: Path) -> None:
    result = invoke_in(magic, "check", "--no-cache", "--add-noqa", "nb.ipynb")
    assert result.exit_code == 0 and "nb.ipynb: added 2 noqa comments" in result.output, result.output
    cells = json.loads((magic / "nb.ipynb").read_text(encoding="utf-8"))["cells"]
    assert cells[2]["source"][2] == "    print(x)  # noqa: JF601\n"
    assert cells[5]["source"][4].endswith("  # noqa: JF901")
    assert invoke_in(magic, "check", "--no-cache", "nb.ipynb").exit_code == 0


def test_the_cache_answers_a_notebook_as_it_was_found(magic: Path) -> None:
    clean = {**MAGIC, "cells": [c for c in MAGIC["cells"] if c["id"] != "c3"]}  # a note is never cached
    (magic / "nb.ipynb").write_text(json.dumps(clean, indent=1) + "\n", encoding="utf-8")
    (magic / "pyproject.toml").write_text("[tool.jaxfix]\n")
    first = invoke_in(magic, "check", "--output-format", "json", "-q", "nb.ipynb").stdout
    assert list((magic / ".jaxfix_cache").rglob("findings-*.pack")), "stored"
    second = invoke_in(magic, "check", "--output-format", "json", "-q", "nb.ipynb").stdout
    assert first == second and '"cell": 3' in second and '"cell_id": "c2"' in second
    diff = invoke_in(magic, "apply", "--diff", "nb.ipynb").stdout
    assert "--- a/nb.ipynb:cell 3" in diff


def test_stdin_takes_a_notebook_named_by_stdin_filename(magic: Path) -> None:
    from typer.testing import CliRunner

    from jaxfix.cli import app

    raw = (magic / "nb.ipynb").read_bytes()
    checked = CliRunner().invoke(app, ["check", "-", "--stdin-filename", str(magic / "nb.ipynb")], input=raw)
    assert checked.exit_code == 1 and ":cell 3:3:5: JF601" in checked.stdout, checked.output
    applied = CliRunner().invoke(app, ["apply", "-", "--stdin-filename", str(magic / "nb.ipynb")], input=raw)
    assert applied.exit_code == 0, applied.output
    new = json.loads(applied.stdout_bytes)
    assert "jax.debug.print" in "".join(new["cells"][2]["source"]) and new["cells"][3] == MAGIC["cells"][3]
    broken = CliRunner().invoke(app, ["apply", "-", "--stdin-filename", "x.ipynb"], input=b'{"cells": [')
    assert broken.exit_code == 2 and broken.stdout == "" and "x.ipynb: not a notebook: invalid JSON" in broken.output


# ---- which notebooks --------------------------------------------------------------------------------------------


def test_folders_are_walked_for_notebooks_and_excludes_apply(folder: Path) -> None:
    (folder / ".ipynb_checkpoints").mkdir()
    shutil.copy(folder / "jupyter.ipynb", folder / ".ipynb_checkpoints" / "jupyter-checkpoint.ipynb")
    result = invoke_in(folder, "check", "--no-cache", "--exclude", "colab.ipynb", ".")
    reported = {line.split(":")[0] for line in result.output.splitlines() if ": JF" in line}
    assert reported == {"jupyter.ipynb", "escaped_crlf.ipynb"}, result.output
    (folder / "pyproject.toml").write_text('[tool.jaxfix]\nexclude = ["escaped_*.ipynb"]\n')
    result = invoke_in(folder, "check", "--no-cache", ".")
    assert {line.split(":")[0] for line in result.output.splitlines() if ": JF" in line} == {"jupyter.ipynb", "colab.ipynb"}


def test_other_kernels_and_notebooks_without_code_are_skipped_with_a_note(folder: Path) -> None:
    result = invoke_in(folder, "check", "--no-cache", "r_kernel.ipynb", "markdown_only.ipynb")
    assert result.exit_code == 0, result.output
    assert "r_kernel.ipynb: note: skipped: the notebook's kernel language is R, not Python" in result.output
    assert "markdown_only.ipynb: note: skipped: the notebook has no code cells" in result.output


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "nbformat 3 is not supported"),
        ('{"cells": [', "not a notebook: invalid JSON"),
        ('{"nbformat": 4, "cells": [{"cell_type": "code", "source": 3}]}', "the source of cell 1 is neither text nor a list of lines"),
        ("[1, 2]", "not a notebook"),
    ],
)
def test_bad_notebooks_are_one_line_errors_and_left_alone(folder: Path, content: str | None, message: str) -> None:
    path = folder / "nbformat3.ipynb"
    if content is not None:
        path.write_text(content)
    before = path.read_bytes()
    for command in ("check", "apply"):
        result = invoke_in(folder, command, "--no-cache", path.name)
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        assert f"{path.name}: error: " in result.output and message in result.output
    assert path.read_bytes() == before


# ---- the module of a notebook -----------------------------------------------------------------------------------


def _book(*sources: str) -> notebook.Notebook:
    return notebook.from_sources([("code", s) for s in sources])


def test_ipython_lines_are_masked_with_their_line_count_and_restored() -> None:
    book = _book("!pip install \\\n    jax\nimport jax", "x = 1\nx?\n?x\nout = %timeit -o f()\n  ", "%%time\ny = 2")
    text, cells = book.module()
    assert "pip" not in text and "timeit" not in text and "%%time" not in text
    assert [c.role for c in book.cells] == ["masked", "masked", "masked"]
    assert cells.locate(text.splitlines().index("import jax") + 1) == (1, 3)
    assert book.cell_sources(text) == {}
    changed = text.replace("import jax", "import jax  # noqa")
    assert book.cell_sources(changed) == {1: "!pip install \\\n    jax\nimport jax  # noqa"}


def test_cells_that_are_not_python_stay_out_of_the_module() -> None:
    book = _book("%%bash\necho hi", "await asyncio.sleep(1)", "def f(:\n  pass", "y = 2")
    assert [c.role for c in book.cells] == ["frozen", "frozen", "frozen", "python"]
    assert [n for n in book.notes()] == [
        "cell 2: top-level `await` (IPython runs it; a module cannot hold it): the cell was not checked",
        "cell 3: syntax error, line 1: invalid syntax; the cell was left as it is",
    ]
    text, _ = book.module()
    assert "echo" not in text and "await" not in text and "def f" not in text
    with pytest.raises(notebook.NotebookError):
        book.cell_sources(text.replace("# jaxfix-cell:2\n", "# jaxfix-cell:2\nz = 3\n"))


@pytest.mark.parametrize(
    "edit",
    [
        lambda text: text.replace("...  # ipython-masked:1\n", ""),  # dropped
        lambda text: text.replace("...  # ipython-masked:1\n", "").replace("z = 0\n", "z = 0\n...  # ipython-masked:1\n"),  # to cell 2
        lambda text: text.replace("for i in range(3):\n", "def body(i):\n"),  # its block rewritten around it
        lambda text: text.replace("# jaxfix-cell:2\n", ""),  # a cell boundary lost
    ],
)
def test_a_rewrite_that_moves_ipython_syntax_is_refused(edit) -> None:
    book = _book("for i in range(3):\n    %time f(i)\n    g(i)", "z = 0")
    text, _ = book.module()
    with pytest.raises(notebook.NotebookError):
        book.cell_sources(edit(text))


def test_an_import_added_above_the_first_cell_goes_into_it() -> None:
    book = _book("%%bash\necho hi", "x = jnp.ones(3)")
    text, _ = book.module()
    assert book.cell_sources("import jax.numpy as jnp\n" + text) == {2: "import jax.numpy as jnp\nx = jnp.ones(3)"}


# ---- verify and bench ---------------------------------------------------------------------------------------------


def test_verify_runs_a_notebooks_rewrites(tmp_path: Path) -> None:
    from jaxfix import corpus

    case = next(c for c in corpus.notebook_cases() if c.name == "notebook_loop_across_cells")
    shutil.copy(case.before, tmp_path / "loop.ipynb")
    result = invoke_in(tmp_path, "verify", "--max-examples", "3", "loop.ipynb")
    assert result.exit_code == 0, result.output
    assert "loop.ipynb::fast_energy  cpu  verified" in result.output
    assert "(call sites loop.ipynb:cell 6:1)" in result.output
    assert "loop.ipynb::decayed_energy  verified through fast_energy" in result.output


def test_a_cell_whose_code_a_fix_removed_becomes_empty() -> None:
    book = _book("import jax.numpy as jnp", "from jax.experimental.pjit import pjit", "f = pjit(g)")
    text, _ = book.module()
    rewritten = text.replace("# jaxfix-cell:2\nfrom jax.experimental.pjit import pjit\n", "").replace("pjit(g)", "jax.jit(g)")
    rewritten = rewritten.replace("import jax.numpy as jnp\n", "import jax.numpy as jnp\nimport jax\n\n")
    assert book.cell_sources(rewritten) == {1: "import jax.numpy as jnp\nimport jax", 2: "", 3: "f = jax.jit(g)"}
    kept = text.replace("# jaxfix-cell:2\n", "")  # its marker gone, its code still there: where does it belong?
    with pytest.raises(notebook.NotebookError):
        book.cell_sources(kept)


def _as_notebook(text: str) -> bytes:
    """A module as a notebook of one top-level statement per cell (decorators with their definition)."""
    import ast

    lines = text.splitlines(keepends=True)
    starts = [min([d.lineno for d in getattr(n, "decorator_list", [])], default=n.lineno) - 1 for n in ast.parse(text).body]
    bounds = [0, *starts[1:], len(lines)]
    cells = [
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": "".join(lines[a:b]).rstrip("\n").splitlines(keepends=True)}
        for a, b in zip(bounds, bounds[1:])
    ]
    return (json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 4}, indent=1) + "\n").encode()


def test_the_deprecated_api_corpus_as_notebooks_gets_the_same_rewrites() -> None:
    """One statement a cell, the worst case for cell boundaries (imports added, removed, replaced): the cells of
    the rewritten notebook, run in order, are the rewritten module."""
    import ast

    from jaxfix import corpus, registry
    from jaxfix.engine import Settings, fix_text

    settings = Settings(tuple(c.code for c in registry.all_codemods()), unsafe_fixes=True)
    checked = 0
    for case in corpus.cases():
        if case.codemod != "deprecated_api":
            continue
        text = case.before.read_text(encoding="utf-8")
        raw = _as_notebook(text)
        module_text = notebook.read(raw).module()[0]
        fixed_module = fix_text(module_text, settings)[0]
        new_raw, _ = notebook.rewritten(raw, fixed_module)
        cells = ["".join(c["source"]) for c in json.loads(new_raw)["cells"]]
        expected = fix_text(text, settings)[0]
        assert ast.dump(ast.parse("\n".join(cells))) == ast.dump(ast.parse(expected)), case.id
        checked += 1
    assert checked >= 20


def test_the_example_notebook_runs_after_apply_and_simulates_the_spring(tmp_path: Path) -> None:
    """examples/notebooks/damped_spring.ipynb, written for an older JAX (`jax.tree_map`), runs top to bottom on
    today's after `apply --unsafe-fixes`, and its fori_loop simulation is the Euler loop's."""
    import numpy as np

    from jaxfix import corpus

    shutil.copy(ROOT / "examples" / "notebooks" / "damped_spring.ipynb", tmp_path / "spring.ipynb")
    result = invoke_in(tmp_path, "apply", "--no-cache", "--unsafe-fixes", "spring.ipynb")
    assert "fixed spring.ipynb (3 fixes)" in result.output, result.output
    simulate = corpus.load_function(tmp_path / "spring.ipynb", "simulate_jit", tag="spring")
    x, v = np.float32(1.0), np.float32(0.0)
    for _ in range(200):
        a = np.float32(-4.0) * x - np.float32(0.5) * v
        v = v + np.float32(0.01) * a
        x = x + np.float32(0.01) * v
    np.testing.assert_allclose(np.asarray(simulate(1.0, 0.0)), [x, v], rtol=1e-5)
    cells = json.loads((tmp_path / "spring.ipynb").read_text(encoding="utf-8"))["cells"]
    assert "jax.lax.fori_loop" in "".join(cells[4]["source"]) and cells[4]["outputs"] == []
    assert cells[9]["outputs"][0]["text"][0].startswith("energy: Traced")  # outputs stay as they were


def test_bench_measures_a_notebooks_rewrites(tmp_path: Path) -> None:
    from jaxfix import corpus

    case = next(c for c in corpus.notebook_cases() if c.name == "notebook_loop_across_cells")
    shutil.copy(case.before, tmp_path / "loop.ipynb")
    result = invoke_in(tmp_path, "bench", "--format", "json", "--repeats", "1", "--warmup", "0", "-q", "loop.ipynb")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    (row,) = [r for r in rows if r["target"] == "loop.ipynb::fast_energy"]
    assert row["device"] == "cpu" and row["path"] == "loop.ipynb" and row["origin"] == "call sites loop.ipynb:cell 6:1", row
    assert row["before"]["run_s"] > 0 and row["after"]["run_s"] > 0


def test_json_edits_applied_to_their_cells_make_the_fix(tmp_path: Path) -> None:
    shutil.copy(ROOT / "examples" / "notebooks" / "damped_spring.ipynb", tmp_path / "spring.ipynb")
    found = json.loads(invoke_in(tmp_path, "check", "--no-cache", "-q", "--output-format", "json", "spring.ipynb").stdout)
    sources = {i + 1: "".join(c["source"]) for i, c in enumerate(json.loads((tmp_path / "spring.ipynb").read_text())["cells"])}
    for finding in found:
        (edit,) = finding["fix"]["edits"]
        assert edit["cell"] == finding["cell"]
        lines = sources[edit["cell"]].splitlines(keepends=True)

        def offset(point: dict) -> int:
            return sum(len(line) for line in lines[: point["row"] - 1]) + point["column"] - 1

        text = sources[edit["cell"]]
        sources[edit["cell"]] = text[: offset(edit["location"])] + edit["content"] + text[offset(edit["end_location"]) :]
    invoke_in(tmp_path, "apply", "--no-cache", "--unsafe-fixes", "spring.ipynb")
    fixed = {i + 1: "".join(c["source"]) for i, c in enumerate(json.loads((tmp_path / "spring.ipynb").read_text())["cells"])}
    assert len(found) == 3 and sources == fixed


def test_apply_verify_writes_only_the_verified_cells(tmp_path: Path) -> None:
    from jaxfix import corpus

    case = next(c for c in corpus.notebook_cases() if c.name == "notebook_loop_across_cells")
    shutil.copy(case.before, tmp_path / "loop.ipynb")
    result = invoke_in(tmp_path, "apply", "--verify", "--max-examples", "3", "loop.ipynb")
    fixed_line = next(line for line in result.output.splitlines() if line.startswith("fixed loop.ipynb (1 fix; verified: "))
    assert result.exit_code == 0 and "decayed_energy" in fixed_line, result.output
    assert (tmp_path / "loop.ipynb").read_bytes() == case.after.read_bytes()


def test_a_fix_that_would_move_a_magic_leaves_its_cell_and_fixes_the_others(tmp_path: Path) -> None:
    cells = [
        {"cell_type": "code", "execution_count": None, "id": "a", "metadata": {}, "outputs": [], "source": ["import jax\n", "import jax.numpy as jnp"]},
        {"cell_type": "code", "execution_count": None, "id": "b", "metadata": {}, "outputs": [],
         "source": ["@jax.jit\n", "def decay(x):\n", "    for step in range(50):\n", "        x = x * 0.9\n", "        %time x\n", "    return x"]},
        {"cell_type": "code", "execution_count": None, "id": "c", "metadata": {}, "outputs": [], "source": ["out = jax.tree_map(jnp.sin, {'a': 1.0})"]},
    ]
    (tmp_path / "m.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1))
    result = invoke_in(tmp_path, "apply", "--no-cache", "--unsafe-fixes", "m.ipynb")
    assert result.exit_code == 1, result.output
    assert "m.ipynb: note: the rewrite moved IPython syntax in cell 2: the fixes in cell 2 were not applied" in result.output
    assert "m.ipynb:cell 2:3:17: JF101 this Python loop unrolls 50 times" in result.output
    assert "(not fixed: the fix would move this cell's IPython lines)" in result.output
    new = json.loads((tmp_path / "m.ipynb").read_text())["cells"]
    assert new[1] == cells[1] and new[2]["source"] == ["out = jax.tree.map(jnp.sin, {'a': 1.0})"]


@pytest.mark.parametrize("indent", [1, 2, 4, None])
def test_an_empty_source_list_is_written_out_as_json_would_lay_it_out(indent) -> None:
    """A cell whose source was `[]` (Jupyter writes an empty cell so) that gains code: laid out as `json.dumps`
    with the notebook's indentation lays out a list."""
    document = {"cells": [
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": []},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": ["x = jnp.ones(3)"]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    raw = (json.dumps(document, indent=indent) + "\n").encode()
    book = notebook.read(raw)
    text, _ = book.module()
    sources = book.cell_sources("import jax.numpy as jnp\nimport jax\n" + text)
    assert sources == {1: "import jax.numpy as jnp\nimport jax"}
    document["cells"][0]["source"] = ["import jax.numpy as jnp\n", "import jax"]
    assert book.with_sources(sources) == json.dumps(document, indent=indent) + "\n"


def test_notebooks_analysed_in_the_workers_keep_their_place(tmp_path) -> None:
    """Notebooks and modules analysed by worker processes (engine.process_files): the results come in the order of
    the paths, with the same findings as one process gives."""
    from jaxfix import engine

    jitted = "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    for i in range(100):\n        x = x * 2 + jnp.sin(x)\n    return x\n"
    paths = []
    for index in range(workers.PARALLEL_THRESHOLD + 2):
        book = tmp_path / f"nb{index}.ipynb"
        book.write_bytes(_as_notebook(jitted if index % 2 else "x = 1\n"))
        module = tmp_path / f"m{index}.py"
        module.write_text(jitted if index % 3 else "y = 2\n")
        paths += [str(book), str(module)]
    settings = engine.Settings(("JF101",))
    one = [(r.path, [d.code for d in r.diagnostics]) for r in engine.process_files(paths, settings, fix=False, write=False, jobs=1)]
    two = [(r.path, [d.code for d in r.diagnostics]) for r in engine.process_files(paths, settings, fix=False, write=False, jobs=2)]
    assert [p for p, _ in two] == paths and two == one
    assert sum(1 for p, codes in one if codes and p.endswith(".ipynb")) == (workers.PARALLEL_THRESHOLD + 2) // 2


def test_a_notebooks_check_takes_the_tree_its_summary_kept(monkeypatch) -> None:
    """The project index reads a notebook and parses its code cells for its summary, and keeps both; the check of
    the same notebook in the same process takes them instead of reading and parsing again (jaxfix/parsed.py)."""
    from jaxfix import engine, parsed
    from jaxfix.project_io import _make_summary

    raw = (DATA / "jupyter.ipynb").read_bytes()
    module_text = notebook.read(raw).module()[0]
    parsed.forget()
    try:
        assert _make_summary((raw, "jupyter", False, True), keep_tree=True) is not None
        kept = parsed.take(module_text.encode("utf-8", "surrogateescape"))
        assert kept is not None
        parsed.keep(module_text.encode("utf-8", "surrogateescape"), kept)
        given = []
        real = engine.process_text
        monkeypatch.setattr(engine, "process_text", lambda *a, tree=None, **k: given.append(tree) or real(*a, tree=tree, **k))
        read_again = []
        real_read = notebook.read
        monkeypatch.setattr(engine.notebook, "read", lambda data: read_again.append(data) or real_read(data))
        result = engine.process_notebook("jupyter.ipynb", raw, engine.Settings(("JF901",)), fix=False)
        assert given == [kept] and [d.code for d in result.diagnostics] == ["JF901"]
        assert not read_again, "the notebook's reading was kept"
    finally:
        parsed.forget()
