// The page's shell: every explorer of a chapter, live on its web page, with no kernel and no network.
//
// d2lmini.widgets.page wrote, for each explorer, its controls, the background of each figure
// (drawn once by matplotlib), what every registered artist looks like in every state the page
// offers, and each state's caption and text summary. The shell (this script and its parts, below)
// builds the controls, and on every change paints the state's artists over the background, as the
// kernel's shell does by blitting. Everything it needs is in the page's own scripts: it fetches nothing. It keeps no
// sentence of its own: every word it shows comes from the page data, in the learner's language.
"use strict";

(function () {
  // The shell is in parts, loaded in this order by plain scripts (no module loader: a page opened from
  // disk has none), which share the namespace D2L: words.js (numbers and sentences), paint.js (the
  // artists drawn), controls.js (the controls, ExplorerControls) and this file (PageExplorer: its
  // state, its drawing, its start; the page's start).
  const D2L = window.D2L;
  const { say, formatG, same, PAINT, tableColour, pageMode, figureFor, image } = D2L;
  const WORDS = window.D2L_SETTINGS.words; // page_words.SHELL_WORDS
  const PREPARED_MOST = 12; // neighbouring states made ready per state shown (PageExplorer.prepare)
  const COMPUTED_KEPT = PREPARED_MOST + 4; // and the state shown, and a few shown before it (forgetOldest)

  // The settings last chosen in each group of linked copies ("<name> <data-d2l-link>"), for a copy
  // that starts after the reader moved another (PageExplorer.linked).
  const LINKED = new Map();

  // One explorer on the page: its data (page.explorer_data), its container, its controls and its canvas.
  class PageExplorer extends D2L.ExplorerControls {
    constructor(data, root, tables) {
      super();
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

    // Where the explorer starts: control name -> offered index. The declaration's defaults (page.explorer_data's
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
      const words = (name, fields, count) => say(data.words, name, fields, count); // its script's (page_words.script_words)
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
    // did not call it on a page with nothing to draw, so few states were ready; and Safari lacks it.
    // A neighbour is computed with adjust applied, but not the valid options or menu choices the state
    // would change: where they would, the press computes its own state.
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
        if (this.drawn) return afterFrame(); // something was drawn meanwhile: its frame goes first
        const next = this.unprepared();
        if (!next) {
          this.preparing = false;
          return;
        }
        const [key, settings] = next;
        let state;
        try {
          state = this.compute(settings);
        } catch (error) { // the press that reaches it will say so; preparing starts again with the next state
          this.preparing = false;
          throw error;
        }
        this.computed.set(key, state);
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

  Object.assign(D2L, { PageExplorer, startAll, startSoon });
  window.D2L_COMPUTE = window.D2L_COMPUTE || {};
  window.D2L_ADJUST = window.D2L_ADJUST || {};
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", startPage);
  else startPage();
  followTheme();
})();