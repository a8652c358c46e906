"""JF701: a PRNG key consumed twice (two draws, a draw and a split, a draw in every loop iteration)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic, Fix, ImportSpec, Safety, spelled_with_import
from jaxfix.facts.flow import block_activity, parameter_names
from jaxfix.facts.keys import KeyFlow, Reuse
from jaxfix.facts.module import FileFacts


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

    # no `looks_at`: as a visitor it read the module whole, and `explain` named it under no line; it still does not

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """A finding at each draw that the key flow (facts/keys.py) finds reusing a consumed key, with the split
        that gives each use a key of its own where one can, planned on `ast` and built by `fix_finding`."""
        return _Check(facts).findings()

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix:
        """The planned split, built on LibCST: `name, subkey = jax.random.split(name)` before each line of the
        earlier uses, whose keys become `subkey`."""
        plan: _Plan = finding.plan
        changes = []
        for (first, keys), subkey in zip(plan.lines, plan.subkeys):
            # the line LibCST holds the statement in: the simple statement's parent
            line = bridge.parent(bridge.cst_of(first))
            new_line = line.visit(_Rename({id(bridge.cst_of(key)) for key in keys}, subkey))
            split_code = f"{plan.name}, {subkey} = {plan.split}({plan.name})"
            split_line = cst.parse_statement(split_code).with_changes(leading_lines=line.leading_lines)
            changes.append((line, cst.FlattenSentinel([split_line, new_line.with_changes(leading_lines=())])))
        imports = (plan.import_spec,) if plan.import_spec else ()
        return Fix(cls.fix_safety, finding.fix.description, tuple(changes), imports)


@dataclass(frozen=True)
class _Plan:
    """A split to build: `name, subkey = split(name)` before each line (its first statement, with the keys there
    that the earlier uses consume), each with its fresh subkey."""

    name: str
    lines: tuple[tuple[ast.stmt, tuple[ast.Name, ...]], ...]
    subkeys: tuple[str, ...]
    split: str  # how `jax.random.split` is written here
    import_spec: ImportSpec | None


class _Check:
    """One module's findings: the key flow's reuses, each with its message and, where a split can give each use
    a key of its own, the plan of that split."""

    def __init__(self, facts: FileFacts) -> None:
        self.facts = facts
        self.keys = facts.keys
        self._activities: dict = {}

    def findings(self) -> list[Diagnostic]:
        found = []
        for scope, flow in self.keys.reuses():
            # in the order of the splits' places, so that fresh names number down the file
            reuses = sorted(flow.reuses, key=lambda r: (min(_line(p) for p in r.previous), _line(r.use)))
            plans = [(reuse, *self._split_name(scope, flow, reuse)) for reuse in reuses]
            # a lax body that hands a consumed key back as its carry draws the same numbers at every step
            # whatever is split within one step: no fix in it unless that one can be fixed too
            stuck = [reuse for reuse, split, _ in plans if split is None and reuse.carried]
            for reuse, split, blocker in plans:
                if split is not None and stuck:
                    line = _line(stuck[0].use)[0]
                    split, blocker = None, (
                        f"the body hands a consumed key back as the carry (see line {line}), so every step would "
                        f"still draw the same numbers; fix that first"
                    )
                found.append(self._finding(flow, reuse, split, blocker))
        return found

    def _finding(self, flow: KeyFlow, reuse: Reuse, split: str | None, blocker: str) -> Diagnostic:
        here = _line(reuse.use)
        callee = self.facts.positions.callee(reuse.use)
        construct = f"`{flow.body.construct}`" if flow.body is not None else "the lax loop"
        others = sorted({self._consumed(p) for p in reuse.previous} - {reuse.name})
        lines = sorted({_line(p)[0] for p in reuse.previous})
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
            later = {_line(p)[0] for p in reuse.previous if _line(p) > here and p not in reuse.carried}
            steps = {_line(p)[0] for p in reuse.carried} - {_line(p)[0] for p in reuse.previous - reuse.carried}
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
            return PrngKeyReuse.finding(self.facts, reuse.use, f"{message}; not fixed: {blocker}")
        plan = self._plan(reuse, split)
        description = f"split `{split}` before its earlier use (`{split}, {plan.subkeys[0]} = jax.random.split({split})`)"
        return PrngKeyReuse.finding(self.facts, reuse.use, message, description=description, plan=plan)

    def _consumed(self, call: ast.Call) -> str:
        key = self.keys.consumed_key(call)
        return key.id if key is not None else "?"

    def _split_name(self, scope, flow: KeyFlow, reuse: Reuse) -> tuple[str | None, str]:
        """The name to split before the earlier uses, or None and why no split there can give each use a key
        of its own. The name must hold the consumed key where each earlier use's line starts, and the flow
        rerun with the splits in place must find no draw of what a split consumed where `reuse.use` is."""
        if reuse.in_comprehension:
            return None, "a comprehension has no statement to put the split in (draw from `jax.random.split(key, n)` instead)"
        lines = {self.keys.line_of(previous) for previous in reuse.previous}
        if None in lines:
            return None, "the earlier use is not in a statement of its own (a loop or `with` header, a lambda, a comprehension)"
        if any(
            isinstance(n, ast.NamedExpr)
            for line in lines for statement in self.keys.line_statements(line) for n in ast.walk(statement)
        ):  # fmt: skip
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
        keys = self.keys
        flow = keys.flow_with_splits(scope, {line: name for line in lines}, frozenset(reuse.previous))
        return not flow.reads_a_split(reuse.use, keys.line_of(reuse.use) if reuse.use in reuse.previous else None)

    def _local_blocker(self, scope, name: str) -> str | None:
        act = self._activity(scope)
        if name in act.declared:
            return f"`{name}` is declared global or nonlocal here"
        if name in act.captured:
            return f"a nested function reads `{name}` and would see the rebinding"
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and name not in (*parameter_names(scope.args), *act.writes):
            return f"`{name}` is not a local of `{scope.name}`"
        return None

    def _activity(self, scope):
        """What the scope's statements read and bind (one walk per scope: findings share it)."""
        found = self._activities.get(scope)
        if found is None:
            found = self._activities[scope] = block_activity(scope.body)
        return found

    def _plan(self, reuse: Reuse, name: str) -> _Plan:
        """The split of `name` before the earlier uses' lines, with a fresh subkey for each line (taken in source
        order: it decides the fresh names)."""
        split, import_spec = spelled_with_import(self.facts.binder, "jax.random.split")
        by_line: dict[ast.stmt, list[ast.Name]] = {}
        for previous in sorted(reuse.previous, key=_line):
            by_line.setdefault(self.keys.line_of(previous), []).append(self.keys.consumed_key(previous))
        subkeys = tuple(self.facts.fresh_names.take("subkey") for _ in by_line)
        lines = tuple((first, tuple(keys)) for first, keys in by_line.items())
        return _Plan(name, lines, subkeys, split, import_spec)


def _line(node: ast.AST) -> tuple[int, int]:
    """Where a node starts (the column in UTF-8 bytes: it only orders the calls of one line)."""
    return node.lineno, node.col_offset


class _Rename(cst.CSTTransformer):
    """Replaces the given Name nodes (by identity) with `name`."""

    def __init__(self, targets: set[int], name: str) -> None:
        super().__init__()
        self.targets = targets
        self.name = name

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        return cst.Name(self.name) if id(original_node) in self.targets else updated_node
