"""JF803 missing-collective: a pmap or shard_map training step that applies per-device gradients without
averaging them across devices (`lax.pmean`), so every replica trains its own model."""

from __future__ import annotations

import ast

from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic
from jaxfix.facts.module import FileFacts, in_order, named, spelled_names, value_of
from jaxfix.facts.knowledge.jax import GRADIENTS, SHARD_MAPS
from jaxfix.facts.knowledge.tables import UPDATE_METHOD_NAMES

_PMAP = frozenset({"jax.pmap"})
_PARTIAL = "functools.partial"
_COLLECTIVES = frozenset(
    "jax.lax." + n for n in "pmean psum pmax pmin all_gather psum_scatter all_to_all ppermute pshuffle".split()
)
# Libraries whose functions do not communicate across devices behind the caller's back.
_LIBRARIES = ("jax.", "optax.", "flax.", "numpy.", "equinox.", "chex.", "builtins.", "functools.", "math.")


class MissingCollective(Codemod):
    """
    ## What it does
    Finds a function that `jax.pmap(..., axis_name=...)` or `shard_map` runs on every device, that computes
    gradients with `jax.grad`/`jax.value_and_grad` and uses them to update something it returns (parameters,
    optimizer state), with no collective (`lax.pmean`, `psum`, `pmax`, `all_gather`, ...) applied to the
    gradients or to what comes of them.

    ## Why is this bad?
    Under pmap or shard_map each device sees its own shard of the batch, so `jax.grad` gives each device the
    gradient of its shard's loss. Without `lax.pmean(grads, axis_name)` each device applies a different
    update: the replicas, identical at the start, drift apart from the first step, and the model trained is
    no data-parallel model at all (effectively n models, each on 1/n of the data). Nothing fails: the loss
    still goes down on every device, which is why the bug survives.

    ## Example
    ```python
    @partial(jax.pmap, axis_name="batch")
    def train_step(params, x, y):
        grads = jax.grad(loss_fn)(params, x, y)
        return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)
    ```

    ## Use instead
    ```python
    @partial(jax.pmap, axis_name="batch")
    def train_step(params, x, y):
        grads = jax.grad(loss_fn)(params, x, y)
        grads = jax.lax.pmean(grads, axis_name="batch")
        return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)
    ```

    ## Fix safety
    No fix: whether to average (`pmean`) or sum (`psum`), over which axis, and before or after clipping are the
    author's choices, and an ensemble trained on purpose with pmap needs none.

    ## When it stays quiet
    `jax.pmap` without `axis_name` (no collective is possible there: a batch of independent models, such as an
    ensemble); steps that return the gradients themselves (to be reduced by the caller); gradients passed
    to a collective, or to a function of this module that contains one, or to a function of another module
    (it may reduce them); a collective inside the differentiated function (its transpose communicates the
    gradients), or a differentiated function jaxfix cannot see (imported, a method); functions with no
    gradients.
    """

    code = "JF803"
    name = "missing-collective"
    summary = "pmap/shard_map training step without lax.pmean/psum of the gradients: replicas diverge"
    fix_safety = None
    screen = ("pmap", "shard_map")

    @classmethod
    def may_match(cls, text: str) -> bool:
        """A finding needs a pmap or shard_map and a gradient."""
        return ("pmap" in text or "shard_map" in text) and "grad" in text

    VALID = (
        Valid(
            "import jax\nfrom functools import partial\n\ndef loss(p, x):\n    return (p * x).sum()\n\n"
            "@partial(jax.pmap, axis_name='i')\ndef step(p, x):\n    g = jax.grad(loss)(p, x)\n"
            "    g = jax.lax.pmean(g, axis_name='i')\n    return p - 0.1 * g\n"
        ),
        # no axis name: independent models
        Valid(
            "import jax\n\ndef loss(p, x):\n    return (p * x).sum()\n\n@jax.pmap\ndef step(p, x):\n"
            "    g = jax.grad(loss)(p, x)\n    return p - 0.1 * g\n"
        ),
        # gradients returned for the caller to reduce
        Valid(
            "import jax\n\ndef loss(p, x):\n    return (p * x).sum()\n\ndef grads(p, x):\n"
            "    return jax.grad(loss)(p, x)\n\npgrads = jax.pmap(grads, axis_name='i')\n"
        ),
    )
    INVALID = (
        Invalid(
            "import jax\nfrom functools import partial\n\ndef loss(p, x):\n    return (p * x).sum()\n\n"
            "@partial(jax.pmap, axis_name='i')\ndef step(p, x):\n    g = jax.grad(loss)(p, x)\n"
            "    return p - 0.1 * g\n",
            None,
            message="lax.pmean",
        ),
        Invalid(
            "import jax\nimport optax\n\ntx = optax.sgd(0.1)\n\ndef step(params, opt_state, x):\n"
            "    def loss(p):\n        return (p * x).sum()\n"
            "    value, grads = jax.value_and_grad(loss)(params)\n"
            "    metrics = jax.lax.pmean(value, 'batch')\n"
            "    updates, opt_state = tx.update(grads, opt_state)\n"
            "    return optax.apply_updates(params, updates), opt_state, metrics\n\n"
            "p_step = jax.pmap(step, axis_name='batch')\n",
            None,
            message="replicas",
        ),
    )

    looks_at = ()  # it judges the whole module (its visitor looked at `Module` alone), no kind of node

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        return _Step(facts, cls).findings()


