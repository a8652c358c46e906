"""fastnodes gives LibCST's own answers: isinstance and issubclass, identity hashing and equality, the parsed
tree, and validation of nodes built outside the parser."""

from __future__ import annotations

import abc
from pathlib import Path

import libcst as cst
import pytest

from jaxfix.analysis import fastnodes
from jaxfix.analysis.syntax import walk

SOURCE = (Path(__file__).resolve().parent.parent / "jaxfix" / "engine.py").read_text()


def test_isinstance_and_issubclass_answer_as_abcmeta_does():
    fastnodes.install()
    classes = fastnodes._node_classes()
    assert any(type(kind) is fastnodes._PlainChecks for kind in classes)
    samples = {type(node): node for node in walk(fastnodes.parse_module(SOURCE))}
    for node in samples.values():
        for kind in classes:
            assert isinstance(node, kind) == abc.ABCMeta.__instancecheck__(kind, node), (type(node), kind)
    for kind in samples:
        for other in classes:
            assert issubclass(kind, other) == abc.ABCMeta.__subclasscheck__(other, kind), (kind, other)


def test_a_class_with_a_virtual_subclass_keeps_abcmeta():
    class Registered(cst.BaseExpression, abc.ABC):
        pass

    class Outside:
        pass

    Registered.register(Outside)
    assert fastnodes._has_virtual_subclasses(Registered)
    assert not fastnodes._has_virtual_subclasses(cst.Name)


def test_nodes_hash_and_compare_by_identity():
    fastnodes.install()
    first, second = cst.Name("x"), cst.Name("x")
    assert first == first and first != second and first != "x"
    assert len({first, second, first}) == 2
    assert first.deep_equals(second)


def test_parse_gives_the_tree_libcst_parses():
    fast = fastnodes.parse_module(SOURCE)
    assert fast.code == SOURCE
    assert fast.deep_equals(cst.parse_module(SOURCE))


def test_nodes_built_outside_the_parser_are_still_validated():
    fastnodes.parse_module("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("x", lpar=[cst.LeftParen()])


def test_a_failed_parse_leaves_validation_on():
    with pytest.raises(cst.ParserSyntaxError):
        fastnodes.parse_module("def (:\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")
