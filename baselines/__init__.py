"""Baselines of SherLIiC (paper §4, Table 3) and entailment-graph scores, read from the warehouse marts."""
