"""JF901's table (codemods/deprecated_api.py) against the installed JAX: each name a row calls removed is gone,
each one it calls deprecated still works, and each replacement a fix writes exists, spelled the way the fix
spells it (after `import jax` and the import that EXPLICIT_IMPORTS adds). The probe runs in a fresh
interpreter: another test may already have imported a submodule that `import jax` alone does not load."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from jaxfix.analysis.api_references import APIS
from jaxfix.facts.knowledge.deprecations import AT, EXPLICIT_IMPORTS, JIT, MOVE, RENAME, SHARD_MAP, TYPE, VALUE, X64

PROBE = r"""
import importlib, json, sys, warnings
warnings.simplefilter("ignore")
import jax

def resolves(dotted):
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for part in parts[cut:]:
                value = getattr(value, part)
        except AttributeError:
            return False
        return True
    return False

def spelled(expression, explicit):
    # the names the fix writes: the root module imported (`import jax`, `import functools`), and the
    # explicit import for a module `import jax` does not load
    namespace = {}
    for root in {"jax", "numpy", "functools"}:
        namespace[root] = importlib.import_module(root)
    if explicit:
        importlib.import_module(explicit)
    try:
        eval(expression, namespace)
        return True
    except Exception:
        return False

rows, explicit_imports = json.load(sys.stdin)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    answer = {"version": jax.__version__, "old": {}, "new": {}}
    for old, how, new, module in rows:
        answer["old"][old] = resolves(old.rstrip("."))
        if how == "move":
            answer["new"][old] = resolves(new.rstrip("."))
        elif how == "at":
            answer["new"][old] = hasattr(jax.numpy.zeros(2).at[0], new)
        elif new:
            answer["new"][old] = spelled(new, module if module in explicit_imports else None)
