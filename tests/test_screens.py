"""The engine's screens (`Codemod.may_match` and `may_match_tree`) are sound: a screen that says "no" hides no
finding. Each is checked against the full codemod, run without screens, on every embedded example and corpus
file, and on small cases that probe how LibCST resolves names; a few cases show that the screens do reject."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from jaxfix import corpus, engine, registry
from jaxfix.analysis.screen import Screen
from jaxfix.codemod import Codemod
from jaxfix.facts.module import FileFacts
from tests.helpers import codemod_for_module

CODEMODS = registry.all_codemods()


def unscreened(text: str, codemod: type[Codemod]) -> list:
    """What the codemod reports when no screen stands in its way (the rules it yields to run too, as in `check`)."""
    wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    diagnostics, errors = engine._run_codemods(wrapper, [codemod, *registry.yielded_to([codemod])])
    assert not errors, errors
    return [d for d in diagnostics if d.code == codemod.code]


def passes(text: str, codemod: type[Codemod]) -> bool:
    """Whether the screens let the rule look at `text`; for a rule with a `check`, whether `check` finds
    something or leaves the module to the rule's LibCST visitor (its ast screen is an early exit of `check`). A
    rule that judges the others' findings (JF001's `judge`) has only its text screen."""
    if engine.screened(text, [codemod]) != [codemod]:
        return False
    if codemod.answers_on_ast() and codemod.judge.__func__ is Codemod.judge.__func__:
        answer = codemod.check(FileFacts(text, screen=Screen(text)))
        return answer is None or bool(answer)
    return True


def _examples():
    for codemod in CODEMODS:
        for kind, examples in (("INVALID", codemod.INVALID), ("VALID", codemod.VALID)):
            for index, example in enumerate(examples):
                yield pytest.param(codemod, kind, example.code, id=f"{codemod.code}-{kind}-{index}")


def _corpus_files():
    for case in corpus.cases():
        codemod = codemod_for_module(case.codemod)
        for path in dict.fromkeys([case.before, case.after]):
            yield pytest.param(codemod, path.read_text(encoding="utf-8"), id=f"{case.id}/{path.name}")


@pytest.mark.parametrize("codemod,kind,text", list(_examples()))
def test_examples_pass_where_they_match(codemod, kind, text) -> None:
    if kind == "INVALID":
        assert passes(text, codemod)
    if not passes(text, codemod):
        assert unscreened(text, codemod) == []


@pytest.mark.parametrize("codemod,text", list(_corpus_files()))
def test_corpus_passes_where_it_matches(codemod, text) -> None:
    if not passes(text, codemod):
        assert unscreened(text, codemod) == []


def test_a_line_jax_changes_no_text_screen_of_a_text_that_mentions_jax() -> None:
    """engine._screened asks the text screens of a module that another module traces as if it mentioned jax, and
    asks once where it does: a line `jax` added must complete nothing a text screen looks for."""
    texts = [example.code for c in CODEMODS for example in (*c.INVALID, *c.VALID)]
    texts += [path.read_text(encoding="utf-8") for case in corpus.cases() for path in (case.before, case.after)]
    texts += ["x = jax\ny[0] =", "import jax\nx = y.at", "jax  # noqa: JF", "jax\nx[i]", "jax\n"]
    for text in (t for t in texts if "jax" in t):
        for codemod in CODEMODS:
            assert codemod.may_match(text + "\njax") == codemod.may_match(text), (codemod.code, text)


_LOSS = "import jax\n\ndef loss(p, x):\n    return (p * x).sum()\n\n"
_STEP = "import jax\n\n@jax.jit\ndef step(p, x):\n    return p * x, (p * x).sum()\n\n"
_BRANCH = "import jax\nimport jax.numpy as jnp\nfrom functools import partial\n\n"
_BATCH = "import jax\nimport jax.numpy as jnp\n\ndef f(a, x):\n    return jnp.sin(a * x)\n\n"

# Cases at the edges of what LibCST resolves: each must pass the screen where the codemod reports.
PROBES = [
    # JF901: every LibCST name node gets a qualified name, through any import of its first part
    ("deprecated_api", "from jax import tree_map as tm\ny = tm(abs, [1])\n"),
    ("deprecated_api", "import jax.numpy\nx = jax.tree_map(f, y)\n"),
    ("deprecated_api", "from jax import random as r\nk = r.PRNGKey(0)\n"),
    ("deprecated_api", "import jax.random as jr\nk = jr.PRNGKey(0)\n"),
    ("deprecated_api", "def f():\n    from jax import tree_leaves\n    return tree_leaves\n"),
    ("deprecated_api", "from jax.experimental import stax\n"),
    ("deprecated_api", "import jax.experimental.host_callback as hcb\n"),
    ("deprecated_api", "from jax.random import PRNGKey\ndef f(obj):\n    return obj.PRNGKey(0)\n"),
    ("deprecated_api", "import jax\nclass A:\n    k = jax.random.PRNGKey\n"),
    ("deprecated_api", "from jax.lib import xla_bridge as xb\nplatform = xb.get_backend().platform\n"),
    ("deprecated_api", "from jax import lib\nn = lib.xla_bridge.device_count()\n"),
    ("deprecated_api", "import jax.numpy as np\nm = np.NINF\n"),
    ("deprecated_api", "from jax import random as r\nx = r.shuffle(k, y)\n"),
    ("deprecated_api", "import jax\njax.clear_backends()\n"),
    ("deprecated_api", "from jax import util\nf = util.partial(g, 1)\n"),
    # JF401: names ArrayAnalysis proves, however odd
    ("inplace_update", "import jax.numpy as jnp\ndef f():\n    x = jnp.zeros(3)\n    x[0] = 1.0\n    return x\n"),
    ("inplace_update", "import jax\ndef f():\n    x += 1\n    x[0] = 2\n"),
    ("inplace_update", "import jax\ndef f():\n    x: int\n    x[0] = 2\n"),
    ("inplace_update", "import jax.numpy as jnp\ndef f():\n    if (x := jnp.ones(3)) is not None:\n        x[0] = 2\n"),
    ("inplace_update", "import jax.numpy as jnp\ndef f():\n    x = jnp.zeros(3)\n    y = [x for x in 'ab']\n"
     "    x[0] = 2\n    return x\n"),
    ("inplace_update", "from jax import numpy as np\ndef f():\n    x = np.arange(3.0)\n    y = x.at[0].set(1) * 2\n"
     "    y[1] += 1.0\n    return y\n"),
    ("inplace_update", "import jax\nimport jax.numpy as jnp\ndef f(k):\n    x = -jax.random.normal(k, (3,)).T\n"
     "    x[0], x[1] = 1.0, 2.0\n    return x\n"),
    ("inplace_update", "import jax\n@jax.jit\ndef f(x: jax.Array):\n    x[0] = 1.0\n    return x\n"),
    ("inplace_update", "import jax\nfrom jax import Array\n@jax.jit\ndef f(*, x: Array):\n    x[0][1] = 1.0\n    return x\n"),
    # JF601: a module-level def jitted by name in a function that defines no other def of it; a local def jitted
    # beside a module-level one of the same name; a closure over a parameter of a function that a function with no
    # def of its own of that name vmaps
    ("print_in_traced", "import jax\n\ndef g(x):\n    print(x)\n    return x\n\ndef outer(x):\n    return jax.jit(g)(x)\n"),
    ("print_in_traced", "import jax\n\ndef g(x):\n    return x\n\ndef outer(x):\n    def g(y):\n        print(y)\n"
     "        return y\n    return jax.jit(g)(x)\n"),
    ("print_in_traced", "import jax\n\ndef resolve(a):\n    def impl(b):\n        print(a)\n        return b\n"
     "    return impl(a)\n\ndef outer(xs):\n    def other():\n        return xs\n    return jax.vmap(resolve)(xs)\n"),
    # JF601: `print` is the builtin through attributes, calls and subscripts; any transformation traces
    ("print_in_traced", "import jax\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n"),
    ("print_in_traced", "import jax\n@jax.jit\ndef f(x):\n    print.x(x)\n    return x\n"),
    ("print_in_traced", "import equinox as eqx\nimport jax.numpy as jnp\n@eqx.filter_jit\ndef f(x):\n"
     "    print(jnp.sin(x))\n    return x\n"),
    ("print_in_traced", "from jax import lax\ndef run(xs):\n    return lax.scan(lambda c, x: (print(c), (c, x))[1], 0.0, xs)\n"),
    ("print_in_traced", "import jax\ndef helper(x):\n    print(x)\n    return x\n@jax.jit\ndef f(x):\n    return helper(x)\n"),
    ("print_in_traced", "import jax\ndef f(x):\n    def inner(y):\n        print(y)\n    inner(x)\n    return x\ng = jax.grad(f)\n"),
    ("print_in_traced", "import jax\nfrom functools import partial\ndef f(n, x):\n    print(x)\n    return x\n"
     "g = jax.vmap(partial(f, 1))\n"),
    # JF204: a method of an array reading a traced argument is traced (`s.sum(x)`), as TracedAnalysis joins the
    # receiver and the arguments; found by benchmarks/fuzz.py
    ("elif_chain", "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(x):\n    s = s.sum(x)\n    if s > 1.0:\n"
     "        x = jnp.cumsum(x)\n    elif s < -1.0:\n        x = jnp.flip(x)\n    return x\n"),
    # JF204: a def that a transformation or traced code names from a function nested in the one defining it, and one
    # a `global` makes a module name
    ("elif_chain", "import jax\ndef outer(xs):\n    def ref(x, k):\n        if k == 0:\n            y = x + 1\n        elif k == 1:\n            y = x * 2\n        else:\n            y = x\n        return y\n"
     "    def run():\n        return jax.vmap(ref)(xs, xs)\n    return run()\n"),
    ("elif_chain", "import jax\ndef outer():\n    def helper(x, k):\n        if k == 0:\n            y = x + 1\n        elif k == 1:\n            y = x * 2\n        else:\n            y = x\n        return y\n"
     "    @jax.jit\n    def f(x, k):\n        return helper(x, k)\n    return f\n"),
    ("elif_chain", "import jax\ndef make():\n    global ref\n    def ref(x, k):\n        if k == 0:\n            y = x + 1\n        elif k == 1:\n            y = x * 2\n        else:\n            y = x\n        return y\n"
     "make()\ng = jax.jit(ref)\n"),
    ("print_in_traced", "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnums=0)\ndef f(n, x):\n"
     "    print(x)\n    return x\n"),
    ("print_in_traced", "from jax import lax\nimport jax.numpy as jnp\ndef body(i, c):\n    print(c)\n    return c\n"
     "def run(c):\n    return lax.fori_loop(0, 3, body_fun=body, init_val=c)\n"),
    # JF704: the callee is compiled by a binding anywhere (partial(jax.jit, ...)(f), a local jit, pmap alone)
    ("list_to_jit", "import jax\nfrom functools import partial\ndef f(n, x):\n    return x\n"
     "g = partial(jax.jit, static_argnums=0)(f)\ny = g(0, [1.0, 2.0])\n"),
    ("list_to_jit", "import jax\ndef run(f):\n    step = jax.jit(f)\n    return step(x=[i * 2 for i in range(4)])\n"),
    ("list_to_jit", "from jax import pmap as P\n@P\nasync def f(x):\n    return x\nvalues = list(range(3))\nf(values)\n"),
    ("list_to_jit", "import jax\ny = jax.jit(lambda x: x)([-1, 2.5, True])\n"),
    # JF704: a function's own binding decides only where it compiles nothing; a nested def's parameter is its own
    ("list_to_jit", "import jax\ndef run():\n    @jax.jit\n    def g(x):\n        return x\n    return g([1.0, 2.0])\n"),
    ("list_to_jit", "import jax\ndef run(f):\n    g = jax.jit(f)\n    g = jax.pmap(f)\n    return g([1.0, 2.0])\n"),
    ("list_to_jit", "import jax\n@jax.jit\ndef g(x):\n    return x\ndef run():\n    def inner(g=0):\n        return g\n"
     "    class A:\n        g = 1\n    return g([1.0, 2.0])\n"),
    # JF701: reuses that reach a draw through `continue`, `break`, an `except`, a `while` test, a lambda per item
    ("prng_key_reuse", "import jax\ndef f(key, xs):\n    for x in xs:\n        y = jax.random.normal(key)\n"
     "        if x:\n            continue\n        key = make(x)\n"),
    ("prng_key_reuse", "import jax\ndef f(key, xs):\n    for x in xs:\n        if x:\n            a = jax.random.normal(key)\n"
     "            break\n        key = make(x)\n    return jax.random.normal(key)\n"),
    ("prng_key_reuse", "import jax\ndef f(key):\n    try:\n        x = jax.random.normal(key)\n        key = make()\n"
     "    except ValueError:\n        x = jax.random.uniform(key)\n"),
    ("prng_key_reuse", "import jax\ndef f(key):\n    while jax.random.uniform(key) < 0.5:\n        pass\n"),
    ("prng_key_reuse", "import jax\nfs = [lambda: jax.random.normal(key) for _ in range(3)]\n"),
    ("prng_key_reuse", "import jax\ndef f(key, xs):\n    return [jax.random.normal(k) for k in xs if jax.random.uniform(key) > 0]\n"),
    ("prng_key_reuse", "from jax import random\ndef f(key):\n    if (a := random.normal(key)) is None:\n        key = make()\n"
     "    return random.normal(key)\n"),
    ("prng_key_reuse", "import jax\nclass A:\n    def f(self, key, c):\n        x = jax.random.normal(key) if c else 0\n"
     "        with open(c) as g:\n            return x + jax.random.normal(key=key)\n"),
    # JF701: reuses through an alias (a name, a tuple's parts, `:=`), in a loop through an alias, and from one step
    # of a lax loop to the next (a def passed by name or through partial)
    ("prng_key_reuse", "import jax\ndef f(key):\n    k = key\n    a = jax.random.normal(key)\n    return a, jax.random.normal(k)\n"),
    ("prng_key_reuse", "import jax\ndef f(key, n):\n    for _ in range(n):\n        k = key\n        y = jax.random.normal(k)\n"),
    ("prng_key_reuse", "import jax\ndef f(key, x):\n    s = (x, key)\n    a = jax.random.normal(key)\n    _, k = s\n"
     "    return jax.random.normal(k)\n"),
    ("prng_key_reuse", "import jax\ndef f(key):\n    if (k := key) is not None:\n        a = jax.random.normal(key)\n"
     "    return jax.random.normal(k)\n"),
    ("prng_key_reuse", "import jax\ndef f(key, xs):\n    def step(c, x):\n        return c, jax.random.normal(c)\n"
     "    return jax.lax.scan(step, key, xs)\n"),
    ("prng_key_reuse", "from jax import lax, random\nfrom functools import partial\ndef body(s, i, c):\n    x, k = c\n"
     "    return x + s * random.normal(k), k\ndef f(key):\n    return lax.fori_loop(0, 3, partial(body, 0.1), (0.0, key))\n"),
    # JF202: `n += v` makes a tracer of a parameter of a function nothing seeds (strict tracers dropped it)
    ("branch_to_where", "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(y):\n    def g(n):\n"
     "        n += jnp.sum(y)\n        if n > 0:\n            n = n * 2\n        else:\n            n = n * 3\n"
     "        return n\n    return y\n"),
    # JF803: shard_map through partial, pmap applied to a name (a nested def too), a gradient function held in a name
    ("missing_collective", "import jax\nfrom functools import partial\ndef loss(p, x):\n    return (p * x).sum()\n"
     "@partial(jax.experimental.shard_map.shard_map, mesh=m)\ndef step(p, x):\n    g = jax.grad(loss)(p, x)\n"
     "    return p - 0.1 * g\n"),
    ("missing_collective", "from jax import pmap, value_and_grad as vg\ndef loss(p, x):\n    return (p * x).sum()\n"
     "def step(p, x):\n    f = vg(loss)\n    v, g = f(p, x)\n    return p - 0.1 * g\nstep = pmap(step, axis_name='i')\n"),
    ("missing_collective", "import jax\ndef loss(p, x):\n    return (p * x).sum()\n@jax.pmap(axis_name='i')\n"
     "def step(p, x):\n    g = jax.grad(loss)(p, x)\n    return p - 0.1 * g\n"),
    ("missing_collective", "import jax\ndef loss(p, x):\n    return (p * x).sum()\ndef outer():\n    def step(p, x):\n"
     "        g = jax.grad(loss)(p, x)\n        return p - 0.1 * g\n    return jax.pmap(step, axis_name='i')\n"),
    # JF803: a collective on the gradients' name before they are computed, or on the aux of has_aux, reduces nothing
    ("missing_collective", "import jax\nfrom functools import partial\ndef loss(p, x):\n    return (p * x).sum()\n"
     "@partial(jax.pmap, axis_name='i')\ndef step(p, x, g):\n    total = jax.lax.psum(g, 'i')\n"
     "    g = jax.grad(loss)(p, x)\n    return p - 0.1 * g, total\n"),
    ("missing_collective", "import jax\nfrom functools import partial\ndef loss(p, x):\n    return (p * x).sum(), x\n"
     "@partial(jax.pmap, axis_name='i')\ndef step(p, x):\n    g, aux = jax.grad(loss, has_aux=True)(p, x)\n"
     "    aux = jax.lax.pmean(aux, 'i')\n    return p - 0.1 * g, aux\n"),
    # JF702: a clock's line that starts with another statement (`;`, a backslash), a computation in a loop, an alias
    ("timing_without_block", "import time\nimport jax\n@jax.jit\ndef f(x):\n    return x * 2\ndef bench(x):\n"
     "    t0 = time.time()\n    out = f(x)\n    y = g(); t1 = time.time()\n    return out\n"),
    ("timing_without_block", "import time\nimport jax\n@jax.jit\ndef f(x):\n    return x * 2\ndef bench(x):\n"
     "    t0 = time.time()\n    out = f(x)\n    y = g() \\\n ; t1 = time.time()\n    return out\n"),
    ("timing_without_block", "import time\nimport jax\nf = jax.jit(abs)\ndef bench(x):\n    t0 = time.time()\n"
     "    for _ in range(3):\n        n = 1\n        x = f(x)\n        n += 1\n    print(time.time() - t0)\n"),
    ("timing_without_block", "from timeit import default_timer as timer\nimport jax\ndef bench(g, x):\n    t0 = timer()\n"
     "    out = jax.grad(g)(x)\n    return timer() - t0\n"),
    ("timing_without_block", "import time\nimport jax.numpy as jnp\nt0 = time.time()\nout = jnp.dot(x, x)\nn = 1\nt1 = time.time()\n"),
    # JF503: floats from a linspace-like call, through an import of it
    ("static_float_arg", "import jax\nfrom numpy import geomspace as g\nfrom functools import partial\n"
     "@partial(jax.jit, static_argnums=1)\ndef f(x, lr):\n    return x * lr\n\ndef run(x):\n    for lr in g(1, 2, 5):\n"
     "        x = f(x, lr)\n    return x\n"),
    # JF801: a mask may be a name whose bindings hold a boolean seed (through other names, a dtype, jaxtyping's
    # Bool), in the scope the name is read (a closure, a method), or an index written `x[m,]`
    ("boolean_mask", "import jax\n@jax.jit\ndef f(x):\n    return x[x > 0,]\n"),
    ("boolean_mask", "import jax\n@jax.jit\ndef f(x):\n    a = x > 0\n    m = a\n    return x[m]\n"),
    ("boolean_mask", "import jax\nfrom jaxtyping import Array, Bool\n@jax.jit\ndef f(x, m: Bool[Array, 'n']):\n"
     "    return x[m]\n"),
    ("boolean_mask", "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(x):\n    m = jnp.isnan(x)\n"
     "    def g(y):\n        return y[m]\n    return g(x)\n"),
    ("boolean_mask", "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(x, y):\n    m = y.astype(jnp.bool_)\n"
     "    k = m\n    return x[k]\n"),
    ("boolean_mask", "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(x):\n"
     "    m = jnp.zeros(x.shape, dtype=bool)\n    return x[m]\n"),
    ("boolean_mask", "import jax\nfrom jax.numpy import isnan as bad\n@jax.jit\ndef f(x):\n"
     "    return x[bad(x)].sum()\n"),
    ("boolean_mask", "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(x):\n    return x[(x > 0).any(axis=1)]\n"),
    ("boolean_mask", "import jax\nclass A:\n    @jax.jit\n    def f(self, x):\n        m = x > 0\n"
     "        return x[m]\n"),
    # JF801: a seedless name judged where it is read: a closure's boolean, beside a function that binds the same
    # names to what is no boolean
    ("boolean_mask", "import jax\n@jax.jit\ndef f(x):\n    m = x > 0\n    def g(y):\n        k = m\n"
     "        return y[k]\n    return g(x)\n"),
    ("boolean_mask", "import jax\n@jax.jit\ndef f(x):\n    a = x > 0\n    b = a\n    return x[b]\n"
     "def h(a, b):\n    c = b\n    return a[c]\n"),
    # JF501: the gradient through any import of jax.grad, a step assigned from jax.jit, nested in an async def or a
    # method, called by keyword
    ("donate_argnums", _LOSS.replace("import jax\n", "import jax\nfrom jax import grad as G\n") + "@jax.jit\n"
     "def _step(p, x):\n    g = G(loss)(p, x)\n    return p - 0.1 * g\n\ndef train(x):\n    p = x * 2.0\n"
     "    p = _step(p, x)\n    return p\n"),
    ("donate_argnums", _LOSS + "def _step(p, x):\n    g = jax.grad(loss)(p, x)\n"
     "    return jax.tree.map(lambda a, b: a - 0.1 * b, p, g)\n\nstep = jax.jit(_step)\n\n"
     "def train(x):\n    p = x * 2.0\n    p = step(p, x)\n    return p\n"),
    ("donate_argnums", _LOSS + "async def train(x):\n    @jax.jit\n    def _step(p, x):\n"
     "        g = jax.grad(loss)(p, x)\n        return p - 0.1 * g\n    p = x * 2.0\n    p = _step(p=p, x=x)\n"
     "    return p\n"),
    ("donate_argnums", _LOSS + "class T:\n    def train(self, x):\n        @jax.jit\n        def _step(p, x):\n"
     "            g = jax.grad(loss)(p, x)\n            return p - 0.1 * g\n        p = x * 2.0\n"
     "        p = _step(p, x)\n        return p\n"),
    # JF501: calls of a step the screen cannot place (a `global` declaration), a method rebinding `self.p`, a
    # result unpacked then relayed in a loop
    ("donate_argnums", _LOSS + "@jax.jit\ndef _step(p, x):\n    g = jax.grad(loss)(p, x)\n    return p - 0.1 * g\n\n"
     "def train(x):\n    global _step\n    p = x * 2.0\n    p = _step(p, x)\n    return p\n"),
    ("donate_argnums", _LOSS + "from functools import partial\nclass L:\n    def __init__(self):\n"
     "        self.p = jax.numpy.zeros(3)\n    @partial(jax.jit, static_argnums=0)\n    def update(self, p, x):\n"
     "        g = jax.grad(loss)(p, x)\n        return p - 0.1 * g\n    def run(self, x):\n"
     "        self.p = self.update(self.p, x)\n"),
    ("donate_argnums", _LOSS + "@jax.jit\ndef _step(p, x):\n    g = jax.grad(loss)(p, x)\n    return p - 0.1 * g, g\n\n"
     "def train(x):\n    p = x * 2.0\n    for _ in range(3):\n        new, g = _step(p, x)\n        p = new\n    return p\n"),
    # JF301: each form, walking a count (`range(len(s.xs))` is one), the rows of an annotated parameter, or a name
    # bound by a bare annotation; the stacking function through any import
    ("batch_loop_to_vmap", _BATCH + "def g(a, xs: jax.Array):\n"
     "    return jnp.stack(list(map(lambda x: f(a, x), xs)))\n"),
    ("batch_loop_to_vmap", "import jax\nfrom jax.numpy import stack as st\nimport jax.numpy as jnp\n\n"
     "def g(a, xs: jax.Array):\n    return st([jnp.sin(a * x) for x in xs], axis=1)\n"),
    ("batch_loop_to_vmap", _BATCH + "def g(a, s):\n    return jnp.stack([f(a, i) for i in range(len(s.xs))])\n"),
    ("batch_loop_to_vmap", _BATCH + "def g(a, xs: jax.Array):\n    ys = []\n    for i, x in enumerate(xs):\n"
     "        ys.append(f(a, x) * i)\n    return jnp.stack(ys)\n"),
    ("batch_loop_to_vmap", _BATCH + "def g(a, xs: jax.Array):\n    out = jnp.zeros((xs.shape[0], 3))\n"
     "    for i in range(xs.shape[0]):\n        out = out.at[i, :].set(f(a, xs[i]))\n    return out\n"),
    ("batch_loop_to_vmap", _BATCH + "def g(xs: jax.Array, ys: jax.Array):\n"
     "    return jnp.array([f(x, y) for x, y in zip(xs, ys)])\n"),
    ("batch_loop_to_vmap", _BATCH + "def g(a, xs: jax.Array):\n"
     "    return jnp.stack([f(a, xs[i]) for i in range(xs.shape[0])])\n"),
    ("batch_loop_to_vmap", _BATCH + "def g(a):\n    xs: jax.Array\n    xs = jnp.ones((4, 3))\n"
     "    return jnp.stack([f(a, x) for x in xs])\n"),
    # JF705: jnp.stack of anything repeated; jnp.array/asarray of a name with an annotation, a bare annotation, or
    # through an alias
    ("manual_replication", "import jax.numpy as jnp\ndef f(n):\n    return jnp.stack([1.0] * n)\n"),
    ("manual_replication", "import jax\nimport jax.numpy as jnp\ndef f(w: jax.Array, n):\n"
     "    return jnp.array(n * [w])\n"),
    ("manual_replication", "import jax\nimport jax.numpy as jnp\ndef f(n):\n    w: jax.Array\n    w = jnp.ones(3)\n"
     "    return jnp.asarray([w for _ in range(n)])\n"),
    ("manual_replication", "from jax.numpy import asarray as aa\nimport jax.numpy as jnp\ndef f(n):\n"
     "    w = jnp.ones(3)\n    return aa([w] * n)\n"),
    # JF703: a step jitted inline, through partial, or pmapped (a module without "jit"), in an async loop; the
    # transfer in an f-string, of an item or attribute, through an alias of device_get
    ("host_transfer_in_loop", _STEP + "def train(p, xs):\n    for x in xs:\n        p, loss = step(p, x)\n"
     "        print(f'loss {loss:.3f}')\n    return p\n"),
    ("host_transfer_in_loop", "import jax\n\ndef train(p, xs, f):\n    for x in xs:\n        out = jax.jit(f)(p, x)\n"
     "        v = out[0].item()\n    return p\n"),
    ("host_transfer_in_loop", "import jax\nimport numpy as np\nfrom functools import partial\n\ndef f(p, x):\n"
     "    return p * x\n\ndef train(p, xs):\n    g = partial(jax.jit, static_argnums=())(f)\n    while xs:\n"
     "        p = g(p, xs.pop())\n        np.asarray(p.T)\n    return p\n"),
    ("host_transfer_in_loop", "import jax\n\nstep = jax.pmap(lambda p: p + 1)\n\nasync def train(p, xs):\n"
     "    async for x in xs:\n        p = step(p)\n        float(p)\n    return p\n"),
    ("host_transfer_in_loop", _STEP.replace("import jax\n", "import jax\nfrom jax import device_get as dg\n")
     + "def train(p, xs):\n    for x in xs:\n        p, loss = step(p, x)\n        dg(loss)\n    return p\n"),
    # JF804: a step jitted through partial or assigned from jax.jit; the global rebound after a use, by a loop, by `:=`
    ("stale_global", "import jax\nfrom functools import partial\n\nscale = 1.0\n\n"
     "@partial(jax.jit, static_argnums=())\ndef f(x):\n    return x * scale\n\ny = f(1.0)\nscale = 2.0\n"),
    ("stale_global", "import jax\n\nscale = 1.0\n\ndef g(x):\n    return x * scale\n\nf = jax.jit(g)\n"
     "for scale in (1.0, 2.0):\n    y = f(1.0)\n"),
    ("stale_global", "import jax\n\nscale = 1.0\n\n@jax.jit\ndef f(x):\n    return x * scale\n\ny = f(1.0)\n"
     "print(scale := 2.0)\n"),
    ("stale_global", "import jax\n\nn = 0\n\ndef bump():\n    global n\n    n += 1\n\n@jax.jit\ndef f(x):\n"
     "    bump()\n    return x * n\n"),
    # JF201: an `if` alone in an `else` block is no `elif` (ast writes both alike); a parameter of a function
    # that traced code calls by name, read in a closure; a parameter of a function vmap takes through partial
    ("branch_to_cond", _BRANCH + "@jax.jit\ndef f(x, n=1):\n    if n == 1:\n        x = -x\n    else:\n"
     "        if jnp.sum(x) > 0:\n            x = jnp.cumsum(x)\n    return x\n"),
    ("branch_to_cond", _BRANCH + "def outer(x, t):\n    def inner(y):\n        if t > 0:\n            y = jnp.cumsum(y)\n"
     "        return y\n    return inner(x)\n\n@jax.jit\ndef f(x, t):\n    return outer(x, t)\n"),
    ("branch_to_cond", _BRANCH + "def g(a, t):\n    if t > 0:\n        a = jnp.cumsum(a)\n    return a\n\n"
     "h = jax.vmap(partial(g, jnp.ones(3)))\n"),
    # JF201: the parameter left traced by static_argnums, by vmap's in_axes, by jax.grad's argnums; one a jitted
    # function passes by keyword
    ("branch_to_cond", _BRANCH + "@partial(jax.jit, static_argnums=0)\ndef f(n, t):\n    x = jnp.ones(3)\n"
     "    if t > 0:\n        x = jnp.cumsum(x) * n\n    return x\n"),
    ("branch_to_cond", _BRANCH + "def g(a, t):\n    if t > 0:\n        a = jnp.cumsum(a)\n    return a\n\n"
     "h = jax.vmap(g, in_axes=(None, 0))\n"),
    ("branch_to_cond", _BRANCH + "def helper(x, t):\n    if t > 0:\n        x = jnp.cumsum(x)\n    return x\n\n"
     "@jax.jit\ndef f(x, s):\n    return helper(x, t=s * 2)\n"),
    ("branch_to_cond", _BRANCH + "def g(x, t):\n    if t > 0:\n        x = jnp.cumsum(x)\n    return x\n\n"
     "h = jax.grad(g, argnums=(0, 1))\nk = jax.jit(h)\n"),
    ("branch_to_where", _BRANCH + "def g(a, t):\n    return a if t > 0 else -a\n\nh = jax.vmap(g, (None, 0))\n"),
    # JF201: a bare name as the test, an array by an annotation that wraps jax.Array in a subscript that is no
    # container, or by being passed to a jax.numpy function that takes no sequence
    ("branch_to_cond", _BRANCH + "from typing import Optional\n\n@jax.jit\ndef f(x, m: Optional[jax.Array]):\n"
     "    if m:\n        x = jnp.cumsum(x)\n    return x\n"),
    ("branch_to_cond", _BRANCH + "@jax.jit\ndef f(x, m):\n    y = jnp.sum(m)\n    if m:\n        x = jnp.cumsum(x) * y\n"
     "    return x\n"),
    # JF201: a def nested in the function that vmaps it by name; one that a traced lambda calls by name
    ("branch_to_cond", _BRANCH + "def outer(xs):\n    def g(t):\n        if t > 0:\n            t = jnp.cumsum(t)\n"
     "        return t\n    return jax.vmap(g)(xs)\n"),
    ("branch_to_cond", _BRANCH + "def outer(xs):\n    def g(t):\n        if t > 0:\n            t = jnp.cumsum(t)\n"
     "        return t\n    return jax.lax.cond(xs[0] > 0, lambda v: g(v), lambda v: v, xs)\n"),
    # JF202: one-line `if`/`else` assigning one name; a three-argument jnp.where in the test
    ("branch_to_where", _BRANCH + "@jax.jit\ndef f(x):\n    s = jnp.sum(x)\n    if s > 0: s = -s\n"
     "    else: s = s * 2.0\n    return s\n"),
    ("branch_to_where", _BRANCH + "@jax.jit\ndef f(x):\n    s = jnp.sum(x)\n    if jnp.where(s > 0, s, -s) > 1.0:\n"
     "        s = s * 0.5\n    return s\n"),
    ("branch_to_where", _BRANCH + "def g(a, t):\n    return a if t > 0 else -a\n\nh = jax.vmap(partial(g, 1.0))\n"),
    # JF102: rows of a jax.numpy call, of `.T`, of a parameter used as an array; a forward range read as `xs[i]`;
    # a carry by `+=` alone
    ("loop_to_scan", _BRANCH + "@jax.jit\ndef f(x):\n    total = jnp.zeros(3)\n    for row in jnp.tanh(x):\n"
     "        total = 0.5 * total + row\n    return total\n"),
    ("loop_to_scan", _BRANCH + "@jax.jit\ndef f(x):\n    total = jnp.zeros(3)\n    for row in x.T:\n"
     "        total = 0.5 * total + row\n    return total\n"),
    ("loop_to_scan", _BRANCH + "@jax.jit\ndef f(xs):\n    total = jnp.zeros(xs.shape[1:])\n    for x in xs:\n"
     "        total = 0.5 * total + x\n    return total\n"),
    ("loop_to_scan", _BRANCH + "@jax.jit\ndef f(xs):\n    total = jnp.zeros(xs.shape[1:])\n"
     "    for i in range(xs.shape[0]):\n        total = 0.5 * total + xs[i]\n    return total\n"),
    ("loop_to_scan", _BRANCH + "@jax.jit\ndef f(xs):\n    total = jnp.zeros(xs.shape[1:])\n    for x in xs:\n"
     "        total += x\n    return total\n"),
    # JF101: a carry by `+=` alone; a name live only after the loop
    ("loop_to_fori", _BRANCH + "@jax.jit\ndef f(x):\n    for i in range(100):\n        x += jnp.sin(i * x)\n    return x\n"),
    ("loop_to_fori", _BRANCH + "@jax.jit\ndef f(x):\n    y = x\n    for i in range(100):\n        y = jnp.sin(i * x)\n"
     "    return y\n"),
    # JF101: a long literal loop under jax.grad alone (reported unrewritten), a traced bound under vmap, a static
    # bound in a helper that a jitted function calls, in a lax body, of a module constant
    ("loop_to_fori", _BRANCH + "def f(x):\n    for i in range(100):\n        x = x + jnp.sin(i * x)\n        print(i)\n"
     "    return x\ng = jax.grad(f)\n"),
    ("loop_to_fori", _BRANCH + "def f(x, n):\n    for i in range(n):\n        x = x + jnp.sin(i * x)\n    return x\n"
     "g = jax.vmap(f)\n"),
    ("loop_to_fori", _BRANCH + "def f(x):\n    for i in range(10):\n        x = x + jnp.sin(i * x)\n    return x\n"
     "@jax.jit\ndef g(x):\n    return f(x)\n"),
    ("loop_to_fori", _BRANCH + "def run(xs):\n    def body(c, x):\n        for i in range(10):\n"
     "            c = c + jnp.sin(i * x)\n        return c, c\n    return jax.lax.scan(body, 0.0, xs)\n"),
    ("loop_to_fori", _BRANCH + "N = 50\n@partial(jax.jit, static_argnums=1)\ndef f(x, k):\n    for i in range(N * 2 + k):\n"
     "        x = x + jnp.sin(i * x)\n    return x\n"),
    ("loop_to_fori", _BRANCH + "def f(x):\n    n = jnp.sum(x).astype(int)\n    for i in range(n):\n"
     "        x = x + jnp.sin(i * x)\n    return x\ng = jax.grad(f)\n"),
    # JF101: the index passed to JAX functions that take a traced int, by position and by keyword
    ("loop_to_fori", _BRANCH + "@jax.jit\ndef f(x):\n    for i in range(x.shape[0]):\n"
     "        x = x + jnp.full(x.shape, i) + jax.nn.one_hot(x=i, num_classes=3)\n    return x\n"),
    # JF102: rows in a helper a jitted function calls; a long literal or a traced count under grad or vmap alone
    ("loop_to_scan", _BRANCH + "def f(xs):\n    total = jnp.zeros(3)\n    for x in jnp.tanh(xs):\n"
     "        total = 0.5 * total + x\n    return total\n@jax.jit\ndef g(xs):\n    return f(xs)\n"),
    ("loop_to_scan", _BRANCH + "def f(x):\n    ys = []\n    for _ in range(100):\n        x = jnp.sin(x)\n"
     "        ys.append(x)\n        print(x)\n    return jnp.stack(ys)\ng = jax.grad(f)\n"),
    ("loop_to_scan", _BRANCH + "def f(x, n):\n    ys = []\n    for _ in range(n):\n        x = jnp.sin(x)\n"
     "        ys.append(x)\n    return jnp.stack(ys)\ng = jax.vmap(f)\n"),
    # JF203: `and`/`not` of a boolean name and a reduction, `or` of `.all()` and a jax.numpy reduction
    ("builtin_on_traced", _BRANCH + "@jax.jit\ndef f(x):\n    m = x > 0\n    return m and not jnp.isnan(x).any()\n"),
    ("builtin_on_traced", _BRANCH + "@jax.jit\ndef f(x):\n    return (x > 0).all() or jnp.isnan(x).any()\n"),
    # JF601: a traced value in a keyword's f-string, under `*`, or a parameter a jitted caller passes a tracer
    ("print_in_traced", _BRANCH + "@jax.jit\ndef f(x):\n    print('x', sep=f'{jnp.sum(x)}')\n    return x\n"),
    ("print_in_traced", _BRANCH + "@jax.jit\ndef f(x):\n    print(*[x])\n    return x\n"),
    ("print_in_traced", _BRANCH + "def g(x, n):\n    print(n)\n    return x\n@jax.jit\ndef f(x):\n"
     "    return g(x, jnp.sum(x))\n"),
    # JF103: a count a jitted caller passes as a tracer
    ("while_to_while_loop", _BRANCH + "def g(x, n):\n    while n > 0:\n        x = jnp.sin(x)\n        n = n - 1\n"
     "    return x\n@jax.jit\ndef f(x):\n    return g(x, jnp.sum(x))\n"),
    # JF104: a body that unpacks its carry, passed by keyword; a lambda body
    ("fori_at_set_to_scan", _BRANCH + "@jax.jit\ndef f(h):\n    def body(i, carry):\n        ys, h = carry\n"
     "        h = jnp.tanh(h)\n        ys = ys.at[i].set(h)\n        return ys, h\n"
     "    ys, h = jax.lax.fori_loop(0, 10, body_fun=body, init_val=(jnp.zeros((10, 3)), h))\n    return ys\n"),
    ("fori_at_set_to_scan", _BRANCH + "@jax.jit\ndef f(x):\n"
     "    return jax.lax.fori_loop(0, 10, lambda i, ys: ys.at[i, :].set(x * i), jnp.zeros((10, 3)))\n"),
    # JF201: a name unpacked from a traced carry (found by the fuzzer: the screen gave unpacked names no value)
    ("branch_to_cond", "import jax.numpy as jnp\nfrom jax import lax\n\n\ndef logistic_orbit(r, x0, steps=100):\n"
     "    orbit = jnp.zeros(steps)\n\n    def body(i, carry):\n        x, orbit = carry\n        x = r * x * (1.0 - x)\n"
     "        orbit = orbit.at[i].set(x)\n        if x > 0:\n            pass\n        return x, orbit\n\n"
     "    x, orbit = lax.fori_loop(0, steps, body, (x0, orbit))\n    return orbit\n"),
    # JF001: suppressions in any case, the dotted and dotless I included (the expression's `i` matches them)
    ("unused_noqa", "import jax\nx = 1  # NOQA: JF601\n"),
    ("unused_noqa", "import jax\nx = 1  # JAXF\u0130X: ignore[JF601]\n"),
    ("unused_noqa", "import jax\nx = 1  # jaxf\u0131x: ignore\n"),
]


@pytest.mark.parametrize("module,text", PROBES)
def test_probes_pass_where_they_match(module, text) -> None:
    codemod = codemod_for_module(module)
    if unscreened(text, codemod):
        assert passes(text, codemod)


# ---- the screens reject what cannot match ----------------------------------------------------------------------


def test_tree_util_tree_map_is_not_deprecated() -> None:
    codemod = codemod_for_module("deprecated_api")
    text = "import jax\nfrom jax import tree_util\n\ny = jax.tree_util.tree_map(f, x)\nz = tree_util.tree_map(f, x)\n"
    assert codemod.may_match(text)  # the words are there
    assert not passes(text, codemod)
    assert passes(text + "w = jax.tree_map(f, x)\n", codemod)


def test_numpy_item_assignment_is_not_an_array_update() -> None:
    codemod = codemod_for_module("inplace_update")
    text = (
        "import jax\nimport numpy as np\n\ndef f(self, params):\n    x = np.zeros(3)\n    x[0] = 1.0\n"
        "    params['w'] = 2\n    child = self\n    child = child[0]\n    child[1] = 3\n    return x\n"
    )
    assert codemod.may_match(text)
    assert not passes(text, codemod)
    assert passes(text.replace("np.zeros", "jax.numpy.zeros"), codemod)


def test_print_needs_a_function_that_may_be_traced() -> None:
    codemod = codemod_for_module("print_in_traced")
    assert not passes("import jax\nprint(jax.numpy.zeros(3))\n", codemod)  # not inside a function
    assert not passes("import jax\n\ndef f(x):\n    print(x)\n", codemod)  # nothing traces
    assert not passes("import jax\n\ndef f(x):\n    print(x)\n\n@jax.jit\ndef g(x):\n    return x\n", codemod)
    assert passes("import jax\n\ndef f(x):\n    print(x)\n\ng = jax.vmap(f)\n", codemod)


def test_boolean_mask_needs_an_index_that_may_be_a_traced_mask() -> None:
    codemod = codemod_for_module("boolean_mask")
    # indices bound as loop variables or unannotated parameters, and an array built by jnp.array: no mask
    text = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, i, params):\n    for k in params:\n"
        "        x = x + params[k]\n    return x[i] + x[jnp.array([0, 1])]\n"
    )
    assert codemod.may_match(text)
    assert not passes(text, codemod) and unscreened(text, codemod) == []
    assert passes(text.replace("x[i]", "x[x > i]"), codemod)
    # a name that is boolean in one function is not in another, where a loop binds it
    other = text + "\ndef g(x):\n    k = x > 0\n    return k\n"
    assert not passes(other, codemod) and unscreened(other, codemod) == []
    assert passes(other.replace("for k in params:", "k = x > 0\n    for _ in params:"), codemod)


def test_boolean_mask_needs_an_index_a_call_may_make_boolean() -> None:
    codemod = codemod_for_module("boolean_mask")
    # diffrax's `index = jnp.searchsorted(ts, t, side="left" if left else "right")` beside a boolean `left`;
    # gymnax's `jnp.argmax`; jumanji's coordinate from a same-module function and `jnp.clip` of arithmetic
    head = (
        "import jax\nimport jax.numpy as jnp\n\ndef pick(k: bool):\n    return k\n\n"
        "@jax.jit\ndef f(x, t, left: bool):\n"
    )
    values = [
        'jnp.searchsorted(x, t, side="left" if left else "right")',
        "jnp.argmax(x > t)",
        "pick(left)",
        "jnp.clip(jnp.argmax(x) - 1, 0, left)",
    ]
    for value in values:
        text = head + f"    i = {value}\n    return x[i]\n"
        assert codemod.may_match(text) and not passes(text, codemod) and unscreened(text, codemod) == [], value
    # a boolean function, a dtype, a category kept from a boolean argument
    kept = ["jnp.isnan(x)", "jnp.asarray(t, dtype=bool)", "jnp.where(left, x > t, x < 0)", "jnp.clip(x > t, 0, 1)"]
    for value in kept:
        text = head + f"    i = {value}\n    return x[i]\n"
        assert passes(text, codemod), value
    assert unscreened(head + "    i = jnp.isnan(x)\n    return x[i]\n", codemod)


def test_boolean_mask_reads_names_where_they_stand() -> None:
    codemod = codemod_for_module("boolean_mask")
    # optax's hungarian algorithm: an index read from an array unpacked from the carry, while another function
    # of the module binds the same name to a boolean array
    text = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef body(it, val):\n    remaining, v = val\n"
        "    j = remaining[it]\n    return v[j]\n\ndef other(n):\n    remaining = jnp.zeros(n, bool)\n    return remaining\n"
    )
    assert codemod.may_match(text)
    assert not passes(text, codemod)
    assert passes(text.replace("    remaining, v = val\n", "    v = val\n    remaining = v > 0\n"), codemod)


def test_donation_needs_a_training_step() -> None:
    codemod = codemod_for_module("donate_argnums")
    step = _LOSS + (
        "@jax.jit\ndef _step(p, x):\n    g = jax.grad(loss)(p, x)\n    p = p - 0.1 * g\n    return p\n\n"
        "def train(x):\n    p = x * 2.0\n    p = _step(p, x)\n    return p\n"
    )
    good = step.replace("    p = p - 0.1 * g\n    return p\n", "    return p - 0.1 * g\n")
    # the parameter is rebound in the step (optax's tests), or the gradient is of an attribute (haiku's example):
    # training steps all the same, donated without a shape proof
    for text in (step, good, good.replace("(loss)(p, x)", "(loss)(s.p, x)")):
        assert passes(text, codemod) and unscreened(text, codemod)
    # no gradient and no optimizer update: not a training step
    plain = good.replace("    g = jax.grad(loss)(p, x)\n    return p - 0.1 * g\n", "    return jnp.sin(p) * x\n")
    assert codemod.may_match(plain)
    assert not passes(plain, codemod) and unscreened(plain, codemod) == []


def test_donation_needs_calls_that_all_rebind_one_argument() -> None:
    codemod = codemod_for_module("donate_argnums")
    step = _LOSS + "@jax.jit\ndef _step(p, x):\n    g = jax.grad(loss)(p, x)\n    return p - 0.1 * g\n\n"
    train = step + "def train(x):\n    p = x * 2.0\n    p = _step(p, x)\n    return p\n"
    # flax's notebooks: the result is a loss; optax's tests: one call drops the result; flax's sst2: the step
    # passed as a value; optax's pmap test: `fn_update = jax.pmap(fn_update)` binds the name twice
    rejected = [
        train.replace("    p = _step(p, x)\n", "    loss = _step(p, x)\n"),
        train.replace("    p = _step(p, x)\n", "    p = _step(p, x)\n    _ = _step(p, x)\n"),
        train.replace("    return p\n", "    run(_step)\n    return p\n"),
        train.replace("@jax.jit\ndef _step", "def _step").replace("\ndef train", "_step = jax.jit(_step)\n\ndef train"),
        train.replace("    return p\n", "    f = lambda q: _step(q, x)\n    return p\n"),
    ]
    for text in rejected:
        assert codemod.may_match(text)
        assert not passes(text, codemod) and unscreened(text, codemod) == [], text
    # rebound through `p = new`; a call in a function whose own `_step` is another: not one of the step's calls
    kept = [
        train,
        train.replace("    p = _step(p, x)\n", "    new = _step(p, x)\n    p = new\n"),
        step + "def helper(_step, p):\n    return _step(p)\n\n" + train[len(step):],
    ]
    for text in kept:
        assert passes(text, codemod) and unscreened(text, codemod), text


def test_donation_of_a_method_needs_every_attribute_of_its_name_to_call_it_on_self() -> None:
    codemod = codemod_for_module("donate_argnums")
    # haiku's impala learner: `logs.update({...})` beside `self.update(...)`
    text = _LOSS + (
        "from functools import partial\n\nclass L:\n    @partial(jax.jit, static_argnums=0)\n"
        "    def update(self, p, x):\n        g = jax.grad(loss)(p, x)\n        return p - 0.1 * g\n\n"
        "    def run(self, x, logs):\n        p = x * 2.0\n        p = self.update(p, x)\n"
        "        logs.update({})\n        return p\n"
    )
    assert codemod.may_match(text)
    assert not passes(text, codemod) and unscreened(text, codemod) == []
    kept = text.replace("        logs.update({})\n", "")
    assert passes(kept, codemod) and unscreened(kept, codemod)


def test_static_float_needs_a_float_in_the_loop_around_the_call() -> None:
    codemod = codemod_for_module("static_float_arg")
    # numpyro's optimizer test: `opt_state = step(opt_state, opt)` with `opt` static, in a loop with no float
    text = (
        "import jax\nfrom functools import partial\n\n@partial(jax.jit, static_argnums=1)\ndef f(x, lr):\n"
        "    return x * lr\n\ndef run(x, lr):\n    for i in range(3):\n        lr = lr * 2\n        x = f(x, lr)\n"
        "    return x\n"
    )
    assert codemod.may_match(text)
    assert not passes(text, codemod) and unscreened(text, codemod) == []
    for float_ in ("lr * 0.5", "lr / 2", "float(lr)"):
        kept = text.replace("lr * 2", float_)
        assert passes(kept, codemod) and unscreened(kept, codemod), float_


def test_vmap_batches_need_what_may_be_arrays() -> None:
    codemod = codemod_for_module("batch_loop_to_vmap")
    # the leaves of a pytree, a loop variable, a NumPy stack, `dtype=`: none is a batch the rule proves
    texts = [
        _BATCH + "def g(a, tree):\n    return jnp.stack([f(a, x) for x in jax.tree.leaves(tree)])\n",
        _BATCH + "def g(a, batches):\n    for xs in batches:\n        pass\n"
        "    return jnp.stack([f(a, x) for x in xs])\n",
        "import numpy as np\n" + _BATCH + "def g(a, xs: jax.Array):\n    return np.stack([f(a, x) for x in xs])\n",
        _BATCH + "def g(a, xs: jax.Array):\n    return jnp.array([f(a, x) for x in xs], dtype=jnp.float32)\n",
    ]
    for text in texts:
        assert codemod.may_match(text)
        assert not passes(text, codemod) and unscreened(text, codemod) == []
    assert passes(texts[0].replace("jax.tree.leaves(tree)", "jnp.ravel(tree)"), codemod)


@pytest.mark.parametrize(
    "rejected,fires",
    [
        # a literal count under ten stays a Python loop
        ("return jnp.stack([f(a, i) for i in range(5)])\n", "return jnp.stack([f(a, i) for i in range(50)])\n"),
        # the index picks the items of a list this def binds, though another def takes a parameter of that name
        (
            "zs = []\n    for k in range(n):\n        zs.append(f(a, k))\n    return jnp.stack([zs[i] for i in range(n)])\n",
            "zs = jnp.zeros((n, 3))\n    return jnp.stack([zs[i] for i in range(n)])\n",
        ),
        (
            "zs = [a, a]\n    ys = []\n    for i in range(n):\n        ys.append(f(zs[i], 1.0))\n    return jnp.stack(ys)\n",
            "zs = jnp.ones(n)\n    ys = []\n    for i in range(n):\n        ys.append(f(zs[i], 1.0))\n    return jnp.stack(ys)\n",
        ),
        # the element is the index itself, which no binding makes an array
        ("return jnp.array([i for i in range(n)])\n", "return jnp.array([jnp.float32(i) for i in range(n)])\n"),
        (
            "ys = []\n    for i in range(n):\n        ys.append(i)\n    return jnp.stack(ys)\n",
            "ys = []\n    for i in range(n):\n        ys.append(f(a, i))\n    return jnp.stack(ys)\n",
        ),
    ],
)
def test_vmap_counts_need_an_element_that_may_be_a_batch(rejected, fires) -> None:
    codemod = codemod_for_module("batch_loop_to_vmap")
    head = _BATCH + "def h(zs):\n    return zs\n\ndef g(a, n):\n    "
    assert codemod.may_match(head + rejected) and not passes(head + rejected, codemod)
    assert unscreened(head + rejected, codemod) == []
    assert passes(head + fires, codemod) and unscreened(head + fires, codemod)


def test_replication_needs_one_repeated_value_that_may_be_an_array() -> None:
    codemod = codemod_for_module("manual_replication")
    # brax's `jp.array([0.0] * 3)` (numbers convert on the host), an unannotated parameter, a value that reads the
    # comprehension's variable, a comprehension over anything but range
    texts = [
        "import jax.numpy as jnp\ndef f(w, n):\n    return jnp.array([0.0] * n), jnp.array([w] * n)\n",
        "import jax.numpy as jnp\ndef f(w, n):\n    return jnp.stack([w * i for i in range(n)])\n",
        "import jax.numpy as jnp\ndef f(ws):\n    return jnp.stack([w for w in ws])\n",
    ]
    for text in texts:
        assert codemod.may_match(text)
        assert not passes(text, codemod) and unscreened(text, codemod) == []
    assert passes(texts[0].replace("def f(w, n)", "def f(w: jnp.ndarray, n)"), codemod)


@pytest.mark.parametrize(
    "text, near_miss",
    [
        # jraph: a name that another function binds to an array, read where a parameter binds it
        ("import numpy as np\nimport jax.numpy as jnp\nw = jnp.ones(3)\ndef f(w, n):\n    return jnp.array([w] * n)\n",
         ("def f(w, n)", "def f(v, n)")),
        # numpyro: a parameter annotated otherwise than as an array, and rebound to one
        ("import jax.numpy as jnp\ndef f(w: float | list, n):\n    w = jnp.ones(3)\n    return jnp.array([w] * n)\n",
         ("w: float | list, ", "")),
        ("import jax\nimport jax.numpy as jnp\ndef f(w: int, n):\n    g = lambda w: jnp.asarray([w] * n)\n"
         "    return g\n", ("w: int, n):\n    g = lambda w:", "w: jax.Array, n):\n    g = lambda:")),
        # flax: the copies are the point, one per device
        ("import jax\nimport jax.numpy as jnp\ndef f(w, n, s):\n    return jax.device_put(jnp.stack([w] * n), s)\n",
         ("jax.device_put(", "jax.jit(")),
        ("import jax\nimport jax.numpy as jnp\ndef f(w, n, s):\n    return jax.device_put(s, x=jnp.stack([w] * n))\n",
         ("import jax\n", "import jax\nif old:\n    import numpy as jax\n")),
    ],
)
def test_replication_needs_a_name_proven_where_it_is_read_and_no_placement(text, near_miss) -> None:
    codemod = codemod_for_module("manual_replication")
    assert codemod.may_match(text)
    assert not passes(text, codemod) and unscreened(text, codemod) == []
    sibling = text.replace(*near_miss)
    assert sibling != text and passes(sibling, codemod) and unscreened(sibling, codemod)


def test_host_transfer_needs_a_result_of_the_step_in_the_same_loop() -> None:
    codemod = codemod_for_module("host_transfer_in_loop")
    # the transfer after the loop, or of the loop's own variable (haiku's and optax's training loops)
    texts = [
        _STEP + "def train(p, xs):\n    for x in xs:\n        p, loss = step(p, x)\n    print(loss)\n    return p\n",
        _STEP + "def train(p, xs):\n    for x in xs:\n        p, loss = step(p, x)\n        print(x)\n    return p\n",
    ]
    for text in texts:
        assert codemod.may_match(text)
        assert not passes(text, codemod) and unscreened(text, codemod) == []
    assert passes(texts[1].replace("print(x)", "print(loss)"), codemod)


@pytest.mark.parametrize(
    "fires",
    [
        "    for x in range(30):\n",  # enough steps
        "    for x in range(0, 3, -1) if p else range(3):\n",  # no literal trip count
        "    for k in range(20):\n      for x in range(3):\n",  # a long loop around the short one
        "    range = lambda n: [1] * 99\n    for x in range(3):\n",  # not the builtin
    ],
)
def test_host_transfer_needs_a_loop_that_may_run_min_steps(fires) -> None:
    codemod = codemod_for_module("host_transfer_in_loop")
    # a tutorial's `for _ in range(3):` printing each loss: a few round trips in all
    text = _STEP + "def train(p):\n    for x in range(3):\n        p, loss = step(p, x)\n        print(loss)\n"
    assert codemod.may_match(text) and not passes(text, codemod) and unscreened(text, codemod) == []
    fired = text.replace("    for x in range(3):\n", fires)
    assert passes(fired, codemod) and unscreened(fired, codemod)
    configured = codemod.with_options({"min-steps": 3})
    assert passes(text, configured) and unscreened(text, configured)


def test_stale_global_needs_a_rebinding_after_a_jitted_function() -> None:
    codemod = codemod_for_module("stale_global")
    # names bound twice before the jitted function (a default, then a configured value), or by an import
    texts = [
        "import jax\n\nscale = 1.0\nif jax.config.x64_enabled:\n    scale = 2.0\n\n@jax.jit\ndef f(x):\n"
        "    return x * scale\n\ny = f(1.0)\n",
        "import jax\nimport numpy as scale\n\n@jax.jit\ndef f(x):\n    return x * scale.pi\n\ny = f(1.0)\n"
        "scale = 2.0\n",
    ]
    for text in texts:
        assert codemod.may_match(text)
        assert not passes(text, codemod) and unscreened(text, codemod) == []
    assert passes(texts[0] + "scale = 3.0\nz = f(1.0)\n", codemod)


_STALE = "import jax\n\nscale = 1.0\n\n@jax.jit\ndef f(x):\n    return x * scale\n\ny = f(1.0)\n"


@pytest.mark.parametrize("text,near_miss", [
    # rebound after the last use of the jitted function (a notebook's last cell), and the near miss that uses it again
    (_STALE + "scale = 2.0\n", _STALE + "scale = 2.0\nprint(f(2.0))\n"),
    # the same name read by a function that nothing jitted calls, and the near miss that a jitted function calls
    ("import jax\n\nscale = 1.0\n\ndef g(x):\n    return x * scale\n\n@jax.jit\ndef f(x):\n    return x\n\n"
     "y = f(1.0)\nscale = 2.0\ny = f(g(1.0))\n",
     "import jax\n\nscale = 1.0\n\ndef g(x):\n    return x * scale\n\n@jax.jit\ndef f(x):\n    return g(x)\n\n"
     "y = f(1.0)\nscale = 2.0\ny = f(1.0)\n"),
    # the jitted name bound to a new function (a later cell's own `f`) before the next use, and the near miss
    # that uses the old one in between
    (_STALE + "scale = 2.0\n\n@jax.jit\ndef f(x):\n    return x + scale\n\nz = f(1.0)\n",
     _STALE + "scale = 2.0\nz = f(1.0)\n\n@jax.jit\ndef f(x):\n    return x + scale\n"),
    # rebound by `with ... as` (the rule leaves such names alone), and the near miss rebound by a plain assignment
    (_STALE + "with open('s') as scale:\n    y = f(1.0)\n", _STALE + "with open('s') as s:\n    scale = s\n    y = f(1.0)\n"),
    # a name rebound at module level that the jitted function takes as a parameter (a notebook's `params`), and the
    # near miss that reads the global in a nested def that declares it
    ("import jax\n\nparams = 1.0\n\n@jax.jit\ndef f(params, x):\n    return x * params\n\ny = f(params, 1.0)\n"
     "params = 2.0\ny = f(params, 1.0)\n",
     "import jax\n\nparams = 1.0\n\n@jax.jit\ndef f(params, x):\n    def g():\n        global params\n"
     "        return params\n    return x * g()\n\ny = f(params, 1.0)\nparams = 2.0\ny = f(params, 1.0)\n"),
    # a use in the rebinding statement, on its line, and the near miss with one on a later line of that statement
    (_STALE + "scale = f(2.0)\n", _STALE + "scale = (\n    2.0,\n    f(2.0),\n)\n"),
])
def test_stale_global_needs_a_use_of_the_jitted_function_after_the_rebinding(text, near_miss) -> None:
    codemod = codemod_for_module("stale_global")
    assert codemod.may_match(text) and not passes(text, codemod) and unscreened(text, codemod) == []
    assert passes(near_miss, codemod) and unscreened(near_miss, codemod)


def test_screen_resolves_through_every_import() -> None:
    screen = Screen("import jax.numpy as jnp\nfrom jax import numpy as jnp\nfrom . import jax\nimport jax.random\n")
    assert set(screen.qualified_names(("jnp", "zeros"))) == {"jax.numpy.zeros"}
    assert set(screen.qualified_names(("jax", "random", "normal"))) == {"jax.random.normal"}
    assert not set(screen.qualified_names(("np", "zeros")))


def test_unparsable_text_passes_the_tree_screens() -> None:
    # `analyse` may be handed text that `ast` rejects (its callers check the syntax first): the screen then decides
    # nothing; no rule is a LibCST visitor any more, so nothing parses it with LibCST, and each `check`-rule whose text
    # screen passes says why it was skipped (`jax.numpy.stack` passes JF301's)
    text = "import jax\nprint 'hello'\nx[0] = jax.numpy.stack\n"
    assert engine.screened(text, CODEMODS) == [c for c in CODEMODS if c.may_match(text)]
    diagnostics, errors, wrapper = engine.analyse(text, CODEMODS)
    assert diagnostics == [] and wrapper is None
    assert any(e.startswith("JF301 ") and "SyntaxError" in e for e in errors)


# ---- the syntax check that hands the screens their tree -----------------------------------------------------------

BROKEN = [
    "x = (\n",
    "a = 1 +\n",
    "return 1\n",
    "def f():\n    nonlocal x\n",
    "for x in y:\n    pass\nelse:\n    continue\n",
    "def f(a, a):\n    pass\n",
    "f(**a, *b)\n",
    "__debug__ = 1\n",
    "from __future__ import braces\n",
    "def f():\n    x = 1\n    global x\n",
    "match x:\n    case a:\n        pass\n    case 1:\n        pass\n",
    "x = '\0'\n",
]


@pytest.mark.parametrize("code", BROKEN)
def test_one_parse_reports_what_compiling_the_text_reports(code) -> None:
    """process_file parses the `ast` once and compiles that tree; its errors must be those of compiling the text."""
    try:
        compile(code, "m.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        expected = engine._describe(error)
    assert engine._checked_tree(code, "m.py") == (None, expected)
    assert engine._compile_error(code, "m.py") == expected


def test_list_needs_a_call_of_something_jitted() -> None:
    codemod = codemod_for_module("list_to_jit")
    # chex's asserts_test: a list handed to a plain function in a module that jits another one
    text = "import jax\n\nfn = lambda x, y: x + y\nfn_jitted = jax.jit(fn)\nfn([1], [2])\nfn_jitted(x, 2)\n"
    assert codemod.may_match(text)
    assert not passes(text, codemod)
    assert passes(text + "fn_jitted([1], [2])\n", codemod)


def test_list_needs_a_callee_its_own_function_does_not_bind_otherwise() -> None:
    codemod = codemod_for_module("list_to_jit")
    # chex's asserts_test: `fn` is jitted where another function defines it, unpacked from a call where it is called
    text = (
        "import jax\n\ndef make():\n    @jax.jit\n    def fn(x, y):\n        return x + y\n    return fn, fn\n\n"
        "def test():\n    fn, fn_jitted = make()\n    fn([1], [2])\n"
    )
    assert codemod.may_match(text)
    assert not passes(text, codemod)  # `check`: a local binding that compiles nothing decides
    assert passes(text.replace("fn, fn_jitted = make()", "fn = jax.jit(lambda x, y: x + y)"), codemod)


def test_key_drawn_twice_needs_no_rebinding_between() -> None:
    codemod = codemod_for_module("prng_key_reuse")
    # the usual split-then-draw, twice in one function, and a key name drawn from once in each of two functions
    text = (
        "import jax\n\ndef init(rng):\n    rng, sub = jax.random.split(rng)\n    a = jax.random.normal(sub, (3,))\n"
        "    rng, sub = jax.random.split(rng)\n    b = jax.random.normal(sub, (3,))\n    for _ in range(3):\n"
        "        rng, sub = jax.random.split(rng)\n        a = a + jax.random.normal(sub, (3,))\n    return a, b\n\n"
        "def other(sub):\n    return jax.random.uniform(sub)\n"
    )
    assert codemod.may_match(text)
    assert not passes(text, codemod)
    assert passes(text.replace("    rng, sub = jax.random.split(rng)\n    b", "    b"), codemod)


def test_lax_body_must_return_a_consumed_key_as_the_carry_reads_it() -> None:
    codemod = codemod_for_module("prng_key_reuse")
    # numpyro's `_binom_inv_body_fn`: the carry that comes back is built of calls and arithmetic (`i + 1`), which
    # the next step cannot read as a key; only names, through tuples and lists, carry one
    text = (
        "import jax\n\ndef run(key, xs):\n    def body(carry):\n        k, x = carry\n        y = jax.random.normal(k)\n"
        "        return (g(k), x + y)\n    return jax.lax.while_loop(cond, body, (key, xs))\n"
    )
    assert codemod.may_match(text)
    assert not passes(text, codemod) and unscreened(text, codemod) == []
    sibling = text.replace("(g(k), x + y)", "[k, x + y]")
    assert passes(sibling, codemod) and unscreened(sibling, codemod)


def test_collective_needs_gradients_in_the_parallel_function() -> None:
    codemod = codemod_for_module("missing_collective")
    # gradients outside the pmapped function, a pmap without an axis name, and a pmapped step with no gradient
    text = (
        "import jax\nfrom functools import partial\n\ndef loss(p, x):\n    return (p * x).sum()\n\n"
        "def step(p, x):\n    g = jax.grad(loss)(p, x)\n    return p - 0.1 * g\n\n@partial(jax.pmap, axis_name='i')\n"
        "def evaluate(p, x):\n    return loss(p, x)\n\nensemble = jax.pmap(step)\n"
    )
    assert codemod.may_match(text)
    assert not passes(text, codemod)
    assert passes(text.replace("jax.pmap(step)", "jax.pmap(step, axis_name='i')"), codemod)
    # a gradient used where it is computed binds no name for `_check` to follow: nothing to report (JF803's screen
    # asks for a `target = <grad>(...)(...)` since it learned which of those a collective reduces)
    inline = text.replace("    g = jax.grad(loss)(p, x)\n    return p - 0.1 * g\n", "    return p - 0.1 * jax.grad(loss)(p, x)\n")
    assert not passes(inline.replace("jax.pmap(step)", "jax.pmap(step, axis_name='i')"), codemod)


def test_collective_needs_gradients_no_collective_reduces() -> None:
    codemod = codemod_for_module("missing_collective")
    # haiku's imagenet example and optax's apply_if_finite test: the step averages its gradients
    text = (
        "import jax\nfrom functools import partial\n\ndef loss(p, x):\n    return (p * x).sum(), x\n\n"
        "@partial(jax.pmap, axis_name='i')\ndef step(p, x):\n    grads, aux = (\n"
        "        jax.grad(loss, has_aux=True)(p, x))\n    grads = jax.lax.pmean(grads, axis_name='i')\n"
        "    return p - 0.1 * grads, aux\n"
    )
    assert codemod.may_match(text)
    assert not passes(text, codemod)
    assert passes(text.replace("pmean(grads,", "pmean(aux,"), codemod)
    # `check` resolves names by scope: a parameter `jax` of `loss` leaves `step`'s `jax.lax.pmean` the import's
    assert not passes(text.replace("def loss(p, x):", "def loss(jax, x):"), codemod)


def test_timing_needs_an_unwaited_computation_before_the_clock() -> None:
    codemod = codemod_for_module("timing_without_block")
    # brax's train loops: the last call before the second clock read waits (or is no JAX computation)
    text = (
        "import time\nimport jax\n\n@jax.jit\ndef step(x):\n    return x * 2\n\ndef run(x):\n    t = time.time()\n"
        "    x = step(x)\n    jax.tree_util.tree_map(lambda y: y.block_until_ready(), x)\n    n = 1\n"
        "    return time.time() - t\n"
    )
    assert codemod.may_match(text)
    assert not passes(text, codemod)
    assert passes(text.replace("    jax.tree_util.tree_map(lambda y: y.block_until_ready(), x)\n", ""), codemod)


def test_host_transfer_needs_a_transfer_no_log_interval_guards() -> None:
    codemod = codemod_for_module("host_transfer_in_loop")
    head = "import jax\n\n@jax.jit\ndef step(w):\n    return w * 0.5, w.sum()\n\ndef train(w, n):\n"
    # flax's toy examples and haiku's imagenet: the transfer under `if step % N == 0:`, also one loop up; a
    # transfer in a `while` test of the loop body
    guarded = [
        "    for i in range(n):\n        w, loss = step(w)\n        if i % 100 == 0:\n            print(float(loss))\n",
        "    for i in range(n):\n        w, loss = step(w)\n        if i % 10 == 0:\n            for b in range(3):\n"
        "                v, e = step(w)\n                print(float(e))\n",
        "    for i in range(n):\n        w, loss = step(w)\n        while float(loss) > 1:\n"
        "            loss = loss / 2\n",
    ]
    for body in guarded:
        text = head + body
        assert codemod.may_match(text) and not passes(text, codemod) and unscreened(text, codemod) == []
    # the `else` of an interval, and an interval around the training loop itself, run at every step
    for body in [
        guarded[0].replace("            print", "            pass\n        else:\n            print"),
        "    if n % 2 == 0:\n        for i in range(n):\n            w, loss = step(w)\n"
        "            print(float(loss))\n",
    ]:
        assert unscreened(head + body, codemod) and passes(head + body, codemod)


def test_vmap_needs_an_appending_loop_that_carries_nothing() -> None:
    codemod = codemod_for_module("batch_loop_to_vmap")
    # flax's recurrent_test: an RNN cell's carry flows from one step to the next (JF102's scan, not a batch)
    text = (
        "import jax\nimport jax.numpy as jnp\n\ndef cell(c, x):\n    return c + x, jnp.tanh(c + x)\n\n"
        "def run(xs: jax.Array, carry):\n    ys = []\n    for x in xs:\n        carry, y = cell(carry, x)\n"
        "        ys.append(y)\n    return jnp.stack(ys)\n"
    )
    assert codemod.may_match(text) and not passes(text, codemod) and unscreened(text, codemod) == []
    independent = text.replace("carry, y = cell(carry, x)", "_, y = cell(carry, x)")
    assert unscreened(independent, codemod) and passes(independent, codemod)


def test_branch_rules_need_a_test_that_may_be_proven_traced() -> None:
    cond, where = codemod_for_module("branch_to_cond"), codemod_for_module("branch_to_where")
    # a closure over a parameter of a function that nothing traces (chex's fake_test), a jax.numpy call that
    # answers a Python bool, an `if`/`elif` chain (JF204's)
    for body in (
        "def make(static):\n    @jax.jit\n    def f(x):\n        if static == 1:\n            x = -x\n        return x\n"
        "    return f\n",
        "@jax.jit\ndef f(x):\n    if jnp.iscomplexobj(x):\n        x = x.real\n    return x\n",
        "@jax.jit\ndef f(x):\n    s = jnp.sum(x)\n    if s > 0:\n        x = -x\n    elif s < -1:\n        x = x * 2.0\n"
        "    return x\n",
    ):
        text = _BRANCH + body
        assert cond.may_match(text) and where.may_match(text)
        assert not passes(text, cond) and not passes(text, where)
    # JF202 needs an `if` that only assigns one name
    text = _BRANCH + "@jax.jit\ndef f(x):\n    s = jnp.sum(x)\n    if s > 0:\n        x = -x\n        s = s * 2.0\n    return x\n"
    assert passes(text, cond) and not passes(text, where)
    assert passes(text.replace("        x = -x\n", ""), where)


def test_branch_to_cond_needs_a_function_traced_through_names_it_can_see() -> None:
    codemod = codemod_for_module("branch_to_cond")
    # numpyro's progress bar: a traced lambda hands `_update` to io_callback, which runs it on the host
    text = _BRANCH + (
        "from jax.experimental import io_callback\n\ndef factory(n):\n    def _update(i, chain):\n"
        "        if chain == -1:\n            chain = 0\n        return chain\n\n"
        "    def bar(i, chain):\n        return jax.lax.cond(i == 1, lambda _: io_callback(_update, jnp.array(0), i, chain),"
        " lambda _: chain, None)\n    return bar\n"
    )
    assert codemod.may_match(text)
    assert not passes(text, codemod) and unscreened(text, codemod) == []
    traced = text.replace("lambda _: io_callback(_update, jnp.array(0), i, chain)", "lambda c: _update(i, c)").replace(
        "lambda _: chain, None", "lambda c: c, chain")
    assert passes(traced, codemod) and unscreened(traced, codemod)


def test_branch_to_cond_takes_no_container_for_an_array() -> None:
    codemod = codemod_for_module("branch_to_cond")
    # brax's joints: `if limit:` on a parameter annotated as a tuple of arrays, which jnp.array also reads
    text = _BRANCH + (
        "from typing import Tuple\n\n@jax.jit\ndef f(x, limit: Tuple[jax.Array, jax.Array]):\n    if limit:\n"
        "        x = jnp.clip(x, *jnp.array(limit))\n    return x\n"
    )
    assert codemod.may_match(text)
    assert not passes(text, codemod) and unscreened(text, codemod) == []
    assert passes(text.replace("Tuple[jax.Array, jax.Array]", "jax.Array"), codemod)
    assert passes(text.replace("jnp.array(limit)", "jnp.sort(limit)"), codemod)


def test_print_needs_a_value_traced_through_names_it_can_see() -> None:
    codemod = codemod_for_module("print_in_traced")
    # equinox's checkpointed.py: a function traces its own local `resolve` by name, which leaves the module-level
    # `resolve`, and the closure that prints its parameter, untraced
    text = (
        "import jax\n\ndef resolve(a):\n    def impl():\n        print(a)\n        return a\n"
        "    return jax.eval_shape(impl)\n\ndef other(x):\n    def resolve():\n        return x\n"
        "    return jax.eval_shape(resolve)\n"
    )
    assert codemod.may_match(text)
    assert not passes(text, codemod) and unscreened(text, codemod) == []
    assert passes(text.replace("    def resolve():\n        return x\n", ""), codemod)


def test_print_of_an_identity_test_prints_a_python_bool() -> None:
    codemod = codemod_for_module("print_in_traced")
    # flax's pytree guide: `m.left is m.right` is a Python bool at trace time, of tracers too
    text = "import jax\n\n@jax.jit\ndef f(m):\n    print(f'{m.left is m.right = }', m.a is not m.b is m.c)\n    return m\n"
    assert codemod.may_match(text)
    assert not passes(text, codemod) and unscreened(text, codemod) == []
    sibling = text.replace("m.a is not m.b is m.c", "m.a is not m.b == m.c")
    assert passes(sibling, codemod) and unscreened(sibling, codemod)


def test_elif_chain_needs_a_function_traced_through_names_it_can_see() -> None:
    codemod = codemod_for_module("elif_chain")
    # optax's tests: each test method defines its own `reference_impl`; one of them is vmapped, another, with the
    # `elif`, is called eagerly
    text = (
        "import jax\n\nclass T:\n    def test_a(self, xs):\n        def reference_impl(x, k):\n"
        "            return x + k\n        return jax.vmap(reference_impl)(xs, xs)\n\n"
        "    def test_b(self, xs):\n        def reference_impl(x, k):\n"
        "            if k == 0:\n                y = x + 1\n            elif k == 1:\n                y = x * 2\n            else:\n                y = x\n            return y\n"
        "        return reference_impl(xs[0], 1)\n"
    )
    assert codemod.may_match(text)
    assert not passes(text, codemod)
    assert passes(text.replace("reference_impl(xs[0], 1)", "jax.vmap(reference_impl)(xs, xs)"), codemod)


def test_loop_rules_need_a_carried_name_and_rows_that_may_be_an_array() -> None:
    scan, fori = codemod_for_module("loop_to_scan"), codemod_for_module("loop_to_fori")
    # nothing carried (the body only stores into a dict); flax's lift.py: rows of a list a helper returns,
    # and of a parameter never used as an array; a forward range loop that neither collects nor indexes
    texts = [
        "@jax.jit\ndef f(x):\n    d = {}\n    for k in range(100):\n        d[k] = x * k\n    return d\n",
        "def _flat(t):\n    return list(t)\n\n@jax.jit\ndef f(tree, x):\n    scopes = _flat(tree)\n    n = 0\n"
        "    for scope in scopes:\n        n += 1\n    return x * n\n",
        "@jax.jit\ndef f(groups, x):\n    n = 0\n    for group in groups:\n        n += 1\n    return x * n\n",
    ]
    for body in texts:
        text = _BRANCH + body
        assert scan.may_match(text) and not passes(text, scan)
    assert not passes(_BRANCH + texts[0], fori)
    text = _BRANCH + "@jax.jit\ndef f(x):\n    for i in range(100):\n        x = x + jnp.sin(i * x)\n    return x\n"
    assert passes(text, fori) and not passes(text, scan)
    assert passes(text.replace("    for i", "    ys = []\n    for i").replace("    return", "        ys.append(x)\n    return"), scan)
    # a parameter used as an array (`groups.shape`) may hold one (with a carry that may be traced: `n += 1` alone is a
    # static computation, `CarryAnalysis.name_kind`)
    assert not passes(_BRANCH + texts[2].replace("x * n", "x * n + groups.shape[0]"), scan)
    assert passes(_BRANCH + texts[2].replace("x * n", "x * n + groups.shape[0]").replace("n += 1", "n += group"), scan)


def test_fori_at_set_needs_a_body_that_writes_rows_of_its_carry() -> None:
    """JF104's check looks at a fori_loop only where its body writes rows of its carry at the loop index: a write at
    `[0]` is no row per step (nothing to say); one at `[i]` into an array that existed before is declined."""
    codemod = codemod_for_module("fori_at_set_to_scan")
    text = _BRANCH + (
        "@jax.jit\ndef f(x):\n    y = x.at[0].set(1.0)\n    def body(i, c):\n        return c.at[0].set(c[i])\n"
        "    return jax.lax.fori_loop(0, 10, body, y)\n"
    )
    assert codemod.may_match(text) and not passes(text, codemod)
    facts = FileFacts(text, screen=Screen(text), explaining=True)
    assert codemod.check(facts) == [] and facts.decisions == []
    text = text.replace("c.at[0]", "c.at[i]")
    facts = FileFacts(text, screen=Screen(text), explaining=True)
    assert codemod.check(facts) == []
    assert [d.reason for d in facts.decisions] == [
        "it updates rows of an array that existed before the loop, not outputs collected step by step"
    ]


def test_loop_rules_need_a_traced_count_or_a_compiled_function() -> None:
    scan, fori = codemod_for_module("loop_to_scan"), codemod_for_module("loop_to_fori")
    # brax's pipeline_test: ten steps under jax.grad alone; haiku's dot: a count from a Counter; flax's
    # partitioning: a count from `len` under remat. None is compiled, none traced, none a long literal.
    texts = [
        "def fn(x):\n    for _ in range(10):\n        x = jax.jit(step)(x)\n    return x\ngrad = jax.grad(fn)(1.0)\n",
        "import collections\n\ndef f(x, outs):\n    counts = collections.Counter()\n    for k, n in counts.items():\n"
        "        for i in range(n):\n            x = x + i\n    return x\ng = jax.vmap(f)\n",
        "def f(dyn, static):\n    args = []\n    n = 0\n    for i in range(len(dyn) + len(static)):\n"
        "        args.append(dyn[n])\n        n += 1\n    return args\ng = jax.checkpoint(f)\n",
    ]
    for body in texts:
        text = _BRANCH + body
        assert fori.may_match(text) and not passes(text, fori) and unscreened(text, fori) == []
        assert not passes(text, scan) and unscreened(text, scan) == []
    # compiled, with a body known to be pure (JF101 declines a call of `step`, which nothing here defines)
    pure = texts[0].replace("jax.jit(step)(x)", "jnp.sin(x)")
    assert not passes(_BRANCH + pure, fori) and passes(_BRANCH + pure.replace("jax.grad(fn)", "jax.jit(fn)"), fori)
    assert passes(_BRANCH + texts[1].replace("collections.Counter()", "jnp.asarray(outs)"), fori)


def test_fori_needs_a_loop_nothing_surely_blocks() -> None:
    fori = codemod_for_module("loop_to_fori")
    # a count known only at trace time, so a loop that cannot be rewritten is not reported. flax's spectral norm:
    # `v` carried but bound only in the loop; flax's Conv: a reshaped carry; gymnax's asterix: the index into an
    # attribute; jraph's lstm: a call of a network, not a function; haiku's layer_stack_test: the index passed
    # to a local function; a slice bound, a truth value
    head = _BRANCH + "@jax.jit\ndef f(x, u):\n    for i in range(x.shape[0]):\n"
    blocked = {
        "        v = jnp.tanh(u @ x)\n        u = jnp.tanh(v @ x)\n    v = v + 1\n    return u, v\n": "v = v + 1",
        "        x = x.reshape(x.shape[::-1])\n    return x\n": "x = x.reshape(x.shape[::-1])",
        "        x = x + u.rows[i, :]\n    return x\n": "u.rows[i, :]",
        "        x = net(x)\n    return x\n": "net(x)",
        "        x = g(x, i)\n    return x\n": "g(x, i)",
        "        x = x + u[i:]\n    return x\n": "u[i:]",
        "        x = x + (1 if i else 0)\n    return x\n": "(1 if i else 0)",
    }
    for body, blocker in blocked.items():
        text = head + body + "\ndef g(x, k):\n    return x * 2\n"
        assert fori.may_match(text) and not passes(text, fori) and unscreened(text, fori) == []
    # without the blocker each is rewritten: `v` bound before the loop, `x` kept in shape, the index into an
    # array, a pure local function, the index left out or in arithmetic
    unblocked = [
        "v = u + 1", "x = jnp.flip(x)", "u.T[i]", "g(x, 2)", "g(x, 2)", "jnp.sin(x) * i", "(1 if x.ndim else 0)"
    ]
    for (body, blocker), replacement in zip(blocked.items(), unblocked):
        text = head + body.replace(blocker, replacement) + "\ndef g(x, k):\n    return x * 2\n"
        if "v = u + 1" in text:
            text = text.replace("    for i", "    v = u\n    for i")
        assert unscreened(text, fori) and passes(text, fori), text


def test_branch_rules_need_a_parameter_the_transformation_traces() -> None:
    cond, where = codemod_for_module("branch_to_cond"), codemod_for_module("branch_to_where")
    # equinox's bounded loop: a count that only the recursive call passes on; equinox's pooling: a size vmap maps
    # with None; numpyro's multinomial: a count among static_argnums
    texts = [
        "def _loop(x, n, base):\n    if n == 1:\n        return x\n    def call(v):\n        return _loop(v, n // base, base)\n"
        "    return jax.lax.cond(jnp.sum(x) > 0, call, lambda v: v, x)\n\ndef run(x):\n    return _loop(x, 8, 2)\n",
        "def pool(x, size):\n    extra = jnp.size(x) % size\n    if extra != 0:\n        x = x[:-extra]\n    return x\n\n"
        "f = jax.vmap(pool, (0, None))\n",
        "@partial(jax.jit, static_argnums=(1,))\ndef f(x, n):\n    if n == 0:\n        return jnp.zeros(3)\n    return x\n",
    ]
    for body in texts:
        text = _BRANCH + body
        assert cond.may_match(text) and not passes(text, cond) and unscreened(text, cond) == []
        assert not passes(text, where)
    assert passes(_BRANCH + texts[1].replace("(0, None)", "(0, 0)"), cond)
    assert passes(_BRANCH + texts[2].replace("static_argnums=(1,)", "static_argnums=(0,)"), cond)
    assert passes(_BRANCH + texts[0].replace("return _loop(x, 8, 2)", "return _loop(x, jnp.sum(x), 2)")
                  .replace("def run(x)", "@jax.jit\ndef run(x)"), cond)


def test_logical_operators_need_operands_that_may_be_traced_booleans() -> None:
    codemod = codemod_for_module("builtin_on_traced")
    # numpyro's `shape = shape or p.shape[:-1]`, chex's `n == 1 or 1 in static_argnums`
    text = _BRANCH + (
        "@jax.jit\ndef f(p, shape=()):\n    shape = shape or p.shape[:-1]\n    static = (1,)\n"
        "    flag = static == 1 or 1 in static\n    return jnp.zeros(shape), flag\n"
    )
    assert codemod.may_match(text) and not passes(text, codemod) and unscreened(text, codemod) == []
    assert passes(text.replace("shape or p.shape[:-1]", "(p > 0) or (p < 1)"), codemod)


def test_print_and_while_need_a_value_that_may_be_traced() -> None:
    show, loop = codemod_for_module("print_in_traced"), codemod_for_module("while_to_while_loop")
    # a static argument and a shape printed while compiling; flax's lift.py walking parent scopes
    text = _BRANCH + "@partial(jax.jit, static_argnames='n')\ndef f(x, n):\n    print('compiling', n, x.shape)\n    return x\n"
    assert show.may_match(text) and not passes(text, show) and unscreened(text, show) == []
    assert passes(text.replace("x.shape)", "x)"), show)
    text = _BRANCH + "@jax.jit\ndef f(x, s):\n    while s is not None:\n        s = s.parent\n    return x\n"
    assert loop.may_match(text) and not passes(text, loop) and unscreened(text, loop) == []
    assert passes(text.replace("s is not None", "s > 0"), loop)


def test_loop_rules_need_a_count_that_may_be_static_where_the_project_traces_the_function() -> None:
    scan, fori = codemod_for_module("loop_to_scan"), codemod_for_module("loop_to_fori")
    from jaxfix.analysis.project import ModuleFacts

    def found(text, codemod, facts) -> list:
        wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
        diagnostics, errors = engine._run_codemods(wrapper, [codemod], None, facts)
        assert not errors, errors
        return diagnostics

    # jumanji's mmst: a count the project gives no kind (another module jits the function, `n` untraced); brax's
    # dynamics: a count in a helper nested in a function the project traces (its parameters are UNKNOWN there);
    # jumanji's env: a field of `self`, which the project traces without making `n` static
    cases = [
        ("def update(x, n):\n    for i in range(n):\n        x = jnp.sin(x) + i\n    return x\n",
         {"update": (("jax.jit",), {"x": 2, "n": 1})}, {}),
        ("def outer(x, k):\n    def helper(y, n):\n        for i in range(n):\n            y = jnp.sin(y) + i\n"
         "        return y\n    return helper(x, k)\n",
         {"outer": (("jax.jit",), {"x": 2, "k": 0})}, {}),
        ("class M:\n    def step(self, x):\n        for i in range(self.n):\n            x = jnp.sin(x) + i\n"
         "        return x\n",
         {"M.step": (("jax.jit",), {"self": 1, "x": 2})}, {"M.step": {"self": ("m",)}}),
    ]
    cases.append((cases[1][0].replace("helper(x, k)", "helper(x, 12)"), cases[1][1], {}))
    for body, traced, static_attrs in cases:
        text = "import jax\nimport jax.numpy as jnp\n\n" + body
        facts = ModuleFacts(traced=traced, static_attrs=static_attrs)
        # JF101 and JF102 have no tree screen: their `check` decides
        assert found(text, fori, facts) == [] and found(text, scan, facts) == []
    # a count the project makes static: a parameter, a field of `self`; and a helper that may be handed to a host
    # callback (so not traced by nesting), traced by a call with a static count
    siblings = [
        (cases[0][0], {"update": (("jax.jit",), {"x": 2, "n": 0})}, {}),
        (cases[2][0], cases[2][1], {"M.step": {"self": ("n",)}}),
        (cases[1][0].replace("    return helper(x, k)\n", "    jax.debug.callback(helper, x, k)\n    return helper(x, 12)\n"),
         cases[1][1], {}),
    ]
    for body, traced, static_attrs in siblings:
        text = "import jax\nimport jax.numpy as jnp\n\n" + body
        facts = ModuleFacts(traced=traced, static_attrs=static_attrs)
        assert found(text, fori, facts) and engine.screened(text, [fori], project=facts) == [fori], text


def test_loop_rules_need_a_loop_nothing_surely_blocks_or_an_index_into_what_may_be_an_array() -> None:
    scan, fori = codemod_for_module("loop_to_scan"), codemod_for_module("loop_to_fori")
    head = "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, obs):\n"
    # brax's scan: a count known at trace time and a body that defines a function or calls one from outside;
    # haiku's recurrent_test: a call of a library not known to be pure (JF102 leaves its `.append` alone)
    blocked = {
        "    ys = []\n    for i in range(x.shape[0]):\n        def g(v):\n            return v\n"
        "        x = g(x) * 2\n        ys.append(x)\n    return jnp.stack(ys)\n": "def g(v):\n            return v\n        x = g(x)",
        "    ys = []\n    for i in range(x.shape[0]):\n        x = tree.map_structure(jnp.sin, x)\n"
        "        ys.append(x)\n    return jnp.stack(ys)\n": "tree.map_structure(jnp.sin, x)",
    }
    unblocked = ["x = jnp.cos(x)", "jnp.sin(x)"]
    for (body, blocker), replacement in zip(blocked.items(), unblocked):
        text = "import tree\n" + head + body
        assert scan.may_match(text) and not passes(text, scan) and unscreened(text, scan) == []
        text = text.replace(blocker, replacement)
        assert unscreened(text, scan) and passes(text, scan), text
    # jumanji's pac_man: the index used only into a name that cannot hold an array (an attribute's value)
    body = "    idx = obs.pellets\n    for i in range(len(idx)):\n        x = x.at[idx[i]].set(1.0)\n    return x\n"
    text = head + body
    for codemod in (scan, fori):
        assert codemod.may_match(text) and not passes(text, codemod) and unscreened(text, codemod) == []
    text = text.replace("obs.pellets", "jnp.asarray(obs.pellets)")
    assert unscreened(text, scan) and passes(text, scan)
    text = head + body.replace("obs.pellets", "jnp.asarray(obs.pellets)").replace("x.at[idx[i]].set(1.0)", "x * idx[i] + i")
    assert unscreened(text, fori) and passes(text, fori), text


def test_loop_rules_need_a_carry_that_may_be_traced_or_a_traced_count() -> None:
    scan, fori, loop = (codemod_for_module(m) for m in ("loop_to_scan", "loop_to_fori", "while_to_while_loop"))
    # flax's partitioning: counters of Python ints beside an appended list, a count from `len` (a static
    # computation at trace time); a power of two doubled in a compiled function
    static = [
        "@jax.jit\ndef f(dyn, static):\n    args = []\n    n = 0\n    for i in range(len(dyn) + len(static)):\n"
        "        args.append(dyn[n] * 2)\n        n += 1\n    return jnp.stack(args)\n",
        "@jax.jit\ndef f(x):\n    width = 1\n    for i in range(x.shape[0]):\n        width = width * 2\n"
        "    return jnp.zeros(width) + x\n",
    ]
    for body in static:
        text = _BRANCH + body
        for codemod in (scan, fori):
            assert codemod.may_match(text) and not passes(text, codemod) and unscreened(text, codemod) == []
    # a traced carry: each is rewritten or reported
    text = _BRANCH + (
        "@jax.jit\ndef f(dyn, h):\n    hs = []\n    for i in range(len(dyn)):\n        h = jnp.tanh(h + dyn[i])\n"
        "        hs.append(h)\n    return jnp.stack(hs)\n"
    )
    assert unscreened(text, scan) and passes(text, scan), text
    text = _BRANCH + static[1].replace("width = width * 2", "x = jnp.sin(x) * 2").replace("jnp.zeros(width) + ", "")
    assert unscreened(text, fori) and passes(text, fori)
    # brax's scan: a `while` on a traced test whose body binds nothing (an append to an outside list)
    text = _BRANCH + "@jax.jit\ndef f(x, ys):\n    while jnp.sum(x) > len(ys):\n        ys.append(x)\n    return ys\n"
    assert loop.may_match(text) and not passes(text, loop) and unscreened(text, loop) == []
    text = text.replace("ys.append(x)", "ys.append(x)\n        x = x / 2.0")
    assert unscreened(text, loop) and passes(text, loop)


def test_loop_rules_count_every_name_as_read_where_the_function_calls_dir() -> None:
    fori = codemod_for_module("loop_to_fori")
    # `dir()` makes dataflow take every name as live (its _OPAQUE_CALLS): `y`, read nowhere, is carried
    text = _BRANCH + "@jax.jit\ndef f(x):\n    for i in range(100):\n        y = jnp.sin(x)\n    names = dir()\n    return x\n"
    assert unscreened(text, fori) and passes(text, fori)
    text = text.replace("dir()", "len(x)")
    assert not passes(text, fori) and unscreened(text, fori) == []


def test_loop_rules_need_a_name_live_at_the_head_or_after_the_loop() -> None:
    fori = codemod_for_module("loop_to_fori")
    # flax's graphlib: each name the body binds is written before it is read there, and rebound after the loop
    # before any read (ast_flow.loop_liveness): nothing is carried
    text = _BRANCH + (
        "@jax.jit\ndef f(x):\n    for i in range(100):\n        y = jnp.sin(x * i)\n        z = jnp.cos(y)\n"
        "    y = x\n    return y\n"
    )
    assert fori.may_match(text) and not passes(text, fori) and unscreened(text, fori) == []
    # `y` read after the loop, or read before it is written in a step: carried
    for carried in (text.replace("    y = x\n", ""), text.replace("z = jnp.cos(y)", "z = jnp.cos(y + z)").replace("    for", "    z = x\n    for")):
        assert unscreened(carried, fori) and passes(carried, fori), carried


def test_loop_to_fori_needs_a_carry_or_a_count_that_is_a_plain_argument() -> None:
    fori = codemod_for_module("loop_to_fori")
    # a traced count of an attribute with nothing carried: `_refuse_traced` reports only a plain argument's
    text = _BRANCH + "@jax.jit\ndef f(x, cfg):\n    for i in range(cfg.count):\n        print(jnp.sin(x * i))\n    return x\n"
    assert fori.may_match(text) and not passes(text, fori) and unscreened(text, fori) == []
    text = text.replace("cfg.count", "cfg + 1")
    assert unscreened(text, fori) and passes(text, fori)
