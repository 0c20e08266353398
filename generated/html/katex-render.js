/* The HTML edition / The converter / Rendering the formulas */
// katex-render.js: render a JSON list of [tex, display] with KaTeX.
"use strict";
const katex = require(process.argv[2]);
let input = "";
process.stdin.on("data", (d) => { input += d; });
process.stdin.on("end", () => {
  const items = JSON.parse(input);
  let failed = 0;
  const out = items.map(([tex, display]) => {
    try {
      return katex.renderToString(tex, { displayMode: display,
        throwOnError: true, trust: true, strict: "ignore",
        output: "htmlAndMathml" });
    } catch (e) {
      failed += 1;
      process.stderr.write("katex-render: " + e.message + "\n  in: " + tex
        + "\n");
      return "";
    }
  });
  if (failed) {
    process.stderr.write("katex-render: " + failed + " formulas failed\n");
    process.exit(1);
  }
  process.stdout.write(JSON.stringify(out));
});
