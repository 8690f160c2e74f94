"""Views of a stored run: report.json, transcripts.jsonl and the terminal."""

from typing import TYPE_CHECKING

from polygon_voice._lazy import lazy_exports

if TYPE_CHECKING:
    from polygon_voice.report.files import (
        REPORT_FILE,
        TRANSCRIPTS_FILE,
        case_entry,
        case_summary,
        write_report,
        write_run_files,
        write_transcripts,
    )
    from polygon_voice.report.run_list import run_header
else:
    # Each name's module is imported when the name is first read.
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "polygon_voice.report.files": (
                "REPORT_FILE",
                "TRANSCRIPTS_FILE",
                "case_entry",
                "case_summary",
                "write_report",
                "write_run_files",
                "write_transcripts",
            ),
            "polygon_voice.report.run_list": ("run_header",),
        },
    )

__all__ = [
    "REPORT_FILE",
    "TRANSCRIPTS_FILE",
    "case_entry",
    "case_summary",
    "run_header",
    "write_report",
    "write_run_files",
    "write_transcripts",
]
