"""Detectors: rules over the dispatch record, grounding of quoted values in the PDF, plausibility, failure
attribution and document hazards. Pure functions of a run record and a datasheet index; nothing here touches the
database."""
