"""`jaxfix lsp` end to end: the server runs as a subprocess and pytest-lsp's client talks to it over stdio, as an
editor would: open a document, receive diagnostics, ask for code actions, apply the returned edit, check the text.

Two clients: one with Visual Studio Code's capabilities (it resolves code actions lazily and takes versioned
`documentChanges`), and a bare one that gets every edit in the code action itself, as plain `changes`."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from typer.testing import CliRunner

from jaxfix.cli import app

lsp_test = pytest.mark.asyncio(loop_scope="module")  # the tests of a module share its servers

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "jaxfix", "lsp"])
ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 60  # one analysis takes well under a second here; the margin is for a loaded machine

PRINT_BEFORE = (ROOT / "corpus/print_in_traced/jit_value/before.py").read_text()
PRINT_AFTER = (ROOT / "corpus/print_in_traced/jit_value/after.py").read_text()

MIXED = textwrap.dedent(
    """\
    import jax
    import jax.numpy as jnp


    @jax.jit
    def leaky(x):
        print("x", x)
        if x > 0:
            y = x
        else:
            y = 0.01 * x
        return y
    """
)
MIXED_PRINT_FIXED = MIXED.replace('    print("x", x)', '    jax.debug.print("x {}", x)')
MIXED_IF_FIXED = MIXED.replace(
    "    if x > 0:\n        y = x\n    else:\n        y = 0.01 * x\n", "    y = jnp.where(x > 0, x, 0.01 * x)\n"
)


@pytest_lsp.fixture(config=SERVER, scope="module")
async def vscode(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(capabilities=client_capabilities("visual-studio-code")))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER, scope="module", params=["visual-studio-code", "bare"])
async def either(lsp_client: LanguageClient, request):
    """Both kinds of client, for the tests of edits."""
    bare = request.param == "bare"
    capabilities = types.ClientCapabilities() if bare else client_capabilities(request.param)
    await lsp_client.initialize_session(types.InitializeParams(capabilities=capabilities))
    yield
    await lsp_client.shutdown_session()


# ---- a client's side of the work ---------------------------------------------------------------------------


class Buffer:
    """A document the client has open, kept in step with what it sends the server."""

    counter = 0

    def __init__(self, client: LanguageClient, folder: Path, text: str, name: str | None = None) -> None:
        Buffer.counter += 1
        self.client = client
        self.path = folder / (name or f"doc{Buffer.counter}.py")
        self.path.write_text(text)
        self.uri = self.path.as_uri()
        self.text = text
        self.version = 1

    async def open(self) -> list[types.Diagnostic]:
        self.client.diagnostics.pop(self.uri, None)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=self.uri, language_id="python", version=self.version, text=self.text)
            )
        )
        return await self.diagnostics()

    def change(self, text: str) -> None:
        self.version += 1
        self.text = text
        self.client.diagnostics.pop(self.uri, None)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    async def diagnostics(self) -> list[types.Diagnostic]:
        """The next diagnostics published for this document."""

        async def published() -> None:
            while self.uri not in self.client.diagnostics:
                await asyncio.sleep(0.02)

        await asyncio.wait_for(published(), TIMEOUT_S)
        return list(self.client.diagnostics[self.uri])

    async def actions(self, line: int, only: list[str] | None = None) -> list[types.CodeAction]:
        """The code actions with the cursor on `line` (from 0), edits resolved as an editor resolves them."""
        on_line = [d for d in self.client.diagnostics.get(self.uri, []) if d.range.start.line <= line <= d.range.end.line]
        found = await self.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=self.uri),
                range=types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line, character=0)),
                context=types.CodeActionContext(diagnostics=on_line, only=only),
            )
        )
        resolved = []
        for action in found or []:
            assert isinstance(action, types.CodeAction)
            if action.edit is None and action.data is not None:
                action = await self.client.code_action_resolve_async(action)
            resolved.append(action)
        return resolved

    def apply(self, action: types.CodeAction) -> str:
        """The text after the action's edit (which must be for this buffer, and of its current version)."""
        edit = action.edit
        assert edit is not None, f"{action.title!r} has no edit"
        if edit.document_changes is not None:
            (change,) = edit.document_changes
            assert change.text_document.uri == self.uri and change.text_document.version == self.version
            edits = change.edits
        else:
            edits = edit.changes[self.uri]
        return apply_edits(self.text, edits)


def _offset(text: str, position: types.Position) -> int:
    """A position (line, UTF-16 column) as an offset into `text`; past the end of its line means the end."""
    lines = text.splitlines(keepends=True)
    if position.line >= len(lines):
        return len(text)
    offset = sum(len(line) for line in lines[: position.line])
    units = 0
    for index, char in enumerate(lines[position.line]):
        if units >= position.character or char in "\r\n":
            return offset + index
        units += len(char.encode("utf-16-le")) // 2
    return offset + len(lines[position.line])


