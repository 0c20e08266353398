/* The HTML edition / The converter / The script of every page */
// rope.js: the HTML edition's one script: the contents beside the
// text, copy buttons, the search, and the landing on a searched term.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const side = document.querySelector("details.sidebar");
  if (side && window.matchMedia("(min-width: 72rem)").matches) side.open = true;

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext)
      return navigator.clipboard.writeText(text);
    return new Promise((ok, fail) => {
      const t = document.createElement("textarea");
      t.value = text;
      t.setAttribute("readonly", "");
      t.style.position = "fixed";
      t.style.opacity = "0";
      document.body.appendChild(t);
      t.select();
      const done = document.execCommand("copy");
      t.remove();
      if (done) ok(); else fail(new Error("copy refused"));
    });
  }
  for (const chunk of document.querySelectorAll(".chunk")) {
    const pre = chunk.querySelector("pre"), head = chunk.querySelector(".chunkhead");
    if (!pre || !head) continue;
    const b = document.createElement("button");
    const no = chunk.querySelector(".chunkno");
    b.type = "button";
    b.className = "copy";
    b.textContent = "Copy";
    b.setAttribute("aria-label",
                   "Copy the code of chunk " + (no ? no.textContent : ""));
    b.addEventListener("click", () => {
      copyText(pre.textContent).then(() => { b.textContent = "Copied"; },
                                     () => { b.textContent = "Copy failed"; });
      setTimeout(() => { b.textContent = "Copy"; }, 1500);
    });
    head.appendChild(b);
  }
  const params = new URLSearchParams(window.location.search);
  const results = document.getElementById("search-results");
  const esc = (s) => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;",
    ">": "&gt;", '"': "&quot;" }[c]));
  function count(text, word) {
    let n = 0;
    for (let at = text.indexOf(word); at >= 0 && n < 10;
         at = text.indexOf(word, at + 1))
      n += 1;
    return n;
  }
  function search(query) {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    const phrase = words.join(" "), hits = [];
    for (const [file, id, title, text] of window.ROPE_SEARCH) {
      const low = text.toLowerCase(), lowTitle = title.toLowerCase();
      let score = 0;
      for (const w of words) {
        const n = count(low, w);
        if (n === 0) { score = -1; break; }
        score += n + (lowTitle.includes(w) ? 20 : 0);
      }
      if (score < 0) continue;
      if (words.length > 1 && low.includes(phrase)) score += 30;
      hits.push({ file, id, title, text, score });
    }
    hits.sort((a, b) => b.score - a.score);
    return { words, hits };
  }
  function snippet(text, words) {
    const low = text.toLowerCase();
    let at = low.indexOf(words.join(" "));
    if (at < 0) at = low.indexOf(words[0]);
    const from = Math.max(0, at - 80), to = Math.min(text.length, at + 160);
    // mark the words in the raw text, then escape each piece
    const any = new RegExp(words.map((w) =>
      w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "gi");
    const raw = text.slice(from, to);
    let s = "", last = 0;
    for (const m of raw.matchAll(any)) {
      s += esc(raw.slice(last, m.index)) + "<mark>" + esc(m[0]) + "</mark>";
      last = m.index + m[0].length;
    }
    s += esc(raw.slice(last));
    return (from > 0 ? "... " : "") + s + (to < text.length ? " ..." : "");
  }
  if (results && window.ROPE_SEARCH) {
    const query = (params.get("q") || "").trim();
    const box = document.querySelector("form.search input");
    if (box) { box.value = query; box.focus(); }
    if (!query) {
      results.innerHTML = "<p>Type a word or a name into the search box.</p>";
    } else {
      const { words, hits } = search(query);
      const pages = window.ROPE_PAGES;
      results.innerHTML = "<p>" + hits.length + (hits.length === 1 ?
        " section contains " : " sections contain ") + esc(query) + ".</p>" +
        '<ol class="results">' + hits.slice(0, 100).map((h) =>
          '<li><a href="' + h.file + "?hl=" + encodeURIComponent(query) +
          (h.id ? "#" + encodeURIComponent(h.id) : "") + '">' + esc(h.title) +
          '</a> <span class="where">' + esc(pages[h.file] || h.file) +
          "</span><p>" + snippet(h.text, words) + "</p></li>").join("") + "</ol>";
    }
  }
  const wanted = params.get("hl");
  const column = document.getElementById("main");
  if (wanted && column && !results) {
    const start = window.location.hash ?
      document.getElementById(decodeURIComponent(window.location.hash.slice(1))) : null;
    const after = (n) => !start || start === n ||
      (start.compareDocumentPosition(n) & Node.DOCUMENT_POSITION_FOLLOWING);
    const words = wanted.toLowerCase().split(/\s+/).filter(Boolean);
    let hit = null;
    for (const needle of [words.join(" "), words[0]]) {
      const walk = document.createTreeWalker(column, NodeFilter.SHOW_TEXT, {
        acceptNode: (n) => n.parentElement.closest(".katex, script") ?
          NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT });
      for (let n = walk.nextNode(); n && !hit; n = walk.nextNode()) {
        const at = n.data.toLowerCase().indexOf(needle);
        if (at >= 0 && after(n)) hit = [n, at, needle.length];
      }
      if (hit) break;
    }
    if (hit) {
      const range = document.createRange();
      range.setStart(hit[0], hit[1]);
      range.setEnd(hit[0], hit[1] + hit[2]);
      const mark = document.createElement("mark");
      mark.id = "search-hit";
      range.surroundContents(mark);
      // after the browser's own jump to the address's anchor, at load
      const show = () => mark.scrollIntoView({ block: "center" });
      show();
      window.addEventListener("load", () => setTimeout(show, 0));
    }
  }
});
