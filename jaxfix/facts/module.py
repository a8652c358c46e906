"""`FileFacts`: what a rule's `check(facts)` reads of one file, on `ast` only (DESIGN.md, "A rule").

The engine makes one per file that some `check`-rule's text screen passes: the text, its `ast` tree (the one the
engine parsed, or the screen's), the project facts (`analysis.project.ModuleFacts`, duck-typed here: `facts/`
imports no analysis), the `Binder` built on first use, the positions helper, and the engine's `Screen` for the
facts that still live there (read from it, not copied). `decline` records why a rule left a node alone, while
`jaxfix explain` runs. The name facts that every reader of a table of APIs needs (`references`, `stored`,
`in_shim`) are here, over the binder."""

from __future__ import annotations

import ast
import keyword
from functools import cached_property
from typing import Any, Callable, Iterator

from jaxfix.diagnostics import Decision, Position
from jaxfix.facts.binder import Binder
from jaxfix.facts.spelling import in_order, names_in, spelled_names, value_of  # noqa: F401 (read from here by the rules)
from jaxfix.facts.flow import Lines, Reaching
from jaxfix.facts.keys import KeyFacts
from jaxfix.facts.positions import Positions
from jaxfix.facts.predicates import Predicates
from jaxfix.facts.purity import Purity
from jaxfix.facts.shapes import Shapes
from jaxfix.facts.traced import Traced
from jaxfix.facts.values import Values

_MISSING = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError"})  # what a missing API raises
_SHIM_TESTS = (ast.If, ast.IfExp, ast.While)


