"""Tier 2 with a real language model: surprisal from an endpoint's prompt log-probabilities.

Any OpenAI-compatible completions endpoint that scores the prompt itself (vLLM, llama.cpp's
server) answers `POST {base}/completions` with `echo: true, logprobs: 1, max_tokens: 1`: the
log-probability of every prompt token given the tokens before it. Unlike the unigram model,
this sees words in context: an odd combination of common words costs bits too.

Configured from the environment (docs/lint.md): POLYGON_LINT_LOGPROBS_BASE_URL and
POLYGON_LINT_LOGPROBS_MODEL, optionally POLYGON_LINT_LOGPROBS_API_KEY (the key itself, as
POLYGON_API_KEY is) and POLYGON_LINT_TIMEOUT (seconds, also tier 4's). Plain urllib: a
check request once per endpoint, then one request per prompt; no need for the `llm` extra.
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

from polygon_voice.envsettings import seconds_from_env
from polygon_voice.lint.model import Finding
from polygon_voice.lint.surprisal import Scale, scan
from polygon_voice.lint.text import Prompt, Sentence
from polygon_voice.masking import mask_secrets, mask_url, url_secrets

ENV_BASE_URL = "POLYGON_LINT_LOGPROBS_BASE_URL"
ENV_MODEL = "POLYGON_LINT_LOGPROBS_MODEL"
ENV_API_KEY = "POLYGON_LINT_LOGPROBS_API_KEY"
ENV_TIMEOUT = "POLYGON_LINT_TIMEOUT"
# In context, ordinary words cost a few bits. Measured under SmolLM2-135M-Instruct (llama-cpp-
# python 0.3.36, read from the next-token alternatives): the order line example's words cost
# 4.2 bits at the median, 10.4 at the 90th percentile, 5.1 on average; 15 bits flags its two
# rarest words (a company name, "callers"), the bad example's "SLA" and "PII".
SURPRISING_WORD_BITS = 15.0
UNUSUAL_BITS = 8.0  # a sentence's mean bits per word
W_SURPRISING = 0.05  # as the unigram model's jargon
# A CPU server scoring a long prompt takes minutes, not the 60 s of a hosted API.
TIMEOUT = 300.0
# Checked once per endpoint and model: some servers (llama-cpp-python's) report each echoed
# token's log-probability on a neighbouring token. The nonsense word must cost the most.
CHECK_SENTENCE = "Please write the word zqxvbnm in the box"
CHECK_WORD = "zqxvbnm"
MIN_CHECK_BITS = 8.0  # per token of the nonsense word, under any model that reads the prompt
# ...and at least this many times the sentence's other tokens: a server that scores every
# token by the wrong distribution (llama-cpp-python's: the one *after* the token) makes all
# of them costly, and no shift repairs that.
MIN_CHECK_CONTRAST = 2.0
# Not a shift: a server that scores each token by the distribution after it (llama-cpp-
# python) lists, at each token, that distribution's best alternatives, among them usually the
# next token, with its right value. Read so, asking this many alternatives per token:
NEXT_TOKEN = 2
NEXT_TOKEN_TOP = 100
_ALIGNMENT: dict[tuple[str, str], int | str] = {}  # shift to undo, or why the tier is refused


class LogprobsError(Exception):
    """The endpoint is misconfigured, unreachable, or answered without prompt log-probabilities."""


@dataclass(frozen=True)
class LogprobsEndpoint:
    """Where to score the prompt: a base URL such as http://localhost:8000/v1, and a model."""

    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = TIMEOUT


def endpoint_from_env(env: Mapping[str, str]) -> LogprobsEndpoint | None:
    """The configured endpoint, None when neither variable is set."""
    base_url, model = env.get(ENV_BASE_URL), env.get(ENV_MODEL)
    if not base_url and not model:
        return None
    if not base_url or not model:
        raise LogprobsError(f"set both {ENV_BASE_URL} and {ENV_MODEL}")
    return LogprobsEndpoint(
        base_url.rstrip("/"), model, env.get(ENV_API_KEY) or None, timeout_from_env(env)
    )