class _Step:
    """JF803's judgement of one module on `ast`: the functions that run on every device, their gradients, and
    whether what they return is updated with gradients no collective reduced."""

    def __init__(self, facts: FileFacts, rule: type[MissingCollective]) -> None:
        self.facts, self.rule, self.binder = facts, rule, facts.binder
        self.found: list[Diagnostic] = []

    def findings(self) -> list[Diagnostic]:
        for function, axis in self._parallel_functions():
            self._check(function, axis)
        return self.found

    # ---- which functions run on every device ---------------------------------------------------------------

    def _parallel_functions(self):
        seen = set()
        binder = self.binder
        candidates = [*binder.nodes_of(ast.FunctionDef), *binder.nodes_of(ast.AsyncFunctionDef), *binder.calls]
        # in the order the LibCST run met them (which decides the axis of a step found twice): a node before the
        # nodes in it, and of two apart the later one first
        candidates.sort(key=lambda n: (-n.end_lineno, -n.end_col_offset, n.lineno, n.col_offset))
        for node in candidates:
            if type(node) is not ast.Call:
                if not node.decorator_list:
                    continue
                for decorator in node.decorator_list:
                    axis = self._axis_of(decorator, decorated=True)
                    if axis is not None and node not in seen:
                        seen.add(node)
                        yield node, axis
            else:
                if not node.args and not node.keywords:
                    continue
                arguments = in_order(node)
                if not arguments or type(arguments[0]) is ast.keyword and arguments[0].arg is not None:
                    continue
                if self.binder.callee(node) not in _PMAP | SHARD_MAPS:
                    continue
                axis = self._axis_of(node, decorated=False)
                if axis is None:
                    continue
                for function in self.facts.functions_named(value_of(arguments[0])):
                    if function not in seen:
                        seen.add(function)
                        yield function, axis

    def _axis_of(self, expr: ast.AST, *, decorated: bool) -> str | None:
        """How the step names its device axis (`'batch'`, or the mesh's axes for shard_map), or None when
        `expr` is no pmap with an axis name and no shard_map."""
        binder = self.binder
        if type(expr) is not ast.Call:
            return "the mesh axes" if binder.qualified(expr) in SHARD_MAPS else None
        callee = binder.callee(expr)
        arguments = in_order(expr)
        if callee == _PARTIAL and arguments and not named(arguments[0]):
            callee = binder.qualified(value_of(arguments[0]))
            arguments = arguments[1:]
        elif not decorated:
            arguments = arguments[1:]  # jax.pmap(f, ...): the function is not an option
        if callee in SHARD_MAPS:
            return "the mesh axes"
        if callee not in _PMAP:
            return None
        for argument in arguments:
            if type(argument) is ast.keyword and argument.arg == "axis_name":
                return self.facts.positions.parenthesized(argument.value, (argument.lineno, argument.col_offset))
        return None

    # ---- the step ------------------------------------------------------------------------------------------

    def _check(self, function, axis: str) -> None:
        if type(function) is ast.Lambda:
            return
        body = [n for statement in function.body for n in _walk(statement)]
        binder = self.binder
        grad_fns: dict[str, ast.Call] = {}  # name -> the jax.grad(...) call it holds
        for node in body:
            if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
                if type(node.value) is ast.Call and binder.callee(node.value) in GRADIENTS:
                    grad_fns[node.targets[0].id] = node.value
        for node in body:
            if not (type(node) is ast.Assign and len(node.targets) == 1 and type(node.value) is ast.Call):
                continue
            call = node.value
            transform = None
            if type(call.func) is ast.Call and binder.callee(call.func) in GRADIENTS:
                transform = call.func
            elif type(call.func) is ast.Name and call.func.id in grad_fns:
                transform = grad_fns[call.func.id]
            if transform is None:
                continue
            grads = self._gradient_names(node.targets[0], transform)
            if not grads:
                continue
            end = (node.end_lineno, node.end_col_offset)
            after = [n for n in body if hasattr(n, "lineno") and (n.lineno, n.col_offset) >= end]
            if self._synced(after, transform, grads) is None:
                named_axis = axis[:1] in ("'", '"')
                where = f"axis {axis}" if named_axis else axis
                code = self.facts.positions.parenthesized(call, (node.targets[0].end_lineno, node.targets[0].end_col_offset))
                self.found.append(self.rule.finding(
                    self.facts, call,
                    f"`{function.name}` runs on every device ({where}) and updates with the gradients of "
                    f"`{code}` without a collective: each device applies its own shard's "
                    "gradient and the replicas drift apart; average them first: "
                    f"`grads = jax.lax.pmean(grads, axis_name={axis if named_axis else '...'})`",
                ))  # fmt: skip

    def _gradient_names(self, target: ast.AST, transform: ast.Call) -> set[str]:
        """The names the gradients are bound to: all of `g = grad(f)(...)`, the second of `value, g =
        value_and_grad(f)(...)`, the first of `g, aux = grad(f, has_aux=True)(...)`."""
        has_aux = any(k.arg == "has_aux" for k in transform.keywords)
        value_and_grad = self.binder.callee(transform) == "jax.value_and_grad"
        if not (value_and_grad or has_aux):
            return {target.id} if type(target) is ast.Name else set()
        if type(target) not in (ast.Tuple, ast.List) or len(target.elts) != 2:
            return set()
        part = value_of(target.elts[1 if value_and_grad else 0])
        return {part.id} if type(part) is ast.Name else set()

    def _synced(self, body, transform: ast.Call, grads: set[str]) -> str | None:
        """Why the gradients may be reduced or not applied (None: they are applied unreduced). `body`: the
        nodes of the step after the statement that computes the gradients."""
        binder = self.binder
        arguments = in_order(transform)
        differentiated = value_of(arguments[0]) if arguments and not named(arguments[0]) else None
        if differentiated is None:
            return "the differentiated function is not visible"
        if type(differentiated) is ast.Lambda:
            inner = [differentiated]
        else:
            inner = self.facts.functions_named(differentiated)
            if not inner:
                return "the differentiated function is not visible"
        if any(self._has_collective(f, set()) for f in inner):
            return "a collective inside the differentiated function"
        derived = set(grads)
        changed = True
        while changed:  # names computed from the gradients, in any order of statements
            changed = False
            for node in body:
                if type(node) in (ast.Assign, ast.AugAssign, ast.AnnAssign) and node.value is not None:
                    if _mentions_any(node.value, derived):
                        targets = node.targets if type(node) is ast.Assign else [node.target]
                        for target in targets:
                            for name in spelled_names(target):
                                if name not in derived:
                                    derived.add(name)
                                    changed = True
        updated = False
        for node in body:
            if type(node) is ast.Call and any(_mentions_any(value_of(a), derived) for a in in_order(node)):
                callee = binder.callee(node)
                if callee in _COLLECTIVES:
                    return "a collective on the gradients"
                if type(node.func) is ast.Name and binder.is_builtin(node.func, node.func.id):
                    continue
                local = self.facts.functions_named(node.func) if type(node.func) is ast.Name else []
                if local:
                    if any(self._has_collective(f, set()) for f in local):
                        return "a local function with a collective receives them"
                    updated = True
                    continue
                if type(node.func) is ast.Attribute and callee is None:
                    if node.func.attr not in UPDATE_METHOD_NAMES:
                        return "a method jaxfix does not know receives them"
                    updated = True
                    continue
                if callee is None or not callee.startswith(_LIBRARIES):
                    return "a function of another module receives them"
                updated = True
            elif type(node) is ast.BinOp and _mentions_any(node, derived):
                updated = True
        returned = [n.value for n in body if type(n) is ast.Return and n.value is not None]
        parts = [value_of(e) for r in returned for e in (r.elts if type(r) is ast.Tuple else [r])]
        applied = [p for p in parts if _mentions_any(p, derived) and not (type(p) is ast.Name and p.id in grads)]
        if not updated or not applied:
            return "the gradients are not applied to anything returned"
        return None

    def _has_collective(self, function, seen: set) -> bool:
        """Whether `function` or a function of this module it calls by name (transitively) uses a collective."""
        if function in seen:
            return False
        seen.add(function)
        for node in ast.walk(function):
            if type(node) is ast.Call:
                if self.binder.callee(node) in _COLLECTIVES:
                    return True
                if type(node.func) is ast.Name:
                    if any(self._has_collective(f, seen) for f in self.facts.functions_named(node.func)):
                        return True
        return False


def _walk(node: ast.AST):
    """Every node under `node`, `node` included, but the expression contexts."""
    for found in ast.walk(node):
        if not isinstance(found, ast.expr_context):
            yield found


def _mentions_any(node: ast.AST, names: set[str]) -> bool:
    return any(name in names for name in spelled_names(node))
