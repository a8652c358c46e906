"""What a function's source says about its inputs, beyond annotations (read from the AST; nothing is imported).

- `compared_constants`: the numbers it compares against (`x > 0.5`, `jnp.where(x >= 2, ...)`, `jnp.clip(x, 0, 1)`),
  and those one step of its arithmetic with a literal (`x * 2.0`, `x + 1.0`) carries onto them: inputs are drawn at
  them and at their neighbours, where a rewrite that moves a boundary (`>` for `>=`) differs.
- `key_parameters`: the parameters used as PRNG keys (passed first, or as `key=`, to a `jax.random` function):
  they get keys, whatever their annotation says (`key: jax.Array` is also what a float array is annotated with).
- `enables_x64`: the module turns on 64-bit mode (`jax.config.update("jax_enable_x64", True)`, `jax.enable_x64()`),
  so unspecified float inputs are float64: drawn as float32, a rewrite that accumulates in float32 would pass.
"""

from __future__ import annotations

import ast
import os

from jaxfix.verify.functions import definitions

BOUNDS = {"clip", "minimum", "maximum", "where", "select", "heaviside", "isclose", "greater", "less", "greater_equal", "less_equal", "equal"}
MAX_CONSTANTS = 16
MAX_REACHED = 32  # values one arithmetic step carries onto a compared constant
STEP_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def compared_constants(tree: ast.Module, name: str) -> tuple[float, ...]:
    """Numeric constants in comparisons and bound-like calls inside the function `name` (and what it nests), then
    the values that one step of the arithmetic it applies with a literal carries onto them: a loop body doing
    `x = x * 2.0` and testing `x > 3.0` lands exactly on 3.0 only from 1.5, which no draw near 3.0 gives."""
    node = _function(tree, name)
    if node is None:
        return ()
    found: list[float] = []

    def add(expr: ast.AST) -> None:
        value = _number(expr)
        if value is not None and value not in found:
            found.append(value)

    steps: list[tuple[type[ast.operator], float, bool]] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Compare):
            for operand in [sub.left, *sub.comparators]:
                add(operand)
        elif isinstance(sub, ast.Call) and _last(sub.func) in BOUNDS:
            for arg in [*sub.args, *(k.value for k in sub.keywords)]:
                add(arg)
        step = _step(sub)
        if step is not None and step not in steps:
            steps.append(step)
    compared = found[:MAX_CONSTANTS]
    reached = [value for c in compared for step in steps for value in [_before_step(c, *step)] if value is not None and value not in found]
    return tuple(compared + list(dict.fromkeys(reached))[:MAX_REACHED])


def _step(node: ast.AST) -> tuple[type[ast.operator], float, bool] | None:
    """`x * k`, `x / k`, `x + k`, `x - k` (or `k - x`, `k / x`, and `x *= k` and the like) with a literal k: the
    operator, k, and whether k is on the left."""
    if isinstance(node, ast.AugAssign):
        left, op, right = node.target, node.op, node.value
    elif isinstance(node, ast.BinOp):
        left, op, right = node.left, node.op, node.right
    else:
        return None
    if not isinstance(op, STEP_OPERATORS):
        return None
    k_left, k_right = _number(left), _number(right)
    if (k_left is None) == (k_right is None):
        return None  # no literal, or arithmetic of two literals
    return (type(op), k_right, False) if k_right is not None else (type(op), k_left, True)


def _before_step(c: float, op: type[ast.operator], k: float, k_on_left: bool) -> float | None:
    """The x for which the step gives exactly c (before rounding in the input's dtype)."""
    if op is ast.Add:
        return c - k
    if op is ast.Sub:
        return k - c if k_on_left else c + k
    if op is ast.Mult:
        return c / k if k else None
    if k_on_left:  # k / x == c
        return k / c if c else None
    return c * k


def key_parameters(tree: ast.Module, name: str) -> set[str]:
    """Parameters of `name` that reach a `jax.random` function as its key (first argument or `key=`)."""
    node = _function(tree, name)
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return set()
    random_names = _random_aliases(tree)
    params = {a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]}
    keys: set[str] = set()
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Call) or not _is_random(sub.func, random_names):
            continue
        if _last(sub.func) in ("PRNGKey", "key", "wrap_key_data", "key_data", "key_impl"):
            continue  # these make keys or read them: their argument is a seed or key data
        candidates = sub.args[:1] + [k.value for k in sub.keywords if k.arg == "key"]
        for arg in candidates:
            if isinstance(arg, ast.Name) and arg.id in params:
                keys.add(arg.id)
    return keys


def enables_x64(text: str) -> bool:
    """The module (or the environment the worker inherits) turns on 64-bit mode."""
    if os.environ.get("JAX_ENABLE_X64", "").lower() in ("1", "true", "yes"):
        return True
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    for sub in ast.walk(tree):
        if not isinstance(sub, ast.Call):
            continue
        if _last(sub.func) == "update" and len(sub.args) >= 2 and _constant(sub.args[0]) == "jax_enable_x64":
            return _constant(sub.args[1]) in (True, 1)
        if _last(sub.func) == "enable_x64":
            return all(_constant(a) not in (False, 0) for a in sub.args)
    return False


def _function(tree: ast.Module, name: str) -> ast.AST | None:
    definition = definitions(tree).get(name)
    return definition.node if definition is not None else None


def _random_aliases(tree: ast.Module) -> set[str]:
    """Names bound to `jax.random` (`import jax.random as jr`, `from jax import random`) and to its functions."""
    names = {"random"}
    for sub in ast.walk(tree):
        if isinstance(sub, ast.Import):
            for alias in sub.names:
                if alias.name == "jax.random" and alias.asname:
                    names.add(alias.asname)
        elif isinstance(sub, ast.ImportFrom) and sub.module == "jax":
            for alias in sub.names:
                if alias.name == "random":
                    names.add(alias.asname or "random")
        elif isinstance(sub, ast.ImportFrom) and sub.module == "jax.random":
            for alias in sub.names:
                names.add("fn:" + (alias.asname or alias.name))
    return names


def _is_random(func: ast.expr, aliases: set[str]) -> bool:
    if isinstance(func, ast.Attribute):
        base = func.value
        if isinstance(base, ast.Attribute):
            return base.attr == "random"
        return isinstance(base, ast.Name) and base.id in aliases
    return isinstance(func, ast.Name) and "fn:" + func.id in aliases


def _number(expr: ast.AST) -> float | None:
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        inner = _number(expr.operand)
        return -inner if inner is not None else None
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
        return float(expr.value)
    return None


def _constant(expr: ast.AST) -> object:
    return expr.value if isinstance(expr, ast.Constant) else None


def _last(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""
