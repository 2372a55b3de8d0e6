"""Prompt templates of the LLM agents and of the LLM judge: one text file each, each with its own
version.

File format (``segmentation.txt``, ``generation.txt``, ``tagging.txt``, ``judge.txt``)::

    version: gen-llm-v1
    === system ===
    ...the system message...
    === user ===
    ...the user message, with ${placeholders}...

Placeholders use ``string.Template`` syntax (``${name}``; a literal dollar is ``$$``), so braces in
JSON examples and in transcripts need no escaping, and a missing value is an error (KeyError), not
a silently empty section. The version goes into every record an agent's output becomes
(``segmentation_version``, ``generation_agent_version``, ``tagging_agent_version``, and the
judge's ``prompt_version`` in ``eval/{run_id}/judge_quality.jsonl``); change it
whenever the file changes (tests/unit/test_llm_prompts.py holds each version's content hash).
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from string import Template

from shared.errors import SynthesizerError

PROMPTS_DIR = Path(__file__).parent
NAMES = ("segmentation", "generation", "tagging", "judge")
_HEADER = re.compile(r"\Aversion: *(?P<version>[A-Za-z0-9._-]+)\n")
_SECTIONS = re.compile(r"^=== (system|user) ===\n", re.MULTILINE)


class PromptFileError(SynthesizerError, ValueError):
    pass


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    version: str
    system: Template
    user: Template
    sha256: str

    def render(self, **values: object) -> tuple[str, str]:
        """(system message, user message) with every placeholder filled."""
        text = {k: str(v) for k, v in values.items()}
        return self.system.substitute(text).strip(), self.user.substitute(text).strip()

    def messages(self, **values: object) -> list[dict[str, str]]:
        """The rendered prompt as chat messages: the system message, then the user message."""
        system, user = self.render(**values)
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def parse(name: str, text: str) -> PromptTemplate:
    header = _HEADER.match(text)
    if not header:
        raise PromptFileError(f"prompt {name!r} must start with 'version: <version>'")
    parts = _SECTIONS.split(text[header.end() :])
    sections = dict(zip(parts[1::2], parts[2::2], strict=True))
    if set(sections) != {"system", "user"} or parts[0].strip():
        raise PromptFileError(f"prompt {name!r} needs exactly '=== system ===' and '=== user ==='")
    return PromptTemplate(
        name=name,
        version=header["version"],
        system=Template(sections["system"]),
        user=Template(sections["user"]),
        sha256=hashlib.sha256(text.encode()).hexdigest(),
    )


@functools.cache
def load(name: str) -> PromptTemplate:
    if name not in NAMES:
        raise PromptFileError(f"unknown prompt {name!r}; known: {', '.join(NAMES)}")
    return parse(name, (PROMPTS_DIR / f"{name}.txt").read_text(encoding="utf-8"))
