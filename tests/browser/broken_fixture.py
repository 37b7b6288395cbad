# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Browser-suite self-test: a notebook with every fault the suite looks for
#
# Not a chapter. The suite must report each fault here: a slider that redraws
# nothing, a widget the page cannot display, an error, and the cell that the
# error kept from running.

# %%
import base64

import ipywidgets as widgets
from IPython.display import display

red_square = base64.b64decode(  # an 8x8 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAEUlEQVR4nGM4ISeHFTEMLQkAkL9BAbKfPiIAAAAASUVORK5CYII="
)
slider = widgets.IntSlider(value=3, max=10, description="ignored")
frozen = widgets.VBox([slider, widgets.Image(value=red_square, width=64)])  # nothing observes the slider
frozen

# %%
missing_model = {"model_id": "no-such-model", "version_major": 2, "version_minor": 0}
display({"application/vnd.jupyter.widget-view+json": missing_model}, raw=True)

# %%
raise ValueError("deliberate failure")

# %%
print("the run stops before this cell")
