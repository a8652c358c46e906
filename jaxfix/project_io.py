"""The project index's I/O: which files make the project, their summaries read from the cache or made (in the
engine's worker processes where it has them), and the solved facts cached by the state of the whole project, so
that a warm run reads them back. What the index knows (summaries, names resolved across modules, the solution)
is analysis/project.py's, which reads no file."""

from __future__ import annotations

import hashlib
import json
import marshal
import os
from functools import partial
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping

from jaxfix import parsed
from jaxfix.analysis import recording
from jaxfix.analysis.project import INDEX_FORMAT, ModuleFacts, Project, summarize
from jaxfix.cache import project_tag, read_marshalled, write_atomically
from jaxfix.files import Resolver
from jaxfix.workers import collections_deferred

MAX_FILES = 20_000  # a "project" larger than this is not one: only the given paths are indexed
_SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "env", "__pycache__", "node_modules", ".tox",
                        ".nox", ".mypy_cache", ".pytest_cache", ".jaxfix_cache", "site-packages", "build", "dist",
                        ".eggs", ".ipynb_checkpoints"})  # fmt: skip


# What marks a project's root folder (`jaxfix record` and `verify` find the root by the same markers).
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def project_root(paths: Iterable[str | Path]) -> Path | None:
    """The folder of the nearest pyproject.toml, setup.py, setup.cfg or .git above the paths given (their common
    folder), else None (the project is then the paths themselves)."""
    resolve = Resolver()
    resolved = [resolve(p) for p in paths]
    if not resolved:
        return None
    folders = [p if p.is_dir() else p.parent for p in resolved]
    try:
        common = Path(os.path.commonpath([str(f) for f in folders]))
    except ValueError:
        return None
    for folder in (common, *common.parents):
        if any((folder / marker).exists() for marker in PROJECT_MARKERS):
            return folder
    return None


def _common_folder(paths: list[Path]) -> Path | None:
    folders = [p if p.is_dir() else p.parent for p in paths]
    try:
        return Path(os.path.commonpath([str(f) for f in folders])) if folders else None
    except ValueError:
        return None


def _python_files(root: Path) -> Iterator[Path]:
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(s for s in subfolders if s not in _SKIP_DIRS and not s.startswith("."))
        for name in sorted(files):
            if name.endswith((".py", ".ipynb")):
                yield Path(folder) / name


def module_names(path: Path, root: Path, packages: dict[Path, list[str]] | None = None) -> list[str]:
    """The names a module may be imported by: the dotted path through the packages (folders with __init__.py)
    that hold it, and its path relative to the root (a src/ layout, a folder of scripts). `packages`: the
    packages' names by folder, remembered across calls with one root (a project's files share a few folders:
    a look for `__init__.py` in each folder up the path cost a quarter of listing a project)."""
    stem = [] if path.name == "__init__.py" else [path.stem]
    names = []
    parts = packages.get(path.parent) if packages is not None else None
    if parts is None:
        parts = _package_names(path.parent, root)
        if packages is not None:
            packages[path.parent] = parts
    names.append(".".join([*parts, *stem]))
    try:
        relative = path.relative_to(root).with_suffix("")
        dotted = ".".join(p for p in relative.parts if p != "__init__")
        if dotted and dotted not in names:
            names.append(dotted)
    except ValueError:
        pass
    return [n for n in names if n]


def _package_names(folder: Path, root: Path) -> list[str]:
    """The dotted path through the packages that end at `folder` (none where it is not one), up to `root`."""
    parts: list[str] = []
    while (folder / "__init__.py").is_file() and folder != folder.parent:
        parts.insert(0, folder.name)
        if folder == root:
            break
        folder = folder.parent
    return parts


