"""The CST pieces of JF301's fix: the loop body's comments kept (the axes tuple and a row's name are facts/batches.py's
`tuple_text` and `row_names`)."""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.metadata import children


def keep_body_comments(loop: cst.For, spec, pieces: list, moved: list) -> list:
    """`pieces` (the local function if any, then the vmap statement) with `moved` as the first one's leading
    lines and the loop body's comments kept: where a local function holds the body's statements (with their
    own comments), the comments after its last statement end the function as they ended the loop; where the body
    becomes a single call, each of its comment lines and end-of-line comments goes above the new statement."""
    body = loop.body
    if spec.function is not None:
        pieces[0] = pieces[0].with_changes(leading_lines=moved)
        if isinstance(body, cst.IndentedBlock) and body.footer:
            pieces[0] = pieces[0].with_changes(body=pieces[0].body.with_changes(footer=body.footer))
        return pieces
    comments = [
        cst.EmptyLine(comment=node.comment)
        for node in _in_order(body)
        if isinstance(node, (cst.EmptyLine, cst.TrailingWhitespace)) and node is not body.header and node.comment
    ]
    pieces[0] = pieces[0].with_changes(leading_lines=[*moved, *comments])
    return pieces


def _in_order(node: cst.CSTNode):
    """Every node under `node` in the order of the source."""
    yield node
    for child in children(node):
        yield from _in_order(child)
