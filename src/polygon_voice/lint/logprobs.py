"""Tier 2 with a real language model: surprisal from an endpoint's prompt log-probabilities.

Any OpenAI-compatible completions endpoint that scores the prompt itself (vLLM, llama.cpp's
server) answers `POST {base}/completions` with `echo: true, logprobs: 1, max_tokens: 0`: the
log-probability of every prompt token given the tokens before it. Unlike the unigram model,
this sees words in context: an odd combination of common words costs bits too.

Configured from the environment (docs/lint.md): POLYGON_LINT_LOGPROBS_BASE_URL and
POLYGON_LINT_LOGPROBS_MODEL, optionally POLYGON_LINT_LOGPROBS_API_KEY (the key itself, as
POLYGON_API_KEY is). Plain urllib: one synchronous request, no need for the `llm` extra.
"""

from __future__ import annotations

import bisect
import itertools
import json
import math
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from polygon_voice.lint.model import Finding
from polygon_voice.lint.surprisal import Scale, scan
from polygon_voice.lint.text import Prompt, Sentence
from polygon_voice.masking import mask_secrets, mask_url, url_secrets

ENV_BASE_URL = "POLYGON_LINT_LOGPROBS_BASE_URL"
ENV_MODEL = "POLYGON_LINT_LOGPROBS_MODEL"
ENV_API_KEY = "POLYGON_LINT_LOGPROBS_API_KEY"
# In context, ordinary words cost a few bits; these limits are set from that scale, not yet
# measured on a real model (none runs offline here): adjust them once one is.
SURPRISING_WORD_BITS = 15.0
UNUSUAL_BITS = 8.0  # a sentence's mean bits per word
W_SURPRISING = 0.05  # as the unigram model's jargon
TIMEOUT = 60.0


class LogprobsError(Exception):
    """The endpoint is misconfigured, unreachable, or answered without prompt log-probabilities."""


@dataclass(frozen=True)
class LogprobsEndpoint:
    """Where to score the prompt: a base URL such as http://localhost:8000/v1, and a model."""

    base_url: str
    model: str
    api_key: str | None = None


def endpoint_from_env(env: Mapping[str, str]) -> LogprobsEndpoint | None:
    """The configured endpoint, None when neither variable is set."""
    base_url, model = env.get(ENV_BASE_URL), env.get(ENV_MODEL)
    if not base_url and not model:
        return None
    if not base_url or not model:
        raise LogprobsError(f"set both {ENV_BASE_URL} and {ENV_MODEL}")
    return LogprobsEndpoint(base_url.rstrip("/"), model, env.get(ENV_API_KEY) or None)


def token_logprobs(endpoint: LogprobsEndpoint, text: str) -> list[tuple[int, int, float]]:
    """(start, end, natural-log probability) of each prompt token after the first."""
    body = {
        "model": endpoint.model,
        "prompt": text,
        "echo": True,
        "logprobs": 1,
        "max_tokens": 0,
        "temperature": 0,
    }
    headers = {"Content-Type": "application/json", "X-Polygon-Role": "lint"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    url = _under(endpoint.base_url, "/completions")
    request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    shown, secrets = mask_url(endpoint.base_url), url_secrets(endpoint.base_url)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        raise LogprobsError(f"{shown}: HTTP {exc.code}") from None
    except (urllib.error.URLError, TimeoutError, ValueError) as exc:
        # The key never appears: only the masked URL and the reason are told.
        raise LogprobsError(mask_secrets(f"{shown}: {exc}", secrets)) from None
    return _spans(answer, text)


def _under(base_url: str, path: str) -> str:
    # The path goes before the base URL's query (`?key=`), not into it.
    parts = urllib.parse.urlsplit(base_url)
    return urllib.parse.urlunsplit(parts._replace(path=parts.path.rstrip("/") + path))


def _spans(answer: Any, text: str) -> list[tuple[int, int, float]]:
    try:
        logprobs = answer["choices"][0]["logprobs"]
        tokens: list[str] = logprobs["tokens"]
        values: list[float | None] = logprobs["token_logprobs"]
        offsets: list[int] | None = logprobs.get("text_offset")
    except (KeyError, IndexError, TypeError):
        raise LogprobsError(
            "the answer has no prompt log-probabilities (echo + logprobs)"
        ) from None
    if offsets is None:
        # Echoed tokens concatenate to the prompt: their offsets follow from their lengths.
        offsets = list(itertools.accumulate((len(t) for t in tokens[:-1]), initial=0))
    spans = []
    for token, start, value in zip(tokens, offsets, values, strict=False):
        # The first token has no context and so no log-probability; offsets past the prompt
        # belong to generated text, of which there is none with max_tokens 0.
        if value is not None and start < len(text):
            spans.append((start, start + len(token), float(value)))
    return spans


def surprisal(prompt: Prompt, spans: list[tuple[int, int, float]], model: str) -> list[Finding]:
    """Surprising words and sentences of unusual wording, from per-token log-probabilities."""

    ordered = sorted(spans, key=lambda span: span[0])
    starts = [start for start, _, _ in ordered]
    # The largest end up to each token: the walk back below stops where no earlier token
    # can reach the word any more.
    reach = list(itertools.accumulate((end for _, end, _ in ordered), max))

    def score(match: re.Match[str], sentence: Sentence) -> float:
        # A word costs the bits of every token that overlaps it ("un" + "hurried"): found by
        # a search in the token starts, not a pass over every token of the prompt per word.
        k = bisect.bisect_left(starts, match.end()) - 1
        overlapping = []
        while k >= 0 and reach[k] > match.start():
            if ordered[k][1] > match.start():
                overlapping.append(ordered[k][2])
            k -= 1
        return sum(-value / math.log(2) for value in reversed(overlapping))

    scale = Scale(
        word_bits=SURPRISING_WORD_BITS,
        sentence_bits=UNUSUAL_BITS,
        kind="surprising-word",
        word_weight=W_SURPRISING,
        word_message=lambda word, b: (
            f'"{word}" is surprising here ({b:.0f} bits under {model}): '
            "the model or the caller may read it differently; say it plainly"
        ),
        sentence_note=f"under {model}",
    )
    return scan(prompt, score, scale)
