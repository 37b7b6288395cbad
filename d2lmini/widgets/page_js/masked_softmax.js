// Chapter 02's MaskedSoftmaxExplorer and MaskEditorExplorer computed in the page: d2lmini.masking's
// masked_softmax over the fixed scores of the page data (widgets.masked_softmax.MaskedSoftmax.page_data,
// widgets.mask_editor.MaskEditor.page_data), and the views' heatmaps (figure.BlitFigure.heatmap).
// The mask editor's adjust is here too: a preset sets the cells, a click shows "edited by hand".
"use strict";

(function () {
  const f32 = Math.fround;

  // masked_softmax of one row (keys,) in float32, as torch computes it: the largest allowed score
  // subtracted, exp, the sum in key order, times its inverse. A masked key (allowed false) gets
  // weight 0, and a row with no key allowed all zeros (masking.zero_empty_rows), never NaN.
  function maskedSoftmax(scores, allowed) {
    if (!allowed.some(Boolean)) return scores.map(() => 0);
    const top = Math.max(...scores.filter((_, k) => allowed[k]));
    const exps = scores.map((score, k) => (allowed[k] ? f32(Math.exp(f32(score - top))) : 0));
    const inverse = f32(1 / exps.reduce((total, e) => f32(total + e), 0));
    return exps.map((e) => f32(e * inverse));
  }

  // A (queries, keys) heatmap's look (page._cells): its cell edges in canvas pixels (cell (q, k)
  // centred on (k, q)) and its weights row by row, null where masked (the hatching shows through).
  function heatmapLook(artist, weights, mask, d2l) {
    const rows = weights.length, columns = weights[0].length;
    return {
      x: Array.from({ length: columns + 1 }, (_, k) => d2l.toPixels(artist.axes, k - 0.5, 0)[0]),
      y: Array.from({ length: rows + 1 }, (_, q) => d2l.toPixels(artist.axes, 0, q - 0.5)[1]),
      values: weights.flatMap((row, q) => row.map((weight, k) => (mask[q][k] ? weight : null))),
      columns,
    };
  }

  const largest = (panels) => Math.max(...panels.flat(2));

  window.D2L_COMPUTE = window.D2L_COMPUTE || {};
  window.D2L_ADJUST = window.D2L_ADJUST || {};

  // masked.MaskedSoftmax: one valid length per example, or one per query of each example.
  window.D2L_COMPUTE.MaskedSoftmaxExplorer = function (settings, data, figures, d2l, say) {
    const scores = data.scores; // (batch, queries, keys)
    const perExample = settings.mode === "per example";
    const validLens = scores.map((panel, b) => (perExample ? settings[`valid_len_${b}`]
      : panel.map((_, q) => settings[`query_len_${b}_${q}`]))); // (batch,) or (batch, queries)
    // attention_mask: key k is valid for query q when k < its length.
    const mask = scores.map((panel, b) => panel.map((row, q) => {
      const length = perExample ? validLens[b] : validLens[b][q];
      return row.map((_, k) => k < length);
    }));
    const weights = scores.map((panel, b) => panel.map((row, q) => maskedSoftmax(row, mask[b][q])));
    const artists = figures.null.artists; // one heatmap per example
    return {
      layout: "null",
      caption: `masked_softmax(scores, valid_lens=${JSON.stringify(validLens).replaceAll(",", ", ")})`, // Python's list
      summary: d2l.describeWeights(weights, mask, { titles: weights.map((_, b) => say("example", { b })) }),
      top: d2l.scaleTop(largest(weights)),
      looks: weights.map((panel, b) => heatmapLook(artists[b], panel, mask[b], d2l)),
    };
  };

  // mask_editor.MaskEditor: the mask is the grid of cells, cell_<query>_<key>.
  const cellMask = (settings, size) => Array.from({ length: size },
    (_, i) => Array.from({ length: size }, (__, j) => settings[`cell_${i}_${j}`]));

  window.D2L_COMPUTE.MaskEditorExplorer = function (settings, data, figures, d2l, say) {
    const scores = data.scores, size = scores.length; // (queries, keys)
    const mask = cellMask(settings, size);
    const weights = scores.map((row, i) => maskedSoftmax(row, mask[i]));
    const empty = mask.flatMap((row, i) => (row.some(Boolean) ? [] : [i])); // queries with no key
    const masked = mask.flat().filter((on) => !on).length;
    const rows = empty.length ? say("fully masked", { queries: empty.join(", ") }, empty.length)
      : say("every query");
    return {
      layout: "null",
      caption: say("cells masked", { masked, cells: size * size, rows }),
      summary: d2l.describeWeights([weights], [mask]),
      top: d2l.scaleTop(largest([weights])),
      looks: [heatmapLook(figures.null.artists[0], weights, mask, d2l)],
    };
  };

  // MaskEditor.adjust: a click on a cell shows "edited by hand"; a preset sets every cell, except
  // "edited by hand" picked from the menu, which keeps the grid as it is.
  window.D2L_ADJUST.MaskEditorExplorer = function (settings, changed, data) {
    if (changed !== "preset") return { ...settings, preset: data.custom };
    if (settings.preset === data.custom) return settings;
    const cells = {};
    data.presets[settings.preset].forEach((row, i) => row.forEach((on, j) => { cells[`cell_${i}_${j}`] = on; }));
    return { ...settings, ...cells };
  };
})();
