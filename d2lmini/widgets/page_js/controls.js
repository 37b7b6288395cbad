// The page's controls: what an explorer's reader moves, built from the page data.
//
// ExplorerControls is the half of an explorer (PageExplorer, explorers.js, extends it) that builds
// its rows of controls (sliders, menus, check boxes, toggles, the mask editor's grid, Play, the
// colour scale and map), names them for a screen reader, answers their keys, shows their readouts,
// and offers only the options valid with the other settings. Read it to change a control; what a
// control's change draws is the shell's (changed, render).
"use strict";

(function () {
  const D2L = (window.D2L = window.D2L || {}); // the namespace the shell's parts share (explorers.js)
  const { say, readout, same } = D2L; // words.js
  const SETTINGS = window.D2L_SETTINGS; // page.colour_script
  const WORDS = SETTINGS.words; // page_words.SHELL_WORDS
  const COLOUR_SCALES = SETTINGS.scales; // Explorer.COLOUR_SCALES
  const PLAY_MS = 250; // a Play button's slider moves one step this often

  // A control and its label (tied by the control's id) in one box of class `className`, the label
  // first or after the control.
  function labelBox(element, text, className, labelFirst) {
    const label = document.createElement("label");
    label.htmlFor = element.id;
    label.textContent = text;
    const box = document.createElement("span");
    box.className = className;
    if (labelFirst) box.append(label, element);
    else box.append(element, label);
    return box;
  }

  // A radio button and its label, in one box that keeps them on one line (explorers.css): a narrow
  // screen wraps the group between its choices, never between a button and its label.
  function choice(input, text) {
    return labelBox(input, text, "d2l-choice", false);
  }

  class ExplorerControls {
    build() {
      const data = this.data;
      // A group named after the explorer (page_words.title: "Mask editor explorer"), so that a screen reader
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

    labelled(element, text, name) {
      element.id = `${this.id}-${name}`;
      return labelBox(element, text, "d2l-control", true);
    }

    control(spec) {
      const offered = this.data.offered[spec.name];
      const start = this.startAt[spec.name];
      const shown = (index) => readout(spec, offered[index]);
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
          output.textContent = shown(Number(element.value));
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

    // A control whose options depend on the others (Declaration.choices; page_states.valid_options) offers
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

  D2L.ExplorerControls = ExplorerControls;
})();
