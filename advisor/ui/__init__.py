"""The Gradio web UI: layout, pure renderers, calculators tab, API/MCP endpoints, UI labels (zh/en)."""
