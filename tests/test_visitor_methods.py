"""jaxfix.analysis.visitor_methods.get_visitors gives LibCST's own `get_visitors` mapping (the same names, in the
same order, with equal methods) for LibCST's batchable metadata providers and for visitors that define their
methods in unusual ways."""

from __future__ import annotations

import functools

import libcst as cst
import pytest
from libcst.metadata import (
    ExpressionContextProvider,
    ParentNodeProvider,
    QualifiedNameProvider,
    ScopeProvider,
)

from jaxfix.analysis import visitor_methods
from jaxfix.analysis.visitor_methods import _LIBCST_GET_VISITORS, get_visitors


def _same(visitor: cst.BatchableCSTVisitor) -> None:
    ours = get_visitors(visitor)  # first: LibCST's would run the cached_property, which then answers for ours
    expected = _LIBCST_GET_VISITORS(visitor)
    assert list(ours) == list(expected)
    assert all(ours[name] == method for name, method in expected.items())


class _Unusual(cst.BatchableCSTVisitor):
    calls = 0

    def visit_Name(self, node: cst.Name) -> None:
        pass

    def leave_Call_func(self, node: cst.Call) -> None:
        pass

    @classmethod
    def visit_Attribute(cls, node: cst.Attribute) -> None:
        pass

    @staticmethod
    def visit_Integer(node: cst.Integer) -> None:
        pass

    @property
    def visit_Float(self):
        type(self).calls += 1
        return self.visit_Name

    @functools.cached_property
    def leave_Float(self):
        return self.leave_Call_func

    def helper(self) -> None:
        pass

    renamed = visit_Name  # selected by its function's name, under its own
    visit_Tuple = helper  # not selected: the function is `helper`

    @property
    def visit_List(self):
        raise AttributeError("absent")


@pytest.mark.parametrize(
    "make", [ScopeProvider, ExpressionContextProvider, ParentNodeProvider, QualifiedNameProvider, _Unusual]
)
def test_same_methods_as_libcst(make, monkeypatch):
    _same(make())
    _same(make())  # from the cache
    monkeypatch.setattr(visitor_methods, "_LIBCST_GET_VISITORS", None)  # a fresh instance never needs LibCST's
    get_visitors(make())


def test_properties_are_evaluated_per_instance():
    visitor = _Unusual()
    before = _Unusual.calls
    assert get_visitors(visitor)["visit_Float"] == visitor.visit_Name
    assert _Unusual.calls == before + 1
    assert "leave_Float" in visitor.__dict__  # the cached_property ran, as getmembers runs it


def test_methods_in_the_instance_dict():
    visitor = _Unusual()
    visitor.visit_Name = visitor.helper  # shadows the class's: `helper`, not selected
    visitor.other = 3
    _same(visitor)
    assert "leave_Float" in get_visitors(visitor)
    assert "visit_Name" not in get_visitors(visitor)
    visitor.extra = visitor.leave_Call_func  # a selected method of its own: LibCST's lookup answers
    _same(visitor)
    assert "extra" in get_visitors(visitor)


def test_a_method_added_to_the_class_later():
    class Later(cst.BatchableCSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            pass

    _same(Later())

    def leave_Name(self, node: cst.Name) -> None:
        pass

    Later.leave_Name = leave_Name
    _same(Later())
    assert "leave_Name" in get_visitors(Later())


def test_installed_for_the_providers():
    visitor_methods.install()
    assert ScopeProvider.get_visitors is get_visitors
    assert list(ScopeProvider().get_visitors()) == ["visit_Module"]
