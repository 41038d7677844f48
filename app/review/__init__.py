"""Review: detector rules, source grounding, attribution, flags and human decisions."""
