"""Order line - a Pipecat voice bot that changes orders and books refunds.

Speech-to-Text -> LLM (with the CRM's functions) -> Text-to-Speech, the cascade
Pipecat's templates build. Run it with the development runner::

    python bot.py            # then open http://localhost:7860
"""

import os
from collections.abc import Callable

import crm
from dotenv import load_dotenv
from loguru import logger
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.frames.frames import LLMRunFrame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.runner.types import RunnerArguments
from pipecat.runner.utils import create_transport
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.services.openai.stt import OpenAISTTService
from pipecat.services.openai.tts import OpenAITTSService
from pipecat.transports.base_transport import BaseTransport, TransportParams
from pipecat.workers.runner import WorkerRunner

load_dotenv(override=True)

SYSTEM_PROMPT = """You are the phone agent of an online shop. You change the quantity or
delivery date of an order and book refunds, using your functions. Confirm a change only
after the CRM has answered, with the values it stored. Keep every answer short."""


def register_crm_functions(llm: OpenAILLMService) -> None:
    """The CRM's functions. A caller who corrects themselves interrupts the bot, and an
    interruption cancels a call still running (Pipecat's default), so no stale write lands."""
    llm.register_function("lookup_order", crm.lookup_order)
    llm.register_function("update_order", crm.update_order)
    llm.register_function("issue_refund", crm.issue_refund)


async def run_bot(
    transport: BaseTransport,
    runner_args: RunnerArguments,
    register_functions: Callable[[OpenAILLMService], None] = register_crm_functions,
) -> None:
    """Build the pipeline on `transport` and run it until the client leaves."""
    stt = OpenAISTTService(api_key=os.getenv("OPENAI_API_KEY"))
    tts = OpenAITTSService(api_key=os.getenv("OPENAI_API_KEY"))
    llm = OpenAILLMService(
        api_key=os.getenv("OPENAI_API_KEY"),
        settings=OpenAILLMService.Settings(
            model="gpt-4.1-mini", temperature=0.2, system_instruction=SYSTEM_PROMPT
        ),
    )
    register_functions(llm)

    context = LLMContext(tools=crm.tools)
    user_aggregator, assistant_aggregator = LLMContextAggregatorPair(
        context, user_params=LLMUserAggregatorParams(vad_analyzer=SileroVADAnalyzer())
    )
    pipeline = Pipeline(
        [
            transport.input(),
            stt,
            user_aggregator,
            llm,
            tts,
            transport.output(),
            assistant_aggregator,
        ]
    )
    worker = PipelineWorker(pipeline, params=PipelineParams(enable_metrics=True))

    @transport.event_handler("on_client_connected")
    async def on_client_connected(transport, client):
        logger.info("Client connected")
        context.add_message({"role": "developer", "content": "Greet the caller briefly."})
        await worker.queue_frames([LLMRunFrame()])

    @transport.event_handler("on_client_disconnected")
    async def on_client_disconnected(transport, client):
        logger.info("Client disconnected")
        await worker.cancel()

    runner = WorkerRunner(handle_sigint=runner_args.handle_sigint)
    await runner.add_workers(worker)
    await runner.run()


async def bot(runner_args: RunnerArguments):
    """Main bot entry point for the development runner."""
    transport_params = {
        "webrtc": lambda: TransportParams(audio_in_enabled=True, audio_out_enabled=True),
    }
    transport = await create_transport(runner_args, transport_params)
    await run_bot(transport, runner_args)


if __name__ == "__main__":
    from pipecat.runner.run import main

    main()
