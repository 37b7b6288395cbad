"""The exercises' framework, chapters 01-04 and the "why" questions speak Brazilian Portuguese.

With the language set to pt_BR, what a learner reads (a success line, a named
mistake's hint, the next hint, a "not attempted" line, the picture of wrong
weights, a question's widget) is in Portuguese; set back to English, it is
the English again. The catalogue translates every message of these modules.
"""

import html
import re

import pytest
import torch

from d2lmini import i18n
from d2lmini.exercises import ExerciseError, ExerciseNotAttempted, ch01, ch02, ch03, ch04, hint, questions
from d2lmini.exercises._feedback import weights_figure

# An expected and a received value, a list of numbers and a thousands figure, as the checks write them in each
# language.
NUMBERS = {
    "pt_BR": (r"uma perda de 0,\d{4} com σ = 0,3, m = 2", "0,2500",
              r"\(MSE de validação: triangular 0,\d{3}; Epanechnikov 0,\d{3}; retangular 0,\d{3}\)",
              "mantém 122.944 das 524.800 entradas"),
    "en": (r"a loss of 0\.\d{4} at σ = 0\.3, m = 2", "0.2500",
           r"\(validation MSE: triangular 0\.\d{3}, Epanechnikov 0\.\d{3}, boxcar 0\.\d{3}\)",
           "keeps 122,944 of the causal mask's 524,800 entries"),
}

FILES = ("d2lmini/exercises/_feedback.py", "d2lmini/exercises/_support.py", "d2lmini/exercises/__init__.py",
         "d2lmini/exercises/questions.py", "d2lmini/exercises/ch01.py", "d2lmini/exercises/ch02.py",
         "d2lmini/exercises/ch03.py", "d2lmini/exercises/ch04.py")


def masked_mean(values, valid_lens):
    real = (torch.arange(values.shape[1]) < valid_lens[:, None]).to(values.dtype)  # (batch, steps)
    return (values * real[..., None]).sum(1) / valid_lens.clamp(min=1)[:, None].to(values.dtype)


def transposed_window(num_steps, window):
    steps = torch.arange(num_steps)
    return ((steps[None, :] <= steps[:, None]) & (steps[None, :] > steps[:, None] - window)).T


def failure(check, answer):
    with pytest.raises(ExerciseError) as info:
        check(answer)
    return info.value


def test_a_success_line_is_portuguese(portuguese, capsys):
    ch02.check_masked_mean(masked_mean)
    assert capsys.readouterr().out == ("✓ Exercício 2.1: correto. O preenchimento não conta, e o exemplo vazio dá "
                                       "um vetor zero.\n")


def test_a_success_line_with_whole_numbers_writes_them_without_a_mark(portuguese, capsys):
    ch04.check_attention_cost(lambda n_q, n_k, d, bytes_per_element=4: (2 * n_q * n_k * d,
                                                                         n_q * n_k * bytes_per_element))
    assert capsys.readouterr().out == ("✓ Exercício 4.2 · o custo da atenção: correto. Com n = 1024 e d = 64, os "
                                       "pesos de um exemplo ocupam 4 MiB; dobrar n multiplica os dois custos por 4.\n")


def test_a_named_mistake_shows_its_hint_in_portuguese_and_hint_gives_the_next_step(portuguese, capsys):
    error = failure(ch02.check_local_causal_mask, transposed_window)
    lines = error.lines()
    assert lines[0] == "✗ Exercício 2.3: ainda não."
    assert lines[1].startswith("  esperado: de local_causal_mask(6, 3): 100000 ")
    assert lines[2].startswith("  recebido: de local_causal_mask(6, 3): 111000 ")
    assert lines[1].index("100000") == lines[2].index("111000")  # the masks still line up, row under row
    assert lines[3] == "  dica: as linhas são consultas e as colunas são chaves"
    assert lines[4] == "  Essa foi a dica 1 de 2. Para a próxima, execute ch02.hint() em uma nova célula."
    hint()
    assert capsys.readouterr().out == ("Exercício 2.3 · dica 2 de 2 (a última): a linha i é True da coluna "
                                       "i - window + 1 até a coluna i; a sua é a transposta\n")


