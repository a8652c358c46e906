"""Where a JAX PRNG key is consumed, and where a key already consumed is consumed again (reuse).

JAX's random functions are pure: the same key gives the same bits. A key is *consumed* by a draw
(`jax.random.normal(key, ...)`) and by `jax.random.split(key)` (JAX's documentation: once split, the old key
must not be used again; the split keys are computed from the same counter-based bits as a draw). A key is
*reused* when a consumption can be reached from an earlier consumption of the same value, with no rebinding in
between: on a straight path, or around a loop (a key drawn from in a loop body that never gives it a new value
gives every iteration the same numbers), or in a comprehension's element, or from one step of a `lax.scan`,
`fori_loop` or `while_loop` to the next, when the body returns the key it consumed as (part of) the carry.

A forward dataflow over the statements of one function (or the module body). The state gives each name a token
for its value, so that names bound to one another (`rng = key`, `a, b = pair`, `pair = (obs, key)`) share a
token, and each token the consumptions that may have used that value. Parts of a tuple are paths (`carry[1]`):
unpacking a name takes its paths, building a tuple sets them. A binding gives a name a fresh token, a
consumption reports what its token had and replaces it, branches merge (two names keep one token only where they
share one on both sides), loops run to a fixed point. The body of a lax loop runs again with, as its carry, what
it returns: its carry parameter starts with the consumptions the returned carry had, to a fixed point too.
Branches of an `if`/`elif`/`else` and of a conditional expression are exclusive. Only `jax.random` calls count:
a key passed to any other function (a model's `init`, a helper) is neither a consumption nor a rebinding, and
`jax.random.fold_in(key, i)` (the documented way to derive many keys from one with distinct data) and
`jax.random.clone` do not consume.

The same flow checks a fix before it is offered (`KeyAnalysis.flow_with_splits`): it runs again as if
`name, subkey = jax.random.split(name)` stood before the given lines and their draws read the fresh `subkey`,
and the fix holds when the reuse it was for is gone (no draw reads what the inserted split consumed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Sequence, Union

import libcst as cst
from libcst.metadata import ScopeProvider

from jaxfix.analysis.dataflow import activity
from jaxfix.analysis.syntax import body_statements, code_children, target_names, walk
from jaxfix.facts.knowledge.jax import KEY_CONSUMERS as CONSUMERS, LAX_LOOPS


_PARTIAL = "functools.partial"
_LAST_PARTS = frozenset(name.rsplit(".", 1)[1] for name in (*CONSUMERS, *LAX_LOOPS))

Scope = Union[cst.FunctionDef, cst.Module]


@dataclass(frozen=True)
class LaxBody:
    """A function that a lax loop calls once per step, with the carry it returned the step before."""

    construct: str  # "jax.lax.scan"
    carry: str  # the parameter that receives the carry
    pair: bool  # it returns `(carry, y)`, not the carry alone


@dataclass(frozen=True)
class Reuse:
    """`use` consumes the value of `name` that the calls in `previous` may already have consumed."""

    name: str
    use: cst.Call
    previous: frozenset[cst.Call]
    in_comprehension: bool = False  # `use` sits in a comprehension's element: consumed again for each item
    # the calls of `previous` that consumed the key in the step before of a lax loop, whose body returned it
    carried: frozenset[cst.Call] = frozenset()


@dataclass(frozen=True)
class _Carried:
    """A consumption in the previous step of a lax loop, brought back by the carry."""

    call: object


@dataclass(frozen=True)
class _Split:
    """The split a fix would put before `line` (the fix's check: `KeyAnalysis.flow_with_splits`)."""

    line: cst.CSTNode


def _base(consumption):
    return consumption.call if isinstance(consumption, _Carried) else consumption


@dataclass
class _Frame:
    breaks: list = field(default_factory=list)
    continues: list = field(default_factory=list)


class _State:
    """Per name or path (`carry[1]`) bound so far, a token for its value; per token, the consumptions that may
    have used that value. A name or path never bound here has the token `("name", n)` or, for a path, its
    parent's token with the index (`carry[1]` of an unknown `carry`). Every token with consumptions is some
    bound name's or path's, or such a tuple token: merging reads only those."""

    __slots__ = ("tokens", "used")

    def __init__(self, tokens: dict, used: dict) -> None:
        self.tokens = tokens
        self.used = used

    def token(self, path: str):
        found = self.tokens.get(path)
        if found is not None:
            return found
        cut = path.rfind("[")
        if cut <= 0:
            return ("name", path)
        return ("item", self.token(path[:cut]), path[cut:])

    def used_of(self, path: str) -> frozenset:
        return self.used.get(self.token(path), frozenset())

    def consume(self, path: str, consumption) -> tuple[frozenset, "_State"]:
        """What the value of `path` had, and the state in which `consumption` is all it has."""
        token = self.token(path)
        tokens = dict(self.tokens)
        tokens[path] = token
        used = dict(self.used)
        previous = used.get(token, frozenset())
        used[token] = frozenset({consumption})
        return previous, _State(tokens, used)

    def bind(self, bindings: Sequence[tuple[str, str | None]]) -> "_State":
        """Bind each path to the value of another (an alias) or, for None, to a fresh value. Sources are read
        before anything is bound (`a, b = b, a`); binding a name forgets what was known of its parts."""
        tokens = dict(self.tokens)
        sources: list[tuple[str, object]] = []
        for path, source in bindings:
            if source is None:
                sources.append((path, object()))
                continue
            sources.append((path, self.token(source)))
            prefix = source + "["
            sources.extend((path + key[len(source):], self.tokens[key]) for key in self.tokens if key.startswith(prefix))
        for path, _ in bindings:
            prefix = path + "["
            for key in [k for k in tokens if k == path or k.startswith(prefix)]:
                del tokens[key]
        for path, token in sources:
            tokens[path] = token
        return _State(tokens, self.used)

    def clear(self, names: Iterable[str]) -> "_State":
        return self.bind([(name, None) for name in names])

    def holders(self, token) -> set[str]:
        """The names whose value has this token."""
        found = {path for path, t in self.tokens.items() if "[" not in path and t == token}
        if isinstance(token, tuple) and token[0] == "name" and token[1] not in self.tokens:
            found.add(token[1])
        return found


def _merge(a: _State | None, b: _State | None, memo: dict | None = None) -> _State | None:
    if a is None:
        return b
    if b is None:
        return a
    memo = {} if memo is None else memo
    tokens: dict = {}
    # a name never bound here (a parameter) has one token on both sides, even where only an alias of it is
    # bound: `k = key; normal(k)` leaves the consumption on `key`'s token, which `key` still reads after the merge
    used: dict = {
        token: a.used.get(token, frozenset()) | b.used.get(token, frozenset())
        for token in a.used.keys() | b.used.keys()
        if _stable(token)
    }
    for path in a.tokens.keys() | b.tokens.keys():
        ta, tb = a.token(path), b.token(path)
        token = ta if ta == tb else memo.setdefault((ta, tb), object())  # one token only where both share one
        tokens[path] = token
        used[token] = a.used.get(ta, frozenset()) | b.used.get(tb, frozenset())
    return _State(tokens, used)


def _stable(token) -> bool:
    """A token that means the same value in every state: that of a name never bound here, or a part of it."""
    while isinstance(token, tuple) and token[0] == "item":
        token = token[1]
    return isinstance(token, tuple)


def _canonical(state: _State) -> dict:
    groups: dict = {}
    for path, token in state.tokens.items():
        groups.setdefault(token, set()).add(path)
    canonical: dict = {
        path: (state.used.get(token, frozenset()), frozenset(groups[token]))
        for path, token in state.tokens.items()
        if state.used.get(token) or len(groups[token]) > 1
    }
    canonical.update((token, used) for token, used in state.used.items() if used and _stable(token))
    return canonical


def _same(a: _State | None, b: _State | None) -> bool:
    if a is None or b is None:
        return a is b
    return _canonical(a) == _canonical(b)


def _suffix(token, root) -> str | None:
    """The path from `root` to `token` (`"[1]"`, `""` for `root` itself) where `token` is one of its parts."""
    suffix = ""
    while token != root:
        if not (isinstance(token, tuple) and token[0] == "item"):
            return None
        suffix = token[2] + suffix
        token = token[1]
    return suffix


def _plain_sequence(node) -> bool:
    return isinstance(node, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement) for e in node.elements)


