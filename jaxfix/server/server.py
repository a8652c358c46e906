"""The protocol wiring: which LSP messages jaxfix answers, debouncing, and the worker thread.

Diagnostics are published when a document opens or is saved, and 0.3 s after the last change while the user
types. Analyses run one at a time on a worker thread, so the server keeps reading messages meanwhile; a result
for a text that has changed since is dropped rather than published."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from dataclasses import dataclass
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, TypeVar
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from jaxfix import __version__
from jaxfix.server import actions, notebooks
from jaxfix.server.diagnostics import lsp_diagnostic
from jaxfix.server.documents import Documents, SettingsError, project
from jaxfix.server.positions import Lines

DEBOUNCE_S = 0.3
PYTHON_SUFFIXES = (".py", ".pyi")

logger = logging.getLogger(__name__)
T = TypeVar("T")


class JaxfixServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "jaxfix",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[
                    types.NotebookDocumentFilterWithCells(
                        cells=[types.NotebookCellLanguage(language="python")], notebook="jupyter-notebook"
                    )
                ],
                save=True,
            ),
        )
        self.documents = Documents()
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jaxfix-analysis")
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.shown: set[str] = set()  # settings problems already shown to the user

    async def in_worker(self, function: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.worker, function, *args)

    def open_document(self, uri: str) -> TextDocument | None:
        """The document if the client has it open and it is Python."""
        document = self.workspace.text_documents.get(unquote(uri))
        if document is None:
            return None
        if document.language_id not in (None, "", "python") and not uri.endswith(PYTHON_SUFFIXES):
            return None
        return document

    def show_once(self, message: str) -> None:
        if message not in self.shown:
            self.shown.add(message)
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=f"jaxfix: {message}"))

    def log(self, message: str) -> None:
        self.window_log_message(types.LogMessageParams(type=types.MessageType.Info, message=f"jaxfix: {message}"))

    def encoding(self) -> str:
        return self.workspace.position_encoding or types.PositionEncodingKind.Utf16

    # ---- diagnostics ------------------------------------------------------------------------------------

    def schedule(self, uri: str, delay: float) -> None:
        """Analyse and publish `uri` after `delay` seconds, replacing what was scheduled for it."""
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        self.pending[uri] = asyncio.ensure_future(self.publish(uri, delay))

    async def publish(self, uri: str, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        if self.workspace.get_notebook_document(notebook_uri=uri) is not None:
            await self.publish_notebook(uri)
            return
        document = self.open_document(uri)
        if document is None:
            return
        version, text = document.version, document.source
        try:
            analysis = await self.in_worker(self.documents.analysis, uri, path_of(uri), text)
        except SettingsError as error:
            self.show_once(str(error))
            analysis = None
        except Exception as error:  # a bug in jaxfix: say so in the log rather than go quiet
            logger.exception("analysing %s", uri)
            self.log(f"internal error on {uri}: {type(error).__name__}: {error}")
            return
        current = self.open_document(uri)
        if current is None or current.version != version or current.source != text:
            return  # edited or closed meanwhile: a newer analysis is scheduled, or none is wanted
        if analysis is not None and analysis.error is not None:
            self.log(f"{path_of(uri) or uri} not checked: {analysis.error}")
        for error in analysis.internal_errors if analysis is not None else ():
            self.log(f"{path_of(uri) or uri}: internal error: {error}")
        lines = Lines(text, self.encoding())
        diagnostics = [lsp_diagnostic(d, lines) for d in analysis.diagnostics] if analysis is not None else []
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))

    async def publish_notebook(self, uri: str) -> None:
        """Analyse a notebook's code cells as one module and publish each cell's findings on that cell."""
        snapshot = notebooks.NotebookSnapshot.of(self.workspace, uri)
        if snapshot is None:
            return
        module_text, cells = snapshot.module()
        try:
            analysis = await self.in_worker(self.documents.analysis, uri, path_of(uri), module_text)
        except SettingsError as error:
            self.show_once(str(error))
            analysis = None
        except Exception as error:
            logger.exception("analysing %s", uri)
            self.log(f"internal error on {uri}: {type(error).__name__}: {error}")
            return
        current = notebooks.NotebookSnapshot.of(self.workspace, uri)
        if current is None or current != snapshot:
            return  # edited or closed meanwhile
        if analysis is not None and analysis.error is not None:
            self.log(f"{path_of(uri) or uri} not checked: {analysis.error}")
        for note in snapshot.book().notes():  # cells left out of the analysis (they do not parse)
            self.log(f"{path_of(uri) or uri}: {note}")
        found = notebooks.per_cell(snapshot, cells, analysis.diagnostics if analysis is not None else [])
        for cell in snapshot.cells:
            lines = Lines(cell.text, self.encoding())
            published = [lsp_diagnostic(d, lines) for d in found[cell.uri]]
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=cell.uri, diagnostics=published, version=cell.version)
            )

    def close_notebook(self, uri: str, cell_uris: list[str]) -> None:
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        self.worker.submit(self.documents.forget, uri)
        for cell_uri in cell_uris:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell_uri, diagnostics=[]))

    def close(self, uri: str) -> None:
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        self.worker.submit(self.documents.forget, uri)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    # ---- code actions -----------------------------------------------------------------------------------

    def target(self, snapshot: Snapshot) -> actions.Target:
        capabilities = self.client_capabilities
        code_action = capabilities.text_document.code_action if capabilities.text_document else None
        resolve = code_action.resolve_support if code_action else None
        edit = capabilities.workspace.workspace_edit if capabilities.workspace else None
        return actions.Target(
            uri=snapshot.uri,
            version=snapshot.version,
            path=str(path_of(snapshot.uri) or snapshot.uri),
            encoding=self.encoding(),
            versioned=bool(edit and edit.document_changes),
            lazy=bool(resolve and "edit" in resolve.properties),
        )

    def code_actions(self, params: types.CodeActionParams, snapshot: Snapshot) -> list[types.CodeAction]:
        """Runs on the worker thread."""
        if isinstance(snapshot, CellSnapshot):
            return self.cell_actions(params, snapshot)
        path = path_of(snapshot.uri)
        try:
            analysis = self.documents.analysis(snapshot.uri, path, snapshot.text)
            settings = project(path).settings
        except SettingsError:
            return []
        lines = (params.range.start.line, params.range.end.line)
        return actions.actions(analysis, settings, self.target(snapshot), lines, params.context.only, params.context.diagnostics)

    def cell_target(self, snapshot: CellSnapshot) -> actions.Target:
        target = self.target(Snapshot(snapshot.uri, snapshot.notebook.version, ""))
        return dataclasses.replace(target, notebook=notebooks.CellEdits(snapshot.notebook))

    def cell_actions(self, params: types.CodeActionParams, snapshot: CellSnapshot) -> list[types.CodeAction]:
        """The actions on lines of one cell of a notebook, whose code cells are analysed as one module."""
        module_text, cells = snapshot.notebook.module()
        number = snapshot.notebook.cell_number(snapshot.uri)
        path = path_of(snapshot.notebook.uri)
        first = cells.module_line(number, params.range.start.line + 1) if number else None
        last = cells.module_line(number, params.range.end.line + 1) if number else None
        if first is None:
            return []
        try:
            analysis = self.documents.analysis(snapshot.notebook.uri, path, module_text)
            settings = project(path).settings
        except SettingsError:
            return []
        lines = (first - 1, (last or first) - 1)
        return actions.actions(analysis, settings, self.cell_target(snapshot), lines, params.context.only, params.context.diagnostics)

    def resolve(self, action: types.CodeAction, snapshot: Snapshot) -> types.CodeAction:
        """Runs on the worker thread: the edit of a lazily offered action, if the buffer is still the one it
        was offered for."""
        data = action.data if isinstance(action.data, dict) else {}
        if isinstance(snapshot, CellSnapshot):
            if data.get("version") != snapshot.notebook.version:
                return action
            path = path_of(snapshot.notebook.uri)
            try:
                analysis = self.documents.analysis(snapshot.notebook.uri, path, snapshot.notebook.module()[0])
                settings = project(path).settings
            except SettingsError:
                return action
            target = self.cell_target(snapshot)
        else:
            if data.get("version") != snapshot.version:
                return action
            path = path_of(snapshot.uri)
            try:
                analysis = self.documents.analysis(snapshot.uri, path, snapshot.text)
                settings = project(path).settings
            except SettingsError:
                return action
            target = self.target(snapshot)
        if data.get("fixAll"):
            return actions.with_fix_all(action, analysis, settings, target) or action
        diagnostic = actions.find(analysis, data.get("fix") or [])
        if diagnostic is None:
            return action
        return actions.with_fix(action, analysis, diagnostic, target) or action


@dataclass(frozen=True)
class Snapshot:
    """A document as it was when a request came, for the worker thread (the buffer may change meanwhile)."""

    uri: str
    version: int | None
    text: str

    @classmethod
    def of(cls, document: TextDocument) -> Snapshot:
        return cls(document.uri, document.version, document.source)


@dataclass(frozen=True)
class CellSnapshot:
    """A notebook cell's request: the cell and its notebook as they were when the request came."""

    uri: str
    notebook: notebooks.NotebookSnapshot


