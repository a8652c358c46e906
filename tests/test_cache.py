"""The result cache: a hit gives what the analysis gave, a change to the file, the settings or jaxfix misses, and
a broken cache folder is never worse than no cache."""

from __future__ import annotations

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
    entries = [p for p in (tmp_path / "cache").rglob("*.json")]
    assert len(entries) == 3
    garbage = [b"", b"{not json", b'{"key": "other"}', b'{"diagnostics": [{"code": 1}], "error": null}', b"[]"]
    for index, entry in enumerate(entries):
        entry.write_bytes(garbage[index % len(garbage)])
    again = list(process_files(files, ALL, fix=False, write=False, jobs=1, cache=cache))
    assert _summary(again) == _summary(cold)


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
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 12
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
