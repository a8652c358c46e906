"""jaxfix as `pip install .` installs it: a wheel built from this repository, installed with its dependencies
(and the [lsp] extra) into a new virtualenv, every command run from that virtualenv's `jaxfix` in a folder outside
the repository, so that nothing can be imported from the checkout. The editable install the other tests run
under sees every file of the checkout and would hide a module or a data file the wheel leaves out.

Slow (a virtualenv and an install, about 30 s): marked `slow_install`; `-m "not slow_install"` skips it."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
VERSION = PYPROJECT["project"]["version"]
COMMANDS = ("check", "apply", "verify", "bench", "record", "clean", "rules", "rule", "lsp")
# What a clone holds besides the sources: never part of a build (the patterns of .gitignore, and .git).
NOT_SOURCES = (".git", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__", "*.py[cod]", ".pytest_cache",
               ".benchmarks", ".jaxfix_cache", ".hypothesis")
INSTALL_TIMEOUT_S = 600  # a cold pip cache downloads jax and jaxlib
COMMAND_TIMEOUT_S = 180  # a command's first JAX import and compiles, on a loaded machine

slow_install = pytest.mark.slow_install

LEAKY = """import jax


@jax.jit
def leaky(x):
    print("x", x)
    return x * 2
"""

BEFORE = """import jax
import jax.numpy as jnp


def rows(xs):
    return jnp.stack([jnp.sum(r * r) for r in xs])


if __name__ == "__main__":
    rows(jnp.ones((8, 3)))
"""

AFTER = """import jax
import jax.numpy as jnp


def rows(xs):
    return jax.vmap(lambda r: jnp.sum(r * r))(xs)
"""

RECORDED = """def double(x):
    return x * 2


