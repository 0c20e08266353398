/* The HTML edition / Interactive figures / The test */
// test-interactive.js: the interactive figures against the native library.
"use strict";
const { chromium } = require("playwright-core");
const fs = require("fs");
const http = require("http");
const path = require("path");
const { execFileSync } = require("child_process");
const { pathToFileURL } = require("url");

const [site, glibcProgram, muslProgram] =
  process.argv.slice(2).map((p) => path.resolve(p));
const problems = [];
const fail = (what) => problems.push(what);
const FIGURES = {
  rope: { id: "fig:rotary-plane", page: "chapter-3.html",
    fields: ["base b", "query position m", "key position n", "pair i"],
    cases: ["4 2 5 0", "6 0 1023 47", "4 1023 0 47", "4 300 297 5",
      "6 512 700 20", "4 1023 1023 0", "6 0 0 0"], typed: 3 },
  clock: { id: "fig:sinusoidal-clocks", page: "chapter-2.html",
    fields: ["position t"],
    cases: ["10", "0", "10000", "1", "100", "1000", "9999"], typed: 3 },
  scaling: { id: "fig:scaling-wavelength-methods", page: "chapter-4.html",
    fields: ["method", "factor s", "original length L"], cases: [],
    typed: 14 },
  tiles: { id: "fig:attention-tiles", page: "chapter-5.html", fields: ["tokens N",
    "query heads per key/value head", "mask", "threads"],
    cases: ["256 2 1 2", "16 1 1 1", "4096 8 1 8", "4096 1 0 3",
      "1008 4 1 2", "80 2 0 8", "2048 4 1 5"], typed: 4 },
};
for (const s of [16, 1, 32, 3])
  for (const L of [2048, 768])
    for (let m = 0; m < 7; m++) FIGURES.scaling.cases.push(m + " " + s + " " + L);
function ask(program) {
  const lines = [];
  for (const [name, f] of Object.entries(FIGURES))
    for (const c of f.cases) lines.push(name + " " + c);
  const out = execFileSync(program, { input: lines.join("\n") + "\n",
    maxBuffer: 1 << 28 }).toString().trim().split("\n");
  const answers = {};
  out.forEach((line, j) => { answers[lines[j]] = JSON.parse(line); });
  return answers;
}
const musl = ask(muslProgram), glibc = ask(glibcProgram);
// Integers and hashes, compared as they are written; the rest are bits.
const EXACT = new Set(["count", "out", "shape", "items", "classes"]);
// a number as the figures write it: six digits, the minus sign U+2212
const shownAs = (x) => String(Number(x.toPrecision(6))).replace(/-/g, "\u2212");
const dv = new DataView(new ArrayBuffer(8));
function decode(hex) {
  if (hex.length === 8) {
    dv.setUint32(0, parseInt(hex, 16));
    return dv.getFloat32(0);
  }
  dv.setUint32(0, parseInt(hex.slice(0, 8), 16));
  dv.setUint32(4, parseInt(hex.slice(8), 16));
  return dv.getFloat64(0);
}
const count = { exact: 0, glibcExact: 0, glibcNear: 0, maxRel: 0 };
function compare(where, shown, want, near) {
  for (const [key, bits] of Object.entries(want)) {
    if (key === "in") continue;
    const list = bits.split(" ");
    const got = shown[key] ? shown[key].bits.split(" ")
      : list.map((_, j) => (shown[key + "-" + j] || {}).bits);
    if (got.length !== list.length) {
      fail(where + ": " + key + " has " + got.length +
        " numbers, the reference " + list.length);
      continue;
    }
    list.forEach((b, j) => {
      const name = key + (list.length > 1 ? "[" + j + "]" : "");
      if (got[j] === undefined) {
        fail(where + ": " + name + " is not shown");
        return;
      }
      if (got[j] !== b) { fail(where + ": " + name + " shows bits " + got[j] +
        ", the musl build computes " + b); return; }
      count.exact += 1;
      const n = near[key].split(" ")[j];
      if (n === b) { count.glibcExact += 1; return; }
      if (EXACT.has(key)) {
        fail(where + ": " + name + " is " + b + ", the glibc build computes " + n);
        return;
      }
      const a = decode(b), c = decode(n);
      const rel = Math.abs(a - c) / Math.max(1, Math.abs(a), Math.abs(c));
      const one = shown[key];
      // a number shown as text: the same six digits; a point of a curve:
      // under half a pixel of a plot at most 400 pixels tall
      const same = list.length === 1 && one && one.text !== null
        ? one.text === shownAs(c) : rel <= 2 ** -10;
      if (!same)
        fail(where + ": " + name + " is " + a + ", the glibc build computes " + c);
      else { count.glibcNear += 1; count.maxRel = Math.max(count.maxRel, rel); }
    });
    const one = shown[key];
    if (one && list.length === 1 && one.text !== null && !EXACT.has(key)) {
      const x = decode(bits), text = shownAs(x);
      if (one.text !== text)
        fail(where + ": " + key + " reads '" + one.text + "', not " + text);
    }
  }
}
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css",
  ".svg": "image/svg+xml", ".png": "image/png", ".json": "application/json",
  ".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf" };
