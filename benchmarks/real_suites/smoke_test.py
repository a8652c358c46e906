"""Smoke tests for a project whose source distribution ships no tests: import every module of a package, build,
reset and step (under `jax.jit`) named jumanji environments, and call named generators on a key.
benchmarks/real_suites.py copies this file into both copies of the project (into the fixed one after the fix)
and names the package, environments and generators in REAL_SUITES_SMOKE."""

import importlib
import json
import os
from pathlib import Path

import pytest

SMOKE = json.loads(os.environ.get("REAL_SUITES_SMOKE", "{}"))


def _modules(package: str) -> list[str]:
    root = Path(*package.split("."))
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if any(part.endswith("_test") or part.startswith("test_") for part in parts):
            continue
        names.append(".".join(parts))
    return names


@pytest.mark.parametrize("module", _modules(SMOKE["package"]) if SMOKE.get("package") else [])
def test_imports(module):
    importlib.import_module(module)


@pytest.mark.parametrize("environment", SMOKE.get("environments", []))
def test_environment_steps(environment):
    import jax
    import jumanji

    env = jumanji.make(environment)
    state, timestep = jax.jit(env.reset)(jax.random.PRNGKey(0))
    action = env.action_spec.generate_value()
    step = jax.jit(env.step)
    for _ in range(3):
        state, timestep = step(state, action)
    jax.block_until_ready(timestep)


@pytest.mark.parametrize("generator", SMOKE.get("generators", []), ids=lambda g: g[0].rsplit(":", 1)[-1])
def test_generator_builds_a_state(generator):
    import jax

    where, keywords = generator
    module, name = where.split(":")
    build = getattr(importlib.import_module(module), name)(**keywords)
    jax.block_until_ready(jax.jit(build)(jax.random.PRNGKey(0)))
