/* The HTML edition / The test in a browser */
// test-html.js: open every page of the HTML edition in headless chromium.
"use strict";
const { chromium } = require("playwright-core");
const fs = require("fs");
const path = require("path");
const { pathToFileURL } = require("url");

const site = path.resolve(process.argv[2]);
const shots = path.resolve(process.argv[3]);
const files = fs.readdirSync(site).filter((f) => f.endsWith(".html")).sort();
const values = JSON.parse(fs.readFileSync(path.join(site, "values.json")));
const problems = [];
const fail = (file, what) => problems.push(file + ": " + what);

// Every file and directory of the edition readable by others (a web
// server running as another user serves what it can read).
(function modes(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name), mode = fs.statSync(p).mode;
    const need = e.isDirectory() ? 0o005 : 0o004;
    if ((mode & need) !== need)
      fail(path.relative(site, p), "mode " + (mode & 0o777).toString(8) +
           " is not readable by others");
    if (e.isDirectory()) modes(p);
  }
})(site);

const RAW = [
  [/\\\(|\\\)|\\\[|\\\]/, "a math delimiter \\( \\) \\[ \\]"],
  [/\$[^$\n]{1,200}\$/, "a $...$ formula"],
  [/\\(begin|end)\b/, "\\begin or \\end"],
  [/\\val\b/, "\\val"],
  [/\\[a-zA-Z]+/, "a LaTeX command"],
  [/\[\[|\]\]/, "a noweb quote [[...]]"],
  [/ROPEPH\d+X|[\u0001\u0002]/, "a placeholder of the converter"],
];
const digits = (s) => s.replace(/\\[a-zA-Z]+/g, "").replace(/[^0-9]/g, "");

function inspect() {
  const clone = document.body.cloneNode(true);
  clone.querySelectorAll("pre, code, .katex-mathml").forEach((e) => e.remove());
  return {
    text: clone.textContent,
    ids: [...document.querySelectorAll("[id]")].map((e) => e.id),
    links: [...document.querySelectorAll("a[href]")].map(
      (a) => a.getAttribute("href")),
    images: [...document.images].map((i) => ({ src: i.getAttribute("src"),
      ok: i.complete && i.naturalWidth > 0 })),
    vals: [...document.querySelectorAll("[data-val]")].map((e) => {
      const c = e.cloneNode(true);
      c.querySelectorAll(".katex-mathml").forEach((m) => m.remove());
      return { key: e.getAttribute("data-val"), text: c.textContent };
    }),
    katexErrors: document.querySelectorAll(".katex-error").length,
    chunks: [...document.querySelectorAll(".chunk")].map((c) => ({
      no: Number((c.querySelector(".chunkno") || {}).textContent),
      name: (c.querySelector(".chunkname") || {}).textContent || "",
      cont: c.querySelector(".chunkhead").textContent.includes("+\u2261"),
      prev: !!c.querySelector('.chunkxref a[rel="prev"]') })),
    used: [...document.querySelectorAll("pre a.id")].filter((a) =>
      a.getAttribute("href").split("#")[1] !== a.closest(".chunk").id)
      .map((a) => a.textContent),
    identIndex: [...document.querySelectorAll("main ul.index > li")].map(
      (li) => [li.querySelector("code") ? li.querySelector("code").textContent : "",
               li.textContent.includes("used in")]),
  };
}