def test_a_hint_from_a_table_marked_at_import_time_is_translated(portuguese):
    def unscaled(queries, keys):
        scores = queries @ keys.transpose(1, 2)
        allowed = torch.ones(scores.shape[-1], scores.shape[-1], dtype=torch.bool).tril()
        return torch.softmax(scores.masked_fill(~allowed, float("-inf")), -1)

    error = failure(ch04.check_fixed_causal_weights, unscaled)
    assert error.lines()[0] == "✗ Exercício 4.4 · encontre o bug: ainda não."
    assert error.hints == ("divida as pontuações por √d antes do softmax",
                           "d é o tamanho de uma consulta, o seu último eixo")
    # A list of numbers with a decimal comma is separated by semicolons.
    assert error.lines()[1].startswith("  esperado: formato (2, 5, 5), linha [0, 1]: [0,")


def test_a_refused_package_function_says_so_in_portuguese(portuguese):
    import d2lmini

    error = failure(ch04.check_fixed_causal_weights, lambda q, k: d2lmini.masked_softmax(q @ k.transpose(1, 2), None))
    assert error.lines()[1:4] == ["  esperado: corrija os próprios passos da função dada",
                                  "  recebido: uma chamada a d2l.masked_softmax",
                                  "  dica: d2l.masked_softmax faz o exercício inteiro por você"]
    assert error.hints[1] == "corrija os próprios passos da função dada você mesmo"


def test_a_case_of_a_check_is_named_in_portuguese(portuguese):
    error = failure(ch03.check_weight_gap, lambda attention, queries, keys, values, valid_lens: torch.tensor(1.0))
    assert error.lines()[0] == ("✗ Exercício 3.2 · pesos aditivos versus de produto escalar (chaves idênticas): "
                                "ainda não.")


def test_not_attempted_is_one_portuguese_line(portuguese):
    def triangular_kernel(u):
        raise NotImplementedError

    with pytest.raises(ExerciseNotAttempted) as info:
        ch01.check_triangular(triangular_kernel)
    assert str(info.value) == ("Exercício 1.1 · ainda não tentado: complete `triangular_kernel` acima, execute "
                               "aquela célula e depois esta.")


def test_not_attempted_drops_the_label_after_the_number(portuguese):
    def concat_scores(queries, keys, W_a, w_v):
        raise NotImplementedError

    with pytest.raises(ExerciseNotAttempted) as info:
        ch03.check_concat_scores(concat_scores)
    assert str(info.value).startswith("Exercício 3.3 · ainda não tentado: complete `concat_scores` acima")


def test_hint_without_a_failure_says_so_in_portuguese(portuguese, capsys):
    ch02.check_masked_mean(masked_mean)
    capsys.readouterr()
    hint()
    assert capsys.readouterr().out.startswith("Nenhuma dica a dar: a última verificação que você executou não falhou")


def test_the_picture_of_wrong_weights_is_labelled_in_portuguese(portuguese):
    figure = weights_figure(torch.eye(3).expand(2, 3, 3), torch.full((2, 3, 3), 1 / 3))
    axes = figure.axes[:2]
    assert [ax.get_title() for ax in axes] == ["seus (exemplo 0)", "esperados (exemplo 0)"]
    assert {ax.get_xlabel() for ax in axes} == {"chaves"} and {ax.get_ylabel() for ax in axes} == {"consultas"}


def test_a_why_question_speaks_portuguese(portuguese):
    widget = questions.ask("04")
    text = repr(widget).splitlines()
    assert (widget.check_button.description, text[0], text[3]) == (
        "Verificar", 'Pergunta "por quê?" 04: escolha uma opção e depois pressione Verificar.',
        "  (c) Porque a variância de qᵀk cresce como d, então uma pontuação típica cresce como √d.")
    said = []
    for choice in (None, 0, 2):  # Check with no option chosen, then a wrong one, then the right one
        if choice is not None:
            widget.choices.index = choice
        widget.check_button.click()
        said.append(widget.feedback.value)
    assert said[0] == "Escolha uma opção primeiro e depois pressione Verificar."
    assert said[1].startswith("✗ Não exatamente. Não é qualquer divisão que serve.")
    assert said[2].startswith(html.escape("✓ Correto. Os d produtos são independentes"))


def test_every_question_is_translated_whole(portuguese):
    for chapter, question in questions.QUESTIONS.items():
        for text in (question.prompt, *question.options, *question.feedback):
            assert i18n._(text) != text, (chapter, text)