def apply_edits(text: str, edits) -> str:
    spans = sorted(((_offset(text, e.range.start), _offset(text, e.range.end), e.new_text) for e in edits), reverse=True)
    for (start, end, new), following in zip(spans, [None, *spans]):
        assert following is None or end <= following[0], "overlapping edits"
        text = text[:start] + new + text[end:]
    return text


def by_title(actions: list[types.CodeAction], start: str) -> types.CodeAction:
    matching = [a for a in actions if a.title.startswith(start)]
    assert len(matching) == 1, [a.title for a in actions]
    return matching[0]


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("lsp")


# ---- diagnostics -------------------------------------------------------------------------------------------


@lsp_test
async def test_diagnostic_on_open(vscode: LanguageClient, folder: Path):
    (diagnostic,) = await Buffer(vscode, folder, PRINT_BEFORE).open()
    assert diagnostic.code == "JF601"
    assert diagnostic.source == "jaxfix"
    assert diagnostic.severity == types.DiagnosticSeverity.Warning
    assert diagnostic.message.startswith("print() of a traced value")
    line = PRINT_BEFORE.splitlines()[7]  # `    print("y", y)  # shows a tracer...`
    assert diagnostic.range == types.Range(
        start=types.Position(line=7, character=line.index("print")),
        end=types.Position(line=7, character=line.index("  #")),
    )
    assert diagnostic.code_description.href == (ROOT / "docs/rules/JF601.md").as_uri()


@lsp_test
async def test_diagnostics_follow_changes_after_the_debounce(vscode: LanguageClient, folder: Path):
    buffer = Buffer(vscode, folder, "import jax\n")
    assert await buffer.open() == []
    for _ in range(3):  # typing: only the last version is analysed and published
        buffer.change(PRINT_BEFORE)
    assert [d.code for d in await buffer.diagnostics()] == ["JF601"]
    assert buffer.version == 4


@lsp_test
async def test_project_settings_are_read(vscode: LanguageClient, tmp_path_factory):
    project = tmp_path_factory.mktemp("project")
    (project / "pyproject.toml").write_text('[tool.jaxfix]\nignore = ["print-in-traced"]\n')
    (project / "src").mkdir()
    assert [d.code for d in await Buffer(vscode, project / "src", MIXED).open()] == ["JF202"]
    (project / "pyproject.toml").write_text('[tool.jaxfix]\nexclude = ["generated/"]\n')  # read at each analysis
    (project / "generated").mkdir()
    assert await Buffer(vscode, project / "generated", MIXED).open() == []
    assert len(await Buffer(vscode, project / "src", MIXED).open()) == 2


@lsp_test
async def test_per_file_ignores_options_and_ignore_file_apply_in_the_editor(vscode: LanguageClient, tmp_path_factory):
    project = tmp_path_factory.mktemp("per_file")
    (project / "pyproject.toml").write_text('[tool.jaxfix.per-file-ignores]\n"scripts/*.py" = ["JF601"]\n')
    (project / "scripts").mkdir()
    (project / "src").mkdir()
    assert [d.code for d in await Buffer(vscode, project / "scripts", MIXED).open()] == ["JF202"]
    assert len(await Buffer(vscode, project / "src", MIXED).open()) == 2
    assert await Buffer(vscode, project / "src", "# jaxfix: ignore-file\n" + MIXED).open() == []


@lsp_test
async def test_bad_settings_are_shown_once_and_nothing_is_reported(vscode: LanguageClient, tmp_path_factory):
    project = tmp_path_factory.mktemp("broken")
    (project / "pyproject.toml").write_text('[tool.jaxfix]\nselect = ["JF999"]\n')
    buffer = Buffer(vscode, project, PRINT_BEFORE)
    assert await buffer.open() == []
    buffer.change(PRINT_BEFORE + "\n")
    assert await buffer.diagnostics() == []
    shown = [m for m in vscode.messages if "JF999" in m.message]
    assert len(shown) == 1 and shown[0].type == types.MessageType.Error
    assert shown[0].message.startswith("jaxfix: 'JF999' matches no codemod")


@lsp_test
async def test_syntax_error_gives_no_diagnostic_and_the_server_goes_on(vscode: LanguageClient, folder: Path):
    buffer = Buffer(vscode, folder, PRINT_BEFORE.replace("def squash(x):", "def squash(x:"))
    assert await buffer.open() == []
    assert await buffer.actions(7) == []
    buffer.change(PRINT_BEFORE)
    assert [d.code for d in await buffer.diagnostics()] == ["JF601"]


