"""Codemod.get_visitors, which finds the visit_/leave_ methods once per class instead of LibCST's introspection of
every instance, gives the traversal exactly the methods LibCST's own would."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from jaxfix import registry
from jaxfix.analysis.context import ModuleContext
from jaxfix.codemod import Codemod


class _Probe(Codemod):
    code, name, summary, fix_safety = "JF000", "probe", "a probe", None

    def visit_Call(self, node: cst.Call) -> None:
        pass

    def leave_Name(self, node: cst.Name) -> None:
        pass


class _Child(_Probe):
    def visit_Call(self, node: cst.Call) -> None:  # overridden: the child's method is the one called
        pass


@pytest.mark.parametrize("codemod", [*registry.all_codemods(), _Probe, _Child], ids=lambda c: c.__name__)
def test_get_visitors_equals_libcsts(codemod) -> None:
    visitor = codemod(ModuleContext(MetadataWrapper(cst.parse_module("import jax\n"))))
    ours = visitor.get_visitors()
    libcsts = cst.BatchableCSTVisitor.get_visitors(visitor)
    assert ours.keys() == libcsts.keys()
    assert all(ours[name].__func__ is libcsts[name].__func__ and ours[name].__self__ is visitor for name in ours)


def test_the_probe_has_its_own_methods_only() -> None:
    visitor = _Child(ModuleContext(MetadataWrapper(cst.parse_module(""))))
    assert set(visitor.get_visitors()) == {"visit_Call", "leave_Name"}
    assert visitor.get_visitors()["visit_Call"].__func__ is _Child.visit_Call