function readerChecks(file) {
  const out = [];
  const around = (s, at) => "..." + s.slice(Math.max(0, at - 40), at + 40)
    .replace(/\s+/g, " ") + "...";
  const clone = document.body.cloneNode(true);
  clone.querySelectorAll(".katex-mathml").forEach((e) => e.remove());
  const text = clone.textContent;
  let m = text.match(/ROPEPH\d|ROPEIDX\d|\b\d{3,}X\b|[\u0001-\u0008]/);
  if (m) out.push("a placeholder in the text: " + around(text, m.index));
  for (const e of document.querySelectorAll("[id]"))
    if (/ropeph|ropeidx|[\u0001-\u0008]/i.test(e.id))
      out.push("a placeholder in the id " + e.id);
  for (const a of document.querySelectorAll("a[href]"))
    if (/ropeph|[\u0001-\u0008]|WHERE:|REF:|#unresolved-/i
        .test(a.getAttribute("href")))
      out.push("a placeholder in the link " + a.getAttribute("href"));
  for (const e of document.querySelectorAll("code, pre, kbd"))
    if (/[\u2013\u2014]/.test(e.textContent))
      out.push("a typographic dash in code: " + e.textContent.slice(0, 60));
  if (file !== "references.html") {
    const prose = document.body.cloneNode(true);
    prose.querySelectorAll("pre, code, .chunkhead, .chunkref, .katex, ul.index")
      .forEach((e) => e.remove());
    m = prose.textContent.match(/\b(pages?|p\.)\s+\d+/);
    if (m) out.push("a page number of the PDF: " +
                    around(prose.textContent, m.index));
  }
  let level = 1;
  for (const h of document.querySelectorAll("main :is(h1, h2, h3, h4, h5, h6)")) {
    const n = Number(h.tagName[1]);
    if (n > level + 1)
      out.push("an h" + n + " after an h" + level + ": " +
               h.textContent.slice(0, 40));
    level = n;
  }
  for (const e of document.querySelectorAll('[id^="fig:"]'))
    if (e.tagName !== "FIGURE")
      out.push("the anchor " + e.id + " is a " + e.tagName.toLowerCase() +
               ", not the figure");
  for (const k of document.querySelectorAll("main .katex")) {
    if (k.closest(".katex-display")) continue;
    const n = k.nextSibling;
    if (n && n.nodeType === 3 && /^[.,;:!?)]/.test(n.data) &&
        getComputedStyle(k.parentElement).whiteSpace !== "nowrap")
      out.push("punctuation may wrap after a formula: " +
               (k.parentElement.textContent || "").slice(0, 50));
  }
  for (const k of document.querySelectorAll(".katex")) {
    const shown = k.querySelector(".katex-html");
    if (!shown || !shown.textContent.trim())
      out.push("a formula that shows nothing: " +
               (k.parentElement.textContent || "").slice(0, 50));
  }
  for (const tag of document.querySelectorAll(".katex-display .tag")) {
    const t = tag.getBoundingClientRect();
    for (const base of tag.parentElement.querySelectorAll(":scope > .base")) {
      const r = base.getBoundingClientRect();
      if (r.width > 0 && t.left < r.right && r.left < t.right &&
          t.top < r.bottom && r.top < t.bottom) {
        out.push("the number " + tag.textContent + " covers its formula");
        break;
      }
    }
  }
  for (const g of document.querySelectorAll(".katex svg"))
    if (g.getBoundingClientRect().height < 1 &&
        g.closest(".katex-html") && !g.closest(".katex-mathml"))
      out.push("a part of a formula drawn with no height: " +
               (g.closest(".katex").textContent || "").slice(0, 40));
  for (const box of document.querySelectorAll(".katex-display")) {
    const bases = [...box.querySelectorAll(".katex-html > .base")];
    const need = Math.max(0, ...bases.map((x) => x.getBoundingClientRect().right))
      - box.getBoundingClientRect().left;
    // (one pixel allowed: KaTeX places its boxes in fractions of a pixel)
    if (box.scrollWidth > box.clientWidth + 1 && need <= box.clientWidth)
      out.push("a formula's box scrolls though the formula fits: " +
               box.textContent.slice(0, 40));
  }
  m = text.match(/\b(chapter|appendix)\s+(\w+)\s+\(\1\s+\2\)/i);
  if (m) out.push("a reference said twice: " + m[0]);
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let t = walk.nextNode(); t; t = walk.nextNode())
    if (/arXiv:\d{4}\.\d{4,5}|https?:\/\//.test(t.data) &&
        !t.parentElement.closest(file === "references.html" ? "a" : "a, pre, code"))
      out.push("an address that is not a link: " + t.data.slice(0, 60));
  if (!document.querySelector("details.sidebar nav a[href]"))
    out.push("no contents beside the text");
  if (!document.querySelector('form.search input[name="q"]'))
    out.push("no search box");
  const chunks = document.querySelectorAll(".chunk").length;
  const copies = document.querySelectorAll(".chunk button.copy").length;
  if (chunks !== copies) out.push(chunks + " chunks but " + copies + " copy buttons");
  return out;
}
function figureChecks() {
  const out = [], full = [], seen = new Set();
  for (const e of document.querySelectorAll("[id]")) {
    if (seen.has(e.id)) out.push("the id " + e.id + " is used twice");
    seen.add(e.id);
  }
  for (const f of document.querySelectorAll("main figure")) {
    const name = "figure " + (f.id || "without an id");
    const pic = f.querySelector("svg, img");
    if (!pic) { out.push(name + " shows no picture"); continue; }
    const inline = pic.tagName.toLowerCase() === "svg";
    let alt = (inline ? pic.getAttribute("aria-label")
                      : pic.getAttribute("alt")) || "";
    if (inline && !alt)
      alt = (pic.getAttribute("aria-labelledby") || "").split(/\s+/).map((i) =>
        document.getElementById(i) ? document.getElementById(i).textContent
                                   : "").join(" ");
    if (inline && pic.getAttribute("role") !== "img")
      out.push(name + ": its SVG is not marked role=\"img\"");
    const rest = alt.replace(/^\s*(Figure|Table)\s+[A-Z]?\d+(\.\d+)*\.?/, "");
    if (rest.trim().length < 10)
      out.push(name + " has the text alternative '" + alt.slice(0, 40) +
               "', which does not say what it shows");
    if (inline && pic.outerHTML.length > 300 * 1024)
      out.push(name + ": its inline SVG is " + (pic.outerHTML.length >> 10) + " KB");
    const texts = inline ? [...pic.querySelectorAll("text")].map((t) =>
      t.textContent.replace(/\s+/g, " ").trim()).filter((t) => t) : [];
    if (!texts.length)
      out.push(name + " has no text a reader can select or find (" +
               (inline ? "an SVG of outlines" : "an <img>") + ")");
    else {
      const all = texts.join(" "), letters = all.replace(/[^a-z]/gi, "").length;
      const run = all.match(/[a-z]{20,}/i);
      if (run || (letters >= 40 && !/ /.test(all)))
        out.push(name + ": its words run together: " +
                 (run ? run[0] : all.slice(0, 40)));
      const line = texts.reduce((a, b) => (b.length > a.length ? b : a)).slice(0, 60);
      getSelection().removeAllRanges();
      let found = false;
      for (let i = 0; i < 50 && window.find(line, false, false, false); i++)
        if (f.contains(getSelection().anchorNode)) { found = true; break; }
      getSelection().removeAllRanges();
      if (!found)
        out.push(name + ": the browser's search does not find '" + line + "' in it");
      if (getComputedStyle(pic.querySelector("text")).userSelect === "none")
        out.push(name + ": its text cannot be selected");
    }
    const a = [...f.querySelectorAll("a[href]")].find((l) =>
      /^fig\/[^#]+\.svg$/.test(l.getAttribute("href")));
    if (!a) out.push(name + " has no link that opens it at full size");
    else {
      const s = getComputedStyle(a);
      if (a.tabIndex < 0 || s.display === "none" || s.visibility === "hidden" ||
          a.getBoundingClientRect().width === 0)
        out.push(name + ": its full-size link cannot be reached");
      full.push(a.getAttribute("href"));
    }
  }
  return { out, full };
}

async function shoot(page, file, id, name) {
  for (const width of [1280, 400]) {
    await page.setViewportSize({ width, height: width === 400 ? 860 : 900 });
    await page.goto(pathToFileURL(path.join(site, file)).href);
    const found = await page.evaluate((id) => {
      const e = document.getElementById(id);
      if (!e) return false;
      (e.closest("figure") || e).scrollIntoView({ block: "start" });
      return true;
    }, id);
    if (!found) { fail(file, "no element #" + id + " for the screenshot"); continue; }
    const out = path.join(shots, name + "-" + width + ".png");
    await page.screenshot({ path: out });
    console.log("test-html: screenshot " + path.relative(process.cwd(), out));
  }
}

(async () => {
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update",
      "--disable-sync"] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  let current = "";
  page.on("console", (m) => {
    if (m.type() === "error") fail(current, "console error: " + m.text());
  });
  page.on("pageerror", (e) => fail(current, "page error: " + e.message));
  page.on("requestfailed", (r) => fail(current, "failed to load " + r.url()));
  const ids = {}, links = {}, chunkHeads = {}, usedIdents = new Set();
  const fullSize = new Set();
  let nlinks = 0, nimages = 0, nvals = 0, nsearch = 0, identIndex = [];
  for (const file of files) {
    current = file;
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(pathToFileURL(path.join(site, file)).href, { waitUntil: "load" });
    const r = await page.evaluate(inspect);
    for (const [re, what] of RAW) {
      const m = r.text.match(re);
      if (m) {
        const at = r.text.indexOf(m[0]);
        fail(file, "raw LaTeX (" + what + ") in the text: ..." +
          r.text.slice(Math.max(0, at - 40), at + 40).replace(/\s+/g, " ") + "...");
      }
    }
    if (r.katexErrors) fail(file, r.katexErrors + " formulas KaTeX could not render");
    const seen = new Set(await page.evaluate(readerChecks, file));
    // the faces the figures ask for first are the site's, and loaded
    for (const fam of await page.evaluate(async () => {
      await document.fonts.ready;
      const want = new Set([...document.querySelectorAll("main svg [font-family]")]
        .map((e) => e.getAttribute("font-family").split(",")[0].replace(/'/g, "")));
      return [...want].filter((f) => ![...document.fonts].some((x) =>
        x.family.replace(/"/g, "") === f && x.status === "loaded"));
    })) fail(file, "the figures' font " + fam + " is not loaded");
    for (const what of seen) fail(file, what);
    const figs = await page.evaluate(figureChecks);
    for (const what of figs.out) fail(file, what);
    for (const f of figs.full) fullSize.add(f);
    chunkHeads[file] = r.chunks;
    for (const u of r.used) usedIdents.add(u);
    if (file === "index-of-identifiers.html") identIndex = r.identIndex;
    ids[file] = new Set(r.ids);
    links[file] = r.links;
    for (const img of r.images) {
      nimages += 1;
      if (!img.ok) fail(file, "image " + img.src + " did not load");
    }
    for (const [key, value] of Object.entries(values[file] || {})) {
      const shown = r.vals.filter((v) => v.key === key);
      nvals += 1;
      if (shown.length === 0) fail(file, "the value " + key + " is not shown");
      for (const v of shown)
        if (digits(v.text) !== digits(value))
          fail(file, "the value " + key + " shows '" + v.text +
            "', the book data say '" + value + "'");
    }
    // A phone: no horizontal scrolling of the page itself.
    await page.setViewportSize({ width: 400, height: 860 });
    const wide = await page.evaluate(() => {
      const W = document.documentElement.clientWidth;
      // a box that scrolls, or one that clips on purpose (an SVG's
      // viewport, KaTeX's boxes); not the column itself, which clips
      // only KaTeX's hidden MathML and must not hide what it cuts
      const cuts = (a) => {
        const o = getComputedStyle(a).overflowX;
        return /auto|scroll/.test(o) || (o !== "visible" && a.tagName !== "MAIN");
      };
      const cut = [];
      for (const e of document.querySelectorAll("body *")) {
        if (e.closest(".katex-mathml")) continue;
        const r = e.getBoundingClientRect();
        if (r.width === 0 || r.right <= W + 1) continue;
        let a = e.parentElement, inside = false;
        for (; a && a !== document.body; a = a.parentElement)
          if (cuts(a)) { inside = true; break; }
        if (!inside)
          cut.push(e.tagName.toLowerCase() + " '" + e.textContent.slice(0, 40) + "'");
      }
      return { scroll: document.documentElement.scrollWidth - W, cut };
    });
    for (const what of await page.evaluate(readerChecks, file))
      if (!seen.has(what)) fail(file, what + " (at 400 px)");
    if (wide.scroll > 0)
      fail(file, "scrolls sideways by " + wide.scroll + " px at 400 px wide");
    for (const c of wide.cut.slice(0, 3))
      fail(file, "wider than 400 px and not in a scrolling box: " + c);
  }
  for (const file of files) {
    for (const href of links[file]) {
      if (/^https?:/.test(href)) {
        const at = /\/blob\/d65ef2c\/model\/model_minimind\.py#L\d+(-L\d+)?$/;
        if (/minimind/.test(href) && !at.test(href))
          fail(file, "a MiniMind link not at commit d65ef2c: " + href);
        continue;
      }
      nlinks += 1;
      const [target, hash] = href.split("#");
      const tf = target === "" ? file : target;
      if (!/\.html$/.test(tf)) {        // a figure's own file
        if (!fs.existsSync(path.join(site, tf)))
          fail(file, "link to a missing file: " + href);
        continue;
      }
      if (!ids[tf]) { fail(file, "link to a missing page: " + href); continue; }
      if (hash !== undefined && !ids[tf].has(decodeURIComponent(hash)))
        fail(file, "link to a missing anchor: " + href);
    }
  }
  const CI = "index-of-concepts.html";
  if (!ids[CI]) fail(CI, "the index of concepts is missing");
  const indexed = new Set((links[CI] || []).filter((h) => h.includes("#idx-")));
  for (const file of files)
    for (const id of ids[file])
      if (/^idx-\d+$/.test(id) && !indexed.has(file + "#" + id))
        fail(file, "index anchor " + id + " is not in the index of concepts");
  const names = {};
  for (const file of files)
    for (const c of chunkHeads[file] || []) {
      const m = c.name.match(/^\u27E8(.*) (\d+)\u27E9$/);
      if (!m) {
        fail(file, "chunk " + c.no + " has no number in its name: " + c.name);
        continue;
      }
      (names[m[1]] = names[m[1]] || []).push({ file, n: Number(m[2]), ...c });
    }
  for (const [name, pieces] of Object.entries(names)) {
    const first = Math.min(...pieces.map((c) => c.no));
    for (const c of pieces) {
      if (c.n !== first)
        fail(c.file, "chunk " + c.no + " is named " + name + " " + c.n +
             ", its first piece is " + first);
      if (c.cont && !c.prev)
        fail(c.file, "chunk " + c.no + " does not link to its previous piece");
    }
  }
  const listed = new Map(identIndex.map(([name, used]) => [name, used]));
  for (const name of usedIdents)
    if (!listed.has(name)) fail("index-of-identifiers.html", name + " is not listed");
    else if (!listed.get(name))
      fail("index-of-identifiers.html", name + " is used but its uses are not listed");
  const TERMS = [["chapter-1.html", "permutation"], ["chapter-2.html", "wavelength"],
    ["chapter-3.html", "rotate_half"], ["chapter-4.html", "attention_factor"],
    ["chapter-5.html", "online softmax"], ["chapter-6.html", "ring attention"],
    ["chapter-7.html", "perplexity"]];
  await page.setViewportSize({ width: 1280, height: 900 });
  for (const [want, term] of TERMS) {
    current = "search for " + term;
    try {
      await page.goto(pathToFileURL(path.join(site, "search.html")).href + "?q=" +
                      encodeURIComponent(term));
    } catch (e) {
      fail(current, "no search page: " + e.message.split("\n")[0]);
      await page.waitForTimeout(500);     // let the error page finish loading
      break;
    }
    const hit = await page.evaluate((want) => {
      const a = [...document.querySelectorAll("#search-results ol a")];
      const h = a.find((x) => x.getAttribute("href").startsWith(want + "?"));
      return { n: a.length, href: h ? h.href : null };
    }, want);
    if (!hit.href) { fail(current, hit.n + " results, none on " + want); continue; }
    await page.goto(hit.href);
    const mark = await page.evaluate(() => {
      const m = document.getElementById("search-hit");
      if (!m) return null;
      const r = m.getBoundingClientRect();
      return { text: m.textContent, seen: r.top >= 0 && r.bottom <= innerHeight };
    });
    if (!mark) fail(current, "landed on " + hit.href + " with no term marked");
    else if (mark.text.toLowerCase() !== term.split(" ")[0] &&
             mark.text.toLowerCase() !== term)
      fail(current, "marked '" + mark.text + "'");
    else if (!mark.seen) fail(current, "the marked term is outside the window");
    nsearch += 1;
  }
  current = "copy button";
  await page.goto(pathToFileURL(path.join(site, "chapter-3.html")).href);
  const hasButton = await page.evaluate(() => {
    Object.defineProperty(navigator, "clipboard", { configurable: true,
      value: { writeText: (t) => {
        window.ropeCopied = t;
        return Promise.resolve();
      } } });
    document.execCommand = () => {
      window.ropeCopied = document.activeElement.value;
      return true;
    };
    const b = document.querySelector(".chunk button.copy");
    if (b) b.focus();
    return !!b && document.activeElement === b;
  });
  if (hasButton) {
    await page.keyboard.press("Enter");
    await page.waitForTimeout(100);
  }
  const copy = await page.evaluate(() => {
    const b = document.querySelector(".chunk button.copy");
    if (!b) return { label: "(no button)" };
    return { label: b.textContent, text: window.ropeCopied,
             want: b.closest(".chunk").querySelector("pre").textContent };
  });
  if (copy.label !== "Copied")
    fail(current, "the button says '" + copy.label + "' after Enter");
  if (copy.text !== copy.want)
    fail(current, "the clipboard did not receive the chunk's code");
  current = "contents";
  for (const [width, open] of [[1280, true], [400, false]]) {
    await page.setViewportSize({ width, height: 860 });
    await page.goto(pathToFileURL(path.join(site, "chapter-3.html")).href);
    const isOpen = await page.evaluate(() =>
      (document.querySelector("details.sidebar") || {}).open);
    if (isOpen !== open)
      fail(current, "at " + width + " px the contents are " +
           (isOpen ? "open" : "closed"));
    if (!open && isOpen === false) {
      await page.focus("details.sidebar summary");
      await page.keyboard.press("Enter");
      if (!await page.evaluate(() => document.querySelector("details.sidebar").open))
        fail(current, "the summary does not open the contents from the keyboard");
    }
  }
  const figdir = path.join(site, "fig");
  for (const f of fs.existsSync(figdir) ? fs.readdirSync(figdir) : []) {
    const size = fs.statSync(path.join(figdir, f)).size;
    if (size > 300 * 1024)
      fail("fig/" + f, Math.round(size / 1024) + " KB, above the 300 KB of a figure");
  }
  for (const f of [...fullSize].sort()) {
    current = f;
    if (!fs.existsSync(path.join(site, f))) {
      fail(f, "the full-size figure is missing");
      continue;
    }
    await page.goto(pathToFileURL(path.join(site, f)).href, { waitUntil: "load" });
    const n = await page.evaluate(() => document.documentElement.tagName.toLowerCase()
      === "svg" ? document.querySelectorAll("text").length : -1);
    if (n <= 0)
      fail(f, "the full-size figure " + (n < 0 ? "is not an SVG" : "has no text"));
  }
  fs.mkdirSync(shots, { recursive: true });
  current = "screenshots";
  await shoot(page, "chapter-2.html", "fig:sinusoidal-heatmap", "ch2-heatmap");
  await shoot(page, "chapter-3.html", "fig:rotary-plane", "ch3-rotation");
  await shoot(page, "chapter-5.html", "fig:attention-tiles", "ch5-tiles");
  await browser.close();
  for (const p of problems.slice(0, 60)) console.error("test-html: " + p);
  if (problems.length > 60)
    console.error("test-html: ... and " + (problems.length - 60) + " more");
  console.log("test-html: " + files.length + " pages, " + nlinks +
    " internal links, " + nimages + " images, " + nvals +
    " book values, " + nsearch + " searches checked; " + problems.length +
    " problems");
  process.exit(problems.length ? 1 : 0);
})().catch((e) => { console.error("test-html: " + e.message); process.exit(2); });