function serve() {
  const server = http.createServer((req, res) => {
    const p = path.join(site,
      decodeURIComponent(new URL(req.url, "http://x").pathname));
    // Chromium asks every server for an icon; the edition has none.
    if (req.url === "/favicon.ico") { res.writeHead(204); res.end(); return; }
    if (!p.startsWith(site + path.sep)) { res.writeHead(403); res.end(); return; }
    fs.readFile(p, (err, data) => {
      if (err) { res.writeHead(404); res.end(); return; }
      res.writeHead(200, { "Content-Type":
        TYPES[path.extname(p)] || "application/octet-stream" });
      res.end(data);
    });
  });
  return new Promise((ok) => server.listen(0, "127.0.0.1", () => ok(server)));
}
async function setCase(page, name, values) {
  return page.evaluate(([name, labels, values]) => {
    const box = document.getElementById("rw-" + name);
    const bad = [];
    labels.forEach((label, j) => {
      const l = [...box.querySelectorAll("label")]
        .find((e) => e.textContent === label);
      const input = l && document.getElementById(l.htmlFor);
      if (!input) { bad.push("no control '" + label + "'"); return; }
      input.value = values[j];
      input.dispatchEvent(
        new Event(input.tagName === "SELECT" ? "change" : "input"));
      if (input.value !== values[j])
        bad.push("control '" + label + "' holds " + input.value +
          ", not " + values[j]);
    });
    return bad;
  }, [name, FIGURES[name].fields, values]);
}
// The same through the number boxes, typed with the keyboard (menus are
// chosen as before): first every box must show its slider's value, then
// each slider must follow the value typed into its box.
async function typeCase(page, name, values) {
  const labels = FIGURES[name].fields;
  const [ids, unsynced] = await page.evaluate(([name, labels]) => {
    const box = document.getElementById("rw-" + name);
    return [labels.map((label) => {
      const l = [...box.querySelectorAll("label")]
        .find((e) => e.textContent === label);
      return l ? l.htmlFor : null;
    }), [...box.querySelectorAll("input[type=number]")].filter((b) =>
      b.value !== document.getElementById(b.id.slice(0, -2)).value)
      .map((b) => b.getAttribute("aria-label"))];
  }, [name, labels]);
  const bad = unsynced.map((l) => "the number box of '" + l +
    "' does not show its slider's value");
  for (const [j, id] of ids.entries()) {
    if (!id) { bad.push("no control '" + labels[j] + "'"); continue; }
    const typed = await page.$("#" + id + "-n");
    if (!typed) { await page.selectOption("#" + id, values[j]); continue; }
    await typed.fill(values[j]);
    await typed.press("Tab");
    const got = await page.evaluate((id) => [document.getElementById(id).value,
      document.getElementById(id + "-n").value], id);
    if (got[0] !== values[j] || got[1] !== values[j])
      bad.push("typed " + values[j] + " into the box of '" + labels[j] +
        "': the slider holds " + got[0] + ", the box " + got[1]);
  }
  return bad;
}
async function readFigure(page, name) {
  return page.evaluate((name) => {
    const shown = {};
    const box = document.getElementById("rw-" + name);
    for (const e of box.querySelectorAll("[data-rw]"))
      shown[e.getAttribute("data-rw")] = { bits: e.getAttribute("data-bits"),
        text: e.children.length === 0 ? e.textContent : null };
    return shown;
  }, name);
}
async function widths(page, where, name) {
  for (const width of [1280, 400]) {
    await page.setViewportSize({ width, height: 900 });
    const r = await page.evaluate((name) => {
      const b = document.getElementById("rw-" + name).getBoundingClientRect();
      const W = document.documentElement.clientWidth;
      return { right: b.right, W,
        scroll: document.documentElement.scrollWidth - W };
    }, name);
    if (r.right > r.W + 1) fail(where + ": the figure reaches " + r.right +
      " px on a page " + r.W + " px wide (" + width + ")");
    if (r.scroll > 0) fail(where + ": the page scrolls sideways by " + r.scroll +
      " px at " + width + " px");
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}
async function keyboard(page, where, name) {
  const before = await readFigure(page, name);
  const step = await page.evaluate((name) => {
    const input = document.querySelector("#rw-" + name + " input[type=range]");
    input.focus();
    return [Number(input.value), Number(input.step || 1), input.id];
  }, name);
  await page.keyboard.press("ArrowRight");
  const after = await page.evaluate(
    (id) => Number(document.getElementById(id).value), step[2]);
  if (after !== step[0] + step[1])
    fail(where + ": ArrowRight moved the first slider from " + step[0] +
      " to " + after);
  const now = await readFigure(page, name);
  if (JSON.stringify(now) === JSON.stringify(before))
    fail(where + ": ArrowRight on the first slider changed no number");
}
(async () => {
  const js = fs.readFileSync(path.join(site, "interactive.js"), "latin1");
  const b64 = (js.match(/const WASM = "([A-Za-z0-9+/=]+)"/) || [])[1];
  let moduleBytes = 0;
  if (!b64) fail("interactive.js: no embedded module");
  else {
    const mod = new WebAssembly.Module(Buffer.from(b64, "base64"));
    moduleBytes = Buffer.from(b64, "base64").length;
    if (WebAssembly.Module.imports(mod).length)
      fail("the module imports " + JSON.stringify(WebAssembly.Module.imports(mod)));
  }
  const server = await serve();
  const origins = [["file", (f) => pathToFileURL(path.join(site, f)).href],
    ["http", (f) => "http://127.0.0.1:" + server.address().port + "/" + f]];
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run",
      "--disable-background-networking", "--disable-component-update"] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  let where = "";
  page.on("console", (m) => {
    if (m.type() === "error") fail(where + ": console error: " + m.text());
  });
  page.on("pageerror", (e) => fail(where + ": page error: " + e.message));
  let ncases = { file: 0, http: 0, typed: 0 };
  for (const [origin, url] of origins)
    for (const [name, f] of Object.entries(FIGURES)) {
      where = origin + " " + f.page + " " + name;
      await page.goto(url(f.page), { waitUntil: "load" });
      try {
        await page.waitForSelector("#rw-" + name + "[data-ready]",
          { timeout: 10000 });
      } catch (e) { fail(where + ": the figure did not appear"); continue; }
      const cases = origin === "file" ? f.cases : f.cases.slice(0, 2);
      for (const c of cases) {
        const bad = await setCase(page, name, c.split(" "));
        bad.forEach((b) => fail(where + " " + c + ": " + b));
        compare(where + " " + c, await readFigure(page, name),
          musl[name + " " + c], glibc[name + " " + c]);
        ncases[origin] += 1;
      }
      if (origin === "file") {
        const c = f.cases[f.typed];
        await setCase(page, name, f.cases[0].split(" "));
        const bad = await typeCase(page, name, c.split(" "));
        bad.forEach((b) => fail(where + " " + c + " typed: " + b));
        compare(where + " " + c + " typed", await readFigure(page, name),
          musl[name + " " + c], glibc[name + " " + c]);
        ncases.typed += 1;
        await widths(page, where, name);
        await keyboard(page, where, name);
      }
    }
  where = "file chapter-1.html";
  await page.goto(origins[0][1]("chapter-1.html"), { waitUntil: "load" });
  await page.waitForTimeout(300);
  if (await page.$(".rw-figure"))
    fail(where + ": an interactive box on a page without the figures");
  const off = await browser.newPage({ javaScriptEnabled: false });
  for (const [name, f] of Object.entries(FIGURES)) {
    await off.goto(origins[0][1](f.page), { waitUntil: "load" });
    const r = await off.evaluate((id) => {
      const a = document.getElementById(id), f = a && a.closest("figure");
      return { boxes: document.querySelectorAll(".rw-figure").length,
        figures: f && f.querySelector("img, svg") ? 1 : 0 };
    }, f.id);
    if (r.boxes || !r.figures)
      fail("no JavaScript, " + f.page + ": " + r.boxes + " interactive boxes, " +
        r.figures + " static figures");
  }
  await off.close();
  await browser.close();
  server.close();
  for (const p of problems.slice(0, 40)) console.error("test-interactive: " + p);
  if (problems.length > 40)
    console.error("test-interactive: ... and " + (problems.length - 40) + " more");
  console.log("test-interactive: module " + moduleBytes + " bytes, no imports; " +
    Object.keys(FIGURES).length + " figures, " + ncases.file +
    " cases from file:// (" + ncases.typed + " also typed into number boxes) " +
    "and " + ncases.http + " from http://127.0.0.1; " + count.exact +
    " numbers equal bit for bit to the musl build, " + count.glibcExact +
    " to the glibc build, " + count.glibcNear + " within " +
    count.maxRel.toExponential(2) + " of it; " + problems.length + " problems");
  process.exit(problems.length ? 1 : 0);
})().catch((e) => {
  console.error("test-interactive: " + e.message);
  process.exit(2);
});