def snapshot_of(server: JaxfixServer, document: TextDocument) -> Snapshot | CellSnapshot:
    """A plain document's snapshot, or for a notebook's cell the snapshot of the cell within its notebook."""
    book = server.workspace.get_notebook_document(cell_uri=document.uri)
    if book is not None:
        found = notebooks.NotebookSnapshot.of(server.workspace, book.uri)
        if found is not None:
            return CellSnapshot(document.uri, found)
    return Snapshot.of(document)


def path_of(uri: str) -> Path | None:
    """The file a `file:` URI names; None for an unsaved buffer."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return Path(path) if path else None


def warm_up() -> None:
    """Import what the first analysis and the first fix would (the codemods, LibCST's codemod visitors that add
    imports): about 0.5 s that the user would otherwise wait for on the first file and the first quick fix."""
    import libcst.codemod.visitors  # noqa: F401

    from jaxfix import registry

    registry.all_codemods()


def build() -> JaxfixServer:
    server = JaxfixServer()

    @server.feature(types.INITIALIZED)
    def initialized(ls: JaxfixServer, params: types.InitializedParams) -> None:
        ls.worker.submit(warm_up)  # before the first document arrives, if the editor leaves it time

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: JaxfixServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: JaxfixServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, DEBOUNCE_S)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: JaxfixServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: JaxfixServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.close(params.text_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_did_open(ls: JaxfixServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_did_change(ls: JaxfixServer, params: types.DidChangeNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, DEBOUNCE_S)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_did_save(ls: JaxfixServer, params: types.DidSaveNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_did_close(ls: JaxfixServer, params: types.DidCloseNotebookDocumentParams) -> None:
        ls.close_notebook(params.notebook_document.uri, [c.uri for c in params.cell_text_documents])

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, actions.FIX_ALL], resolve_provider=True),
    )
    async def code_action(ls: JaxfixServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        document = ls.open_document(params.text_document.uri)
        if document is None:
            return None
        return await ls.in_worker(ls.code_actions, params, snapshot_of(ls, document)) or None

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def code_action_resolve(ls: JaxfixServer, action: types.CodeAction) -> types.CodeAction:
        uri = action.data.get("uri") if isinstance(action.data, dict) else None
        document = ls.open_document(uri) if isinstance(uri, str) else None
        if document is None:
            return action
        return await ls.in_worker(ls.resolve, action, snapshot_of(ls, document))

    return server


def serve() -> None:
    """Serve one client over stdin and stdout until it exits."""
    logging.basicConfig(level=logging.WARNING, format="jaxfix lsp: %(levelname)s: %(message)s")
    build().start_io()
