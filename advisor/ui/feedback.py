"""Thumbs up / down on a reply, kept on this machine: one JSON line per vote in ``feedback.jsonl`` under the
user data directory (``$GPU_ADVISOR_DATA``), with the question and the start of the answer it was about."""

from __future__ import annotations

import datetime as dt
import json
import logging
import threading
from pathlib import Path
from typing import Any

from knowledge.index import user_data_dir

log = logging.getLogger(__name__)
MAX_TEXT_CHARS = 600
_lock = threading.Lock()


def feedback_file() -> Path:
    return user_data_dir() / "feedback.jsonl"


def record(session_id: str, question: str, answer: str, liked: Any) -> bool:
    """Append one vote (``liked``: True, False, or Gradio's "Like" / "Dislike"); False when it cannot be written."""
    vote = {True: "up", False: "down", "Like": "up", "Dislike": "down"}.get(liked, "withdrawn")
    row = {"at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "session": session_id,
           "vote": vote, "question": question[:MAX_TEXT_CHARS], "answer": answer[:MAX_TEXT_CHARS]}
    try:
        path = feedback_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        with _lock, path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
        return True
    except OSError:
        log.warning("feedback could not be written", exc_info=True)
        return False
