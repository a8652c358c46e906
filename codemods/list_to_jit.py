"""JF704: a Python list of numbers passed to a jitted function: a pytree of scalars, one trace per length. On `ast`
alone (`check`): which calls are compiled (`jaxfix.facts.compiled`) and which values are lists of numbers
(`jaxfix.facts.literals`)."""

from __future__ import annotations

import ast

from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic
from jaxfix.facts.compiled import calls_compiled
from jaxfix.facts.literals import number_list
from jaxfix.facts.module import FileFacts, in_order, value_of


class ListToJit(Codemod):
    """A Python list of numbers handed to a jitted function.

    ## What it does
    Finds calls of a jitted function (`@jax.jit`, `f = jax.jit(...)`, `jax.jit(f)(...)`) with an argument
    that is a Python list of numbers: a list literal of numbers, `list(range(...))`, a list comprehension of
    arithmetic on `range` items, or a local name bound only to one of those. It reports; there is no fix.

    ## Why is this bad?
    jit treats a list as a pytree: each element becomes its own scalar input, traced on its own and copied to
    the device on its own, and a list of another length is another pytree structure, so it compiles again.
    The reference's example (`process_list(list(range(1000)))`, summing `jnp.array(x)` inside) traces 1000
    scalar inputs. Measured with `python benchmarks/replication.py` (JAX 0.10.2, this 2-core CPU, shared
    with other jobs): a fresh jitted sum called with a list of 1000 floats took 15.3 s on its first call
    (tracing and compiling 1000 inputs) against 0.63 s for one array of the same values, and 1.6 ms against
    0.048 ms (33 times longer) on every call after (1000 transfers instead of one); lists of 8 to 128 floats
    compiled once per length, as arrays of those shapes do.

    ## Example
    ```python
    values = list(range(1000))
    result = process_list(values)
    ```

    ## Use instead
    ```python
    values = jnp.arange(1000)  # convert before the jit boundary
    result = process_list(values)
    ```

    ## Fix safety
    No fix: the function receives a list, and code that uses it as one (`len(x)`, iteration, `x + [0]`,
    an `isinstance` test) would change meaning with an array. Convert it where the list is made, once.

    ## When it stays quiet
    - Lists of arrays or of anything else (a list of layer parameters is a legitimate pytree), tuples, and
      lists whose elements jaxfix cannot tell are numbers.
    - Calls of functions not known to be jitted, and names bound to something else on some path.
    """

    code = "JF704"
    name = "list-to-jit"
    summary = "Python list of numbers passed to a jitted function (a pytree of scalars, a trace per length): pass an array"
    fix_safety = None
    screen = ("jit", "pmap")  # calls_compiled counts both

    VALID = (
        # a list of strings: jit rejects it (not a JAX type) rather than tracing each item
        Valid('import jax\n\n@jax.jit\ndef f(x):\n    return x\n\nf(["a" for i in range(3)])\n'),
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return jnp.sum(x)\n\n"
            "result = f(jnp.arange(1000))\n"
        ),
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef forward(layers, x):\n    for w in layers:\n"
            "        x = jnp.tanh(x @ w)\n    return x\n\ndef run(x):\n    return forward([jnp.eye(3), jnp.eye(3)], x)\n"
        ),
    )
    INVALID = (
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef process_list(x):\n    return jnp.sum(jnp.array(x))\n\n"
            "values = list(range(1000))\nresult = process_list(values)\n",
            None,
            message="pytree of",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\nscale = jax.jit(lambda x, w: x * jnp.asarray(w))\n\n"
            "def run(x):\n    return scale(x, [0.5, 1.0, 2.0])\n",
            None,
            message="3 scalars",
        ),
    )

    looks_at = ("Call",)

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """Each argument (not `*`/`**`) of a call of a compiled function that is surely a list of numbers."""
        binder = facts.binder
        found = []
        for call in binder.calls:
            if not (call.args or call.keywords) or not calls_compiled(binder, call):
                continue
            values = [(value_of(a), a) for a in in_order(call)]  # as written: what precedes each
            sizes = [
                None if type(a) is ast.Starred or (type(a) is ast.keyword and a.arg is None) else number_list(binder, v)
                for v, a in values
            ]
            if not any(sizes):
                continue
            before = (call.func.end_lineno, call.func.end_col_offset)
            for (value, argument), size in zip(values, sizes):
                if size is not None:
                    what = f"{size} scalars" if type(size) is int else "as many scalars as it has items"
                    code = facts.positions.parenthesized(value, before)
                    found.append(cls.finding(
                        facts, value,
                        f"`{code}` is a Python list of numbers: jit takes it as a pytree of {what} (each traced and "
                        f"copied to the device on its own) and compiles again for each new length; pass an array "
                        f"made once (`jnp.asarray(...)`) instead",
                    ))  # fmt: skip
                before = (argument.end_lineno, argument.end_col_offset)
        return found
