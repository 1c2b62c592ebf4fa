"""What a question is answered with: the engine's numbers and what the scenario layer knows of
them.

The engine's results (:class:`~costmodel.result.Result` of a scenario,
:class:`~costmodel.plan_result.PlanResult` of a plan) hold numbers only. An :class:`Answer`
carries one with its resolved document (every default filled in), the catalog it was
computed with, the buyer's-guide warnings, the assumptions (every input with its value and
origin), the verdict, one sentence of :mod:`.verdict` written from the result's figures, and a
scenario's further sentences (:mod:`.wording`).
It is what ``scenarios.evaluate`` returns, what the JSON form (:func:`present.to_dict`) writes
and reads back, and what the CLI, the reports, the notebook and the run store show.

The result's figures read through the answer: ``answer.breakeven_utilisation`` is
``answer.result.breakeven_utilisation``, and ``answer.to_frame()`` the result's table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from costmodel.plan_result import PlanResult
from costmodel.result import Advice, Assumption, CatalogRef, Result
from pricing.text import counted

if TYPE_CHECKING:
    from .wording import Wording

__all__ = ["Answer"]

R = TypeVar("R", Result, PlanResult)


@dataclass(frozen=True, eq=False)
class Answer(Generic[R]):
    """An engine result with its words.

    Attributes:
        result: the engine's numbers, a scenario's :class:`Result` or a plan's
            :class:`PlanResult`.
        document: the resolved scenario or plan as plain data (the JSON's ``scenario``).
        catalog: the catalog's version and date (``None``: not known).
        warnings: the buyer's-guide advice, and the precision warnings of the run.
        assumptions: every resolved input with its value, unit and origin.
        verdict: the one-sentence answer.
        wording: a scenario's further sentences (:mod:`.wording`), written with the verdict;
            ``None`` for a plan, and in a result stored before them.
    """

    result: R
    document: Mapping[str, Any] = field(default_factory=dict)
    catalog: CatalogRef | None = None
    warnings: tuple[Advice, ...] = ()
    assumptions: tuple[Assumption, ...] = ()
    verdict: str = ""
    wording: Wording | None = None

    @classmethod
    def of(cls, shown: Answer | Result | PlanResult) -> Answer:
        """``shown`` itself when it is an answer, else an engine result's answer without words
        (what the JSON form and the reports show of a result run without the scenario layer)."""
        return shown if isinstance(shown, Answer) else cls(shown)

    @property
    def name(self) -> str:
        """The scenario's or plan's name, or ``""``."""
        return str(self.document.get("name") or "")

    @property
    def is_plan(self) -> bool:
        """Whether this answers a plan (``kind: plan``)."""
        return isinstance(self.result, PlanResult)

    def __repr__(self) -> str:
        """The name, the verdict and the result's headline numbers, a few hundred characters
        (the fields hold the rest)."""
        counts = f"{counted(len(self.warnings), 'warning')}, "
        counts += counted(len(self.assumptions), "assumption")
        return f"Answer({self.name!r}: {self.verdict!r}; {self.result!r}; {counts})"

    def __getattr__(self, name: str) -> Any:
        """The result's figure ``name`` (called only for a name the answer itself lacks)."""
        if name.startswith("_") or name == "result":  # being built, copied or unpickled
            raise AttributeError(name)
        return getattr(self.result, name)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *dir(self.result)})