def _bindings(target, value) -> list[tuple[str, str | None]]:
    """What `target = value` binds: (path, the path whose value it takes, or None for a fresh value).
    `target` and `value` are nodes or paths (the parts of an unpacked name)."""
    source = value if isinstance(value, str) else value.value if isinstance(value, cst.Name) else None
    if isinstance(target, (str, cst.Name)):
        path = target if isinstance(target, str) else target.value
        pairs: list[tuple[str, str | None]] = [(path, source)]
        if source is None and _plain_sequence(value):
            for index, element in enumerate(value.elements):
                pairs += _bindings(f"{path}[{index}]", element.value)
        return pairs
    if _plain_sequence(target):
        parts = [element.value for element in target.elements]
        if _plain_sequence(value) and len(value.elements) == len(parts):
            return [pair for part, element in zip(parts, value.elements) for pair in _bindings(part, element.value)]
        if source is not None:
            return [pair for index, part in enumerate(parts) for pair in _bindings(part, f"{source}[{index}]")]
    return [(name, None) for name in target_names(target)]


class KeyFlow:
    """The key reuses of one function body (or module body): `reuses`, in source order of the second use."""

    def __init__(
        self,
        scope: Scope,
        consumed_key,
        body: LaxBody | None = None,
        splits: dict[cst.CSTNode, str] | None = None,
        renamed: frozenset[cst.Call] = frozenset(),
        activity_of=activity,
    ) -> None:
        """`consumed_key(call)` gives the Name a call consumes as a key, or None (resolving `jax.random` aliases
        is the caller's business: see `KeyAnalysis`). `body`: the scope is a lax loop's body. `splits` and
        `renamed`: run as if a fix had put `name, subkey = jax.random.split(name)` before each line of `splits`
        and the calls of `renamed` drew from their fresh `subkey`. `activity_of`: `dataflow.activity`, or a
        memo of it."""
        self._key_of = consumed_key
        self._activity = activity_of
        self.body = body
        self._splits = splits or {}
        self._renamed = renamed
        self._found: dict[object, tuple[str, frozenset, bool]] = {}
        self._holders: dict[cst.Call, frozenset[str]] = {}
        self._shared: set[cst.Call] = set()
        self._loops: list[_Frame] = []
        self._try: list[list[_State]] = []
        self._line_start: _State | None = None
        statements = scope.body if isinstance(scope, cst.Module) else body_statements(scope.body)
        if body is None:
            self._block(statements, _State({}, {}))
        else:
            carried: dict[str, frozenset] = {}
            for _ in range(20):
                self._returned: dict[str, frozenset] = {}
                tokens, used = {}, {}
                for path, consumptions in carried.items():
                    token = tokens[path] = _State(tokens, {}).token(path)
                    used[token] = consumptions
                self._block(statements, _State(tokens, used))
                grown = dict(carried)
                for path, consumptions in self._returned.items():
                    grown[path] = grown.get(path, frozenset()) | frozenset(_Carried(_base(c)) for c in consumptions)
                if grown == carried:
                    break
                carried = grown
        self.reuses: list[Reuse] = [
            Reuse(
                name, use, frozenset(_base(p) for p in previous), comprehension,
                frozenset(p.call for p in previous if isinstance(p, _Carried)),
            )  # fmt: skip
            for use, (name, previous, comprehension) in self._found.items()
            if isinstance(use, cst.Call)
        ]

    def reads_a_split(self, use: cst.Call, line: cst.CSTNode | None = None) -> bool:
        """In a flow run with `splits`: whether `use` may consume a key value that one of the splits consumed.
        Where `use` is itself one of `renamed`, pass its `line`: the split before that line stands for it."""
        found = self._found.get(_Split(line) if line is not None else use)
        return found is not None and any(isinstance(_base(p), _Split) for p in found[1])

    def holders(self, call: cst.Call) -> frozenset[str]:
        """The names that, wherever the line holding `call` starts, hold the key value `call` consumes."""
        return self._holders.get(call, frozenset())

    def alone(self, call: cst.Call) -> bool:
        """Whether, wherever the line holding `call` starts, the key `call` consumes is held by its own name
        only (no alias, no tuple or carry it is a part of)."""
        return call in self._holders and call not in self._shared

    # ---- statements ----------------------------------------------------------------------------------------

    def _record(self, state: _State | None) -> None:
        if state is not None:
            for collector in self._try:
                collector.append(state)

    def _block(self, statements: Sequence[cst.CSTNode], state: _State | None) -> _State | None:
        for stmt in statements:
            if state is None:
                return None
            state = self._statement(stmt, state)
            self._record(state)
        return state

    def _statement(self, stmt: cst.CSTNode, state: _State) -> _State | None:
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            split = self._splits.get(stmt)
            if split is not None:
                state = self._consume(split, _Split(stmt), state).clear([split])
            self._line_start = state if isinstance(stmt, cst.SimpleStatementLine) else None
            try:
                for small in stmt.body:
                    state = self._small(small, state)
                    if state is None:
                        return None
                return state
            finally:
                self._line_start = None
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
            return self._loop(stmt, entry, lambda s: s.clear(target_names(stmt.target)), None)
        if isinstance(stmt, cst.While):
            return self._loop(stmt, state, None, stmt.test)
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                state = self._expr(item.item, state)
                if item.asname is not None:
                    state = state.clear(target_names(item.asname.name))
            return self._block(body_statements(stmt.body), state)
        if isinstance(stmt, cst.Try) or isinstance(stmt, getattr(cst, "TryStar", ())):
            collector: list[_State] = [state]
            self._try.append(collector)
            end = self._block(body_statements(stmt.body), state)
            self._try.pop()
            raised: _State | None = None
            memo: dict = {}
            for seen in collector:
                raised = _merge(raised, seen, memo)
            outcomes: _State | None = None
            for handler in stmt.handlers:
                names = target_names(handler.name.name) if handler.name is not None else []
                entry = raised.clear(names) if raised is not None else None
                outcomes = _merge(outcomes, self._block(body_statements(handler.body), entry))
            normal = end if stmt.orelse is None else self._block(body_statements(stmt.orelse.body), end)
            outcomes = _merge(outcomes, normal)
            if stmt.finalbody is not None:
                outcomes = self._block(body_statements(stmt.finalbody.body), outcomes)
            return outcomes
        # def, class (their bodies are other scopes), match and anything else: only what they bind counts
        return state.clear(self._activity(stmt).writes)

    def _loop(self, loop, entry: _State, bind, test) -> _State | None:
        head: _State | None = entry
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
            memo: dict = {}
            for other in (end, *frame.continues):
                new_head = _merge(new_head, other, memo)
            if _same(new_head, head):
                break
            head = new_head
        after = self._expr(test, head) if test is not None else head
        if loop.orelse is not None:
            after = self._block(body_statements(loop.orelse.body), after)
        for other in frame.breaks:
            after = _merge(after, other)
        return after

    def _small(self, small: cst.BaseSmallStatement, state: _State) -> _State | None:
        if isinstance(small, cst.Break):
            if self._loops:
                self._loops[-1].breaks.append(state)
            return None
        if isinstance(small, cst.Continue):
            if self._loops:
                self._loops[-1].continues.append(state)
            return None
        if isinstance(small, (cst.Return, cst.Raise)):
            for child in code_children(small):
                state = self._expr(child, state)
            if isinstance(small, cst.Return) and self.body is not None:
                self._return(small.value, state)
            return None
        bindings: list[tuple[str, str | None]] = []
        if isinstance(small, cst.Assign):
            state = self._expr(small.value, state)
            for target in small.targets:
                bindings += _bindings(target.target, small.value)
        elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
            if small.value is not None:
                state = self._expr(small.value, state)
                if isinstance(small, cst.AnnAssign):
                    bindings = _bindings(small.target, small.value)
        else:
            for child in code_children(small):
                state = self._expr(child, state)
        act = self._activity(small)
        bound = {path for path, _ in bindings}
        state = state.bind(bindings)
        return state.clear([name for name in (*act.writes, *act.deletes) if name not in bound])

    def _return(self, value: cst.BaseExpression | None, state: _State) -> None:
        """What the carry returned here holds, by path of the carry parameter."""
        body = self.body
        assert body is not None
        if value is None:
            return
        if body.pair:
            if not _plain_sequence(value) or len(value.elements) != 2:
                return  # no carry that can be read
            value = value.elements[0].value
        self._project(state, value, body.carry)

    def _project(self, state: _State, expr: cst.BaseExpression, path: str) -> None:
        if _plain_sequence(expr):
            for index, element in enumerate(expr.elements):
                self._project(state, element.value, f"{path}[{index}]")
        elif isinstance(expr, cst.Name):
            name = expr.value
            root = state.token(name)
            found: dict[str, frozenset] = {}
            for token, consumptions in state.used.items():  # the parts of its value (`carry[1]` read as `key`)
                suffix = _suffix(token, root)
                if consumptions and suffix is not None:
                    found[path + suffix] = found.get(path + suffix, frozenset()) | consumptions
            for key in state.tokens:  # and those it was built from (`carry = (obs, key)`)
                if key.startswith(name + "[") and state.used_of(key):
                    found[path + key[len(name):]] = found.get(path + key[len(name):], frozenset()) | state.used_of(key)
            for target, consumptions in found.items():
                self._returned[target] = self._returned.get(target, frozenset()) | consumptions

    # ---- expressions, in evaluation order --------------------------------------------------------------------

    def _expr(self, node: cst.CSTNode, state: _State) -> _State:
        if isinstance(node, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
            return state  # another scope: runs later, if at all
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            return self._comprehension(node, state)
        if isinstance(node, cst.IfExp):
            state = self._expr(node.test, state)
            return _merge(self._expr(node.body, state), self._expr(node.orelse, state))
        if isinstance(node, cst.NamedExpr):
            state = self._expr(node.value, state)
            return state.bind(_bindings(node.target, node.value))
        for child in code_children(node):  # whitespace and punctuation hold no call
            state = self._expr(child, state)
        if isinstance(node, cst.Call) and node not in self._renamed:
            key = self._key_of(node)
            if key is not None:
                if self._line_start is not None:
                    holders = self._line_start.holders(state.token(key.value))
                    if self._line_start.token(key.value) == state.token(key.value):
                        holders.add(key.value)
                    known = self._holders.get(node)
                    self._holders[node] = frozenset(holders) if known is None else known & holders
                    token = state.token(key.value)
                    shared = (
                        isinstance(token, tuple) and (token[0] == "item" or token[1] != key.value)  # a part, another's
                        or any(t == token for path, t in self._line_start.tokens.items() if path != key.value)
                    )
                    if shared:
                        self._shared.add(node)
                state = self._consume(key.value, node, state)
        return state

    def _consume(self, name: str, call, state: _State, *, comprehension: bool = False) -> _State:
        previous, state = state.consume(name, call)
        if previous:
            known = self._found.get(call)
            if known is not None:
                previous = previous | known[1]
                comprehension = comprehension or known[2]
            self._found[call] = (name, previous, comprehension)
        return state

    def _comprehension(self, node, state: _State) -> _State:
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
        self._activities: dict[cst.CSTNode, object] = {}

    def _activity(self, node: cst.CSTNode):
        """`dataflow.activity`, once per statement: a fix's check runs the flow of a scope again."""
        found = self._activities.get(node)
        if found is None:
            found = self._activities[node] = activity(node)
        return found

    def consumed_key(self, call: cst.Call) -> cst.Name | None:
        """The Name a `jax.random` call consumes as its key (first positional argument or `key=`), or None (also
        for a call outside the module, which no scope resolves)."""
        return self._survey.keys.get(call)

    def drawing_scopes(self) -> list[Scope]:
        """The module and the defs with a call that consumes a named key as their own (not a nested def's), the
        module first, then the defs in `syntax.walk` order: the only scopes whose flow can find a reuse (KeyFlow
        skips nested defs, lambdas and classes). Flowing every def of a big test module cost seconds."""
        survey = self._survey
        return [scope for scope in (self.context.module, *survey.defs) if scope in survey.drawing]

    def flow(self, scope: Scope) -> KeyFlow:
        found = self._flows.get(scope)
        if found is None:
            found = self._flows[scope] = KeyFlow(scope, self.consumed_key, self.lax_body(scope), activity_of=self._activity)
        return found

    def flow_with_splits(self, scope: Scope, splits: dict[cst.CSTNode, str], renamed: frozenset[cst.Call]) -> KeyFlow:
        """The flow of `scope` as if `name, subkey = jax.random.split(name)` stood before each line of `splits`
        (line → name) and the calls of `renamed` drew from that fresh `subkey`."""
        return KeyFlow(scope, self.consumed_key, self.lax_body(scope), splits, renamed, self._activity)

    def lax_body(self, scope: Scope) -> LaxBody | None:
        return self._lax_bodies.get(scope) if isinstance(scope, cst.FunctionDef) else None

    @cached_property
    def _survey(self) -> "_Survey":
        """One walk of the module for what the other questions need of every call: the key each call consumes,
        which scopes draw, the defs in walk order, the lax loops. On numpyro's test_distributions.py (134k
        nodes) three walks, one per question, cost 0.5 s of CPU; this one, which skips `syntax.TRIVIA`, 0.12 s."""
        survey = _Survey()
        self._survey_scope(self.context.module, survey)
        return survey

    def _survey_scope(self, scope: Scope, survey: "_Survey") -> None:
        """`_survey` of the nodes under `scope` (a def's decorators, defaults and annotations are its own), a
        nested def surveyed when reached: the defs come in `syntax.walk` order."""
        names = self.context.names
        stack = code_children(scope)
        while stack:
            node = stack.pop()
            kind = type(node)  # LibCST's node classes have no subclasses: an exact type test is enough
            if kind is cst.FunctionDef:
                survey.defs.append(node)
                self._survey_scope(node, survey)
                continue
            if kind is cst.Call:
                func = node.func
                # an attribute's qualified name ends with its own last part: most calls need no resolving
                plain = type(func) is not cst.Attribute or func.attr.value in _LAST_PARTS
                callee = names.callee(node) if plain else None
                if callee in CONSUMERS:
                    key = survey.keys[node] = _key_argument(node)
                    if key is not None:
                        survey.drawing.add(scope)
                else:
                    survey.keys[node] = None
                    if callee in LAX_LOOPS:
                        survey.loops.append((node, callee))
            stack.extend(code_children(node))

    @cached_property
    def _lax_bodies(self) -> dict[cst.FunctionDef, LaxBody]:
        """The defs passed (by name, or through `functools.partial` with positional arguments) as the body of a
        lax loop, with their carry parameter. A def passed to two loops that disagree on it is left out."""
        found: dict[cst.FunctionDef, LaxBody | None] = {}
        for call, construct in self._survey.loops:
            position, keyword, carry_index, pair = LAX_LOOPS[construct]
            positional = [a for a in call.args if a.keyword is None]
            if any(a.star for a in call.args[: position + 1]):
                continue
            argument = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == keyword), None)
            if argument is None and len(positional) > position:
                argument = positional[position].value
            for function, bound in self._functions(argument):
                params = [*function.params.posonly_params, *function.params.params]
                if carry_index + bound >= len(params):
                    continue
                body = LaxBody(construct, params[carry_index + bound].name.value, pair)
                if found.get(function, body) != body:
                    body = None
                found[function] = body
        return {function: body for function, body in found.items() if body is not None}

    def _functions(self, expr: cst.BaseExpression | None) -> list[tuple[cst.FunctionDef, int]]:
        """The defs an argument names, with how many leading parameters `functools.partial` binds."""
        if isinstance(expr, cst.Name):
            scope = self.context.wrapper.resolve(ScopeProvider).get(expr)
            if scope is None:
                return []
            return [(a.node, 0) for a in scope[expr.value] if isinstance(getattr(a, "node", None), cst.FunctionDef)]
        if isinstance(expr, cst.Call) and self.context.names.callee(expr) == _PARTIAL and expr.args:
            if any(a.star for a in expr.args):
                return []
            bound = sum(1 for a in expr.args[1:] if a.keyword is None)
            return [(function, inner + bound) for function, inner in self._functions(expr.args[0].value)]
        return []


@dataclass
class _Survey:
    """What `KeyAnalysis._survey` found in its walk of the module."""

    keys: dict[cst.Call, cst.Name | None] = field(default_factory=dict)  # every call: the key it consumes, or None
    drawing: set = field(default_factory=set)  # the scopes (module or def) with a call that consumes a named key
    defs: list[cst.FunctionDef] = field(default_factory=list)  # in `syntax.walk` order
    loops: list[tuple[cst.Call, str]] = field(default_factory=list)  # the calls of a lax loop, with its name


def _key_argument(call: cst.Call) -> cst.Name | None:
    """The Name a consuming call passes as its key: `key=`, else its first positional argument; None when that
    is not a plain name."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "key":
            return arg.value if isinstance(arg.value, cst.Name) else None
    if call.args and call.args[0].keyword is None and not call.args[0].star:
        value = call.args[0].value
        return value if isinstance(value, cst.Name) else None
    return None
