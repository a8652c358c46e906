"""How long an editor waits on `jaxfix lsp`: from opening a file to its diagnostics, for the code action menu
(the analysis is reused), and for resolving a quick fix and fix-all (the edits are computed then).

    python benchmarks/lsp_latency.py [FILE ...]      (default: two corpus files)

The server runs as a subprocess, as an editor starts it; the client has VS Code's capabilities (it resolves
code actions lazily). Each file is opened once, right after `initialize` (a fresh server, so no cache helps:
the first number includes the server's warm-up imports, about 0.5 s, as an editor opening a file at start-up
pays them); prints a Markdown table.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pytest_lsp import client_capabilities

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = [ROOT / "corpus/print_in_traced/jit_value/before.py", ROOT / "corpus/loop_to_scan/rnn/before.py"]


async def measure(path: Path) -> tuple[int, int, float, float, float, float]:
    client = LanguageClient("lsp-latency", "1")
    published: asyncio.Queue = asyncio.Queue()
    client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(lambda params: published.put_nowait(params))
    await client.start_io(sys.executable, "-m", "jaxfix", "lsp")
    await client.initialize_async(types.InitializeParams(capabilities=client_capabilities("visual-studio-code")))
    client.initialized(types.InitializedParams())
    text, uri = path.read_text(), path.resolve().as_uri()
    start = time.perf_counter()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    diagnostics = (await published.get()).diagnostics
    to_diagnostics = time.perf_counter() - start
    line = diagnostics[0].range.start.line if diagnostics else 0
    start = time.perf_counter()
    offered = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line, character=0)),
            context=types.CodeActionContext(diagnostics=diagnostics),
        )
    ) or []
    to_menu = time.perf_counter() - start
    timings = []
    for wanted in (lambda a: a.kind == types.CodeActionKind.QuickFix and not a.title.startswith("Suppress"), lambda a: a.kind == "source.fixAll.jaxfix"):
        action = next((a for a in offered if wanted(a)), None)
        start = time.perf_counter()
        if action is not None:
            await client.code_action_resolve_async(action)
        timings.append(time.perf_counter() - start if action is not None else float("nan"))
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return len(text.splitlines()), len(diagnostics), to_diagnostics, to_menu, *timings


def main() -> None:
    files = [Path(p) for p in sys.argv[1:]] or DEFAULT
    print("| file | lines | findings | open → diagnostics s | code action menu s | resolve a quick fix s | resolve fix-all s |")
    print("|---|---|---|---|---|---|---|")
    for path in files:
        lines, findings, *seconds = asyncio.run(measure(path))
        print(f"| {path.name} | {lines} | {findings} | " + " | ".join(f"{s:.3f}" for s in seconds) + " |")


if __name__ == "__main__":
    main()
