"""Driving a live explorer on a web page (d2lmini.widgets.page) as a learner would, from the keyboard."""


def explorer_state(tab, root):
    """What a learner sees of the explorer ``root`` (a CSS selector): its state, caption and picture."""
    return tab.evaluate("""(selector) => {
        const root = document.querySelector(selector);
        const canvas = root.querySelector('canvas');
        const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        let hash = 0;  // a checksum of the picture: encoding it as PNG would cost far more
        for (let i = 0; i < pixels.length; i += 4) {
            hash = (hash * 31 + pixels[i] + 7 * pixels[i + 1] + 13 * pixels[i + 2]) | 0;
        }
        return [root.dataset.state, root.querySelector('.d2l-caption').textContent, hash];
    }""", root)


def press_every_control(tab, root):
    """Give each control the explorer ``root`` (a CSS selector) shows first a key press that moves
    it, from that first state, and return the ids of the controls after which nothing changed, and
    of those without an accessible name."""
    controls = tab.evaluate("""(selector) => [...document.querySelectorAll(
        `${selector} input, ${selector} select, ${selector} button`)]
        .filter(e => !e.closest('[hidden]')).map(e => e.id)""", root)
    assert controls, f"{root} has no control"
    start = tab.evaluate("(selector) => document.querySelector(selector).d2lExplorer.settings()", root)
    still, unnamed = [], []
    for control in controls:
        # Each control from the explorer's first state: a control pressed before may have hidden
        # this one (a row shown in one mode only) or moved it (adjust).
        tab.evaluate("""([selector, settings]) => {
            const explorer = document.querySelector(selector).d2lExplorer;
            explorer.show(settings);
            explorer.render();
        }""", [root, start])
        element = tab.locator(f"#{control}")
        name = element.evaluate("e => (e.getAttribute('aria-label') || (e.labels && e.labels.length "
                                "? e.labels[0].textContent : '') || e.textContent || '').trim()")
        if not name:
            unnamed.append(control)
        if element.is_disabled():  # inactive now (Declaration.inactive): it must say why, in text tied to it
            if not element.evaluate("""e => {
                const reason = document.getElementById(e.getAttribute('aria-describedby') || '');
                return Boolean(reason && !reason.hidden && reason.textContent.trim());
            }"""):
                still.append(f"{control} (disabled, with no reason shown)")
            continue
        kind = element.evaluate("e => e.tagName === 'BUTTON' ? 'button' : e.type")
        if kind == "radio" and element.is_checked():
            continue  # the checked one: its neighbour is pressed in turn
        before = explorer_state(tab, root)
        element.focus()
        if kind == "range":
            tab.keyboard.press("ArrowLeft" if element.evaluate("e => e.value === e.max") else "ArrowRight")
        elif kind in ("checkbox", "radio", "button"):
            tab.keyboard.press("Space")
        else:  # a select
            last = element.evaluate("e => e.selectedIndex === e.options.length - 1")
            tab.keyboard.press("ArrowUp" if last else "ArrowDown")
        if kind == "button":  # a Play button: its steps come on a timer, so wait for the first (the
            # page's state moves on), then pause it; one that never moves is reported as still below
            from playwright.sync_api import TimeoutError as PlaywrightTimeout  # where Chromium runs only

            try:
                tab.wait_for_function("([selector, state]) => document.querySelector(selector).dataset.state "
                                      "!== state", arg=[root, before[0]], timeout=5_000)
            except PlaywrightTimeout:
                pass
            tab.keyboard.press("Space")
        if explorer_state(tab, root) == before:
            still.append(control)
    return still, unnamed


def grid_problems(tab, root):
    """What is wrong with the grids of cells (``.d2l-cell``, in ``role=grid`` rows) of the explorer ``root``
    (a CSS selector): each grid's cells, in their order, must fill its rows left to right and its rows top to
    bottom, cell i of every row in one straight column (the mask editor's cell (q, k) at row q, column k)."""
    grids = tab.evaluate("""(selector) => [...document.querySelectorAll(`${selector} [role=grid]`)].map(
        (grid) => ({columns: grid.querySelector('[role=row]').querySelectorAll('.d2l-cell').length,
                    centres: [...grid.querySelectorAll('.d2l-cell')].map((cell) => {
                        const box = cell.getBoundingClientRect();
                        return [box.x + box.width / 2, box.y + box.height / 2];
                    })}))""", root)
    problems = []
    for number, grid in enumerate(grids):
        columns, centres = grid["columns"], grid["centres"]
        if len(centres) % columns:
            problems.append(f"grid {number}: {len(centres)} cells do not fill {columns} columns")
            continue
        rows = [centres[i:i + columns] for i in range(0, len(centres), columns)]
        for r, row in enumerate(rows):
            if any(b[0] <= a[0] for a, b in zip(row, row[1:])) or max(y for _, y in row) - min(y for _, y in row) >= 1:
                problems.append(f"grid {number}: row {r} is not one level row, left to right")
        for c in range(columns):
            column = [row[c] for row in rows]
            if any(b[1] <= a[1] for a, b in zip(column, column[1:])) or \
                    max(x for x, _ in column) - min(x for x, _ in column) >= 1:
                problems.append(f"grid {number}: column {c} is not one straight column, top to bottom")
    return problems


