// The site's formulas drawn once, when it is built (tools/build_site.py, site/conf.py): no page loads
// MathJax. Reads JSON from stdin: {"formulas": [[tex, display], ...]}; writes JSON to stdout:
// {"html": [one <mjx-container> per formula], "css": the stylesheet they need}.
// Each formula is an SVG drawn in the text's colour (so it follows the dark mode), followed by its
// MathML, hidden on screen, which screen readers read (MathJax's assistive-mml).
//
//   node tools/render_math.js <path of npm's mathjax package> < formulas.json
"use strict";

const [mathjaxPath] = process.argv.slice(2);
if (!mathjaxPath) {
  process.stderr.write("usage: node tools/render_math.js <path of npm's mathjax package> < formulas.json\n");
  process.exit(2);
}

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const { formulas } = JSON.parse(input);
  require(require("path").resolve(mathjaxPath)).init({
    loader: { load: ["input/tex-full", "output/svg", "a11y/assistive-mml"] },
    svg: { fontCache: "local" },  // each formula holds its own glyphs: no page-wide cache to share
    startup: { typeset: false },
  }).then((MathJax) => {
    const adaptor = MathJax.startup.adaptor;
    const errors = [];
    const html = formulas.map(([tex, display]) => {
      const node = MathJax.tex2svg(tex, { display });
      const text = adaptor.outerHTML(node);
      if (text.includes("data-mjx-error")) errors.push(tex);
      return text;
    });
    if (errors.length) {
      process.stderr.write("MathJax could not read these formulas:\n" + errors.join("\n") + "\n");
      process.exit(1);
    }
    const css = adaptor.textContent(MathJax.svgStylesheet());
    process.stdout.write(JSON.stringify({ html, css }));
  }).catch((error) => {
    process.stderr.write(`MathJax failed: ${error.stack || error}\n`);
    process.exit(1);
  });
});