class _SummaryCache:
    """Summaries on disk, in the findings cache's run folder (so they are pruned with it, and a new version of
    jaxfix starts afresh): one marshalled *pack* per project, {summary key: marshalled summary}, read whole at
    the first `load` and written whole by `save`, with the summaries of the project's files as they are now.
    One file per summary cost a cold check of 1,449 real files as many file creations (0.3-0.7 s of the main
    process's time on a VM's ext4 disk). An edit that changes a summary rewrites the whole pack (flax's is 6.5 MB),
    but the project is then solved again, which reads every summary and costs more. `prepare` makes that folder
    and marks it used, before the first write."""

    def __init__(self, folder: Path | None, prepare=None, memory: dict | None = None, root: Path | None = None) -> None:
        self.folder = folder / f"index-{INDEX_FORMAT}" if folder is not None else None
        name = project_tag(root)  # several projects share one cache, each keeps its latest facts
        self._facts_prefix = f"facts-{name}-"
        self._pack = self.folder / f"summaries-{name}.pack" if self.folder is not None else None
        self._packed: dict[str, bytes] | None = None  # the pack as read (at the first `load`)
        self._made: dict[str, bytes] = {}  # summaries stored since, marshalled, for `save`
        self._prepare = prepare
        self.memory = memory  # summaries kept in memory too (a language server's, across analyses)
        self.used: set[str] = set()

    def load(self, key: str) -> dict | None:
        self.used.add(key)
        if self.memory is not None and key in self.memory:
            return self.memory[key]
        if self._pack is None:
            return None
        data = self._made.get(key) or self._read_pack().get(key)
        try:
            return marshal.loads(data) if type(data) is bytes else None
        except (ValueError, EOFError, TypeError):
            return None

    def _read_pack(self) -> dict:
        if self._packed is None:
            self._packed = read_marshalled(self._pack)
        return self._packed

    def store(self, key: str, summary: dict, marshalled: bytes | None = None) -> None:
        """Keep the summary, marshalled (what a worker sends, where it sent it so), until `save`: written as JSON,
        the summaries of a cold check of 1,449 files cost the process that writes them 0.4 s of CPU more; the run
        folder is Python's version's own, as marshal's format is."""
        self.used.add(key)
        if self.memory is not None:
            self.memory[key] = summary
        if self._pack is None:
            return
        try:
            self._made[key] = marshalled if marshalled is not None else marshal.dumps(summary)
        except ValueError:
            pass

    def save(self, current: Iterable[str | None]) -> None:
        """Write the pack, if a summary was made since it was read, with the summaries of `current` (the keys of
        the project's files as they are now): an edited file's earlier summary goes."""
        if self._pack is None or not self._made:
            return
        packed = self._read_pack()
        pack = {key: data for key in current if key is not None and (data := self._made.get(key) or packed.get(key))}
        self._packed, self._made = pack, {}
        if self._ready():
            write_atomically(self._pack, marshal.dumps(pack))

    def load_facts(self, key: str) -> tuple[dict, dict[str, ModuleFacts]] | None:
        """The state of the project that `store_facts` wrote under `key` ({path: [module names, summary key]})
        and every path's facts in it; with `key` None, the latest state stored, whatever its key (None: none)."""
        if self.folder is None:
            return None
        try:
            if key is None:
                stored = sorted(self.folder.glob(f"{self._facts_prefix}*.facts"), key=lambda p: p.stat().st_mtime)
                if not stored:
                    return None
                target = stored[-1]
            else:
                target = self.folder / f"{self._facts_prefix}{key}.facts"
            with open(target, "rb") as handle:
                data = json.loads(handle.read())
            facts = {path: ModuleFacts.from_json(f) for path, f in data["facts"].items()}
            return data["state"], facts
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None

    def store_facts(self, key: str, state: dict, facts: dict[str, ModuleFacts]) -> None:
        if self.folder is None:
            return
        try:
            data = json.dumps({"state": state, "facts": {path: f.to_json() for path, f in facts.items() if f}})
        except (TypeError, ValueError):
            return
        if self._ready():  # one state of the project is kept, the latest
            for old in self.folder.glob(f"{self._facts_prefix}*.facts"):
                old.unlink(missing_ok=True)
            write_atomically(self.folder / f"{self._facts_prefix}{key}.facts", data.encode())

    def _ready(self) -> bool:
        """Whether the folder is there to write in, made (and the run folder prepared) first; False where that
        fails (a cache is never worth a failed run)."""
        try:
            if self._prepare is not None:
                self._prepare()
                self._prepare = None
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            return False
        return True


