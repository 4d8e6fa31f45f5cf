"""The Gradio Blocks of the web UI: chat + side panel, calculators tab, settings tab, API endpoints.

``build_blocks()`` returns the app; ``launch_options()`` the keyword arguments ``launch`` needs for
the look (theme, CSS — Gradio 6 takes them at launch). All conversation state is per browser tab
(``gr.State`` holding a :class:`~advisor.ui.state.UIState`); nothing is shared between users
except the read-only engines, catalog and knowledge index.
"""

from __future__ import annotations

import hashlib
import html
import json
import logging
import os
import queue
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from advisor import fmt
from advisor.engine import Advisor
from advisor.session import Session, SessionError, problem_text
from advisor.settings import Settings
from advisor.ui import api, calculators, feedback, profile, render
from advisor.ui.chart import Sizing, memory_chart_svg, sizing_of
from advisor.ui.expiry import limits
from advisor.ui.i18n import EXAMPLES, LANGS, METHODS, USE_CASES, label, norm_lang, t, ui_text
from advisor.ui.parking import Parking
from advisor.ui.relabel import Labels
from advisor.ui.state import DEFAULT_KEY, PROXY_HEADERS, AdvisorPool, UIState, forwarded, ui_settings

log = logging.getLogger(__name__)

STREAM_INTERVAL_S = 0.08
MAX_UPLOAD_BYTES = 2_000_000
DOWNLOAD_MAX_AGE_S = 24 * 3600

LANG_JS = """
(lang) => {
  const q = new URLSearchParams(window.location.search).get("lang");
  const l = (q || navigator.language || lang || "zh").toLowerCase().startsWith("zh") ? "zh" : "en";
  document.documentElement.lang = l === "zh" ? "zh-CN" : "en";
  if (window.innerWidth > 700) {  // a desk: ready to type; a phone: no keyboard and no jump on load
    setTimeout(() => document.querySelector("#msg textarea")?.focus({preventScroll: true}), 300);
  }
  return l;
}
"""
# Enter / Send: the box is emptied in the browser at once (a character typed a moment later stays); the page
# keeps its last sends numbered and hands them all over each time, so none is lost or reordered when several
# are sent before the server has taken the first
TAKE_JS = """
(text) => {
  const sent = (window.__advisorSent = window.__advisorSent || []);
  window.__advisorSeq = (window.__advisorSeq || 0) + 1;
  sent.push([window.__advisorSeq, text || ""]);
  while (sent.length > 20) sent.shift();
  return [JSON.stringify(sent), ""];
}
"""
# the page's lang attribute follows the UI language (screen readers, fonts, hyphenation)
SET_LANG_JS = '(l) => { document.documentElement.lang = l === "zh" ? "zh-CN" : "en"; }'
CSS = (Path(__file__).parent / "style.css").read_text(encoding="utf-8")
PAGE_CSS = (Path(__file__).parent / "page.css").read_text(encoding="utf-8")
PAGE_JS = (Path(__file__).parent / "page.js").read_text(encoding="utf-8")
# Gradio's own words on the page (in English, or in its zh-CN translation when the browser is Chinese): page.js
# says them in the page's language instead, with the words of ``ui.gradio_*``
GRADIO_WORDS = {
    "gradio_warning": ("Warning", "警告"),
    "gradio_info": ("Info", "信息"),
    "gradio_error": ("Error", "错误"),
    "gradio_copy_all": ("Copy conversation",),
    "gradio_clear": ("Clear", "清空对话"),
    "gradio_copy": ("Copy", "复制", "Copy message"),
    "gradio_copied": ("Copied", "Copied!", "已复制"),
    "gradio_scroll": ("Scroll down",),
    "gradio_retry": ("Retry", "重试"),
    "gradio_edit": ("Edit", "编辑"),
    "gradio_like": ("Like", "赞"),
    "gradio_dislike": ("Dislike", "踩"),
}

PRECISION_CHOICES = list(calculators.PRECISIONS)


def launch_options() -> dict[str, Any]:
    """Theme and CSS for ``Blocks.launch`` (local fonts only, with CJK fallbacks; no network assets)."""
    font: list[gr.themes.Font | str] = [
        # regular and bold are the package's full fonts (its semibold file is a tiny subset: bold Latin
        # letters came out as small caps); semibold text takes the bold face
        gr.themes.LocalFont("Source Sans Pro", weights=(400, 700)),
        "Noto Sans CJK SC",
        "Noto Sans SC",
        "PingFang SC",
        "Microsoft YaHei",
        "ui-sans-serif",
        "system-ui",
        "sans-serif",
    ]
    head = f"<style>{PAGE_CSS}</style><script>window.__advisorWords = {page_words()};\n{PAGE_JS}</script>"
    # every text at least 4.5:1 against its background (WCAG AA): the default theme's grey secondary text
    # (1.9:1), orange tab label (2.8:1) and white on orange buttons (2.8–3.6:1) fell short
    theme = gr.themes.Default(font=font).set(
        body_text_color_subdued="#5f5f6b",
        color_accent="*primary_700",
        button_primary_background_fill="*primary_700",
        button_primary_background_fill_hover="*primary_800",
        button_primary_background_fill_dark="*primary_700",
        button_primary_text_color="white",
        button_cancel_background_fill="#b91c1c",  # Stop: white on red-700 (red-500 was 3.8:1)
        button_cancel_background_fill_hover="#991b1b",
        button_cancel_text_color="white",
        block_label_text_size="*text_md",  # the panel's field names: 11 px was too small to read
        block_title_text_size="*text_md",
    )
    return {"theme": theme, "css": CSS, "head": head}


