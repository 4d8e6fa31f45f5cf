"""The one-time speed measurement that sizes later LLM deadlines (advisor/backends/pace.py), by hand."""

from __future__ import annotations

from advisor.backends.pace import Pace


def test_nothing_measured_means_the_configured_limit() -> None:
    assert Pace().budget_s(8000, 256, limit_s=30, floor_s=5) == 30


def test_the_first_long_enough_reply_sets_the_pace_and_later_ones_do_not() -> None:
    pace = Pace()
    pace.record(prompt_chars=4000, first_piece_s=2.0, pieces=5, total_s=3.0)  # too short to measure
    assert not pace.measured
    pace.record(prompt_chars=4000, first_piece_s=2.0, pieces=41, total_s=4.0)
    assert pace.prompt_chars_per_s == 2000 and pace.pieces_per_s == 20  # 4000 / 2 s; 40 pieces in 2 s
    pace.record(prompt_chars=4000, first_piece_s=0.1, pieces=100, total_s=0.2)
    assert pace.pieces_per_s == 20


def test_the_budget_is_three_times_the_prediction_within_floor_and_limit() -> None:
    pace = Pace(prompt_chars_per_s=2000, pieces_per_s=20)
    # 6000 chars → 3 s of prefill; 100 pieces → 5 s of decode; 3 × 8 s = 24 s
    assert pace.budget_s(6000, 100, limit_s=30, floor_s=5) == 24
    assert pace.budget_s(6000, 256, limit_s=30, floor_s=5) == 30  # 3 × 15.8 s is over the limit
    assert pace.budget_s(200, 10, limit_s=30, floor_s=5) == 5  # 3 × 0.6 s is under the floor
