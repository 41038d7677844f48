"""What the offline reader's confidence is worth, measured, and the floor below which its answers are flagged.

Measured with ``bench/trust.py`` on the development claim sets (``eval/dev_claims.yaml``, ``bench/claims/*.yaml``
and the real-model cells' claims; agentic and single-pass, 396 answered runs): the share of answers graded exact
per confidence bin. Re-measure and update the table when the reader's confidence changes.

    [0.00, 0.30)  33 %  (n=24)
    [0.30, 0.50)  70 %  (n=71)
    [0.50, 0.70)  94 %  (n=117)
    [0.70, 0.85)  96 %  (n=48)
    [0.85, 1.00] 100 %  (n=55)

Below 0.30 an answer is more often wrong than right, so that is the floor; between 0.30 and 0.50 seven answers in
ten are right, and flagging them would bury reviewers in false alarms.

On rows the reader had never been tuned on (``bench/claims/third_corpus_claims.yaml`` as first measured, both
engines, 240 answers) the bins read [0.30, 0.50) 78 % (n=32), [0.50, 0.70) 78 % (n=88), [0.70, 0.85) 100 % (n=54),
[0.85, 1.00] 97 % (n=66): below 0.70 about one answer in five is wrong, but a floor there would flag four right
answers for each wrong one, so wrong answers in that band are left to the rules that read the page. The sealed
``bench/claims/fourth_claims.yaml`` (agentic, 140 answers, as first measured) reads the same way: [0.30, 0.50)
81 % (n=21), [0.50, 0.70) 88 % (n=34), [0.70, 0.85) 91 % (n=43), [0.85, 1.00] 98 % (n=42).
"""

from __future__ import annotations

# (low, high, share of answers graded exact) per bin, from the measurement above.
CALIBRATION: tuple[tuple[float, float, float], ...] = (
    (0.0, 0.3, 0.33), (0.3, 0.5, 0.70), (0.5, 0.7, 0.94), (0.7, 0.85, 0.96), (0.85, 1.0, 1.0),
)
CONFIDENCE_FLOOR = 0.3


def expected_accuracy(confidence: float) -> float:
    """The measured share of exact answers at ``confidence``."""
    for low, high, share in CALIBRATION:
        if low <= confidence < high:
            return share
    return CALIBRATION[-1][2]
