"""JF504: a Python step that calls several separately jitted functions, in a loop, pays a barrier per call."""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass, field


import libcst as cst

from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic, Fix, ImportSpec, Safety, spelled_with_import
from jaxfix.facts.binder import Binder
from jaxfix.facts.flow import Lines, block_activity
from jaxfix.facts.jitted import (
    assignments, donated_parameters, jit_wrapped, jitted_functions, partial_spelling, static_parameters,
)
from jaxfix.facts.knowledge.tables import TRANSFORMS
from jaxfix.facts.module import FileFacts, in_order, value_of

_JIT = "jax.jit"
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (*_DEFS, ast.Lambda, ast.ClassDef)
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)
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
    calls: list[tuple[ast.Call, _Piece]] = field(default_factory=list)
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

    looks_at = ()  # it judges each module-level step against the module (its visitor looked at `Module` alone)

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """Each undecorated module-level def, not itself a piece, that calls module-level jitted functions twice or
        more with nothing but `jax.numpy` arithmetic between them and is called in a loop."""
        binder = facts.binder
        pieces = _find_pieces(binder)
        if not pieces:
            return []
        found = []
        constants = _module_constants(facts)
        for stmt in binder.tree.body:
            if isinstance(stmt, _DEFS) and not stmt.decorator_list and stmt.name not in pieces:
                finding = _Check(facts, pieces, constants).step(cls, stmt)
                if finding is not None:
                    found.append(finding)
        return found

    # ---- the fix -----------------------------------------------------------------------------------------

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        """`@jax.jit` (or `@partial(jax.jit, static_argnums=..., donate_argnums=...)`) on the step."""
        function, decorator_code, imports = finding.plan
        node = bridge.cst_of(function)
        if not isinstance(node, cst.FunctionDef):
            return None
        new = node.with_changes(decorators=[cst.Decorator(cst.parse_expression(decorator_code))])
        return Fix(finding.fix.safety, finding.fix.description, ((node, new),), tuple(imports))


def _find_pieces(binder: Binder) -> dict[str, _Piece]:
    pieces = {}
    for jitted in jitted_functions(binder):
        arguments = jitted.function.args
        params = jitted.parameters
        keywords = jitted.keywords
        piece = _Piece(jitted.name, params)
        static, donated = static_parameters(jitted), donated_parameters(jitted)
        other = sorted(set(keywords) - _KNOWN_KEYWORDS)
        if other:
            piece.problem = f"`{jitted.name}`'s jit has `{other[0]}`, which jaxfix does not carry over to the step"
        elif static is None or donated is None:
            piece.problem = f"jaxfix cannot read `{jitted.name}`'s static or donated arguments"
        elif arguments.vararg is not None or arguments.kwonlyargs:
            piece.problem = f"jaxfix cannot map the arguments of `{jitted.name}` (`*args` or keyword-only parameters)"
        else:
            piece.static, piece.donated = static, donated
        pieces[jitted.name] = piece
    for wrapped in jit_wrapped(binder):
        piece = _Piece(wrapped.name, None)
        if wrapped.call.keywords:
            piece.problem = f"`{wrapped.name}` is jitted with keywords on a callable whose signature jaxfix cannot see"
        pieces[wrapped.name] = piece
    return pieces


def _literal(node: ast.AST) -> bool:
    """A number or string literal (LibCST's Integer, Float, SimpleString)."""
    return type(node) is ast.Constant and type(node.value) in (int, float, str, bytes)


def _module_constants(facts: FileFacts) -> set[str]:
    """Module names bound once, at module level, to a number or string, and declared `global` nowhere: the same
    value whether read at trace time or at each call."""
    binder = facts.binder
    declared = {n for g in binder.nodes_of(ast.Global) for n in g.names}
    constants = set()
    for kind, statements in Lines(facts.text).group(binder.tree.body):
        if kind != "line" or len(statements) != 1 or type(statements[0]) is not ast.Assign:
            continue
        assign = statements[0]
        if len(assign.targets) == 1 and type(assign.targets[0]) is ast.Name:
            name = assign.targets[0].id
            value = assign.value
            literal = _literal(value) or (
                type(value) is ast.UnaryOp and _literal(value.operand) and type(value.operand.value) in (int, float)
            )
            if literal and len(assignments(binder, name)) == 1 and name not in declared:
                constants.add(name)
    return constants


