"""JF701: a PRNG key consumed twice (two draws, a draw and a split, a draw in every loop iteration)."""

from __future__ import annotations

import ast

import libcst as cst

from jaxfix.analysis.dataflow import block_activity, body_statements
from jaxfix.analysis.keys import CONSUMERS, LAX_LOOPS, KeyFlow, Reuse
from jaxfix.analysis.screen import once_per_screen, ast_children
from jaxfix.analysis.syntax import param_names, walk
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Safety

_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


class PrngKeyReuse(Codemod):
    """A JAX PRNG key passed to two random draws with no split in between.

    ## What it does
    Finds a key that a `jax.random` call consumes when an earlier `jax.random` call may already have consumed
    the same value of it: two draws from one key, a draw after `jax.random.split(key)` from the key that was
    split, a draw in a loop body that never gives the key a new value (every iteration draws the same numbers),
    or a draw inside a list comprehension's element. Paths are followed: draws in exclusive branches
    (`if`/`elif`/`else`, `a if c else b`) are not a reuse, and a rebinding of the name
    (`key, subkey = jax.random.split(key)`) starts a fresh key.

    Values are followed, not only names: after `rng = key` (or `a, b = key, key`, or `state = (obs, key)` and
    later `obs, rng = state`) both names hold one key, and a draw from each is a reuse. The body of a
    `jax.lax.scan`, `jax.lax.fori_loop` or `jax.lax.while_loop` (a def passed by name, or through
    `functools.partial`) runs again with the carry it returns: a body that draws from the key in its carry and
    returns that same key draws the same numbers at every step, which is reported at the draw.

    ## Why is this bad?
    JAX's random numbers are a pure function of the key: the same key gives the same numbers.
    `x = jax.random.normal(key, (3,))` and `y = jax.random.normal(key, (3,))` are equal, element for element
    (`tests/test_corpus.py::test_identical_values_become_independent` checks it on every positive corpus case:
    the original's draws are identical, the rewrite's differ). Draws of other distributions or shapes from one key are computed from the
    same random bits and are correlated; a noise term drawn in a loop from a key the loop never advances adds
    the same noise at every step. Nothing fails: the model silently trains on correlated randomness.

    ## Example
    ```python
    key = jax.random.key(0)
    x = jax.random.normal(key, (3,))
    y = jax.random.normal(key, (3,))  # y == x
    ```

    ## Use instead
    ```python
    key = jax.random.key(0)
    key, subkey = jax.random.split(key)
    x = jax.random.normal(subkey, (3,))
    y = jax.random.normal(key, (3,))
    ```

    ## Fix safety
    Unsafe, by nature: the fix changes the numbers drawn, and that is its point. It inserts
    `key, subkey = jax.random.split(key)` before the earlier use and hands that use `subkey`, so each use sees a
    key of its own (three uses take two passes, each adding one split; in a loop the split goes in the body and
    the key advances each iteration; in a lax loop's body the name split is the one the body returns, so the
    carry takes the key the split leaves over). Where the key has two names, the name split is the one the
    later use reads (`rng = key`, a draw from `key`, a draw from `rng`: `rng, subkey = jax.random.split(rng)`
    goes before the first draw, which draws from `subkey`). Before it is offered, the fix is checked: the
    analysis runs again with the split in place, and the fix is dropped unless the later use then reads a key
    that nothing consumed. The equivalence check does not apply to it: `jaxfix verify PATH` leaves its rewrites
    out, and `apply --verify` (which keeps only verified rewrites) drops them; apply it with `--unsafe-fixes`.
    It is the one fix that **computes different numbers** on purpose, so nothing can check it against the
    original; its message says which earlier use consumed the key.

    It is reported without a fix when the earlier use is in a loop's or `with`'s header, a lambda or a
    comprehension, when it may come from more than one place and one of them cannot take a split, when the name
    is not a local of the function (a global, a `nonlocal`, or captured by a nested function, which would see
    the rebinding), and when no split can reach the later use: a lax loop's body that returns the carry it was
    given (`return carry, y`) or a tuple built before the draw (return the key that `jax.random.split` leaves
    over instead), or a key that reaches the later use through an alias a split would not rebind. A lax body
    with such a reuse gets no fix for its other reuses either: splitting within one step would leave every
    step drawing the same numbers.

    ## When it stays quiet
    - Draws in exclusive branches, each using the key once; a key rebound between two draws.
    - Keys passed to anything but `jax.random` (a model's `init`, a helper function): jaxfix does not follow
      them into the callee. `jax.random.fold_in(key, i)` (deriving keys with distinct data) and
      `jax.random.clone(key)` (reuse on purpose) do not consume the key.
    - Keys held in attributes or containers (`self.key`, `keys[0]`, a dict); tuples built and unpacked with
      names are followed.
    - A name that holds the key on some paths only (`k = key` in one branch of an `if`): only names that hold
      the same key on every path count as one key.
    - The body of a lax loop passed as a lambda, a method or anything but a def's name: it is analysed as a
      function of its own, without its carry.
    """

    code = "JF701"
    name = "prng-key-reuse"
    summary = "PRNG key consumed twice with no split in between (identical or correlated draws): split it"
    fix_safety = Safety.UNSAFE
    changes_values = True  # independent draws are the point: there is nothing to verify against
    screen = ("random",)

    VALID = (
        Valid(
            "import jax\n\nkey = jax.random.key(0)\nkey, subkey = jax.random.split(key)\n"
            "x = jax.random.normal(subkey, (3,))\ny = jax.random.normal(key, (3,))\n"
        ),
        Valid(
            "import jax\n\ndef f(key, flag):\n    if flag:\n        return jax.random.normal(key, (3,))\n"
            "    else:\n        return jax.random.uniform(key, (3,))\n"
        ),
        Valid(
            "import jax\n\ndef f(key, n):\n    out = []\n    for _ in range(n):\n"
            "        key, subkey = jax.random.split(key)\n        out.append(jax.random.normal(subkey))\n    return out\n"
        ),
        Valid(
            "import jax\n\ndef f(key, model):\n    params = model.init(key)\n    return jax.random.normal(key, (3,)), params\n"
        ),
        Valid(
            "import jax\n\ndef rollout(key, xs):\n    def step(carry, x):\n        obs, key = carry\n"
            "        key, subkey = jax.random.split(key)\n        obs = obs + jax.random.normal(subkey)\n"
            "        return (obs, key), obs\n    return jax.lax.scan(step, (0.0, key), xs)\n"
        ),
        Valid(
            "import jax\n\ndef f(key):\n    seed_key = key\n    key, subkey = jax.random.split(key)\n"
            "    return jax.random.normal(subkey), jax.random.normal(key), jax.random.key_data(seed_key)\n"
        ),
    )
    INVALID = (
        Invalid(
            "import jax\n\nkey = jax.random.key(0)\nx = jax.random.normal(key, (3,))\ny = jax.random.normal(key, (3,))\n",
            "import jax\n\nkey = jax.random.key(0)\nkey, subkey = jax.random.split(key)\n"
            "x = jax.random.normal(subkey, (3,))\ny = jax.random.normal(key, (3,))\n",
            message="already consumed",
        ),
        Invalid(
            "from jax import random\n\ndef noisy(x, key, steps):\n    for _ in range(steps):\n"
            "        x = x + random.normal(key, x.shape)\n    return x\n",
            "from jax import random\n\ndef noisy(x, key, steps):\n    for _ in range(steps):\n"
            "        key, subkey = random.split(key)\n        x = x + random.normal(subkey, x.shape)\n    return x\n",
            message="every iteration",
        ),
        Invalid(
            "import jax\n\ndef f(key):\n    return [jax.random.normal(key, (2,)) for _ in range(3)]\n",
            None,
            message="comprehension",
        ),
        Invalid(
            "import jax\n\ndef rollout(key, xs):\n    def step(carry, x):\n        obs, key = carry\n"
            "        obs = obs + jax.random.normal(key)\n        return (obs, key), obs\n"
            "    return jax.lax.scan(step, (0.0, key), xs)\n",
            "import jax\n\ndef rollout(key, xs):\n    def step(carry, x):\n        obs, key = carry\n"
            "        key, subkey = jax.random.split(key)\n        obs = obs + jax.random.normal(subkey)\n"
            "        return (obs, key), obs\n    return jax.lax.scan(step, (0.0, key), xs)\n",
            message="every step of `jax.lax.scan`",
        ),
        Invalid(
            "import jax\n\ndef rollout(key, xs):\n    def step(carry, x):\n        obs, key = carry\n"
            "        obs = obs + jax.random.normal(key)\n        return carry, obs\n"
            "    return jax.lax.scan(step, (0.0, key), xs)\n",
            None,
            message="cannot change the key the body hands back",
        ),
        Invalid(
            "import jax\n\ndef init(key):\n    rng = key\n    w = jax.random.normal(key, (3,))\n"
            "    return w, jax.random.normal(rng, (3,))\n",
            "import jax\n\ndef init(key):\n    rng = key\n    rng, subkey = jax.random.split(rng)\n"
            "    w = jax.random.normal(subkey, (3,))\n    return w, jax.random.normal(rng, (3,))\n",
            message="holds the same key as `key`",
        ),
    )

    @classmethod
    def may_match_tree(cls, screen) -> bool:
        """A finding needs a reuse that `_ScreenFlow` (KeyFlow with names for calls and tokens) finds in the
        module body or a function that has a call that may be a consuming `jax.random` function with a name as
        its key."""
        calls = [n for n in screen.imported_calls if _screen_key(screen, n) is not None]
        if not calls:
            return False
        # each call's innermost def (or the module), by position: defs nest, so the one that starts last
        defs = [(n.lineno, n.col_offset, n.end_lineno, n.end_col_offset, n) for n, _ in screen.statements
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        scopes: dict[int, ast.AST] = {}
        for call in calls:
            where = (call.lineno, call.col_offset)
            around = [d for d in defs if (d[0], d[1]) <= where < (d[2], d[3])]
            scope = max(around, key=lambda d: (d[0], d[1]))[4] if around else screen.tree
            scopes[id(scope)] = scope
        bodies = _lax_body_names(screen)
        return any(_ScreenFlow(screen, scope, bodies).found for scope in scopes.values())

    def visit_Module(self, node: cst.Module) -> None:
        for scope in self.context.keys.drawing_scopes():
            flow = self.context.keys.flow(scope)
            # in the order of the splits' places, so that fresh names number down the file
            reuses = sorted(flow.reuses, key=lambda r: (min(self._line(p) for p in r.previous), self._line(r.use)))
            plans = [(reuse, *self._split_name(scope, flow, reuse)) for reuse in reuses]
            # a lax body that hands a consumed key back as its carry draws the same numbers at every step
            # whatever is split within one step: no fix in it unless that one can be fixed too
            stuck = [reuse for reuse, split, _ in plans if split is None and reuse.carried]
            for reuse, split, blocker in plans:
                if split is not None and stuck:
                    line = self._line(stuck[0].use)[0]
                    split, blocker = None, (
                        f"the body hands a consumed key back as the carry (see line {line}), so every step would "
                        f"still draw the same numbers; fix that first"
                    )
                self._report(flow, reuse, split, blocker)

    def _line(self, node: cst.CSTNode) -> tuple[int, int]:
        where = self.context.positions[node].start
        return where.line, where.column

    def _report(self, flow: KeyFlow, reuse: Reuse, split: str | None, blocker: str) -> None:
        here = self._line(reuse.use)
        callee = self.context.code_for(reuse.use.func)
        construct = f"`{flow.body.construct}`" if flow.body is not None else "the lax loop"
        others = sorted({self._consumed(p) for p in reuse.previous} - {reuse.name})
        lines = sorted({self._line(p)[0] for p in reuse.previous})
        if reuse.in_comprehension:
            how = f"is consumed again for every item of the comprehension (the same `{reuse.name}` each time)"
        elif reuse.use in reuse.carried:
            how = (
                f"is consumed again at every step of {construct}: the body returns the key it drew from, "
                f"unsplit, as the carry"
            )
        elif reuse.use in reuse.previous:
            how = f"is consumed again in every iteration of the loop: nothing in it gives `{reuse.name}` a new key"
        else:
            later = {self._line(p)[0] for p in reuse.previous if self._line(p) > here and p not in reuse.carried}
            steps = {self._line(p)[0] for p in reuse.carried} - {self._line(p)[0] for p in reuse.previous - reuse.carried}
            where = ", ".join(
                f"{n} (previous step of {construct})" if n in steps else f"{n} (previous iteration)" if n in later else str(n)
                for n in lines
            )
            held = f" (it holds the same key as {', '.join(f'`{o}`' for o in others)})" if others else ""
            how = f"was already consumed on line{'s' if len(lines) > 1 else ''} {where} with no split in between{held}"
        message = (
            f"PRNG key `{reuse.name}` passed to `{callee}` {how}: the draws repeat or correlate; "
            f"split the key (`jax.random.split`) and give each draw a key of its own"
        )
        if split is None:
            self.report(reuse.use, f"{message}; not fixed: {blocker}")
            return
        self.report(reuse.use, message, self._fix(reuse, split))

    def _consumed(self, call: cst.Call) -> str:
        key = self.context.keys.consumed_key(call)
        return key.value if key is not None else "?"

    def _split_name(self, scope, flow: KeyFlow, reuse: Reuse) -> tuple[str | None, str]:
        """The name to split before the earlier uses, or None and why no split there can give each use a key
        of its own. The name must hold the consumed key where each earlier use's line starts, and the flow
        rerun with the splits in place must find no draw of what a split consumed where `reuse.use` is."""
        if reuse.in_comprehension:
            return None, "a comprehension has no statement to put the split in (draw from `jax.random.split(key, n)` instead)"
        lines = {self._statement(previous) for previous in reuse.previous}
        if None in lines:
            return None, "the earlier use is not in a statement of its own (a loop or `with` header, a lambda, a comprehension)"
        if any(isinstance(n, cst.NamedExpr) for line in lines for n in walk(line)):
            return None, "the earlier use's line binds a name with `:=`"
        holders = frozenset.intersection(*(flow.holders(p) for p in reuse.previous))
        if flow.body is None and all(self._consumed(p) == reuse.name and flow.alone(p) for p in reuse.previous):
            # one name, no alias and no carry: its split leaves it the key that the later use reads (the flow
            # found the reuse on a path where nothing rebinds it), so the check has nothing to add
            blocker = self._local_blocker(scope, reuse.name)
            return (None, blocker) if blocker is not None else (reuse.name, "")
        candidates = list(dict.fromkeys([reuse.name, *sorted(self._consumed(p) for p in reuse.previous), *sorted(holders)]))
        first_blocker = None
        for name in candidates:
            if name not in holders:
                continue
            blocker = self._local_blocker(scope, name)
            if blocker is not None:
                first_blocker = first_blocker or blocker
                continue
            if self._splits_apart(scope, reuse, lines, name):
                return name, ""
        if first_blocker is not None:
            return None, first_blocker
        if not holders:
            return None, (
                "no one name holds the key both where it was consumed before and here (it passes through an alias "
                "bound on one path only); split the key where it is made and hand each draw a key of its own"
            )
        if reuse.carried:
            return None, (
                "a split before the draw cannot change the key the body hands back (it returns the carry it "
                "received, or a tuple built before the draw); return the key that `jax.random.split` leaves over"
            )
        return None, (
            f"a split of {', '.join(f'`{h}`' for h in sorted(holders))} would still leave `{reuse.name}` "
            f"holding the consumed key (an alias); split once and use the pieces"
        )

    def _splits_apart(self, scope, reuse: Reuse, lines, name: str) -> bool:
        """Whether `name, subkey = split(name)` before each earlier use, with those uses drawing from `subkey`,
        leaves `reuse.use` (or the split before it, where it is an earlier use itself) a key not consumed
        before."""
        keys = self.context.keys
        flow = keys.flow_with_splits(scope, {line: name for line in lines}, frozenset(reuse.previous))
        return not flow.reads_a_split(reuse.use, self._statement(reuse.use) if reuse.use in reuse.previous else None)

    def _local_blocker(self, scope, name: str) -> str | None:
        act = self._activity(scope)
        if name in act.declared:
            return f"`{name}` is declared global or nonlocal here"
        if name in act.captured:
            return f"a nested function reads `{name}` and would see the rebinding"
        if isinstance(scope, cst.FunctionDef) and name not in (*param_names(scope.params), *act.writes):
            return f"`{name}` is not a local of `{scope.name.value}`"
        return None

    def _activity(self, scope):
        """What the scope's statements read and bind (one walk per scope: findings share it)."""
        cache = self.__dict__.setdefault("_activities", {})
        found = cache.get(scope)
        if found is None:
            statements = body_statements(scope.body) if isinstance(scope, cst.FunctionDef) else scope.body
            found = cache[scope] = block_activity(statements)
        return found

    def _statement(self, call: cst.Call) -> cst.SimpleStatementLine | None:
        """The simple statement line that holds `call`, when a split can go right before it."""
        parents = self.context.parents
        node = parents.get(call)
        while node is not None and not isinstance(node, cst.SimpleStatementLine):
            if isinstance(node, (*_SCOPES, cst.BaseCompoundStatement, cst.SimpleStatementSuite)):
                return None
            node = parents.get(node)
        return node

    def _fix(self, reuse: Reuse, name: str):
        split, import_spec = self.context.names.expression_for("jax.random.split")
        by_line: dict[cst.SimpleStatementLine, list[cst.Call]] = {}
        for previous in sorted(reuse.previous, key=self._line):  # in source order: it decides the fresh names
            by_line.setdefault(self._statement(previous), []).append(previous)
        changes = []
        subkeys = []
        for line, calls in by_line.items():
            subkey = self.context.fresh_names.take("subkey")
            subkeys.append(subkey)
            keys = {id(self.context.keys.consumed_key(c)) for c in calls}
            new_line = line.visit(_Rename(keys, subkey))
            split_code = f"{name}, {subkey} = {self.context.code_for(split)}({name})"
            split_line = cst.parse_statement(split_code).with_changes(leading_lines=line.leading_lines)
            changes.append((line, cst.FlattenSentinel([split_line, new_line.with_changes(leading_lines=())])))
        description = f"split `{name}` before its earlier use (`{name}, {subkeys[0]} = jax.random.split({name})`)"
        return self.fix(description, changes, add_imports=[import_spec] if import_spec else [])


class _Rename(cst.CSTTransformer):
    """Replaces the given Name nodes (by identity) with `name`."""

    def __init__(self, targets: set[int], name: str) -> None:
        super().__init__()
        self.targets = targets
        self.name = name

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        return cst.Name(self.name) if id(original_node) in self.targets else updated_node


# ---- the screen: KeyFlow on the `ast`, with the names consumed for the calls that consumed them ------------------------

_CONSUMER_NAMES = frozenset(name.rsplit(".", 1)[1] for name in CONSUMERS)
_LAX_LOOP_NAMES = frozenset(name.rsplit(".", 1)[1] for name in LAX_LOOPS)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_TRIES = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)


