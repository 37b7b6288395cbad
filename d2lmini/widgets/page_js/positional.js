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
    return Array.from({ length: positions }, (_, i) => frequencies.flatMap((frequency) => {
      const angle = f32(i / frequency);
      return [f32(Math.sin(angle)), f32(Math.cos(angle))];
    }));
  }

  // softmax(P Pᵀ / √d) over the keys, P as queries and keys, as torch computes it on the CPU: the queries
  // divided by √d first, each score summed over the columns in order by fused multiply-adds (a float32
  // product is exact in float64), the softmax's sum taken in order and multiplied by its reciprocal.
  function selfAttention(P, d) {
    const root = f32(Math.sqrt(d));
    return P.map((query) => {
      const scaled = query.map((q) => f32(q / root));
      const scores = P.map((key) => key.reduce((sum, k, c) => f32(sum + scaled[c] * k), 0));
      const top = Math.max(...scores);
      const exps = scores.map((score) => f32(Math.exp(f32(score - top))));
      const inverse = f32(1 / exps.reduce((sum, e) => f32(sum + e), 0));
      return exps.map((e) => f32(e * inverse));
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
