"""Import Gradio without its stub writer.

On every import Gradio re-derives each component's ``.pyi`` stub from the component's source (an AST parse per
class: about a second of the web app's start on the 2-core machine, a third of Gradio's import) — stubs that
serve only editors. ``skip_stub_writer()`` installs a one-shot import hook that, as soon as
``gradio.component_meta`` has loaded, replaces that writer with a no-op. If a Gradio release renames it, the
hook changes nothing and Gradio imports as before.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from typing import Any

TARGET = "gradio.component_meta"
WRITER = "create_or_modify_pyi"


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return self.inner.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.inner.exec_module(module)
        if callable(getattr(module, WRITER, None)):
            setattr(module, WRITER, _no_stub)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name != TARGET:
            return None
        sys.meta_path.remove(self)  # one shot
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)
        return spec


def _no_stub(*_args: Any, **_kwargs: Any) -> None:
    return None


def skip_stub_writer() -> None:
    """Install the hook (before the first ``import gradio``; nothing happens when Gradio is already loaded)."""
    if TARGET in sys.modules or any(isinstance(f, _Finder) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _Finder())