@lsp_test
async def test_columns_count_utf16_units(vscode: LanguageClient, folder: Path):
    """An emoji is one character but two UTF-16 units: the range and the edit must count units."""
    text = PRINT_BEFORE.replace('print("y", y)', 'print("🙂 y", y)')
    buffer = Buffer(vscode, folder, text)
    (diagnostic,) = await buffer.open()
    line = text.splitlines()[7]
    assert diagnostic.range.end.character == line.index("  #") + 1
    fixed = buffer.apply(by_title(await buffer.actions(7), "JF601:"))
    assert fixed == PRINT_AFTER.replace('jax.debug.print("y {}", y)', 'jax.debug.print("🙂 y {}", y)')


# ---- code actions ------------------------------------------------------------------------------------------


@lsp_test
async def test_quick_fix_applies_the_fix(either: LanguageClient, folder: Path):
    buffer = Buffer(either, folder, PRINT_BEFORE)
    await buffer.open()
    action = by_title(await buffer.actions(7), "JF601:")
    assert action.kind == types.CodeActionKind.QuickFix and action.is_preferred
    assert "unsafe" not in action.title
    assert buffer.apply(action) == PRINT_AFTER
    assert buffer.path.read_text() == PRINT_BEFORE  # the client applies edits; the server writes nothing


@lsp_test
async def test_each_fix_applies_alone_and_unsafe_ones_say_so(vscode: LanguageClient, folder: Path):
    buffer = Buffer(vscode, folder, MIXED)
    assert [d.code for d in await buffer.open()] == ["JF601", "JF202"]
    safe = by_title(await buffer.actions(6), "JF601:")
    assert buffer.apply(safe) == MIXED_PRINT_FIXED
    unsafe = by_title(await buffer.actions(7), "JF202:")
    assert unsafe.title.endswith("(unsafe)") and not unsafe.is_preferred
    assert buffer.apply(unsafe) == MIXED_IF_FIXED


@lsp_test
async def test_fix_all_applies_the_safe_fixes_only(either: LanguageClient, folder: Path):
    buffer = Buffer(either, folder, MIXED)
    await buffer.open()
    (action,) = await buffer.actions(0, only=[types.CodeActionKind.SourceFixAll])
    assert action.kind == "source.fixAll.jaxfix"
    assert buffer.apply(action) == MIXED_PRINT_FIXED
    buffer.change(MIXED_PRINT_FIXED)
    assert [d.code for d in await buffer.diagnostics()] == ["JF202"]
    assert await buffer.actions(0, only=[types.CodeActionKind.SourceFixAll]) == []  # no safe fix left


@lsp_test
async def test_suppress_on_this_line(vscode: LanguageClient, folder: Path):
    buffer = Buffer(vscode, folder, PRINT_BEFORE)
    await buffer.open()
    action = by_title(await buffer.actions(7), "Suppress JF601")
    fixed = buffer.apply(action)
    assert fixed == PRINT_BEFORE.replace("at trace time\n", "at trace time  # noqa: JF601\n")
    buffer.change(fixed)
    assert await buffer.diagnostics() == []


@lsp_test
async def test_suppress_extends_an_existing_noqa(vscode: LanguageClient, folder: Path):
    text = MIXED.replace("    if x > 0:", "    if x > 0:  # noqa: JF101")
    buffer = Buffer(vscode, folder, text)
    await buffer.open()
    fixed = buffer.apply(by_title(await buffer.actions(7), "Suppress JF202"))
    assert fixed == MIXED.replace("    if x > 0:", "    if x > 0:  # noqa: JF101, JF202")


@lsp_test
async def test_only_quick_fixes_when_asked(vscode: LanguageClient, folder: Path):
    buffer = Buffer(vscode, folder, MIXED)
    await buffer.open()
    kinds = {a.kind for a in await buffer.actions(6, only=[types.CodeActionKind.QuickFix])}
    assert kinds == {types.CodeActionKind.QuickFix}
    assert await buffer.actions(3) != [] and await buffer.actions(3, only=[types.CodeActionKind.QuickFix]) == []


@lsp_test
async def test_stale_resolve_gives_no_edit(vscode: LanguageClient, folder: Path):
    buffer = Buffer(vscode, folder, PRINT_BEFORE)
    await buffer.open()
    found = await vscode.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=buffer.uri),
            range=types.Range(start=types.Position(line=7, character=0), end=types.Position(line=7, character=0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    lazy = next(a for a in found if a.title.startswith("JF601:"))
    buffer.change(PRINT_BEFORE + "\n")
    await buffer.diagnostics()
    assert (await vscode.code_action_resolve_async(lazy)).edit is None


@pytest.mark.parametrize("missing", ["pygls", "pygls.lsp.server"])  # not installed, or pygls 1.x
def test_missing_pygls_is_one_line_and_exit_2(monkeypatch, missing):
    monkeypatch.setitem(sys.modules, missing, None)
    result = CliRunner().invoke(app, ["lsp"])
    assert result.exit_code == 2
    assert result.output.strip() == "jaxfix: error: the language server needs pygls 2 or later: pip install 'jaxfix[lsp]'"
