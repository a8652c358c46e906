"""`jaxfix lsp` on a notebook, end to end: the client opens a notebook document (LSP 3.17 notebook document sync)
as VS Code's Jupyter extension does, with one text document per cell; the server publishes findings on the cells
they are in, and a quick fix in one cell edits that cell only, with its IPython lines kept."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.test_lsp import apply_edits, by_title

lsp_test = pytest.mark.asyncio(loop_scope="module")
SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "jaxfix", "lsp"])
TIMEOUT_S = 60

CELLS = [
    (types.NotebookCellKind.Markup, "markdown", "# Activations\nA jitted function, timed."),
    (types.NotebookCellKind.Code, "python", "!pip install -q jax\nimport jax\nimport jax.numpy as jnp"),
    (
        types.NotebookCellKind.Code,
        "python",
        '@jax.jit\ndef activation(x):\n    y = jnp.tanh(x)\n    print("y", y)\n    return y\n\n%timeit activation(jnp.ones(3))',
    ),
    (types.NotebookCellKind.Code, "python", "def broken(:\n    pass"),
    (types.NotebookCellKind.Code, "python", "tree = jax.tree_map(lambda v: v + 1, {'a': 1})"),
]


@pytest_lsp.fixture(config=SERVER, scope="module", params=["visual-studio-code", "bare"])
async def client(lsp_client: LanguageClient, request):
    capabilities = types.ClientCapabilities() if request.param == "bare" else client_capabilities(request.param)
    await lsp_client.initialize_session(types.InitializeParams(capabilities=capabilities))
    yield
    await lsp_client.shutdown_session()


class NotebookBuffer:
    """A notebook the client has open: its cells' URIs and texts, kept in step with what it sends."""

    counter = 0

    def __init__(self, client: LanguageClient, folder: Path) -> None:
        NotebookBuffer.counter += 1
        self.client = client
        path = folder / f"notebook{NotebookBuffer.counter}.ipynb"
        path.write_text("{}")  # the server reads the cells from the client, never from the file
        self.uri = path.as_uri()
        self.cell_uris = [f"vscode-notebook-cell:{path}#cell{i}" for i in range(len(CELLS))]
        self.texts = [text for _, _, text in CELLS]
        self.versions = [1] * len(CELLS)

    async def open(self) -> dict[str, list[types.Diagnostic]]:
        for uri in self.cell_uris:
            self.client.diagnostics.pop(uri, None)
        self.client.notebook_document_did_open(
            types.DidOpenNotebookDocumentParams(
                notebook_document=types.NotebookDocument(
                    uri=self.uri,
                    notebook_type="jupyter-notebook",
                    version=1,
                    cells=[types.NotebookCell(kind=kind, document=uri) for (kind, _, _), uri in zip(CELLS, self.cell_uris)],
                ),
                cell_text_documents=[
                    types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)
                    for (_, language, text), uri in zip(CELLS, self.cell_uris)
                ],
            )
        )

        async def published() -> None:
            while not all(uri in self.client.diagnostics for uri in self.cell_uris):
                await asyncio.sleep(0.02)

        await asyncio.wait_for(published(), TIMEOUT_S)
        return {uri: list(self.client.diagnostics[uri]) for uri in self.cell_uris}

    async def actions(self, cell: int, line: int) -> list[types.CodeAction]:
        uri = self.cell_uris[cell]
        on_line = [d for d in self.client.diagnostics.get(uri, []) if d.range.start.line <= line <= d.range.end.line]
        found = await self.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line, character=0)),
                context=types.CodeActionContext(diagnostics=on_line),
            )
        )
        resolved = []
        for action in found or []:
            if action.edit is None and action.data is not None:
                action = await self.client.code_action_resolve_async(action)
            resolved.append(action)
        return resolved

    def apply(self, action: types.CodeAction) -> list[str]:
        """The cells' texts after the action's edit."""
        texts = list(self.texts)
        edit = action.edit
        assert edit is not None, f"{action.title!r} has no edit"
        if edit.document_changes is not None:
            pairs = [(change.text_document.uri, change.edits, change.text_document.version) for change in edit.document_changes]
        else:
            pairs = [(uri, edits, None) for uri, edits in edit.changes.items()]
        for uri, edits, version in pairs:
            index = self.cell_uris.index(uri)
            assert version in (None, self.versions[index])
            texts[index] = apply_edits(texts[index], edits)
        return texts


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("lsp_notebook")


