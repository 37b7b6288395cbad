// The page's words: every number and sentence the page writes, as the kernel's Python writes them.
//
// Python's number formats (format specs .Nf and .Ng, ties rounded to even) with the learner's
// language's marks, a slider's readout, the messages of the page data said with their fields and
// plural forms (say), the colour scale's fitted end (scaleTop), and the text summary of attention
// weights (describeWeights). Each ports a d2lmini function named beside it; tests/test_page_js_node.py
// runs them under Node against Python. It reads the page's settings (colours.js) and touches no page,
// so that Node can load it alone.
"use strict";

(function () {
  const D2L = (window.D2L = window.D2L || {}); // the namespace the shell's parts share (explorers.js)
  const SETTINGS = window.D2L_SETTINGS; // page.colour_script
  const TOPS = SETTINGS.tops; // figure.SCALE_TOPS

  // d3-format's "r" as controls.readout_text writes it: `digits` significant digits, never an exponent,
  // thousands grouped when `grouped` (10,000; 3.16; 17.8).
  function formatR(value, digits, grouped) {
    const rounded = Number(value.toPrecision(digits));
    const exponent = rounded === 0 ? 0 : Math.floor(Math.log10(Math.abs(rounded)));
    const text = fixed(rounded, Math.max(0, digits - 1 - exponent));
    return grouped ? text.replace(/^-?\d+/, (whole) => whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",")) : text;
  }

  // Python's format(value, "g") with `digits` significant digits: 0.5, 1e-05, 17800, 0.0312.
  function formatG(value, digits) {
    if (value === 0) return "0";
    if (!Number.isFinite(value)) return String(value);
    let [mantissa, exponent] = value.toExponential(digits - 1).split("e");
    exponent = Number(exponent);
    if (exponent < -4 || exponent >= digits) {
      mantissa = mantissa.includes(".") ? mantissa.replace(/\.?0+$/, "") : mantissa;
      const sign = exponent < 0 ? "-" : "+";
      return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, "0")}`;
    }
    const text = fixed(value, Math.max(0, digits - 1 - exponent)); // an exact tie rounds to even, as Python's
    return text.includes(".") ? text.replace(/\.?0+$/, "") : text;
  }

  // Python's format(value, f".{digits}f"), which rounds an exact tie (0.125) to even where toFixed
  // rounds it up.
  function fixed(value, digits) {
    const exact = value.toFixed(Math.min(100, digits + 25));
    if (!new RegExp(`^-?\\d+\\.\\d{${digits}}50*$`).test(exact)) return value.toFixed(digits);
    const scaled = Math.floor(Math.abs(value) * 10 ** digits);
    const even = scaled % 2 === 0 ? scaled : scaled + 1;
    return `${value < 0 ? "-" : ""}${(even / 10 ** digits).toFixed(digits)}`;
  }
  const fixed2 = (value) => fixed(value, 2);

  // A number's text with the learner's language's marks (i18n.number): "0,41" and "13.642" in Portuguese.
  const [DECIMAL, THOUSANDS] = SETTINGS.marks;
  function marked(text) {
    if (DECIMAL === "." && THOUSANDS === ",") return text;
    return text.replace(/[.,]/g, (mark) => (mark === "." ? DECIMAL : THOUSANDS));
  }

  // Python's repr of a str of printable characters: single quotes, unless it holds ' and no ".
  function pyRepr(text) {
    const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
    const escaped = text.replace(/\\/g, "\\\\");
    return quote + (quote === "'" ? escaped.replace(/'/g, "\\'") : escaped) + quote;
  }

  // The index of a message's plural form for the count n: the language's rule (page_words.plural_rule), a C
  // expression of n that d2lmini checked at build time, which JavaScript reads alike.
  const pluralForm = new Function("n", `return Number(${SETTINGS.plural});`);

  // The message `name` of `words` (a table of page_words.py, in the learner's language) with its {fields}
  // filled as the kernel's Python fills them (i18n.Message.format): a number by its format spec (.2f,
  // .3g, g) with the language's marks, a text as it is, or as Python's repr with !r. A message said of
  // `count` is a list of its plural forms.
  function say(words, name, fields = {}, count = null) {
    let message = words[name];
    if (Array.isArray(message)) message = message[pluralForm(count)];
    return message.replace(/\{\{|\}\}|\{(\w+)(!r)?(?::([^{}]*))?\}/g, (whole, field, repr, spec = "") => {
      if (whole === "{{" || whole === "}}") return whole[0];
      const value = fields[field];
      if (value === undefined) throw new Error(`${name}: no value for its field {${field}}`);
      if (repr) return pyRepr(String(value));
      return typeof value === "number" ? marked(formatted(value, spec)) : String(value);
    });
  }
  function formatted(value, spec) {
    const [, digits = "6", kind] = /^(?:\.(\d+))?([fg]?)$/.exec(spec) || [];
    if (kind === "f") return fixed(value, Number(digits));
    if (kind === "g") return formatG(value, Number(digits));
    if (spec === "") return String(value);
    throw new Error(`the page formats a number field as .Nf, .Ng, g or plain, not ${spec}`);
  }

  // figure.scale_top: the smallest end of the colour scale at or above the largest weight.
  function scaleTop(largest) {
    if (!(largest > 0)) return 1.0;
    const fits = TOPS.filter((top) => top >= largest * (1 - 1e-6));
    return fits.length ? Math.min(...fits) : 1.0;
  }

  // A slider's value beside it, as the kernel's slider writes it (controls.readout_text).
  function readout(spec, value) {
    if (spec.kind === "FloatSlider") return marked(value.toFixed(spec.digits));
    if (spec.kind === "LogSlider") {
      const digits = Number((spec.readout.match(/\d+/) || ["3"])[0]);
      return marked(spec.readout.includes("r") ? formatR(value, digits, spec.readout.includes(",")) : formatG(value, digits));
    }
    if (spec.kind === "Choice") return spec.options.find((o) => JSON.stringify(o[1]) === JSON.stringify(value))[0];
    return String(value);
  }

  // plotting.describe_weights, word for word: the text summary of weights (panels, queries, keys), in
  // its words (plotting.SUMMARY_WORDS).
  const { queries: SUMMARY_QUERIES, keys: SUMMARY_KEYS, panels: SUMMARY_PANELS } = SETTINGS.summary;
  const summary = (name, fields, count) => say(SETTINGS.summary.words, name, fields, count);
  const counted = (name, count) => summary(name, { count }, count); // "3 queries", "1 key"
  function named(index, labels) {
    return labels ? `${index} "${labels[index]}"` : `${index}`;
  }
  function spans(indices) {
    const parts = [];
    let start = null;
    for (let i = 0; i <= indices.length; i++) {
      const index = indices[i], previous = indices[i - 1];
      if (start === null) start = index;
      else if (index !== previous + 1) {
        parts.push(start === previous ? `${start}` : `${start}-${previous}`);
        start = index;
      }
    }
    return parts.join(", ");
  }
  function representativeQueries(count, wanted) {
    if (wanted >= count) return [...Array(count).keys()];
    if (wanted === 1) return [Math.floor(count / 2)];
    const chosen = new Set();
    for (let i = 0; i < wanted; i++) chosen.add(roundHalfEven(i * (count - 1) / (wanted - 1)));
    return [...chosen].sort((a, b) => a - b);
  }
  function roundHalfEven(x) {
    const floor = Math.floor(x);
    const difference = x - floor;
    if (difference > 0.5) return floor + 1;
    if (difference < 0.5) return floor;
    return floor % 2 === 0 ? floor : floor + 1;
  }
  function describeRow(row, allowed, query, queryLabels, keyLabels) {
    const name = summary("query", { name: named(query, queryLabels) });
    const visible = row.filter((_, k) => allowed[k]);
    const total = row.reduce((a, b) => a + b, 0);
    if (!visible.length || total === 0) return summary("no key", { query: name });
    if (visible.length > 1 && Math.max(...visible) - Math.min(...visible) < 0.005) {
      return summary("evenly", { query: name, keys: counted("keys", visible.length), weight: visible[0] });
    }
    // By the weight to 4 decimals, equal ones in key order, as describe_weights does.
    const order = row.map((weight, key) => allowed[key] ? weight : -1)
      .map((value, key) => [value, key, Number(fixed(value, 4))])
      .sort((a, b) => b[2] - a[2] || a[1] - b[1]).slice(0, Math.min(SUMMARY_KEYS, visible.length));
    const parts = order.filter(([value]) => value >= 0.005)
      .map(([value, key]) => `${named(key, keyLabels)} (${marked(fixed2(value))})`);
    return summary("mostly", { query: name, keys: parts.join(summary("and")) }, parts.length);
  }
  // panels: [panel][query][key] numbers; mask: the same shape of booleans (true = may attend), or null.
  function describeWeights(panels, mask, options = {}) {
    const { queryLabels = null, keyLabels = null, titles = null, queries = null, unseen = false } = options;
    const numPanels = panels.length, numQueries = panels[0].length, numKeys = panels[0][0].length;
    const allowed = mask || panels.map((panel) => panel.map((row) => row.map(() => true)));
    let shape = `${counted("queries", numQueries)} × ${counted("keys", numKeys)}`;
    if (numPanels > 1) shape = summary("panels", { count: numPanels, shape });
    const shared = allowed.every((panel) => panel.every((row, q) => row.every((cell, k) => cell === allowed[0][q][k])));
    const masked = shared ? maskedText(allowed, unseen) : "";
    const sentences = [shape + (masked ? `, ${masked}` : "") + "."];
    const perPanel = numPanels === 1 ? SUMMARY_QUERIES : 1;
    let shown = [];
    for (let p = 0; p < Math.min(numPanels, SUMMARY_PANELS); p++) {
      shown = queries || representativeQueries(numQueries, perPanel);
      const parts = shown.map((q) => describeRow(panels[p][q], allowed[p][q], q, queryLabels, keyLabels));
      if (!shared) parts.unshift(maskedText([allowed[p]], unseen) || summary("nothing masked"));
      let text = parts.join("; ");
      if (numPanels > 1) {
        text = `${titles ? titles[p].split(/\s+/).filter(Boolean).join(" ") : summary("panel", { p })}: ${text}`;
      }
      sentences.push(text + ".");
    }
    if (numPanels > SUMMARY_PANELS) {
      sentences.push(summary("first panels", { shown: SUMMARY_PANELS, count: numPanels }));
    } else if (shown.length < numQueries) {
      sentences.push(summary("described", { queries: counted("queries", shown.length), count: numQueries }));
    }
    return sentences.map(sentence).join(" ");
  }
  // Its first letter a capital, after an opening parenthesis, unless it starts with a symbol: one
  // given a value ("σ = 0.05"), one with a modifier letter ("qᵀk"), a name in code ("d_head")
  // (plotting.sentence).
  function sentence(text) {
    const start = text.startsWith("(") ? 1 : 0;
    const word = text.slice(start).match(/^\p{L}*/u)[0];
    const after = text.slice(start + word.length);
    if (!word || /\p{Lm}/u.test(word) || /^[_\p{L}\p{N}]/u.test(after) || after.trimStart().startsWith("=")) {
      return text;
    }
    return text.slice(0, start) + text.slice(start, start + 1).toUpperCase() + text.slice(start + 1);
  }
  function maskedText(allowed, unseen = false) {
    const numPanels = allowed.length, numQueries = allowed[0].length, numKeys = allowed[0][0].length;
    let hidden = 0;
    for (const panel of allowed) for (const row of panel) for (const cell of row) if (!cell) hidden++;
    if (!hidden) return "";
    const [keys, cells, emptyRows] = unseen ? ["unseen keys", "unseen cells", "no key seen"]
      : ["masked keys", "masked cells", "no key left"];
    const always = [];
    for (let k = 0; k < numKeys; k++) {
      if (allowed.every((panel) => panel.every((row) => !row[k]))) always.push(k);
    }
    let text;
    if (hidden === always.length * numPanels * numQueries) {
      text = summary(keys, { keys: spans(always) }, always.length);
    } else {
      text = summary(cells, { hidden, total: numPanels * numQueries * numKeys });
    }
    const empty = [];
    for (let q = 0; q < numQueries; q++) if (allowed.some((panel) => panel[q].every((cell) => !cell))) empty.push(q);
    if (empty.length) text += ` (${summary(emptyRows, { queries: spans(empty) }, empty.length)})`;
    return text;
  }

  // Two JSON-ready values are the same setting (a choice may be a list: lengths (4, 8)).
  function same(a, b) {
    return JSON.stringify(a) === JSON.stringify(b);
  }

  Object.assign(D2L, { formatR, formatG, fixed, marked, say, readout, scaleTop, describeWeights, same });
})();
