import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402


def _available(name):
    if name == "cuda":
        return torch.cuda.is_available()
    if name == "mps":
        return getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()
    return True


@pytest.fixture(params=["cpu", "cuda", "mps"])
def device(request):
    """Every test that takes ``device`` runs on the CPU and on each GPU present."""
    if not _available(request.param):
        pytest.skip(f"no {request.param} device on this machine")
    return torch.device(request.param)


@pytest.fixture(autouse=True)
def _seed_and_close_figures():
    torch.manual_seed(0)
    yield
    plt.close("all")
