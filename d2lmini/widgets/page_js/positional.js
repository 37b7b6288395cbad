// PositionalEncodingExplorer (chapter 07) computed in the page: the encoding P of
// d2lmini.PositionalEncoding, softmax(P Pᵀ / √d) as d2lmini.DotProductAttention computes it, and
// widgets.positional_encoding.PositionalView.update, in JavaScript. Torch computes in float32, and the port
// rounds to float32 (Math.fround) at the same steps. Key i - k and key i + k score the same for query i
// in exact arithmetic; the summary ranks weights to 4 decimals, equal ones in key order, so that the last
// bits, which MKL's order of sums can still move, never decide which of the two it names first.
"use strict";

(function () {
  const f32 = Math.fround;

  // P (positions, d): column 2j is sin(i / base^(2j/d)), column 2j + 1 its cosine (d is even).
  function encoding(positions, d, base) {
    const frequencies = [];
    for (let c = 0; c < d; c += 2) frequencies.push(f32(Math.pow(f32(base), f32(c / d))));
    const P = [];
    for (let i = 0; i < positions; i++) {
      const row = new Array(d);
      for (let j = 0; j < frequencies.length; j++) {
        const angle = f32(i / frequencies[j]);
        row[2 * j] = f32(Math.sin(angle));
        row[2 * j + 1] = f32(Math.cos(angle));
      }
      P.push(row);
    }
    return P;
  }

  // softmax(P Pᵀ / √d) over the keys, P as queries and keys, as torch computes it on the CPU: the queries
  // divided by √d first, each score summed over the columns in order by fused multiply-adds (a float32
  // product is exact in float64), the softmax's sum taken in order and multiplied by its reciprocal.
  // Plain loops over the rows: up to 64 × 64 × 128 multiply-adds a state, where closures per term cost
  // several times the arithmetic.
  function selfAttention(P, d) {
    const root = f32(Math.sqrt(d));
    const n = P.length;
    const scaled = new Float64Array(d), scores = new Float64Array(n);
    return P.map((query) => {
      for (let c = 0; c < d; c++) scaled[c] = f32(query[c] / root);
      let top = -Infinity;
      for (let k = 0; k < n; k++) {
        const key = P[k];
        let sum = 0;
        for (let c = 0; c < d; c++) sum = f32(sum + scaled[c] * key[c]);
        scores[k] = sum;
        if (sum > top) top = sum;
      }
      const exps = new Array(n);
      let total = 0;
      for (let k = 0; k < n; k++) {
        exps[k] = f32(Math.exp(f32(scores[k] - top)));
        total = f32(total + exps[k]);
      }
      const inverse = f32(1 / total);
      for (let k = 0; k < n; k++) exps[k] = f32(exps[k] * inverse);
      return exps;
    });
  }

  // widgets.positional_encoding._number: three significant digits, as the base slider shows them, with the
  // language's marks: 3.16, 562, 17,800 (3,16 and 17.800 in Portuguese).
  function number(value, d2l) {
    const rounded = Number(d2l.formatG(value, 3));
    const text = rounded < 1000 ? d2l.formatG(rounded, 6) : rounded.toLocaleString("en-US", { maximumFractionDigits: 0 });
    return d2l.marked(text);
  }

  // The look of a figure.CellImage of rows × columns.
  function cells(artist, rows, columns, values, d2l) {
    return { ...d2l.cellEdges(artist.axes, rows, columns), values: values.flat(), columns };
  }

  window.D2L_COMPUTE = window.D2L_COMPUTE || {};
  window.D2L_COMPUTE.PositionalEncodingExplorer = function (settings, data, figures, d2l, say) {
    const { d, base } = settings;
    const n = data.positions;
    const P = encoding(n, d, base);
    const weights = selfAttention(P, d);
    const lastSine = 2 * Math.floor((d - 1) / 2); // the slowest column pair starts here
    const longest = 2 * Math.PI * base ** (lastSine / d);
    const [code, heatmap] = figures.null.artists; // registered, in drawing order: P, then the weights
    const caption = say("caption", { d, base: number(base, d2l), longest: number(longest, d2l) });
    return {
      layout: "null",
      caption,
      summary: `${caption}. ${d2l.describeWeights([weights], null)}`, // both panels, as describe does
      top: d2l.scaleTop(Math.max(...weights.flat())),
      looks: [cells(code, n, d, P, d2l), cells(heatmap, n, n, weights, d2l)],
    };
  };
})();
