/* The HTML edition / Interactive figures / The script of the figures */
// interactive.js: the interactive figures of the HTML edition, computed
// by the book's C library compiled to WebAssembly (embedded below).
(function () {
  "use strict";
  const WASM = "ROPE_WASM_BASE64_HERE";
  const SVG = "http://www.w3.org/2000/svg";
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svg(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  }
  const scratch = new DataView(new ArrayBuffer(8));
  function bits32(x) {
    scratch.setFloat32(0, x);
    return scratch.getUint32(0).toString(16).padStart(8, "0");
  }
  function bits64(x) {
    scratch.setFloat64(0, x);
    return scratch.getUint32(0).toString(16).padStart(8, "0") +
      scratch.getUint32(4).toString(16).padStart(8, "0");
  }
  // six significant digits, with the minus sign of mathematics (U+2212)
  function fmt(x) { return String(Number(x.toPrecision(6))).replace(/-/g, "\u2212"); }
  // Text with subscripts: "\u03c9_i", "d_model" or "L_{tr}" get a <sub>.
  function rich(parent, s) {
    let at = 0;
    for (const m of s.matchAll(/_(\{[^}]*\}|[A-Za-z0-9]+)/g)) {
      parent.append(s.slice(at, m.index),
        el("sub", {}, m[1].replace(/^\{|\}$/g, "")));
      at = m.index + m[0].length;
    }
    parent.append(s.slice(at));
    return parent;
  }
  // A singular or a plural noun for a count.
  function pl(v, one, many) { return v === 1 ? one : many || one + "s"; }
  // A number shown as text, its exact bits in data-bits.
  function num(parent, name, x, wide) {
    const s = el("span", { "data-rw": name,
      "data-bits": wide ? bits64(x) : bits32(x) }, fmt(x));
    parent.append(s);
    return s;
  }
  function f32(X, ptr, n) { return new Float32Array(X.memory.buffer, ptr, n); }
  function f64(X, ptr, n) { return new Float64Array(X.memory.buffer, ptr, n); }
  function i32(X, ptr, n) { return new Int32Array(X.memory.buffer, ptr, n); }
  function u8(X, ptr, n) { return new Uint8Array(X.memory.buffer, ptr, n); }
  let nextId = 0;
  // A labelled menu, or a labelled range slider with a number box beside
  // it (id: the slider's and "-n"); onchange runs on every change.
  function control(parent, label, spec, onchange) {
    const id = "rw-c" + (nextId++);
    const wrap = el("div", { class: "rw-control" });
    wrap.append(el("label", { for: id }, label));
    parent.append(wrap);
    if (spec.options) {
      const input = el("select", { id });
      for (const [value, text] of spec.options)
        input.append(el("option", { value }, text));
      input.value = spec.value;
      input.addEventListener("change", onchange);
      wrap.append(input);
      return input;
    }
    const range = { min: spec.min, max: spec.max, step: spec.step || 1 };
    const input = el("input", { id, type: "range", ...range });
    if (spec.wide) wrap.classList.add("rw-wide");
    const box = el("input", { id: id + "-n", type: "number", ...range,
      "aria-label": label });
    input.value = box.value = spec.value;
    input.addEventListener("input", () => { box.value = input.value; onchange(); });
    // while typing: follow every value the slider can hold as it is
    box.addEventListener("input", () => {
      if (box.value === "" || !box.checkValidity()) return;
      input.value = box.value;
      onchange();
    });
    // when done: the slider rounds and bounds the value, the box shows it
    box.addEventListener("change", () => {
      if (box.value !== "") input.value = box.value;
      box.value = input.value;
      onchange();
    });
    wrap.append(input, box);
    return input;
  }
  function addStyle() {
    const css = `
  .rw-figure { border: 1px solid #ccc; border-radius: 4px; padding: 0.6em;
    margin: 0 0 1.2em 0; max-width: 100%; box-sizing: border-box;
    overflow-wrap: anywhere; font-size: 0.92em; }
  .rw-figure .rw-title { font-weight: bold; margin: 0 0 0.4em 0; }
  .rw-controls { display: flex; flex-wrap: wrap; gap: 0.3em 1.2em; }
  .rw-control { display: flex; flex-wrap: wrap; align-items: center;
    gap: 0.2em 0.4em; }
  .rw-control input[type=range] { width: 9em; max-width: 40vw; }
  .rw-wide { flex: 1 1 28em; max-width: 40em; }
  .rw-wide input[type=range] { flex: 1 1 8em; min-width: 6em; max-width: none; }
  .rw-control input[type=number] { width: 5.5em; }
  .rw-figure svg { display: block; max-width: 100%; height: auto; }
  .rw-draw { display: flex; flex-wrap: wrap; gap: 0.8em; align-items: flex-start; }
  .rw-figure table { border-collapse: collapse; font-size: 0.9em; }
  .rw-figure td, .rw-figure th { padding: 0 0.5em; text-align: right; }
  .rw-figure details { max-width: 100%; overflow-x: auto; }
  .rw-figure p { margin: 0.3em 0; }`;
    document.head.append(el("style", {}, css));
  }
  // A semi-log or linear plot frame: maps data to a w x h box.
  function frame(w, h, x0, x1, y0, y1) {
    const L = 46, B = 24, T = 8, R = 8;
    return { L, B, T, R, w, h,
      X: (x) => L + (x - x0) / (x1 - x0) * (w - L - R),
      Y: (y) => T + (y1 - y) / (y1 - y0) * (h - T - B) };
  }
  // SVG text; "B_q" and "10^6" get a lowered or raised smaller part.
  function text(g, x, y, s, anchor, attrs) {
    const t = svg("text", { x, y, "font-size": 11,
      "text-anchor": anchor || "middle", ...attrs });
    let at = 0;
    for (const m of s.matchAll(/([_^])(\{[^}]*\}|[A-Za-z0-9]+)/g)) {
      const part = svg("tspan", { "font-size": 8,
        "baseline-shift": m[1] === "_" ? "sub" : "super" });
      part.textContent = m[2].replace(/^\{|\}$/g, "");
      t.append(s.slice(at, m.index), part);
      at = m.index + m[0].length;
    }
    t.append(s.slice(at));
    g.append(t);
    return t;
  }
  function ropeFigure(X, box) {
    const D = 96, H = 48, NPOS = 1024;
    box.append(el("p", { class: "rw-title" },
      "Try it: a query and a key of MiniMind's head (d = 96) turned by RoPE"));
    const ctl = el("div", { class: "rw-controls" });
    const draw = el("div", { class: "rw-draw" });
    const out = el("div");
    box.append(ctl, draw, out);
    const redraw = () => update();
    const m = control(ctl, "query position m",
      { min: 0, max: NPOS - 1, value: 2, wide: true }, redraw);
    const n = control(ctl, "key position n",
      { min: 0, max: NPOS - 1, value: 5, wide: true }, redraw);
    const i = control(ctl, "pair i", { min: 0, max: H - 1, value: 0 }, redraw);
    // MiniMind's rope_theta first; the base of the other figures on offer
    const base = control(ctl, "base b",
      { options: [["6", "10\u2076"], ["4", "10\u2074"]], value: "6" },
      () => { setup(); update(); });
    const plane = svg("svg", { viewBox: "-1.7 -1.7 3.4 3.4", width: 220, height: 220,
      role: "img", "aria-label": "pair i of q and k in its plane" });
    const curve = svg("svg", { viewBox: "0 0 440 220", width: 440, height: 220,
      role: "img", "aria-label": "score against the offset n - m" });
    draw.append(plane, curve);
    let curveData = null;
    function setup() {
      if (X.rw_rope_setup(Number(base.value)) !== 0)
        throw new Error("rw_rope_setup failed");
      curveData = Array.from(f64(X, X.rw_rope_curve(), 2 * NPOS - 1));
    }
    function arrow(x, y, color, dash) {
      const a = svg("line", { x1: 0, y1: 0, x2: x, y2: -y, stroke: color,
        "stroke-width": 0.05 });
      if (dash) a.setAttribute("stroke-dasharray", "0.1 0.07");
      plane.append(a, svg("circle", { cx: x, cy: -y, r: 0.07, fill: color }));
    }
    function update() {
      const M = Number(m.value), N = Number(n.value), I = Number(i.value);
      const q = f32(X, X.rw_rope_q(), NPOS * D), k = f32(X, X.rw_rope_k(), NPOS * D);
      const qm = [q[M * D + I], q[M * D + I + H]];
      const kn = [k[N * D + I], k[N * D + I + H]];
      plane.replaceChildren(
        svg("circle", { cx: 0, cy: 0, r: 1, fill: "none", stroke: "#bbb",
          "stroke-width": 0.02 }),
        svg("line", { x1: -1.6, y1: 0, x2: 1.6, y2: 0, stroke: "#999",
          "stroke-width": 0.015 }),
        svg("line", { x1: 0, y1: -1.6, x2: 0, y2: 1.6, stroke: "#999",
          "stroke-width": 0.015 }));
      arrow(1, 0, "#1f4fbf", true);
      arrow(1, 1, "#bf1f1f", true);
      arrow(qm[0], qm[1], "#1f4fbf", false);
      arrow(kn[0], kn[1], "#bf1f1f", false);
      const lo = Math.min(...curveData), hi = Math.max(...curveData);
      const F = frame(440, 220, -(NPOS - 1), NPOS - 1, lo, hi);
      let d = "";
      curveData.forEach((y, j) => {
        d += (j ? "L" : "M") + F.X(j - (NPOS - 1)).toFixed(2) + " " + F.Y(y).toFixed(2);
      });
      const line = svg("path", { d, fill: "none", stroke: "#333", "stroke-width": 0.7,
        "data-rw": "curve", "data-bits": curveData.map(bits64).join(" ") });
      curve.replaceChildren(line,
        svg("line", { x1: F.X(N - M), x2: F.X(N - M), y1: F.T, y2: F.h - F.B,
          stroke: "#bf1f1f" }),
        svg("circle", { cx: F.X(N - M), cy: F.Y(X.rw_rope_score(M, N)), r: 3.5,
          fill: "#bf1f1f" }),
        svg("line", { x1: F.L, x2: F.w - F.R, y1: F.h - F.B, y2: F.h - F.B,
          stroke: "#999" }),
        svg("line", { x1: F.L, x2: F.L, y1: F.T, y2: F.h - F.B, stroke: "#999" }));
      text(curve, F.X(-(NPOS - 1)), F.h - 6, String(-(NPOS - 1)));
      text(curve, F.X(0), F.h - 6, "0   offset n \u2212 m");
      text(curve, F.X(NPOS - 1), F.h - 6, String(NPOS - 1), "end");
      const tick = (v) => v.toFixed(1).replace("-", "\u2212");
      text(curve, F.L - 4, F.Y(hi) + 8, tick(hi), "end");
      text(curve, F.L - 4, F.Y(lo), tick(lo), "end");
      text(curve, F.L + 6, F.T + 10, "score", "start");
      out.replaceChildren();
      const p1 = el("p"), p2 = el("p"), p3 = el("p");
      rich(p1, "pair " + I + " (coordinates " + I + " and " + (I + H) +
        "): \u03c9_i = ");
      num(p1, "omega", f32(X, X.rw_rope_inv_freq(), H)[I]);
      rich(p1, ", m\u03c9_i = ");
      num(p1, "angle-m", X.rw_rope_angle(M, I), true);
      rich(p1, " rad, n\u03c9_i = ");
      num(p1, "angle-n", X.rw_rope_angle(N, I), true);
      p1.append(" rad");
      p2.append("q at m (blue): (");
      num(p2, "q0", qm[0]); p2.append(", "); num(p2, "q1", qm[1]);
      p2.append("); k at n (red): (");
      num(p2, "k0", kn[0]); p2.append(", "); num(p2, "k1", kn[1]);
      p2.append("); dashed: both at position 0, q = (1, 0), k = (1, 1)");
      rich(p3, "score q_m \u00b7 k_n over all 96 coordinates: ");
      num(p3, "score", X.rw_rope_score(M, N), true);
      p3.append("; the same offset n \u2212 m = " + (N - M) + " at positions (" +
        Math.max(0, M - N) + ", " + Math.max(0, N - M) + "): ");
      num(p3, "score-low", curveData[N - M + NPOS - 1], true);
      out.append(p1, p2, p3);
    }
    setup();
    update();
  }
  function clockFigure(X, box) {
    const HANDS = [0, 64, 128, 255];
    const COLORS = ["#d62728", "#e08a00", "#1f4fbf", "#000"];
    box.append(rich(el("p", { class: "rw-title" }),
      "Try it: the hands of pairs 0, 64, 128 and 255 " +
      "(d_model = 512, base 10\u2074) at a position t"));
    const ctl = el("div", { class: "rw-controls" });
    const dials = svg("svg", { viewBox: "0 0 440 120", width: 440, height: 120,
      role: "img", "aria-label": "four clock hands" });
    const out = el("div");
    box.append(ctl, dials, out);
    const t = control(ctl, "position t",
      { min: 0, max: 10000, value: 10, wide: true }, update);
    function update() {
      const T = Number(t.value);
      if (X.rw_clock(T) !== 0) throw new Error("rw_clock failed");
      const row = f64(X, X.rw_clock_row(), 512);
      dials.replaceChildren();
      out.replaceChildren();
      HANDS.forEach((i, h) => {
        const cx = 55 + 110 * h, cy = 55, s = row[2 * i], c = row[2 * i + 1];
        dials.append(svg("circle", { cx, cy, r: 45, fill: "none", stroke: "#999" }),
          svg("line", { x1: cx, y1: cy, x2: cx + 40 * s, y2: cy - 40 * c,
            stroke: COLORS[h], "stroke-width": 3 }));
        text(dials, cx, 116, "i = " + i);
        const p = el("p");
        rich(p, "i = " + i + ": \u03c9_i = ");
        num(p, "omega-" + h, X.rw_clock_omega(i), true);
        rich(p, ", sin t\u03c9_i = ");
        num(p, "sin-" + h, s, true);
        rich(p, ", cos t\u03c9_i = ");
        num(p, "cos-" + h, c, true);
        out.append(p);
      });
    }
    update();
  }
  function scalingFigure(X, box) {
    const H = 48, LTR = 768;
    box.append(rich(el("p", { class: "rw-title" }),
      "Try it: the wavelengths of MiniMind's pairs " +
      "(d = 96, b = 10\u2076, trained at L_tr = 768) under a method"));
    const ctl = el("div", { class: "rw-controls" });
    const plot = svg("svg", { viewBox: "0 0 440 240", width: 440, height: 240,
      role: "img", "aria-label": "wavelength of each pair" });
    const out = el("div");
    box.append(ctl, plot, out);
    const method = control(ctl, "method", { options: [["0", "none"],
      ["1", "linear (PI)"], ["2", "NTK-aware"], ["3", "dynamic NTK"],
      ["4", "YaRN (MiniMind)"], ["5", "YaRN (Hugging Face)"], ["6", "llama3"]],
      value: "4" }, update);
    const s = control(ctl, "factor s", { min: 1, max: 32, value: 16 }, update);
    const L = control(ctl, "original length L", { options: [["768",
      "768 (trained length)"], ["2048", "2048 (MiniMind's)"]], value: "2048" },
      update);
    function update() {
      const S = Number(s.value), LL = Number(L.value), N = S * LL;
      const count = X.rw_scaling(Number(method.value), S, LL);
      if (count < 0) throw new Error("rw_scaling failed");
      const inv = Array.from(f32(X, X.rw_scaling_inv_freq(), H));
      const omega = Array.from(f32(X, X.rw_scaling_omega(), H));
      const lam = Array.from(f64(X, X.rw_scaling_lambda(), H));
      const chi = Array.from(f64(X, X.rw_scaling_chi(), H));
      const outs = Array.from(i32(X, X.rw_scaling_out(), H));
      const base = omega.map((w) => 2 * Math.PI / w);
      const top = Math.ceil(Math.log10(Math.max(...lam, ...base, N)));
      const F = frame(440, 240, 0, H - 1, 0, top);
      const ly = (v) => F.Y(Math.log10(v));
      const path = (ys) => ys.map((v, j) => (j ? "L" : "M") + F.X(j).toFixed(1) +
        " " + ly(v).toFixed(1)).join("");
      plot.replaceChildren(
        svg("line", { x1: F.L, x2: F.w - F.R, y1: F.h - F.B, y2: F.h - F.B,
          stroke: "#999" }),
        svg("line", { x1: F.L, x2: F.L, y1: F.T, y2: F.h - F.B, stroke: "#999" }));
      for (const [v, color, dash] of [[LTR, "#d62728", "5 3"], [LL, "#000", "5 3"],
          [N, "#000", "1 3"]])
        plot.append(svg("line", { x1: F.L, x2: F.w - F.R, y1: ly(v), y2: ly(v),
          stroke: color, "stroke-dasharray": dash }));
      plot.append(svg("path", { d: path(base), fill: "none", stroke: "#999",
        "stroke-width": 2 }),
        svg("path", { d: path(lam), fill: "none", stroke: "#1f4fbf", "stroke-width": 1.5,
          "data-rw": "lambda", "data-bits": lam.map(bits64).join(" ") }));
      outs.forEach((o, j) => {
        if (o) plot.append(svg("circle", { cx: F.X(j), cy: ly(lam[j]), r: 3.5,
          fill: "none", stroke: "#d62728", "stroke-width": 1.5 }));
      });
      for (let e = 0; e <= top; e += top > 6 ? 2 : 1)
        text(plot, F.L - 4, F.Y(e) + 4, "10^" + e, "end");
      text(plot, F.X(0), F.h - 6, "pair 0");
      text(plot, F.X(H - 1), F.h - 6, "pair 47", "end");
      out.replaceChildren();
      out.append(rich(el("p"), "Grey: the wavelengths without scaling; blue: the " +
        "method's; red circles: the pairs that leave their trained arc. Lines: " +
        "L_tr (red dashed), L (black dashed), sL (dotted)."));
      const p = el("p");
      p.append("N = sL = " + N + " positions; pairs that leave their trained arc: ");
      p.append(el("span", { "data-rw": "count", "data-bits": String(count) },
        String(count)));
      const slow = chi.filter((c, j) => 2 * Math.PI / omega[j] > LTR);
      const which = outs.map((o, j) => o ? j : -1).filter((j) => j >= 0);
      rich(p, " of the " + slow.length + " that never turn within L_tr" +
        (count ? " (" + pl(count, "pair") + " " + which.join(", ") + ")" : "") +
        "; attention factor ");
      num(p, "attention-factor", X.rw_scaling_attention_factor(), true);
      out.append(p);
      const det = el("details"), tab = el("table", { "data-rw": "out",
        "data-bits": outs.join(" ") });
      det.append(el("summary", {}, "the numbers of every pair"), tab);
      const head = el("tr");
      for (const c of ["i", "\u03c9\u2032_i", "\u03bb\u2032_i", "\u03c7_i", "out"])
        head.append(rich(el("th"), c));
      tab.append(head);
      for (let j = 0; j < H; j++) {
        const tr = el("tr"), c = [el("td", {}, String(j)), el("td"), el("td"), el("td"),
          el("td", {}, outs[j] ? "yes" : "")];
        num(c[1], "inv-freq-" + j, inv[j]);
        num(c[2], "lambda-" + j, lam[j], true);
        num(c[3], "chi-" + j, chi[j], true);
        tr.append(...c);
        tab.append(tr);
      }
      out.append(det);
    }
    update();
  }
  function tilesFigure(X, box) {
    const BK = 64, COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
      "#9467bd", "#8c564b", "#e377c2", "#17becf"];
    box.append(rich(el("p", { class: "rw-title" }),
      "Try it: the tiles and work items of a prefill of MiniMind's shape " +
      "(d = 96, 2 key/value heads, B_k = 64)"));
    const ctl = el("div", { class: "rw-controls" });
    const G = 280, OX = 34, OY = 18; /* the grid's side and its corner */
    const grid = svg("svg", { width: OX + G + 6, height: OY + G + 6,
      viewBox: "0 0 " + (OX + G + 6) + " " + (OY + G + 6), role: "img",
      "aria-label": "tiles of key/value head 0" });
    const out = el("div"), draw = el("div", { class: "rw-draw" });
    draw.append(grid);
    box.append(ctl, draw, out);
    const n = control(ctl, "tokens N",
      { min: 16, max: 4096, step: 16, value: 256, wide: true }, update);
    const rep = control(ctl, "query heads per key/value head",
      { options: [["1", "1"], ["2", "2"], ["4", "4"], ["8", "8"]], value: "2" },
      update);
    const causal = control(ctl, "mask", { options: [["1", "causal"], ["0", "none"]],
      value: "1" }, update);
    const th = control(ctl, "threads", { min: 1, max: 8, value: 2 }, update);
    function update() {
      const N = Number(n.value);
      if (X.rw_tiles(N, Number(rep.value), Number(causal.value),
          Number(th.value)) !== 0)
        throw new Error("rw_tiles failed");
      const S = Array.from(i32(X, X.rw_tiles_shape(), 12));
      const [bq, nqb, ntk, , units, items, threads] = S;
      const cls = u8(X, X.rw_tiles_class(), nqb * ntk);
      const it = Array.from(i32(X, X.rw_tiles_items(), items * 6));
      const sc = G / N, px = (v) => Number((v * sc).toFixed(2));
      grid.replaceChildren();
      const paths = ["", "", ""];
      let h = 2166136261;
      for (let b = 0; b < nqb; b++)
        for (let t = 0; t < ntk; t++) {
          const c = cls[b * ntk + t];
          h = Math.imul(h ^ c, 16777619) >>> 0;
          const y = b * bq, x = t * BK;
          const w = Math.min(BK, N - x), hh = Math.min(bq, N - y);
          paths[c] += "M" + x + " " + y + "h" + w + "v" + hh + "h" + (-w) + "z";
        }
      const fills = ["#fff", "#d0d0d0", "#707070"];
      const cells = svg("g", { transform: "translate(" + OX + " " + OY + ") scale(" +
        sc + ")" });
      paths.forEach((d, c) => {
        if (d) cells.append(svg("path", { d, fill: fills[c] }));
      });
      grid.append(cells);
      let rows = "", cols = "";
      const rowLines = bq * sc >= 3;
      if (rowLines)
        for (let b = 1; b < nqb; b++)
          rows += "M" + OX + " " + (OY + px(b * bq)) + "h" + G;
      for (let t = 1; t < ntk; t++)
        cols += "M" + (OX + px(t * BK)) + " " + OY + "v" + G;
      if (rows)
        grid.append(svg("path", { d: rows, stroke: "#999", "stroke-width": 0.5 }));
      if (cols) grid.append(svg("path", { d: cols, stroke: "#000",
        "stroke-width": BK * sc >= 8 ? 1 : 0.5 }));
      for (let k = 0; k < items; k++) {
        const r = it.slice(6 * k, 6 * k + 6);
        if (r[0] !== 0) continue; /* only unit 0, key/value head 0 */
        grid.append(svg("rect", { x: OX - 13, y: OY + px(r[1] * bq), width: 10,
          height: px(Math.min(N, r[2] * bq)) - px(r[1] * bq), fill: COLORS[r[4]],
          "data-item": k }));
      }
      if (causal.value === "1")
        grid.append(svg("line", { x1: OX, y1: OY, x2: OX + G, y2: OY + G,
          stroke: "#000", "stroke-width": 1.5 }));
      grid.append(svg("rect", { x: OX, y: OY, width: G, height: G, fill: "none",
        stroke: "#000", "stroke-width": 1 }));
      text(grid, OX + G / 2, OY - 5, "keys j, tiles of B_k = " + BK);
      text(grid, OX - 18, OY + G / 2, "queries i, blocks of B_q = " + bq, "middle",
        { transform: "rotate(-90 " + (OX - 18) + " " + (OY + G / 2) + ")" });
      const hash = h.toString(16).padStart(8, "0");
      grid.setAttribute("data-rw", "classes");
      grid.setAttribute("data-bits", hash);
      out.replaceChildren();
      const p = el("p", { "data-rw": "shape", "data-bits": S.join(" ") });
      const q = (name, v) => { p.append(el("span", { "data-rw": name }, String(v))); };
      rich(p, "B_q = "); q("bq", bq);
      p.append(" " + pl(bq, "query", "queries") + " per row block, ");
      q("nqb", nqb); p.append(" " + pl(nqb, "row block") + " and "); q("ntk", ntk);
      p.append(" " + pl(ntk, "key tile") + " per head; full "); q("full", S[7]);
      p.append(", partial "); q("partial", S[8]);
      p.append(", skipped "); q("skipped", S[9]);
      p.append(". ");
      q("items", items);
      p.append(" work " + pl(items, "item") + " (" + units + " " + pl(units, "unit") +
        ", one per key/value head, each cut into " + S[3] + " " + pl(S[3], "group") +
        " of row blocks) for ");
      q("threads", threads); p.append(" " + pl(threads, "thread") +
        (Number(th.value) > threads ? " (" + th.value + " asked for: never more " +
         "threads than items)" : "") + ".");
      const p2 = el("p");
      p2.append("Simulated, if every computed tile of a row block took one " +
        "step: the call takes ");
      p2.append(el("span", { "data-rw": "span" }, String(S[10])));
      p2.append(" " + pl(S[10], "step") + "; the work is " + S[11] + " " +
        pl(S[11], "step") + ", " + (S[11] / threads).toFixed(1) + " per thread.");
      const legend = el("p", {}, "Dark grey: full tiles; light grey: partial; " +
        "white: skipped. Black lines separate the key tiles, grey lines the row " +
        "blocks" + (rowLines ? "" : " (left out here: the blocks are too thin " +
        "to draw apart)") + (causal.value === "1" ? "; the diagonal: the last " +
        "key each query sees" : "") + ". The strip on the left: the thread that " +
        "takes each item of head 0 (colours as in the list).");
      const det = el("details");
      det.append(el("summary", {}, "the items, in the order the counter hands them out"));
      const ol = el("ol", { start: 0, "data-rw": "items", "data-bits": it.join(" ") });
      for (let k = 0; k < items; k++) {
        const r = it.slice(6 * k, 6 * k + 6);
        const li = el("li", {}, "key/value head " + r[0] + ", " + (r[2] - r[1] === 1
          ? "row block " + r[1] : "row blocks " + r[1] + "\u2013" + (r[2] - 1)) +
          ", " + r[3] + " " + pl(r[3], "tile") + ", thread " + r[4] + " from time " +
          r[5]);
        li.style.color = COLORS[r[4]];
        ol.append(li);
      }
      det.append(ol);
      out.append(legend, p, p2, det);
    }
    update();
  }
  const FIGURES = {
    "fig:rotary-plane": ["rope", ropeFigure],
    "fig:sinusoidal-clocks": ["clock", clockFigure],
    "fig:scaling-wavelength-methods": ["scaling", scalingFigure],
    "fig:attention-tiles": ["tiles", tilesFigure],
  };
  const here = Object.keys(FIGURES).filter((id) => document.getElementById(id));
  if (here.length === 0) return;
  const bytes = Uint8Array.from(atob(WASM), (c) => c.charCodeAt(0));
  WebAssembly.instantiate(bytes, {}).then(({ instance }) => {
    const X = instance.exports;
    X._initialize();
    addStyle();
    for (const id of here) {
      const [name, build] = FIGURES[id];
      const anchor = document.getElementById(id);
      const box = el("div", { class: "rw-figure", id: "rw-" + name,
        role: "group", "aria-label": "interactive figure" });
      (anchor.closest("figure") || anchor).after(box);
      build(X, box);
      box.setAttribute("data-ready", "1");
    }
  }).catch((e) => console.error("interactive figures: " + e.message));
})();
