"""Which Python runs the user's code for `verify`, `apply --verify` and `bench`, and how jaxfix's worker starts in it.

jaxfix is usually installed in an environment of its own (pipx, a CI step), while the project's modules import
what only the project's environment has. The worker therefore runs with the project's interpreter, chosen in
this order: `--python`, `[tool.jaxfix] python` (relative to its pyproject.toml), the active virtualenv
(`VIRTUAL_ENV`) when it is not jaxfix's own, else jaxfix's own interpreter.

jaxfix need not be installed there. The worker's own modules (they import the standard library, numpy, jax and
hypothesis, nothing else of jaxfix) are copied into a scratch folder as a minimal `jaxfix` package, put first on
that interpreter's PYTHONPATH: never jaxfix's source tree or site-packages, which would shadow the project's own
`tests` package or its numpy. jax and numpy must be the project's own (compiled code). Hypothesis is pure
Python: when the project lacks it (or the packages it needs), jaxfix lends its own, only for the same Python
version (major.minor), and only the packages the project lacks, so that no version of the project's is
shadowed.
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import jaxfix

# the worker's modules, relative to the jaxfix package: verify's worker and what it imports, bench's likewise
WORKER_MODULES = (
    "__init__.py",
    "verify/worker.py",
    "verify/compare.py",
    "verify/effects.py",
    "verify/strategies.py",
    "verify/targets.py",
    "verify/testcases.py",
    "verify/runner.py",
    "verify/interpreter.py",
    "bench/__init__.py",
    "bench/worker.py",
    "bench/measure.py",
    "bench/options.py",
    "bench/run.py",
)
REQUIRED = ("numpy", "jax")  # the project's own: compiled, never lent
LENDABLE = ("hypothesis", "_hypothesis_globals", "attr", "attrs", "sortedcontainers", "exceptiongroup")  # pure Python
PROBE_SECONDS = 120.0

_PROBE = """
import importlib, importlib.util, json, sys
found = {"version": list(sys.version_info[:2]), "missing": [], "broken": {}, "absent": []}
if sys.version_info >= (3, 10):
    for name in %r:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name == name:
                found["missing"].append(name)
            else:
                found["broken"][name] = "ModuleNotFoundError: " + str(error)
        except Exception as error:
            found["broken"][name] = type(error).__name__ + ": " + (str(error).splitlines() or [""])[0]
    for name in %r:
        try:
            if importlib.util.find_spec(name) is None:
                found["absent"].append(name)
        except (ImportError, ValueError):
            found["absent"].append(name)
print("JAXFIX-PROBE " + json.dumps(found))
""" % (REQUIRED, LENDABLE)


class InterpreterError(Exception):
    """The chosen interpreter cannot run jaxfix's worker; the message names it, what it lacks and how to fix it."""


@dataclass(frozen=True)
class Interpreter:
    """The Python that runs the worker, and why it was chosen ("--python", "[tool.jaxfix] python in PATH", ...)."""

    executable: str
    chosen_by: str

    @property
    def own(self) -> bool:
        """jaxfix's own interpreter: the installed jaxfix runs the worker, as it always did. A virtualenv's python
        is a link to its base interpreter, and which environment it runs depends on the folder it is called
        from: the same file in the same folder."""
        mine = os.path.abspath(sys.executable)
        theirs = os.path.abspath(self.executable)
        return os.path.dirname(theirs) == os.path.dirname(mine) and _same_file(theirs, mine)


OWN = Interpreter(sys.executable, "jaxfix's own interpreter")


def choose(given: str | None, configured: str | None, configured_in: Path | None) -> Interpreter:
    """The interpreter for this run: `--python` (`given`), then `[tool.jaxfix] python` (`configured`, relative to
    the folder of `configured_in`), then VIRTUAL_ENV when it is not jaxfix's own environment, else jaxfix's. A
    virtualenv's folder stands for its bin/python."""
    if given:
        return Interpreter(_executable(Path(given)), "--python")
    if configured:
        base = configured_in.parent if configured_in is not None else Path.cwd()
        where = configured_in or "pyproject.toml"
        return Interpreter(_executable(base / configured), f"[tool.jaxfix] python in {where}")
    venv = os.environ.get("VIRTUAL_ENV")
    if venv and not _same_file(venv, sys.prefix):
        return Interpreter(_executable(Path(venv)), "the active virtualenv (VIRTUAL_ENV)")
    return OWN


def _executable(path: Path) -> str:
    if path.is_dir():
        for candidate in (path / "bin" / "python", path / "Scripts" / "python.exe"):
            if candidate.exists():
                return str(candidate)
    return str(path)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


