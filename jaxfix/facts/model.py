"""What an analysis of one module may ask of the model of that module, as a typing Protocol.

`jaxfix.analysis.context.ModuleContext` builds each analysis on first use, so it imports them all; typed against
this Protocol instead, no analysis imports the module that builds it, and the analyses form no import cycle.
Typing only: it imports nothing of jaxfix, and the analyses it names are typed `Any` for that reason."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # libcst, not jaxfix: the model's types, never imported at run time from here
    import libcst as cst
    from libcst.metadata import MetadataWrapper


class ModuleModel(Protocol):
    """The shared analyses of one parsed module (`ModuleContext`), each computed on first use (attributes here,
    `cached_property`s there)."""

    wrapper: MetadataWrapper
    module: cst.Module
    project: Any  # the module's `ModuleFacts` from the project index
    explaining: bool  # set by `jaxfix explain`: codemods record why they leave recognised places alone
    names: Any  # names.JaxNames
    screen: Any  # screen.Screen of the same text
    binder: Any  # facts.binder.Binder of the same text (None where Python rejects it)
    bridge: Any  # edit.bridge.Bridge between the module and the screen's `ast`
    positions: Any  # PositionProvider's values
    parents: Any  # each node's parent
    qualified_defs: dict
    traced: Any  # traced.TracedAnalysis
    arrays: Any  # arrays.ArrayAnalysis
    shapes: Any  # shapes.ShapeAnalysis
    carry: Any  # carry.CarryAnalysis
    dataflow: Any  # dataflow.Dataflow
    fresh_names: Any  # codegen.FreshNames
    predicates: Any  # predicates.PredicateAnalysis

    def code_for(self, node: cst.CSTNode) -> str: ...

    def source_order(self, node: cst.CSTNode) -> tuple[int, int]: ...
