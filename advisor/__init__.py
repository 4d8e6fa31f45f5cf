"""GPU Advisor: conversation, LLM backends, web UI and CLI."""
