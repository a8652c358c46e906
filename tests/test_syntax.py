"""syntax.code_nodes: `walk` without the whitespace, comments and punctuation, under which no code lies; and
syntax.code_children: `children` without them, node for node, on every corpus file."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from pathlib import Path

import libcst as cst
import pytest

from jaxfix.analysis.metadata import children
from jaxfix.analysis.syntax import TRIVIA, code_children, code_nodes, walk

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _held(annotation) -> set:
    """The classes a field annotated `annotation` may hold (`Optional[Sequence[EmptyLine]]` → EmptyLine, None)."""
    arguments = typing.get_args(annotation)
    if arguments:
        return {kind for argument in arguments for kind in _held(argument)}
    return {annotation}


def _concrete(kind: type) -> set:
    """The node classes LibCST builds that are `kind` or derive from it (LibCST's `add_slots` leaves the class it
    copied among the subclasses: only the one libcst exports is built)."""
    found = {kind} if not inspect.isabstract(kind) and getattr(cst, kind.__name__, None) is kind else set()
    for sub in kind.__subclasses__():
        found |= _concrete(sub)
    return found


def test_trivia_holds_nothing_but_trivia():
    for kind in TRIVIA:
        for field in dataclasses.fields(kind):
            for held in _held(field.type):
                if held in (str, bool, type(None)):
                    continue
                assert issubclass(held, cst.CSTNode), (kind, field.name, held)
                assert _concrete(held) <= TRIVIA, (kind, field.name, held)


SOURCE = '''\
# a comment
import os.path as p; from a import (b, c)

@decorate(x=1)
def f(a: int = {1: [2]}, *args, **kwargs) -> "str":  # trailing
    g = lambda y: y[1:2, ...]

    s = {f"{a!r:>{w}}" for a in (1, 2) if a}
    return p.join(s, *args, **kwargs)[0]


class C(
    Base,
):
    x: int = 3
'''


def test_code_nodes_is_walk_without_the_trivia():
    module = cst.parse_module(SOURCE)
    everything = list(walk(module))
    assert {type(node) for node in everything} >= TRIVIA - {cst.RightCurlyBrace, cst.LeftCurlyBrace}
    assert list(code_nodes(module)) == [node for node in everything if type(node) not in TRIVIA]
    names = {node.value for node in everything if isinstance(node, cst.Name)}
    assert {node.value for node in code_nodes(module) if isinstance(node, cst.Name)} == names
    assert {"os", "path", "p", "b", "decorate", "x", "args", "y", "w", "join", "Base"} <= names


def test_code_children_are_children_without_the_trivia_on_every_kind_of_node():
    module = cst.parse_module(SOURCE)
    for node in walk(module):
        expected = [child for child in children(node) if type(child) not in TRIVIA]
        found = code_children(node)
        assert len(found) == len(expected) and all(a is b for a, b in zip(found, expected)), type(node).__name__
    call = cst.parse_expression("f((a), b ,c)")
    assert [type(n).__name__ for n in code_children(call)] == ["Name", "Arg", "Arg", "Arg"]


@pytest.mark.parametrize("path", sorted(CORPUS.rglob("*.py")), ids=lambda p: str(p.relative_to(CORPUS)))
def test_code_children_on_the_corpus(path):
    module = cst.parse_module(path.read_text(encoding="utf-8"))
    for node in walk(module):
        expected = [child for child in children(node) if type(child) not in TRIVIA]
        found = code_children(node)
        assert len(found) == len(expected) and all(a is b for a, b in zip(found, expected)), type(node).__name__
