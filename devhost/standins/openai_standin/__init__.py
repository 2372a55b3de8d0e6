"""An OpenAI-compatible HTTP server on localhost, for tests and benchmarks: the real ``openai`` SDK
talks to it over HTTP, so retries, timeouts, headers and response parsing are the SDK's own.

Routes (OpenAI and Azure OpenAI spellings):
  POST /v1/chat/completions                         POST /openai/deployments/{d}/chat/completions
  POST /v1/embeddings                               POST /openai/deployments/{d}/embeddings
  GET  /v1/models                                   GET  /openai/models
(any path prefix before ``/chat/completions`` or ``/embeddings`` works; the query string is ignored)

Answers, in this order of precedence for each request:
0. the quota (``limits``, off by default): a request past its deployment's tokens or requests per
   window is answered 429 with ``Retry-After`` / ``retry-after-ms`` (see ``RateLimits``);
1. a scripted reply: ``standin.script(Reply..., match=...)`` queues one-shot replies, consumed in
   order by the first request they match (``match``: a JSON schema name such as
   "GenerationAnswer", a predicate on ``Recorded``, or None for any chat request);
2. the failure plan (``Failures``): a seeded share of requests answered with malformed JSON, 429,
   500 or a hang (client timeout);
3. the automatic answer: valid, plausible output derived from the prompt, after ``delay`` seconds
   (embeddings after ``embedding_delay`` seconds when it is given, else after ``delay`` too), plus,
   with ``token_latency``, a time proportional to its prompt and completion tokens.

Automatic answers by response schema name (``response_format.json_schema.name``):
- ``SegmentationAnswer``: reads the numbered units ``[n] text`` of the prompt and starts a segment
  every ``units_per_segment`` units (or makes ``segments_per_call`` equal parts);
- ``GenerationAnswer``: reads the segment's data block and writes ``stories_per_segment`` stories,
  each quoting a different real sentence of it (requirement-like sentences first); one epic (the
  theme) and one feature; the first story extends the first retrieved User Story, if any;
- ``TaggingAnswer``: reads the candidates' similarities and the thresholds from the prompt and
  applies them (duplicate ≥ duplicateAtLeast, extend ≥ extendSimilarity, gap ≥ gapAtLeast, else new);
- ``JudgeAnswer``: ratings 1-5 derived from the prompt (traceability from the share of the story's
  words found in the segment block, AC ratings from the criteria's wording), with rationales;
- any other schema: a minimal instance of the JSON schema (required fields only).
Embeddings: deterministic hashed bag-of-words vectors (``dimensions`` or ``embedding_dim``), L2
normalized, so texts sharing words are similar; float lists or base64 as the request asks.

Every request is recorded (``standin.requests``) with its parsed body, headers, the SDK's retry
count header and the Azure deployment, for assertions.

Use::

    with OpenAIStandIn(delay=0.05, failures=Failures(rate=0.3, seed=7)) as llm:
        env = {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "x"}

The package: ``server`` (``OpenAIStandIn``, ``hermetic_env``), ``answers`` (the automatic
answers, ``hashed_embedding``, ``minimal_instance``), ``replies`` (``Reply``, ``Failures``, the
mutators), ``limits`` (``RateLimits``, ``TokenLatency``) and ``recorded`` (``Recorded``).
``from devhost.standins.openai_standin import OpenAIStandIn`` is the usual import.
"""

from __future__ import annotations

from devhost.standins.openai_standin.answers import hashed_embedding, minimal_instance
from devhost.standins.openai_standin.limits import RateLimits, TokenLatency
from devhost.standins.openai_standin.recorded import Matcher, Recorded
from devhost.standins.openai_standin.replies import (
    Failures,
    Reply,
    quote_not_in_segment,
    unclear_tag,
)
from devhost.standins.openai_standin.server import SERVICE_ENV_PREFIXES, OpenAIStandIn, hermetic_env

__all__ = [
    "SERVICE_ENV_PREFIXES",
    "Failures",
    "Matcher",
    "OpenAIStandIn",
    "RateLimits",
    "Recorded",
    "Reply",
    "TokenLatency",
    "hashed_embedding",
    "hermetic_env",
    "minimal_instance",
    "quote_not_in_segment",
    "unclear_tag",
]
