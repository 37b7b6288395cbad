"""The explorers and the figures speak Brazilian Portuguese when it is chosen, and English otherwise.

What a learner reads of an explorer (its controls' labels, its caption, its text
summary, its figure's words) and of a figure (its labels, its alt text) follows
``d2lmini.i18n.set_language``; the declarations, which the web page exports, stay
English in every language.
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

import d2lmini as d2l  # noqa: E402
from d2lmini import diagrams, figure_alt  # noqa: E402
from d2lmini.i18n import current_language, set_language  # noqa: E402
from d2lmini.plotting import describe_weights  # noqa: E402
from d2lmini.widgets import (  # noqa: E402
    explore_dot_product,
    explore_kernel_pooling,
    explore_mask_editor,
    explore_masked_softmax,
    explore_multihead,
    explore_online_softmax,
    explore_positional_encoding,
    explore_shape_tracer,
)
from d2lmini.widgets.controls import widget_for  # noqa: E402
from d2lmini.widgets.dot_product import DotProduct  # noqa: E402
from d2lmini.widgets.explorer import HINT, Explorer  # noqa: E402
from d2lmini.widgets.mask_editor import MaskEditor  # noqa: E402
from d2lmini.widgets.masked_softmax import MaskedSoftmax  # noqa: E402
from d2lmini.widgets.online_softmax import OnlineSoftmax  # noqa: E402

# The modules of this part: what the explorers and d2lmini's own figures say.
FILES = ("d2lmini/widgets/", "d2lmini/plotting.py", "d2lmini/diagrams.py", "d2lmini/figure_alt.py",
         "d2lmini/seq2seq/")


def test_the_controls_are_labelled_in_portuguese(portuguese):
    explorer = explore_dot_product()
    assert explorer.controls["temperature"].description == "temperatura"
    assert explorer.controls["scale"].description == "dividir por √d"
    assert explorer.controls["colour_scale"].description == "cores"
    assert [label for label, _ in explorer.controls["colour_scale"].options] == ["0 a 1", "ajustar aos pesos"]
    assert explorer.controls["colour_map"].options[0] == ("viridis (segura para daltonismo)", "viridis")
    assert explorer.save_button.description == "Salvar"
    # The values stay what the code takes: only the labels change.
    assert explorer.controls["colour_scale"].value == "fixed"


def test_numbered_labels_and_options_are_translated_and_their_values_kept(portuguese):
    masked = explore_masked_softmax()
    # A slider reads as a label, in the glossary's words; the value is still the argument valid_len.
    assert masked.controls["valid_len_0"].description == "comprimento válido, exemplo 0"
    assert explore_dot_product().controls["valid_len"].description == "comprimento válido"
    assert dict(masked.controls["mode"].options) == {"um por exemplo": "per example", "um por consulta": "per query"}
    editor = explore_mask_editor()
    assert editor.controls["cell_2_3"].tooltip == "consulta 2, chave 3"
    assert ("sem máscara", "no mask") in editor.controls["preset"].options
    label, grid, note = editor.rows[1][1].children  # the grid of cells, its label above, its note under it
    assert label.value == "máscara (linhas: consultas 0-5, colunas: chaves 0-5)"
    assert "<b>✓ pressionada</b> (marcada) = a consulta pode prestar atenção à chave" in note.value
    # A cell's name read from where it is, on any screen: no "hover" (a phone cannot).
    assert 'a célula na linha 2, coluna 3 é "consulta 2, chave 3"' in note.value and "mouse" not in note.value
    assert masked.controls["query_len_1_0"].tooltip == "exemplo 1, consulta 0, comprimento válido"
    assert "nunca NaN" in note.value
    heads = explore_multihead(num_heads=2)
    assert list(heads.controls["head"].options) == [("todas as cabeças", "all"), ("cabeça 0", 0), ("cabeça 1", 1)]
    assert heads.controls["valid_len"].description == "comprimento válido"


def test_captions_and_summaries_are_in_portuguese(portuguese):
    explorer = explore_dot_product(causal=True)
    assert explorer.caption_text == "d = 16, escalonado por 1/√d, temperatura 1, comprimentos válidos = [8], causal"
    assert explorer.summary_text.startswith("8 consultas × 8 chaves, 28 de 64 células mascaradas. A consulta 0 ")
    explorer.controls["colour_scale"].value = "fit"
    assert explorer.caption_text.endswith("; cores de 0 a 1")

    editor = explore_mask_editor()
    editor.controls["preset"].value = "a whole row masked: query 2"
    assert editor.caption_text == ("6 de 36 células mascaradas; totalmente mascarada: consulta 2, "
                                   "pesos todos nulos pela regra do d2lmini")
    assert "(nenhuma chave sobra para a consulta 2)" in editor.summary_text

    online = explore_online_softmax(block_size=4, step=0)
    assert online.caption_text == "tamanho do bloco 4: 0 de 4 blocos vistos, nada calculado ainda"

    tracer = explore_shape_tracer(num_heads=1)
    assert tracer.summary_text.startswith("1 cabeça de largura 8: o bloco 0 contém a cabeça 0 nas posições 0, 1, 2, 3")
    assert explore_multihead(num_heads=1).caption_text == "1 cabeça de largura 16, comprimentos válidos = [6]"


def test_the_figures_words_are_in_portuguese(portuguese):
    explorer = explore_dot_product()
    ax_map, ax_entropy = explorer.figure.axes[:2]
    assert (ax_map.get_xlabel(), ax_map.get_ylabel(), ax_map.get_title()) == ("Chaves", "Consultas",
                                                                               "pesos de atenção")
    assert ax_entropy.get_title() == "entropia da linha"
    assert any(ax.get_ylabel() == "peso de atenção" for ax in explorer.figure.axes)  # the colorbar


def test_a_summary_names_what_is_masked_in_portuguese(portuguese):
    weights = torch.tensor([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]])
    mask = torch.tensor([[True, False, False], [True, True, False]])
    assert describe_weights(weights, mask) == (
        "2 consultas × 3 chaves, 3 de 6 células mascaradas. A consulta 0 presta atenção principalmente à chave 0 "
        "(1,00); a consulta 1 se distribui igualmente sobre 2 chaves (0,50 cada).")
    assert describe_weights(torch.full((1, 2), 0.5)) == (
        "1 consulta × 2 chaves. A consulta 0 se distribui igualmente sobre 2 chaves (0,50 cada).")


def test_alt_texts_and_diagrams_are_in_portuguese(portuguese):
    fig = diagrams.draw_causal_mask(4)
    assert figure_alt.describe_figure(fig).startswith("Três grades 4 × 4 de consultas (linhas) por chaves (colunas).")
    assert fig.axes[0].get_xlabel() == "chave $j$ (tempo →)"
    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [0, 1, 4], label="loss")
    ax.set_xlabel("step")
    assert figure_alt.describe_figure(fig) == ("Figura: 1 curva: “loss” de 0 a 4 (mínimo 0, máximo 4) "
                                               "(eixo x “step”).")
    plt.close(fig)
    fig = d2l.show_heatmaps(torch.eye(2), xlabel="Keys", ylabel="Queries")
    assert fig.axes[0].get_xlabel() == "Chaves"
    assert d2l.plotting.alt_text(fig).endswith(" Um resumo em texto dos pesos segue a figura.")


def test_the_declarations_and_the_page_data_stay_english(portuguese):
    """The web page exports the declarations: they keep their English in every language."""
    assert DotProduct().control("temperature").spec()["label"] == "temperature"
    assert MaskedSoftmax().control("valid_len_1").label == "valid_len, example 1"
    assert MaskEditor().control("preset").options[0] == ("no mask", "no mask")
    assert Explorer.COLOUR_SCALES == (("0 to 1", "fixed"), ("fit to weights", "fit"))
    assert MaskedSoftmax().page_data()["titles"] == ["example 0", "example 1"]


# What the explorers write with numbers and with the names the code takes, in each language.
SHOWN = {
    "pt_BR": ("d = 32, base = 10.000: comprimentos de onda de 2π ≈ 6,28 a 35.300 posições", ".3r",
              "kernel gaussiano, σ = 0,5, 40 pontos de treinamento",
              ["gaussiano", "retangular", "constante", "Epanechnikov"], ["produto escalar", "aditiva"],
              ["0,001", "0,003", "0,01", "0,03"]),
    "en": ("d = 32, base = 10,000: wavelengths from 2π ≈ 6.28 to 35,300 positions", ",.3r",
           "gaussian kernel, σ = 0.5, 40 training points", ["gaussian", "boxcar", "constant", "epanechnikov"],
           ["dot-product", "additive"], ["0.001", "0.003", "0.01", "0.03"]),
}


@pytest.mark.parametrize("language", list(SHOWN))
def test_numbers_and_code_names_are_shown_in_the_learners_language(language):
    from d2lmini.widgets.training import Training

    caption, readout, kernel_caption, kernels, attentions, rates = SHOWN[language]
    set_language(language)
    try:
        positional, kernel, training = explore_positional_encoding(), explore_kernel_pooling(), Training()
        shown = (positional.caption_text.split(";")[0], positional.controls["base"].readout_format,
                 kernel.caption_text, [label for label, _ in kernel.controls["kernel"].options],
                 [label for label, _ in widget_for(training.control("attention"), "dot-product").options],
                 [label for label, _ in widget_for(training.control("lr"), 3e-3).options])
    finally:
        set_language("en")
    assert shown == SHOWN[language]
    # The values stay what the code takes.
    assert [value for _, value in kernel.controls["kernel"].options] == list(d2l.KERNELS)


def test_english_is_spoken_again_once_chosen():
    set_language("pt_BR")
    set_language("en")
    assert current_language() == "en"
    explorer = explore_dot_product()
    assert explorer.controls["temperature"].description == "temperature"
    assert explorer.caption_text == "d = 16, scaled by 1/√d, temperature 1, valid_lens = [8]"
    assert HINT == "run the cell to move the sliders"


def test_the_chapter_00_08_and_09_explorers_speak_portuguese(portuguese):
    from d2lmini.widgets.head_view import HeadView
    from d2lmini.widgets.kernel_pooling import QueryPooling
    from d2lmini.widgets.training import Training, TrainingSettings

    query = QueryPooling().compute(QueryPooling.Settings(query=0.5, score="product"))
    assert query.caption == "a(q, k) = q·k, q = 0,5: resposta 3,638"
    training = Training()
    caption = training.compute(TrainingSettings()).caption
    assert caption.startswith("passo 0 de 400 · peso nos círculos ")
    heads = HeadView.for_page()
    result = heads.compute(heads.Settings(sentence=heads.examples[0], query=1))
    assert result.caption.startswith("camada 3, cabeça 1: para onde o token 1 (")
    assert heads.describe(result).startswith("Camada 3, cabeça 1: ")


def test_the_summaries_begin_every_sentence_with_a_capital_in_portuguese(portuguese):
    """The same hand-computed cases as in English (tests/test_plotting.py, test_widgets_online_softmax.py):
    what is masked said example by example, a capital after every full stop, "1 bloco", keys "ainda não
    vistas" rather than masked."""
    weights = torch.eye(8)  # query i attends to key i alone
    assert describe_weights(weights).endswith(
        "a consulta 7 presta atenção principalmente à chave 7 (1,00). (Resumo de 3 consultas, de um total de 8.)")
    lengths = torch.tensor([[0, 8, 1, 0], [0, 0, 0, 0]])  # (examples, queries)
    mask = torch.arange(8) < lengths[..., None]
    weights = torch.zeros(2, 4, 8)
    weights[0, 1], weights[0, 2, 0] = 1 / 8, 1.0
    assert describe_weights(weights, mask, titles=["exemplo 0", "exemplo 1"]) == (
        "2 painéis de 4 consultas × 8 chaves. Exemplo 0: 23 de 32 células mascaradas (nenhuma chave sobra para "
        "as consultas 0, 3); a consulta 2 presta atenção principalmente à chave 0 (1,00). Exemplo 1: chaves 0-7 "
        "mascaradas para todas as consultas (nenhuma chave sobra para as consultas 0-3); a consulta 2 não presta "
        "atenção a nenhuma chave (todos os pesos 0). (Resumo de 1 consulta, de um total de 4.)")
    declaration = MaskedSoftmax()
    settings = declaration.checked_settings(mode="per query", query_len_0_0=0, query_len_0_1=8, query_len_0_2=1,
                                            query_len_0_3=0, **{f"query_len_1_{q}": 0 for q in range(4)})
    assert declaration.describe(declaration.compute(settings)) == describe_weights(weights, mask,
                                                                                   titles=["exemplo 0", "exemplo 1"])
    online = OnlineSoftmax()
    assert online.compute(online.checked_settings(block_size=16, step=1)).caption.startswith(
        "tamanho do bloco 16: 1 de 1 bloco visto (16 de 16 chaves), m = ")
    assert online.describe(online.compute(online.checked_settings(block_size=4, step=0))) == (
        "1 consulta × 16 chaves, chaves 0-15 ainda não vistas (a consulta 0 ainda não viu nenhuma chave). "
        "A consulta 0 não presta atenção a nenhuma chave (todos os pesos 0).")


