"""Annotation of inference candidates (paper §3): rendering, sampling, import/export, local web page."""
