"""Views of a stored run: report.json, transcripts.jsonl and the terminal."""

from polygon_voice.report.files import (
    REPORT_FILE,
    TRANSCRIPTS_FILE,
    case_entry,
    case_summary,
    run_header,
    write_report,
    write_run_files,
    write_transcripts,
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
