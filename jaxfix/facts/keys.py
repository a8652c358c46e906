"""Where a JAX PRNG key is consumed, and where a key already consumed is consumed again (reuse), on `ast`.

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
Branches of an `if`/`elif`/`else` and of a conditional expression are exclusive. Only `jax.random` calls count
(`knowledge.jax.KEY_CONSUMERS`): a key passed to any other function (a model's `init`, a helper) is neither a
consumption nor a rebinding, and `jax.random.fold_in(key, i)` and `jax.random.clone` do not consume.

The same flow checks a fix before it is offered (`KeyFacts.flow_with_splits`): it runs again as if
`name, subkey = jax.random.split(name)` stood before the given lines and their draws read the fresh `subkey`,
and the fix holds when the reuse it was for is gone (no draw reads what the inserted split consumed).

Names are the binder's (`facts.binder`), reads and writes `facts.flow`'s; lines are LibCST's (`flow.Lines`:
statements joined by `;` are one line, where one split goes before them all). This replaced a LibCST analysis
(analysis/keys.py), after benchmarks/agreement.py had compared every call's key, reuse, holders and alone on
both, on the examples, the corpus, tests/planted and the 10 real trees: no difference (commit cca40de).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property, cmp_to_key
from typing import Iterable, Sequence, Union

from jaxfix.facts.binder import Binder
from jaxfix.facts.flow import COMPOUND, COMPREHENSIONS, TRIES, Lines, activity, children, target_names, walk
from jaxfix.facts.knowledge.jax import KEY_CONSUMERS, LAX_LOOPS, PARTIAL

_LAST_PARTS = frozenset(name.rsplit(".", 1)[1] for name in (*KEY_CONSUMERS, *LAX_LOOPS))
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_INNER = (ast.Lambda, *COMPREHENSIONS)

Scope = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.Module]


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
    use: ast.Call
    previous: frozenset[ast.Call]
    in_comprehension: bool = False  # `use` sits in a comprehension's element: consumed again for each item
    # the calls of `previous` that consumed the key in the step before of a lax loop, whose body returned it
    carried: frozenset[ast.Call] = frozenset()


@dataclass(frozen=True)
class _Carried:
    """A consumption in the previous step of a lax loop, brought back by the carry."""

    call: object


@dataclass(frozen=True)
class _Split:
    """The split a fix would put before `line` (the fix's check: `KeyFacts.flow_with_splits`)."""

    line: ast.stmt


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
    return isinstance(node, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in node.elts)


def _bindings(target, value) -> list[tuple[str, str | None]]:
    """What `target = value` binds: (path, the path whose value it takes, or None for a fresh value).
    `target` and `value` are nodes or paths (the parts of an unpacked name)."""
    source = value if isinstance(value, str) else value.id if isinstance(value, ast.Name) else None
    if isinstance(target, (str, ast.Name)):
        path = target if isinstance(target, str) else target.id
        pairs: list[tuple[str, str | None]] = [(path, source)]
        if source is None and _plain_sequence(value):
            for index, element in enumerate(value.elts):
                pairs += _bindings(f"{path}[{index}]", element)
        return pairs
    if _plain_sequence(target):
        parts = target.elts
        if _plain_sequence(value) and len(value.elts) == len(parts):
            return [pair for part, element in zip(parts, value.elts) for pair in _bindings(part, element)]
        if source is not None:
            return [pair for index, part in enumerate(parts) for pair in _bindings(part, f"{source}[{index}]")]
    return [(name, None) for name in target_names(target)]


class KeyFlow:
    """The key reuses of one function body (or module body): `reuses`, in source order of the second use."""

    def __init__(
        self,
        facts: "KeyFacts",
        scope: Scope,
        body: LaxBody | None = None,
        splits: dict[ast.stmt, str] | None = None,
        renamed: frozenset[ast.Call] = frozenset(),
    ) -> None:
        """`body`: the scope is a lax loop's body. `splits` and `renamed`: run as if a fix had put
        `name, subkey = jax.random.split(name)` before each line of `splits` (by its first statement) and the
        calls of `renamed` drew from their fresh `subkey`."""
        self._facts = facts
        self._key_of = facts.consumed_key
        self.body = body
        self._splits = splits or {}
        self._renamed = renamed
        self._found: dict[object, tuple[str, frozenset, bool]] = {}
        self._holders: dict[ast.Call, frozenset[str]] = {}
        self._shared: set[ast.Call] = set()
        self._loops: list[_Frame] = []
        self._try: list[list[_State]] = []
        self._line_start: _State | None = None
        statements = scope.body
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
            if isinstance(use, ast.Call)
        ]

    def reads_a_split(self, use: ast.Call, line: ast.stmt | None = None) -> bool:
        """In a flow run with `splits`: whether `use` may consume a key value that one of the splits consumed.
        Where `use` is itself one of `renamed`, pass its `line`: the split before that line stands for it."""
        found = self._found.get(_Split(line) if line is not None else use)
        return found is not None and any(isinstance(_base(p), _Split) for p in found[1])

    def holders(self, call: ast.Call) -> frozenset[str]:
        """The names that, wherever the line holding `call` starts, hold the key value `call` consumes."""
        return self._holders.get(call, frozenset())

    def alone(self, call: ast.Call) -> bool:
        """Whether, wherever the line holding `call` starts, the key `call` consumes is held by its own name
        only (no alias, no tuple or carry it is a part of)."""
        return call in self._holders and call not in self._shared

    # ---- statements ----------------------------------------------------------------------------------------

    def _record(self, state: _State | None) -> None:
        if state is not None:
            for collector in self._try:
                collector.append(state)

    def _block(self, statements: Sequence[ast.stmt], state: _State | None) -> _State | None:
        for kind, line in self._facts.lines.group(statements):
            if state is None:
                return None
            state = self._line(kind, line, state) if kind != "compound" else self._statement(line[0], state)
            self._record(state)
        return state

    def _line(self, kind: str, line: list[ast.stmt], state: _State) -> _State | None:
        """A line of simple statements (or a one-line suite, where no split can go before it)."""
        split = self._splits.get(line[0])
        if split is not None:
            state = self._consume(split, _Split(line[0]), state).clear([split])
        self._line_start = state if kind == "line" else None
        try:
            for small in line:
                state = self._small(small, state)
                if state is None:
                    return None
            return state
        finally:
            self._line_start = None

    def _statement(self, stmt: ast.stmt, state: _State) -> _State | None:
        kind = type(stmt)
        if kind is ast.If:
            state = self._expr(stmt.test, state)
            body = self._block(stmt.body, state)
            if not stmt.orelse:
                return _merge(body, state)
            orelse = stmt.orelse
            if len(orelse) == 1 and type(orelse[0]) is ast.If and self._facts.lines.is_elif(orelse[0]):
                return _merge(body, self._statement(orelse[0], state))
            return _merge(body, self._block(orelse, state))
        if kind is ast.For or kind is ast.AsyncFor:
            entry = self._expr(stmt.iter, state)
            names = target_names(stmt.target)
            return self._loop(stmt, entry, lambda s: s.clear(names), None)
        if kind is ast.While:
            return self._loop(stmt, state, None, stmt.test)
        if kind is ast.With or kind is ast.AsyncWith:
            for item in stmt.items:
                state = self._expr(item.context_expr, state)
                if item.optional_vars is not None:
                    state = state.clear(target_names(item.optional_vars))
            return self._block(stmt.body, state)
        if kind in TRIES:
            collector: list[_State] = [state]
            self._try.append(collector)
            end = self._block(stmt.body, state)
            self._try.pop()
            raised: _State | None = None
            memo: dict = {}
            for seen in collector:
                raised = _merge(raised, seen, memo)
            outcomes: _State | None = None
            for handler in stmt.handlers:
                names = [handler.name] if handler.name is not None else []
                entry = raised.clear(names) if raised is not None else None
                outcomes = _merge(outcomes, self._block(handler.body, entry))
            normal = self._block(stmt.orelse, end) if stmt.orelse else end
            outcomes = _merge(outcomes, normal)
            if stmt.finalbody:
                outcomes = self._block(stmt.finalbody, outcomes)
            return outcomes
        # def, class (their bodies are other scopes), match and anything else: only what they bind counts
        return state.clear(self._facts.activity(stmt).writes)

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
            end = self._block(loop.body, body_entry)
            self._loops.pop()
            new_head = entry
            memo: dict = {}
            for other in (end, *frame.continues):
                new_head = _merge(new_head, other, memo)
            if _same(new_head, head):
                break
            head = new_head
        after = self._expr(test, head) if test is not None else head
        if loop.orelse:
            after = self._block(loop.orelse, after)
        for other in frame.breaks:
            after = _merge(after, other)
        return after

    def _small(self, small: ast.stmt, state: _State) -> _State | None:
        kind = type(small)
        if kind is ast.Break:
            if self._loops:
                self._loops[-1].breaks.append(state)
            return None
        if kind is ast.Continue:
            if self._loops:
                self._loops[-1].continues.append(state)
            return None
        if kind is ast.Return or kind is ast.Raise:
            for child in children(small):
                state = self._expr(child, state)
            if kind is ast.Return and self.body is not None:
                self._return(small.value, state)
            return None
        bindings: list[tuple[str, str | None]] = []
        if kind is ast.Assign:
            state = self._expr(small.value, state)
            for target in small.targets:
                bindings += _bindings(target, small.value)
        elif kind is ast.AugAssign or kind is ast.AnnAssign:
            if small.value is not None:
                state = self._expr(small.value, state)
                if kind is ast.AnnAssign:
                    bindings = _bindings(small.target, small.value)
        else:
            for child in children(small):
                state = self._expr(child, state)
        act = self._facts.activity(small)
        bound = {path for path, _ in bindings}
        state = state.bind(bindings)
        return state.clear([name for name in (*act.writes, *act.deletes) if name not in bound])

    def _return(self, value: ast.expr | None, state: _State) -> None:
        """What the carry returned here holds, by path of the carry parameter."""
        body = self.body
        assert body is not None
        if value is None:
            return
        if body.pair:
            if not _plain_sequence(value) or len(value.elts) != 2:
                return  # no carry that can be read
            value = value.elts[0]
        self._project(state, value, body.carry)

    def _project(self, state: _State, expr: ast.expr, path: str) -> None:
        if _plain_sequence(expr):
            for index, element in enumerate(expr.elts):
                self._project(state, element, f"{path}[{index}]")
        elif isinstance(expr, ast.Name):
            name = expr.id
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

    def _expr(self, node: ast.AST, state: _State) -> _State:
        kind = type(node)
        if kind is ast.Lambda:
            return state  # another scope: runs later, if at all
        if kind in COMPREHENSIONS:
            return self._comprehension(node, state)
        if kind is ast.IfExp:
            state = self._expr(node.test, state)
            return _merge(self._expr(node.body, state), self._expr(node.orelse, state))
        if kind is ast.NamedExpr:
            state = self._expr(node.value, state)
            return state.bind(_bindings(node.target, node.value))
        for child in children(node):
            state = self._expr(child, state)
        if kind is ast.Call and node not in self._renamed:
            key = self._key_of(node)
            if key is not None:
                name = key.id
                if self._line_start is not None:
                    holders = self._line_start.holders(state.token(name))
                    if self._line_start.token(name) == state.token(name):
                        holders.add(name)
                    known = self._holders.get(node)
                    self._holders[node] = frozenset(holders) if known is None else known & holders
                    token = state.token(name)
                    shared = (
                        isinstance(token, tuple) and (token[0] == "item" or token[1] != name)  # a part, another's
                        or any(t == token for path, t in self._line_start.tokens.items() if path != name)
                    )
                    if shared:
                        self._shared.add(node)
                state = self._consume(name, node, state)
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
        generators = node.generators
        state = self._expr(generators[0].iter, state)
        bound: set[str] = set()
        per_item: list[ast.AST] = []
        for index, generator in enumerate(generators):
            bound.update(target_names(generator.target))
            if index:
                per_item.append(generator.iter)
            per_item.extend(generator.ifs)
        per_item.extend([node.key, node.value] if type(node) is ast.DictComp else [node.elt])
        for part in per_item:
            inner = _inside_scopes(part)
            for call in walk(part):
                if type(call) is ast.Call:
                    key = self._key_of(call)
                    if key is not None and key.id not in bound and id(call) not in inner:
                        # consumed once per item, the same value of the name each time: a reuse with itself
                        state = self._consume(key.id, call, state, comprehension=True)
                        state = self._consume(key.id, call, state, comprehension=True)
        return state