@pytest.mark.parametrize("language", list(NUMBERS))
def test_the_numbers_a_check_writes_take_the_languages_marks(language, capsys):
    expected, received, listed, thousands = NUMBERS[language]
    i18n.set_language(language)
    try:
        error = failure(ch01.check_block_out_loss, lambda x, y, sigma, m: 0.25)
        ch01.check_triangular(lambda u: torch.clamp(1 - u.abs(), min=0))
        ch02.check_local_causal_mask(lambda num_steps, window: transposed_window(num_steps, window).T)
    finally:
        i18n.set_language("en")
    assert re.fullmatch(expected, error.expected) and error.received == received, (error.expected, error.received)
    out = capsys.readouterr().out
    assert re.search(listed, out) and thousands in out, out


def test_english_is_back_once_the_language_is_set_back(capsys):
    i18n.set_language("pt_BR")
    i18n.set_language("en")
    ch02.check_masked_mean(masked_mean)
    assert capsys.readouterr().out == ("✓ Exercise 2.1: correct. Padding does not count, and the empty example gives "
                                       "a zero vector.\n")
    assert repr(questions.ask(4)).splitlines()[0] == "Why? question 04: pick one option, then press Check."


# ---- the new messages of issue 48, in Portuguese: each asserted in English by the wrong-variant catalogue ----

def test_an_empty_example_with_uniform_weights_is_named_in_portuguese(portuguese):
    def filled(values, valid_lens):  # the chapter's -1e6 fill: the empty example's row is uniform
        real = torch.arange(values.shape[1]) < valid_lens[:, None]
        return (torch.softmax(torch.zeros(real.shape).masked_fill(~real, -1e6), -1)[:, None] @ values).squeeze(1)

    error = failure(ch02.check_masked_mean, filled)
    assert error.expected == "formato (4, 3), exemplo 2 (comprimento válido 0): [0; 0; 0]"
    assert error.hints[0] == ("um exemplo de comprimento 0 recebe pesos uniformes, não zeros: a média dele conta "
                              "todos os passos de preenchimento, e ela deve ser um vetor zero")


def test_python_and_on_masks_is_explained_in_portuguese(portuguese):
    def with_and(num_steps, window):
        steps = torch.arange(num_steps)
        return (steps[None, :] <= steps[:, None]) and (steps[None, :] > steps[:, None] - window)

    error = failure(ch02.check_local_causal_mask, with_and)
    assert error.expected == "um resultado de local_causal_mask(6, 3)"
    assert error.hints[0] == ("pediu-se a um tensor um único True ou False, e uma máscara tem muitos: `and`, `or` e "
                              "`not` pedem isso, e também uma cadeia como `a <= b & c > d`, que o Python lê como duas "
                              "comparações ligadas por `and`, já que & tem precedência. Combine duas máscaras com &, o "
                              "\"e\" elemento a elemento, cada comparação entre os seus próprios parênteses")


def test_the_causal_prefix_names_its_call_and_its_mistakes_in_portuguese(portuguese):
    def weights(queries, keys, values, prefix=1):
        n = queries.shape[1]
        scores = queries @ keys.transpose(1, 2) / queries.shape[2] ** 0.5
        return torch.softmax(scores.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf")), -1)

    error = failure(ch04.check_causal_attention, weights)
    assert (error.expected, error.received) == ("formato (2, 5, 3) de causal_attention(queries, keys, values)",
                                                "formato (2, 5, 5)")
    assert error.hints[0] == "esses são os pesos, um por consulta e chave: o exercício pede a saída"

    def rows(queries, keys, values, prefix=1):
        n = queries.shape[1]
        allowed = torch.ones(n, n, dtype=torch.bool).tril()
        allowed[:prefix] = True
        scores = queries @ keys.transpose(1, 2) / queries.shape[2] ** 0.5
        return torch.softmax(scores.masked_fill(~allowed, float("-inf")), -1) @ values

    error = failure(ch04.check_causal_attention, rows)
    assert error.exercise == "Exercício 4.5 · uma máscara causal com prefixo, causal_attention(queries, keys, values)"
    assert error.hints[0].startswith("você permitiu que as linhas do prefixo, as suas consultas, vejam todas as chaves")
