// Runs the page's ported rules under Node for tests/test_page_js_node.py, with no browser.
//
// It reads one JSON object from stdin: `scripts`, the texts to run in order as a page would (colours.js
// first, for window.D2L_SETTINGS; then words.js and whatever else the calls need), and `calls`, a list
// of [path, ...arguments] where path names a function under `window` ("D2L.formatG"). It writes the
// list of their results, as JSON, to stdout. A call that throws gives {"error": message}.
"use strict";

const vm = require("vm");

const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
globalThis.window = globalThis; // the page scripts reach their namespace through window
input.scripts.forEach((text, i) => vm.runInThisContext(text, { filename: `script ${i}` }));

const results = input.calls.map(([path, ...args]) => {
  const names = path.split(".");
  const owner = names.slice(0, -1).reduce((object, name) => object[name], window);
  try {
    return owner[names[names.length - 1]](...args);
  } catch (error) {
    return { error: String(error.message) };
  }
});
process.stdout.write(JSON.stringify(results));
