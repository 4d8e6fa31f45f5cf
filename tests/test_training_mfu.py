"""Training utilisation from published end-to-end runs (issue 36: training time was 19–51 % short on benchmark MFU).

Independent references, written out by hand:
- LLaMA-65B: 6 × 65.2e9 × 1.4e12 FLOPs in 1,022,362 A100-80GB hours at 312 dense BF16 TFLOPS is
  5.477e23 / (1,022,362 × 3600 × 312e12) = 0.477 MFU (arXiv 2302.13971, table 15).
- Llama 3 405B's steady-state MFU on 8–16k H100 was 38–43 % (arXiv 2407.21783, table 4, not in the fit); a whole
  run (restarts, stalls, evaluation) reaches less, so the end-to-end default on H100 lies below 0.38.
- Each publisher's runs are predicted from the other publishers' (leave one family out): the issue's targets are a
  median error ≤ 20 % and ≥ 80 % of published GPU-hours inside the stated range.
"""

from __future__ import annotations

import statistics

import pytest

from knowledge import load_catalog
from knowledge.measurements import load_training_runs
from tools.efficiency import run_mfu, training_mfu
from tools.training_time import TrainingTimeInput, estimate_training_time

CAT = load_catalog()
A100, H100 = CAT.gpu("a100-sxm-80gb"), CAT.gpu("h100-sxm")
RUNS = [r for r in load_training_runs() if r.use]


def test_a_runs_mfu_is_six_n_d_over_its_gpu_hours_at_the_bf16_peak() -> None:
    run = next(r for r in RUNS if r.id == "llama1-65b")
    assert run_mfu(run) == pytest.approx(6 * 65.2e9 * 1.4e12 / (1_022_362 * 3600 * 312e12), rel=1e-9)
    assert run_mfu(run) == pytest.approx(0.477, abs=0.001)


def _loso() -> list[tuple[float, bool]]:
    """(GPU-hours error, published inside the stated range) for every run, its publisher left out of the fit."""
    out = []
    for run in RUNS:
        gpu = CAT.gpu(run.gpu)
        fit = training_mfu(gpu, leave_out=run.family)
        r = estimate_training_time(TrainingTimeInput(params=run.params, tokens=run.tokens, gpu=gpu, mfu=fit.mfu))
        low_h, high_h = r.gpu_hours * fit.mfu / fit.high, r.gpu_hours * fit.mfu / fit.low
        out.append((r.gpu_hours / run.gpu_hours - 1, low_h <= run.gpu_hours <= high_h))
    return out


def test_each_publishers_runs_are_predicted_from_the_others_within_the_issue_targets() -> None:
    results = _loso()
    assert len(RUNS) >= 20 and len({r.family for r in RUNS}) >= 8
    assert statistics.median(abs(e) for e, _ in results) <= 0.20
    assert sum(inside for _, inside in results) / len(results) >= 0.80


def test_the_end_to_end_default_on_h100_is_below_llama3s_steady_state_mfu() -> None:
    r = estimate_training_time(TrainingTimeInput(params=405e9, tokens=15e12, gpu=H100, count=16384))
    assert r.mfu < 0.38
    # the Llama 3.1 card's whole 405B run: 30.84 M H100 hours for ~15 T tokens, inside the stated range
    lo, hi = (h * 16384 for h in r.hours_range)
    assert lo <= 30.84e6 <= hi


def test_faster_gpus_reach_a_smaller_share_of_their_peak() -> None:
    assert training_mfu(H100).mfu < training_mfu(A100).mfu


def test_the_time_range_follows_the_band_of_the_runs() -> None:
    r = estimate_training_time(TrainingTimeInput(params=7e9, tokens=1e12, gpu=A100, count=8))
    fast, slow = r.hours_range
    assert fast < r.hours < slow
    assert slow / fast == pytest.approx(r.mfu_range[1] / r.mfu_range[0])


def test_a_given_mfu_is_used_as_is_with_a_plus_minus_20_percent_range() -> None:
    r = estimate_training_time(TrainingTimeInput(params=7e9, tokens=1e12, gpu=A100, count=8, mfu=0.3))
    assert r.mfu == 0.3 and r.mfu_range == pytest.approx((0.24, 0.36))
    assert r.assumptions[0].id == "perf.train_time.mfu_given"


def test_every_run_left_out_of_the_fit_says_why_and_every_gpu_is_in_the_catalog() -> None:
    for run in load_training_runs():
        CAT.gpu(run.gpu)
        assert run.use or run.why_not