def _keys(jobs: list) -> tuple[list[str | None], list[tuple | None]]:
    """The summary key and what `_make_summary` makes the summary of (its content, module name, whether it is a
    package and a notebook's JSON as on disk), for each (path, names, text) job; None where it cannot be read."""
    keys, summary_jobs = [], []
    for path, names, text in jobs:
        data = _content(path, text)
        # a notebook on disk is hashed as its JSON, and read as its code cells only when it must be summarised
        job = (data, names[0], path.name == "__init__.py", text is None and path.suffix == ".ipynb") if data is not None else None  # fmt: skip
        summary_jobs.append(job)
        keys.append(_summary_key(*job) if job is not None else None)
    return keys, summary_jobs


def _start_summaries(
    cache: _SummaryCache, keys: list, summary_jobs: list, places: list[str], mapper=None
) -> Callable[[], list[dict | None]]:
    """What collects the summary of each job (`_keys`): from the cache, else made (and stored there), by `mapper`
    where given (worker processes: each sends its summary back marshalled, which loads 4x faster than a pickle;
    `places`, the jobs' absolute paths, tell the engine's workers which file each is).
    The jobs go to `mapper` now; the function returned waits for them."""
    found, missing = [], []
    for index, key in enumerate(keys):
        found.append(cache.load(key) if key is not None else None)
        if key is not None and found[-1] is None:
            missing.append((index, summary_jobs[index]))
    sent = (
        mapper(partial(_sent_summary, os.getpid()), [job for _, job in missing], keys=[places[index] for index, _ in missing])
        if mapper is not None
        else None
    )

    def collect() -> list[dict | None]:
        if sent is not None:
            made = [
                (marshal.loads(m), m) if type(m) is bytes else (m if m is not None else _make_summary(job), None)
                for (_, job), m in zip(missing, sent)
            ]
        else:
            made = [(_make_summary(job), None) for _, job in missing]
        for (index, _), (summary, marshalled) in zip(missing, made):
            found[index] = summary
            if summary is not None:
                cache.store(keys[index], summary, marshalled)
        cache.save(keys)
        return found

    return collect


def _unchanged_facts(cache: _SummaryCache, state: dict, jobs: list, keys: list, summary_jobs: list) -> tuple[dict, dict] | None:
    """The facts of the latest state stored, when this state differs from it only in files whose summaries are
    the same (a comment, a docstring, a blank line, an edit that moves lines): the solution depends on the
    summaries alone, so it is the same. None when a file was added, removed or renamed, or a summary changed
    (the project is solved again)."""
    latest = cache.load_facts(None)
    if latest is None:
        return None
    old_state, facts = latest
    if old_state.keys() != state.keys():
        return None
    for index, (path, names, _) in enumerate(jobs):
        old_names, old_key = old_state[os.path.abspath(path)]
        new_key = keys[index]
        if old_names != names or (old_key is None) != (new_key is None):
            return None
        if old_key == new_key:
            continue
        old = cache.load(old_key)
        new = cache.load(new_key)
        if new is None:
            new = _make_summary(summary_jobs[index])
            if new is not None:
                cache.store(new_key, new)
        if old is None or new is None or _without_lines(old) != _without_lines(new):
            return None
    return old_state, facts


def _without_lines(summary: dict) -> str:
    """A summary as JSON without the line numbers of its definitions (nothing the solution reads)."""
    functions = {q: {k: v for k, v in f.items() if k != "line"} for q, f in summary["functions"].items()}
    classes = {n: {k: v for k, v in c.items() if k != "line"} for n, c in summary["classes"].items()}
    return json.dumps({**summary, "functions": functions, "classes": classes})


def _content(path: Path, text: str | None) -> bytes | None:
    """The content of a file: `text` where given (an editor's buffer, stdin: a notebook's as one module), else
    the bytes on disk (a notebook's JSON: `_make_summary` reads its code cells)."""
    if text is not None:
        return text.encode("utf-8", "surrogateescape")
    try:
        return path.read_bytes()
    except OSError:
        return None


