"""The result cache: a hit gives what the analysis gave, a change to the file, the settings or jaxfix misses, and
a broken cache folder is never worse than no cache."""

from __future__ import annotations

import marshal
import os
from pathlib import Path

import pytest

from jaxfix import engine, registry
from jaxfix.cache import FOLDER_NAME, ResultCache, default_folder
from jaxfix.engine import Settings, process_files
from tests.test_cli import CLEAN, FINDING, FIXED, run

ALL = Settings(tuple(c.code for c in registry.all_codemods()))


@pytest.fixture
def files(tmp_path: Path) -> list[str]:
    (tmp_path / "bad.py").write_text(FINDING)
    (tmp_path / "good.py").write_text(CLEAN)
    (tmp_path / "broken.py").write_text("def f(:\n")
    return [str(tmp_path / name) for name in ("bad.py", "good.py", "broken.py")]


def _forbid_analysis(monkeypatch) -> None:
    """From now on any analysis fails the test: what runs after this was answered by the cache."""

    def refuse(*args, **kwargs):
        raise AssertionError("analysed although the cache holds the answer")

    monkeypatch.setattr(engine, "analyse", refuse)
    monkeypatch.setattr(engine, "_checked_tree", refuse)


def _packs(folder: Path) -> list[Path]:
    return sorted(folder.rglob("findings-*.pack"))


def _entries(folder: Path) -> dict[str, tuple[str, dict]]:
    """Every entry of the findings packs under `folder`, by its file's part of the key."""
    return {part: entry for pack in _packs(folder) for part, entry in marshal.loads(pack.read_bytes()).items()}


def _summary(results):
    return [(r.path, r.diagnostics, r.error, r.internal_errors, r.fixed) for r in results]


def test_a_warm_run_gives_the_cold_results_without_analysing(files, tmp_path, monkeypatch) -> None:
    cache = ResultCache.for_settings(ALL, tmp_path / "cache")
    cold = list(process_files(files, ALL, fix=False, write=False, jobs=1, cache=cache))
    assert cold[0].diagnostics and cold[2].error
    uncached = list(process_files(files, ALL, fix=False, write=False, jobs=1))
    assert _summary(cold) == _summary(uncached)

    _forbid_analysis(monkeypatch)
    warm = list(process_files(files, ALL, fix=False, write=False, jobs=1, cache=cache))
    assert _summary(warm) == _summary(cold)
    assert [r.original for r in warm] == [r.original for r in cold]


def test_a_changed_file_or_other_settings_miss(files, tmp_path) -> None:
    cache = ResultCache.for_settings(ALL, tmp_path / "cache")
    list(process_files(files, ALL, fix=False, write=False, jobs=1, cache=cache))
    Path(files[1]).write_text(FINDING)
    again = list(process_files(files, ALL, fix=False, write=False, jobs=1, cache=cache))
    assert again[1].diagnostics, "the edited file was analysed again"
    only_jf9 = Settings(("JF901",))
    other = ResultCache.for_settings(only_jf9, tmp_path / "cache")
    assert other.run_key != cache.run_key
    assert not list(process_files(files, only_jf9, fix=False, write=False, jobs=1, cache=other))[0].diagnostics


def test_the_key_covers_jaxfix_code_and_python(monkeypatch, tmp_path) -> None:
    import jaxfix.cache as module

    first = ResultCache.for_settings(ALL, tmp_path)
    monkeypatch.setattr(module, "code_hash", lambda: "edited")
    assert ResultCache.for_settings(ALL, tmp_path).run_key != first.run_key
    monkeypatch.undo()
    monkeypatch.setattr(module.sys, "version", "3.99.0")
    assert ResultCache.for_settings(ALL, tmp_path).run_key != first.run_key


def test_check_and_apply_share_entries_whatever_unsafe_fixes_says(tmp_path) -> None:
    assert ResultCache.for_settings(ALL, tmp_path) == ResultCache.for_settings(Settings(ALL.codes, True), tmp_path)


