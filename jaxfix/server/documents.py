"""A buffer's analysis with the settings of its project: `[tool.jaxfix]` of the pyproject.toml found upward
from the document's path (select, ignore, exclude, per-file-ignores, codemod options), read again at each analysis so that edits to it take
effect. The latest analysis of each document is kept, so that code actions on an unchanged buffer cost no
second analysis. Only parses: no user code is imported or run, and nothing is written."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import pathspec

from jaxfix import config
from jaxfix.engine import Settings, TextAnalysis, analyse_text, settings_from_config


class SettingsError(ValueError):
    """The project's [tool.jaxfix] cannot be used; the message says what and where."""


@dataclass(frozen=True)
class Project:
    settings: Settings  # unsafe_fixes stays off: fix-all applies safe fixes only
    root: Path | None  # the folder of the pyproject.toml, against which `exclude` patterns match
    exclude: tuple[str, ...]

    def excludes(self, path: Path) -> bool:
        if not self.exclude:
            return False
        resolved = path.resolve()
        try:
            relative = resolved.relative_to(self.root or Path.cwd().resolve()).as_posix()
        except ValueError:
            return False
        return pathspec.GitIgnoreSpec.from_lines(list(self.exclude)).match_file(relative)


def project(path: Path | None) -> Project:
    """The settings for a document at `path` (None: unsaved, then those of the server's working folder)."""
    try:
        loaded = config.load(path.parent if path is not None else None)
        settings = settings_from_config(loaded)
    except config.ConfigError as error:
        raise SettingsError(str(error)) from None
    root = loaded.source.parent.resolve() if loaded.source is not None else None
    # unsafe-fixes from the project does not reach the editor: fix-all stays safe, unsafe fixes are offered alone
    return Project(dataclasses.replace(settings, unsafe_fixes=False), root, tuple(loaded.exclude))


class Documents:
    """The latest analysis of each open document, and the project index its findings read (every module of the
    document's project, summarised once per content and kept in memory: an edit summarises one file again).
    Open buffers count as they are, saved or not. Used from one worker thread only."""

    def __init__(self) -> None:
        self._latest: dict[str, tuple[Settings, str, TextAnalysis]] = {}
        self._buffers: dict[str, str] = {}  # path → text of the open documents
        self._paths: dict[str, str] = {}  # uri → path
        self._summaries: dict = {}  # the project index's summaries, by content

    def facts(self, path: Path | None, text: str):
        """The project facts of the document at `path` with `text` (None for an unsaved document)."""
        if path is None:
            return None
        from jaxfix.project_io import build_project

        self._buffers[str(path)] = text
        index = build_project([path], texts=self._buffers, memory=self._summaries)
        return index.facts_for(str(path))

    def analysis(self, uri: str, path: Path | None, text: str) -> TextAnalysis:
        """The analysis of `text`, reused when neither it, its settings nor its project facts changed. An excluded
        file gets an empty one. Raises SettingsError."""
        where = project(path)
        if path is not None and where.excludes(path):
            return TextAnalysis(text)
        if path is not None:
            self._paths[uri] = str(path)
        facts = self.facts(path, text)
        digest = facts.digest() if facts else ""
        cached = self._latest.get(uri)
        if cached is not None and cached[0] == where.settings and cached[1] == digest and cached[2].text == text:
            return cached[2]
        result = analyse_text(text, where.settings, path=str(path) if path is not None else uri, project=facts)
        self._latest[uri] = (where.settings, digest, result)
        return result

    def forget(self, uri: str) -> None:
        self._latest.pop(uri, None)
        path = self._paths.pop(uri, None)
        if path is not None:
            self._buffers.pop(path, None)
