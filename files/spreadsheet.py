"""Text cells a spreadsheet shows instead of evaluating: the files this project writes for people (the
export's TSV files, annotation sheets) prefix a cell that a spreadsheet would read as a formula with an
apostrophe (CSV injection, OWASP); the readers of those files undo it."""

from __future__ import annotations

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(text: str) -> str:
    """``text`` with a leading apostrophe if a spreadsheet would read it as a formula (a cell
    beginning with = + - @, a tab or a carriage return is a formula to Excel, LibreOffice and Sheets)."""
    return "'" + text if text.startswith(FORMULA_START) else text


def spreadsheet_unsafe(text: str) -> str:
    """The inverse of :func:`spreadsheet_safe`, for readers of the files this project writes."""
    return text[1:] if text.startswith("'") and text[1:].startswith(FORMULA_START) else text


def sql_spreadsheet_safe(column: str) -> str:
    """spreadsheet_safe in SQL both engines share (chr(39) is the apostrophe, chr(9) tab, chr(13) CR)."""
    return (
        f"case when substr({column}, 1, 1) in ('=', '+', '-', '@', chr(9), chr(13)) "
        f"then concat(chr(39), {column}) else {column} end"
    )
