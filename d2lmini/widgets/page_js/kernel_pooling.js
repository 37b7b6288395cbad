// KernelPoolingExplorer (chapter 01) computed in the page: d2lmini.kernels.nadaraya_watson and
// widgets.kernel_pooling.KernelView.update, in JavaScript. The training data comes from the page data
// (widgets.kernel_pooling.KernelPooling.page_data), drawn by torch's generator at build time.
"use strict";

(function () {
  // log k(u) of d2lmini.kernels: a zero kernel value is -inf, which the softmax turns into weight 0.
  const LOG_KERNELS = {
    gaussian: (u) => -u * u / 2,
    boxcar: (u) => (Math.abs(u) < 1 ? 0 : -Infinity),
    constant: () => 0,
    epanechnikov: (u) => Math.log(Math.max(1 - u * u, 0)),
  };

  // A softmax whose row of all -inf gives all zeros (masking.py's rule), not NaN.
  function safeSoftmax(logits) {
    const top = Math.max(...logits);
    if (top === -Infinity) return logits.map(() => 0);
    const exps = logits.map((l) => Math.exp(l - top));
    const total = exps.reduce((a, b) => a + b, 0);
    return exps.map((e) => e / total);
  }

  // The labels of the queries and of each training set's keys ("x = 0.35"), written once per array:
  // they do not change with the width or the kernel, and writing them cost more than the weights.
  const labelled = new WeakMap(); // inputs -> their labels
  function labels(inputs, digits, d2l) {
    if (!labelled.has(inputs)) labelled.set(inputs, inputs.map((x) => `x = ${d2l.marked(d2l.fixed(x, digits))}`));
    return labelled.get(inputs);
  }

  window.D2L_COMPUTE = window.D2L_COMPUTE || {};
  window.D2L_COMPUTE.KernelPoolingExplorer = function (settings, data, figures, d2l, say) {
    const { sigma, kernel, n_train: n } = settings;
    const [xTrain, yTrain] = data.training[String(n)];
    const queries = data.queries;
    const weights = queries.map((q) => safeSoftmax(xTrain.map((x) => LOG_KERNELS[kernel]((q - x) / sigma))));
    const predictions = weights.map((row) => row.reduce((sum, w, k) => sum + w * yTrain[k], 0));

    const figure = figures.null;
    const [cells, points, fit] = figure.artists; // registered, in drawing order: the weights, the data, the fit
    const line = (axes, xs, ys) => xs.flatMap((x, i) => d2l.toPixels(axes, x, ys[i]));
    // Key j's column spans the inputs nearer to x_j than to any other key; rows are centred on the queries.
    const keyEdges = [data.low, ...xTrain.slice(1).map((x, j) => (x + xTrain[j]) / 2), data.high];
    const step = queries[1] - queries[0];
    const queryEdges = [...queries, data.high].map((q) => q - step / 2);
    const looks = [
      { x: keyEdges.map((x) => d2l.toPixels(cells.axes, x, 0)[0]),
        y: queryEdges.map((y) => d2l.toPixels(cells.axes, 0, y)[1]),
        values: weights.flat(), columns: xTrain.length },
      { points: line(points.axes, xTrain, yTrain) },
      { points: line(fit.axes, queries, predictions) },
    ];
    const summary = d2l.describeWeights([weights], null, {
      queryLabels: labels(queries, 1, d2l), keyLabels: labels(xTrain, 2, d2l),
    });
    return {
      layout: "null", looks, summary, top: d2l.scaleTop(Math.max(...weights.flat())),
      caption: say("caption", { kernel: data.kernel_labels[kernel], sigma, n }),
    };
  };
})();
