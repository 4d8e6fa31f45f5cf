"""The Gradio web UI: layout, pure renderers, calculators tab, API/MCP endpoints, UI labels (zh/en).

Importing it first installs the hook that spares Gradio's import its stub writer (see ``quick_import``).
"""

from advisor.ui.quick_import import skip_stub_writer

skip_stub_writer()