def timeout_from_env(env: Mapping[str, str]) -> float:
    """POLYGON_LINT_TIMEOUT in seconds (a positive number), TIMEOUT when unset."""
    try:
        return seconds_from_env(env, ENV_TIMEOUT, TIMEOUT)
    except ValueError as error:
        raise LogprobsError(str(error)) from None


def token_logprobs(endpoint: LogprobsEndpoint, text: str) -> list[tuple[int, int, float]]:
    """(start, end, natural-log probability) of each prompt token after the first.

    The endpoint's alignment is checked first (once per process): a shift of one token is
    undone, any other misalignment raises LogprobsError with the reason.
    """
    shift = _alignment(endpoint)
    if shift == NEXT_TOKEN:
        return _next_token_spans(_echo(endpoint, text, NEXT_TOKEN_TOP), text)
    return _spans(_echo(endpoint, text), text, shift)


def _alignment(endpoint: LogprobsEndpoint) -> int:
    key = (endpoint.base_url, endpoint.model)
    if key not in _ALIGNMENT:
        found = shift_of(_echo(endpoint, CHECK_SENTENCE))
        if isinstance(found, str) and _reads_next_token(endpoint):
            found = NEXT_TOKEN
        _ALIGNMENT[key] = found
    found = _ALIGNMENT[key]
    if isinstance(found, str):
        raise LogprobsError(found)
    return found


def shift_of(answer: Any) -> int | str:
    """The shift that puts the most bits on the check word's tokens, or why none does."""
    start = CHECK_SENTENCE.index(CHECK_WORD)
    end = start + len(CHECK_WORD)
    best: tuple[float, float, int] | None = None
    for shift in (0, 1, -1):
        spans = _spans(answer, CHECK_SENTENCE, shift)
        on_word = [-v / math.log(2) for s, e, v in spans if s < end and e > start]
        others = [-v / math.log(2) for s, e, v in spans if not (s < end and e > start)]
        if on_word and (best is None or _mean(on_word) > best[0]):
            best = (_mean(on_word), _mean(others), shift)
    if best is None or best[0] < MIN_CHECK_BITS or best[0] < MIN_CHECK_CONTRAST * best[1]:
        bits = "none" if best is None else f"{best[0]:.1f} bits a token"
        rest = "" if best is None else f", the ordinary words {best[1]:.1f}"
        return (
            f"the log-probabilities do not line up with the prompt: the nonsense word of a "
            f"check sentence scored {bits}{rest}, even allowing a shift of one token"
        )
    return best[2]


def _reads_next_token(endpoint: LogprobsEndpoint) -> bool:
    """Whether each token was scored by the distribution after it, and reading the values
    from the alternatives listed one token earlier passes the check (llama-cpp-python)."""
    try:
        answer = _echo(endpoint, CHECK_SENTENCE, NEXT_TOKEN_TOP)
    except LogprobsError:
        return False  # no alternatives, or not so many: the first reading's refusal stands
    return next_token_check(answer) is None


def next_token_check(answer: Any) -> str | None:
    """None when the check sentence's answer with NEXT_TOKEN_TOP alternatives per token,
    read from the alternatives one token earlier, passes the check; else why not."""
    try:
        return _check(_next_token_spans(answer, CHECK_SENTENCE))
    except LogprobsError as error:
        return str(error)


def _check(spans: list[tuple[int, int, float]]) -> str | None:
    """None when the nonsense word costs the most, by far, of the check sentence's words;
    else the figures. Words, not tokens: values read as bounds ("at least") run high on
    every rare token, and only the whole word stands out."""
    words = {m.span(): 0.0 for m in re.finditer(r"\S+", CHECK_SENTENCE)}
    for s, e, v in spans:
        for start, end in words:
            if s < end and e > start:
                words[(start, end)] += -v / math.log(2)
    start = CHECK_SENTENCE.index(CHECK_WORD)
    word = words.pop((start, start + len(CHECK_WORD)), 0.0)
    rest = max(words.values(), default=0.0)
    if word >= MIN_CHECK_BITS and word >= MIN_CHECK_CONTRAST * rest:
        return None
    return f"the nonsense word {word:.1f} bits, the costliest other word {rest:.1f}"


