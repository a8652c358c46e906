"""JF504: a Python step that calls several separately jitted functions, in a loop, pays a barrier per call."""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import ScopeProvider

from jaxfix.analysis.dataflow import activity, body_statements
from jaxfix.analysis.jit import donated_parameters, jit_keywords, jit_wrapped, jitted_functions, static_parameters
from jaxfix.analysis.screen import names_called_in_loops
from jaxfix.analysis.syntax import code_nodes, walk
from jaxfix.analysis.traced import TRANSFORMS
from jaxfix.codegen import partial_spelling
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Safety

_JIT = "jax.jit"
_PARTIAL = "functools.partial"
_LOOPS = (cst.For, cst.While)
_ARITHMETIC = (
    cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power, cst.MatrixMultiply,
)
# jit keywords whose meaning inside an enclosing jit jaxfix knows: static arguments (the step's become static
# too) and donation (carried over to the step's own parameters).
# jax.numpy functions whose output shape depends on the values (or that touch files): they run eagerly, and
# fail under jit without a `size=` that the step does not give.
_VALUE_SHAPED = frozenset(
    f"jax.numpy.{name}"
    for name in (
        "nonzero", "flatnonzero", "argwhere", "unique", "unique_values", "unique_counts", "unique_inverse",
        "unique_all", "compress", "extract", "setdiff1d", "setxor1d", "union1d", "intersect1d", "trim_zeros",
        "bincount", "repeat", "load", "save", "savez",
    )
)
_KNOWN_KEYWORDS = frozenset({"static_argnums", "static_argnames", "donate_argnums", "donate_argnames"})


class _Kind(enum.IntEnum):
    """What a value in the step is, in the order a mix of them takes the highest."""

    STATIC = 0  # a literal, a module constant or a parameter the fused step makes static: a Python value
    TRACED = 1  # a parameter (or arithmetic of them) that is a Python value now and a tracer once jitted
    ARRAY = 2  # a result of a jitted piece or of jax.numpy: an array (or pytree of arrays) either way


class _NotTraceable(Exception):
    """The step does something jit cannot trace or would change (a host transfer, Python control flow, a call
    jaxfix does not know): it is not the pattern, and the rule stays quiet."""


@dataclass
class _Piece:
    """A module-level jitted function the step calls."""

    name: str
    params: list[str] | None  # positional parameters, or None when jaxfix cannot see the signature
    static: frozenset[str] = frozenset()
    donated: frozenset[str] = frozenset()
    problem: str | None = None  # jit keywords that stop the fusion


@dataclass
class _Step:
    """What the analysis of one step function found."""

    params: list[str]
    calls: list[tuple[cst.Call, _Piece]] = field(default_factory=list)
    static: set[str] = field(default_factory=set)
    donated: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)
    # Arithmetic on the step's own Python numbers (`lr * lr`): Python computes it in float64 today, the jitted
    # step on float32 (int32) tracers, so the fix's message names it.
    python_arithmetic: list[str] = field(default_factory=list)


