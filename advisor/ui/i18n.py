"""Every label the web UI shows, in Chinese and English, plus the example prompts.

``t(key, lang)`` looks a label up; an unknown key raises ``KeyError`` (a typo should fail a
test, not show a raw key to users). ``lang`` is ``"zh"`` or ``"en"``; anything else means English.
"""

from __future__ import annotations

from typing import Literal

Lang = Literal["zh", "en"]
LANGS: tuple[Lang, ...] = ("zh", "en")

# key: (中文, English)
LABELS: dict[str, tuple[str, str]] = {
    # page
    "title": ("算力GPU选购顾问", "GPU Advisor"),
    "subtitle": (
        "离线、双语的算力 GPU 选购与 AI 服务器规划助手：数字来自经过测试的计算工具，解释来自带出处的知识库。",
        "An offline, bilingual advisor for choosing compute GPUs and planning AI servers: numbers come "
        "from tested calculators, explanations from a cited knowledge base.",
    ),
    "language": ("界面语言", "Language"),
    "tab_chat": ("对话", "Chat"),
    "tab_calc": ("计算器", "Calculators"),
    "tab_settings": ("设置", "Settings"),
    # chat
    "chatbot": ("顾问对话", "Conversation"),
    "input": ("你的问题", "Your message"),
    "input_placeholder": (
        "例如：70B 模型 4bit 跑推理，两张 4090 够不够？（Enter 发送）",
        "e.g. Can I fine-tune Llama-3-8B with QLoRA on one RTX 4090? (Enter to send)",
    ),
    "send": ("发送", "Send"),
    "new_chat": ("新对话", "New conversation"),
    "examples": ("示例问题（点击即问）", "Example questions (click to ask)"),
    "thinking": ("正在计算…", "Working…"),
    "tool_running": ("运行中", "running"),
    "tool_failed": ("出错", "failed"),
    "tool_inputs": ("输入", "Inputs"),
    "tool_result": ("结果", "Result"),
    "tool_error": ("错误", "Error"),
    "citations": ("📚 引用的资料", "📚 Sources"),
    "notices": ("ℹ️ 提示", "ℹ️ Notes"),
    "question_next": ("下一个问题", "Next question"),
    "empty_message": ("请输入问题。", "Please type a question."),
    "engine_missing": (
        "对话引擎暂不可用；计算器标签页仍可使用。",
        "The conversation engine is not available; the Calculators tab still works.",
    ),
    "internal_error": (
        "这一轮出现内部错误（已记录），会话没有丢失，请换个说法重试。",
        "Something went wrong in this turn (logged); the conversation is kept — please try rephrasing.",
    ),
    # side panel
    "panel": ("当前方案", "Current plan"),
    "profile": ("需求画像（可修改）", "Requirement profile (editable)"),
    "profile_hint": (
        "修改精度、上下文等字段后点击“重新计算”，回答会按新条件重算。",
        "Change the precision, context or another field and press Recompute: the answer is redone.",
    ),
    "use_case": ("用途", "Use case"),
    "model": ("模型", "Model"),
    "params_b": ("参数量（十亿）", "Parameters (billions)"),
    "precision": ("精度 / 量化", "Precision / quantisation"),
    "context_tokens": ("上下文长度（tokens）", "Context length (tokens)"),
    "concurrency": ("并发数", "Concurrency"),
    "method": ("训练方法", "Training method"),
    "gpu": ("候选 GPU", "Candidate GPU"),
    "gpu_count": ("GPU 数量", "GPU count"),
    "budget": ("预算", "Budget"),
    "recompute": ("重新计算", "Recompute"),
    "unset": ("（未定）", "(not set)"),
    "memory_chart": ("显存构成（每卡）", "Memory breakdown (per GPU)"),
    "chart_empty": ("还没有显存估算：先描述你的需求。", "No memory estimate yet: describe what you want to run."),
    "comparison": ("候选配置对比", "Candidate configurations"),
    "comparison_details": ("每个方案的理由与被排除的选项", "Why each option, and what was ruled out"),
    "comparison_empty": ("还没有候选配置。", "No candidate configurations yet."),
    "checklist": ("兼容性检查", "Compatibility checklist"),
    "checklist_empty": ("还没有兼容性检查结果。", "No compatibility check yet."),
    "checklist_ok": ("没有发现阻断问题。", "No blocking problems found."),
    "export": ("导出方案（Markdown）", "Export report (Markdown)"),
    "export_empty": ("还没有可导出的方案。", "Nothing to export yet."),
    # chart segments
    "weights": ("权重", "Weights"),
    "kv_cache": ("KV 缓存", "KV cache"),
    "activations": ("激活", "Activations"),
    "gradients": ("梯度", "Gradients"),
    "optimizer": ("优化器状态", "Optimizer states"),
    "overhead": ("运行开销", "Overhead"),
    "capacity": ("可用显存", "Usable memory"),
    "need": ("需要", "Needed"),
    "fits": ("放得下", "fits"),
    "does_not_fit": ("放不下", "does not fit"),
    "headroom": ("余量", "headroom"),
    "short_by": ("缺口", "short by"),
    # comparison columns
    "col_config": ("配置", "Configuration"),
    "col_fit": ("显存是否够", "Memory fit"),
    "col_mem": ("每卡 需要/可用 (GB)", "Per GPU need / usable (GB)"),
    "col_train_tps": ("训练 tokens/s", "Training tokens/s"),
    "col_tps": ("预估 tokens/s", "Est. tokens/s"),
    "col_fp64": ("FP64 TFLOPS", "FP64 TFLOPS"),
    "col_power": ("功耗 (W)", "Power (W)"),
    "col_price": ("价格 (USD)", "Price (USD)"),
    "col_ppp": ("每千美元 tokens/s", "tokens/s per $1k"),
    "col_ppp_fp64": ("每千美元 FP64 TFLOPS", "FP64 TFLOPS per $1k"),
    "col_fp32": ("FP32 TFLOPS", "FP32 TFLOPS"),
    "col_ppp_fp32": ("每千美元 FP32 TFLOPS", "FP32 TFLOPS per $1k"),
    "rejected": ("已排除", "Ruled out"),
    "yes": ("是", "yes"),
    "no": ("否", "no"),
    # checklist
    "error": ("错误", "error"),
    "warning": ("警告", "warning"),
    "info": ("提示", "info"),
    "fix": ("建议", "fix"),
    # calculators
    "calc_intro": (
        "不想聊天、只要一个数？这里直接调用与对话相同的计算工具。",
        "Just want a number? These call the same tools as the chat, without the conversation.",
    ),
    "calc_memory": ("显存估算", "Memory sizing"),
    "calc_perf": ("吞吐估算", "Throughput"),
    "calc_check": ("整机兼容性检查", "Build check"),
    "calc_run": ("计算", "Calculate"),
    "calc_workload": ("负载", "Workload"),
    "calc_engine": ("推理引擎", "Inference engine"),
    "calc_batch": ("并发序列数", "Concurrent sequences"),
    "calc_gpus": ("GPU 数量", "Number of GPUs"),
    "calc_method": ("训练方法", "Training method"),
    "calc_seq": ("训练序列长度", "Training sequence length"),
    "calc_platform": ("CPU 平台（可选）", "CPU platform (optional)"),
    "calc_psu": ("电源功率 W（可选）", "PSU watts (optional)"),
    "calc_chassis": ("机箱", "Chassis"),
    "calc_mains": ("市电回路（可选）", "Wall circuit (optional)"),
    "calc_framework": ("框架（可选）", "Framework (optional)"),
    "calc_serving": ("同时估算 vLLM 连续批处理吞吐", "Also estimate vLLM continuous-batching throughput"),
    "calc_cuda": ("代码依赖 CUDA", "Code depends on CUDA"),
    "calc_model_opt": ("模型（可选，用于显存检查）", "Model (optional, for the memory check)"),
    "calc_result": ("结果", "Result"),
    "calc_details": ("公式、假设与原始数据", "Formulas, assumptions and raw data"),
    "calc_need_model": ("请选择一个模型。", "Pick a model."),
    "calc_need_gpu": ("请选择一个 GPU。", "Pick a GPU."),
    # settings
    "settings_backend": ("语言模型后端", "LLM backend"),
    "backend_none": ("无（确定性模板，离线）", "None (deterministic templates, offline)"),
    "backend_llama": ("llama.cpp 本地模型", "llama.cpp local model"),
    "backend_openai": ("OpenAI 兼容服务", "OpenAI-compatible server"),
    "llama_path": ("GGUF 模型路径（服务器本地）", "GGUF model path (on the server)"),
    "openai_url": ("服务地址（Base URL）", "Base URL"),
    "openai_model": ("模型名", "Model name"),
    "openai_key": ("API Key（只在本会话内存中使用，不会保存或显示）", "API key (kept in this session's memory only)"),
    "apply": ("应用", "Apply"),
    "status": ("当前状态", "Status"),
    "active_backend": ("当前后端", "Active backend"),
    "settings_locked": (
        "此服务器的管理员锁定了后端设置（GPU_ADVISOR_LOCK_SETTINGS）。",
        "The server administrator has locked the backend settings (GPU_ADVISOR_LOCK_SETTINGS).",
    ),
    "settings_failed": ("无法启用该后端，仍在使用：", "Could not enable that backend; still using:"),
    "settings_applied": ("已启用：", "Now active:"),
    "llm_note": (
        "语言模型只负责措辞；所有数字都由计算工具给出，并逐条核对。",
        "The LLM only words the answer; every number comes from the tools and is checked.",
    ),
    "session_export": ("导出会话（JSON，可稍后恢复）", "Export session (JSON, to resume later)"),
    "session_import": ("恢复会话（上传 JSON）", "Resume a session (upload JSON)"),
    "session_bad": ("会话文件无法使用：", "The session file cannot be used:"),
    "session_resumed": ("已恢复会话。", "Session resumed."),
}

