"""Instruction-like spans of a transcript (prompt injection: "ignore previous instructions", role
markers, tool-call syntax, "write everything to Azure DevOps"), found with offsets and a kind so
that prompts can mark them as untrusted: the transcript is data, never instructions (the hygiene
gate's second half, ``shared.text.hygiene``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

AnnotationKind = Literal[
    "instruction_override",
    "role_override",
    "prompt_exfiltration",
    "tool_directive",
    "role_marker",
    "tool_call_syntax",
]


class Annotation(BaseModel):
    """One instruction-like span: part of the transcript (data), to be shown to models as untrusted."""

    model_config = ConfigDict(extra="forbid")

    kind: AnnotationKind
    start: int
    end: int
    line: int
    rule: str
    text: str  # the span as it stands in the (redacted) transcript


@dataclass(frozen=True)
class _Cue:
    rule_id: str
    kind: AnnotationKind
    pattern: re.Pattern[str]
    whole_line: bool = False


@functools.cache
def _cues() -> tuple[_Cue, ...]:
    i, m = re.IGNORECASE, re.MULTILINE
    prior = r"(?:previous|prior|above|earlier|preceding|foregoing|original|initial|system)"
    orders = r"(?:instructions?|prompts?|rules|directions|directives|guidelines|messages|context)"
    return (
        _Cue(
            "ignore-previous",
            "instruction_override",
            re.compile(
                rf"\b(?:ignore|disregard|forget|override|bypass|skip)\s+(?:all\s+|any\s+|every\s+)?"
                rf"(?:of\s+)?(?:the\s+|my\s+|your\s+|these\s+|those\s+)?(?:{prior}\s+)?{orders}\b",
                i,
            ),
        ),
        _Cue(
            "disregard-above",
            "instruction_override",
            re.compile(
                r"\b(?:ignore|disregard|forget)\s+(?:all\s+of\s+|everything\s+)?"
                r"(?:the\s+)?(?:above|everything\s+(?:above|before)|what\s+(?:you\s+were|i)\s+(?:told|said))",
                i,
            ),
        ),
        _Cue(
            "new-instructions",
            "instruction_override",
            re.compile(
                r"\b(?:new|updated|real|actual)\s+instructions?\s*:|\bdo\s+not\s+follow\s+"
                r"(?:the|your|any)\s+(?:previous\s+|original\s+)?(?:instructions|rules)",
                i,
            ),
        ),
        _Cue(
            "you-are-now",
            "role_override",
            re.compile(
                r"\byou\s+are\s+now\b|\bfrom\s+now\s+on,?\s+you\b|\bpretend\s+(?:to\s+be|you\s+are)\b"
                r"|\b(?:act|behave|respond)\s+as\s+(?:if\s+you\s+were\s+)?(?:an?\s+|the\s+)?"
                r"(?:ai|assistant|language\s+model|llm|system|admin(?:istrator)?|developer|root|dan)\b"
                r"|\broleplay\s+as\b|\bdeveloper\s+mode\b|\bjailbreak|\bDAN\s+mode\b",
                i,
            ),
        ),
        _Cue(
            "system-prompt",
            "prompt_exfiltration",
            re.compile(
                r"\b(?:reveal|print|show|repeat|output|leak|dump|tell\s+me|give\s+me)\s+(?:me\s+)?"
                r"(?:your|the)\s+(?:system\s+prompt|hidden\s+prompt|instructions|prompt|"
                r"api[-\s]?keys?|secrets?|credentials|environment\s+variables)"
                r"|\bsystem\s+prompt\b",
                i,
            ),
        ),
        _Cue(
            "write-to-ado",
            "tool_directive",
            re.compile(
                r"\b(?:write|push|send|post|sync|create|file|put|upload|commit|save|delete|remove|close)"
                r"\s+(?:(?:everything|all(?:\s+of\s+(?:it|this|them))?|it|this|them|these|every\s+\w+"
                r"|the\s+(?:whole\s+)?\w+|all\s+(?:the\s+)?\w+)\s+)?(?:directly\s+|straight\s+)?"
                r"(?:to|into|in|from)\s+(?:azure\s+devops|ado|the\s+backlog|jira|production)\b"
                r"|\b(?:delete|remove|close)\s+(?:all|every)\s+(?:the\s+)?"
                r"(?:work\s+items|stories|user\s+stories|epics|features|tickets)\b",
                i,
            ),
        ),
        _Cue(
            "role-marker",
            "role_marker",
            re.compile(
                r"^[ \t]*(?:[A-Z][\w .'-]{0,40}:[ \t]*)?(?:#{1,4}[ \t]*)?(?:system|assistant)(?:[ \t]+(?:prompt|message))?[ \t]*:"
                r"|<\|(?:im_start|im_end|system|user|assistant|endoftext)\|>|\[/?INST\]|<<\/?SYS>>"
                r"|^[ \t]*#{2,}[ \t]*(?:instructions?|system)\b",
                i | m,
            ),
            whole_line=True,
        ),
        _Cue(
            "tool-call",
            "tool_call_syntax",
            re.compile(
                r"\"(?:tool_calls?|function_call|tool_use)\"\s*:|</?(?:tool_call|function_calls?|"
                r"invoke|tool_use)\b|<function[=\s]|\bfunctions\.[a-z_]\w*\s*\("
                r"|\"name\"\s*:\s*\"[\w.-]+\"\s*,\s*\"(?:arguments|parameters|input)\"\s*:",
                i,
            ),
            whole_line=True,
        ),
    )


def _line_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    return line_start, len(text) if line_end < 0 else line_end


def _sentence_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """The sentence(s) of the line that contain [start, end)."""
    from shared.text.textio import sentence_spans

    line_start, line_end = _line_bounds(text, start, max(start, end - 1))
    spans = [
        s for s in sentence_spans(text, line_start, line_end) if s.start < end and start < s.end
    ]
    if not spans:
        return start, end
    return min(start, spans[0].start), max(end, spans[-1].end)


def find_annotations(text: str) -> list[Annotation]:
    """Instruction-like spans, widened to their sentence (or line), merged per kind, in order."""
    found: list[tuple[int, int, AnnotationKind, str]] = []
    for cue in _cues():
        for match in cue.pattern.finditer(text):
            if cue.whole_line:
                start, end = _line_bounds(text, match.start(), match.end())
            else:
                start, end = _sentence_bounds(text, match.start(), match.end())
            found.append((start, end, cue.kind, cue.rule_id))
    found.sort()
    merged: list[tuple[int, int, AnnotationKind, str]] = []
    for start, end, kind, rule in found:
        same = [k for k, m in enumerate(merged) if m[2] == kind and start <= m[1] and m[0] <= end]
        if same:
            s, e, _, r = merged[same[-1]]
            merged[same[-1]] = (min(s, start), max(e, end), kind, r)
        else:
            merged.append((start, end, kind, rule))
    return [
        Annotation(
            kind=kind,
            start=start,
            end=end,
            line=text.count("\n", 0, start) + 1,
            rule=rule,
            text=text[start:end],
        )
        for start, end, kind, rule in sorted(merged)
    ]