def test_corrupt_entries_are_misses(files, tmp_path) -> None:
    cache = ResultCache.for_settings(ALL, tmp_path / "cache")
    cold = list(process_files(files, ALL, fix=False, write=False, jobs=1, cache=cache))
    [pack] = _packs(tmp_path / "cache")
    entries = marshal.loads(pack.read_bytes())
    assert len(entries) == 3
    garbage = [None, "text", ("other", {}), (None, {"diagnostics": [{"code": 1}], "error": None}), ()]
    for index, (part, (key, _)) in enumerate(sorted(entries.items())):  # entries that do not hold what they should
        entries[part] = garbage[index] if index != 1 else (key, {"diagnostics": [{"code": 1}], "error": None})
    pack.write_bytes(marshal.dumps(entries))
    assert _summary(process_files(files, ALL, fix=False, write=False, jobs=1, cache=cache)) == _summary(cold)
    for broken in (b"", b"not marshal", marshal.dumps([1, 2]), pack.read_bytes()[:-7]):  # a pack that does not
        pack.write_bytes(broken)
        assert _summary(process_files(files, ALL, fix=False, write=False, jobs=1, cache=cache)) == _summary(cold)


def test_a_cache_folder_that_cannot_be_written_is_no_cache(files, tmp_path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    cache = ResultCache.for_settings(ALL, blocker / "cache")
    results = list(process_files(files, ALL, fix=False, write=False, jobs=1, cache=cache))
    assert results[0].diagnostics and blocker.read_text() == ""


def test_apply_after_a_clean_check_needs_no_analysis_and_a_second_apply_is_a_hit(files, tmp_path, monkeypatch) -> None:
    cache = ResultCache.for_settings(ALL, tmp_path / "cache")
    list(process_files(files, ALL, fix=False, write=False, jobs=1, cache=cache))
    applied = list(process_files(files, ALL, fix=True, write=True, jobs=1, cache=cache))
    assert applied[0].written and Path(files[0]).read_text() == FIXED
    assert applied[1].fixed == CLEAN and not applied[1].changed

    _forbid_analysis(monkeypatch)
    second = list(process_files(files, ALL, fix=True, write=True, jobs=1, cache=cache))
    assert not any(r.changed or r.written for r in second)
    assert second[2].error == applied[2].error


def test_a_cached_finding_with_a_fix_is_fixed(files, tmp_path) -> None:
    cache = ResultCache.for_settings(ALL, tmp_path / "cache")
    list(process_files(files, ALL, fix=False, write=False, jobs=1, cache=cache))
    applied = list(process_files(files, ALL, fix=True, write=False, jobs=1, cache=cache))
    assert applied[0].fixed == FIXED and applied[0].fixes_applied == 1


def test_parallel_workers_read_and_write_the_cache(tmp_path) -> None:
    paths = []
    for index in range(12):
        (tmp_path / f"m{index:02}.py").write_text(FINDING if index % 2 else CLEAN)
        paths.append(str(tmp_path / f"m{index:02}.py"))
    cache = ResultCache.for_settings(ALL, tmp_path / "cache")
    cold = list(process_files(paths, ALL, fix=False, write=False, jobs=2, cache=cache))
    assert len(_packs(tmp_path / "cache")) == 1 and len(_entries(tmp_path / "cache")) == 12
    warm = list(process_files(paths, ALL, fix=False, write=False, jobs=2, cache=cache))
    assert _summary(warm) == _summary(cold)


def test_the_cli_keeps_its_cache_in_the_project_root_and_no_cache_writes_none(tmp_path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "bad.py").write_text(FINDING)
    assert default_folder(tmp_path / "pkg") == tmp_path / FOLDER_NAME
    assert run("check", "--no-cache", ".", cwd=tmp_path / "pkg").exit_code == 1
    assert not (tmp_path / FOLDER_NAME).exists()
    cold = run("check", ".", cwd=tmp_path / "pkg")
    assert (tmp_path / FOLDER_NAME / ".gitignore").read_text().strip().endswith("*")
    warm = run("check", ".", cwd=tmp_path / "pkg")
    assert warm.output == cold.output and warm.exit_code == cold.exit_code == 1
    assert run("check", ".", cwd=tmp_path).output.count("JF601") == 1, "the cache folder is not checked"


def test_jaxfix_cache_dir_overrides_the_folder(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("JAXFIX_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert default_folder(tmp_path) == tmp_path / "elsewhere"
    assert os.environ["JAXFIX_CACHE_DIR"]


# ---- bounds: one entry per file, old run folders pruned, `jaxfix clean` ----------------------------------------


def test_an_edited_file_replaces_its_entry(files, tmp_path) -> None:
    cache = ResultCache.for_settings(ALL, tmp_path / "cache")
    for text in (FINDING, CLEAN, FINDING + "\n# edited\n"):
        Path(files[0]).write_text(text)
        list(process_files(files, ALL, fix=False, write=False, jobs=1, cache=cache))
    assert len(_entries(tmp_path / "cache")) == 3, "one entry per file, not one per version of it"
    [key] = [key for key, _ in _entries(tmp_path / "cache").values() if key[:32] == cache.key(files[0], b"")[:32]]
    assert key == cache.key(files[0], (FINDING + "\n# edited\n").encode()), "the replaced entry answers no more"


def test_an_unchanged_run_writes_nothing(files, tmp_path) -> None:
    cache = ResultCache.for_settings(ALL, tmp_path / "cache")
    list(process_files(files, ALL, fix=False, write=False, jobs=1, cache=cache))
    written = {p: p.stat().st_mtime_ns for p in (tmp_path / "cache").rglob("*.pack")}
    assert len(written) == 2, "the findings and the summaries of the project: a pack each"
    for p in written:
        os.utime(p, ns=(1, 1))
    list(process_files(files, ALL, fix=False, write=False, jobs=1, cache=cache))
    assert {p.stat().st_mtime_ns for p in written} == {1}


def _run_folders(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if p.is_dir()}


def test_runs_prune_other_versions_and_settings_by_age_and_count(files, tmp_path, monkeypatch) -> None:
    import jaxfix.cache as module

    folder = tmp_path / "cache"
    caches = []
    for index in range(module.KEEP + 3):  # as many jaxfix versions (or edits of a rule), each used once
        monkeypatch.setattr(module, "code_hash", lambda index=index: f"version {index}")
        cache = ResultCache.for_settings(ALL, folder)
        cache.prune(now=1_000_000.0 + index)
        list(process_files(files[:1], ALL, fix=False, write=False, jobs=1, cache=cache))
        os.utime(cache.run_folder / ".used", (1_000_000.0 + index,) * 2)
        caches.append(cache)
    (folder / "ab").mkdir()  # the flat layout of FORMAT 1
    (folder / "ab" / ("ab" + "0" * 62 + ".json")).write_text("{}")
    (folder / ".stale.tmp").write_text("")
    os.utime(folder / ".stale.tmp", (0, 0))
    (folder / ".writing.tmp").write_text("")
    (folder / "notes.txt").write_text("")  # JAXFIX_CACHE_DIR may name a folder that holds other things
    (folder / "other-tool").mkdir()

    current = caches[-1]
    current.prune(now=1_000_000.0 + module.KEEP + 3)
    kept = {c.run_folder.name for c in caches[-module.KEEP - 1:]}
    assert _run_folders(folder) == kept | {"other-tool"}, "the current run folder and the KEEP most recent others"
    assert {p.name for p in folder.iterdir() if not p.is_dir()} == {".gitignore", "CACHEDIR.TAG", ".writing.tmp", "notes.txt"}
    assert current.key(files[0], Path(files[0]).read_bytes()) in {key for key, _ in _entries(current.run_folder).values()}

    current.prune(now=1_000_000.0 + (module.MAX_AGE_DAYS + 1) * 86400)
    assert _run_folders(folder) == {current.run_folder.name, "other-tool"}, "a week unused: gone, whatever the count"


def test_a_run_marks_its_folder_used(files, tmp_path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "bad.py").write_text(FINDING)
    run("check", ".", cwd=tmp_path)
    marks = list((tmp_path / FOLDER_NAME).glob("*/.used"))
    assert len(marks) == 1
    os.utime(marks[0], (0, 0))
    run("check", ".", cwd=tmp_path)
    assert marks[0].stat().st_mtime > 0


def test_clean_removes_the_cache_folders_under_a_path_and_only_those(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("JAXFIX_CACHE_DIR", raising=False)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    for sub in ("a", "b/c"):
        (tmp_path / sub).mkdir(parents=True)
        (tmp_path / sub / "bad.py").write_text(FINDING)
    run("check", ".", cwd=tmp_path)
    (tmp_path / "b" / "c" / FOLDER_NAME).mkdir()  # one a run elsewhere left (another project root)
    (tmp_path / "b" / "c" / FOLDER_NAME / "x.json").write_text("{}")
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n# another tool\n")

    result = run("clean", "b", cwd=tmp_path)
    assert result.exit_code == 0
    assert not (tmp_path / "b" / "c" / FOLDER_NAME).exists()
    assert not (tmp_path / FOLDER_NAME).exists(), "the folder the runs under b use (the project root's)"
    assert (tmp_path / "keep" / "CACHEDIR.TAG").exists() and (tmp_path / "a" / "bad.py").exists()
    assert "Removed" in result.output
    assert "No cache to remove" in run("clean", cwd=tmp_path).output
    missing = run("clean", "nowhere", cwd=tmp_path)
    assert missing.exit_code == 2 and "nowhere" in missing.output


def test_clean_removes_a_cache_dir_folder_only_if_jaxfix_made_it(tmp_path, monkeypatch) -> None:
    (tmp_path / "bad.py").write_text(FINDING)
    monkeypatch.setenv("JAXFIX_CACHE_DIR", str(tmp_path / "mine"))
    run("check", ".", cwd=tmp_path)
    assert (tmp_path / "mine" / "CACHEDIR.TAG").exists()
    run("clean", ".", cwd=tmp_path)
    assert not (tmp_path / "mine").exists()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "precious.txt").write_text("")
    run("clean", ".", cwd=tmp_path)
    assert (tmp_path / "mine" / "precious.txt").exists(), "not jaxfix's: left alone"
    run("check", ".", cwd=tmp_path)  # now jaxfix's too, and it holds something else
    assert (tmp_path / "mine" / "CACHEDIR.TAG").exists()
    assert "Removed" in run("clean", ".", cwd=tmp_path).output
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["precious.txt"], "only jaxfix's own went"


_CHECK_LOOP = """
import sys
from jaxfix.cli import app
for _ in range(int(sys.argv[2])):
    try:
        app(["check", sys.argv[1], *sys.argv[3:]], standalone_mode=False)
    except SystemExit:
        pass
"""


def test_concurrent_runs_and_cleans_do_not_crash_each_other(tmp_path) -> None:
    """Two processes checking the same tree with the same cache (different settings, so each prunes around the
    other's folder), while a third cleans it: every run finishes with its findings, none reports an error."""
    import subprocess
    import sys

    for index in range(20):
        (tmp_path / f"m{index:02}.py").write_text(FINDING if index % 2 else CLEAN)
    env = {**os.environ, "JAXFIX_CACHE_DIR": str(tmp_path / "shared-cache")}
    runs = [
        subprocess.Popen([sys.executable, "-c", _CHECK_LOOP, str(tmp_path), "6", *extra], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for extra in ([], ["--select", "JF601"], [])
    ]
    cleaner = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\nfrom pathlib import Path\nfrom jaxfix import cache\n"
        "for _ in range(40):\n    cache.clean([Path(sys.argv[1])])\n    time.sleep(0.05)\n"), str(tmp_path)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    outputs = [p.communicate(timeout=300) for p in [*runs, cleaner]]
    for process, (out, err) in zip([*runs, cleaner], outputs):
        assert process.returncode == 0, err
        assert "error" not in err and "Traceback" not in err, err
    for out, _ in outputs[:3]:
        assert out.count("JF601") == 10 * 6, out[-500:]


def test_a_run_that_stores_nothing_makes_no_cache_folder(tmp_path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert run("check", "nothing.py", cwd=tmp_path).exit_code == 2
    assert not (tmp_path / FOLDER_NAME).exists()
    (tmp_path / "bad.py").write_text(FINDING)
    run("check", ".", cwd=tmp_path)
    assert len(list((tmp_path / FOLDER_NAME).glob("*/.used"))) == 1, "the first store marks its run folder"
