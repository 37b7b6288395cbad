"""An explorer's other layouts, built and drawn while the kernel is idle (``Explorer`` starts it).

An explorer whose picture changes shape (the multi-head grid) declares one
figure per layout; the one shown first is drawn at construction, and
``IdlePreparation`` draws the others ahead of time, so that a layout shown for
the first time usually costs no more than any other change. It waits with a
clock (``LoopClock``: the time, and timers on the running asyncio loop), which
tests replace by one they advance by hand.
"""

import asyncio
import time

from IPython import get_ipython

# Seconds of quiet (no cell run, no control moved) before an explorer prepares its
# other layouts in the kernel's idle time, and between two layouts prepared.
IDLE_DELAY, IDLE_STEP = 0.5, 0.1
# When a control of any explorer last moved: one explorer's idle-time work waits while the
# learner uses another (a layout drawn meanwhile held up that explorer's next picture by 0.3 s).
_last_change_anywhere = [float("-inf")]
READY_CLASS = "d2l-ready"  # an explorer's CSS class once every layout is drawn (the browser tests wait for it)


class LoopClock:
    """The time, and timers on the asyncio event loop running in this thread (a Jupyter kernel's):
    what the idle-time work waits with (``Explorer.clock``). Tests put a clock they advance by
    hand in its place, so that they wait for no timer."""

    def now(self):
        return time.monotonic()

    def running(self):
        """Whether an event loop runs in this thread, so that ``call_later`` can set a timer."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return True

    def call_later(self, delay, callback):
        """Call ``callback()`` after ``delay`` seconds, between the loop's other work."""
        asyncio.get_running_loop().call_later(delay, callback)


class IdlePreparation:
    """One explorer's idle-time work on ``clock``: when it was last used, and its pending layouts.

    Idle means that no cell ran and no control of any explorer moved for
    ``IDLE_DELAY`` seconds: a notebook run from top to bottom (nbval,
    nbconvert) never waits for this work. It runs between the kernel's
    messages, one layout per turn of its event loop, so a message arriving
    meanwhile waits for one layout at most. Without a running event loop
    (a script), nothing is prepared: a layout is built when it is first shown.
    """

    def __init__(self, clock):
        self.clock = clock
        self.last_activity = clock.now()

    def note_change(self):
        """A control of this explorer moved: postpones every explorer's idle-time work."""
        self.last_activity = _last_change_anywhere[0] = self.clock.now()

    def start(self, pending, prepare, ready):
        """Call ``prepare(layout)`` for each of ``pending`` in idle time, then ``ready()``; ``ready()`` at
        once when nothing is pending. A layout that fails is passed over: not lost, since showing it
        raises again, in the explorer."""
        if not pending:
            ready()
            return
        clock = self.clock
        if not clock.running():
            return
        pending = list(pending)
        shell = get_ipython()  # None outside IPython
        self.last_activity = clock.now()

        def note_activity(*args):
            self.last_activity = clock.now()

        def prepare_next():
            quiet = clock.now() - max(self.last_activity, _last_change_anywhere[0])
            if quiet < IDLE_DELAY:
                clock.call_later(IDLE_DELAY - quiet, prepare_next)
                return
            layout = pending.pop(0)
            try:
                prepare(layout)
            except Exception:  # not lost: showing this layout raises it again, in the explorer
                pass
            if pending:
                clock.call_later(IDLE_STEP, prepare_next)
                return
            ready()
            if shell is not None:
                for event in ("pre_execute", "post_execute"):
                    shell.events.unregister(event, note_activity)

        if shell is not None:
            for event in ("pre_execute", "post_execute"):  # a cell starts, a cell ends
                shell.events.register(event, note_activity)
        clock.call_later(IDLE_DELAY, prepare_next)
