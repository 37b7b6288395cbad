// HeadViewExplorer (chapter 09) computed in the page: widgets.head_view.HeadView's compute, describe,
// choices and adjust, and SentenceView.update, in JavaScript. The attention maps come from the page
// data (HeadView.page_data): the cached sentences' maps as the cache stores them, float16.
"use strict";

(function () {
  // A float16 number from its 16 bits: every value the cache holds, exactly.
  function float16(bits) {
    const sign = bits & 0x8000 ? -1 : 1, exponent = (bits >> 10) & 0x1f, fraction = bits & 0x3ff;
    if (exponent === 0) return sign * fraction * 2 ** -24;
    if (exponent === 31) return fraction ? NaN : sign * Infinity;
    return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
  }

  // sentence -> its maps, [layer][head] -> (T × T) rows, decoded from base64 little-endian float16 once.
  const decoded = new Map();
  function maps(entry) {
    if (!decoded.has(entry)) {
      const bytes = Uint8Array.from(atob(entry.maps), (c) => c.charCodeAt(0));
      const view = new DataView(bytes.buffer);
      const [layers, heads, T] = entry.shape;
      let offset = 0;
      const next = () => float16(view.getUint16((offset++) * 2, true));
      const rows = () => Array.from({ length: T }, () => Array.from({ length: T }, next));
      decoded.set(entry, Array.from({ length: layers }, () => Array.from({ length: heads }, rows)));
    }
    return decoded.get(entry);
  }

  // A cells look (page._cells) of a (rows × columns) grid centred on integers, as blit.heatmap draws it.
  function cells(d2l, axes, grid) {
    const edges = (count) => Array.from({ length: count + 1 }, (_, k) => k - 0.5);
    return {
      x: edges(grid[0].length).map((x) => d2l.toPixels(axes, x, 0)[0]),
      y: edges(grid.length).map((y) => d2l.toPixels(axes, 0, y)[1]),
      values: grid.flat(), columns: grid[0].length,
    };
  }

  // A layer's thumbnails (one cells look per head, on the figure's thumbnail axes) and its largest weight:
  // they change with the sentence and the layer only, not with the head or the token picked, so they
  // are made once per (sentence, layer) and the same looks are drawn again.
  const layerLooks = new Map(); // entry -> [layer] -> {thumbnails, largest}
  function layerViews(d2l, entry, layer, artists) {
    if (!layerLooks.has(entry)) layerLooks.set(entry, []);
    const views = layerLooks.get(entry);
    if (!views[layer]) {
      const layerMaps = maps(entry)[layer];
      views[layer] = {
        thumbnails: layerMaps.map((grid, h) => cells(d2l, artists[2 * h].axes, grid)),
        largest: Math.max(...layerMaps.flat(2)),
      };
    }
    return views[layer];
  }

  // A new sentence shows every token's lines again: token 3 of another sentence is another word.
  window.D2L_ADJUST = window.D2L_ADJUST || {};
  window.D2L_ADJUST.HeadViewExplorer = (settings, changed) => (
    changed === "sentence" ? { ...settings, query: "all" } : settings);

  window.D2L_COMPUTE = window.D2L_COMPUTE || {};
  window.D2L_COMPUTE.HeadViewExplorer = function (settings, data, figures, d2l, say) {
    const { sentence, layer, head, query } = settings;
    const entry = data.sentences[sentence];
    const tokens = entry.tokens, T = tokens.length;
    const layerMaps = maps(entry)[layer]; // [head] -> (T × T): row i = where token i looks
    const headMap = layerMaps[head];
    const lines = headMap.map((row, i) => (query === "all" || query === i ? row : row.map(() => 0)));

    const layoutKey = JSON.stringify(sentence);
    const artists = figures[layoutKey].artists; // the thumbnails and their frames, the heatmap, the lines, the title
    const views = layerViews(d2l, entry, layer, artists);
    const looks = [];
    for (let h = 0; h < layerMaps.length; h++) {
      looks.push(views.thumbnails[h]);
      const [left, top, width, height] = artists[2 * h + 1].axes;
      looks.push(h === head ? { box: [left, top, width, height] } : null);
    }
    const [mapCells, segments, title] = artists.slice(2 * layerMaps.length);
    looks.push(cells(d2l, mapCells.axes, headMap));
    // One segment per (query, key) pair carrying at least LINE_FLOOR, from the query on the left (x = 0)
    // to the key on the right (x = 1), its width 4 points per unit of weight (float32 comparison).
    const floor = Math.fround(data.line_floor);
    const look = { points: [], widths: [], values: [] };
    lines.forEach((row, i) => row.forEach((weight, j) => {
      if (!(weight >= floor)) return;
      look.points.push([...d2l.toPixels(segments.axes, 0, i), ...d2l.toPixels(segments.axes, 1, j)]);
      look.widths.push(4 * weight * data.point);
      look.values.push(weight);
    }));
    looks.push(look);
    const [left, top, width] = title.axes;
    looks.push({ text: say("title", { layer, head }), at: [left + width / 2, top - data.title_pad] });

    const who = query === "all" ? say("every token") : say("token", { query, token: tokens[query] });
    const summary = d2l.describeWeights([headMap], null, {
      queryLabels: tokens, keyLabels: tokens, queries: query === "all" ? null : [query],
    });
    return {
      layout: layoutKey, looks, top: d2l.scaleTop(views.largest),
      caption: say("caption", { layer, head, who, sentence }),
      summary: say("summary", { layer, head, summary }),
      choices: { query: [[say("all tokens"), "all"], ...tokens.map((token, i) => [`${i}: ${token}`, i])] },
    };
  };
})();
