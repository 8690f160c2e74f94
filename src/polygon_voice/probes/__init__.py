"""Behaviour probes (PROBE-1..6): yes/no questions about one behaviour, in their own pass.

Probes run after the judge and read only the conversation, so they can never change the
composite or the verdict; their compliance carries a Wilson 95 % interval, and a trend only
joins answers to the same wording (see docs/probes.md).
"""

from typing import TYPE_CHECKING

from polygon_voice._lazy import lazy_exports

if TYPE_CHECKING:
    from polygon_voice.probes.definition import Probe, ProbeError, load_probes, wording_hash
    from polygon_voice.probes.deterministic import BUILTIN_PROBES, RULES, ProbeInput
    from polygon_voice.probes.promote import Promotion, PromotionError, to_criterion, to_gate
    from polygon_voice.probes.run import Probing, probe_stage
    from polygon_voice.probes.stats import Compliance, tally, wilson_interval
    from polygon_voice.probes.summary import STAGE, report_rows, run_compliance, trend
else:
    # Each name's module is imported when the name is first read.
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "polygon_voice.probes.definition": (
                "Probe",
                "ProbeError",
                "load_probes",
                "wording_hash",
            ),
            "polygon_voice.probes.deterministic": ("BUILTIN_PROBES", "RULES", "ProbeInput"),
            "polygon_voice.probes.promote": (
                "Promotion",
                "PromotionError",
                "to_criterion",
                "to_gate",
            ),
            "polygon_voice.probes.run": ("Probing", "probe_stage"),
            "polygon_voice.probes.stats": ("Compliance", "tally", "wilson_interval"),
            "polygon_voice.probes.summary": ("STAGE", "report_rows", "run_compliance", "trend"),
        },
    )

__all__ = [
    "BUILTIN_PROBES",
    "RULES",
    "STAGE",
    "Compliance",
    "Probe",
    "ProbeError",
    "ProbeInput",
    "Probing",
    "Promotion",
    "PromotionError",
    "load_probes",
    "probe_stage",
    "report_rows",
    "run_compliance",
    "tally",
    "to_criterion",
    "to_gate",
    "trend",
    "wilson_interval",
    "wording_hash",
]
