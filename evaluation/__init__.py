"""Evaluation harness: claims x models x repeats, fault arms, grading and reports."""
