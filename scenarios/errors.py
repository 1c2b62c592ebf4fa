"""The one error type of the scenario layer: where (file, key path, line) and what was wrong."""

from __future__ import annotations

__all__ = ["ScenarioError"]


class ScenarioError(ValueError):
    """A scenario that cannot be run.

    ``file`` is the source (a path, or ``"<request>"`` for HTTP bodies); ``errors`` is a list of
    ``{"path": "buy.pue", "message": "...", "line": 12?}`` with dotted key paths ("" for the
    whole document). ``str(error)`` is one readable line per problem.
    """

    def __init__(self, file: str | None, errors: list[dict]) -> None:
        self.file = file
        self.errors = errors
        super().__init__(self._text())

    def _text(self) -> str:
        lines = []
        for e in self.errors:
            where = self.file or "<scenario>"
            if e.get("line"):
                where += f":{e['line']}"
            lines.append(f"{where}: {e['path'] or '(document)'}: {e['message']}")
        return "\n".join(lines)
