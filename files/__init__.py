"""Reading and writing the project's text files: strict line, CSV and JSON reading with errors that name
file and line (reading.py), and spreadsheet-safe text cells (spreadsheet.py)."""