class FusedJitBarriers(Codemod):
    """A Python step function that calls several separately jitted functions, itself called in a loop.

    ## What it does
    Finds a module-level function that is not jitted, whose body calls two or more module-level jitted
    functions in sequence (`loss = loss_fn(params, batch); grads = grad_fn(params, batch); params =
    update(params, grads)`) with nothing but `jax.numpy` arithmetic in between, and which is called inside a
    `for`/`while` loop; it adds `@jax.jit` to that step (`@partial(jax.jit, static_argnums=..., donate_argnums=...)`
    where the pieces had static or donated arguments).

    ## Why is this bad?
    Each jitted call is a barrier: XLA compiles each piece on its own, cannot fuse across them or share
    their work (the loss's forward pass and the gradient's), materializes every intermediate in memory, and the
    host dispatches one program per piece per step. One jit around the step gives XLA the whole step.
    `benchmarks/fused_jit.py` (JAX 0.10.2, this 2-core CPU shared with other jobs, a 2-layer MLP step: loss,
    gradient and SGD update as three jits, batch 128, 200 steps per loop, best of 5, two runs) compiles 3
    programs before and 1 after, and measured the fused step 1.43-1.51x faster in CPU time with width 512
    and 1.59-1.84x with width 64, where dispatch dominates (wall time, disturbed by the other jobs: 1.78-1.87x
    at width 64), against the issue's 1.13-1.55x. XLA computes the forward pass once for the loss and the
    gradient, and the fused step's temporaries (`memory_analysis()`) are 0.25 MiB against 0.51 MiB for the
    three pieces at width 512.

    ## Example
    ```python
    @jax.jit
    def loss_fn(params, x, y):
        return jnp.mean((x @ params - y) ** 2)

    grad_fn = jax.jit(jax.grad(loss_fn))

    @jax.jit
    def update(params, grads):
        return params - 0.1 * grads

    def train_step(params, x, y):
        loss = loss_fn(params, x, y)
        grads = grad_fn(params, x, y)
        params = update(params, grads)
        return params, loss

    for _ in range(100):
        params, loss = train_step(params, x, y)
    ```

    ## Use instead
    ```python
    @jax.jit
    def train_step(params, x, y):
        ...
    ```

    ## Fix safety
    Unsafe. The values are those the pieces compute, but XLA may now fuse and reorder their arithmetic, so the
    last bits of a float can differ. The pieces keep their own `jax.jit`, deliberately: a jit traced inside
    another jit becomes a `call` that XLA inlines before it optimizes (the benchmark's step compiles to the
    same optimized program, op for op, with the inner jits kept or stripped, and times the same within the
    noise), and other callers of a piece (an evaluation loop) still get it compiled. What changes:
    - the step's parameters become traced: a Python float or int passed to the step enters as a (weakly typed)
      array, as it already did when passed to a piece;
    - a parameter that a piece takes as a static argument becomes a static argument of the step (same
      compilations as before: one per value);
    - a parameter that a piece donates is donated by the step (the caller's array was deleted by the piece
      before; now by the step);
    - callers in other modules get the jitted step too.
    Of these, the fusion and reordering **may compute different numbers** (the last bits of a float), and so
    may arithmetic the step does on a Python number before passing it to a piece (float32 where it was Python's
    float64; the message names that arithmetic); that is what `jaxfix apply --verify` and `jaxfix verify`
    check. A caller in another module that passes what jit cannot trace (a string) **fails loudly** at the
    call, and a read of a donated array raises `RuntimeError: Array has been deleted`, as it did before.

    ## When it stays quiet
    - Steps with anything jit would trace differently or reject: Python control flow, `float(loss)`,
      `.item()`, `np.asarray`, `print`, appending to a list, attribute reads, calls of functions that are not
      jitted module-level functions or `jax.numpy`, `jax.numpy` functions whose output shape depends on the
      values (`jnp.nonzero`, `jnp.unique`, one-argument `jnp.where`...), reads of module names other than
      constants.
    - Steps that call fewer than two jitted pieces, steps already jitted (decorated, wrapped by a JAX
      transformation, or called from traced code), and steps never called in a loop.
    It reports without a fix, saying what stopped it, when a piece's static argument receives a value the
    fused step would trace (`batch["n"]`, arithmetic of a traced parameter), a piece's jit has keywords other
    than static and donated arguments, a donated argument is part of a parameter, a `jax.numpy` call gets a
    traced Python value, the step returns something that is not an array, has defaults or `*args`, or is
    used as a value.
    """

    code = "JF504"
    name = "fused-jit-barriers"
    summary = "Python step calling several separately jitted functions in a loop: jit the whole step"
    fix_safety = Safety.UNSAFE
    screen = ("jit",)

    VALID = (
        # the step logs a host value each iteration
        Valid(
            "import jax\n\n@jax.jit\ndef f(x):\n    return x * 2.0\n\n@jax.jit\ndef g(x):\n    return x + 1.0\n\n"
            "def step(x):\n    y = f(x)\n    print(float(y))\n    return g(y)\n\n"
            "def run(x):\n    for _ in range(3):\n        x = step(x)\n    return x\n"
        ),
        # called once, not in a loop
        Valid(
            "import jax\n\n@jax.jit\ndef f(x):\n    return x * 2.0\n\n@jax.jit\ndef g(x):\n    return x + 1.0\n\n"
            "def step(x):\n    y = f(x)\n    return g(y)\n\ndef run(x):\n    return step(x)\n"
        ),
    )
    INVALID = (
        Invalid(
            "import jax\n\n@jax.jit\ndef f(x):\n    return x * 2.0\n\n@jax.jit\ndef g(x):\n    return x + 1.0\n\n"
            "def step(x):\n    y = f(x)\n    return g(y)\n\n"
            "def run(x):\n    for _ in range(3):\n        x = step(x)\n    return x\n",
            "import jax\n\n@jax.jit\ndef f(x):\n    return x * 2.0\n\n@jax.jit\ndef g(x):\n    return x + 1.0\n\n"
            "@jax.jit\ndef step(x):\n    y = f(x)\n    return g(y)\n\n"
            "def run(x):\n    for _ in range(3):\n        x = step(x)\n    return x\n",
            message="jit the whole step",
        ),
        Invalid(
            "import jax\n\n@jax.jit\ndef f(x, a):\n    return x * a\n\n@jax.jit\ndef g(x):\n    return x + 1.0\n\n"
            "def step(x, lr):\n    y = f(x, lr * lr)\n    return g(y)\n\n"
            "def run(x):\n    for i in range(3):\n        x = step(x, 0.1 * i)\n    return x\n",
            "import jax\n\n@jax.jit\ndef f(x, a):\n    return x * a\n\n@jax.jit\ndef g(x):\n    return x + 1.0\n\n"
            "@jax.jit\ndef step(x, lr):\n    y = f(x, lr * lr)\n    return g(y)\n\n"
            "def run(x):\n    for i in range(3):\n        x = step(x, 0.1 * i)\n    return x\n",
            message="`lr * lr` is then float32 (int32) arithmetic where its operands are Python numbers",
        ),
        Invalid(
            "import jax\nfrom functools import partial\n\n@partial(jax.jit, static_argnums=1)\n"
            "def f(x, n):\n    return x * n\n\n@jax.jit\ndef g(x):\n    return x + 1.0\n\n"
            "def step(x, cfg):\n    y = f(x, cfg['n'])\n    return g(y)\n\n"
            "def run(x):\n    for _ in range(3):\n        x = step(x, {'n': 2})\n    return x\n",
            None,
            message="not fixed",
        ),
    )

    @classmethod
    def may_match_tree(cls, screen) -> bool:
        """A finding needs two module-level names that may be jitted (a def with a decorator, or an assignment
        from a call that may be `jax.jit`) and an undecorated module-level def calling them, called in a loop."""
        may = getattr(screen, "may_resolve_to", lambda expr, names: True)
        jitted = set()
        steps = []
        for stmt in screen.tree.body:
            if isinstance(stmt, ast.FunctionDef):
                if not stmt.decorator_list:
                    steps.append(stmt)
                elif len(stmt.decorator_list) == 1:
                    decorator = stmt.decorator_list[0]
                    if may(decorator.func if isinstance(decorator, ast.Call) else decorator, {_JIT, _PARTIAL}):
                        jitted.add(stmt.name)
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                if isinstance(stmt.value, ast.Call) and may(stmt.value.func, {_JIT}):
                    jitted.add(stmt.targets[0].id)
        if len(jitted) < 1:
            return False
        candidates = set()
        for step in steps:
            called = [n for n in ast.walk(step) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in jitted]
            if len(called) >= 2:
                candidates.add(step.name)
        if not candidates:
            return False
        return not candidates.isdisjoint(names_called_in_loops(screen))

    # ---- the pieces --------------------------------------------------------------------------------------

    def visit_Module(self, node: cst.Module) -> None:
        self._pieces = self._find_pieces(node)
        if not self._pieces:
            return
        self._scopes = self.context.wrapper.resolve(ScopeProvider)
        self._global = self._scopes[node]
        self._constants = self._module_constants(node)
        for stmt in node.body:
            if isinstance(stmt, cst.FunctionDef) and not stmt.decorators and stmt.name.value not in self._pieces:
                self._check(stmt)

    def _find_pieces(self, module: cst.Module) -> dict[str, _Piece]:
        pieces = {}
        for jitted in jitted_functions(self.context, module):
            fparams = jitted.function.params
            params = [p.name.value for p in (*fparams.posonly_params, *fparams.params)]
            keywords = jit_keywords(jitted)
            piece = _Piece(jitted.name, params)
            static, donated = static_parameters(keywords, params), donated_parameters(keywords, params)
            other = sorted(set(keywords) - _KNOWN_KEYWORDS)
            if other:
                piece.problem = f"`{jitted.name}`'s jit has `{other[0]}`, which jaxfix does not carry over to the step"
            elif static is None or donated is None:
                piece.problem = f"jaxfix cannot read `{jitted.name}`'s static or donated arguments"
            elif fparams.star_arg not in (cst.MaybeSentinel.DEFAULT, None) or fparams.kwonly_params:
                piece.problem = f"jaxfix cannot map the arguments of `{jitted.name}` (`*args` or keyword-only parameters)"
            else:
                piece.static, piece.donated = static, donated
            pieces[jitted.name] = piece
        for wrapped in jit_wrapped(self.context, module):
            piece = _Piece(wrapped.name, None)
            if any(a.keyword is not None for a in wrapped.call.args):
                piece.problem = f"`{wrapped.name}` is jitted with keywords on a callable whose signature jaxfix cannot see"
            pieces[wrapped.name] = piece
        return pieces

    def _module_constants(self, module: cst.Module) -> set[str]:
        """Module names bound once, at module level, to a number or string, and declared `global` nowhere: the
        same value whether read at trace time or at each call."""
        declared = {n.value for g in code_nodes(module) if isinstance(g, cst.Global) for n in (i.name for i in g.names)}
        constants = set()
        for stmt in module.body:
            if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign):
                assign = stmt.body[0]
                if len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name):
                    name = assign.targets[0].target.value
                    literal = isinstance(assign.value, (cst.Integer, cst.Float, cst.SimpleString)) or (
                        isinstance(assign.value, cst.UnaryOperation) and isinstance(assign.value.expression, (cst.Integer, cst.Float))
                    )
                    if literal and len(self._global.assignments[name]) == 1 and name not in declared:
                        constants.add(name)
        return constants

    # ---- one step ----------------------------------------------------------------------------------------

    def _check(self, function: cst.FunctionDef) -> None:
        name = function.name.value
        calls = [
            n for n in walk(function.body)
            if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value in self._pieces and self._is_global(n.func)
        ]
        if len(calls) < 2 or self.context.traced.is_traced(function):
            return
        uses = self._uses(function)
        if uses is None:
            return
        loop_calls, values = uses
        if not loop_calls:
            return
        fparams = function.params
        params = [p.name.value for p in (*fparams.posonly_params, *fparams.params)]
        step = _Step(params)
        try:
            self._analyse(function, step)
        except _NotTraceable:
            return
        if values:
            step.problems.append(f"`{name}` is also used as a value at line {values[0]}: jaxfix cannot see how it is called")
        if fparams.star_arg not in (cst.MaybeSentinel.DEFAULT, None) or fparams.star_kwarg or fparams.kwonly_params:
            step.problems.append(f"`{name}` takes `*args`, `**kwargs` or keyword-only parameters")
        elif any(p.default is not None for p in (*fparams.posonly_params, *fparams.params)):
            step.problems.append(f"`{name}` has default values, which jit would trace or keep as constants")
        pieces = list(dict.fromkeys(piece.name for _, piece in step.calls))
        line = self.context.positions[loop_calls[0]].start.line
        listed = ", ".join(f"`{p}`" for p in pieces)
        message = (
            f"`{name}` calls jitted functions {len(step.calls)} times ({listed}) and runs in a loop (line {line}): each call is a barrier XLA cannot "
            "fuse across, and every intermediate goes through memory"
        )
        if step.problems:
            self.report(function.name, f"{message}; not fixed: {step.problems[0]}")
            return
        notes = ["XLA may fuse and reorder the pieces' arithmetic"]
        if step.python_arithmetic:
            listed = ", ".join(f"`{code}`" for code in dict.fromkeys(step.python_arithmetic))
            notes.append(f"{listed} is then float32 (int32) arithmetic where its operands are Python numbers")
        static = [p for p in params if p in step.static]
        donated = [p for p in params if p in step.donated]
        if static:
            notes.append(f"{self._names(static)} become{'s' if len(static) == 1 else ''} static as in the pieces")
        if donated:
            notes.append(f"{self._names(donated)} {'is' if len(donated) == 1 else 'are'} donated as in the pieces")
        self.report(
            function.name,
            f"{message}; jit the whole step (unsafe: {'; '.join(notes)})",
            self._fix(function, params, static, donated),
        )

    @staticmethod
    def _names(names: list[str]) -> str:
        return ", ".join(f"`{n}`" for n in names)

    def _is_global(self, name: cst.Name) -> bool:
        scope = self._scopes.get(name)
        if scope is None:
            return False
        for access in scope.accesses[name]:
            if access.node is name:
                return bool(access.referents) and all(r.scope is self._global for r in access.referents)
        return False

    def _uses(self, function: cst.FunctionDef) -> tuple[list[cst.Call], list[int]] | None:
        """The calls of the step inside loops and the lines where it is used other than called; None when it
        is bound more than once or handed to a JAX transformation (already jitted, vmapped, scanned...)."""
        assignments = list(self._global.assignments[function.name.value])
        if len(assignments) != 1 or assignments[0].node is not function:
            return None
        in_loops, values = [], []
        parents = self.context.parents
        for access in assignments[0].references:
            parent = parents.get(access.node)
            if isinstance(parent, cst.Call) and parent.func is access.node:
                if self._in_loop(parent):
                    in_loops.append(parent)
                continue
            if isinstance(parent, cst.Arg):
                call = parents.get(parent)
                if isinstance(call, cst.Call) and (self.context.names.qualified(call.func) or "") in TRANSFORMS | {_JIT}:
                    return None
            values.append(self.context.positions[access.node].start.line)
        return in_loops, values

    def _in_loop(self, node: cst.CSTNode) -> bool:
        parents = self.context.parents
        child, current = node, parents.get(node)
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            if isinstance(current, _LOOPS) and child is current.body:
                return True
            child, current = current, parents.get(current)
        return False

    # ---- what the step's body does ------------------------------------------------------------------------

    def _analyse(self, function: cst.FunctionDef, step: _Step) -> None:
        """Fill `step` in, or raise _NotTraceable. Two passes: the first finds the parameters the pieces take
        as static or donate; the second walks the body in order with what each name then holds."""
        written = set(activity(function.body).writes)
        bare = [p for p in step.params if p not in written]
        for call in (n for n in walk(function.body) if isinstance(n, cst.Call)):
            piece = self._pieces.get(call.func.value) if isinstance(call.func, cst.Name) else None
            if piece is None or piece.params is None or piece.problem:
                continue
            for slot, arg in self._slots(call, piece):
                if isinstance(arg, cst.Name) and arg.value in bare and slot in piece.static:
                    step.static.add(arg.value)
        self._bare = set(step.params)  # the names that still hold the step's own arguments (pass two)
        self._step = step
        env = {p: (_Kind.STATIC if p in step.static else _Kind.TRACED) for p in step.params}
        statements = list(body_statements(function.body))
        if statements and self._docstring(statements[0]):
            statements = statements[1:]
        if not statements or not self._returns(statements[-1]):
            raise _NotTraceable("no return at the end")
        for statement in statements:
            if not isinstance(statement, cst.SimpleStatementLine):
                raise _NotTraceable("Python control flow")
            for small in statement.body:
                self._statement(small, env, last=statement is statements[-1])
        both = step.static & step.donated
        if both:
            step.problems.append(f"{self._names(sorted(both))} is both static and donated in the pieces")

    @staticmethod
    def _docstring(statement: cst.BaseStatement) -> bool:
        return (
            isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, cst.SimpleString)
        )

    @staticmethod
    def _returns(statement: cst.BaseStatement) -> bool:
        return isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[-1], cst.Return)

    def _statement(self, small: cst.BaseSmallStatement, env: dict[str, _Kind], *, last: bool) -> None:
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            kind = self._kind(small.value, env)
            target = small.targets[0].target
            names = [target] if isinstance(target, cst.Name) else (
                [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [None]
            )
            if not all(isinstance(n, cst.Name) for n in names):
                raise _NotTraceable("a target other than names")
            for n in names:
                env[n.value] = kind
                self._bare.discard(n.value)
        elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name) and small.target.value in env:
            if not isinstance(small.operator, tuple(_AUGMENTED)):
                raise _NotTraceable("an augmented assignment that is not arithmetic")
            env[small.target.value] = max(env[small.target.value], self._kind(small.value, env))
            self._bare.discard(small.target.value)
        elif isinstance(small, cst.Return) and last and small.value is not None:
            self._returned(small.value, env)
        else:
            raise _NotTraceable("a statement other than an assignment")

    def _returned(self, value: cst.BaseExpression, env: dict[str, _Kind]) -> None:
        if isinstance(value, cst.Tuple):
            for element in value.elements:
                if isinstance(element, cst.StarredElement):
                    raise _NotTraceable("a starred return")
                self._returned(element.value, env)
            return
        if self._kind(value, env) is not _Kind.ARRAY:
            self._step.problems.append(
                f"it returns `{self.context.code_for(value)}`, a Python value the jitted step would return as an array"
            )

    def _kind(self, expr: cst.BaseExpression, env: dict[str, _Kind]) -> _Kind:
        if isinstance(expr, cst.Name):
            if expr.value in env:
                return env[expr.value]
            if expr.value in self._constants and self._is_global(expr):
                return _Kind.STATIC
            raise _NotTraceable(f"reads `{expr.value}`")
        if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
            return _Kind.STATIC
        if isinstance(expr, cst.Tuple):
            if any(isinstance(e, cst.StarredElement) for e in expr.elements):
                raise _NotTraceable("a starred element")
            return max((self._kind(e.value, env) for e in expr.elements), default=_Kind.STATIC)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _ARITHMETIC):
            left, right = self._kind(expr.left, env), self._kind(expr.right, env)
            if max(left, right) is _Kind.TRACED:
                self._step.python_arithmetic.append(self.context.code_for(expr))
            return max(left, right)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            return self._kind(expr.expression, env)
        if isinstance(expr, cst.Subscript):
            for element in expr.slice:
                index = element.slice
                if not (isinstance(index, cst.Index) and isinstance(index.value, (cst.Integer, cst.SimpleString))):
                    raise _NotTraceable("a subscript other than a constant index")
            return self._kind(expr.value, env)
        if isinstance(expr, cst.Call):
            return self._call(expr, env)
        raise _NotTraceable(type(expr).__name__)

    def _call(self, call: cst.Call, env: dict[str, _Kind]) -> _Kind:
        if any(a.star for a in call.args):
            raise _NotTraceable("a call with *args or **kwargs")
        piece = self._pieces.get(call.func.value) if isinstance(call.func, cst.Name) and self._is_global(call.func) else None
        if piece is not None:
            self._step.calls.append((call, piece))
            kinds = [(arg, self._kind(arg.value, env)) for arg in call.args]
            if piece.problem:
                self._step.problems.append(piece.problem)
            elif piece.params is not None:
                for slot, value in self._slots(call, piece):
                    kind = next(k for a, k in kinds if a.value is value)
                    code = self.context.code_for(value)
                    if slot in piece.static and kind is not _Kind.STATIC:
                        self._step.problems.append(
                            f"`{slot}`, a static argument of `{piece.name}`, receives `{code}`, which the jitted step would trace"
                        )
                    if slot not in piece.donated:
                        continue
                    if isinstance(value, cst.Name) and value.value in self._bare:
                        self._step.donated.add(value.value)  # the caller's array: the step donates it instead
                    elif not (isinstance(value, cst.Name) and kind is _Kind.ARRAY):  # an intermediate: XLA's business
                        self._step.problems.append(
                            f"`{piece.name}` donates `{slot}`, which receives `{code}`: the jitted step cannot donate it on its own"
                        )
            return _Kind.ARRAY
        qualified = self.context.names.qualified(call.func) or ""
        one_argument_where = qualified == "jax.numpy.where" and len(call.args) == 1
        if qualified in _VALUE_SHAPED or one_argument_where:
            raise _NotTraceable(f"`{qualified}` has a shape that depends on values")
        if qualified.startswith("jax.numpy."):
            for arg in call.args:
                if self._kind(arg.value, env) is _Kind.TRACED:
                    self._step.problems.append(
                        f"it passes `{self.context.code_for(arg.value)}` to `{self.context.code_for(call.func)}`, a "
                        "Python value now that the jitted step would trace"
                    )
            return _Kind.ARRAY
        raise _NotTraceable(f"calls `{self.context.code_for(call.func)}`")

    def _slots(self, call: cst.Call, piece: _Piece):
        """(parameter of the piece, argument expression) for each argument of a call of `piece`."""
        positional = [a for a in call.args if a.keyword is None]
        if len(positional) > len(piece.params):
            raise _NotTraceable("more arguments than parameters")
        for index, arg in enumerate(positional):
            yield piece.params[index], arg.value
        for arg in call.args:
            if arg.keyword is not None:
                yield arg.keyword.value, arg.value

    # ---- the fix -----------------------------------------------------------------------------------------

    def _fix(self, function: cst.FunctionDef, params: list[str], static: list[str], donated: list[str]):
        jit, jit_import = self.context.names.expression_for(_JIT)
        jit_code = cst.Module([]).code_for_node(jit)
        imports = [jit_import] if jit_import is not None else []
        keywords = []
        for key, names in (("static_argnums", static), ("donate_argnums", donated)):
            if names:
                indices = [str(params.index(n)) for n in names]
                keywords.append(f"{key}={indices[0] if len(indices) == 1 else '(' + ', '.join(indices) + ')'}")
        if keywords:
            partial, needed = partial_spelling(self.context)
            imports += needed
            decorator = cst.parse_expression(f"{partial}({jit_code}, {', '.join(keywords)})")
        else:
            decorator = jit
        description = f"add @{cst.Module([]).code_for_node(decorator)} to `{function.name.value}`"
        new = function.with_changes(decorators=[cst.Decorator(decorator)])
        return self.fix(description, [(function, new)], add_imports=imports)


_AUGMENTED = (
    cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign, cst.FloorDivideAssign, cst.ModuloAssign,
    cst.PowerAssign, cst.MatrixMultiplyAssign,
)
