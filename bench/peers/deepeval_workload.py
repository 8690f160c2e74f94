"""The cost-per-request workload done with deepeval, as a deepeval user would write it.

    <deepeval venv>/bin/python bench/peers/deepeval_workload.py --base-url URL
        [--conversations 100] [--concurrency 32] [--exchanges 5]

Runs in deepeval's own virtual environment (bench/cost_per_request.py makes it), against the
fake OpenAI-compatible server at URL: `ConversationSimulator` plays the caller
(`LocalModel`, deepeval's client for an OpenAI-compatible endpoint), the agent under test is
a model callback calling the same server with the official `openai` client, and each
simulated conversation is scored by `ConversationalGEval` (given evaluation steps: one
request per conversation, like Polygon's judge) through `evaluate()`.

The simulator's and the metric's model is, by default, the leanest a deepeval user can
write: a `DeepEvalBaseLLM` holding one `AsyncOpenAI` client, its answer validated into the
schema deepeval asks for. `--model local` uses deepeval's own `LocalModel` instead, which
builds a new SDK client (and TLS context) for every request. Prints one JSON line:
this process's CPU seconds (`time.process_time()`: in all, and from the first request on),
the conversations and the turns.

Standard library and deepeval only: this file is never imported by Polygon.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

# deepeval's telemetry, its Confident AI prompts and its result files are no part of the
# work measured: off before deepeval is imported.
os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
os.environ.setdefault("DEEPEVAL_NO_INSPECT_PROMPT", "1")
os.environ.setdefault("DEEPEVAL_DISABLE_PROGRESS_BAR", "1")
os.environ.setdefault("ERROR_REPORTING", "0")

AGENT_PROMPT = (
    "You are the phone agent of an order line. Speak in short, spoken sentences. Before "
    "changing an order, read back the order number and the change, and wait for a yes."
)
SCENARIO = "A caller phones the order line to change the quantity of order 5590 to 3."
PERSONA = "A busy, cooperative caller; order 5590; wants 3 items instead of 2."
STEPS = [
    "Check that the agent understood which order the caller meant.",
    "Check that the agent confirmed the change before making it.",
    "Check that the agent stayed polite and brief.",
]


def main() -> int:
    """Run the simulation and the evaluation; print the figures as one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--conversations", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--exchanges", type=int, default=5)
    parser.add_argument("--model", choices=("custom", "local"), default="custom")
    options = parser.parse_args()

    from deepeval import evaluate
    from deepeval.dataset import ConversationalGolden
    from deepeval.evaluate.configs import AsyncConfig, CacheConfig, DisplayConfig
    from deepeval.metrics import ConversationalGEval
    from deepeval.models import DeepEvalBaseLLM, LocalModel
    from deepeval.simulator import ConversationSimulator
    from deepeval.test_case import Turn, TurnParams
    from openai import AsyncOpenAI

    agent = AsyncOpenAI(base_url=options.base_url, api_key="no-key", max_retries=0)

    async def agent_callback(input: str, turns: list[Turn]) -> Turn:
        # The agent under test: the conversation so far, then the caller's new line.
        messages = [{"role": "system", "content": AGENT_PROMPT}]
        messages += [{"role": turn.role, "content": turn.content} for turn in turns]
        messages.append({"role": "user", "content": input})
        completion = await agent.chat.completions.create(model="fake-agent", messages=messages)
        return Turn(role="assistant", content=completion.choices[0].message.content or "")

    class SharedClientModel(DeepEvalBaseLLM):
        """deepeval's custom-model interface over one client kept for the whole run."""

        def load_model(self) -> AsyncOpenAI:
            return AsyncOpenAI(base_url=options.base_url, api_key="no-key", max_retries=0)

        def generate(self, prompt: str, schema: Any = None) -> Any:
            raise NotImplementedError("the workload runs deepeval asynchronously")

        async def a_generate(self, prompt: str, schema: Any = None) -> Any:
            completion = await self.model.chat.completions.create(
                model=self.name, messages=[{"role": "user", "content": prompt}]
            )
            text = completion.choices[0].message.content or ""
            return schema.model_validate_json(text) if schema is not None else text

        def get_model_name(self) -> str:
            return str(self.name)

    def model() -> DeepEvalBaseLLM:
        if options.model == "local":
            return LocalModel(model="fake", base_url=options.base_url, api_key="no-key")
        return SharedClientModel("fake")

    started = time.process_time()
    simulator = ConversationSimulator(
        model_callback=agent_callback,
        simulator_model=model(),
        max_concurrent=options.concurrency,
    )
    goldens = [
        ConversationalGolden(
            scenario=f"{SCENARIO} (conversation {number})", user_description=PERSONA
        )
        for number in range(options.conversations)
    ]
    cases = simulator.simulate(goldens, max_user_simulations=options.exchanges)
    metric = ConversationalGEval(
        name="Order change",
        evaluation_steps=STEPS,
        evaluation_params=[TurnParams.CONTENT, TurnParams.ROLE],
        model=model(),
    )
    result = evaluate(
        cases,
        metrics=[metric],
        async_config=AsyncConfig(max_concurrent=options.concurrency),
        display_config=DisplayConfig(
            show_indicator=False, print_results=False, inspect_after_run=False
        ),
        cache_config=CacheConfig(write_cache=False),
    )
    scored = sum(
        1
        for test in result.test_results
        for data in test.metrics_data or ()
        if data.score is not None and data.error is None
    )
    figures = {
        "harness": "deepeval" if options.model == "custom" else "deepeval-localmodel",
        "cpu_s": time.process_time(),
        "cpu_s_from_first_request": time.process_time() - started,
        "conversations": len(cases),
        "turns": sum(len(case.turns) for case in cases),
        "scored": scored,
    }
    print(json.dumps(figures), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