def _summary_key(data: bytes, name: str, is_package: bool, notebook: bool) -> str:
    """The cache key of a summary job (`_keys`): its content and everything its summary depends on."""
    head = b"%d\0%s\0%d\0%s\0" % (INDEX_FORMAT, name.encode(), is_package, b"ipynb" if notebook else b"py")
    return hashlib.sha256(head + data).hexdigest()


def _sent_summary(origin: int, job: tuple[bytes, str, bool, bool]) -> dict | bytes | None:
    """`_make_summary` for the engine's `mapper`: marshalled in a worker (`_marshalled_summary`), the summary
    itself in the process `origin` that asked (a run in one process, or of a few files), where a marshal's dump
    and load bought nothing: 0.3 s of CPU in a cold one-process check of 1,449 files."""
    if os.getpid() != origin:
        return _marshalled_summary(job)
    with collections_deferred(long_lived=not job[3]):
        return _make_summary(job, keep_tree=True)


def _marshalled_summary(job: tuple[bytes, str, bool, bool]) -> bytes | None:
    """`_make_summary` for the engine's workers: its JSON-like data marshalled (None if something in it cannot
    be), the module's tree kept for its check (parsed.py)."""
    try:
        # a notebook's summary leaves cycles (its JSON scanner's closures, holding the notebook's text): not frozen
        with collections_deferred(long_lived=not job[3]):
            return marshal.dumps(_make_summary(job, keep_tree=True))
    except ValueError:
        return None


def _make_summary(job: tuple[bytes, str, bool, bool], keep_tree: bool = False) -> dict | None:
    """The summary of one module; `notebook`: the data is a notebook's JSON, summarised as its code cells (as one
    module, as the rules read them). `keep_tree`: the module's tree (and a notebook's reading) is kept for the check of
    its content (parsed.py)."""
    data, name, is_package, notebook = job
    if notebook:
        from jaxfix import notebook as notebooks

        source = notebooks.python_source(data, keep=keep_tree)
        if source is None:
            return None
        data = source.encode("utf-8", "surrogateescape")
    try:
        tree = parsed.parse(data)
        if keep_tree:
            parsed.keep(data, tree)
        return summarize(tree, name, is_package)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


# What `jaxfix record` saw, at the project's root (verify/record.py writes it; recording.py says what it means).
SIGNATURES = Path(".jaxfix") / "signatures.json"


