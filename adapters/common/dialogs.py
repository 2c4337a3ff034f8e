"""The question-form shape both Claude Code (``AskUserQuestion``) and Codex
(``request_user_input``) use: ``questions[{question, header, options[{label,
description}], multiSelect}]``, as the dialog the operator sees."""

from __future__ import annotations

from agentspool.core.seam import DialogOption, DialogQuestion, PendingDialog


def question_dialog(tool_use_id: str, questions: object) -> PendingDialog:
    parsed = []
    for q in questions if isinstance(questions, list) else []:
        if not isinstance(q, dict):
            continue
        options = [
            DialogOption(label=str(o.get("label", "")), description=str(o.get("description", "")))
            for o in q.get("options") or []
            if isinstance(o, dict)
        ]
        parsed.append(
            DialogQuestion(
                prompt=str(q.get("question", "")),
                header=str(q.get("header", "")),
                options=options,
                multi_select=bool(q.get("multiSelect", False)),
            )
        )
    first = parsed[0] if parsed else DialogQuestion(prompt="")
    return PendingDialog(
        kind="question",
        tool_use_id=tool_use_id,
        prompt=first.prompt,
        options=first.options,
        multi_select=first.multi_select,
        questions=parsed,
    )


__all__ = ["question_dialog"]
