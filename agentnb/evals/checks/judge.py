"""judge(model, rubric): an LLM grades the answer against a rubric; its reasoning is kept."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

from ...errors import ConfigurationError, ModelResponseError
from .base import Check, Evidence

__all__ = ["JUDGE_PROMPT", "Judge", "judge"]

#: The grader's instructions; ``{rubric}`` is filled in.
JUDGE_PROMPT = (
    "You grade an assistant's final answer against a rubric. Think briefly, then write the "
    "verdict alone on the last line: PASS or FAIL.\n\nRubric:\n{rubric}"
)
_VERDICT = re.compile(r"\b(PASS|FAIL)\b|(不通过|通过)", re.IGNORECASE)


def read_verdict(text: str) -> bool | None:
    """The last PASS/FAIL (or 通过/不通过) in ``text``; None when there is none."""
    found = _VERDICT.findall(text)
    if not found:
        return None
    word = "".join(found[-1]).upper()
    return word in ("PASS", "通过")


@dataclass(frozen=True, repr=False)
class Judge(Check):
    """An LLM judge: any agentnb model (the local SmolLM2 included) grades the answer."""

    kind: ClassVar[str] = "judge"
    model: Any
    rubric: str

    @property
    def name(self) -> str:
        return f"judge({self.rubric[:40]!r})"

    def to_dict(self) -> dict[str, Any]:
        # The model is not written (it may hold a key); from_jsonl(..., judge=model) gives one.
        return {"check": self.kind, "rubric": self.rubric}

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> Check:
        return cls(fields.get("model"), fields["rubric"])

    async def judge(self, evidence: Evidence) -> tuple[bool, str]:
        if self.model is None:
            raise ConfigurationError(
                f"{self.name} has no model: give one with an.checks.judge(model, rubric), or "
                "TaskSet.from_jsonl(path, judge=model) for a task set read from a file"
            )
        from ...models.base import ModelRequest

        task = evidence.task
        question = getattr(task, "input", "") if task is not None else ""
        request = ModelRequest(
            messages=[
                {"role": "system", "content": JUDGE_PROMPT.format(rubric=self.rubric)},
                {
                    "role": "user",
                    "content": f"User request:\n{question}\n\nAssistant's answer:\n"
                    f"{evidence.output}",
                },
            ],
            params={"temperature": 0},
        )
        response = await self.model.complete(request)
        content = response.message.content
        text = content if isinstance(content, str) else str(content or "")
        passed = read_verdict(text)
        if passed is None:  # a judge that cannot judge is a measurement error, not a failure
            raise ModelResponseError(f"the judge gave no PASS/FAIL verdict: {text.strip()[:300]!r}")
        return passed, text.strip()


def judge(model: Any, rubric: str) -> Judge:
    """An LLM judge: ``model`` reads the rubric, the request and the answer, reasons, and
    ends with PASS or FAIL. The whole reply is kept as the check's reason. A reply with no
    verdict raises, so the run counts as an ``error`` (the judge failed, not the agent)."""
    return Judge(model, rubric)