@functools.lru_cache(maxsize=None)
def python_path(interpreter: Interpreter) -> tuple[str, ...]:
    """The folders to put first on the interpreter's PYTHONPATH for the worker to start (none for jaxfix's own),
    after checking that it runs and has what the worker needs. Raises InterpreterError, saying what it lacks."""
    if interpreter.own:
        return ()
    found = _probe(interpreter, {})
    name = interpreter.executable
    if tuple(found["version"]) < (3, 10):
        version = ".".join(map(str, found["version"]))
        raise InterpreterError(f"{name} ({interpreter.chosen_by}) is Python {version}: jaxfix's worker needs Python 3.10 or newer")
    problems = [f"{n} cannot be imported ({why})" for n, why in found["broken"].items()]
    lacking = list(found["missing"])
    ours = list(sys.version_info[:2])
    lend = [n for n in found["absent"] if n in LENDABLE and importlib.util.find_spec(n) is not None]
    if "hypothesis" in found["absent"] and found["version"] != ours:
        lacking.append("hypothesis")  # jaxfix's own is for another Python version: it cannot be lent
        lend = []
    if lacking or problems:
        what = "; ".join(([f"it lacks {', '.join(lacking)}"] if lacking else []) + problems)
        install = f"; install {'them' if len(lacking) > 1 else 'it'}: {name} -m pip install {' '.join(lacking)}" if lacking else ""
        raise InterpreterError(f"cannot run jaxfix's worker with {name} ({interpreter.chosen_by}): {what}{install}")
    folders = [_worker_package()]
    if lend:
        folders.append(_lent(tuple(lend)))
    checked = _probe(interpreter, {"PYTHONPATH": os.pathsep.join(folders)}, "import jaxfix.verify.worker, jaxfix.bench.worker")
    if checked.get("failed"):
        raise InterpreterError(f"cannot start jaxfix's worker with {name} ({interpreter.chosen_by}): {checked['failed']}")
    return tuple(folders)


def worker_env(interpreter: Interpreter, env: dict[str, str]) -> dict[str, str]:
    """`env` with the worker's folders first on PYTHONPATH (the user's own PYTHONPATH after them)."""
    folders = python_path(interpreter)
    if not folders:
        return env
    existing = env.get("PYTHONPATH")
    return {**env, "PYTHONPATH": os.pathsep.join([*folders, *([existing] if existing else [])])}


def _probe(interpreter: Interpreter, extra: dict[str, str], statement: str = "") -> dict:
    """Runs the probe (or `statement`) with the interpreter; what it found, or raises InterpreterError."""
    name = interpreter.executable
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **extra}
    if extra.get("PYTHONPATH") and os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = extra["PYTHONPATH"] + os.pathsep + os.environ["PYTHONPATH"]
    code = f"{statement}\nprint('JAXFIX-PROBE {{}}')" if statement else _PROBE
    try:
        done = subprocess.run(
            [name, "-c", code], capture_output=True, text=True, env=env, timeout=PROBE_SECONDS, stdin=subprocess.DEVNULL
        )
    except FileNotFoundError:
        raise InterpreterError(f"{name} ({interpreter.chosen_by}) does not exist: name a Python interpreter or a virtualenv's folder") from None
    except PermissionError:
        raise InterpreterError(f"{name} ({interpreter.chosen_by}) cannot be run (permission denied)") from None
    except OSError as error:
        raise InterpreterError(f"{name} ({interpreter.chosen_by}) cannot be run: {error.strerror or error}") from None
    except subprocess.TimeoutExpired:
        raise InterpreterError(f"{name} ({interpreter.chosen_by}) did not answer within {PROBE_SECONDS:g} s") from None
    for line in done.stdout.splitlines():
        if line.startswith("JAXFIX-PROBE "):
            return json.loads(line[len("JAXFIX-PROBE "):])
    tail = [line for line in done.stderr.splitlines() if line.strip()][-1:] or [f"exit code {done.returncode}"]
    if statement:
        return {"failed": tail[0]}
    raise InterpreterError(f"{name} ({interpreter.chosen_by}) does not run as a Python interpreter: {tail[0]}")


def _scratch(prefix: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, folder, True)
    return folder


@functools.lru_cache(maxsize=None)
def _worker_package() -> str:
    """A scratch folder holding a `jaxfix` package of the worker's modules only."""
    source, folder = Path(jaxfix.__file__).parent, _scratch("jaxfix-worker-")
    for relative in WORKER_MODULES:
        destination = folder / "jaxfix" / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / relative, destination)
    return str(folder)


@functools.lru_cache(maxsize=None)
def _lent(names: tuple[str, ...]) -> str:
    """A scratch folder with links to jaxfix's own copies of the pure-Python packages `names`."""
    folder = _scratch("jaxfix-lent-")
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        origin = Path(spec.origin)
        path = origin.parent if origin.name == "__init__.py" else origin
        os.symlink(path, folder / path.name)
    return str(folder)
