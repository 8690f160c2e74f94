"""The order line bot with one planted flaw: its CRM writes never stop for the caller.

The CRM is slow, so this variant registers its writes as async function calls
(``cancel_on_interruption=False``): the bot keeps talking while the CRM works. The price:
an interruption no longer cancels a write that is running. A caller who corrects
themselves while ``update_order`` is under way gets the corrected order *and* the stale
one written; Polygon's three-layer suite names it ``inflight_call_not_cancelled``.
"""

import bot
import crm
from pipecat.runner.types import RunnerArguments
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.transports.base_transport import BaseTransport


def register_crm_functions(llm: OpenAILLMService) -> None:
    """The same functions; the writes run on while the conversation goes on."""
    llm.register_function("lookup_order", crm.lookup_order)
    llm.register_function("update_order", crm.update_order, cancel_on_interruption=False)
    llm.register_function("issue_refund", crm.issue_refund, cancel_on_interruption=False)


async def run_bot(transport: BaseTransport, runner_args: RunnerArguments) -> None:
    """The order line's pipeline, with the writes registered as above."""
    await bot.run_bot(transport, runner_args, register_functions=register_crm_functions)