def _screen_key(screen, call: ast.Call) -> str | None:
    """A superset of KeyAnalysis.consumed_key: the name of the key of a call that may be a consuming jax.random
    function (its `key=`, else its first positional argument)."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr not in _CONSUMER_NAMES:
        return None  # cheaper than resolving: a consumer's last part is its own
    if not screen.may_resolve_to(func, CONSUMERS):
        return None
    for keyword in call.keywords:
        if keyword.arg == "key":
            return keyword.value.id if isinstance(keyword.value, ast.Name) else None
    first = call.args[0] if call.args else None
    return first.id if isinstance(first, ast.Name) else None


def _bound(target: ast.AST | None) -> list[str]:
    """syntax.target_names on the `ast`: the names an assignment target binds."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for element in target.elts for n in _bound(element)]
    if isinstance(target, ast.Starred):
        return _bound(target.value)
    return []


def _union(a: frozenset | None, b: frozenset | None) -> frozenset | None:
    if a is None:
        return b
    if b is None:
        return a
    return a | b


class _ScreenFlow:
    """KeyFlow (keys.py) over one scope's `ast`, with the state cut down to the names whose current value some
    call may have consumed: KeyFlow's state gives names tokens and tokens sets of calls, and a reuse is a
    consumption of a name whose token's set is not empty, so those names are all it needs. It may find more
    than KeyFlow (never less): it clears a name only where KeyFlow surely does (assignment, `for`, `with` and
    `except` targets; not `:=`, imports or `del`), takes every call in a comprehension's per-item parts, and
    takes any callee that may resolve to a consuming function. Names that KeyFlow may give one token (every
    name of an assignment between names and tuples of names, in the whole scope) form a group: consuming one
    marks the group, and a name bound to names of which one is marked is marked. A def that may be a lax
    loop's body and returns a marked name runs again with all its parameters marked (KeyFlow starts its carry
    with the consumptions of the names it returns, so with none where no returned name is marked)."""

    def __init__(self, screen, scope: ast.AST, bodies: frozenset[str] = frozenset()) -> None:
        self.screen = screen
        self.found = False
        self._loops: list[tuple[list, list]] = []  # (breaks, continues) per loop
        self._try: list[list] = []
        self._groups = _alias_groups(screen, scope)
        self._body = isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and scope.name in bodies
        self._returns_marked = False  # a lax body returns a name whose value may have been consumed
        try:
            self._block(scope.body, frozenset())
            if self._returns_marked:
                # KeyFlow runs such a body again with the consumptions its carry returned: mark every parameter
                arguments = scope.args
                entry = frozenset(
                    a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg)
                    if a is not None
                )
                self._block(scope.body, entry.union(*(self._groups.get(name, ()) for name in entry)))
        except _Found:
            self.found = True

    def _bind_values(self, state: frozenset, targets: list[str], value: ast.AST | None) -> frozenset:
        """`targets = value`: fresh, unless a name of `value` (a name or tuple of names) is marked."""
        state = state - set(targets)
        if any(name in state for name in _value_names(value)):
            state = state | set(targets)
        return state

    def _record(self, state) -> None:
        if state is not None:
            for collector in self._try:
                collector.append(state)

    def _block(self, statements, state):
        for statement in statements:
            if state is None:
                return None
            state = self._statement(statement, state)
            self._record(state)
        return state

    def _statement(self, stmt: ast.stmt, state: frozenset):
        if isinstance(stmt, ast.If):
            state = self._expr(stmt.test, state)
            return _union(self._block(stmt.body, state), self._block(stmt.orelse, state) if stmt.orelse else state)
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            names = _bound(stmt.target)
            return self._loop(stmt, self._expr(stmt.iter, state), lambda s: s - set(names), None)
        if isinstance(stmt, ast.While):
            return self._loop(stmt, state, None, stmt.test)
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                state = self._expr(item.context_expr, state) - set(_bound(item.optional_vars))
            return self._block(stmt.body, state)
        if isinstance(stmt, _TRIES):
            collector = [state]
            self._try.append(collector)
            end = self._block(stmt.body, state)
            self._try.pop()
            raised = frozenset().union(*collector)
            outcomes = None
            for handler in stmt.handlers:
                entry = raised - {handler.name} if handler.name else raised
                outcomes = _union(outcomes, self._block(handler.body, entry))
            outcomes = _union(outcomes, self._block(stmt.orelse, end) if stmt.orelse else end)
            return self._block(stmt.finalbody, outcomes) if stmt.finalbody else outcomes
        if isinstance(stmt, (ast.Break, ast.Continue)):
            if self._loops:
                self._loops[-1][0 if isinstance(stmt, ast.Break) else 1].append(state)
            return None
        if isinstance(stmt, (ast.Return, ast.Raise)):
            for child in ast_children(stmt):
                state = self._expr(child, state)
            if self._body and isinstance(stmt, ast.Return) and stmt.value is not None:
                self._returns_marked |= any(name in state for name in _value_names(stmt.value))
            return None
        if isinstance(stmt, ast.Assign):
            return self._bind_values(self._expr(stmt.value, state), [n for t in stmt.targets for n in _bound(t)], stmt.value)
        if isinstance(stmt, ast.AnnAssign):
            if stmt.value is None:
                return state
            return self._bind_values(self._expr(stmt.value, state), _bound(stmt.target), stmt.value)
        if isinstance(stmt, ast.AugAssign):
            return self._expr(stmt.value, state) - set(_bound(stmt.target))
        if isinstance(stmt, (ast.Expr, ast.Assert, ast.Delete)):
            for child in ast_children(stmt):
                state = self._expr(child, state)
            return state
        return state  # def, class, match (KeyFlow reads none of their expressions), import, global, pass

    def _loop(self, loop, entry: frozenset, bind, test):
        head = entry
        frame: tuple[list, list] = ([], [])
        for _ in range(50):
            frame = ([], [])
            self._loops.append(frame)
            body_entry = self._expr(test, head) if test is not None else head
            if bind is not None:
                body_entry = bind(body_entry)
            end = self._block(loop.body, body_entry)
            self._loops.pop()
            new_head = entry
            for other in (end, *frame[1]):
                new_head = _union(new_head, other)
            if new_head == head:
                break
            head = new_head
        after = self._expr(test, head) if test is not None else head
        if loop.orelse:
            after = self._block(loop.orelse, after)
        for other in frame[0]:
            after = _union(after, other)
        return after

    def _expr(self, node: ast.AST, state: frozenset) -> frozenset:
        if isinstance(node, ast.Lambda):
            return state
        if isinstance(node, _COMPREHENSIONS):
            first = node.generators[0]
            state = self._expr(first.iter, state)
            bound = {n for g in node.generators for n in _bound(g.target)}
            per_item = [g.iter for g in node.generators[1:]] + [c for g in node.generators for c in g.ifs]
            per_item += [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            for part in per_item:
                for call in ast.walk(part):
                    if isinstance(call, ast.Call):
                        key = _screen_key(self.screen, call)
                        if key is not None and key not in bound:
                            raise _Found  # consumed once per item: a reuse with itself
            return state
        if isinstance(node, ast.IfExp):
            state = self._expr(node.test, state)
            return self._expr(node.body, state) | self._expr(node.orelse, state)
        if isinstance(node, ast.NamedExpr):
            state = self._expr(node.value, state)
            if any(name in state for name in _value_names(node.value)):
                state = state | set(_bound(node.target))
            return state  # never cleared: KeyFlow may bind a fresh value there
        for child in ast_children(node):
            state = self._expr(child, state)
        if isinstance(node, ast.Call):
            key = _screen_key(self.screen, node)
            if key is not None:
                if key in state:
                    raise _Found
                state = state | {key} | self._groups.get(key, frozenset())
        return state


def _value_names(value: ast.AST | None) -> list[str]:
    """The names of a value that is a name or a tuple or list of such (KeyFlow's aliases)."""
    if isinstance(value, ast.Name):
        return [value.id]
    if isinstance(value, (ast.Tuple, ast.List)):
        return [n for element in value.elts for n in _value_names(element)]
    if isinstance(value, ast.Starred):
        return _value_names(value.value)
    return []


def _alias_groups(screen, scope: ast.AST) -> dict[str, frozenset[str]]:
    """Per name, the names of the scope that an assignment between names and tuples of names ties it to,
    transitively (its own statements, not those of nested functions or classes)."""
    parent: dict[str, str] = {}

    def find(name: str) -> str:
        while parent.setdefault(name, name) != name:
            name = parent[name]
        return name

    for node in _assignments(screen, scope):
        if isinstance(node, ast.Assign):
            targets, value = [n for t in node.targets for n in _bound(t)], node.value
        else:
            targets, value = _bound(node.target), node.value
        names = [*targets, *_value_names(value)]
        if _value_names(value):
            for name in names[1:]:
                parent[find(name)] = find(names[0])
    groups: dict[str, set[str]] = {}
    for name in list(parent):
        groups.setdefault(find(name), set()).add(name)
    return {name: frozenset(groups[find(name)]) for name in parent}


def _assignments(screen, scope: ast.AST) -> list[ast.AST]:
    """The `=`, annotated `=` and `:=` of a scope (its own, not those of nested functions or classes). Without
    `:=` in the module they are statements, looked up by scope in `Screen.statements`, where a walk of every
    expression of the scope cost 0.13 s of CPU on 1,450 real files."""
    if ":=" not in screen.text:
        return _assignments_by_scope(screen).get(id(scope), [])
    found = []
    stack = list(ast_children(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast_children(node))
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
            found.append(node)
    return found


@once_per_screen
def _assignments_by_scope(screen) -> dict[int, list[ast.AST]]:
    """id() of a def, class or the module → its own `=` and annotated `=` statements."""
    found: dict[int, list[ast.AST]] = {}
    for statement, scope in screen.statements:
        if isinstance(statement, (ast.Assign, ast.AnnAssign)):
            found.setdefault(id(scope), []).append(statement)
    return found


def _lax_body_names(screen) -> frozenset[str]:
    """The names passed anywhere inside the arguments of a call that may be a lax loop (KeyFlow's `LAX_LOOPS`,
    through `functools.partial` or not)."""
    names: set[str] = set()
    for call in screen.nodes_of(ast.Call):
        if isinstance(call.func, ast.Attribute) and call.func.attr not in _LAX_LOOP_NAMES:
            continue
        if not screen.may_resolve_to(call.func, LAX_LOOPS):
            continue
        for argument in (*call.args, *(k.value for k in call.keywords)):
            names.update(n.id for n in ast.walk(argument) if isinstance(n, ast.Name))
    return frozenset(names)


class _Found(Exception):
    """A reuse: the screen passes the module."""