def page_words() -> str:
    """The words page.js puts in place of Gradio's own (JSON): each language's, and every known spelling → key."""
    ours = {code: {key: t(key, code) for key in GRADIO_WORDS} for code in LANGS}
    known = {spelling: key for key, spellings in GRADIO_WORDS.items() for spelling in spellings}
    known.update({word: key for words in ours.values() for key, word in words.items()})
    return json.dumps({"words": ours, "known": known}, ensure_ascii=False).replace("</", "<\\/")


def default_ui_lang() -> str:
    return norm_lang(os.environ.get("GPU_ADVISOR_LANG") or "zh")


# ------------------------------------------------------------------------------ choices


def use_case_choices(lang: str) -> list[tuple[str, str]]:
    return [(label("use_case", k, lang), k) for k in USE_CASES]


def method_choices(lang: str) -> list[tuple[str, str]]:
    return [(label("method", k, lang), k) for k in METHODS]


def language_choices() -> list[tuple[str, str]]:
    """Each language by its own name ("中文", "English")."""
    return [(t("language_name", code), code) for code in LANGS]


# ------------------------------------------------------------------------------ downloads


class Downloads:
    """Report and session files offered for download, one folder per conversation, pruned after a day."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or Path(tempfile.mkdtemp(prefix="gpu-advisor-ui-"))

    def write(self, session: Session, report: str) -> tuple[str, str]:
        """Write the report and the session file; the folder's name is a digest of the session id, so nothing
        a user uploads ever becomes part of a path."""
        self._prune()
        folder = self.root / hashlib.sha256(session.id.encode("utf-8", "replace")).hexdigest()[:32]
        folder.mkdir(exist_ok=True)
        rep = folder / "gpu-advisor-report.md"
        rep.write_text(report, encoding="utf-8")
        ses = folder / "gpu-advisor-session.json"
        ses.write_text(session.to_json(), encoding="utf-8")
        return str(rep), str(ses)

    def _prune(self) -> None:
        cutoff = time.time() - DOWNLOAD_MAX_AGE_S
        try:
            for entry in os.scandir(self.root):
                if entry.is_dir() and entry.stat().st_mtime < cutoff:
                    for f in os.scandir(entry.path):
                        os.unlink(f.path)
                    os.rmdir(entry.path)
        except OSError:
            log.debug("pruning downloads failed", exc_info=True)


# ------------------------------------------------------------------------------ the app


def build_blocks(
    pool: AdvisorPool | None = None, *, lock_settings: bool = False, downloads: Downloads | None = None
) -> gr.Blocks:
    """The whole web UI. ``lock_settings`` makes the LLM backend read-only (shared deployments)."""
    pool = pool or AdvisorPool(Advisor.from_settings)
    downloads = downloads or Downloads()
    parking = Parking(max_age_s=limits().idle_s)  # conversations the sweeper took out of memory
    chat_limit = chat_concurrency(pool.default())
    lang0 = default_ui_lang()
    labels = Labels(lang0)

    blocks = gr.Blocks(
        title=" · ".join(t("title", code) for code in reversed(LANGS)),
        analytics_enabled=False,
        delete_cache=(3600, DOWNLOAD_MAX_AGE_S),
    )
    with blocks as demo:
        state = gr.State(None)
        with gr.Row(equal_height=True):
            with gr.Column(scale=5):
                header = gr.HTML(_header_html(lang0), elem_id="app-title")
                labels.add(header, lambda lg: {"value": _header_html(lg)})
            with gr.Column(scale=1, min_width=240):
                lang_box = labels.label(
                    gr.Radio(language_choices(), value=lang0, label=t("language", lang0), elem_id="lang"),
                    "language",
                )

        with gr.Tabs():
            with gr.Tab(t("tab_chat", lang0), id="chat") as tab_chat:
                labels.label(tab_chat, "tab_chat")
                with gr.Row():
                    with gr.Column(scale=3, min_width=420):
                        # who writes the replies, in sight above the chat
                        badge = gr.Markdown(_badge_md(pool.default(), lang0), elem_id="backend-badge")
                        chatbot = labels.label(
                            gr.Chatbot(
                                label=t("chatbot", lang0),
                                height="var(--chat-h, 640px)",  # page.js fits it to the window
                                elem_id="chatbot",
                                sanitize_html=True,
                                allow_tags=False,
                                render_markdown=True,
                                latex_delimiters=[],
                                feedback_options=("Like", "Dislike"),  # on_like keeps them (feedback.py)
                                editable="user",  # a question can be edited and asked again (on_edit)
                                buttons=["copy", "copy_all"],  # each message, and the whole conversation
                                group_consecutive_messages=True,
                                autoscroll=False,  # page.js pins a new question with its answer below
                            ),
                            "chatbot",
                        )
                        with gr.Row(elem_id="input-row"):
                            msg = labels.label(
                                gr.Textbox(
                                    label=t("input", lang0),
                                    placeholder=t("input_placeholder", lang0),
                                    lines=1,
                                    max_lines=6,
                                    scale=6,
                                    elem_id="msg",
                                ),
                                "input",
                                placeholder="input_placeholder",
                            )
                            send = labels.text(
                                gr.Button(t("send", lang0), variant="primary", scale=1, min_width=80, elem_id="send"),
                                "send",
                            )
                            outbox = gr.Textbox(visible=False, elem_id="outbox")  # carries a sent message
                            stop = labels.text(
                                gr.Button(t("stop", lang0), variant="stop", scale=1, min_width=80, visible=False,
                                          elem_id="stop"),
                                "stop",
                            )
                        with gr.Row():  # under the box, in sight: starting over and exporting
                            new_chat = labels.text(
                                gr.Button(t("new_chat", lang0), size="sm", elem_id="new-chat"), "new_chat"
                            )
                            dl_report = labels.label(
                                gr.DownloadButton(t("export", lang0), value=None, size="sm", elem_id="export-report"),
                                "export",
                            )
                        labels.text(gr.Markdown(f"**{t('examples', lang0)}**"), "examples", "**{}**")
                        ex_buttons: list[tuple[Any, str]] = []
                        with gr.Row(elem_id="examples"):  # the page's language's examples only
                            for code in LANGS:
                                for i, text in enumerate(EXAMPLES[code]):
                                    b = labels.add(
                                        gr.Button(text, size="sm", variant="secondary", visible=code == lang0,
                                                  elem_id=f"example-{code}-{i}"),
                                        _shown_in(code),
                                    )
                                    ex_buttons.append((b, text))
                    with gr.Column(scale=2, min_width=360, elem_id="panel"):
                        labels.text(gr.Markdown(f"### {t('panel', lang0)}", elem_id="panel-title"), "panel", "### {}")
                        with gr.Accordion(t("profile", lang0), open=False, elem_id="profile") as acc_profile:
                            labels.text(gr.Markdown(t("profile_hint", lang0)), "profile_hint", "<small>{}</small>")
                            with gr.Row():
                                f_use = labels.add(
                                    gr.Dropdown(
                                        use_case_choices(lang0),
                                        value=None,
                                        label=t("use_case", lang0),
                                        elem_id="f-use-case",
                                    ),
                                    lambda lg: {"label": t("use_case", lg), "choices": use_case_choices(lg)},
                                )
                                f_model = labels.label(
                                    gr.Dropdown(
                                        calculators.model_choices(),
                                        value=None,
                                        allow_custom_value=True,
                                        label=t("model", lang0),
                                        elem_id="f-model",
                                    ),
                                    "model",
                                )
                            with gr.Row():
                                f_params = labels.label(
                                    gr.Number(None, label=t("params_b", lang0), elem_id="f-params"),
                                    "params_b",
                                )
                                f_prec = labels.label(
                                    gr.Dropdown(
                                        PRECISION_CHOICES,
                                        value=None,
                                        allow_custom_value=True,
                                        label=t("precision", lang0),
                                        elem_id="f-precision",
                                    ),
                                    "precision",
                                )
                            with gr.Row():
                                f_ctx = labels.label(
                                    gr.Number(
                                        None,
                                        label=t("context_tokens", lang0),
                                        precision=0,
                                        elem_id="f-context",
                                    ),
                                    "context_tokens",
                                )
                                f_conc = labels.label(
                                    gr.Number(
                                        None,
                                        label=t("concurrency", lang0),
                                        precision=0,
                                        elem_id="f-concurrency",
                                    ),
                                    "concurrency",
                                )
                                f_method = labels.add(
                                    gr.Dropdown(
                                        method_choices(lang0), value=None, label=t("method", lang0), elem_id="f-method"
                                    ),
                                    lambda lg: {"label": t("method", lg), "choices": method_choices(lg)},
                                )
                            with gr.Row():
                                f_gpu = labels.label(
                                    gr.Dropdown(
                                        calculators.gpu_choices(),
                                        value=None,
                                        allow_custom_value=True,
                                        label=t("gpu", lang0),
                                        elem_id="f-gpu",
                                    ),
                                    "gpu",
                                )
                                f_count = labels.label(
                                    gr.Number(
                                        None, label=t("gpu_count", lang0), precision=0, elem_id="f-gpu-count"
                                    ),
                                    "gpu_count",
                                )
                            recompute = labels.text(
                                gr.Button(t("recompute", lang0), variant="primary", size="sm", elem_id="recompute"),
                                "recompute",
                            )
                            profile_md = gr.Markdown(elem_id="profile-summary")
                        labels.label(acc_profile, "profile")
                        labels.text(gr.Markdown(f"**{t('memory_chart', lang0)}**"), "memory_chart", "**{}**")
                        chart = gr.HTML(memory_chart_svg(None, lang0), elem_id="mem-chart")
                        labels.text(gr.Markdown(f"**{t('comparison', lang0)}**"), "comparison", "**{}**")
                        table = gr.Markdown(t("comparison_empty", lang0), elem_id="comparison")
                        with gr.Accordion(t("comparison_details", lang0), open=False) as acc_notes:
                            rejected = gr.Markdown(elem_id="rejected")
                        labels.label(acc_notes, "comparison_details")
                        labels.text(gr.Markdown(f"**{t('checklist', lang0)}**"), "checklist", "**{}**")
                        checklist = gr.Markdown(t("checklist_empty", lang0), elem_id="checklist")

            with gr.Tab(t("tab_calc", lang0), id="calc") as tab_calc:
                labels.label(tab_calc, "tab_calc")
                calculators.build(labels, lang_box)

            with gr.Tab(t("tab_settings", lang0), id="settings") as tab_settings:
                labels.label(tab_settings, "tab_settings")
                default_settings = getattr(pool.default(), "settings", None) or Settings(llm="none")
                if lock_settings:
                    labels.text(gr.Markdown(f"🔒 {t('settings_locked', lang0)}"), "settings_locked", "🔒 {}")
                backend = labels.add(
                    gr.Radio(
                        _backend_choices(lang0),
                        value=default_settings.llm,
                        label=t("settings_backend", lang0),
                        interactive=not lock_settings,
                        elem_id="backend",
                    ),
                    lambda lg: {"label": t("settings_backend", lg), "choices": _backend_choices(lg)},
                )
                with gr.Row():
                    llama_path = labels.label(
                        gr.Textbox(
                            default_settings.llama_model or "",
                            label=t("llama_path", lang0),
                            interactive=not lock_settings,
                        ),
                        "llama_path",
                    )
                with gr.Row():
                    oa_url = labels.label(
                        gr.Textbox(
                            default_settings.openai_base_url or "",
                            label=t("openai_url", lang0),
                            interactive=not lock_settings,
                            placeholder="http://127.0.0.1:8000/v1",
                        ),
                        "openai_url",
                    )
                    oa_model = labels.label(
                        gr.Textbox(
                            default_settings.openai_model, label=t("openai_model", lang0), interactive=not lock_settings
                        ),
                        "openai_model",
                    )
                    oa_key = labels.label(
                        gr.Textbox("", label=t("openai_key", lang0), type="password", interactive=not lock_settings),
                        "openai_key",
                    )
                apply_btn = labels.text(
                    gr.Button(t("apply", lang0), variant="primary", visible=not lock_settings, elem_id="apply-backend"),
                    "apply",
                )
                status_md = gr.Markdown(_status_md(pool.default(), lang0), elem_id="backend-status")
                labels.text(gr.Markdown(f"<small>{t('llm_note', lang0)}</small>"), "llm_note", "<small>{}</small>")
                with gr.Row():
                    dl_session = labels.label(
                        gr.DownloadButton(t("session_export", lang0), value=None, size="sm", elem_id="export-session"),
                        "session_export",
                    )
                    up_session = labels.label(
                        gr.UploadButton(
                            t("session_import", lang0),
                            file_types=[".json"],
                            file_count="single",
                            size="sm",
                            elem_id="import-session",
                        ),
                        "session_import",
                    )

        api.register(lambda _state: pool.default(), parking, chat_limit)

        # ------------------------------------------------------------------ handlers
        profile_inputs = [f_use, f_model, f_params, f_prec, f_ctx, f_conc, f_method, f_gpu, f_count]
        panel_outputs = [*profile_inputs, profile_md, chart, table, rejected, checklist, dl_report, dl_session]
        n_panel = len(panel_outputs)

        def panel_values(st: UIState) -> list[Any]:
            lang = st.lang
            session = st.session
            try:
                plan = plan_results(session)  # every view tells the same reply's story
                # what the tools used: the user's values, and where the user said nothing, the reply's assumptions
                values, _ = profile.used_values(session.profile, plan)
                st.shown_profile = dict(values)
                out: list[Any] = [values[k] for k in profile.PROFILE_FIELDS]
                # the options that reply lists, with its figures, in the currency it used
                frame, notes = render.panel_comparison(plan, lang, profile.budget_currency(session.profile),
                                                       session.lang)
                out += [
                    profile.profile_markdown(session.profile, lang, plan),
                    memory_chart_svg(_sizing_result(session, plan), lang),
                    frame or t("comparison_empty", lang),
                    notes,
                    render.calls_markdown([plan.get("check_build")], lang) or t("checklist_empty", lang),
                ]
            except Exception:  # a hand-edited session must not break the page
                log.exception("rendering the side panel failed")
                out = [None] * len(profile_inputs) + [
                    "",
                    memory_chart_svg(None, lang),
                    t("comparison_empty", lang),
                    "",
                    t("checklist_empty", lang),
                ]
            has_results = any(c.ok for k, c in session.last_results.items() if k != "search_knowledge")
            if has_results or session.turns:
                report = pool.get(st.backend_key).export(session, session.lang or lang)
                rep_path, ses_path = downloads.write(session, report)
                out += [gr.update(value=rep_path), gr.update(value=ses_path)]
            else:
                out += [gr.update(value=None), gr.update(value=None)]
            return _only_changed(st, out, first=len(profile_inputs), last=len(profile_inputs) + 5)

        def fresh_state(lang: str, backend_key: str = DEFAULT_KEY, after: UIState | None = None) -> UIState:
            """A new conversation; ``after``: the one it replaces in this tab (the page's sends stay counted)."""
            adv = pool.get(backend_key)
            session = adv.new_session()
            greet = adv.greeting(session, lang)  # type: ignore[arg-type]
            st = UIState(session=session, lang=lang, backend_key=backend_key)
            st.messages = [render.assistant_message(greet.text, render.use_case_options(lang))]
            st.last_sent = after.last_sent if after else 0
            return st

        def revive(st: UIState | None, request: Any) -> UIState | None:
            """This tab's state; a conversation the sweeper parked is brought back as it was (None: none)."""
            if st is not None:
                return st
            parked = parking.take(getattr(request, "session_hash", None))
            if parked is None:
                return None
            new = resumed_state(parked.session, parked.lang, parked.backend_key)
            new.last_sent = parked.last_sent
            return new

        def on_load(lang: str) -> list[Any]:
            lang = norm_lang(lang)
            st = fresh_state(lang)
            return [
                st,
                lang,
                st.messages,
                _status_md(pool.get(st.backend_key), lang),
                _badge_md(pool.get(st.backend_key), lang),
                *labels.updates(lang),
                *panel_values(st),
            ]

        demo.load(
            on_load,
            [lang_box],
            [state, lang_box, chatbot, status_md, badge, *labels.components, *panel_outputs],
            js=LANG_JS,
            api_visibility="private",
        )

        def on_lang(lang: str, st: UIState | None, request: gr.Request) -> list[Any]:
            lang = norm_lang(lang)
            st = revive(st, request)
            if st is None:
                st = fresh_state(lang)
            st.lang = lang
            if st.user_turns == 0 and not st.busy:  # nothing said yet: greet again in the new language
                st.closed = True
                st = fresh_state(lang, st.backend_key, after=st)
            return [
                st,
                st.messages,
                _status_md(pool.get(st.backend_key), lang),
                _badge_md(pool.get(st.backend_key), lang),
                *labels.updates(lang),
                *panel_values(st),
            ]

        lang_box.change(None, [lang_box], None, js=SET_LANG_JS)
        lang_box.input(
            on_lang,
            [lang_box, state],
            [state, chatbot, status_md, badge, *labels.components, *panel_outputs],
            api_visibility="private",
        )

        def take(sent: Any, st: UIState | None, request: gr.Request | None = None) -> list[Any]:
            """First, unqueued step of a send: the page's numbered sends (TAKE_JS) or a plain example text are
            taken and shown at once, behind a running turn if there is one. The box is never written here."""
            st = revive(st, request)
            lost = st is None  # the server no longer has this tab's conversation: only the newest send counts
            if st is None:
                st = fresh_state(default_ui_lang())
            limit = getattr(getattr(pool.get(st.backend_key), "settings", None), "max_message_chars", 8000)
            fresh = _new_sends(sent, st)[-1:] if lost else _new_sends(sent, st)
            if lost and any(seq is not None and seq > 1 for seq, _ in fresh):  # the page had talked before:
                st.messages = [render.assistant_message(t("session_expired", st.lang))]  # say why, not hello
            for seq, text in fresh:
                if text.strip():  # the engine reads this much
                    st.enqueue(text if len(text) <= limit else text[:limit] + " …", seq)
            if not any(text.strip() for _, text in fresh):
                if fresh:
                    gr.Info(t("empty_message", st.lang))
                return [gr.skip(), st, gr.skip(), gr.skip()]
            return [st.shown(), st, gr.update(interactive=False), gr.update(visible=True)]

        def drain(st: UIState | None) -> Iterator[list[Any]]:
            """Answer this tab's waiting messages in order; a second call while one runs leaves them to it."""
            idle = [gr.update(interactive=True), gr.update(visible=False)]
            if st is None or st.busy or st.closed:
                yield [gr.skip()] * (3 + n_panel + 2)
                return
            while st.inbox and not st.busy:
                st.busy = True
                try:
                    while st.inbox and not st.closed:
                        yield from _answer(st, st.inbox.pop(0)[1])
                finally:
                    st.busy = False
            if st.closed:  # replaced by a new conversation meanwhile: nothing of this one may reach the page
                yield [gr.skip()] * (3 + n_panel + 2)
                return
            # the chat is as the last step sent it: skipped, so the closing message does not carry it again
            if st.refresh_panel:  # a conversation brought back: its panel too
                st.refresh_panel = False
                st.panel_sent.clear()
                yield [gr.skip(), st, _profile_open(st), *panel_values(st), *idle]
                return
            yield [gr.skip(), st, gr.skip(), *([gr.skip()] * n_panel), *idle]

        def _answer(st: UIState, text: str) -> Iterator[list[Any]]:
            adv = pool.get(st.backend_key)
            st.snapshot(len(st.messages))  # this question can be asked again or edited later
            st.messages.append(render.user_message(text))
            st.user_turns += 1
            st.previous = None  # the replaced conversation stays replaced once this one starts
            before = list(st.messages)
            busy = [gr.skip(), gr.skip()]
            try:
                for _ in _stream_turn(adv, text, st):
                    if st.closed:
                        return
                    yield [st.shown(), st, gr.skip(), *([gr.skip()] * n_panel), *busy]
                # stopped: the engine may still be finishing its step, so the panel is left as it was
                panel = [gr.skip()] * n_panel if st.stopping or st.closed else panel_values(st)
            except Exception:  # a bug must not freeze the chat or lose the conversation
                log.exception("chat turn failed")
                st.messages = [*before, render.assistant_message(t("internal_error", st.lang))]
                panel = [gr.skip()] * n_panel
            if st.closed:
                return
            if not st.stopping:
                _offer_chips(st, len(before))
            opened = _profile_open(st)
            if st.stopping:  # Stop: the question and what had arrived of the answer stay, with a word
                st.stopping = False
                st.messages = [*st.messages, render.assistant_message(t("stopped", st.lang))]
                opened = gr.skip()  # the panel stays as it was
            yield [st.shown(), st, opened, *panel, *busy]

        take_outputs = [chatbot, state, send, stop]
        drain_outputs = [chatbot, state, acc_profile, *panel_outputs, send, stop]
        # the chat shows a turn's progress itself ("Working…"): no Gradio timer laid over the panel's fields
        chat_kw: dict[str, Any] = {"api_visibility": "private", "concurrency_limit": chat_limit,
                                   "concurrency_id": "chat", "show_progress": "hidden"}
        quick: dict[str, Any] = {"api_visibility": "private", "queue": False}
        for trigger in (msg.submit, send.click):
            # "multiple": a send while the previous one is still being taken is not dropped (Gradio's default);
            # "always_last": a drain asked for while one runs starts after it, so nothing waits for ever
            sent = trigger(None, [msg], [outbox, msg], js=TAKE_JS, trigger_mode="multiple", **quick)
            shown = sent.then(take, [outbox, state], take_outputs, trigger_mode="multiple", **quick)
            shown.then(drain, [state], drain_outputs, trigger_mode="always_last", **chat_kw)
        def take_example(text: str) -> Callable[..., list[Any]]:
            def fn(st: UIState | None, request: gr.Request) -> list[Any]:
                return take(text, st, request)
            return fn

        for button, text in ex_buttons:  # an example is sent as it is; a draft in the box stays
            shown = button.click(take_example(text), [state], take_outputs, trigger_mode="multiple", **quick)
            shown.then(drain, [state], drain_outputs, trigger_mode="always_last", **chat_kw)

        def on_option(st: UIState | None, evt: gr.SelectData, request: gr.Request) -> list[Any]:
            value = str(evt.value) if evt and evt.value is not None else ""
            if st is not None and st.previous is not None and not st.user_turns \
                    and value == t("restore_previous", st.lang):
                back = st.previous  # the conversation "new conversation" replaced, as it was
                back.closed, back.stopping, back.busy, back.refresh_panel = False, False, False, True
                back.last_sent = max(back.last_sent, st.last_sent)
                st.previous = None
                return [back.shown(), back, gr.skip(), gr.skip()]
            return take(value, st, request)

        shown = chatbot.option_select(on_option, [state], take_outputs, trigger_mode="multiple", **quick)
        shown.then(drain, [state], drain_outputs, trigger_mode="always_last", **chat_kw)

        def on_stop(st: UIState | None) -> list[Any]:
            """Stop the running turn where it stands (the engine is left at its next step) and hand the messages
            still waiting back to the box; the conversation so far stays.

            The chat itself is never written here: the running turn streams it as edits of what it sent last,
            and a value put in between made the page drop the turn's closing edit (the partial answer and
            "⏹ stopped"), leaving "Working…" on screen. The stream writes the final state; this only asks."""
            if st is None:
                return [gr.skip()] * 3
            waiting = "\n".join(text for _, text in st.inbox)
            st.inbox.clear()
            if st.busy:
                st.stopping = True
                buttons = [gr.skip(), gr.skip()]  # the turn's last step sets them back
            else:
                buttons = [gr.update(interactive=True), gr.update(visible=False)]
            return [waiting if waiting else gr.skip(), *buttons]

        stop.click(on_stop, [state], [msg, send, stop], **quick)

        def on_like(st: UIState | None, evt: gr.LikeData) -> None:
            """A vote on a reply: kept with its question (the user message before it) on this machine."""
            if st is None or evt is None:
                return
            shown = st.shown()
            index = evt.index[0] if isinstance(evt.index, list | tuple) else evt.index
            if not isinstance(index, int) or not 0 <= index < len(shown):
                return
            question = next((str(m.content) for m in reversed(shown[:index]) if m.role == "user"), "")
            if feedback.record(st.session.id, question, str(shown[index].content), evt.liked):
                gr.Info(t("feedback_thanks", st.lang), duration=3)  # a thank-you: gone soon

        chatbot.like(on_like, [state], None, api_visibility="private")  # queued: its thank-you is a toast

        def again(st: UIState | None, index: int | None, text: str | None) -> list[Any]:
            """Ask the user message at ``index`` again (``text``: edited; None: as it was): the conversation goes
            back to just before it, then the turn runs as a new send."""
            if st is None or index is None:
                return [gr.skip(), st, gr.skip(), gr.skip()]
            if st.busy or st.inbox:
                gr.Info(t("wait_for_turn", st.lang))
                return [st.shown(), st, gr.skip(), gr.skip()]
            said = st.rewind(index)
            if said is None:
                gr.Info(t("too_old_to_redo", st.lang))
                return [st.shown(), st, gr.skip(), gr.skip()]
            st.enqueue(text if text is not None else html.unescape(said))
            return [st.shown(), st, gr.update(interactive=False), gr.update(visible=True)]

        def on_retry(st: UIState | None, evt: gr.RetryData) -> list[Any]:
            """Regenerate: the last question asked again."""
            users = [i for i, m in enumerate(st.messages) if m.role == "user"] if st else []
            return again(st, users[-1] if users else None, None)

        def on_edit(st: UIState | None, evt: gr.EditData) -> list[Any]:
            """Edit and resend: a question changed in place is asked again from where it stood."""
            index = evt.index[0] if isinstance(evt.index, list | tuple) else evt.index
            value = evt.value if isinstance(evt.value, str) else str(evt.value or "")
            if st is not None and not value.strip():
                return [st.shown(), st, gr.skip(), gr.skip()]
            return again(st, index if isinstance(index, int) else None, value)

        for event, fn in ((chatbot.retry, on_retry), (chatbot.edit, on_edit)):
            redone = event(fn, [state], take_outputs, **quick)
            redone.then(drain, [state], drain_outputs, trigger_mode="always_last", **chat_kw)

        def on_new(st: UIState | None) -> list[Any]:
            """A new conversation; the one it replaces can be had back with one click (a chip on the greeting)
            until the first message of the new one."""
            if st is not None:
                st.closed = True  # a turn still running for it stops at its next step and shows nothing
            lang = st.lang if st else default_ui_lang()
            new = fresh_state(lang, st.backend_key if st else DEFAULT_KEY, after=st)
            if st is not None and st.user_turns:
                new.previous = st
                greeting = new.messages[-1]
                greeting.options = [*(greeting.options or []), {"value": t("restore_previous", lang),
                                                                  "label": t("restore_previous", lang)}]
            return [new, new.messages, gr.update(open=False), *panel_values(new)]

        new_outputs = [state, chatbot, acc_profile, *panel_outputs]
        new_chat.click(on_new, [state], new_outputs, api_visibility="private")
        chatbot.clear(on_new, [state], new_outputs, api_visibility="private")  # the trash icon

        def on_recompute(st: UIState | None, request: gr.Request, *values: Any) -> list[Any]:
            st = revive(st, request)
            if st is None:
                st = fresh_state(default_ui_lang())
            after = dict(zip(profile.PROFILE_FIELDS, values, strict=True))
            changes = profile.profile_changes(st.shown_profile, after)
            if "model" in changes and "params_b" not in changes:
                changes["params_b"] = None
            if "params_b" in changes and changes["params_b"] is not None and "model" not in changes:
                changes["model"] = None
            lang = st.session.lang or st.lang
            adv = pool.get(st.backend_key)
            try:
                reply = adv.update_profile(st.session, changes, lang=lang)
            except (ValueError, TypeError) as exc:  # a value the profile cannot hold (e.g. 0 tokens)
                gr.Warning(render.escape_html(api.first_line(exc)))
                return [st.messages, st, *panel_values(st)]
            if reply.mode == "error":  # said once, where the eye is on a phone too (a toast) and in the chat
                text = ui_text(reply.text, lang)
                gr.Warning(render.escape_html(text))
                st.messages.append(render.assistant_message(text))
                return [st.messages, st, *panel_values(st)]
            if changes:
                st.messages.append(render.user_message("✏️ " + _changes_text(changes, lang)))
            st.messages.extend(render.reply_messages(reply, lang))
            return [st.messages, st, *panel_values(st)]

        recompute.click(on_recompute, [state, *profile_inputs], [chatbot, state, *panel_outputs],
                        **{**chat_kw, "show_progress": "minimal"})  # no stream: a small timer says it works
        # a profile field's own change never raises in the browser: values are checked when recomputing

        def on_apply(st: UIState | None, llm: str, llama: str, url: str, model: str, key: str,
                     request: gr.Request) -> list[Any]:
            st = revive(st, request)
            if st is None:
                st = fresh_state(default_ui_lang())
            if lock_settings:
                return [st, _status_md(pool.get(st.backend_key), st.lang), "", gr.skip()]
            if forwarded(getattr(request, "headers", None) or {}):  # unlocked, yet reached through a proxy
                log.warning("backend settings change refused: the request came through a proxy (%s); keep the "
                            "settings locked when serving others", ", ".join(sorted(PROXY_HEADERS)))
                gr.Warning(t("settings_proxy", st.lang))
                return [st, _status_md(pool.get(st.backend_key), st.lang), "", gr.skip()]
            try:
                settings = ui_settings(llm, llama, url, model, key)
                st.backend_key, adv = pool.configure(settings)
            except Exception as exc:  # any failure is reported, the old backend stays
                log.warning("backend configuration failed: %s", type(exc).__name__)
                msg_text = f"⚠️ {t('settings_failed', st.lang)} {pool.get(st.backend_key).describe()}"
                return [st, render.safe_markdown(msg_text) + f"\n\n`{type(exc).__name__}`", "", gr.skip()]
            return [st, _status_md(adv, st.lang, applied=True), "", _badge_md(adv, st.lang)]

        apply_btn.click(
            on_apply,
            [state, backend, llama_path, oa_url, oa_model, oa_key],
            [state, status_md, oa_key, badge],
            api_visibility="private",
        )

        def on_upload(st: UIState | None, file: Any) -> list[Any]:
            lang = st.lang if st else default_ui_lang()
            path = getattr(file, "name", file)
            try:
                data = Path(str(path)).read_bytes()[: MAX_UPLOAD_BYTES + 1]
                if len(data) > MAX_UPLOAD_BYTES:
                    raise SessionError(t("session_too_large", lang, limit=fmt.num(MAX_UPLOAD_BYTES)))
                session = Session.from_json(data.decode("utf-8", errors="replace"), where="the uploaded session")
            except (OSError, SessionError) as exc:
                gr.Warning(render.escape_html(f"{t('session_bad', lang)} {session_problems(exc, lang)}"))
                return [gr.skip(), gr.skip(), gr.skip()] + [gr.skip()] * n_panel
            new = resumed_state(session, lang, st.backend_key if st else DEFAULT_KEY)
            if st is not None:
                new.last_sent = st.last_sent
                st.closed = True
            gr.Info(t("session_resumed", lang))
            return [new, new.messages, _profile_open(new), *panel_values(new)]

        up_session.upload(on_upload, [state, up_session], [state, chatbot, acc_profile, *panel_outputs],
                          api_visibility="private")

    demo.queue(default_concurrency_limit=8, max_size=256)
    demo.parking = parking  # type: ignore[attr-defined]  # the sweeper puts idle conversations there
    return demo


# ------------------------------------------------------------------------------ helpers


def session_problems(exc: Exception, lang: str) -> str:
    """Why an uploaded session cannot be used, in ``lang``: each field that does not fit, else the error's line."""
    problems = getattr(exc, "problems", None)
    return problem_text(problems, norm_lang(lang)) if problems else api.first_line(exc)


def chat_concurrency(advisor: Any) -> int:
    """How many chat turns run at once. The offline engine's turns are pure Python: beyond two per core they
    only wait for the interpreter lock, and starve the web server's own thread of it (under a request flood,
    clients timed out joining the queue). A model's turns mostly wait for the model, so more may run."""
    if getattr(getattr(advisor, "backend", None), "is_llm", False):
        return 16
    return max(2, min(16, 2 * (os.cpu_count() or 1)))


def resumed_state(session: Session, lang: str, backend_key: str) -> UIState:
    """A tab's state for a conversation that goes on (uploaded, or revived from parking)."""
    st = UIState(session=session, lang=lang, backend_key=backend_key)
    st.messages = render.history_messages(session, lang)
    st.user_turns = sum(1 for turn in session.history if turn.role == "user")
    return st


def _shown_in(code: str) -> Callable[[str], dict[str, Any]]:
    """A label update showing a component only while the page is in language ``code``."""
    return lambda lang: {"visible": lang == code}


def _header_html(lang: str) -> str:
    """The title in the page's language, then in the other one; the subtitle in the page's language."""
    other = next(code for code in LANGS if code != norm_lang(lang))
    return (
        f"<h1>🖥️ {render.escape_html(t('title', lang))} · {render.escape_html(t('title', other))}</h1>"
        f"<p>{render.escape_html(t('subtitle', lang))}</p>"
    )


def _backend_choices(lang: str) -> list[tuple[str, str]]:
    return [
        (t("backend_none", lang), "none"),
        (t("backend_llama", lang), "llama"),
        (t("backend_openai", lang), "openai"),
    ]


def _badge_md(adv: Any, lang: str) -> str:
    """One line near the chat saying who writes the replies: the calculators alone, or which language model."""
    backend = getattr(adv, "backend", None)
    if not getattr(backend, "is_llm", False):
        return f"<small>{t('badge_offline', lang)}</small>"
    return f"<small>{t('badge_llm', lang, name=render.escape_html(adv.describe()))}</small>"


def _status_md(adv: Any, lang: str, applied: bool = False) -> str:
    head = t("settings_applied", lang) if applied else t("active_backend", lang) + ":"
    return f"**{head}** {render.safe_markdown(adv.describe())}"


PLAN_TOOLS = ("size_inference", "size_training", "recommend", "check_build")


def plan_results(session: Session) -> dict[str, Any]:
    """The kept results of the latest reply that computed a plan (a sizing, a recommendation or a build check),
    under their session keys. The session keeps each tool's latest call across turns, so a panel drawn from all
    of them mixed turns: a build check of the 4090 asked about earlier beside a sizing of the A100s now."""
    for turn in reversed(session.history):
        if turn.role != "assistant" or not turn.tool_calls:
            continue
        ids = {c.call_id for c in turn.tool_calls}
        kept = {key: c for key, c in session.last_results.items() if c.call_id in ids}
        if any(key in PLAN_TOOLS or key.startswith(("alt/", "compare/")) for key in kept):
            return kept
    return {}


def _sizing_result(session: Session, results: dict[str, Any]) -> Sizing | None:
    """The sizing the panel charts: training first on a training session, else inference."""
    order = ("size_training", "size_inference") if session.profile.use_case == "training" else (
        "size_inference", "size_training")
    compared = [key for key in results if key.startswith("compare/size_")]  # a comparison: its first card
    return next((r for r in (sizing_of(results.get(n)) for n in (*order, *compared)) if r is not None), None)


def _changes_text(changes: dict[str, Any], lang: str) -> str:
    parts = []
    for key, value in changes.items():
        if key in profile.PROFILE_FIELDS and not (key in ("params_b", "model") and value is None):
            parts.append(f"{t(key, lang)} → {profile.field_text(key, value, lang)}")
    return " · ".join(parts) or t("recompute", lang)


def _stream_turn(adv: Any, text: str, st: UIState) -> Iterator[None]:
    """Run one engine turn, folding its events into ``st.messages``; yields whenever the page should redraw.

    The engine runs in a worker thread, so Stop (``st.stopping``) or a new conversation (``st.closed``) ends
    the turn on the page within ``STOP_POLL_S`` even while a model call blocks; the worker closes the engine's
    turn at its next step, and the tab's next turn waits for that (one turn touches a session at a time)."""
    if st.worker is not None:
        st.worker.join()
    events: queue.Queue[Any] = queue.Queue()

    def work() -> None:
        try:
            for event in adv.stream(text, st.session):
                events.put(event)
                if st.stopping or st.closed:
                    break
        except BaseException as exc:  # handed to the page's thread, which reports it
            events.put(_Failed(exc))
        finally:
            events.put(_DONE)

    st.worker = threading.Thread(target=work, name="advisor-turn", daemon=True)
    st.worker.start()
    base = list(st.messages)
    view = render.TurnView(st.session.lang or st.lang)
    last = 0.0
    while True:
        try:
            event = events.get(timeout=STOP_POLL_S)
        except queue.Empty:
            event = None
        if st.stopping or st.closed:
            st.messages = base + view.shown_so_far()
            return
        if event is None:
            continue
        if event is _DONE:
            break
        if isinstance(event, _Failed):
            raise event.exc
        if getattr(event, "type", None) == "profile" and st.session.lang:
            view.lang = st.session.lang
        if not view.apply(event):
            continue
        st.messages = base + view.messages
        now = time.monotonic()
        if now - last >= STREAM_INTERVAL_S and view.final is None:
            last = now
            yield None
    st.worker.join()
    st.messages = base + view.messages


@dataclass(frozen=True)
class _Failed:
    exc: BaseException


_DONE = object()
STOP_POLL_S = 0.2


def _new_sends(sent: Any, st: UIState) -> list[tuple[int | None, str]]:
    """The sends not taken yet: from the page's JSON list of ``[number, text]`` (numbers above the last one
    taken), or one plain text (an example button, an option, an API caller)."""
    if not isinstance(sent, str):
        return []
    try:
        items = json.loads(sent) if sent.startswith("[[") else None
    except ValueError:
        items = None
    if not isinstance(items, list):
        return [(None, sent)]
    fresh: list[tuple[int | None, str]] = []
    for item in items[:20]:
        if isinstance(item, list) and len(item) == 2 and isinstance(item[0], int) and isinstance(item[1], str) \
                and item[0] > st.last_sent:
            fresh.append((item[0], item[1]))
    st.last_sent = max([st.last_sent, *(n for n, _ in fresh if n is not None)])
    return fresh


def _only_changed(st: UIState, values: list[Any], first: int, last: int) -> list[Any]:
    """``values`` with the panel views ``first``..``last`` (exclusive) that the page already shows as they are
    replaced by ``gr.skip()``: a turn that changes nothing in the panel sends nothing for it."""
    out = list(values)
    for i in range(first, last):
        if st.panel_sent.get(i) == values[i]:
            out[i] = gr.skip()
        st.panel_sent[i] = values[i]
    return out


def _offer_chips(st: UIState, first: int) -> None:
    """Put the reply's quick answers (``render.reply_chips``) under the turn, whose first message is its answer
    (Gradio shows options only under the chat's last message; a calculation nested in a fold does not count)."""
    if first >= len(st.messages) or st.messages[first].role != "assistant":
        return
    lang = st.session.lang or st.lang
    chips = render.reply_chips(st.session.pending, str(st.messages[first].content), lang)
    top = [m for m in st.messages[first:] if "parent_id" not in (m.metadata or {})]  # a nested step is no message
    if chips and top:
        top[-1].options = [{"value": c, "label": c} for c in chips]


def _profile_open(st: UIState) -> Any:
    """The profile panel opens once it has something in it (on a phone it would push the chat down)."""
    return gr.update(open=True) if any(v is not None for v in profile.profile_values(st.session.profile).values()) \
        else gr.skip()
