"""`jaxfix lsp`: the language server that gives an editor jaxfix's findings and quick fixes. Needs pygls (the
`jaxfix[lsp]` extra); nothing else in jaxfix imports this package.

One idea per module: `server.py` wires the protocol (debouncing, the worker thread); `documents.py` analyses a
buffer with its project's settings; `diagnostics.py` and `actions.py` turn the engine's results into LSP
diagnostics and code actions; `edits.py` turns a rewritten text into minimal text edits; `positions.py` maps
offsets to the client's line/column units; `noqa.py` writes suppression comments.
"""
