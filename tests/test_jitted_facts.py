"""jaxfix.facts.jitted: the jitted functions jaxfix can read the signature and jit keywords of, on `ast`."""

from __future__ import annotations

import ast

from jaxfix.facts.binder import Binder
from jaxfix.facts.compiled import compiles
from jaxfix.facts.jitted import (
    call_sites, calls_of, donated_parameters, jitted_functions, jitted_methods, nested_jitted_functions,
    only_arithmetic, static_parameters,
)

_FORMS = (
    "import jax\nfrom functools import partial\n\n"
    "@jax.jit\ndef a(x):\n    return x\n\n"
    "@partial(jax.jit, static_argnums=1, donate_argnums=(0,))\ndef b(x, n):\n    return x * n\n\n"
    "@jax.jit(static_argnames=('n',))\ndef c(x, n):\n    return x\n\n"
    "def g(x, n):\n    return x\n\nd = jax.jit(g, static_argnums=(1,))\n"
    "e = jax.jit(jax.grad(g))\n"
    "def h(x):\n    return x\n\nk = jax.jit(h); m = 1\n"
)


def test_each_form_is_read_with_its_keywords() -> None:
    binder = Binder(ast.parse(_FORMS))
    found = {j.name: j for j in jitted_functions(binder)}
    assert list(found) == ["a", "b", "c", "d"]  # `e` has no signature, `k` shares its line
    assert found["a"].call is None and found["a"].decorator is not None
    assert static_parameters(found["b"]) == {"n"} and donated_parameters(found["b"]) == {"x"}
    assert static_parameters(found["c"]) == {"n"} and static_parameters(found["d"]) == {"n"}
    assert found["d"].function.name == "g" and found["d"].jit is found["d"].call.func
    assert all(compiles(binder, j.bound) for j in found.values())  # one notion of "compiled" with facts.compiled


def test_unreadable_keywords_are_none() -> None:
    text = "import jax\nfrom functools import partial\nN = 1\n"
    for keywords in ("static_argnums=N", "static_argnums=-1", "static_argnums=5", "static_argnames=f'n'"):
        binder = Binder(ast.parse(text + f"@partial(jax.jit, {keywords})\ndef f(x, n):\n    return x\n"))
        (jitted,) = jitted_functions(binder)
        assert static_parameters(jitted) is None, keywords


def test_methods_and_nested_steps() -> None:
    text = (
        "import jax\nfrom functools import partial\nclass T:\n    @partial(jax.jit, static_argnums=0)\n"
        "    def step(self, x):\n        return x\n\ndef run(xs):\n    @jax.jit\n    def inner(x):\n        return x\n"
        "    for x in xs:\n        @jax.jit\n        def looped(y):\n            return y\n"
    )
    tree = ast.parse(text)
    binder = Binder(tree)
    cls, run = tree.body[2], tree.body[3]
    assert [j.name for j in jitted_methods(binder, cls)] == ["step"]
    assert [j.name for j in nested_jitted_functions(binder, run)] == ["inner"]


def test_call_sites_are_all_the_calls_or_none() -> None:
    text = "import jax\n@jax.jit\ndef f(x):\n    return x\n\ndef run(x):\n    y = f(x)\n    return f(y)\n"
    binder = Binder(ast.parse(text))
    (jitted,) = jitted_functions(binder)
    assert [c.lineno for c in call_sites(binder, jitted)] == [7, 8]
    passed = Binder(ast.parse(text + "g = f\n"))
    (jitted,) = jitted_functions(passed)
    assert call_sites(passed, jitted) is None and len(calls_of(passed, jitted)) == 2
    rebound = Binder(ast.parse(text + "f = 1\n"))
    (jitted,) = jitted_functions(rebound)
    assert calls_of(rebound, jitted) is None


def _arithmetic(body: str, name: str = "lr") -> bool:
    tree = ast.parse(f"def f(x, lr):\n{body}")
    function = tree.body[0]
    return only_arithmetic(Binder(tree), function.body, name, {"x"})


def test_only_arithmetic() -> None:
    assert _arithmetic("    return x * lr\n")
    assert _arithmetic("    y = x - lr * 2\n    return y\n")
    assert _arithmetic("    return lr * 2, x\n")  # returned
    assert not _arithmetic("    return x[: int(1 / lr)]\n")
    assert not _arithmetic("    return x ** lr\n")
    assert not _arithmetic("    if lr:\n        return x\n    return x * lr\n")
    assert not _arithmetic("    lr = lr * 2\n    return x * lr\n")  # rebound
    assert not _arithmetic("    return x * lr + g(lr=1)\n")  # a keyword of that name
    assert not _arithmetic("    return x * lr + (lambda: lr)()\n")  # a nested scope
    assert not _arithmetic("    return x\n")  # never used
    tree = ast.parse("g = lambda x: x * lr")
    lam = tree.body[0].value
    assert only_arithmetic(Binder(tree), lam.body, "lr", {"x"})  # a lambda's result
