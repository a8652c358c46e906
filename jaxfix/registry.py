"""The one table of codemods: found by importing every module of `jaxfix.codemods`, selected by code or name,
and the precedence between them (`Codemod.yields_to`), applied here so that no rule imports another."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import pkgutil
from typing import TYPE_CHECKING, Iterable, Sequence

from jaxfix.codemod import Codemod, YieldsTo, _visitor_names
from jaxfix.diagnostics import Decision

if TYPE_CHECKING:
    import libcst as cst


class UnknownSelector(ValueError):
    """A --select/--ignore entry that names no codemod: an error, since a typo would silently select nothing."""


@functools.lru_cache(maxsize=1)
def all_codemods() -> tuple[type[Codemod], ...]:
    """Every codemod class, sorted by code; each module of jaxfix.codemods defines exactly one."""
    import jaxfix.codemods as package

    found: list[type[Codemod]] = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        classes = [
            obj
            for obj in vars(module).values()
            if isinstance(obj, type) and issubclass(obj, Codemod) and obj is not Codemod and obj.__module__ == module.__name__
        ]
        if len(classes) != 1:
            raise RuntimeError(f"{module.__name__} must define exactly one Codemod, found {len(classes)}")
        found.extend(classes)
    return tuple(sorted(found, key=lambda c: c.code))


def by_code(code: str) -> type[Codemod] | None:
    wanted = code.strip().lower()
    for codemod in all_codemods():
        if codemod.code.lower() == wanted or codemod.name == wanted:
            return codemod
    return None


def _covers(codemod: type[Codemod], selector: str) -> bool:
    """Whether `selector` (a code, a code prefix, a name or ALL) names `codemod`, opt-in or not: what `--ignore`
    removes."""
    selector = selector.strip()
    return selector.upper() == "ALL" or codemod.code.upper().startswith(selector.upper()) or codemod.name == selector.lower()


def _matches(codemod: type[Codemod], selector: str) -> bool:
    """Whether `selector` selects `codemod`: as `_covers`, but an opt-in codemod only by its exact code or name."""
    if codemod.opt_in:
        return codemod.code.upper() == selector.strip().upper() or codemod.name == selector.strip().lower()
    return _covers(codemod, selector)


def _names_some(selector: str) -> bool:
    """Whether `selector` names any codemod at all: a typo is an error, since it would silently select nothing."""
    return any(_covers(c, selector) for c in all_codemods())


def select(
    selectors: Iterable[str] | None = None, ignore: Iterable[str] | None = None, extend: Iterable[str] | None = None
) -> tuple[type[Codemod], ...]:
    """Codemods chosen by codes, code prefixes (`JF1`) or names; none given means every codemod that is not
    opt-in. `extend` adds to that choice (`--extend-select`); `ignore` removes from it."""
    selectors = [s for s in (selectors or []) if s.strip()]
    ignore = [s for s in (ignore or []) if s.strip()]
    extend = [s for s in (extend or []) if s.strip()]
    for selector in [*selectors, *ignore, *extend]:
        if not _names_some(selector):
            raise UnknownSelector(f"'{selector}' matches no codemod (see `jaxfix rules`)")
    chosen = [
        c
        for c in all_codemods()
        if (any(_matches(c, s) for s in selectors) if selectors else not c.opt_in) or any(_matches(c, s) for s in extend)
    ]
    return tuple(c for c in chosen if not any(_covers(c, s) for s in ignore))


# ---- precedence ----------------------------------------------------------------------------------------------


def yielded_to(codemods: Iterable[type[Codemod]]) -> tuple[type[Codemod], ...]:
    """The rules that `codemods` yield to, directly or through one another, and that are not among them: the engine
    runs them too, unreported, so that which rule takes a place does not depend on the selection."""
    codemods = list(codemods)
    chosen = {c.code for c in codemods}
    wanted: set[str] = set()
    pending = [y.code for c in codemods for y in c.yields_to]
    while pending:
        code = pending.pop()
        if code in chosen or code in wanted:
            continue
        wanted.add(code)
        pending.extend(y.code for y in by_code(code).yields_to)
    return tuple(c for c in all_codemods() if c.code in wanted)


def with_precedence(visitors: Sequence[Codemod]) -> list[Codemod]:
    """`visitors` in the order a batched traversal runs them: each rule that yields after the rules it yields to
    (the others keep their places), and guarded: where one of those has reported on the node it is about to visit,
    it does not visit that node (its children still) and, under `jaxfix explain`, records the YieldsTo reason."""
    by_code = {v.code: v for v in visitors}
    placed: set[str] = set()
    ordered: list[Codemod] = []
    waiting: list[Codemod] = []
    for visitor in visitors:
        waiting.append(visitor)
        ready = True
        while ready:
            ready = False
            for candidate in list(waiting):
                if all(y.code in placed or y.code not in by_code for y in candidate.yields_to):
                    waiting.remove(candidate)
                    ordered.append(candidate)
                    placed.add(candidate.code)
                    ready = True
    ordered.extend(waiting)  # a cycle of precedence (tests/test_registry.py forbids one): left as it is
    for visitor in ordered:
        winners = [(by_code[y.code], y) for y in visitor.yields_to if y.code in by_code]
        if winners:
            for name in _visitor_names(type(visitor)):
                if name.startswith("visit_"):
                    setattr(visitor, name, _guarded(visitor, getattr(visitor, name), winners))
    return ordered


def yield_checked(answered: Sequence[Codemod], facts) -> None:
    """`yields_to` between `check`-rules, once they have all answered: a finding about a statement that a winner
    reported on (its own span or one of its parts', on `ast`) is dropped and, under `jaxfix explain`, declined
    with the reason; what the rule declined there says the reason too."""
    by_code = {run.code: run for run in answered}
    places = None
    for run in answered:
        claims = [
            (d, y) for y in run.yields_to if y.code in by_code and y.code != run.code
            for d in by_code[y.code].diagnostics if d.fix is not None or not y.fixed_only
        ]  # fmt: skip
        if not claims:
            continue
        if places is None:
            places = _statement_places(facts)
        taken: dict[int, str] = {}
        for claim, y in claims:
            statement = places.get((claim.start, claim.end))
            if statement is not None:
                taken.setdefault(id(statement), y.reason)
        reason_at = lambda place: taken.get(id(places.get((place.start, place.end))))  # noqa: E731
        kept = []
        for finding in run.diagnostics:
            reason = reason_at(finding)
            if reason is None:
                kept.append(finding)
            elif facts.explaining:
                run.decisions.append(Decision(run.code, finding.start, finding.end, reason))
        run.diagnostics = kept
        run.decisions = [d if reason_at(d) is None else dataclasses.replace(d, reason=reason_at(d)) for d in run.decisions]


def _statement_places(facts) -> dict:
    """(start, end) as findings give them → the `ast` statement a finding there is about: each statement's own
    span, and the spans of its parts that are not statements (a loop's iterable, an `if`'s test)."""
    import ast

    places: dict = {}
    statements = [node for node in ast.walk(facts.tree) if isinstance(node, ast.stmt)]
    for statement in statements:
        places[facts.span(statement)] = statement
    for statement in statements:
        for child in ast.iter_child_nodes(statement):
            if isinstance(child, ast.expr):
                places.setdefault(facts.span(child), statement)
    return places


def yield_answered(answered: Sequence[Codemod], visitors: Sequence[Codemod], context, explaining: bool) -> None:
    """`yields_to` of the `check`-rules towards the visitors they yield to, once both have run: a finding of a
    `check`-rule about a statement that a winner reported on (with a fix, if `fixed_only`) is dropped and, under
    `jaxfix explain`, declined with the reason, as `with_precedence` guards a visitor's visits."""
    by_code = {v.code: v for v in visitors}
    for run in answered:
        winners = [(by_code[y.code], y) for y in run.yields_to if y.code in by_code]
        if not winners:
            continue
        statements = [
            (_statement_of(d.node, context.parents), y)
            for winner, y in winners for d in winner.diagnostics
            if d.node is not None and (d.fix is not None or not y.fixed_only)
        ]  # fmt: skip
        if not statements:
            continue
        taken = lambda place: next((y.reason for s, y in statements if _on(s, place, context.positions)), None)  # noqa: E731
        kept = []
        for finding in run.diagnostics:
            reason = taken(finding)
            if reason is None:
                kept.append(finding)
            elif explaining:
                run.decisions.append(Decision(run.code, finding.start, finding.end, reason))
        run.diagnostics = kept
        if explaining:  # what the rule said of a place it never reached as a visitor: the winner's claim instead
            run.decisions = [
                d if taken(_Place(d.start, d.end)) is None else dataclasses.replace(d, reason=taken(_Place(d.start, d.end)))
                for d in run.decisions
            ]


@dataclasses.dataclass(frozen=True)
class _Place:
    """A decision's span, asked as `_on` asks a finding (no CST node)."""

    start: object
    end: object
    node: None = None


def _statement_of(node: "cst.CSTNode", parents) -> "cst.CSTNode":
    """The statement a visitor's finding is about: its node where that is a statement, else the node holding it
    (a loop's `range(...)` is about the loop)."""
    import libcst as cst

    if isinstance(node, (cst.BaseStatement, cst.BaseSmallStatement)):
        return node
    return parents.get(node, node)


def _guarded(visitor: Codemod, visit, winners: list[tuple[Codemod, YieldsTo]]):
    def guarded(node: cst.CSTNode):
        for winner, precedence in winners:
            found = [d for d in winner.diagnostics if d.fix is not None or not precedence.fixed_only]
            if found and any(_on(node, d, visitor.context.positions) for d in found):
                return visitor.decline(_header(node), precedence.reason)
        return visit(node)

    return guarded


def _on(statement: cst.CSTNode, diagnostic, positions) -> bool:
    """Whether `diagnostic` is about `statement`: on the statement itself or on one of its own parts (a loop's
    `range(...)`), not on a statement inside it. A `check`-rule's finding holds no CST node: its place decides
    (`positions`: the module's LibCST positions)."""
    node = diagnostic.node
    if node is not None:
        return node is statement or any(node is child for child in statement.children)
    where = (diagnostic.start.line, diagnostic.start.column - 1, diagnostic.end.line, diagnostic.end.column - 1)
    for part in (statement, *statement.children):
        span = positions[part] if part in positions else None
        if span is not None and (span.start.line, span.start.column, span.end.line, span.end.column) == where:
            return True
    return False


def _header(statement: cst.CSTNode) -> cst.CSTNode:
    """Where a statement left to another rule is declined: its header's expression (a loop's iterable, a test)."""
    return getattr(statement, "iter", None) or getattr(statement, "test", None) or statement