# Display names of the engine's tools, for the collapsible steps ("🔧 显存估算 …").
TOOL_NAMES: dict[str, tuple[str, str]] = {
    "size": ("显存估算", "Memory sizing"),
    "size_inference": ("显存估算", "Memory sizing"),
    "inference_memory": ("显存估算", "Memory sizing"),
    "estimate_inference_memory": ("显存估算", "Memory sizing"),
    "size_training": ("训练显存估算", "Training memory"),
    "training_memory": ("训练显存估算", "Training memory"),
    "estimate_training_memory": ("训练显存估算", "Training memory"),
    "perf": ("速度估算", "Speed estimate"),
    "decode": ("解码速度估算", "Decode speed"),
    "estimate_decode": ("解码速度估算", "Decode speed"),
    "serving": ("并发吞吐估算", "Serving throughput"),
    "training_time": ("训练时间估算", "Training time"),
    "fp64": ("FP64 计算估算", "FP64 estimate"),
    "scientific": ("FP64 计算估算", "FP64 estimate"),
    "check": ("兼容性检查", "Compatibility check"),
    "check_build": ("兼容性检查", "Compatibility check"),
    "compat": ("兼容性检查", "Compatibility check"),
    "recommend": ("选型推荐", "Recommendation"),
    "search": ("资料检索", "Knowledge search"),
    "knowledge_search": ("资料检索", "Knowledge search"),
    "compare": ("配置对比", "Comparison"),
    "lookup": ("目录查询", "Catalog lookup"),
    "gpu_info": ("GPU 参数查询", "GPU lookup"),
}

