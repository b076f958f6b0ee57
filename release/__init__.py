"""The release: `sherliic-export` writes a build's marts as files with their manifest (export.py) and the
verifier scores file (verifier_file.py). It reads marts and build records only."""
