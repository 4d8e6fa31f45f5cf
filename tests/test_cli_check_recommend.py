"""`gpu-advisor check` and `gpu-advisor recommend`: the JSON contract, text output, errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from advisor.cli import main

CJK = re.compile(r"[\u4e00-\u9fff]")


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_check_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "check", "--gpu", "4090", "--count", "4", "--cpu", "Ryzen 9 9950X", "--psu-w", "1200",
                    "--chassis", "tower", "--mains", "120v-15a", "--workload", "training")
    assert data["ok"] is False
    for f in data["findings"]:
        assert {"id", "category", "severity", "message", "fix", "numbers"} <= set(f)
        assert f["message"]["id"].startswith("compat.") and f["message"]["text"]
        assert f["category"] in {"power", "pcie", "physical", "cooling", "display", "interconnect", "precision",
                                 "software", "memory", "platform"}
    errors = {f["id"] for f in data["findings"] if f["severity"] == "error"}
    assert {"power-psu-headroom", "power-wall-circuit", "slots-width-count"} <= errors
    assert data["totals"]["system_power_w"] == 4 * 450 + 230 + 150


def test_check_gpu_mix_two_syntaxes(capsys: pytest.CaptureFixture[str]) -> None:
    a = run_json(capsys, "check", "--gpu", "4090", "--count", "2", "--gpu", "3090", "--count", "1")
    b = run_json(capsys, "check", "--gpu", "4090x2", "--gpu", "3090")
    assert a["totals"]["gpu_count"] == b["totals"]["gpu_count"] == 3
    assert "mixed-gpu-types" in {f["id"] for f in a["findings"]}
    assert a["findings"] == b["findings"]


def test_check_model_fit_and_mains_spelling(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "check", "--gpu", "RTX 4090", "--workload", "inference", "--model", "llama3.1:70b",
                    "--precision", "int4", "--mains", "230V 16A")
    fit = next(f for f in data["findings"] if f["id"] == "memory-fit")
    assert fit["severity"] == "error" and fit["numbers"]["per_gpu_bytes"] > 24e9
    assert data["totals"]["continuous_limit_w"] == 230 * 16 * 0.8


def test_check_text_in_both_languages(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--gpu", "L40S", "--chassis", "tower", "--lang", "en"]) == 0
    en = capsys.readouterr().out
    assert "[ERROR] L40S 48GB has no fan" in en and "→" in en and "Build has 1 error" in en
    assert main(["check", "--gpu", "L40S", "--chassis", "tower", "--lang", "zh"]) == 0
    zh = capsys.readouterr().out
    assert "[错误] L40S 48GB 没有风扇" in zh and "被动散热" in zh and "配置有 1 个错误" in zh
    for out in (en, zh):  # rule ids are for --json, not for people
        assert "cooling-passive-in-tower" not in out and "power-psu-headroom" not in out


def test_check_text_totals_match_the_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", "--gpu", "4090", "--count", "4", "--chassis", "tower"]
    t = run_json(capsys, *argv)["totals"]
    assert main([*argv, "--lang", "zh"]) == 0
    zh = capsys.readouterr().out
    assert f"= {t['system_power_w']:,.0f} W" in zh and f"建议电源 ≥ {t['recommended_psu_w']:,.0f} W" in zh
    assert "[警告]" in zh and "power-multi-psu" not in zh and "WARN" not in zh


def test_check_count_without_gpu_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["check", "--count", "2", "--gpu", "4090"])
    assert exc.value.code == 2


def test_check_unknown_gpu_exits_2_with_suggestions() -> None:
    out = subprocess.run([sys.executable, "-m", "advisor", "check", "--gpu", "RTX 4099"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 2 and "did you mean" in out.stderr and "Traceback" not in out.stderr


def test_check_bad_mains_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--gpu", "4090", "--mains", "the wall"]) == 2
    err = capsys.readouterr().err
    assert "120v-15a" in err and len(err.strip().splitlines()) == 1


def test_recommend_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "recommend", "--workload", "inference", "--model", "Llama-3.1-70B", "--precision", "int4",
                    "--budget-usd", "10000")
    assert data["options"]
    for o in data["options"]:
        assert {"gpu", "count", "fits", "per_gpu_bytes", "price_usd", "decode_tokens_per_s", "fp64_tflops", "score",
                "why", "findings"} <= set(o)
        # None: a card with no catalog price, kept after the priced ones
        assert o["fits"] is True and (o["total_price_usd"] is None or o["total_price_usd"] <= 10_000)
    for r in data["rejected"]:
        assert {"gpu", "count", "reason"} <= set(r)
    assert any(r["gpu_id"] == "rtx-4090" and r["count"] == 1 and "does not fit" in r["reason"]
               for r in data["rejected"])


def test_recommend_scientific_json_has_fp64(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "recommend", "--workload", "scientific", "--matrix-n", "60000", "--lang", "zh")
    top = data["options"][0]
    assert top["fp64_tflops"] and top["fp64_tflops"] > 19 and CJK.search(top["why"])


def test_recommend_domestic_text_in_chinese(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recommend", "--workload", "inference", "--model", "Qwen2.5-72B", "--precision", "int8",
                 "--domestic", "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert "推荐配置" in out and "软件栈" in out and "排除的配置" in out


def test_recommend_text_in_the_budget_currency_without_raw_values(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["recommend", "--workload", "inference", "--model", "Qwen2.5-72B", "--budget-cny", "400000"]
    data = run_json(capsys, *argv)
    assert main([*argv, "--lang", "zh"]) == 0
    zh = capsys.readouterr().out
    top = data["options"][0]
    row = next(line for line in zh.splitlines() if line.strip().startswith("1. "))
    assert f"¥{top['total_price_cny']:,.0f}" in row and "$" not in row
    assert f"{top['per_gpu_bytes'] / 1e9:.1f} / " in row
    for raw in ("score", "consumer", "workstation", "datacenter", "tok/s", "per sequence"):
        assert raw not in zh
    argv = ["recommend", "--workload", "training", "--model", "llama-3.1-8b", "--method", "qlora",
            "--budget-usd", "3000"]
    data = run_json(capsys, *argv)
    assert main([*argv, "--lang", "en"]) == 0
    en = capsys.readouterr().out
    assert f"${data['options'][0]['total_price_usd']:,.0f}" in en and "¥" not in en and not CJK.search(en)
    assert "training tokens/s" in en


def test_recommend_budgets_are_exclusive() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["recommend", "--workload", "scientific", "--budget-usd", "1", "--budget-cny", "7"])
    assert exc.value.code == 2


def test_recommend_inference_without_model_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recommend", "--workload", "inference"]) == 2
    assert "needs a model" in capsys.readouterr().err