@lsp_test
async def test_findings_are_published_on_their_cells(client: LanguageClient, folder: Path):
    found = await NotebookBuffer(client, folder).open()
    by_cell = [[(d.code, d.range.start.line, d.range.start.character) for d in found[uri]] for uri in found]
    assert by_cell == [[], [], [("JF601", 3, 4)], [], [("JF901", 0, 7)]]


@lsp_test
async def test_quick_fix_edits_its_cell_only_and_keeps_the_magic(client: LanguageClient, folder: Path):
    buffer = NotebookBuffer(client, folder)
    await buffer.open()
    action = by_title(await buffer.actions(2, 3), "JF601")
    texts = buffer.apply(action)
    assert texts[2] == buffer.texts[2].replace('print("y", y)', 'jax.debug.print("y {}", y)')
    assert texts[2].endswith("\n%timeit activation(jnp.ones(3))")
    assert texts[:2] + texts[3:] == buffer.texts[:2] + buffer.texts[3:]


@lsp_test
async def test_suppress_names_the_cell_line(client: LanguageClient, folder: Path):
    buffer = NotebookBuffer(client, folder)
    await buffer.open()
    action = by_title(await buffer.actions(4, 0), "Suppress JF901")
    assert action.title == "Suppress JF901 on line 1 of cell 5 (# noqa)"
    texts = buffer.apply(action)
    assert texts[4] == buffer.texts[4] + "  # noqa: JF901"
    assert texts[:4] == buffer.texts[:4]


@lsp_test
async def test_fix_all_edits_each_changed_cell(client: LanguageClient, folder: Path):
    buffer = NotebookBuffer(client, folder)
    await buffer.open()
    actions = await buffer.actions(2, 0)
    texts = buffer.apply(by_title(actions, "jaxfix: fix all"))
    assert "jax.debug.print" in texts[2] and "jax.tree.map" in texts[4]
    assert texts[3] == buffer.texts[3] and texts[1] == buffer.texts[1]


@lsp_test
async def test_no_action_in_a_cell_that_does_not_parse(client: LanguageClient, folder: Path):
    buffer = NotebookBuffer(client, folder)
    await buffer.open()
    assert [a.title for a in await buffer.actions(3, 0) if not a.title.startswith("jaxfix: fix all")] == []


@lsp_test
async def test_an_edit_in_one_cell_changes_the_findings_of_another(client: LanguageClient, folder: Path):
    """The cells are one module: without the jit of cell 3, the print in it is no longer traced; and an edit
    that fixes cell 5 clears its finding."""
    buffer = NotebookBuffer(client, folder)
    await buffer.open()
    for uri in buffer.cell_uris:
        client.diagnostics.pop(uri, None)
    new_cell_3 = buffer.texts[2].replace("@jax.jit\n", "")
    new_cell_5 = buffer.texts[4].replace("jax.tree_map", "jax.tree.map")
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(uri=buffer.uri, version=2),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    text_content=[
                        types.NotebookDocumentCellContentChanges(
                            document=types.VersionedTextDocumentIdentifier(uri=buffer.cell_uris[index], version=2),
                            changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                        )
                        for index, text in ((2, new_cell_3), (4, new_cell_5))
                    ]
                )
            ),
        )
    )

    async def published() -> None:
        while not all(uri in client.diagnostics for uri in buffer.cell_uris):
            await asyncio.sleep(0.02)

    await asyncio.wait_for(published(), TIMEOUT_S)
    assert [list(client.diagnostics[uri]) for uri in buffer.cell_uris] == [[]] * 5
