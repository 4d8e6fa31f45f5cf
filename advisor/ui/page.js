// The chat page's own behaviour (put in <head> by layout.launch_options; no network, no framework).
// 1. The chat fills the window and the message box stays in sight, on a desk and on a phone.
// 2. A new question is pinned near the top of the chat with its answer growing below it — after a send,
//    an example, an option chip or Recompute alike — until the reader scrolls on their own.
// 3. Esc stops a running turn.
// 4. Tables read: figures stay whole; a table too wide for its place (and any on a phone) shows one card per
//    row, each cell under its column's name.
// 5. A calculation's full result (JSON) and a cited passage ('[1]') are fetched only when their link is opened,
//    and shown in place.
// 6. Gradio's own words (toast titles, the chat's buttons) are said in the page's language.
(() => {
  "use strict";
  const PIN_GAP = 40;  // px from the chat's top edge to the pinned question (under the chat's label)
  const MIN_CHAT = 260;  // px: below this the chat is not worth shrinking for the box
  const STOPPED = "⏹";  // the mark of a stopped turn's notice (ui.stopped)
  const MAX_SHOWN = 20000;  // characters of a full result shown in the chat
  const FIGURE = /^(?=.{1,28}$)[^\n]*\d[^\n]*$/;  // a short cell holding a figure
  let pinned = null;  // the user row held near the top
  let released = false;  // the reader scrolled: leave the view alone until the next question

  const chat = () => document.querySelector("#chatbot");

  function scrollBox() {  // the chat's own scroll box (Gradio's .bubble-wrap; found by its overflow otherwise)
    const root = chat();
    if (!root) return null;
    const known = root.querySelector(".bubble-wrap");
    if (known) return known;
    for (const el of root.querySelectorAll("*")) {
      const oy = getComputedStyle(el).overflowY;
      if ((oy === "auto" || oy === "scroll") && el.querySelector(".message-row")) return el;
    }
    return null;
  }

  // 1 ------------------------------------------------------------------ size
  function fitHeight() {
    const root = chat();
    const row = document.querySelector("#input-row");
    if (!root || !row || root.offsetParent === null) return;
    const top = root.getBoundingClientRect().top + window.scrollY;
    const below = row.getBoundingClientRect().height + 24;
    const h = Math.max(MIN_CHAT, Math.floor(window.innerHeight - top - below));
    document.documentElement.style.setProperty("--chat-h", h + "px");
  }

  // 2 ------------------------------------------------------------------ pin
  function lastUserRow() {
    const rows = document.querySelectorAll("#chatbot .user-row");
    return rows.length ? rows[rows.length - 1] : null;
  }

  function keepPinned() {
    const row = lastUserRow();
    if (row !== pinned) {  // a new question (or the chat was redrawn): pin the newest one
      pinned = row;
      released = false;
      const r = chat().getBoundingClientRect();
      if (row && (r.top < 0 || r.bottom > window.innerHeight)) {
        window.scrollTo({top: 0});  // asked from the panel (Recompute) further down: back to the chat
      }
    }
    const box = scrollBox();
    if (!box) return;
    if (!pinned || released || !box.contains(pinned)) {
      box.style.setProperty("--pin-space", "0px");
      return;
    }
    const inner = box.firstElementChild || box;
    const rowTop = pinned.getBoundingClientRect().top - box.getBoundingClientRect().top + box.scrollTop;
    const contentEnd = inner.getBoundingClientRect().bottom - box.getBoundingClientRect().top + box.scrollTop;
    // room below the answer so the question can reach the top while the answer is still short
    const space = Math.max(0, box.clientHeight - (contentEnd - rowTop) - PIN_GAP);
    box.style.setProperty("--pin-space", space + "px");
    let target = Math.max(0, rowTop - PIN_GAP);
    const rows = box.querySelectorAll(".message-row");
    const last = rows[rows.length - 1];
    if (last && last !== pinned && last.innerText.trim().includes(STOPPED)) {  // a stopped turn: its notice in view
      target = Math.max(target, last.offsetTop + last.offsetHeight - box.clientHeight + PIN_GAP);
    }
    if (Math.abs(box.scrollTop - target) > 1) box.scrollTop = target;
  }

  function release(ev) {
    const box = scrollBox();
    if (box && box.contains(ev.target)) released = true;
  }

  // 3 ------------------------------------------------------------------ Esc
  function onKey(ev) {
    if (ev.key !== "Escape") return;
    const stop = document.querySelector("#stop");
    if (stop && stop.offsetParent !== null) {
      ev.preventDefault();
      stop.click();
    }
  }

  // 4 ------------------------------------------------------------------ tables
  function labelCells() {
    for (const table of document.querySelectorAll("#chatbot table, #comparison table")) {
      if (table.dataset.labelled === String(table.rows.length)) continue;
      const head = table.tHead && table.tHead.rows[0];
      if (!head) continue;
      const names = Array.from(head.cells, (c) => c.innerText.trim());
      for (const body of table.tBodies) {
        for (const tr of body.rows) {
          Array.from(tr.cells).forEach((td, i) => {
            if (names[i]) td.dataset.label = names[i];
            const text = td.innerText.trim();
            if (FIGURE.test(text)) td.classList.add("fig");  // '$41,000', '1,700 W': one line
            else if (text.length <= 16) td.classList.add("word");  // '工作站级' is one word, not four
          });
        }
      }
      table.dataset.labelled = String(table.rows.length);
      table.classList.add("labelled");
      // measured as a grid; too wide for its place: first let its words wrap, then cards
      table.classList.remove("cards", "tight");
      const tooWide = () => table.scrollWidth > table.clientWidth + 4 || table.offsetWidth > room(table) + 4;
      if (window.innerWidth <= 600) table.classList.add("cards");
      else if (tooWide()) {
        table.classList.add("tight");
        if (tooWide()) table.classList.add("cards");
      }
      if (names[0] === "#" && names.length > 2) table.classList.add("ranked");  // "1." then the name, one line
    }
  }

  // 5 ------------------------------------------------------------------ results on demand
  const opened = new Map();  // link → what it shows: put back when the chat redraws the message

  function keepOpened() {
    for (const [href, box] of opened) {
      const link = chat() && chat().querySelector(`a[href="${CSS.escape(href)}"]`);
      if (link && link.nextElementSibling !== box) link.after(box);
    }
  }

  async function openResult(ev) {
    const link = ev.target.closest && ev.target.closest('a[href*="gpu-advisor/result/"]');
    if (!link || !chat() || !chat().contains(link) || link.closest(".raw-result")) return;  // "{ … } ↗": a tab
    ev.preventDefault();
    ev.stopPropagation();
    const href = link.getAttribute("href");
    const shown = link.nextElementSibling;
    if (shown && shown.classList.contains("raw-result")) { shown.remove(); opened.delete(href); return; }
    const box = document.createElement("div");
    box.className = "raw-result";
    link.after(box);
    opened.set(href, box);
    try {
      const res = await fetch(href, {credentials: "same-origin"});
      const body = await res.json();
      if (!res.ok) box.textContent = String(body.error || res.status);
      else if (body.passage) showPassage(box, body.passage);  // a cited passage: as text to read
      else {
        const pre = document.createElement("pre");
        const all = JSON.stringify(body, null, 1);
        pre.textContent = all.length > MAX_SHOWN ? all.slice(0, MAX_SHOWN) + "\n…" : all;
        box.append(pre);
        if (all.length > MAX_SHOWN) {  // the rest in a tab of its own, not in the chat
          const whole = document.createElement("a");
          whole.href = href;
          whole.target = "_blank";
          whole.rel = "noopener";
          whole.textContent = "{ … } ↗";
          box.append(whole);
        }
      }
    } catch (err) {
      box.textContent = String(err);
    }
  }

  function showPassage(box, passage) {
    box.classList.add("passage");
    const title = document.createElement("strong");
    title.textContent = passage.title || "";
    const text = document.createElement("p");
    text.textContent = passage.text || "";
    const source = document.createElement("small");
    source.textContent = passage.source || "";
    box.append(title, text, source);
  }

  // 6 ------------------------------------------------------------------ Gradio's words
  function relabel() {
    const table = window.__advisorWords;
    if (!table) return;
    const words = table.words[(document.documentElement.lang || "zh").startsWith("zh") ? "zh" : "en"];
    const say = (text) => { const key = table.known[(text || "").trim()]; return key ? words[key] : null; };
    for (const el of document.querySelectorAll(".toast-title")) {
      const word = say(el.textContent);
      if (word && el.textContent.trim() !== word) el.textContent = word;
    }
    for (const el of document.querySelectorAll("#chatbot button[aria-label], #chatbot button[title]")) {
      for (const attr of ["aria-label", "title"]) {
        const word = say(el.getAttribute(attr));
        if (word && el.getAttribute(attr) !== word) el.setAttribute(attr, word);
      }
    }
  }

  function room(el) {  // the width of the nearest box around ``el`` that has one (wrappers may be inline)
    for (let e = el.parentElement; e; e = e.parentElement) if (e.clientWidth > 0) return e.clientWidth;
    return Infinity;
  }

  let queued = false;
  function onChange() {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      labelCells();
      keepOpened();
      keepPinned();
      relabel();
    });
  }

  function start() {
    const root = chat();
    if (!root) { setTimeout(start, 200); return; }
    fitHeight();
    new MutationObserver(onChange).observe(root, {childList: true, subtree: true, characterData: true});
    // the panel's tables, the toasts and the language switch live outside the chat
    new MutationObserver(onChange).observe(document.body, {childList: true, subtree: true});
    new MutationObserver(onChange).observe(document.documentElement, {attributes: true, attributeFilter: ["lang"]});
    new ResizeObserver(() => { fitHeight(); onChange(); }).observe(document.body);
    window.addEventListener("resize", fitHeight);
    root.addEventListener("wheel", release, {passive: true});
    root.addEventListener("touchmove", release, {passive: true});
    document.addEventListener("keydown", onKey);
    document.addEventListener("click", openResult, true);
    onChange();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