def accessible_names(tab, root):
    """Control id -> its accessible name as Chromium computes it (its accessibility tree, over the
    DevTools protocol), for every control of the explorer ``root`` (a CSS selector), those of rows
    hidden now (another mode's) included: they are shown for the reading and hidden again."""
    hidden = tab.evaluate("""(selector) => {
        const rows = [...document.querySelectorAll(`${selector} [data-when][hidden]`)];
        rows.forEach((row) => { row.hidden = false; });
        return rows.length;
    }""", root)
    cdp = tab.context.new_cdp_session(tab)
    try:
        document = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        nodes = cdp.send("DOM.querySelectorAll", {"nodeId": document, "selector": ", ".join(
            f"{root} {kind}" for kind in ("input", "select", "button"))})["nodeIds"]
        names = {}
        for node in nodes:
            attributes = cdp.send("DOM.getAttributes", {"nodeId": node})["attributes"]
            element_id = dict(zip(attributes[::2], attributes[1::2])).get("id", f"node {node}")
            tree = cdp.send("Accessibility.getPartialAXTree", {"nodeId": node, "fetchRelatives": False})["nodes"]
            names[element_id] = tree[0].get("name", {}).get("value", "") if tree else ""
    finally:
        cdp.detach()
        if hidden:
            tab.evaluate("(selector) => document.querySelector(selector).d2lExplorer.render()", root)
    return names


def keep_inside(contexts, folder):
    """Abort every request of ``contexts`` outside ``folder`` and return the list their addresses go into.

    A page of the site, or an explorer's page, must need nothing else: no CDN, no network.
    """
    outside, inside = [], folder.as_uri() + "/"

    def only_inside(route):
        if route.request.url.startswith(inside):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    for context in contexts:
        context.route("**/*", only_inside)
    return outside


TAP_TARGET = 24  # CSS pixels: WCAG 2.2's smallest target (2.5.8), each way


def phone_problems(tab, root):
    """What is wrong with the explorer ``root`` (a CSS selector) at the page's width now, on a phone.

    * Something scrolls sideways: the page, the output box holding the explorer (on the site, the
      theme's, which scrolls what is too wide for it), or any element of the explorer, but for the
      picture's frame (``.d2l-frame``), which may, if it is a region named by the caption, with a
      Tab stop for the keyboard.
    * A control is smaller than ``TAP_TARGET`` × ``TAP_TARGET`` CSS pixels: a slider, menu, button,
      check box, radio button or cell of the mask editor, measured itself.
    * A check box or radio button is on another line than its label.

    It waits two frames first, so that the layout and the frame's resize checks after a new width
    have run."""
    return tab.evaluate("""async ([selector, target]) => {
        for (let i = 0; i < 2; i++) await new Promise((resolve) => requestAnimationFrame(resolve));
        const root = document.querySelector(selector);
        const box = root.closest('.cell_output') || root;
        const problems = [];
        const page = document.documentElement;
        if (page.scrollWidth > page.clientWidth) {
            problems.push(`the page scrolls: ${page.scrollWidth} > ${page.clientWidth}`);
        }
        const named = (e) => `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}.${[...e.classList].join('.')}`;
        for (const e of [box, ...box.querySelectorAll('*')]) {
            if (e.scrollWidth <= e.clientWidth || !e.getClientRects().length) continue;
            const caption = document.getElementById(e.getAttribute('aria-labelledby'));
            if (!e.matches('.d2l-frame')) {
                problems.push(`${named(e)} scrolls sideways: ${e.scrollWidth} > ${e.clientWidth}`);
            } else if (e.getAttribute('role') !== 'region' || e.tabIndex !== 0 || !caption
                       || !caption.matches('.d2l-caption') || !caption.textContent.trim()) {
                problems.push(`the picture's frame scrolls but is no region named by the caption with a Tab stop: `
                              + e.outerHTML.slice(0, 160));
            }
        }
        const controls = [...root.querySelectorAll('input, select, button')].filter((e) => e.getClientRects().length);
        if (!controls.length) problems.push('no control is shown');
        for (const control of controls) {
            const shown = control.getBoundingClientRect();
            if (shown.width < target - 0.01 || shown.height < target - 0.01) {
                problems.push(`${named(control)} is ${shown.width.toFixed(1)} × ${shown.height.toFixed(1)} CSS px`);
            }
            if (!['checkbox', 'radio'].includes(control.type)) continue;
            for (const label of control.labels) {
                const text = label.getBoundingClientRect();
                const middle = text.top + text.height / 2;
                if (middle < shown.top || middle > shown.bottom) {
                    problems.push(`${named(control)} and its label "${label.textContent}" are on different lines`);
                }
            }
        }
        return problems;
    }""", [root, TAP_TARGET])


def picture_scale(tab, root):
    """How many CSS pixels the picture of the explorer ``root`` (a CSS selector) is shown at per CSS pixel
    of its size in the notebook (the canvas's own width, set by explorers.js): 1 at the notebook's size."""
    return tab.evaluate("""(selector) => {
        const canvas = document.querySelector(selector).querySelector('canvas');
        return canvas.getBoundingClientRect().width / parseFloat(canvas.style.width);
    }""", root)
