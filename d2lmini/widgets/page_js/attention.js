// AdditiveExplorer (chapter 03) and DotProductExplorer (chapter 04) computed in the page:
// d2lmini.attention's additive and scaled dot-product scores and masking.masked_softmax, with the
// compute, describe and view update of widgets/additive.py and widgets/dot_product.py, in JavaScript.
// Their fixed inputs (queries, keys, parameters, the noise each seed draws) come from the page data,
// drawn by torch at build time.
//
// Torch computes in float32, and a summary rounds weights to 2 decimals: Math.fround rounds each step
// to float32 as torch does, so that a weight near a rounding tie rounds as the kernel's does.
"use strict";

(function () {
  const f32 = Math.fround;
  // bmm on the CPU sums a product of fewer than this many multiply-adds per example in its own loop,
  // one float32 add per term; a larger product, and every nn.Linear, goes to BLAS (MKL's sgemm), which
  // sums with fused multiply-adds, term after term: the same float32 scores up to d = 128. From d = 256
  // MKL sums in another order, and weights can differ by 3e-5 (the summaries stay equal at every state).
  const BMM_LOOP = 400;

  // a (rows, n) times b (columns, n) transposed: (rows, columns), in float32. A fused multiply-add
  // rounds once: f32(sum + x * y) (a product of two float32 values is exact in float64).
  function timesTransposed(a, b, fused) {
    return a.map((x) => b.map((y) => {
      let sum = 0;
      for (let k = 0; k < x.length; k++) sum = f32(sum + (fused ? x[k] * y[k] : f32(x[k] * y[k])));
      return sum;
    }));
  }
  const linear = (x, weight) => timesTransposed(x, weight, true); // nn.Linear without bias
  const bmm = (a, b) => timesTransposed(a, b, a.length * b.length * a[0].length >= BMM_LOOP);

  // masking.masked_softmax of one row of scores: a masked key weighs 0, a row with no key left is
  // all 0 (not NaN). As torch's softmax: exp(x - max), then each term times the sum's reciprocal.
  function maskedSoftmax(scores, allowed) {
    const kept = scores.filter((_, k) => allowed[k]);
    if (!kept.length) return scores.map(() => 0);
    const top = Math.max(...kept);
    const exps = scores.map((score, k) => (allowed[k] ? f32(Math.exp(f32(score - top))) : 0));
    const inverse = f32(1 / exps.reduce((sum, e) => f32(sum + e), 0));
    return exps.map((e) => f32(e * inverse));
  }

  // AdditiveAttention's scores w_vᵀ tanh(W_q q + W_k k) of one example: (queries, keys).
  function additiveScores(queries, keys, { W_q, W_k, w_v }) {
    const hiddenKeys = linear(keys, W_k); // (keys, hiddens)
    return linear(queries, W_q).map((query) => hiddenKeys.map((key) => {
      const features = query.map((q, h) => f32(Math.tanh(f32(q + key[h])))); // (hiddens,)
      return linear([features], w_v)[0][0];
    }));
  }

  // DotProductAttention's scores (queries / √d) keysᵀ of one example: (queries, keys).
  function dotProductScores(queries, keys) {
    const root = f32(Math.sqrt(queries[0].length));
    return bmm(queries.map((query) => query.map((q) => f32(q / root))), keys);
  }

  // A heatmap's look (FigureView.heatmap, page._cells): cell (i, j) centred on (j, i); null hides a masked cell.
  function heatmap(d2l, axes, weights, allowed) {
    const edges = (count) => Array.from({ length: count + 1 }, (_, i) => i - 0.5);
    return {
      x: edges(weights[0].length).map((x) => d2l.toPixels(axes, x, 0)[0]),
      y: edges(weights.length).map((y) => d2l.toPixels(axes, 0, y)[1]),
      values: weights.flatMap((row, i) => row.map((w, j) => (allowed[i][j] ? w : null))),
      columns: weights[0].length,
    };
  }

  const largest = (panels) => Math.max(...panels.flat(2));

  window.D2L_COMPUTE = window.D2L_COMPUTE || {};

  // widgets.additive: per example, its additive weights, then its scaled dot-product weights.
  window.D2L_COMPUTE.AdditiveExplorer = function (settings, data, figures, d2l, say) {
    const { noise, seed } = settings;
    const validLens = [settings.valid_len_0, settings.valid_len_1];
    const scale = f32(noise);
    const panels = [], mask = [], titles = []; // (panel, queries, keys), and each panel's title
    data.queries.forEach((queries, b) => {
      const keys = data.noise[seed][b].map((key) => key.map((r) => f32(1 + f32(scale * r)))); // noisy_keys
      const allowed = queries.map(() => keys.map((_, k) => k < validLens[b])); // attention_mask
      const methods = [["additive", additiveScores(queries, keys, data)],
        ["scaled dot product", dotProductScores(queries, keys)]];
      for (const [method, scores] of methods) {
        panels.push(scores.map((row, i) => maskedSoftmax(row, allowed[i])));
        mask.push(allowed);
        titles.push(say("panel", { method: say(method), b }));
      }
    });
    const artists = figures.null.artists; // registered: the heatmaps, as the panels
    return {
      layout: "null", top: d2l.scaleTop(largest(panels)),
      looks: panels.map((weights, p) => heatmap(d2l, artists[p].axes, weights, mask[p])),
      caption: say("additive caption", { noise, seed, valid_lens: `[${validLens.join(", ")}]` }), // a Python list
      summary: d2l.describeWeights(panels, mask, { titles }),
    };
  };

  // widgets.dot_product: the weights, each row's entropy as a bar and a dashed tick at uniform's.
  window.D2L_COMPUTE.DotProductExplorer = function (settings, data, figures, d2l, say) {
    const { d, scale, temperature, valid_len: validLen, causal } = settings;
    // DotProductAttention divides the scores by √d: multiply it back in when the scale is off, and
    // divide by the temperature (torch multiplies by the factor in float32).
    const factor = f32((scale ? 1 : Math.sqrt(d)) / temperature);
    const queries = data.queries.map((query) => query.slice(0, d).map((q) => f32(q * factor))); // (queries, d)
    const keys = data.keys.map((key) => key.slice(0, d)); // (keys, d)
    // attention_mask: key j below valid_len and, causal, not after query i.
    const allowed = queries.map((_, i) => keys.map((_, j) => j < validLen && (!causal || j <= i)));
    const weights = dotProductScores(queries, keys).map((row, i) => maskedSoftmax(row, allowed[i]));
    const entropy = weights.map((row) => -row.reduce((sum, w) => sum + (w > 0 ? w * Math.log(w) : 0), 0)); // nats

    const [cells, ...rest] = figures.null.artists; // registered: the heatmap, a bar per row, the ticks
    const bars = rest.slice(0, weights.length), ticks = rest[weights.length];
    const barLooks = entropy.map((value, row) => { // barh: height 0.6, centred on the row
      const [x0, y0] = d2l.toPixels(bars[row].axes, 0, row - 0.3);
      const [x1, y1] = d2l.toPixels(bars[row].axes, value, row + 0.3);
      return { box: [Math.min(x0, x1), Math.min(y0, y1), Math.abs(x1 - x0), Math.abs(y1 - y0)] };
    });
    // Per row, a tick at log(keys it may attend to), then a break; a row with no key has none (its
    // points NaN, and a NaN coordinate makes the whole point NaN through the axes' affine transform).
    const tickPoints = allowed.flatMap((row, i) => {
      const count = row.filter(Boolean).length;
      if (!count) return [null, null, null, null, null, null];
      const uniform = Math.log(count);
      return [...d2l.toPixels(ticks.axes, uniform, i - 0.4), ...d2l.toPixels(ticks.axes, uniform, i + 0.4), null, null];
    });
    return {
      layout: "null", top: d2l.scaleTop(largest([weights])),
      looks: [heatmap(d2l, cells.axes, weights, allowed), ...barLooks, { points: tickPoints }],
      caption: say("dot product caption", { d, scaled: say(scale ? "scaled" : "unscaled"), temperature,
        valid_lens: `[${validLen}]`, causal: causal ? say("causal") : "" }),
      summary: d2l.describeWeights([weights], [allowed]),
    };
  };
})();
