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
  };
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
  const ids = {}, links = {};
  let nlinks = 0, nimages = 0, nvals = 0;
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
      const cut = [];
      for (const e of document.querySelectorAll("body *")) {
        if (e.closest(".katex-mathml")) continue;
        const r = e.getBoundingClientRect();
        if (r.width === 0 || r.right <= W + 1) continue;
        let a = e.parentElement, inside = false;
        for (; a && a !== document.body; a = a.parentElement)
          if (getComputedStyle(a).overflowX !== "visible") { inside = true; break; }
        if (!inside)
          cut.push(e.tagName.toLowerCase() + " '" + e.textContent.slice(0, 40) + "'");
      }
      return { scroll: document.documentElement.scrollWidth - W, cut };
    });
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
  fs.mkdirSync(shots, { recursive: true });
  current = "screenshots";
  await shoot(page, "chapter-3.html", "fig:rotary-plane", "ch3-rotation");
  await shoot(page, "chapter-5.html", "fig:attention-tiles", "ch5-tiles");
  await browser.close();
  for (const p of problems.slice(0, 60)) console.error("test-html: " + p);
  if (problems.length > 60)
    console.error("test-html: ... and " + (problems.length - 60) + " more");
  console.log("test-html: " + files.length + " pages, " + nlinks +
    " internal links, " + nimages + " images, " + nvals +
    " book values checked; " + problems.length + " problems");
  process.exit(problems.length ? 1 : 0);
})().catch((e) => { console.error("test-html: " + e.message); process.exit(2); });
