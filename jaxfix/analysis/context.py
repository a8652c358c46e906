"""ModuleContext: the shared analyses of one parsed module, each computed on first use. The analyses are typed
against its Protocol, `jaxfix.facts.model.ModuleModel`, so that only this module imports them all and none imports
this one (no import cycle)."""

from __future__ import annotations

import ast
from functools import cached_property

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider


class ModuleContext:
    def __init__(self, wrapper: MetadataWrapper, tree: ast.Module | None = None, project=None, screen=None, facts=None) -> None:
        """`tree`: the `ast` of the same text, where the caller has it (positions are then computed per statement).
        `project`: the module's `ModuleFacts` from the project index (what other modules and library conventions
        say about its functions), if known. `screen`: the engine's Screen of the same text, whose indexes of the
        `ast` are built already. `facts`: the engine's FileFacts of the same text (its binder, shared)."""
        from jaxfix.analysis import expression_contexts, scopes, visitor_methods
        from jaxfix.analysis.project import EMPTY

        # The analyses ask `wrapper.resolve(ScopeProvider)` (which depends on ExpressionContextProvider): LibCST's
        # maps, built for less.
        scopes.install()
        expression_contexts.install()
        visitor_methods.install()
        self.wrapper = wrapper
        self.module: cst.Module = wrapper.module
        self._tree = tree
        self._screen = screen
        self._facts = facts
        self.project = project if project is not None else EMPTY
        # Set by `jaxfix explain`: codemods then record why they leave each recognised place alone
        # (`Codemod.decline`); off, declining costs nothing.
        self.explaining = False

    @cached_property
    def names(self):
        from jaxfix.analysis.names import JaxNames

        from jaxfix.edit.bridge import NameTwins

        binder = self.binder
        if binder is None:
            return JaxNames(None, None)
        twins = NameTwins(self.module, binder.tree, self.parents, binder.parents, lambda: self.bridge)
        return JaxNames(binder, twins)

    @cached_property
    def binder(self):
        """The screen's `ast` binder of the module (facts/binder.py), or None where Python rejects the text."""
        try:
            return self.screen.binder
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    @cached_property
    def bridge(self):
        """From LibCST nodes to the `ast` nodes of the same code (the screen's tree), by position."""
        from jaxfix.edit.bridge import Bridge

        return Bridge(self.module, self.screen.tree, self.positions)

    @cached_property
    def screen(self):
        """The engine's Screen of the module (its `ast` indexes), or one built here from the text."""
        from jaxfix.analysis.screen import Screen

        if self._screen is not None:
            return self._screen
        if self._facts is not None and self._facts.screen is not None:
            return self._facts.screen
        tree = self._tree
        if tree is None and self._facts is not None:  # one tree for the facts and the visits
            try:
                tree = self._facts.tree
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                tree = None
        return Screen(self.module.code, tree, self.project)

    @cached_property
    def facts(self):
        """The module's facts on `ast` (`jaxfix.facts.module.FileFacts`): the engine's, shared with the `check`
        rules (one binder per file), or made here."""
        if self._facts is not None:
            return self._facts
        from jaxfix.facts.module import FileFacts

        return FileFacts(self.module.code, self._tree, self.project, self.screen)

    @cached_property
    def positions(self):
        """PositionProvider's values, computed for the statements asked about (given the `ast`)."""
        from jaxfix.analysis.metadata import StatementPositions

        if self._tree is None:
            return self.wrapper.resolve(PositionProvider)
        return StatementPositions(self.wrapper, self._tree, self.parents)

    @cached_property
    def parents(self):
        """Each node's parent (ParentNodeProvider's map, built without its traversal)."""
        from jaxfix.analysis.metadata import parent_map

        return parent_map(self.module)

    @cached_property
    def qualified_defs(self) -> dict:
        """The module's defs by the names the project index gives them (`f`, `C.m`, `f.<locals>.g`)."""
        from jaxfix.analysis.traced import qualified_defs

        return qualified_defs(self.module)

    @cached_property
    def traced(self):
        from jaxfix.analysis.traced import TracedAnalysis

        return TracedAnalysis(self)

    @cached_property
    def arrays(self):
        from jaxfix.analysis.arrays import ArrayAnalysis

        return ArrayAnalysis(self)

    @cached_property
    def shapes(self):
        from jaxfix.analysis.shapes import ShapeAnalysis

        return ShapeAnalysis(self)

    @cached_property
    def carry(self):
        from jaxfix.analysis.carry import CarryAnalysis

        return CarryAnalysis(self)

    @cached_property
    def dataflow(self):
        from jaxfix.analysis.dataflow import Dataflow

        return Dataflow(self)

    @cached_property
    def fresh_names(self):
        """One supply of fresh names for every codemod of a pass, so that two fixes never pick the same one: the
        `check`-rules' (`FileFacts.fresh_names`) where the engine gave their facts."""
        if self._facts is not None:
            return self._facts.fresh_names
        from jaxfix.codegen import FreshNames

        return FreshNames(self.module)

    @cached_property
    def predicates(self):
        from jaxfix.analysis.predicates import PredicateAnalysis

        return PredicateAnalysis(self)

    def code_for(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def source_order(self, node: cst.CSTNode) -> tuple[int, int]:
        """(line, column) where `node` starts: a sort key that puts LibCST's sets (a scope's assignments and
        references) in source order, so that a message names the same place on every run."""
        try:
            start = self.positions[node].start
        except KeyError:
            return (0, 0)
        return (start.line, start.column)
