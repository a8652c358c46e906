"""Where a JAX PRNG key is consumed, and where a key already consumed is consumed again (reuse).

JAX's random functions are pure: the same key gives the same bits. A key is *consumed* by a draw
(`jax.random.normal(key, ...)`) and by `jax.random.split(key)` (JAX's documentation: once split, the old key
must not be used again; the split keys are computed from the same counter-based bits as a draw). A key is
*reused* when a consumption can be reached from an earlier consumption of the same value of the name, with no
rebinding in between: on a straight path, or around a loop (a key drawn from in a loop body that never
rebinds it gives every iteration the same numbers), or in a comprehension's element.

A forward dataflow over the statements of one function (or the module body): the state maps each name to the
consumptions that may have used its current value; a binding empties it, a consumption reports what was there
and replaces it, branches merge by union, loops run to a fixed point. Branches of an `if`/`elif`/`else` and of
a conditional expression are exclusive. Only `jax.random` calls count: a key passed to any other function
(a model's `init`, a helper) is neither a consumption nor a rebinding, and `jax.random.fold_in(key, i)` (the
documented way to derive many keys from one with distinct data) and `jax.random.clone` do not consume.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence, Union

import libcst as cst

from jaxfix.analysis.dataflow import activity, body_statements
from jaxfix.analysis.metadata import children
from jaxfix.analysis.syntax import param_names, target_names, walk

# jax.random functions whose first argument (or `key=`) is a key they consume.
CONSUMERS = frozenset(
    "jax.random." + name
    for name in """
    normal uniform bernoulli categorical randint permutation choice truncated_normal gumbel exponential gamma
    loggamma beta dirichlet multivariate_normal laplace logistic poisson cauchy rademacher shuffle orthogonal ball
    bits maxwell double_sided_maxwell weibull_min t pareto lognormal chisquare f geometric binomial triangular
    rayleigh wald generalized_normal split
    """.split()
)

Scope = Union[cst.FunctionDef, cst.Module]
State = dict  # name -> frozenset[cst.Call]; None stands for "unreachable"


@dataclass(frozen=True)
class Reuse:
    """`use` consumes the value of `name` that the calls in `previous` may already have consumed."""

    name: str
    use: cst.Call
    previous: frozenset[cst.Call]
    in_comprehension: bool = False  # `use` sits in a comprehension's element: consumed again for each item


@dataclass
class _Frame:
    breaks: list = field(default_factory=list)
    continues: list = field(default_factory=list)


def _merge(a: State | None, b: State | None) -> State | None:
    if a is None:
        return b
    if b is None:
        return a
    return {name: a.get(name, frozenset()) | b.get(name, frozenset()) for name in a.keys() | b.keys()}


def _same(a: State | None, b: State | None) -> bool:
    if a is None or b is None:
        return a is b
    keys = {k for k, v in a.items() if v} | {k for k, v in b.items() if v}
    return all(a.get(k, frozenset()) == b.get(k, frozenset()) for k in keys)


class KeyFlow:
    """The key reuses of one function body (or module body): `reuses`, in source order of the second use."""

    def __init__(self, scope: Scope, consumed_key) -> None:
        """`consumed_key(call)` gives the Name a call consumes as a key, or None (resolving `jax.random` aliases
        is the caller's business: see `KeyAnalysis`)."""
        self._key_of = consumed_key
        self._found: dict[cst.Call, Reuse] = {}
        self._loops: list[_Frame] = []
        self._try: list[list[State]] = []
        statements = scope.body if isinstance(scope, cst.Module) else body_statements(scope.body)
        state: State = {}
        if isinstance(scope, cst.FunctionDef):
            state = {name: frozenset() for name in param_names(scope.params)}
        self._block(statements, state)
        self.reuses: list[Reuse] = list(self._found.values())

    # ---- statements ----------------------------------------------------------------------------------------

    def _record(self, state: State | None) -> None:
        if state is not None:
            for collector in self._try:
                collector.append(state)

    def _block(self, statements: Sequence[cst.CSTNode], state: State | None) -> State | None:
        for stmt in statements:
            if state is None:
                return None
            state = self._statement(stmt, state)
            self._record(state)
        return state

    def _clear(self, state: State, names: Iterable[str]) -> State:
        state = dict(state)
        for name in names:
            state[name] = frozenset()
        return state

    def _statement(self, stmt: cst.CSTNode, state: State) -> State | None:
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in stmt.body:
                state = self._small(small, state)
                if state is None:
                    return None
            return state
        if isinstance(stmt, cst.If):
            state = self._expr(stmt.test, state)
            body = self._block(body_statements(stmt.body), state)
            if stmt.orelse is None:
                return _merge(body, state)
            if isinstance(stmt.orelse, cst.If):
                return _merge(body, self._statement(stmt.orelse, state))
            return _merge(body, self._block(body_statements(stmt.orelse.body), state))
        if isinstance(stmt, cst.For):
            entry = self._expr(stmt.iter, state)
            return self._loop(stmt, entry, lambda s: self._clear(s, target_names(stmt.target)), None)
        if isinstance(stmt, cst.While):
            return self._loop(stmt, state, None, stmt.test)
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                state = self._expr(item.item, state)
                if item.asname is not None:
                    state = self._clear(state, target_names(item.asname.name))
            return self._block(body_statements(stmt.body), state)
        if isinstance(stmt, cst.Try) or isinstance(stmt, getattr(cst, "TryStar", ())):
            collector: list[State] = [state]
            self._try.append(collector)
            end = self._block(body_statements(stmt.body), state)
            self._try.pop()
            raised: State | None = None
            for seen in collector:
                raised = _merge(raised, seen)
            outcomes: State | None = None
            for handler in stmt.handlers:
                names = target_names(handler.name.name) if handler.name is not None else []
                entry = self._clear(raised, names) if raised is not None else None
                outcomes = _merge(outcomes, self._block(body_statements(handler.body), entry))
            normal = end if stmt.orelse is None else self._block(body_statements(stmt.orelse.body), end)
            outcomes = _merge(outcomes, normal)
            if stmt.finalbody is not None:
                outcomes = self._block(body_statements(stmt.finalbody.body), outcomes)
            return outcomes
        # def, class (their bodies are other scopes), match and anything else: only what they bind counts
        return self._clear(state, activity(stmt).writes)

    def _loop(self, loop, entry: State, bind, test) -> State | None:
        head: State | None = entry
        frame = _Frame()
        for _ in range(50):
            frame = _Frame()
            self._loops.append(frame)
            body_entry = head
            if test is not None:
                body_entry = self._expr(test, head)
            if bind is not None:
                body_entry = bind(body_entry)
            end = self._block(body_statements(loop.body), body_entry)
            self._loops.pop()
            new_head = entry
            for other in (end, *frame.continues):
                new_head = _merge(new_head, other)
            if _same(new_head, head):
                break
            head = new_head
        after = self._expr(test, head) if test is not None else head
        if loop.orelse is not None:
            after = self._block(body_statements(loop.orelse.body), after)
        for other in frame.breaks:
            after = _merge(after, other)
        return after

    def _small(self, small: cst.BaseSmallStatement, state: State) -> State | None:
        if isinstance(small, cst.Break):
            if self._loops:
                self._loops[-1].breaks.append(state)
            return None
        if isinstance(small, cst.Continue):
            if self._loops:
                self._loops[-1].continues.append(state)
            return None
        if isinstance(small, (cst.Return, cst.Raise)):
            for child in children(small):
                state = self._expr(child, state)
            return None
        if isinstance(small, cst.Assign):
            state = self._expr(small.value, state)
        elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
            if small.value is not None:
                state = self._expr(small.value, state)
        else:
            for child in children(small):
                state = self._expr(child, state)
        act = activity(small)
        return self._clear(state, [*act.writes, *act.deletes])

    # ---- expressions, in evaluation order --------------------------------------------------------------------

    def _expr(self, node: cst.CSTNode, state: State) -> State:
        if isinstance(node, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
            return state  # another scope: runs later, if at all
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            return self._comprehension(node, state)
        if isinstance(node, cst.IfExp):
            state = self._expr(node.test, state)
            return _merge(self._expr(node.body, state), self._expr(node.orelse, state))
        if isinstance(node, cst.NamedExpr):
            state = self._expr(node.value, state)
            return self._clear(state, target_names(node.target))
        for child in children(node):
            state = self._expr(child, state)
        if isinstance(node, cst.Call):
            key = self._key_of(node)
            if key is not None:
                state = self._consume(key.value, node, state)
        return state

    def _consume(self, name: str, call: cst.Call, state: State, *, comprehension: bool = False) -> State:
        previous = state.get(name, frozenset())
        if previous:
            known = self._found.get(call)
            merged = previous | known.previous if known is not None else previous
            self._found[call] = Reuse(name, call, merged, comprehension or (known is not None and known.in_comprehension))
        state = dict(state)
        state[name] = frozenset({call})
        return state

    def _comprehension(self, node, state: State) -> State:
        """The first `for`'s iterable runs once; everything else once per item. A key from outside consumed
        there is consumed again for the next item: reported as a reuse in the comprehension."""
        first = node.for_in
        state = self._expr(first.iter, state)
        bound: set[str] = set()
        per_item: list[cst.CSTNode] = []
        clause = first
        while clause is not None:
            bound.update(target_names(clause.target))
            if clause is not first:
                per_item.append(clause.iter)
            per_item.extend(condition.test for condition in clause.ifs)
            clause = clause.inner_for_in
        per_item.extend([node.key, node.value] if isinstance(node, cst.DictComp) else [node.elt])
        for part in per_item:
            for call in walk(part):
                if isinstance(call, cst.Call):
                    key = self._key_of(call)
                    if key is not None and key.value not in bound and not _inside_scope(part, call):
                        # consumed once per item, the same value of the name each time: a reuse with itself
                        state = self._consume(key.value, call, state, comprehension=True)
                        state = self._consume(key.value, call, state, comprehension=True)
        return state


def _inside_scope(root: cst.CSTNode, target: cst.CSTNode) -> bool:
    """Whether `target` lies inside a lambda or nested comprehension within `root` (not evaluated per item here)."""
    for node in walk(root):
        if node is not root and isinstance(node, (cst.Lambda, cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            if any(inner is target for inner in walk(node)):
                return True
    return False


class KeyAnalysis:
    """Key reuses per function of one module, with `jax.random` resolved through the module's imports."""

    def __init__(self, context) -> None:
        self.context = context
        self._flows: dict[cst.CSTNode, KeyFlow] = {}

    def consumed_key(self, call: cst.Call) -> cst.Name | None:
        """The Name a `jax.random` call consumes as its key (first positional argument or `key=`), or None."""
        if self.context.names.qualified(call.func) not in CONSUMERS:
            return None
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "key":
                return arg.value if isinstance(arg.value, cst.Name) else None
        if call.args and call.args[0].keyword is None and not call.args[0].star:
            value = call.args[0].value
            return value if isinstance(value, cst.Name) else None
        return None

    def flow(self, scope: Scope) -> KeyFlow:
        found = self._flows.get(scope)
        if found is None:
            found = self._flows[scope] = KeyFlow(scope, self.consumed_key)
        return found
