"""Which structured-output form an endpoint takes, found out once per endpoint and model.

With `structured_output: auto` a role starts with `json_schema`. A server that refuses the
request's *shape* (an error status whose message is about `response_format`, see
`is_shape_refusal`) makes the client switch to the next form in `FORMS`, once, and the
choice is kept for that endpoint and model for the rest of the process. While the form is
not yet known, calls to that endpoint and model go one at a time, so a hundred concurrent
judge calls against llama.cpp cost one refused request, not a hundred.
"""

from __future__ import annotations

import asyncio
import re
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from polygon_voice.llm.structured import FORMS, StructuredForm, StructuredSetting

# Statuses that are about something else: the key, the model, rate limits, timeouts.
_NOT_SHAPE = frozenset({401, 403, 404, 408, 409, 429})
# What refusals of the request's shape say, as servers word them:
#  llama.cpp server: 'response_format type must be one of "text" or "json_object", but got:
#    json_schema' (HTTP 500; before json_schema support) and "JSON schema conversion failed";
#  llama-cpp-python 0.3.36, recorded (tests/llm/recorded/): HTTP 500, "1 validation error:
#    {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': "Input
#    should be 'text' or 'json_object'", ...}"; its other validation errors (content null)
#    are HTTP 500 too, and name no such word;
#  vLLM / Ollama / LiteLLM: a 400 naming response_format or its json_schema field.
_SHAPE_WORDS = re.compile(r"response_format|json_schema|json_object|json schema|grammar", re.I)


def is_shape_refusal(status: int | None, detail: str) -> bool:
    """Whether an error answer says the structured-output form of the request is refused."""
    if status is None or status < 400 or status in _NOT_SHAPE:
        return False
    return _SHAPE_WORDS.search(detail) is not None


@dataclass
class FormChoice:
    """The form used for one endpoint and model, and whether an answer has confirmed it."""

    setting: StructuredSetting
    form: StructuredForm
    settled: bool
    _locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = field(
        default_factory=weakref.WeakKeyDictionary, repr=False
    )

    @asynccontextmanager
    async def deciding(self) -> AsyncIterator[None]:
        """Held around a request while the form is not known; free once it is."""
        if self.settled:
            yield
            return
        # A lock belongs to one event loop; a process may run several (one per test, say).
        loop = asyncio.get_running_loop()
        lock = self._locks.setdefault(loop, asyncio.Lock())
        async with lock:
            yield

    def settle(self, form: StructuredForm) -> None:
        """An answer came back for `form`: it is the form from now on."""
        if self.form == form:
            self.settled = True

    def refused(self, form: StructuredForm) -> StructuredForm | None:
        """`form` was refused; the next form to try, or None when there is none to try."""
        if self.form != form:
            return self.form  # another call moved on already
        if self.setting != "auto" or form == FORMS[-1]:
            return None
        self.form = FORMS[FORMS.index(form) + 1]
        return self.form


_CHOICES: dict[tuple[str, str, StructuredSetting], FormChoice] = {}


def form_choice(base_url: str, model: str, setting: StructuredSetting) -> FormChoice:
    """The process-wide choice for an endpoint, model and setting (made on first use)."""
    key = (base_url, model, setting)
    choice = _CHOICES.get(key)
    if choice is None:
        start: StructuredForm = FORMS[0] if setting == "auto" else setting
        # A fixed form is settled from the start: nothing to find out, no call waits.
        choice = _CHOICES.setdefault(key, FormChoice(setting, start, settled=setting != "auto"))
    return choice


def settle_form(base_url: str, model: str, form: StructuredForm) -> None:
    """The form `auto` uses for an endpoint and model is known already (the start-up probe
    or its cache found it): calls use it at once, and none is refused to find it out."""
    choice = form_choice(base_url, model, "auto")
    choice.form = form
    choice.settled = True


def forget_forms() -> None:
    """Forget every endpoint's form (for tests: a new fake server may reuse a port)."""
    _CHOICES.clear()