class _Check:
    """One step function's analysis."""

    def __init__(self, facts: FileFacts, pieces: dict[str, _Piece], constants: set[str]) -> None:
        self.facts, self.binder, self.pieces, self.constants = facts, facts.binder, pieces, constants

    def step(self, rule, function: ast.AST) -> Diagnostic | None:
        name = function.name
        calls = [
            n for statement in function.body for n in ast.walk(statement)
            if type(n) is ast.Call and type(n.func) is ast.Name and n.func.id in self.pieces and self._is_global(n.func)
        ]
        if len(calls) < 2 or self.facts.traced.is_traced(function):
            return None
        uses = self._uses(function)
        if uses is None:
            return None
        loop_calls, values = uses
        if not loop_calls:
            return None
        arguments = function.args
        params = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
        step = _Step(params)
        try:
            self._analyse(function, step)
        except _NotTraceable:
            return None
        if values:
            step.problems.append(f"`{name}` is also used as a value at line {values[0]}: jaxfix cannot see how it is called")
        if arguments.vararg is not None or arguments.kwarg is not None or arguments.kwonlyargs:
            step.problems.append(f"`{name}` takes `*args`, `**kwargs` or keyword-only parameters")
        elif arguments.defaults:
            step.problems.append(f"`{name}` has default values, which jit would trace or keep as constants")
        pieces = list(dict.fromkeys(piece.name for _, piece in step.calls))
        line = loop_calls[0].lineno
        listed = ", ".join(f"`{p}`" for p in pieces)
        message = (
            f"`{name}` calls jitted functions {len(step.calls)} times ({listed}) and runs in a loop (line {line}): each call is a barrier XLA cannot "
            "fuse across, and every intermediate goes through memory"
        )
        at = self.facts.positions.name_of(function)
        if step.problems:
            return rule.finding(self.facts, at, f"{message}; not fixed: {step.problems[0]}")
        notes = ["XLA may fuse and reorder the pieces' arithmetic"]
        if step.python_arithmetic:
            listed = ", ".join(f"`{code}`" for code in dict.fromkeys(step.python_arithmetic))
            notes.append(f"{listed} is then float32 (int32) arithmetic where its operands are Python numbers")
        static = [p for p in params if p in step.static]
        donated = [p for p in params if p in step.donated]
        if static:
            notes.append(f"{_names(static)} become{'s' if len(static) == 1 else ''} static as in the pieces")
        if donated:
            notes.append(f"{_names(donated)} {'is' if len(donated) == 1 else 'are'} donated as in the pieces")
        decorator, imports = self._decorator(params, static, donated)
        return rule.finding(
            self.facts, at, f"{message}; jit the whole step (unsafe: {'; '.join(notes)})",
            description=f"add @{decorator} to `{name}`", plan=(function, decorator, imports),
        )

    def _decorator(self, params: list[str], static: list[str], donated: list[str]) -> tuple[str, list[ImportSpec]]:
        binder = self.binder
        jit_code, jit_import = spelled_with_import(binder, _JIT)
        imports = [jit_import] if jit_import is not None else []
        keywords = []
        for key, names in (("static_argnums", static), ("donate_argnums", donated)):
            if names:
                indices = [str(params.index(n)) for n in names]
                keywords.append(f"{key}={indices[0] if len(indices) == 1 else '(' + ', '.join(indices) + ')'}")
        if not keywords:
            return jit_code, imports
        partial, needed = partial_spelling(binder)
        if needed is not None:
            imports.append(needed)
        return f"{partial}({jit_code}, {', '.join(keywords)})", imports

    def _is_global(self, name: ast.Name) -> bool:
        referents = self.binder.referents(name)
        return bool(referents) and all(r.scope is self.binder.module for r in referents)

    def _uses(self, function: ast.AST) -> tuple[list[ast.Call], list[int]] | None:
        """The calls of the step inside loops and the lines where it is used other than called; None when it is
        bound more than once or handed to a JAX transformation (already jitted, vmapped, scanned...)."""
        binder = self.binder
        bound = assignments(binder, function.name)
        if len(bound) != 1 or bound[0].node is not function:
            return None
        in_loops, values = [], []
        references = sorted(
            (n for n in binder.nodes_of(ast.Name) if n.id == function.name and bound[0] in binder.referents(n)),
            key=lambda n: (n.lineno, n.col_offset),
        )
        for access in references:
            parent = binder.parent(access)
            if type(parent) is ast.Call and parent.func is access:
                if _in_loop(binder, parent):
                    in_loops.append(parent)
                continue
            call = binder.parent(parent) if type(parent) in (ast.keyword, ast.Starred) else parent
            if type(call) is ast.Call and call.func is not access and (binder.qualified(call.func) or "") in TRANSFORMS | {_JIT}:
                if type(parent) is not ast.Starred or parent in call.args:
                    return None
            values.append(access.lineno)
        return in_loops, values

    # ---- what the step's body does ------------------------------------------------------------------------

    def _analyse(self, function: ast.AST, step: _Step) -> None:
        """Fill `step` in, or raise _NotTraceable. Two passes: the first finds the parameters the pieces take as
        static or donate; the second walks the body in order with what each name then holds."""
        written = set(block_activity(function.body).writes)
        bare = [p for p in step.params if p not in written]
        for statement in function.body:
            for call in (n for n in ast.walk(statement) if type(n) is ast.Call):
                piece = self.pieces.get(call.func.id) if type(call.func) is ast.Name else None
                if piece is None or piece.params is None or piece.problem:
                    continue
                for slot, arg in self._slots(call, piece):
                    if type(arg) is ast.Name and arg.id in bare and slot in piece.static:
                        step.static.add(arg.id)
        self._bare = set(step.params)  # the names that still hold the step's own arguments (pass two)
        self._step = step
        env = {p: (_Kind.STATIC if p in step.static else _Kind.TRACED) for p in step.params}
        groups = Lines(self.facts.text).group(function.body)
        if groups and _docstring(groups[0]):
            groups = groups[1:]
        if not groups or not (groups[-1][0] == "line" and type(groups[-1][1][-1]) is ast.Return):
            raise _NotTraceable("no return at the end")
        for kind, statements in groups:
            if kind != "line":
                raise _NotTraceable("Python control flow")
            for small in statements:
                self._statement(small, env, last=statements is groups[-1][1])
        both = step.static & step.donated
        if both:
            step.problems.append(f"{_names(sorted(both))} is both static and donated in the pieces")

    def _statement(self, small: ast.stmt, env: dict[str, _Kind], *, last: bool) -> None:
        kind = type(small)
        if kind is ast.Assign and len(small.targets) == 1:
            value_kind = self._kind(small.value, env)
            target = small.targets[0]
            names = [target] if type(target) is ast.Name else (
                [e.value if type(e) is ast.Starred else e for e in target.elts]
                if type(target) in (ast.Tuple, ast.List) else [None]
            )
            if not all(type(n) is ast.Name for n in names):
                raise _NotTraceable("a target other than names")
            for n in names:
                env[n.id] = value_kind
                self._bare.discard(n.id)
        elif kind is ast.AugAssign and type(small.target) is ast.Name and small.target.id in env:
            if type(small.op) not in _ARITHMETIC:
                raise _NotTraceable("an augmented assignment that is not arithmetic")
            env[small.target.id] = max(env[small.target.id], self._kind(small.value, env))
            self._bare.discard(small.target.id)
        elif kind is ast.Return and last and small.value is not None:
            self._returned(small.value, env)
        else:
            raise _NotTraceable("a statement other than an assignment")

    def _code(self, node: ast.AST) -> str:
        """The source of `node` with its own parentheses (LibCST's `code_for`)."""
        return self.facts.positions.with_parentheses(node, self.binder.parent(node))

    def _returned(self, value: ast.AST, env: dict[str, _Kind]) -> None:
        if type(value) is ast.Tuple:
            for element in value.elts:
                if type(element) is ast.Starred:
                    raise _NotTraceable("a starred return")
                self._returned(element, env)
            return
        if self._kind(value, env) is not _Kind.ARRAY:
            self._step.problems.append(
                f"it returns `{self._code(value)}`, a Python value the jitted step would return as an array"
            )

    def _kind(self, expr: ast.AST, env: dict[str, _Kind]) -> _Kind:
        kind = type(expr)
        if kind is ast.Name:
            if expr.id in env:
                return env[expr.id]
            if expr.id in self.constants and self._is_global(expr):
                return _Kind.STATIC
            raise _NotTraceable(f"reads `{expr.id}`")
        if _literal(expr):
            return _Kind.STATIC
        if kind is ast.Tuple:
            if any(type(e) is ast.Starred for e in expr.elts):
                raise _NotTraceable("a starred element")
            return max((self._kind(e, env) for e in expr.elts), default=_Kind.STATIC)
        if kind is ast.BinOp and type(expr.op) in _ARITHMETIC:
            left, right = self._kind(expr.left, env), self._kind(expr.right, env)
            if max(left, right) is _Kind.TRACED:
                self._step.python_arithmetic.append(self._code(expr))
            return max(left, right)
        if kind is ast.UnaryOp and type(expr.op) in (ast.USub, ast.UAdd):
            return self._kind(expr.operand, env)
        if kind is ast.Subscript:
            index = expr.slice
            elements = index.elts if type(index) is ast.Tuple and not _parenthesized(self.facts, index) else [index]
            for element in elements:
                if not _literal(element) or type(element.value) is float:
                    raise _NotTraceable("a subscript other than a constant index")
            return self._kind(expr.value, env)
        if kind is ast.Call:
            return self._call(expr, env)
        raise _NotTraceable(kind.__name__)

    def _call(self, call: ast.Call, env: dict[str, _Kind]) -> _Kind:
        if any(type(a) is ast.Starred for a in call.args) or any(k.arg is None for k in call.keywords):
            raise _NotTraceable("a call with *args or **kwargs")
        func = call.func
        piece = self.pieces.get(func.id) if type(func) is ast.Name and self._is_global(func) else None
        arguments = [value_of(a) for a in in_order(call)]
        if piece is not None:
            self._step.calls.append((call, piece))
            kinds = [(value, self._kind(value, env)) for value in arguments]
            if piece.problem:
                self._step.problems.append(piece.problem)
            elif piece.params is not None:
                for slot, value in self._slots(call, piece):
                    kind = next(k for a, k in kinds if a is value)
                    code = self._code(value)
                    if slot in piece.static and kind is not _Kind.STATIC:
                        self._step.problems.append(
                            f"`{slot}`, a static argument of `{piece.name}`, receives `{code}`, which the jitted step would trace"
                        )
                    if slot not in piece.donated:
                        continue
                    if type(value) is ast.Name and value.id in self._bare:
                        self._step.donated.add(value.id)  # the caller's array: the step donates it instead
                    elif not (type(value) is ast.Name and kind is _Kind.ARRAY):  # an intermediate: XLA's business
                        self._step.problems.append(
                            f"`{piece.name}` donates `{slot}`, which receives `{code}`: the jitted step cannot donate it on its own"
                        )
            return _Kind.ARRAY
        qualified = self.binder.qualified(func) or ""
        one_argument_where = qualified == "jax.numpy.where" and len(arguments) == 1
        if qualified in _VALUE_SHAPED or one_argument_where:
            raise _NotTraceable(f"`{qualified}` has a shape that depends on values")
        if qualified.startswith("jax.numpy."):
            for value in arguments:
                if self._kind(value, env) is _Kind.TRACED:
                    self._step.problems.append(
                        f"it passes `{self._code(value)}` to `{self.facts.positions.callee(call)}`, a "
                        "Python value now that the jitted step would trace"
                    )
            return _Kind.ARRAY
        raise _NotTraceable("calls a function jaxfix does not know")

    def _slots(self, call: ast.Call, piece: _Piece):
        """(parameter of the piece, argument expression) for each argument of a call of `piece`."""
        written = in_order(call)
        positional = [a for a in written if not (type(a) is ast.keyword and a.arg is not None)]
        if len(positional) > len(piece.params):
            raise _NotTraceable("more arguments than parameters")
        for index, arg in enumerate(positional):
            yield piece.params[index], value_of(arg)
        for arg in written:
            if type(arg) is ast.keyword and arg.arg is not None:
                yield arg.arg, arg.value


def _names(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _in_loop(binder: Binder, node: ast.AST) -> bool:
    child, current = node, binder.parent(node)
    while current is not None and not isinstance(current, _SCOPES):
        if isinstance(current, _LOOPS) and any(s is child for s in current.body):
            return True
        child, current = current, binder.parent(current)
    return False


def _docstring(group: tuple[str, list[ast.stmt]]) -> bool:
    kind, statements = group
    return (
        kind == "line" and len(statements) == 1 and type(statements[0]) is ast.Expr
        and type(statements[0].value) is ast.Constant and type(statements[0].value.value) in (str, bytes)
    )


def _parenthesized(facts: FileFacts, node: ast.Tuple) -> bool:
    """Whether a tuple is written in parentheses (`ast` spans them; `x[(0, 1)]` is one index, `x[0, 1]` two)."""
    return facts.positions.segment(node).startswith("(")