double(3)
"""


def python_packages(folder: Path, name: str) -> set[str]:
    """`name` and its subpackages: every folder under `folder` that holds a .py file (with or without __init__.py)."""
    folders = [folder, *(p for p in folder.rglob("*") if p.is_dir() and p.name != "__pycache__")]
    return {".".join([name, *f.relative_to(folder).parts]) for f in folders if any(f.glob("*.py"))}


def wheel_sources() -> set[str]:
    """The files the wheel must hold, as paths inside it: jaxfix's modules, codemods/ as jaxfix/codemods/, and the
    rule pages of docs/rules/ as jaxfix/rule_pages/ (the language server links to them)."""
    files = {p.relative_to(ROOT).as_posix() for p in (ROOT / "jaxfix").rglob("*.py")}
    files |= {f"jaxfix/codemods/{p.relative_to(ROOT / 'codemods').as_posix()}" for p in (ROOT / "codemods").rglob("*.py")}
    return files | {f"jaxfix/rule_pages/{p.name}" for p in (ROOT / "docs" / "rules").glob("*.md")}


def test_pyproject_lists_every_package_on_disk() -> None:
    """setuptools' package finding ignores the package-dir mapping of codemods/, so the packages are listed by
    hand: a new folder of modules must be added to pyproject.toml (a missing jaxfix.bench broke `jaxfix bench`)."""
    assert SETUPTOOLS["package-dir"] == {"jaxfix.codemods": "codemods", "jaxfix.rule_pages": "docs/rules"}
    on_disk = python_packages(ROOT / "jaxfix", "jaxfix") | python_packages(ROOT / "codemods", "jaxfix.codemods")
    assert set(SETUPTOOLS["packages"]) == on_disk | {"jaxfix.rule_pages"}
    assert SETUPTOOLS["package-data"] == {"jaxfix.rule_pages": ["*.md"]}


class Installed:
    """The wheel and the virtualenv it is installed in."""

    def __init__(self, wheel: Path, venv: Path, work: Path) -> None:
        self.wheel = wheel
        self.bin = venv / ("Scripts" if os.name == "nt" else "bin")
        self.venv = venv
        self.work = work  # the current folder of every command: outside the repository
        self.env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}
        self.env.update(PATH=f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}", PYTHONNOUSERSITE="1", JAX_PLATFORMS="cpu")

    def run(self, *args: str, program: str = "jaxfix") -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(self.bin / program), *args],
            cwd=self.work,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
        )


def _pip(*args: str) -> None:
    result = subprocess.run([sys.executable, "-m", "pip", *args], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=INSTALL_TIMEOUT_S)
    assert result.returncode == 0, f"pip {' '.join(args)}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    base = tmp_path_factory.mktemp("wheel")
    # Built from a copy: setuptools builds in the source folder (build/, jaxfix.egg-info/), and a build/ left from
    # an earlier build would put modules deleted since into the wheel.
    source = base / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCES))
    # Without build isolation (no download): the setuptools and wheel of the test extra; pip checks their versions
    # against pyproject's build-system requirements.
    _pip("wheel", "--no-deps", "--no-build-isolation", "--check-build-dependencies", "--quiet", "-w", str(base / "dist"), str(source))
    (wheel,) = (base / "dist").glob("jaxfix-*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, stdin=subprocess.DEVNULL, timeout=120)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    _pip("--python", str(python), "install", "--quiet", f"{wheel}[lsp]")
    work = base / "project"
    work.mkdir()
    (work / "pyproject.toml").write_text("[project]\nname = 'user-project'\n")  # the project root, for cache and record
    return Installed(wheel, venv, work)


@slow_install
def test_the_wheel_holds_every_module_and_rule_page(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = {n for n in wheel.namelist() if not n.split("/")[0].endswith(".dist-info")}
    assert names == wheel_sources()


@slow_install
def test_jaxfix_is_imported_from_the_virtualenv(installed: Installed) -> None:
    script = "import jaxfix, jaxfix.bench, jaxfix.codemods, jaxfix.verify.worker; print(jaxfix.__file__); print(jaxfix.codemods.__file__)"
    result = installed.run("-c", script, program="python")
    assert result.returncode == 0, result.stderr
    for line in result.stdout.splitlines():
        assert Path(line).resolve().is_relative_to(installed.venv.resolve()), line
        assert not Path(line).resolve().is_relative_to(ROOT), line


@slow_install
@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(installed: Installed, command: str) -> None:
    result = installed.run(command, "--help")
    assert result.returncode == 0, result.stderr
    assert "Usage:" in result.stdout and f"jaxfix {command}" in result.stdout


@slow_install
def test_version_from_the_script_and_python_m(installed: Installed) -> None:
    assert installed.run("--version").stdout == f"jaxfix {VERSION}\n"
    result = installed.run("-m", "jaxfix", "--version", program="python")
    assert (result.returncode, result.stdout) == (0, f"jaxfix {VERSION}\n"), result.stderr


@slow_install
def test_check_and_apply_diff(installed: Installed) -> None:
    (installed.work / "leaky.py").write_text(LEAKY)
    result = installed.run("check", "leaky.py")
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("leaky.py:6:5: JF601 [*] print() of a traced value")
    result = installed.run("apply", "--diff", "leaky.py")
    assert result.returncode == 1, result.stderr
    assert '-    print("x", x)\n+    jax.debug.print("x {}", x)\n' in result.stdout
    assert (installed.work / "leaky.py").read_text() == LEAKY, "--diff writes nothing"


@slow_install
def test_bad_input_is_one_line(installed: Installed) -> None:
    result = installed.run("check", "missing.py")
    assert result.returncode == 2
    assert result.stderr == "missing.py: error: no such file or folder\n"


@slow_install
def test_rules_and_rule(installed: Installed) -> None:
    result = installed.run("rules")
    assert result.returncode == 0, result.stderr
    codes = [line.split()[0] for line in result.stdout.splitlines() if line.startswith("JF")]
    assert codes == sorted(p.stem for p in (ROOT / "docs" / "rules").glob("JF*.md"))
    result = installed.run("rule", "JF601")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (ROOT / "docs" / "rules" / "JF601.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def pair(installed: Installed) -> Installed:
    (installed.work / "before.py").write_text(BEFORE)
    (installed.work / "after.py").write_text(AFTER)
    return installed


@slow_install
def test_bench_measures_a_pair(pair: Installed) -> None:
    result = pair.run("bench", "before.py", "after.py", "--repeats", "2", "--warmup", "0")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["function", "device", "mode"]
    assert lines[1].startswith("before.py::rows") and " cpu " in lines[1] and " -> " in lines[1]
    assert lines[-1].startswith("Measured 1 function on cpu")


@slow_install
def test_verify_a_pair(pair: Installed) -> None:
    result = pair.run("verify", "before.py", "after.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("before.py::rows  cpu  verified ")
    assert "Verified 1 of 1 function: 0 differ" in result.stdout


@slow_install
def test_record_loads_its_hook(installed: Installed) -> None:
    """The hook (jaxfix/verify/hook/sitecustomize.py) is a file of the wheel put on the recorded run's PYTHONPATH."""
    (installed.work / "recorded.py").write_text(RECORDED)
    result = installed.run("record", "--", str(installed.bin / "python"), "recorded.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == "Recorded 1 signature of 1 function into .jaxfix/signatures.json.\n"
    signatures = json.loads((installed.work / ".jaxfix" / "signatures.json").read_text())
    assert list(signatures) == ["recorded.py::double"]


@slow_install
def test_clean_removes_the_cache(installed: Installed) -> None:
    (installed.work / "clean.py").write_text("x = 1\n")
    assert installed.run("check", "clean.py").returncode == 0
    assert (installed.work / ".jaxfix_cache").is_dir()
    result = installed.run("clean")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"Removed {installed.work.resolve() / '.jaxfix_cache'}\n"


class LspClient:
    """A client that speaks LSP's base protocol (Content-Length framed JSON) to `jaxfix lsp` over its stdio."""

    def __init__(self, installed: Installed) -> None:
        self.stderr = tempfile.TemporaryFile()  # a file, not a pipe: a full pipe would block the server
        self.process = subprocess.Popen(
            [str(installed.bin / "jaxfix"), "lsp"], cwd=installed.work, env=installed.env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
        )
        self.messages: queue.Queue = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while (line := stream.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if not line or length is None:
                self.messages.put(None)  # the server closed its output
                return
            self.messages.put(json.loads(stream.read(length)))

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.flush()

    def receive(self, wanted) -> dict:
        """The next message `wanted(message)` accepts, skipping others (log messages)."""
        while True:
            try:
                message = self.messages.get(timeout=COMMAND_TIMEOUT_S)
            except queue.Empty:
                pytest.fail(f"no answer from jaxfix lsp in {COMMAND_TIMEOUT_S} s{self._errors()}")
            if message is None:
                pytest.fail(f"jaxfix lsp stopped{self._errors()}")
            if wanted(message):
                return message

    def _errors(self) -> str:
        self.stderr.seek(0)
        return ": " + self.stderr.read().decode(errors="replace")[-3000:]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.reader.join(timeout=10)  # it ends at the end of the server's output
        for stream in (self.process.stdin, self.process.stdout, self.stderr):
            stream.close()


@slow_install
def test_lsp_initialize_diagnostics_and_exit(installed: Installed) -> None:
    client = LspClient(installed)
    try:
        root = installed.work.resolve()
        client.send({"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}})
        response = client.receive(lambda m: m.get("id") == 1)
        assert "capabilities" in response["result"], response
        assert response["result"]["capabilities"]["codeActionProvider"]["resolveProvider"] is True
        client.send({"method": "initialized", "params": {}})
        uri = (root / "leaky.py").as_uri()
        document = {"uri": uri, "languageId": "python", "version": 1, "text": LEAKY}
        client.send({"method": "textDocument/didOpen", "params": {"textDocument": document}})
        published = client.receive(lambda m: m.get("method") == "textDocument/publishDiagnostics")
        (diagnostic,) = published["params"]["diagnostics"]
        assert diagnostic["code"] == "JF601" and diagnostic["source"] == "jaxfix"
        # The rule's page, from the wheel: the link is to the installed copy, which says what `jaxfix rule` says.
        page = Path(unquote(urlparse(diagnostic["codeDescription"]["href"]).path))
        assert page.is_relative_to(installed.venv.resolve()) and page.parts[-3:] == ("jaxfix", "rule_pages", "JF601.md")
        assert page.read_text(encoding="utf-8") == installed.run("rule", "JF601").stdout
        client.send({"id": 2, "method": "shutdown"})
        assert client.receive(lambda m: m.get("id") == 2)["result"] is None
        client.send({"method": "exit"})
        assert client.process.wait(timeout=COMMAND_TIMEOUT_S) == 0
    finally:
        client.close()