def test_a_sliders_readout_writes_the_languages_decimal_mark_and_follows_the_slider(portuguese):
    from d2lmini.widgets.controls import readout_text

    explorer = explore_kernel_pooling()
    sigma = explorer.controls["sigma"]
    # ipywidgets' own readout (d3-format, a point in every language) is hidden for a Label of ours.
    assert sigma.readout is False and sigma.marked_readout.value == "0,5"
    sigma.value = 0.25
    assert sigma.marked_readout.value == "0,25"
    assert sigma.description == "largura σ"  # its accessible name is the slider's, as before

    def placed(widget):  # every widget the explorer shows, its boxes opened
        yield widget
        for child in getattr(widget, "children", ()):
            yield from placed(child)
    pairs = [box.children for box in placed(explorer) if sigma in getattr(box, "children", ())]
    assert pairs == [(sigma, sigma.marked_readout)]  # the readout sits just after its slider
    base = explore_positional_encoding().controls["base"]
    assert base.marked_readout.value == "10.000"  # d3's ",.3r": written in full, thousands marked
    assert readout_text(base_spec(), 10 ** 0.5) == "3,16"


def base_spec():
    from d2lmini.widgets.declaration import LogSlider

    return LogSlider("base", "base", 10, 0.5, 5, 0.25, readout=",.3r")


def test_in_english_the_slider_keeps_ipywidgets_readout():
    sigma = explore_kernel_pooling().controls["sigma"]
    assert sigma.readout is True and not hasattr(sigma, "marked_readout")
    from d2lmini.widgets.controls import readout_text, shown

    assert shown(sigma) is sigma
    assert [readout_text(base_spec(), 10 ** e) for e in (0.5, 4, 5)] == ["3.16", "10,000", "100,000"]
