// The page's painting: each state's artists drawn over its figure's background, as Agg draws them.
//
// PAINT holds one function per kind of registered artist (cells, lines, points, rectangles, segments,
// sprites, texts); around it, the colour tables (a value's colour, as matplotlib maps it), the
// scratch canvases a grid of cells is composed in, the axes' mapping to canvas pixels, and the
// figure's light or dark variant. Read it to change how a picture is drawn; the shell (explorers.js)
// calls it from render.
"use strict";

(function () {
  const D2L = (window.D2L = window.D2L || {}); // the namespace the shell's parts share (explorers.js)
  const { same } = D2L; // words.js
  const FONT = '"DejaVu Sans", "Bitstream Vera Sans", Verdana, Arial, sans-serif'; // matplotlib's default

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
  // dark variant (page.explorer_data: PageFigure.dark), a light one (or a page with no theme) the figure itself.
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
  // the style has one (page_figure._dark_look_colours), else as it is.
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

  // Painting: one function per kind of registered artist (page_artists.ARTISTS).
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

  Object.assign(D2L, { PAINT, toPixels, cellEdges, tableColour, pageMode, figureFor, image });
})();
