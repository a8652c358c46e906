"""The language server's pure parts, without a server: minimal text edits, positions in each encoding, and
where a suppression comment goes."""

from __future__ import annotations

import random

import pytest
from lsprotocol import types

from jaxfix.diagnostics import Diagnostic, Position
from jaxfix.server.edits import differences
from jaxfix.server.noqa import suppressed
from jaxfix.server.positions import Lines


def _apply(text: str, edits) -> str:
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.replacement + text[edit.end :]
    return text


def test_edits_touch_only_what_changed():
    old = "import jax\n\ndef f(x):\n    print(x)\n    return x\n"
    new = "import jax\nimport jax.numpy as jnp\n\ndef f(x):\n    jax.debug.print(x)\n    return x\n"
    edits = differences(old, new)
    assert _apply(old, edits) == new
    assert [(old[e.start : e.end], e.replacement) for e in edits] == [("", "import jax.numpy as jnp\n"), ("", "jax.debug.")]


@pytest.mark.parametrize("seed", range(40))
def test_edits_reproduce_any_rewrite(seed):
    rng = random.Random(seed)
    pieces = ["a", "b", "\n", "\r\n", "  ", "é", "🙂", "x = 1\n"]
    old = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 30)))
    new = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 30)))
    edits = differences(old, new)
    assert _apply(old, edits) == new
    assert all(a.end <= b.start for a, b in zip(edits, edits[1:]))


def test_positions_count_the_clients_units():
    text = "a = '🙂é'\r\nb = 1\n"
    end_of_string = text.index("\r")
    assert Lines(text, types.PositionEncodingKind.Utf16).at_offset(end_of_string) == types.Position(line=0, character=9)
    assert Lines(text, types.PositionEncodingKind.Utf8).at_offset(end_of_string) == types.Position(line=0, character=12)
    assert Lines(text, types.PositionEncodingKind.Utf32).at_offset(end_of_string) == types.Position(line=0, character=8)
    assert Lines(text).at_offset(text.index("b")) == types.Position(line=1, character=0)
    assert Lines(text).at(Position(2, 3)) == types.Position(line=1, character=2)  # the engine counts from 1
    assert Lines(text).at(Position(9, 1)).line == 2  # clamped to the text


def _finding(first: int, last: int, code: str = "JF601") -> Diagnostic:
    return Diagnostic(code, "print-in-traced", "m", Position(first, 5), Position(last, 6))


def test_noqa_goes_at_the_end_of_the_first_line():
    text = "def f(x):\n    print(x)   \n    return x\n"
    assert suppressed(text, _finding(2, 2)) == (2, "def f(x):\n    print(x)  # noqa: JF601\n    return x\n")


def test_noqa_extends_existing_codes():
    assert suppressed("x = f(y)  # noqa: JF101\n", _finding(1, 1))[1] == "x = f(y)  # noqa: JF101, JF601\n"
    assert suppressed("x = f(y)  # jaxfix: ignore[JF101]\n", _finding(1, 1))[1] == "x = f(y)  # jaxfix: ignore[JF101, JF601]\n"
    assert suppressed("x = f(y)  # why\n", _finding(1, 1))[1] == "x = f(y)  # why  # noqa: JF601\n"


def test_noqa_never_lands_in_a_string_or_after_a_backslash():
    in_string = 'x = f("""a\nb""", y)\n'
    assert suppressed(in_string, _finding(1, 2)) == (2, 'x = f("""a\nb""", y)  # noqa: JF601\n')
    continued = "x = 1 + \\\n    f(y)\n"
    assert suppressed(continued, _finding(1, 2)) == (2, "x = 1 + \\\n    f(y)  # noqa: JF601\n")
    assert suppressed('x = f("""a\nb""" \\\n)\n', _finding(1, 2)) is None


def test_noqa_in_brackets_and_without_a_final_newline():
    assert suppressed("x = f(\n    y,\n)", _finding(1, 3)) == (1, "x = f(  # noqa: JF601\n    y,\n)")
    assert suppressed("print(x)", _finding(1, 1)) == (1, "print(x)  # noqa: JF601")