def _inside_scopes(root: ast.AST) -> set[int]:
    """id() of the nodes inside a lambda or nested comprehension within `root` (not evaluated per item here)."""
    found: set[int] = set()
    for node in walk(root):
        if node is not root and isinstance(node, _INNER) and id(node) not in found:
            found.update(id(inner) for inner in walk(node))
    return found


class KeyFacts:
    """Key reuses per function of one module, with `jax.random` resolved through the module's imports (the
    binder), memoized: the flows, the activity of each statement, the lines of each block."""

    def __init__(self, binder: Binder, text: str) -> None:
        self.binder = binder
        self.tree = binder.tree
        self.lines = Lines(text)
        self._flows: dict[ast.AST, KeyFlow] = {}
        self._activities: dict[ast.AST, object] = {}

    def activity(self, node: ast.stmt):
        """`flow.activity`, once per statement: a fix's check runs the flow of a scope again."""
        found = self._activities.get(node)
        if found is None:
            found = self._activities[node] = activity(node)
        return found

    def consumed_key(self, call: ast.Call) -> ast.Name | None:
        """The Name a `jax.random` call consumes as its key (first positional argument or `key=`), or None (also
        for a call outside the module)."""
        return self._survey.keys.get(call)

    def drawing_scopes(self) -> list[Scope]:
        """The module and the defs with a call that consumes a named key as their own (not a nested def's), the
        module first, then the defs in `flow.walk` order: the only scopes whose flow can find a reuse (KeyFlow
        skips nested defs, lambdas and classes)."""
        return self._survey.drawing

    def reuses(self) -> Iterable[tuple[Scope, KeyFlow]]:
        """Each drawing scope with a reuse, with its flow."""
        for scope in self.drawing_scopes():
            flow = self.flow(scope)
            if flow.reuses:
                yield scope, flow

    def flow(self, scope: Scope) -> KeyFlow:
        found = self._flows.get(scope)
        if found is None:
            found = self._flows[scope] = KeyFlow(self, scope, self.lax_body(scope))
        return found

    def flow_with_splits(self, scope: Scope, splits: dict[ast.stmt, str], renamed: frozenset[ast.Call]) -> KeyFlow:
        """The flow of `scope` as if `name, subkey = jax.random.split(name)` stood before each line of `splits`
        (its first statement → name) and the calls of `renamed` drew from that fresh `subkey`."""
        return KeyFlow(self, scope, self.lax_body(scope), splits, renamed)

    def lax_body(self, scope: Scope) -> LaxBody | None:
        return self._lax_bodies.get(scope) if isinstance(scope, _FUNCTIONS) else None

    def line_of(self, call: ast.Call) -> ast.stmt | None:
        """The first statement of the line that holds `call`, where a split can go right before it: None in a
        compound statement's header, a lambda, a comprehension or a one-line suite."""
        node = self.binder.parent(call)
        while node is not None and not isinstance(node, ast.stmt):
            if isinstance(node, _INNER):
                return None
            node = self.binder.parent(node)
        if node is None or isinstance(node, COMPOUND):
            return None
        return self._line_starts.get(node)

    def line_statements(self, first: ast.stmt) -> list[ast.stmt]:
        """The statements of the line that `first` starts."""
        return self._lines_by_first[first]

    @cached_property
    def _lines_by_first(self) -> dict[ast.stmt, list[ast.stmt]]:
        found: dict[ast.stmt, list[ast.stmt]] = {}
        for node in (self.tree, *self.binder.nodes_of(*COMPOUND), *self.binder.nodes_of(ast.ExceptHandler)):
            for name in ("body", "orelse", "finalbody"):
                block = getattr(node, name, None)
                if isinstance(block, list):
                    found.update((line[0], line) for kind, line in self.lines.group(block) if kind == "line")
        for case in self.binder.nodes_of(getattr(ast, "match_case", ast.ExceptHandler)):
            found.update((line[0], line) for kind, line in self.lines.group(case.body) if kind == "line")
        return found

    @cached_property
    def _line_starts(self) -> dict[ast.stmt, ast.stmt]:
        return {statement: first for first, line in self._lines_by_first.items() for statement in line}

    @cached_property
    def _survey(self) -> "_Survey":
        """One pass over the binder's calls for what the other questions need: the key each consuming call
        takes, which scopes draw (a def's own: its decorators, defaults and annotations are its, as a nested
        def's body is not), the lax loops."""
        survey = _Survey()
        callee = self.binder.callee
        drawing: set[ast.AST] = set()
        for call in self.binder.calls:
            func = call.func
            # an attribute's qualified name ends with its own last part: most calls need no resolving
            if type(func) is ast.Attribute and func.attr not in _LAST_PARTS:
                continue
            name = callee(call)
            if name in KEY_CONSUMERS:
                key = survey.keys[call] = _key_argument(call)
                if key is not None:
                    drawing.add(self._owner(call))
            elif name in LAX_LOOPS:
                survey.loops.append((call, name))
        defs = sorted((scope for scope in drawing if scope is not self.tree), key=_start)
        survey.drawing = [self.tree] if self.tree in drawing else []
        survey.drawing += sorted(defs, key=cmp_to_key(self._walk_order))
        return survey

    def _owner(self, node: ast.AST) -> Scope:
        """The innermost def that holds `node` (in its body, decorators, defaults or annotations), or the module."""
        parent = self.binder.parent
        node = parent(node)
        while node is not None and not isinstance(node, _FUNCTIONS):
            node = parent(node)
        return self.tree if node is None else node

    def _walk_order(self, a: ast.AST, b: ast.AST) -> int:
        """`flow.walk`'s order of two defs (LibCST's, in which fresh names are handed out): a def before those
        nested in it, else the later one first."""
        if self._encloses(a, b):
            return -1
        if self._encloses(b, a):
            return 1
        return -1 if _start(a) > _start(b) else 1

    def _encloses(self, outer: ast.AST, inner: ast.AST) -> bool:
        node = self.binder.parent(inner)
        while node is not None and node is not outer:
            node = self.binder.parent(node)
        return node is outer

    @cached_property
    def _lax_bodies(self) -> dict[ast.AST, LaxBody]:
        """The defs passed (by name, or through `functools.partial` with positional arguments) as the body of a
        lax loop, with their carry parameter. A def passed to two loops that disagree on it is left out."""
        found: dict[ast.AST, LaxBody | None] = {}
        for call, construct in self._survey.loops:
            position, keyword, carry_index, pair = LAX_LOOPS[construct]
            arguments = _arguments(call)
            if any(star for _, star, _ in arguments[: position + 1]):
                continue
            positional = [value for name, _, value in arguments if name is None]
            argument = next((value for name, _, value in arguments if name == keyword), None)
            if argument is None and len(positional) > position:
                argument = positional[position]
            for function, bound in self._functions(argument):
                arguments_of = function.args
                params = [*arguments_of.posonlyargs, *arguments_of.args]
                if carry_index + bound >= len(params):
                    continue
                body = LaxBody(construct, params[carry_index + bound].arg, pair)
                if found.get(function, body) != body:
                    body = None
                found[function] = body
        return {function: body for function, body in found.items() if body is not None}

    def _functions(self, expr: ast.AST | None) -> list[tuple[ast.AST, int]]:
        """The defs an argument names, with how many leading parameters `functools.partial` binds."""
        if isinstance(expr, ast.Name):
            scope = self.binder.scope_of.get(expr)
            if scope is None:
                return []
            return [(b.node, 0) for b in scope.resolve(expr.id) if isinstance(b.node, _FUNCTIONS)]
        if isinstance(expr, ast.Call) and self.binder.callee(expr) == PARTIAL and (expr.args or expr.keywords):
            arguments = _arguments(expr)
            if any(star for _, star, _ in arguments):
                return []
            bound = sum(1 for name, _, _ in arguments[1:] if name is None)
            return [(function, inner + bound) for function, inner in self._functions(arguments[0][2])]
        return []


