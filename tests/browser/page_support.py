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
        name = element.evaluate("e => ((e.labels && e.labels.length ? e.labels[0].textContent : '') "
                                "|| e.getAttribute('aria-label') || e.textContent || '').trim()")
        if not name:
            unnamed.append(control)
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
        if kind == "button":  # a Play button: its steps come on a timer
            tab.wait_for_timeout(600)
            tab.keyboard.press("Space")
        if explorer_state(tab, root) == before:
            still.append(control)
    return still, unnamed


def grid_problems(tab, root):
    """What is wrong with the grids of cells (``.d2l-cell``) of the explorer ``root`` (a CSS selector):
    each grid's cells, in their order, must fill its rows left to right and its rows top to bottom, cell i of
    every row in one straight column (the mask editor's cell (q, k) at row q, column k)."""
    grids = tab.evaluate("""(selector) => [...new Set([...document.querySelectorAll(`${selector} .d2l-cell`)]
        .map((cell) => cell.parentElement))].map(
        (grid) => ({columns: getComputedStyle(grid).gridTemplateColumns.split(' ').length,
                    centres: [...grid.querySelectorAll(':scope > .d2l-cell')].map((cell) => {
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