def _next_token_spans(answer: Any, text: str) -> list[tuple[int, int, float]]:
    """Each prompt token's log-probability, read from the alternatives listed at the token
    before it (a server that scores every token by the distribution after it). A token not
    among them gets the least of them: a bound, so such a token costs *at least* that."""
    try:
        logprobs = answer["choices"][0]["logprobs"]
        tokens: list[str] = logprobs["tokens"]
        tops: list[dict[str, float] | None] = logprobs["top_logprobs"]
        offsets: list[int] | None = logprobs.get("text_offset")
    except (KeyError, IndexError, TypeError):
        raise LogprobsError("the answer has no prompt alternatives (echo + logprobs)") from None
    if not isinstance(tops, list) or not isinstance(tokens, list):
        raise LogprobsError("the answer has no prompt alternatives (echo + logprobs)")
    if offsets is None:
        offsets = list(itertools.accumulate((len(t) for t in tokens[:-1]), initial=0))
    spans = []
    for k in range(1, min(len(tokens), len(tops), len(offsets))):
        before = tops[k - 1]
        if offsets[k] >= len(text) or not isinstance(before, dict) or not before:
            continue
        # The list holds the best alternatives and the token itself, at its own (wrong)
        # value: that one is left out of the bound.
        alternatives = sorted(before.values(), reverse=True)[:NEXT_TOKEN_TOP]
        value = before.get(tokens[k], alternatives[-1])
        spans.append((offsets[k], offsets[k] + len(tokens[k]), float(min(value, 0.0))))
    return spans


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _echo(endpoint: LogprobsEndpoint, text: str, alternatives: int = 1) -> Any:
    # max_tokens 1, not 0: llama.cpp's server reads 0 as "no limit" and generates for an hour.
    body = {
        "model": endpoint.model,
        "prompt": text,
        "echo": True,
        "logprobs": alternatives,
        "max_tokens": 1,
        "temperature": 0,
    }
    headers = {"Content-Type": "application/json", "X-Polygon-Role": "lint"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    url = _under(endpoint.base_url, "/completions")
    request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    shown, secrets = mask_url(endpoint.base_url), url_secrets(endpoint.base_url)
    try:
        # On a timeout urllib closes the connection (the `with` too, mid-body), so the server
        # sees the request abandoned rather than a client still waiting.
        with urllib.request.urlopen(request, timeout=endpoint.timeout) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        raise LogprobsError(f"{shown}: HTTP {exc.code}") from None
    except (urllib.error.URLError, TimeoutError, ValueError) as exc:
        # The key never appears: only the masked URL and the reason are told.
        raise LogprobsError(mask_secrets(f"{shown}: {exc}", secrets)) from None


def _under(base_url: str, path: str) -> str:
    # The path goes before the base URL's query (`?key=`), not into it.
    parts = urllib.parse.urlsplit(base_url)
    return urllib.parse.urlunsplit(parts._replace(path=parts.path.rstrip("/") + path))


def _spans(answer: Any, text: str, shift: int = 0) -> list[tuple[int, int, float]]:
    # `shift` 1: each value arrived one token late and is moved back; -1: one token early.
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
    if shift == 1:
        values = [*values[1:], None]
    elif shift == -1:
        values = [None, *values[:-1]]
    spans = []
    for token, start, value in zip(tokens, offsets, values, strict=False):
        # The first token has no context and so no log-probability; offsets past the prompt
        # belong to the one generated token (max_tokens 1), which is not the prompt's.
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