class FileFacts:
    """One file's facts for the `check`-rules, each computed on first use."""

    def __init__(
        self, text: str, tree: ast.Module | None = None, project: Any = None, screen: Any = None,
        *, explaining: bool = False,
    ) -> None:
        self.text = text
        self.project = project  # the file's ModuleFacts from the project index, or None
        self.screen = screen  # the engine's Screen, where a moved rule still reads a fact from it
        self._tree = tree
        self.explaining = explaining
        self.decisions: list[Decision] = []  # filled only while explaining (`decline`)

    def release(self) -> None:
        """Drops every fact, once every rule has answered and every fix is built: the facts hold reference cycles
        (an analysis and its memos, the binder's scopes), which only the cyclic collector frees, after scanning
        the file's whole tree; dropped here, reference counting frees them at once. Nothing may read these facts
        after (the engine calls it at the end of a file's analysis)."""
        binder = self.__dict__.get("binder")
        if binder is not None:
            binder.release()
        for value in list(self.__dict__.values()):
            for fact in value.values() if isinstance(value, dict) else (value,):
                if type(fact).__module__.startswith("jaxfix.facts"):
                    getattr(fact, "__dict__", {}).clear()
        self.__dict__.clear()

    @cached_property
    def tree(self) -> ast.Module:
        """The module's `ast`; raises SyntaxError (or ValueError) where Python cannot parse it."""
        if self._tree is not None:
            return self._tree
        if self.screen is not None:
            return self.screen.tree
        return compile(self.text, "<facts>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)

    @cached_property
    def binder(self) -> Binder:
        """The screen's binder where the engine gave a screen (one binder per file), else one built here."""
        found = getattr(self.screen, "binder", None)
        return found if isinstance(found, Binder) and found.tree is self.tree else Binder(self.tree)

    @cached_property
    def traced(self) -> Traced:
        """Which functions are traced and the kinds of values in them (`jaxfix.facts.traced`): the screen's, where
        the engine gave one (one per file, which TracedAnalysis answers the visitors from), else one built here."""
        found = getattr(self.screen, "traced_fact", None)
        if isinstance(found, Traced) and found.binder is self.binder:
            return found
        return Traced(self.tree, self.binder, project=self.project)

    @cached_property
    def lines(self) -> Lines:
        """How each block's statements group into the lines LibCST holds (`flow.Lines`)."""
        return Lines(self.text)

    @cached_property
    def keys(self) -> KeyFacts:
        """PRNG key flow: which calls consume which key, and where a key is used twice."""
        return KeyFacts(self.binder, self.text)

    @cached_property
    def predicates(self) -> Predicates:
        """Tracers and array evidence in traced code (`jaxfix.facts.predicates`)."""
        return Predicates(self.binder, self.traced, self.lines, self.values, self.reaching, lambda: self.shapes)

    @cached_property
    def values(self) -> Values:
        """What each value is (`jaxfix.facts.values`): arrays, their dtype class, Python ints."""
        return Values(self.binder, self.traced, self.positions)

    @cached_property
    def shapes(self) -> Shapes:
        """Ranks, dtype categories and integer constants of expressions (`jaxfix.facts.shapes`)."""
        return Shapes(self.binder, self.traced, self.positions)

    @cached_property
    def purity(self) -> Purity:
        """What stops a block or function from becoming a traced body (`jaxfix.facts.purity`)."""
        return Purity(self.binder, self.traced, self.positions, self.lines, self.predicates)

    @cached_property
    def positions(self) -> Positions:
        """The one position helper, shared with the screen's where the engine gave one."""
        found = getattr(self.screen, "positions", None)
        return found if isinstance(found, Positions) else Positions(self.text)

    @cached_property
    def fresh_names(self) -> "NameSupply":
        """Fresh names for the fixes the `check`-rules plan in this module (`names_in` its tree)."""
        return NameSupply(lambda: names_in(self.tree))

    # ---- flow: liveness, reaching definitions, loop-carried names (`jaxfix.facts.loops`) ----------------------

    def enclosing_function(self, node: ast.AST) -> ast.AST:
        """The def or lambda whose code holds `node`, or the module (what `flow` is asked about)."""
        from jaxfix.facts.loops import enclosing_function

        return enclosing_function(node, self.binder.parents, self.tree)

    def flow(self, function: ast.AST):
        """Liveness and reaching definitions in `function` (a def, a lambda or the module), made on first use."""
        from jaxfix.facts.loops import FunctionFlow

        found = self._flows.get(function)
        if found is None:
            reaching = None if isinstance(function, ast.Lambda) else self.reaching(function)
            found = self._flows[function] = FunctionFlow(function, self.lines, reaching)
        return found

    def reaching(self, function: ast.AST) -> Reaching:
        """Which bindings may reach each line of `function` (a def or the module: `flow.Reaching`), made once per
        function for every rule and fact that asks."""
        found = self._reachings.get(function)
        if found is None:
            found = self._reachings[function] = Reaching(function, self.lines)
        return found

    def loop(self, loop: ast.stmt):
        """What `loop` (a `for` or `while`) carries from one iteration to the next (`facts.loops.LoopFlow`)."""
        from jaxfix.facts.loops import loop_flow

        return loop_flow(self.flow(self.enclosing_function(loop)), loop)

    @cached_property
    def carry(self):
        """What stops a loop's carried values from becoming a lax loop's carry (`facts.carry.CarryAnalysis`)."""
        from jaxfix.facts.carry import CarryAnalysis

        return CarryAnalysis(self, self.shapes)

    @cached_property
    def arrays(self):
        """One array or not, and the evidence short of proof that a value is one (`facts.arrays.ArrayEvidence`)."""
        from jaxfix.facts.arrays import ArrayEvidence

        return ArrayEvidence(self)

    @cached_property
    def scans(self):
        """What each `for` loop in traced code is as a lax.scan (`facts.scans.ScanFacts`: JF102's decision)."""
        from jaxfix.facts.scans import ScanFacts

        return ScanFacts(self)

    @cached_property
    def donation(self):
        """Which arguments of each compiled step its calls let it donate (`facts.donation.DonationFacts`)."""
        from jaxfix.facts.donation import DonationFacts

        return DonationFacts(self)

    @cached_property
    def branches(self):
        """What the branches of each `if` compute, for lax.cond, lax.switch and jnp.where (`facts.branches`)."""
        from jaxfix.facts.branches import BranchFacts

        return BranchFacts(self, self.shapes)

    @cached_property
    def row_writes(self):
        """The `lax.fori_loop` calls whose bodies write rows of their carry, and their scan plans
        (`facts.row_writes.RowWrites`)."""
        from jaxfix.facts.row_writes import RowWrites

        return RowWrites(self)

    @cached_property
    def batches(self):
        """The comprehensions, maps and loops over the rows of arrays whose steps are independent, and JF301's
        decision on each (`facts.batches.BatchFacts`)."""
        from jaxfix.facts.batches import BatchFacts

        return BatchFacts(self)

    @cached_property
    def _flows(self) -> dict:
        return {}

    @cached_property
    def _reachings(self) -> dict:
        return {}

    def span(self, node: ast.AST) -> tuple[Position, Position]:
        """Where `node` starts and ends as a finding gives it (LibCST's positions: columns 1-based, in characters)."""
        return self.positions.positions(node)

    def decline(self, code: str, node: ast.AST, reason: str) -> None:
        """Say why rule `code` leaves `node` alone although it recognised its pattern there (kept for `explain`)."""
        if self.explaining:
            self.decisions.append(Decision(code, *self.span(node), reason))

    def decline_untraced(self, code: str, node: ast.AST) -> None:
        """`decline` for a place outside traced code, naming the function that nothing traces."""
        if self.explaining:
            function = self.traced.enclosing_function(node)
            if function is None:
                self.decline(code, node, "not in traced code: module-level code runs eagerly")
            else:
                name = getattr(function, "name", "lambda")
                self.decline(code, node, f"not in traced code: nothing jits, vmaps or otherwise transforms `{name}`")

    # ---- names: what the readers of a table of APIs share ------------------------------------------------------

    @cached_property
    def references(self) -> list[tuple[ast.Name | ast.Attribute, str]]:
        """Each outermost dotted name (a name, or attributes on one, that is not itself the `.value` of an
        attribute) that stands, through imports, for exactly one qualified name, with that name: the references
        a rule reading a table of APIs looks up (`jax.random.PRNGKey` in `jax.random.PRNGKey(0).shape`). As
        LibCST's qualified names give it: a name bound otherwise too, or to several imports, refers to none."""
        binder = self.binder
        inner = {id(node.value) for node in binder.nodes_of(ast.Attribute)}
        found = []
        for node in binder.nodes_of(ast.Name, ast.Attribute):
            if id(node) not in inner:
                name = binder.imported(node)  # a name no import binds is asked nothing more
                if name is not None:
                    found.append((node, name))
        return found

    @staticmethod
    def stored(node: ast.AST) -> bool:
        """Whether `node` is assigned or deleted (`jax.tree_map = ...`, `del x.y`, a `for` or `with` target)."""
        return isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del))

    def in_shim(self, node: ast.AST) -> bool:
        """Inside a compatibility shim: the body of a `try` that catches ImportError/AttributeError or of such a
        handler (the fallback for another JAX version), or under an `if`/`while`/conditional expression whose test
        mentions hasattr or a version (anywhere but in the test itself)."""
        parents = self.binder.parents
        child, current = node, parents.get(node)
        while current is not None:
            kind = type(current)
            if kind is ast.Try and _in_block(child, current.body) and any(_catches_missing(h) for h in current.handlers):
                return True
            if kind is ast.ExceptHandler and _in_block(child, current.body) and _catches_missing(current):
                return True
            if kind in _SHIM_TESTS and child is not current.test:
                test = self.positions.segment(current.test)
                if "hasattr" in test or "version" in test.lower():
                    return True
            child, current = current, parents.get(current)
        return False


    def functions_named(self, expr: ast.AST) -> list[ast.AST]:
        """The function `expr` names: a lambda itself, or the defs a name is bound to where nothing else binds it
        (LibCST's scope of the name: all its bindings there, in no order), but `name = transform(name, ...)`, which
        rebinds the one def to its transformed self (`step = jax.pmap(step, ...)`). Empty where unknown (a
        parameter, a builtin, an import, ...)."""
        if type(expr) is ast.Lambda:
            return [expr]
        if type(expr) is not ast.Name:
            return []
        scope = self.binder.scope_of.get(expr)
        if scope is None:
            return []
        bindings = scope.resolve(expr.id)
        found = [b.node for b in bindings if isinstance(b.node, (ast.FunctionDef, ast.AsyncFunctionDef))]
        others = [b.node for b in bindings if not isinstance(b.node, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if None in others:
            return []  # also bound as a builtin: unknown
        if len(found) == 1 and all(self._wraps(node, expr.id) for node in others):
            return found
        return found if not others else []

    def _wraps(self, node: ast.AST, name: str) -> bool:
        """Whether `node` is a target of `name = transform(name, ...)`."""
        assign = self.binder.parent(node) if type(node) is ast.Name else None
        if not (type(assign) is ast.Assign and any(t is node for t in assign.targets) and type(assign.value) is ast.Call):
            return False
        arguments = in_order(assign.value)
        first = value_of(arguments[0]) if arguments else None
        return type(first) is ast.Name and first.id == name


class NameSupply:
    """Names for generated functions and variables: the first candidate that no name in the module uses (nor an
    earlier take of the same supply), else the first with a number appended. `used` gives the module's names,
    asked on the first take."""

    def __init__(self, used: Callable[[], set[str]]) -> None:
        self._gather = used
        self._used: set[str] | None = None

    def take(self, *candidates: str) -> str:
        if self._used is None:
            self._used = set(self._gather())
        for candidate in candidates:
            if candidate not in self._used and not keyword.iskeyword(candidate):  # `return` of `returns`: no name
                self._used.add(candidate)
                return candidate
        number = 2
        while f"{candidates[0]}_{number}" in self._used:
            number += 1
        self._used.add(f"{candidates[0]}_{number}")
        return f"{candidates[0]}_{number}"


def named(argument: ast.AST) -> bool:
    """Whether an argument is passed by keyword (`k=a`; not `**a`, which LibCST gives no keyword)."""
    return type(argument) is ast.keyword and argument.arg is not None


def dotted(expr: ast.AST) -> tuple[str, ...] | None:
    """`("jax", "numpy", "zeros")` for `jax.numpy.zeros`; None for anything but a name and its attributes."""
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    return tuple(reversed(parts))


def _dotted(node: ast.AST) -> bool:
    while type(node) is ast.Attribute:
        node = node.value
    return type(node) is ast.Name


def _in_block(node: ast.AST, block: list[ast.stmt]) -> bool:
    return any(statement is node for statement in block)


def _catches_missing(handler: ast.ExceptHandler) -> bool:
    """Whether the handler names a missing API's exception (a bare `except:` guards anything; it marks no shim)."""
    kind = handler.type
    kinds: Iterator[ast.AST] = iter(kind.elts) if isinstance(kind, ast.Tuple) else iter([kind] if kind else [])
    for expr in kinds:
        last = expr
        if isinstance(last, ast.Attribute):
            if not _dotted(last):
                continue
            if last.attr in _MISSING:
                return True
        elif isinstance(last, ast.Name) and last.id in _MISSING:
            return True
    return False
