// The page's shell: every explorer of a chapter, live on its web page, with no kernel and no network.
//
// d2lmini.widgets.page wrote, for each explorer, its controls, the background of each figure
// (drawn once by matplotlib), what every registered artist looks like in every state the page
// offers, and each state's caption and text summary. This script builds the controls, and on
// every change paints the state's artists over the background, as the kernel's shell does by
// blitting. Everything it needs is in the page's own scripts: it fetches nothing. It keeps no
// sentence of its own: every word it shows comes from the page data, in the learner's language.
"use strict";

(function () {
  // What d2lmini decides (page.colour_script): the colour scale's choices and fitted ends, the maps'
  // labels, how much a summary describes, the page's words, and the language's number marks and plural rule.
  const SETTINGS = window.D2L_SETTINGS;
  const TOPS = SETTINGS.tops; // figure.SCALE_TOPS
  const FONT = '"DejaVu Sans", "Bitstream Vera Sans", Verdana, Arial, sans-serif'; // matplotlib's default
  const COLOUR_SCALES = SETTINGS.scales; // Explorer.COLOUR_SCALES
  const PLAY_MS = 250; // a Play button's slider moves one step this often
  const PREPARED_MOST = 12; // neighbouring states made ready per state shown (PageExplorer.prepare)
  const COMPUTED_KEPT = PREPARED_MOST + 4; // and the state shown, and a few shown before it (forgetOldest)

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

  // The index of a message's plural form for the count n: the language's rule (page.plural_rule), a C
  // expression of n that d2lmini checked at build time, which JavaScript reads alike.
  const pluralForm = new Function("n", `return Number(${SETTINGS.plural});`);

  // The message `name` of `words` (a table of page.py, in the learner's language) with its {fields}
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
  const WORDS = SETTINGS.words; // page.SHELL_WORDS

  // figure.scale_top: the smallest end of the colour scale at or above the largest weight.
  function scaleTop(largest) {
    if (!(largest > 0)) return 1.0;
    const fits = TOPS.filter((top) => top >= largest * (1 - 1e-6));
    return fits.length ? Math.min(...fits) : 1.0;
  }

  // A point in an artist's data coordinates -> canvas pixels, as its (linear) axes map it.
  function toPixels(axes, x, y) {
    const [left, top, width, height, x0, x1, y0, y1] = axes;
    return [left + (x - x0) / (x1 - x0) * width, top + (y1 - y) / (y1 - y0) * height];
  }

  // The edges of a figure.CellImage of rows × columns filling its axes, in whole canvas pixels, as it
  // fills them (CellImage.edges): its axes' box rounded, each cell over the pixels whose centres fall in it.
  function cellEdges(axes, rows, columns) {
    const [left, top, width, height] = axes;
    const starts = (from, pixels, cells) => Array.from({ length: cells + 1 },
      (_, c) => from + Math.ceil((2 * c * pixels - cells) / (2 * cells)));
    const x0 = Math.floor(left + 0.5), y0 = Math.floor(top + 0.5);
    return { x: starts(x0, Math.floor(left + width + 0.5) - x0, columns),
      y: starts(y0, Math.floor(top + height + 0.5) - y0, rows) };
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

  function rgba(colour) {
    return `rgba(${colour[0]},${colour[1]},${colour[2]},${colour[3]})`;
  }

  // A value's index in a 256-colour table, as matplotlib maps it: x in [0, 1] to index floor(256 x),
  // 1 itself to the last colour; values past either end take the end colours.
  function tableIndex(value, low, high) {
    const x = (value - low) / (high - low);
    return Math.min(255, Math.max(0, Math.floor(x * 256)));
  }

  // A table's 256 colours as CSS text and as pixels, each made once per table: a state paints
  // thousands of cells, and building and parsing a colour's text for each cost most of its time.
  const tableForms = new WeakMap(); // table -> {css, pixels}
  function tableForm(table) {
    if (!tableForms.has(table)) {
      const css = [], pixels = new Uint32Array(256);
      for (let i = 0; i < 256; i++) {
        const [r, g, b] = [table[3 * i], table[3 * i + 1], table[3 * i + 2]];
        css.push(`rgb(${r},${g},${b})`);
        pixels[i] = pixel(r, g, b, 255);
      }
      tableForms.set(table, { css, pixels });
    }
    return tableForms.get(table);
  }
  function tableColour(table, value, low, high) {
    return tableForm(table).css[tableIndex(value, low, high)];
  }

  // An RGBA colour as one 32-bit pixel of an ImageData's buffer, in the machine's byte order.
  const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
  function pixel(r, g, b, a) {
    return (LITTLE_ENDIAN ? (a << 24) | (b << 16) | (g << 8) | r : (r << 24) | (g << 16) | (b << 8) | a) >>> 0;
  }

  // A canvas of width × height pixels to compose a picture in before it is drawn on the explorer's, and
  // its pixels, cleared: one per size, kept, since each state needs the same few sizes again.
  const scratches = new Map(); // "width height" -> {canvas, context, image, pixels}
  function scratch(width, height) {
    const key = `${width} ${height}`;
    if (!scratches.has(key)) {
      const canvas = document.createElement("canvas");
      canvas.width = width;
      canvas.height = height;
      const context = canvas.getContext("2d");
      const image = context.createImageData(width, height);
      scratches.set(key, { canvas, context, image, pixels: new Uint32Array(image.data.buffer) });
    }
    const made = scratches.get(key);
    made.pixels.fill(0);
    return made;
  }

  // The theme's mode (pydata-sphinx-theme sets data-theme on <html>): a dark page draws each figure's
  // dark variant (page.export: figure.dark), a light one (or a page with no theme) the figure itself.
  function pageMode() {
    return document.documentElement.dataset.theme === "dark" ? "dark" : "light";
  }

  // A figure as `mode` draws it: in the dark, each artist's style with its dark changes over it and
  // the colorbar's dark sprites. The background is decoded apart (PageExplorer.pictures).
  function figureFor(figure, mode) {
    if (mode !== "dark") return figure;
    const dark = figure.dark;
    return { ...figure, artists: figure.artists.map((style, i) => ({ ...style, ...dark.artists[i] })),
      colorbar: figure.colorbar && { ...figure.colorbar, ...dark.colorbar } };
  }

  // The colour a state gives a text (look.colour), on the page drawn now: its dark counterpart where
  // the style has one (page._dark_look_colours), else as it is.
  function lookColour(style, colour) {
    const pair = (style.look_colours || []).find(([light]) => same(light, colour));
    return pair ? pair[1] : colour;
  }

  // A picture decoded once and kept so: drawing an <img> lets the browser drop its decoded pixels and
  // decode the PNG again at a later draw (chapter 09 spent about 4 ms of a throttled press on that);
  // an ImageBitmap holds them for as long as the explorer does.
  function image(url) {
    const picture = new Image();
    picture.src = url;
    return picture.decode().then(() => ("createImageBitmap" in window ? createImageBitmap(picture) : picture));
  }

  // Painting: one function per kind of registered artist (page._ARTISTS).
  const PAINT = {
    // A grid of cells, each filling the pixels between its rounded edges (Agg fills the pixels whose
    // centres are inside). The cells are written as pixels into a picture of the grid's box, then
    // drawn once: the pixels thousands of fillRects made, for a fraction of their time. A masked cell
    // (null) stays transparent, so the hatched background shows through; a cell's own RGBA (the shape
    // tracer's) is drawn over the background with its alpha, as a fill would be.
    cells(context, style, look, colours) {
      const xs = look.x.map(Math.round), ys = look.y.map(Math.round);
      const columns = look.columns;
      const cells = look.values || look.rgba;
      const rows = cells.length / columns;
      let colourOf;
      if (look.values) {
        const pixels = tableForm(style.shared ? colours.tables[colours.cmap] : style.table).pixels;
        const [low, high] = style.shared ? [0, colours.top] : style.range;
        colourOf = (cell) => pixels[tableIndex(cell, low, high)];
      } else {
        colourOf = (cell) => pixel(cell[0], cell[1], cell[2], cell[3]);
      }
      const left = Math.min(...xs), top = Math.min(...ys);
      const width = Math.max(...xs) - left, height = Math.max(...ys) - top;
      if (!width || !height) return;
      const picture = scratch(width, height);
      const pixels = picture.pixels;
      // Edges in order (an axis's cells always are): each row of cells owns its lines of pixels, so the
      // first line is written cell by cell and copied to the others.
      const ordered = ys.every((y, i) => i === 0 || y >= ys[i - 1]) || ys.every((y, i) => i === 0 || y <= ys[i - 1]);
      for (let row = 0; row < rows; row++) {
        const y0 = Math.min(ys[row], ys[row + 1]) - top, y1 = Math.max(ys[row], ys[row + 1]) - top;
        if (y0 === y1) continue;
        for (let y = y0; y < (ordered ? y0 + 1 : y1); y++) {
          for (let column = 0; column < columns; column++) {
            const cell = cells[row * columns + column];
            if (cell === null) continue;
            const x0 = Math.min(xs[column], xs[column + 1]) - left, x1 = Math.max(xs[column], xs[column + 1]) - left;
            pixels.fill(colourOf(cell), y * width + x0, y * width + x1);
          }
        }
        if (ordered) for (let y = y0 + 1; y < y1; y++) pixels.copyWithin(y * width, y0 * width, (y0 + 1) * width);
      }
      // Drawn, not put: putImageData on the explorer's canvas would first copy all of it, since the
      // frame on screen still holds its pixels.
      picture.context.putImageData(picture.image, 0, 0);
      context.drawImage(picture.canvas, left, top);
    },
    line(context, style, look) {
      const points = look.points;
      if (style.draw) {
        context.save();
        context.strokeStyle = rgba(style.colour);
        context.lineWidth = style.width;
        context.setLineDash(style.dashes);
        context.lineJoin = "round";
        context.lineCap = style.dashes.length ? "butt" : "square"; // matplotlib: dashes butt, solid lines project
        context.beginPath();
        let pen = false;
        for (let i = 0; i < points.length; i += 2) {
          if (points[i] === null || points[i + 1] === null) { pen = false; continue; }
          if (pen) context.lineTo(points[i], points[i + 1]); else context.moveTo(points[i], points[i + 1]);
          pen = true;
        }
        context.stroke();
        context.restore();
      }
      if (style.marker) {
        for (let i = 0; i < points.length; i += 2) {
          if (points[i] === null) continue;
          marker(context, style.marker, points[i], points[i + 1], style.size / 2, style.face, style.edge,
            style.edge_width);
        }
      }
    },
    points(context, style, look) {
      const centres = look.centres;
      for (let i = 0; i < look.radii.length; i++) {
        const face = look.faces.length ? look.faces[i % look.faces.length] : null;
        const edge = look.edges.length ? look.edges[i % look.edges.length] : null;
        marker(context, "o", centres[2 * i], centres[2 * i + 1], look.radii[i], face, edge, style.width);
      }
    },
    rect(context, style, look) {
      const [x, y, width, height] = look.box;
      context.fillStyle = rgba(style.face);
      context.fillRect(x, y, width, height);
      if (style.edge) { // a frame: matplotlib strokes the edge centred on the box, mitred
        context.save();
        context.strokeStyle = rgba(style.edge);
        context.lineWidth = style.edge_width;
        context.lineJoin = "miter";
        context.strokeRect(x, y, width, height);
        context.restore();
      }
    },
    // A LineCollection: segments coloured by value through the colour scale (or each its own colour).
    segments(context, style, look, colours) {
      const table = style.shared ? colours.tables[colours.cmap] : style.table;
      const [low, high] = style.shared ? [0, colours.top] : style.range;
      context.save();
      context.lineCap = style.cap;
      context.lineJoin = "round";
      look.points.forEach((points, i) => {
        context.strokeStyle = look.values ? tableColour(table, look.values[i], low, high) : rgba(look.colours[i]);
        context.lineWidth = look.widths[i];
        context.beginPath();
        for (let k = 0; k < points.length; k += 2) context.lineTo(points[k], points[k + 1]);
        context.stroke();
      });
      context.restore();
    },
    // An artist that only shows or hides (a legend), drawn once by Agg.
    sprite(context, style, look, colours, sprites) {
      if (!style.sprite) return; // it draws nothing
      const [index, left, top] = style.sprite;
      context.drawImage(sprites[index], left, top);
    },
    text(context, style, look) {
      if (!look.text) return;
      context.save();
      context.font = `${style.weight === "bold" ? "bold " : ""}${style.size}px ${FONT}`;
      context.textAlign = { center: "center", left: "left", right: "right" }[style.align] || "left";
      context.textBaseline = { center: "middle", top: "top", bottom: "bottom", baseline: "alphabetic",
        center_baseline: "middle" }[style.baseline] || "alphabetic";
      context.translate(look.at[0], look.at[1]);
      context.rotate(-style.rotation * Math.PI / 180);
      const lines = look.text.split("\n");
      lines.forEach((line, i) => {
        const y = (i - (lines.length - 1) / 2) * style.size * 1.2;
        if (style.stroke) {
          context.lineWidth = style.stroke.width;
          context.strokeStyle = rgba(style.stroke.colour);
          context.lineJoin = "round";
          context.strokeText(line, 0, y);
        }
        context.fillStyle = rgba(look.colour ? lookColour(style, look.colour) : style.colour);
        context.fillText(line, 0, y);
      });
      context.restore();
    },
  };

  function marker(context, kind, x, y, radius, face, edge, edgeWidth) {
    context.beginPath();
    if (kind === "*") { // matplotlib's star: five points, inner radius 0.381966 of the outer
      for (let k = 0; k < 10; k++) {
        const r = k % 2 ? radius * 0.381966 : radius;
        const angle = Math.PI / 2 + k * Math.PI / 5;
        context.lineTo(x + r * Math.cos(angle), y - r * Math.sin(angle));
      }
      context.closePath();
    } else if (kind === "s") {
      context.rect(x - radius, y - radius, 2 * radius, 2 * radius);
    } else {
      context.arc(x, y, radius, 0, 2 * Math.PI);
    }
    if (face) { context.fillStyle = rgba(face); context.fill(); }
    if (edge && edgeWidth > 0) { context.lineWidth = edgeWidth; context.strokeStyle = rgba(edge); context.stroke(); }
  }

  // A radio button and its label, in one box that keeps them on one line (explorers.css): a narrow
  // screen wraps the group between its choices, never between a button and its label.
  function choice(input, text) {
    const label = document.createElement("label");
    label.htmlFor = input.id;
    label.textContent = text;
    const box = document.createElement("span");
    box.className = "d2l-choice";
    box.append(input, label);
    return box;
  }

  // The settings last chosen in each group of linked copies ("<name> <data-d2l-link>"), for a copy
  // that starts after the reader moved another (PageExplorer.linked).
  const LINKED = new Map();

  // One explorer on the page: its data (page.export), its container, its controls and its canvas.
  class PageExplorer {
    constructor(data, root, tables) {
      this.data = data;
      this.root = root;
      this.tables = tables;
      this.inputs = {}; // control name -> function giving the index of its value among the offered ones
      this.readouts = {}; // slider name -> function showing its value beside it
      this.id = root.id || `d2l-${data.name}`;
      this.pictures = {}; // layout -> {light, dark}: its backgrounds, decoded
      this.sprites = [];
      this.startAt = this.startIndices();
      this.gradients = new Map(); // "map box" -> the colorbar's gradient, painted (paintColorbar)
      // The states a page script computed, by their settings (stateKey), the latest last: the one
      // shown, those shown just before, and the neighbours made ready after it (prepare).
      this.computed = new Map();
      this.preparing = false; // whether the neighbours are being computed (prepare)
      this.drawn = false; // whether a state was drawn since the last neighbour was computed (prepare)
      this.build();
    }

    build() {
      const data = this.data;
      // A group named after the explorer (page.title: "Mask editor explorer"), so that a screen reader
      // says which explorer a control belongs to.
      this.root.setAttribute("role", "group");
      this.root.setAttribute("aria-label", data.title);
      const controls = document.createElement("div");
      controls.className = "d2l-controls";
      data.rows.forEach((row, r) => {
        const line = document.createElement(row.columns ? "fieldset" : "div");
        line.className = row.columns ? "d2l-grid" : "d2l-row";
        let label = null;
        if (row.label) {
          label = document.createElement(row.columns ? "legend" : "span");
          label.textContent = row.label;
          label.id = `${this.id}-row-${r}`;
          line.append(label);
        }
        if (label && !row.columns) { // a labelled row ("example 0:") is a group its controls belong to
          line.setAttribute("role", "group");
          line.setAttribute("aria-labelledby", label.id);
        }
        const specs = row.names.map((name) => data.controls.find((c) => c.name === name));
        if (row.columns) {
          // A grid's cells go in a box of their own: a legend among them would take a cell and shift
          // every cell after it by one.
          line.append(this.grid(specs, row.columns, label));
        } else {
          for (const spec of specs) line.append(this.control(spec));
        }
        if (row.when) line.dataset.when = JSON.stringify(row.when);
        controls.append(line);
        if (row.note) {
          const note = document.createElement("div");
          note.className = "d2l-row-note";
          note.id = `${this.id}-note-${r}`;
          note.innerHTML = row.note; // the declaration's own HTML, written by the collection
          controls.append(note);
          if (row.columns) line.querySelector("[role=grid]").setAttribute("aria-describedby", note.id);
        }
      });
      if (data.shows_weights) {
        const line = document.createElement("div");
        line.className = "d2l-row";
        line.append(this.colourScale(), this.colourMap());
        controls.append(line);
      }
      this.caption = document.createElement("p");
      this.caption.className = "d2l-caption";
      this.caption.id = `${this.id}-caption`;
      this.canvas = document.createElement("canvas");
      this.canvas.setAttribute("role", "img");
      const frame = this.frame(this.canvas);
      this.summary = document.createElement("p");
      this.summary.className = "d2l-summary";
      this.summary.id = `${this.id}-summary`;
      this.canvas.setAttribute("aria-describedby", this.summary.id);
      const note = document.createElement("p");
      note.className = "d2l-note";
      note.textContent = [say(WORDS, data.compute ? "computed" : "stored"), say(WORDS, "run"), data.coarser]
        .filter(Boolean).join(" ");
      this.root.replaceChildren(controls, this.caption, frame, this.summary, note);
      this.root.classList.add("d2l-live");
    }

    // The picture's frame. On a phone the picture keeps the size it has in the notebook, so that its
    // smallest text stays readable (explorers.css), and a swipe scrolls it inside this frame only: the
    // controls above it stay where they are. While it scrolls, the frame is a region named by the
    // caption and a Tab stop, so that the arrow keys scroll it too; while the picture fits, it is
    // neither (no landmark, no Tab stop that does nothing). It is checked whenever the frame or the
    // picture changes size: a new width of the screen, a new layout of the figure.
    frame(canvas) {
      const frame = document.createElement("div");
      frame.className = "d2l-frame";
      frame.append(canvas);
      const check = () => {
        const scrolls = frame.scrollWidth > frame.clientWidth;
        if (scrolls === frame.hasAttribute("tabindex")) return;
        if (scrolls) {
          frame.setAttribute("role", "region");
          frame.setAttribute("aria-labelledby", this.caption.id);
          frame.tabIndex = 0;
        } else {
          for (const name of ["role", "aria-labelledby", "tabindex"]) frame.removeAttribute(name);
        }
      };
      if ("ResizeObserver" in window) {
        const observer = new ResizeObserver(check);
        observer.observe(frame);
        observer.observe(canvas);
      }
      return frame;
    }

    // Where the explorer starts: control name -> offered index. The declaration's defaults (page.export's
    // start), or the settings the chapter's picture shows, which its box gives (data-d2l-start, name ->
    // value: the web site's build, build_site.start_settings, checked them against the offered values).
    startIndices() {
      const start = { ...this.data.start };
      const moved = LINKED.get(`${this.data.name} ${this.root.dataset.d2lLink}`); // a copy the reader moved first
      const given = moved || (this.root.dataset.d2lStart ? JSON.parse(this.root.dataset.d2lStart) : {});
      for (const [name, value] of Object.entries(given)) {
        const offered = this.data.offered[name];
        const index = offered ? offered.findIndex((v) => same(v, value)) : -1;
        if (index < 0) {
          throw new Error(`${this.data.name}: data-d2l-start gives ${name} = ${JSON.stringify(value)}, `
            + `expected one of ${JSON.stringify(offered)}`);
        }
        start[name] = index;
      }
      return start;
    }

    // Copies of one kernel widget (the same data-d2l-link on explorers of the same data) are one explorer
    // in the kernel: a control moved in one moves the others, quietly, and each draws again.
    linked() {
      const link = this.root.dataset.d2lLink;
      if (!link) return [];
      return [...document.querySelectorAll("[data-d2l-explorer].d2l-ready")]
        .filter((root) => root !== this.root && root.dataset.d2lLink === link
          && root.dataset.d2lExplorer === this.data.name)
        .map((root) => root.d2lExplorer);
    }

    labelled(element, text, name) {
      element.id = `${this.id}-${name}`;
      const label = document.createElement("label");
      label.htmlFor = element.id;
      label.textContent = text;
      const box = document.createElement("span");
      box.className = "d2l-control";
      box.append(label, element);
      return box;
    }

    control(spec) {
      const offered = this.data.offered[spec.name];
      const start = this.startAt[spec.name];
      const readout = (index) => this.readout(spec, offered[index]);
      let element;
      if (spec.kind === "Checkbox") {
        element = document.createElement("input");
        element.type = "checkbox";
        element.checked = Boolean(offered[start]);
        if (spec.style === "cell") { // one cell of a grid (grid): a check box in a gridcell
          element.className = "d2l-cell";
          element.setAttribute("aria-label", spec.label);
          element.title = spec.label;
          element.id = `${this.id}-${spec.name}`;
          element.tabIndex = -1; // the grid is one Tab stop: its current cell alone has tabindex 0
          element.addEventListener("change", () => this.changed(spec.name));
          this.inputs[spec.name] = () => offered.indexOf(element.checked);
          this.elements = { ...this.elements, [spec.name]: element };
          const cell = document.createElement("div");
          cell.setAttribute("role", "gridcell");
          cell.append(element);
          return cell;
        }
        this.inputs[spec.name] = () => offered.indexOf(element.checked);
      } else if (spec.kind === "Choice" && spec.style === "toggle") {
        return this.toggle(spec, offered, start);
      } else if (spec.kind === "Choice" && spec.style !== "slider") {
        element = document.createElement("select");
        offered.forEach((value, index) => {
          const option = document.createElement("option");
          option.value = String(index);
          option.textContent = spec.options.find((o) => JSON.stringify(o[1]) === JSON.stringify(value))[0];
          element.append(option);
        });
        element.value = String(start);
        this.inputs[spec.name] = () => Number(element.value);
      } else { // a slider over the offered values: IntSlider, FloatSlider, LogSlider, NumberBox, a Choice slider
        element = document.createElement("input");
        element.type = "range";
        element.min = "0";
        element.max = String(offered.length - 1);
        element.step = "1";
        element.value = String(start);
        const output = document.createElement("output");
        output.htmlFor = `${this.id}-${spec.name}`;
        const show = () => {
          output.textContent = readout(Number(element.value));
          element.setAttribute("aria-valuetext", output.textContent);
        };
        show();
        element.addEventListener("input", show);
        this.readouts[spec.name] = show;
        this.inputs[spec.name] = () => Number(element.value);
        const box = this.labelled(element, spec.label, spec.name);
        box.append(output);
        if (spec.name === this.data.play) box.append(this.player(spec.name, element));
        element.addEventListener("input", () => this.changed(spec.name));
        this.elements = { ...this.elements, [spec.name]: element };
        return this.named(spec, element, box);
      }
      element.addEventListener(element.type === "checkbox" ? "change" : "input", () => this.changed(spec.name));
      this.elements = { ...this.elements, [spec.name]: element };
      return this.named(spec, element, this.labelled(element, spec.label, spec.name));
    }

    // A control's whole name for a screen reader where its visible label is short (Control.accessible_name:
    // "q0" is "example 1, query 0, valid length"), and, for a control that can change nothing in some
    // settings (Control.inactive_when), the line that says why, shown while it is disabled (showInactive).
    named(spec, element, box) {
      if (spec.accessible_name) element.setAttribute("aria-label", spec.accessible_name);
      if (spec.inactive_when) {
        const reason = document.createElement("span");
        reason.className = "d2l-reason";
        reason.id = `${element.id}-reason`;
        reason.textContent = spec.inactive_when[2];
        reason.hidden = true;
        box.append(reason);
        this.reasons = { ...this.reasons, [spec.name]: reason };
      }
      return box;
    }

    // Disable each control that changes nothing with the settings shown (Declaration.inactive: while
    // its inactive_when setting has its value), its reason shown and tied to it (aria-describedby).
    showInactive() {
      const settings = this.settings();
      for (const spec of this.data.controls) {
        if (!spec.inactive_when) continue;
        const [name, value] = spec.inactive_when;
        const inactive = same(settings[name], value);
        const element = this.elements[spec.name], reason = this.reasons[spec.name];
        element.disabled = inactive;
        reason.hidden = !inactive;
        if (inactive) element.setAttribute("aria-describedby", reason.id);
        else element.removeAttribute("aria-describedby");
      }
    }

    // A grid of cell controls (Row.columns: the mask editor's), as the ARIA grid pattern has it: one
    // Tab stop (a roving tabindex: the cell last focused has 0, the others -1), the arrow keys move
    // between cells, Home and End to the row's ends (with Ctrl, to the grid's), Space toggles the
    // check box in focus. Rows of `columns` cells, each named "query i, key j" by its spec.
    grid(specs, columns, label) {
      const grid = document.createElement("div");
      grid.className = "d2l-cells";
      grid.setAttribute("role", "grid");
      if (label) grid.setAttribute("aria-labelledby", label.id);
      grid.style.gridTemplateColumns = "max-content"; // one column of rows; each row a grid of cells
      const boxes = [];
      for (let start = 0; start < specs.length; start += columns) {
        const line = document.createElement("div");
        line.setAttribute("role", "row");
        line.style.display = "grid";
        line.style.gap = "2px";
        line.style.gridTemplateColumns = `repeat(${columns}, 2.2em)`;
        for (const spec of specs.slice(start, start + columns)) {
          const cell = this.control(spec);
          boxes.push(cell.querySelector("input"));
          line.append(cell);
        }
        grid.append(line);
      }
      const rows = Math.ceil(boxes.length / columns);
      boxes[0].tabIndex = 0;
      const focus = (index) => {
        boxes.forEach((box, i) => { box.tabIndex = i === index ? 0 : -1; });
        boxes[index].focus();
      };
      grid.addEventListener("focusin", (event) => { // a click also makes its cell the current one
        const index = boxes.indexOf(event.target);
        if (index >= 0) boxes.forEach((box, i) => { box.tabIndex = i === index ? 0 : -1; });
      });
      grid.addEventListener("keydown", (event) => {
        const index = boxes.indexOf(event.target);
        if (index < 0) return;
        const row = Math.floor(index / columns), column = index % columns;
        const moves = {
          ArrowLeft: [row, Math.max(column - 1, 0)],
          ArrowRight: [row, Math.min(column + 1, columns - 1)],
          ArrowUp: [Math.max(row - 1, 0), column],
          ArrowDown: [Math.min(row + 1, rows - 1), column],
          Home: event.ctrlKey ? [0, 0] : [row, 0],
          End: event.ctrlKey ? [rows - 1, columns - 1] : [row, columns - 1],
        };
        if (!(event.key in moves)) return;
        event.preventDefault(); // no page scroll
        const [toRow, toColumn] = moves[event.key];
        focus(Math.min(toRow * columns + toColumn, boxes.length - 1));
      });
      return grid;
    }

    // Play/Pause for the slider `name` (Declaration.page_play: a recorded run's steps): it moves the
    // slider one step every PLAY_MS to its end, from the start again when it is there. Any input of the
    // learner pauses it (the slider dragged, another control), so it never fights the hand.
    player(name, slider) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "d2l-play";
      button.id = `${this.id}-${name}-play`;
      button.setAttribute("aria-controls", slider.id);
      let timer = null;
      const label = (playing) => {
        button.textContent = say(WORDS, playing ? "pause" : "play");
        button.dataset.playing = String(playing);
      };
      const pause = () => {
        clearInterval(timer);
        timer = null;
        label(false);
      };
      const advance = () => {
        const next = Number(slider.value) + 1;
        this.setIndex(name, next);
        this.changed(name);
        if (next >= Number(slider.max)) pause();
      };
      button.addEventListener("click", () => {
        if (timer !== null) return pause();
        if (slider.value === slider.max) {
          this.setIndex(name, 0);
          this.changed(name);
        }
        label(true);
        timer = setInterval(advance, PLAY_MS);
      });
      for (const kind of ["input", "change"]) this.root.addEventListener(kind, () => timer !== null && pause());
      label(false);
      return button;
    }

    // Toggle buttons (a Choice with style "toggle", as in the notebook): a group of radio buttons with
    // a visible name. The group reads and sets its choice through `value`, as a menu does.
    toggle(spec, offered, start) {
      const group = document.createElement("div");
      group.className = "d2l-toggle";
      group.id = `${this.id}-${spec.name}`;
      group.setAttribute("role", "radiogroup");
      const legend = document.createElement("span");
      legend.id = `${group.id}-label`;
      legend.textContent = spec.label;
      group.setAttribute("aria-labelledby", legend.id);
      group.append(legend);
      offered.forEach((value, index) => {
        const input = document.createElement("input");
        input.type = "radio";
        input.name = group.id;
        input.value = String(index);
        input.id = `${group.id}-${index}`;
        input.checked = index === start;
        group.append(choice(input, spec.options.find((o) => same(o[1], value))[0]));
      });
      Object.defineProperty(group, "value", {
        get: () => group.querySelector("input:checked").value,
        set: (index) => { group.querySelector(`input[value="${index}"]`).checked = true; },
      });
      this.inputs[spec.name] = () => Number(group.value);
      group.addEventListener("change", () => this.changed(spec.name));
      group.addEventListener("input", (event) => event.target === group && this.changed(spec.name));
      this.elements = { ...this.elements, [spec.name]: group };
      return group;
    }

    readout(spec, value) {
      if (spec.kind === "FloatSlider") return marked(value.toFixed(spec.digits));
      if (spec.kind === "LogSlider") {
        const digits = Number((spec.readout.match(/\d+/) || ["3"])[0]);
        return marked(spec.readout.includes("r") ? formatR(value, digits, spec.readout.includes(",")) : formatG(value, digits));
      }
      if (spec.kind === "Choice") return spec.options.find((o) => JSON.stringify(o[1]) === JSON.stringify(value))[0];
      return String(value);
    }

    colourScale() {
      const group = document.createElement("div");
      group.className = "d2l-toggle";
      group.setAttribute("role", "radiogroup");
      const legend = document.createElement("span");
      legend.id = `${this.id}-colour-scale`;
      legend.textContent = say(WORDS, "colours");
      group.setAttribute("aria-labelledby", legend.id);
      group.append(legend);
      for (const [label, value] of COLOUR_SCALES) {
        const input = document.createElement("input");
        input.type = "radio";
        input.name = `${this.id}-colour-scale`;
        input.value = value;
        input.id = `${this.id}-colour-scale-${value}`;
        input.checked = value === this.data.colour_scale;
        input.addEventListener("change", () => this.changed("colour_scale"));
        group.append(choice(input, label));
      }
      this.scaleGroup = group;
      return group;
    }

    colourMap() {
      const select = document.createElement("select");
      for (const name of Object.keys(this.tables)) {
        const option = document.createElement("option");
        option.value = name;
        option.textContent = SETTINGS.labels[name];
        select.append(option);
      }
      select.addEventListener("input", () => this.changed("colour_map"));
      this.mapSelect = select;
      select.setAttribute("aria-label", say(WORDS, "colour map")); // "map" alone says too little
      return this.labelled(select, say(WORDS, "map"), "colour-map");
    }

    key() {
      return this.data.controls.map((spec) => this.inputs[spec.name]()).join(",");
    }

    // A state's key in `computed`: its settings (control name -> offered value), in the controls' order.
    stateKey(settings) {
      return JSON.stringify(this.data.controls.map((spec) => settings[spec.name]));
    }

    // The settings shown now: control name -> value.
    settings() {
      const { controls, offered } = this.data;
      return Object.fromEntries(controls.map((spec) => [spec.name, offered[spec.name][this.inputs[spec.name]()]]));
    }

    // Move control `name` to the offered value number `index`, as if the learner had (no event).
    setIndex(name, index) {
      const element = this.elements[name];
      if (element.type === "checkbox") element.checked = Boolean(this.data.offered[name][index]);
      else element.value = String(index);
      if (this.readouts[name]) this.readouts[name]();
    }

    // Move the controls to `settings` (offered values), quietly: no event, so no other change follows.
    show(settings) {
      for (const spec of this.data.controls) {
        const offered = this.data.offered[spec.name];
        const index = offered.findIndex((value) => same(value, settings[spec.name]));
        if (index < 0) {
          throw new Error(`${this.data.name}: ${spec.name} must be one of the offered values `
            + `${JSON.stringify(offered)}, got ${JSON.stringify(settings[spec.name])}`);
        }
        if (index !== this.inputs[spec.name]()) this.setIndex(spec.name, index);
      }
    }

    // A control moved. A declaration whose one control sets others (Declaration.adjust: a preset
    // sets the mask editor's cells, a new sentence shows every token's lines again) has its adjust
    // ported by its page script, D2L_ADJUST[name](settings, changed, page data) -> settings; then
    // the state is drawn.
    changed(name) {
      const adjust = (window.D2L_ADJUST || {})[this.data.name];
      if (adjust && name in this.inputs) this.show(adjust(this.settings(), name, this.data.data));
      this.render();
      if (name in this.inputs && this.root.dataset.d2lLink) {
        const settings = this.settings();
        LINKED.set(`${this.data.name} ${this.root.dataset.d2lLink}`, settings); // for a copy not started yet
        for (const other of this.linked()) {
          other.show(settings);
          other.render();
        }
      }
    }

    // A menu whose options depend on other settings (Declaration.choices): the page script gives them
    // with each state, [[label, value], ...], and the menu is rebuilt when they change, its value kept.
    showChoices(choices) {
      for (const [name, options] of Object.entries(choices || {})) {
        const element = this.elements[name];
        const offered = this.data.offered[name];
        const labelled = options.map(([label, value]) => [label, offered.findIndex((v) => same(v, value))]);
        const key = JSON.stringify(labelled);
        if (element.dataset.choices === key) continue;
        const value = element.value;
        element.replaceChildren(...labelled.map(([label, index]) => {
          const option = document.createElement("option");
          option.value = String(index);
          option.textContent = label;
          return option;
        }));
        element.dataset.choices = key;
        element.value = value;
      }
    }

    async start() {
      const figures = this.data.figures;
      await Promise.all(Object.entries(figures).map(async ([layout, figure]) => {
        const [light, dark] = await Promise.all([image(figure.background), image(figure.dark.background)]);
        this.pictures[layout] = { light, dark };
      }));
      this.sprites = await Promise.all(this.data.sprites.map(image));
      this.render();
      // A live region from here on: a screen reader reads the summary again after each change, but
      // not the first, which every explorer of the page would otherwise read out as it loads.
      this.summary.setAttribute("aria-live", "polite");
    }

    // The state shown now: [layout, caption, summary, top, looks, choices], from the stored table or
    // computed (choices: see showChoices).
    state() {
      const data = this.data;
      if (!data.compute) {
        const stored = data.states[this.key()];
        if (!stored) return null;
        const [layout, caption, summary, top, ...looks] = stored;
        return [layout, data.strings[caption], data.strings[summary], top, looks.map((i) => data.looks[i])];
      }
      const settings = this.settings();
      const key = this.stateKey(settings);
      let state = this.computed.get(key);
      if (state) this.computed.delete(key); // set again below, as the latest
      else state = this.compute(settings);
      this.computed.set(key, state);
      this.forgetOldest();
      return state;
    }

    // The state at `settings` (control name -> offered value), computed by the page script. It depends
    // on the settings and the page data alone, so a state once computed is kept and reused (state).
    compute(settings) {
      const data = this.data;
      const words = (name, fields, count) => say(data.words, name, fields, count); // its script's (page.SCRIPT_WORDS)
      const result = window.D2L_COMPUTE[data.name](settings, data.data, data.figures, D2L, words);
      return [result.layout, result.caption, result.summary, result.top, result.looks, result.choices];
    }

    // At most COMPUTED_KEPT computed states kept: the oldest go first.
    forgetOldest() {
      for (const key of this.computed.keys()) {
        if (this.computed.size <= COMPUTED_KEPT) break;
        this.computed.delete(key);
      }
    }

    // A key press moves one control one step. Once the state shown is on screen, the states one step
    // away on the controls are computed, the focused control's first, at most PREPARED_MOST of them:
    // the next press then finds its state ready and spends its frame drawing it. Each is computed in a
    // task of its own, posted after the frame, so that a key pressed meanwhile waits for one state at
    // most (the browser handles input before other tasks). Not requestIdleCallback: headless Chromium
    // called it only after a long wait, or never, on a page with nothing to draw, so no state was
    // ready; and Safari lacks it. A neighbour that adjust or the valid options would move elsewhere is
    // computed when it is pressed.
    prepare() {
      if (!this.data.compute) return;
      this.drawn = true; // a new state waits for its frame: the next neighbour comes after it
      if (this.preparing) return;
      this.preparing = true;
      const channel = new MessageChannel();
      const afterFrame = () => {
        this.drawn = false;
        requestAnimationFrame(() => channel.port2.postMessage(null));
      };
      channel.port1.onmessage = () => {
        if (this.drawn) return afterFrame(); // a key moved a control meanwhile: its frame goes first
        const next = this.unprepared();
        if (!next) {
          this.preparing = false;
          return;
        }
        const [key, settings] = next;
        this.computed.set(key, this.compute(settings));
        const shownKey = this.stateKey(this.settings());
        const shown = this.computed.get(shownKey); // the state on screen stays the latest
        if (shown) {
          this.computed.delete(shownKey);
          this.computed.set(shownKey, shown);
        }
        this.forgetOldest();
        channel.port2.postMessage(null);
      };
      afterFrame();
    }

    // The first of the states one key press away (see prepare) not computed yet, as [key, settings], or
    // null when all are ready. Read again before each: a key pressed meanwhile moves the neighbourhood.
    unprepared() {
      const settings = this.settings();
      const adjust = (window.D2L_ADJUST || {})[this.data.name];
      const focused = this.data.controls.filter((spec) => this.elements[spec.name]
        && this.elements[spec.name].contains(document.activeElement));
      let prepared = 0;
      for (const spec of [...focused, ...this.data.controls.filter((spec) => !focused.includes(spec))]) {
        const element = this.elements[spec.name];
        if (!element || element.closest("[hidden]")) continue;
        const offered = this.data.offered[spec.name];
        // The offered indices a key can reach: a slider's up to its last valid value, a menu's options
        // shown (valid with the other settings, or given by the state: showChoices), any other's all.
        const reachable = element.type === "range" ? offered.map((_, i) => i).slice(0, Number(element.max) + 1)
          : element.tagName === "SELECT" ? [...element.options].filter((o) => !o.disabled).map((o) => Number(o.value))
            : offered.map((_, i) => i);
        const at = reachable.indexOf(this.inputs[spec.name]());
        for (const next of [reachable[at + 1], reachable[at - 1]]) {
          if (at < 0 || next === undefined) continue;
          if (prepared++ >= PREPARED_MOST) return null;
          let moved = { ...settings, [spec.name]: offered[next] };
          if (adjust) moved = adjust(moved, spec.name, this.data.data);
          const key = this.stateKey(moved);
          if (!this.computed.has(key)) return [key, moved];
        }
      }
      return null;
    }

    render() {
      const data = this.data;
      this.offerValidOptions();
      this.showRows();
      this.showInactive();
      const state = this.state();
      if (!state) {
        this.summary.textContent = say(WORDS, "not offered");
        return;
      }
      const [layout, captionText, text, top, looks, choices] = state;
      this.showChoices(choices);
      const mode = pageMode();
      const figure = figureFor(data.figures[layout], mode);
      const fit = this.scaleGroup && this.scaleGroup.querySelector("input:checked").value === "fit";
      const colours = { tables: this.tables, cmap: this.mapSelect ? this.mapSelect.value : "viridis",
        top: fit ? top : 1.0 };
      const canvas = this.canvas;
      if (canvas.width !== figure.width || canvas.height !== figure.height) {
        canvas.width = figure.width;
        canvas.height = figure.height;
        canvas.style.width = `${figure.css_width}px`;
        canvas.style.aspectRatio = `${figure.css_width} / ${figure.css_height}`;
      }
      const context = canvas.getContext("2d");
      context.drawImage(this.pictures[layout][mode], 0, 0);
      if (this.root.dataset.mode !== mode) this.root.dataset.mode = mode;
      figure.artists.forEach((style, i) => {
        if (looks[i]) PAINT[style.kind](context, style, looks[i], colours, this.sprites);
      });
      if (figure.colorbar) this.paintColorbar(context, figure.colorbar, colours);
      // Text written only where it changed: each write makes the page lay itself out again.
      const caption = captionText + (fit ? say(WORDS, "fitted", { top: colours.top }) : "");
      if (this.caption.textContent !== caption) this.caption.textContent = caption;
      const label = `${captionText}. ${text}`;
      if (canvas.getAttribute("aria-label") !== label) canvas.setAttribute("aria-label", label);
      if (this.summary.textContent !== text) this.summary.textContent = text;
      this.root.dataset.state = this.key();
      this.prepare();
    }

    // The colorbar: its gradient, 256 bands from the colour map bottom to top, then the sprite of its
    // ticks and labels for the scale's end. The gradient depends on the map and the box alone: it is
    // painted once per (map, box) on a canvas of its own and drawn from there.
    paintColorbar(context, colorbar, colours) {
      const [x, y, width, height] = colorbar.box;
      const left = Math.round(x), right = Math.round(x + width);
      const top = Math.round(y), bottom = Math.round(y + height);
      const key = [colours.cmap, left, right, top, bottom].join(" ");
      if (!this.gradients.has(key)) {
        const table = this.tables[colours.cmap];
        const gradient = document.createElement("canvas");
        gradient.width = right - left;
        gradient.height = bottom - top;
        const painter = gradient.getContext("2d");
        for (let row = top; row < bottom; row++) { // bottom to top
          const fraction = (bottom - row - 0.5) / (bottom - top);
          painter.fillStyle = tableColour(table, fraction, 0, 1);
          painter.fillRect(0, row - top, right - left, 1);
        }
        this.gradients.set(key, gradient);
      }
      if (right > left && bottom > top) context.drawImage(this.gradients.get(key), left, top);
      const sprite = colorbar.ends[formatG(colours.top, 6)];
      if (sprite) context.drawImage(this.sprites[sprite[0]], sprite[1], sprite[2]);
    }

    // A control whose options depend on the others (Declaration.choices; page.valid_options) offers
    // only those valid with the others' values now; a value no longer valid falls back to the first
    // valid option ("all heads"), or, on a slider, to its last, as the declarations' adjust does.
    offerValidOptions() {
      for (const [name, valid] of Object.entries(this.data.choices || {})) {
        const others = this.data.controls.filter((spec) => spec.name !== name)
          .map((spec) => this.inputs[spec.name]()).join(",");
        const indices = valid[others];
        if (!indices) continue;
        const element = this.elements[name];
        if (element.type === "range" && indices.every((index, i) => index === i)) {
          // A slider whose valid values are its first ones (chapter 06's step through the blocks that
          // the block size makes) ends at the last of them; a value past it moves there (the browser
          // clamps it), as that declaration's adjust does.
          const max = String(indices.length - 1);
          if (element.max === max) continue; // unchanged: no write, so no new layout
          element.max = max;
          if (this.readouts[name]) this.readouts[name]();
          continue;
        }
        for (const option of element.options || []) {
          const invalid = !indices.includes(Number(option.value));
          if (option.disabled !== invalid) option.hidden = option.disabled = invalid; // written only when it changes
        }
        if (!indices.includes(this.inputs[name]())) element.value = String(indices[0]);
      }
    }

    showRows() {
      for (const line of this.root.querySelectorAll("[data-when]")) {
        const [name, value] = JSON.parse(line.dataset.when);
        const current = this.data.offered[name][this.inputs[name]()];
        const hidden = JSON.stringify(current) !== JSON.stringify(value);
        if (line.hidden !== hidden) line.hidden = hidden; // written only when it changes: each write restyles
      }
    }
  }

  function startAll() {
    const tables = window.D2L_COLOUR_TABLES;
    for (const root of document.querySelectorAll("[data-d2l-explorer]")) {
      const data = (window.D2L_EXPLORERS || {})[root.dataset.d2lExplorer];
      if (!data || root.classList.contains("d2l-live")) continue;
      const explorer = new PageExplorer(data, root, tables);
      root.d2lExplorer = explorer;
      explorer.start().then(() => root.classList.add("d2l-ready"));
    }
  }

  // The explorers start just after the page's first paint: its text shows at once, on a slow phone too.
  function startSoon() {
    requestAnimationFrame(() => setTimeout(startAll, 0));
  }

  // A box that names the scripts of its data (data-d2l-scripts, the web site's chapters) loads them
  // when the reader comes within a few screens of it, each script once, in order; the last one, its
  // data, starts it. A first view never waits for the explorers further down.
  const loading = new Map();  // src -> the promise of its load, shared by the boxes that need it
  function load(src) {
    if (!loading.has(src)) {
      loading.set(src, new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src = src;
        script.onload = resolve;
        script.onerror = () => reject(new Error(`could not load ${src}`));
        document.head.appendChild(script);
      }));
    }
    return loading.get(src);
  }

  function loadScripts(root) {
    let chain = Promise.resolve();
    for (const src of root.dataset.d2lScripts.split(" ").filter(Boolean)) chain = chain.then(() => load(src));
    return chain.then(startSoon);
  }

  function loadWhenNear() {
    const roots = [...document.querySelectorAll("[data-d2l-scripts]")];
    if (!("IntersectionObserver" in window)) {
      roots.forEach(loadScripts);
      return;
    }
    const observer = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        observer.unobserve(entry.target);
        loadScripts(entry.target);
      }
    }, { rootMargin: "200% 0px" });
    roots.forEach((root) => observer.observe(root));
  }

  function startPage() {
    startSoon();
    loadWhenNear();
  }

  // The theme's button switches the page's mode (data-theme on <html>): every live explorer draws
  // itself again, for the new mode, with no reload.
  function followTheme() {
    const redraw = () => {
      for (const root of document.querySelectorAll("[data-d2l-explorer].d2l-ready")) root.d2lExplorer.render();
    };
    new MutationObserver(redraw).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  }

  const D2L = { formatG, fixed, marked, say, scaleTop, toPixels, cellEdges, describeWeights, PageExplorer, startAll,
    startSoon };
  window.D2L = D2L;
  window.D2L_COMPUTE = window.D2L_COMPUTE || {};
  window.D2L_ADJUST = window.D2L_ADJUST || {};
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", startPage);
  else startPage();
  followTheme();
})();
