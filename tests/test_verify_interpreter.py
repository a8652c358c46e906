"""`verify` and `apply --verify` run the user's code with the project's interpreter (jaxfix/verify/interpreter.py):
one that has a package jaxfix's environment lacks, and neither jaxfix nor hypothesis installed."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from jaxfix import config
from jaxfix.verify import interpreter
from tests.helpers import invoke_in

# a project's module: it imports a package only its own environment has, and JF101's unsafe fix rewrites its loop
MODEL = """import fakehaiku
import jax
import jax.numpy as jnp


@jax.jit
def decay(x: jax.Array) -> jax.Array:
    for _ in range(12):
        x = x * fakehaiku.RATE + jnp.sin(x)
    return x
"""
NOT_LINKED = ("hypothesis", "_hypothesis", "attr", "sortedcontainers", "jaxfix", "__editable__", "_jaxfix")


def _python(venv: Path) -> Path:
    return venv / "bin" / "python"


@pytest.fixture(scope="module")
def project_venv(tmp_path_factory) -> Path:
    """A virtualenv with jax and numpy (jaxfix's own copies, linked in: building them takes minutes), a package
    `fakehaiku` of its own, and neither jaxfix nor hypothesis (nor what hypothesis needs)."""
    venv = tmp_path_factory.mktemp("project") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    ours = Path(sysconfig.get_paths()["purelib"])
    theirs = Path(subprocess.run([str(_python(venv)), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], check=True, capture_output=True, text=True).stdout.strip())
    for entry in ours.iterdir():
        if not entry.name.startswith(NOT_LINKED) and entry.suffix != ".pth" and entry.name != "__pycache__":
            os.symlink(entry, theirs / entry.name)
    (theirs / "fakehaiku").mkdir()
    (theirs / "fakehaiku" / "__init__.py").write_text("RATE = 0.5\n")
    probe = "import importlib.util as u; print([m for m in ('jax', 'numpy', 'fakehaiku', 'jaxfix', 'hypothesis') if u.find_spec(m)])"
    found = subprocess.run([str(_python(venv)), "-c", probe], check=True, capture_output=True, text=True, cwd=str(venv)).stdout
    assert found.strip() == "['jax', 'numpy', 'fakehaiku']", found
    return venv


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


def _kept(result, folder: Path) -> None:
    assert result.exit_code == 0, result.output
    assert "fixed model.py (1 fix; verified: decay)" in result.output
    assert "jax.lax.fori_loop" in (folder / "model.py").read_text()


def test_without_the_projects_interpreter_the_unsafe_fix_is_reverted(project: Path) -> None:
    result = invoke_in(project, "apply", "--verify", "--max-examples", "3", ".")
    assert "reverted function model.py::decay  unverified: neither module can be imported: ModuleNotFoundError: No module named 'fakehaiku'" in result.output
    assert (project / "model.py").read_text() == MODEL


@pytest.mark.slow_venv
def test_python_option_runs_the_worker_in_the_projects_environment(project: Path, project_venv: Path) -> None:
    _kept(invoke_in(project, "apply", "--verify", "--max-examples", "3", "--python", str(_python(project_venv)), "."), project)


@pytest.mark.slow_venv
def test_the_active_virtualenv_is_the_projects(project: Path, project_venv: Path, monkeypatch) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", str(project_venv))
    _kept(invoke_in(project, "apply", "--verify", "--max-examples", "3", "."), project)


@pytest.mark.slow_venv
def test_the_configured_interpreter_is_relative_to_its_pyproject(project: Path, project_venv: Path) -> None:
    relative = os.path.relpath(project_venv, project)  # the virtualenv's folder stands for its bin/python
    (project / "pyproject.toml").write_text(f'[tool.jaxfix]\npython = "{relative}"\n')
    (project / "sub").mkdir()
    result = invoke_in(project / "sub", "verify", "--max-examples", "3", "../model.py")
    assert result.exit_code == 0, result.output
    assert "model.py::decay  cpu  verified" in result.output


def test_an_interpreter_without_jax_stops_the_run_before_anything_is_written(project: Path, tmp_path_factory) -> None:
    bare = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    result = invoke_in(project, "apply", "--verify", "--python", str(bare), ".")
    assert result.exit_code == 2
    python = _python(bare)
    assert f"jaxfix: error: cannot run jaxfix's worker with {python} (--python): it lacks numpy, jax; install them: {python} -m pip install numpy jax" in result.output
    assert "Traceback" not in result.output
    assert (project / "model.py").read_text() == MODEL


def test_an_interpreter_that_does_not_exist_is_named(project: Path) -> None:
    result = invoke_in(project, "verify", "--python", "no/such/python", "model.py")
    assert result.exit_code == 2
    assert "jaxfix: error: no/such/python (--python) does not exist" in result.output


@pytest.mark.slow_venv
def test_the_worker_package_holds_only_the_workers_modules(project_venv: Path) -> None:
    """What is put on the project's path: a `jaxfix` of the worker's modules (no `tests` beside it to shadow the
    project's), and links to jaxfix's hypothesis and the packages it needs, which the project lacks."""
    folders = interpreter.python_path(interpreter.Interpreter(str(_python(project_venv)), "--python"))
    package, lent = (Path(f) for f in folders)
    assert sorted(p.name for p in package.iterdir()) == ["jaxfix"]
    assert {p.relative_to(package / "jaxfix").as_posix() for p in (package / "jaxfix").rglob("*.py")} == set(interpreter.WORKER_MODULES)
    assert {"hypothesis", "attr", "sortedcontainers"} <= {p.name.split(".")[0] for p in lent.iterdir()}


def test_choosing_the_interpreter(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)  # jaxfix's own environment: jaxfix's interpreter
    assert interpreter.choose(None, None, None) == interpreter.OWN
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "env"))
    assert interpreter.choose(None, None, None).executable == str(tmp_path / "env")
    chosen = interpreter.choose(None, "../py/bin/python", tmp_path / "sub" / "pyproject.toml")
    assert chosen.executable == str(tmp_path / "sub" / "../py/bin/python") and "pyproject.toml" in chosen.chosen_by
    assert interpreter.choose("/usr/bin/python3", "x", tmp_path / "pyproject.toml").chosen_by == "--python"


def test_the_python_key_must_be_a_path(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.jaxfix]\npython = 3\n")
    with pytest.raises(config.ConfigError, match="python must be a path"):
        config.load(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.jaxfix]\npython = ".venv"\n')
    assert config.load(tmp_path).python == ".venv"


@pytest.mark.slow_venv
def test_bench_measures_in_the_projects_environment(project: Path, project_venv: Path) -> None:
    result = invoke_in(project, "bench", "--repeats", "2", "--python", str(project_venv), "model.py")
    assert result.exit_code == 0, result.output
    assert "model.py::decay  cpu     jit" in result.output


def test_python_without_verify_is_refused(project: Path) -> None:
    result = invoke_in(project, "apply", "--python", sys.executable, ".")
    assert result.exit_code == 2 and "--python names the interpreter that runs your code for --verify" in result.output
    assert (project / "model.py").read_text() == MODEL