def read_record(root: Path) -> dict[str, dict[str, recording.Recorded]]:
    """The record of the project at `root`, by file (relative to `root`, posix) and qualified name: the nearest
    .jaxfix/signatures.json in `root` or above it (`jaxfix record` writes it at the folder of the nearest
    pyproject.toml, setup.py, setup.cfg or .git, which may lie above the folder checked). A missing, unreadable
    or malformed record is no evidence: an empty dict, never an error."""
    root = Path(root)
    for folder in (root, *root.parents):
        if (folder / SIGNATURES).is_file():
            break
    else:
        return {}
    try:
        data = json.loads((folder / SIGNATURES).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    inside = root.relative_to(folder).as_posix() + "/" if folder != root else ""
    found: dict[str, dict[str, recording.Recorded]] = {}
    for key, calls in data.items():
        if not isinstance(key, str) or "::" not in key or not isinstance(calls, list):
            continue
        path, _, qualname = key.rpartition("::")
        if not path.startswith(inside):
            continue  # a file outside the folder checked
        relative = path[len(inside):]
        summary = recording.summarize(calls)
        if summary is not None:
            found.setdefault(relative, {})[qualname] = summary
    return found


def build_project(paths: Iterable[str | Path], cache_folder: Path | None = None,
                  texts: Mapping[str, str] | None = None, prepare=None, root: Path | None = None,
                  memory: dict | None = None, mapper=None) -> Project:
    """The project around `paths` (or the one in `root`, where given). `cache_folder`: where summaries are kept
    (None: nowhere), `prepare` what to call before the first is stored there; `memory`: a dict that keeps
    them between builds (by content: an edited file is summarised again, the others are not). `texts`:
    Python sources that replace what is on disk (an editor's buffers, stdin; a notebook's code cells as one
    module), by path. `mapper`: a `map` that may run the summaries in worker processes (engine's workers)."""
    return begin_project(paths, cache_folder, texts, prepare, root, memory, mapper)()


def begin_project(paths: Iterable[str | Path], cache_folder: Path | None = None,
                  texts: Mapping[str, str] | None = None, prepare=None, root: Path | None = None,
                  memory: dict | None = None, mapper=None) -> Callable[[], Project]:
    """`build_project` in two steps: this one lists the files and hands the summaries still to make to `mapper`; the
    function it returns collects them and solves. A run over several projects begins every one before it
    finishes the first, so that the workers summarise the next projects while this process solves one."""
    paths = list(paths)
    root = Path(root).resolve() if root is not None else project_root(paths)
    files: list[Path] = []
    if root is not None:
        for index, path in enumerate(_python_files(root)):
            if index >= MAX_FILES:
                files = []
                break
            files.append(path)
    if not files:  # no project around the paths: they are the project
        given = [Path(p).resolve() for p in paths]
        root = _common_folder(given)
        for path in given:
            files.extend(_python_files(path) if path.is_dir() else [path] if path.suffix in (".py", ".ipynb") else [])
    cache = _SummaryCache(cache_folder, prepare, memory, root)
    texts = {os.path.abspath(k): v for k, v in (texts or {}).items()}
    for extra in texts:
        if Path(extra) not in files:
            files.append(Path(extra))
    summaries: dict[str, dict] = {}
    path_module: dict[str, str] = {}
    jobs = []
    taken: set[str] = set()
    resolve = Resolver()
    packages: dict[Path, list[str]] = {}
    for path in files:
        names = module_names(resolve(path), root or path.parent, packages if root is not None else None)
        if not names:
            continue
        # Two files by one name (conftest.py in folders without __init__.py): the second goes by its path
        # relative to the root, else by a name nothing imports, so that each file's facts are its own.
        primary = next((n for n in names if n not in taken), f"{names[0]}@{len(jobs)}")
        names = [primary, *(n for n in names if n != primary and n not in taken)]
        taken.update(names)
        jobs.append((path, names, texts.get(os.path.abspath(path))))
    keys, summary_jobs = _keys(jobs)
    # The record of a run (`jaxfix record`) is read on every build: it is not part of the solution below,
    # and its facts reach a module's digest (and so its findings' cache key) through `facts_for`.
    recorded = read_record(root) if root is not None else {}
    # The facts of every module, solved once per state of the whole project: a warm run reads them back.
    state = {os.path.abspath(p): [n, k] for (p, n, _), k in zip(jobs, keys)}
    digest = hashlib.sha256(json.dumps([[path, n, k] for path, (n, k) in state.items()]).encode())
    facts_key = digest.hexdigest()
    stored = cache.load_facts(facts_key) if memory is None else None
    if stored is None and memory is None:
        stored = _unchanged_facts(cache, state, jobs, keys, summary_jobs)
        if stored is not None:
            cache.save(keys)
            cache.store_facts(facts_key, state, stored[1])
    if stored is not None:
        project = Project(root, {}, {os.path.abspath(p): n[0] for p, n, _ in jobs})
        project.preset = stored[1]
        project.recorded = recorded
        return lambda: project
    collect = _start_summaries(cache, keys, summary_jobs, [os.path.abspath(p) for p, _, _ in jobs], mapper)

    def finish() -> Project:
        with collections_deferred(long_lived=True):
            found = collect()
        for (path, names, _), summary in zip(jobs, found):
            if summary is None:
                continue
            path_module[os.path.abspath(path)] = names[0]
            for name in names:
                summaries.setdefault(name, summary)
        if memory is not None:  # what no file has any more (an edited file's earlier content) is let go
            for key in [k for k in memory if k not in cache.used]:
                del memory[key]
        project = Project(root, summaries, path_module)
        with collections_deferred():  # the solution holds few cycles: collections during it find little
            project.solve()
        if cache.folder is not None and memory is None and path_module:
            project.preset = {path: project.solved_facts(path) for path in path_module}
            cache.store_facts(facts_key, state, project.preset)
        project.recorded = recorded
        return project

    return finish
