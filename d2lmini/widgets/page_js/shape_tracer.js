// ShapeTracerExplorer (chapter 05) computed in the page: where d2lmini.MultiHeadAttention.transpose_qkv
// (or a bare reshape) puts each cell of a (1, T, d_model) tensor, and the pictures of
// widgets.shape_tracer.TracerView.update, in JavaScript. The head colours and the digits' pixels
// come from the page data (widgets.shape_tracer.ShapeTracer.page_data).
"use strict";

(function () {
  // The folded batch (h, T, d_head) as [position, feature column] of each cell, from X (1, T, d) whose
  // cell [t, j] is [t, j]: transpose_qkv gives block b head b's columns at every position; a reshape
  // alone reads X's cells in memory order, so a block mixes heads and positions.
  function fold(T, d, h, transpose) {
    const dHead = d / h;
    return Array.from({ length: h }, (_, b) => Array.from({ length: T }, (_, t) => Array.from({ length: dHead },
      (_, k) => {
        if (transpose) return [t, b * dHead + k];
        const i = (b * T + t) * dHead + k;
        return [Math.floor(i / d), i % d];
      })));
  }

  // tensor_picture on a canvas of rows × columns pixels, transparent beyond it, as flat [r, g, b, a]:
  // blocks[g][r][c] = [position, column] drawn side by side one blank cell apart, each cell in the colour
  // of its column's head with its position's digit, and a white (transparent) line right of it and below.
  function picture(blocks, headWidth, rows, columns, data) {
    const { cell, colours, dark, font, digit_at: [top, left] } = data;
    // The same few colours fill every pixel: one array each, shared, not one per pixel.
    const transparent = [0, 0, 0, 0], inks = { 0: [0, 0, 0, 255], 255: [255, 255, 255, 255] };
    const pixels = new Array(rows * columns).fill(transparent);
    blocks.forEach((block, g) => block.forEach((line, r) => line.forEach(([position, column], c) => {
      const head = Math.floor(column / headWidth);
      const ink = dark[head] ? 255 : 0; // white digits on a dark colour, black on a light one
      const glyph = font[position];
      const x0 = (g * (line.length + 1) + c) * cell, y0 = r * cell;
      for (let y = 0; y < cell - 1; y++) {
        for (let x = 0; x < cell - 1; x++) {
          const row = glyph[y - top];
          pixels[(y0 + y) * columns + x0 + x] = row && row[x - left] ? inks[ink] : colours[head];
        }
      }
    })));
    return pixels;
  }

  // describe: which heads and positions each of the first two blocks holds.
  function describe(blocks, d, dHead, say) {
    const sorted = (values) => [...new Set(values)].sort((a, b) => a - b);
    const held = blocks.slice(0, 2).map((block, b) => {
      const heads = sorted(block.flat().map(([, column]) => Math.floor(column / dHead)));
      const where = sorted(block.flat().map(([position]) => position));
      return say("block", { b, heads: say("heads", { heads: heads.join(", ") }, heads.length),
        positions: say("positions", { positions: where.join(", ") }, where.length) });
    });
    const h = d / dHead;
    return say("width", { h, d_head: dHead }, h) + held.join("; ") + (h > 2 ? say("first blocks", { h }) : ".");
  }

  window.D2L_COMPUTE = window.D2L_COMPUTE || {};
  window.D2L_COMPUTE.ShapeTracerExplorer = function (settings, data, figures, d2l, say) {
    const { num_heads: h, T, transpose } = settings;
    const { d_model: d, max_t: maxT, cell } = data;
    const dHead = d / h;
    const X = [Array.from({ length: T }, (_, t) => Array.from({ length: d }, (_, j) => [t, j]))]; // one block
    const folded = fold(T, d, h, transpose);
    const legend = Array.from({ length: h }, (_, b) => [[[b, b * dHead]]]); // block b: head b, numbered b
    const foldWidth = (2 * d - 1) * cell; // d columns and at most d - 1 blank ones between blocks
    const [xImage, foldImage, legendImage] = figures.null.artists; // registered, in drawing order
    const look = (artist, blocks, rows, columns) => ({ ...d2l.cellEdges(artist.axes, rows, columns),
      rgba: picture(blocks, dHead, rows, columns, data), columns });
    const how = transpose ? "transpose_qkv" : say("reshape");
    return {
      layout: "null",
      caption: say("caption", { h, d_head: dHead, T, d, how }),
      summary: describe(folded, d, dHead, say),
      top: 1.0, // scale_top of the positions drawn, at least 1: no colour scale here (shows_weights is false)
      looks: [look(xImage, X, maxT * cell, d * cell), look(foldImage, folded, maxT * cell, foldWidth),
        look(legendImage, legend, cell, foldWidth)],
    };
  };
})();