def _start(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _arguments(call: ast.Call) -> list[tuple[str | None, bool, ast.AST]]:
    """A call's arguments in source order, as LibCST lists them: (keyword or None, starred, value)."""
    found = [(None, isinstance(a, ast.Starred), a.value if isinstance(a, ast.Starred) else a) for a in call.args]
    if call.keywords:
        found += [(k.arg, k.arg is None, k.value) for k in call.keywords]
        nodes = [*call.args, *call.keywords]
        order = sorted(range(len(nodes)), key=lambda i: (nodes[i].lineno, nodes[i].col_offset))
        found = [found[i] for i in order]
    return found


@dataclass
class _Survey:
    """What `KeyFacts._survey` found in its walk of the module."""

    keys: dict[ast.Call, ast.Name | None] = field(default_factory=dict)  # each consuming call: its key, or None
    drawing: list = field(default_factory=list)  # the module and the defs with a consuming call with a named key
    loops: list[tuple[ast.Call, str]] = field(default_factory=list)  # the calls of a lax loop, with its name


def _key_argument(call: ast.Call) -> ast.Name | None:
    """The Name a consuming call passes as its key: `key=`, else its first positional argument; None when that
    is not a plain name."""
    for keyword in call.keywords:
        if keyword.arg == "key":
            return keyword.value if isinstance(keyword.value, ast.Name) else None
    first = _arguments(call)[0] if call.args or call.keywords else None
    if first is not None and first[0] is None and not first[1]:
        return first[2] if isinstance(first[2], ast.Name) else None
    return None
