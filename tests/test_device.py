import numpy as np
import pytest
import torch

import d2lmini as d2l


def test_cpu_and_gpu_name_devices():
    assert d2l.cpu() == torch.device("cpu")
    assert d2l.gpu(1) == torch.device("cuda:1")


def test_try_gpu_falls_back_to_an_existing_device():
    device = d2l.try_gpu()
    torch.ones(1, device=device)  # allocating on it works
    if torch.cuda.is_available():
        assert device.type == "cuda"
    elif not (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()):
        assert device == d2l.cpu()


def test_try_gpu_beyond_the_last_gpu_is_not_cuda():
    assert d2l.try_gpu(d2l.num_gpus()).type != "cuda"


def test_try_all_gpus_is_never_empty():
    devices = d2l.try_all_gpus()
    assert len(devices) >= 1
    assert len(devices) == max(d2l.num_gpus(), 1) or devices[0].type == "mps"


def test_numpy_detaches_and_copies_to_cpu(device):
    x = torch.arange(3.0, device=device, requires_grad=True) * 2
    out = d2l.numpy(x)
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0])


def test_book_tensor_helpers_are_torch_functions():
    assert d2l.normal(0, 1, (2, 3)).shape == (2, 3)
    assert d2l.reshape(d2l.arange(6), (2, 3)).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert d2l.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert d2l.ones(2).sum() == 2 and d2l.zeros(2).sum() == 0
    assert d2l.tensor([1, 2]).dtype == torch.int64


def test_the_aliases_the_attention_pooling_section_uses():
    torch.manual_seed(0)
    assert d2l.rand(40).shape == (40,) and 0 <= d2l.rand(40).min() and d2l.rand(40).max() < 1
    assert d2l.randn(3, 2).shape == (3, 2)
    x = torch.tensor([-1.0, 0.0, 2.0])
    torch.testing.assert_close(d2l.sin(x), torch.tensor([-0.841471, 0.0, 0.909297]))
    torch.testing.assert_close(d2l.exp(x), torch.tensor([0.367879, 1.0, 7.389056]))
    assert d2l.abs(x).tolist() == [1.0, 0.0, 2.0]
    as_float = d2l.astype(d2l.abs(x) < 1.5, d2l.float32)
    assert as_float.dtype == torch.float32 and as_float.tolist() == [1.0, 1.0, 0.0]
    k = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert d2l.reduce_sum(k, 0).tolist() == [4.0, 6.0] and d2l.reduce_sum(k).item() == 10.0


def test_check_shape_raises_an_assertion_error_naming_both_shapes():
    d2l.check_shape(torch.zeros(2, 3), (2, 3))
    with pytest.raises(AssertionError) as info:  # as the book's check_shape, an assert
        d2l.check_shape(torch.zeros(2, 3), (3, 2))
    assert isinstance(info.value, ValueError)  # as before, for code that catches ValueError
    assert str(info.value) == "expected shape (3, 2), got (2, 3)"