print(json.dumps(answer))
"""

FIXED = (RENAME, TYPE, AT, JIT, SHARD_MAP, X64, VALUE, MOVE)  # the kinds whose `new` a fix writes into code


@pytest.fixture(scope="module")
def probed() -> dict:
    rows = [
        (api.old, api.how, api.new if api.how in FIXED else "", api.new.rsplit(".", 1)[0]) for api in APIS
    ]
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        input=json.dumps([rows, sorted(EXPLICIT_IMPORTS)]),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return json.loads(done.stdout)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:3] if part.isdigit())


@pytest.mark.parametrize("api", APIS, ids=lambda a: a.old)
def test_removed_names_are_gone_and_deprecated_ones_work(api, probed) -> None:
    if api.removed:
        assert not probed["old"][api.old], f"{api.old} still exists in JAX {probed['version']}"
        if api.removed != "yes":
            assert _version(api.removed) <= _version(probed["version"])
            assert not api.deprecated or _version(api.deprecated) < _version(api.removed)
    else:
        assert probed["old"][api.old], f"{api.old} is gone from JAX {probed['version']}: give the row its version"


@pytest.mark.parametrize("api", [a for a in APIS if a.how in FIXED and a.new], ids=lambda a: a.old)
def test_what_a_fix_writes_exists(api, probed) -> None:
    assert probed["new"][api.old], f"{api.new} (the fix of {api.old}) does not resolve in JAX {probed['version']}"


def test_explicit_imports_are_needed() -> None:
    """Each module of EXPLICIT_IMPORTS is one that `import jax` leaves unloaded (else the import is noise)."""
    for module in EXPLICIT_IMPORTS:
        code = f"import jax\ntry:\n    {module}\nexcept AttributeError:\n    raise SystemExit(3)\n"
        assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == 3, module


# ---- pjit and jax.jit read different context meshes (the premises of JF901's pjit fix) ---------------------------


def _placed(api_name: str, context: str, **shardings):
    """`x * 2` compiled by pjit or jax.jit with `shardings`, called under no mesh, a legacy `with mesh:` or
    `jax.set_mesh`: the result's sharding type and spec, or the exception's type. A fresh function each time: pjit
    and jax.jit share a cache, so that a jit of a function pjit compiled before would answer with pjit's entry."""
    import contextlib
    import warnings

    import jax
    import jax.numpy as jnp
    import numpy as np

    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("x",))
    shardings = {k: v(mesh) if callable(v) else v for k, v in shardings.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from jax.experimental import pjit

        api = pjit.pjit if api_name == "pjit" else jax.jit
        compiled = api(lambda x: x * 2, **shardings)
        # lazily: calling `jax.set_mesh(mesh)` sets the mesh at once, before any `with`
        enter = {"none": contextlib.nullcontext, "with mesh": lambda: mesh, "set_mesh": lambda: jax.set_mesh(mesh)}
        try:
            with enter[context]():
                result = compiled(jnp.arange(4.0))
        except Exception as error:  # noqa: BLE001 - which error is the answer
            return type(error).__name__
    sharding = result.sharding
    return type(sharding).__name__, tuple(getattr(sharding, "spec", ()))


def test_jit_raises_where_pjit_resolves_a_partition_spec_against_the_legacy_mesh() -> None:
    """Why JF901 leaves a pjit with PartitionSpec shardings unfixed: under `with mesh:` pjit resolves the spec
    and jax.jit raises; jax.jit reads `jax.set_mesh` instead, where pjit raises."""
    from jax.sharding import PartitionSpec

    for keyword in ("out_shardings", "in_shardings"):
        spec = {keyword: PartitionSpec("x")}
        assert _placed("pjit", "with mesh", **spec) == ("NamedSharding", ("x",))
        assert _placed("jit", "with mesh", **spec) == "RuntimeError"
        assert _placed("jit", "set_mesh", **spec) == ("NamedSharding", ("x",))
        assert _placed("pjit", "set_mesh", **spec) == "RuntimeError"


def test_no_sharding_is_placed_by_the_legacy_mesh_under_pjit_only() -> None:
    """Why a pjit without shardings (or with `None`) under `with mesh:` is an unsafe fix: pjit replicates the
    result over the mesh, jax.jit leaves it on one device; outside a mesh context the two agree."""
    for shardings in ({}, {"out_shardings": None}):
        assert _placed("pjit", "with mesh", **shardings) == ("NamedSharding", ())
        assert _placed("jit", "with mesh", **shardings) == ("SingleDeviceSharding", ())
        assert _placed("pjit", "none", **shardings) == _placed("jit", "none", **shardings)


def test_sharding_objects_place_alike_under_every_context() -> None:
    """Why a pjit given `Sharding` objects is a safe fix."""
    from jax.sharding import NamedSharding, PartitionSpec

    rows = {"in_shardings": lambda m: NamedSharding(m, PartitionSpec("x")),
            "out_shardings": lambda m: NamedSharding(m, PartitionSpec("x"))}  # fmt: skip
    for context in ("none", "with mesh", "set_mesh"):
        assert _placed("pjit", context, **rows) == _placed("jit", context, **rows) == (
            "NamedSharding", ("x",))  # fmt: skip


PJIT_CASES = {
    # shardings the rule can prove are Sharding objects: safe, whatever the context
    "named": ("from jax.sharding import NamedSharding, PartitionSpec as P\n\ndef f(g, mesh):\n"
              "    with mesh:\n        s = NamedSharding(mesh, P('x'))\n        return pjit(g, in_shardings=(s,), out_shardings=s)\n",
              "safe"),
    # a spec bound to a name, a spec in a tuple, a parameter, `**options`: no fix
    "spec name": ("import jax\n\ndef f(g, axes):\n    spec = jax.sharding.PartitionSpec(axes)\n"
                  "    return pjit(g, out_shardings=spec)\n", None),
    "spec tuple": ("from jax.sharding import PartitionSpec\n\ndef f(g):\n"
                   "    return pjit(g, in_shardings=(PartitionSpec('x'), None))\n", None),
    "parameter": ("def f(g, shardings):\n    return pjit(g, out_shardings=shardings)\n", None),
    "options": ("def f(g, **options):\n    return pjit(g, **options)\n", None),
    "positional spec": ("from jax.sharding import PartitionSpec as P\n\ng = pjit(abs, P('x'), P('x'))\n", None),
    # None, or nothing: safe where no `with` may enter a legacy mesh, unsafe where one may
    "none, no mesh": ("def f(g):\n    return pjit(g, out_shardings=None)\n", "safe"),
    "none, set_mesh": ("import jax\n\ndef f(g, x, mesh):\n    with jax.set_mesh(mesh):\n"
                       "        return pjit(g, out_shardings=None)(x)\n", "safe"),
    "nothing, Mesh(...)": ("import jax\n\ndef f(g, x, devices):\n    with jax.sharding.Mesh(devices, ('x',)):\n"
                           "        return pjit(g)(x)\n", "unsafe"),
    "decorator, mesh attribute": ("class C:\n    @pjit\n    def f(self, x):\n        return x\n\n"
                                  "    def g(self, x):\n        with self.mesh:\n            return self.f(x)\n", "unsafe"),
}


@pytest.mark.parametrize("name", PJIT_CASES)
def test_pjit_fix_safety_follows_its_shardings(name: str) -> None:
    from jaxfix.codemods.deprecated_api import DeprecatedApi
    from jaxfix.diagnostics import Safety
    from tests.helpers import findings

    body, expected = PJIT_CASES[name]
    reported = findings("from jax.experimental.pjit import pjit\n" + body, DeprecatedApi)
    (finding,) = [d for d in reported if "pjit" in d.message]
    safety = {Safety.SAFE: "safe", Safety.UNSAFE: "unsafe"}[finding.fix.safety] if finding.fix else None
    assert safety == expected, finding.message
    if expected is None:
        assert "NamedSharding(mesh, spec)" in finding.message
    if expected == "unsafe":
        assert "legacy `with" in finding.message and "the same values" in finding.message


def test_a_legacy_mesh_in_another_module_makes_an_unsharded_pjit_fix_unsafe(tmp_path) -> None:
    """The project index says where the project may enter `with mesh:`: a pjit without shardings in `steps.py`,
    called under `with mesh:` in `train.py`, is an unsafe fix whose message names the `with` in `train.py`."""
    from jaxfix.codemods.deprecated_api import DeprecatedApi
    from jaxfix.diagnostics import Safety
    from tests.helpers import project_findings

    (tmp_path / "steps.py").write_text(
        "from jax.experimental.pjit import pjit\n\n\n@pjit\ndef step(params, batch):\n    return params - batch.mean(0)\n"
    )
    (tmp_path / "train.py").write_text(
        "import jax\nimport numpy as np\n\nfrom steps import step\n\n\ndef train(params, batch):\n"
        "    mesh = jax.sharding.Mesh(np.array(jax.devices()), ('data',))\n    with mesh:\n"
        "        return step(params, batch)\n"
    )
    ((name, finding),) = project_findings(tmp_path, DeprecatedApi)
    assert name == "steps.py" and finding.fix.safety is Safety.UNSAFE
    assert "`with mesh:` (in train)" in finding.message
    (tmp_path / "train.py").write_text("from steps import step\n\n\ndef train(params, batch):\n    return step(params, batch)\n")
    ((_, finding),) = project_findings(tmp_path, DeprecatedApi)
    assert finding.fix.safety is Safety.SAFE, finding.message
