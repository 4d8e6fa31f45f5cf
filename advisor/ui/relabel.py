"""A registry of components whose labels depend on the UI language, for the language switch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from advisor.ui.i18n import t

Update = Callable[[str], dict[str, Any]]


class Labels:
    """Collects ``(component, lang -> gr.update kwargs)`` pairs while the layout is built."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self._items: list[tuple[Any, Update]] = []

    def add(self, component: Any, update: Update) -> Any:
        self._items.append((component, update))
        return component

    def label(self, component: Any, key: str, placeholder: str | None = None, info: str | None = None) -> Any:
        """Relabel ``component`` with ``t(key)`` (plus an optional placeholder / info key)."""

        def upd(lang: str) -> dict[str, Any]:
            out: dict[str, Any] = {"label": t(key, lang)}
            if placeholder:
                out["placeholder"] = t(placeholder, lang)
            if info:
                out["info"] = t(info, lang)
            return out

        return self.add(component, upd)

    def text(self, component: Any, key: str, fmt: str = "{}") -> Any:
        """Components whose *value* is the label: buttons, Markdown headings."""
        return self.add(component, lambda lang: {"value": fmt.format(t(key, lang))})

    @property
    def components(self) -> list[Any]:
        return [c for c, _ in self._items]

    def updates(self, lang: str) -> list[Any]:
        import gradio as gr

        return [gr.update(**fn(lang)) for _, fn in self._items]
