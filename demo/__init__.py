"""The demo: a synthetic corpus with planted entailments (generator) and the main job (`sherliic-demo`)."""