USE_CASES: dict[str, tuple[str, str]] = {
    "training": ("训练 / 微调", "Training / fine-tuning"),
    "inference": ("推理服务", "Inference serving"),
    "scientific": ("科学计算", "Scientific computing"),
}

METHODS: dict[str, tuple[str, str]] = {
    "full": ("全参数", "Full"),
    "lora": ("LoRA", "LoRA"),
    "qlora": ("QLoRA", "QLoRA"),
    "pretrain": ("预训练", "Pre-training"),
}

EXAMPLES: dict[Lang, tuple[str, ...]] = {
    "zh": (
        "我想本地部署 Qwen2.5-72B 做推理，预算 10 万，买什么卡？",
        "70b 模型 4bit 跑推理 两张4090够不够",
        "用 QLoRA 微调 Qwen2.5-7B，一张 RTX 3090 够吗？",
    ),
    "en": (
        "Can I fine-tune Llama-3-8B with QLoRA on one RTX 4090?",
        "Serve Llama-3.1-70B to 20 users at 8k context — which GPUs?",
        "FP64 simulation needing 40 GB of memory, budget $30k",
    ),
}


def norm_lang(lang: object) -> Lang:
    """'zh', 'zh-CN', 'zh_TW' → 'zh'; everything else → 'en'."""
    return "zh" if isinstance(lang, str) and lang.strip().lower().startswith("zh") else "en"


def t(key: str, lang: object) -> str:
    """The label ``key`` in ``lang``."""
    zh, en = LABELS[key]
    return zh if norm_lang(lang) == "zh" else en


def pick(pair: tuple[str, str], lang: object) -> str:
    """Choose from a (中文, English) pair."""
    return pair[0] if norm_lang(lang) == "zh" else pair[1]


def tool_label(name: str, lang: object) -> str:
    """Display name of a tool, falling back to its identifier."""
    pair = TOOL_NAMES.get(name)
    return pick(pair, lang) if pair else name
