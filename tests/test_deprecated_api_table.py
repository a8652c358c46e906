"""JF901's table (codemods/deprecated_api.py) against the installed JAX: each name a row calls removed is gone,
each one it calls deprecated still works, and each replacement a fix writes exists, spelled the way the fix
spells it (after `import jax` and the import that EXPLICIT_IMPORTS adds). The probe runs in a fresh
interpreter: another test may already have imported a submodule that `import jax` alone does not load."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from jaxfix.codemods.deprecated_api import APIS, AT, EXPLICIT_IMPORTS, JIT, MOVE, RENAME, SHARD_MAP, TYPE, VALUE, X64

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
