"""The checks of chapters 05 to 09 speak Brazilian Portuguese when the learner's language is pt_BR.

The framework (``_feedback.py``) renders the lines; these tests read what the
chapter checks hand to it, the fields of the ``ExerciseError`` and the detail
of the success line, so that they hold whatever language the framework's own
words are in. The English of every message is asserted by the chapters' own
test modules, which run in English.
"""

import math
import re

import pytest
import torch
from exercise_answers import REFERENCE, WRONG_ANSWERS, failure

from d2lmini.exercises import ExerciseError, ExerciseNotAttempted, ch05, ch06, ch07, ch08, ch09
from d2lmini.i18n import _, current_language, set_language

FILES = re.compile(r"d2lmini/exercises/ch0[5-9]\.py")
LABELS = {ch05: ["EINSUM", "ONE_HEAD", "SILENCED_HEAD", "PARAMETERS", "SPLIT"], ch06: ["LONGEST", "DECODE", "LEFT"],
          ch07: ["ROTATION", "LEARNED", "EQUIVARIANCE"], ch08: ["REVERSAL", "CROSS", "SORTING"],
          ch09: ["SEP_SINK", "PREVIOUS", "SIMILARITY"]}


def success_line(check, answer, capsys):
    check(answer)
    return capsys.readouterr().out.rstrip("\n")


@pytest.mark.parametrize("check, detail", [
    (ch05.check_einsum_multihead, "Igual a d2l.MultiHeadAttention, com consultas, chaves e valores de três tamanhos."),
    (ch05.check_output_without_head, "Mudança na saída sem cada cabeça (cabeça 0: "),
    (ch06.check_max_tokens, "Em 80 GiB, com lote 8 e 12 cabeças, as pontuações em float32 cabem em 14.956 tokens; "
                            "o dobro da memória comporta 21.151, só √2 vezes mais."),
    (ch07.check_equivariance, "Equivariantes: a autoatenção, o MLP aplicado posição a posição e a média."),
    (ch08.check_cross_attention_steps, "W_k rodou uma vez e W_q 6 vezes para T = 6 passos"),
    (ch09.check_similarity_matrix, "Com o preenchimento na média, as frases 1 e 3 (3 e 1 tokens válidos) teriam "
                                   "similaridade 0,97 em vez de -0,06"),
], ids=["5.5", "5.3", "6.1", "7.3", "8.2", "9.3"])
def test_a_success_line_gives_its_detail_in_portuguese(portuguese, check, detail, capsys):
    line = success_line(check, REFERENCE[check].answer, capsys)
    assert line.startswith("✓ ") and detail in line


def test_a_success_line_writes_whole_numbers_without_a_mark(portuguese, capsys):
    line = success_line(ch05.check_parameter_count, REFERENCE[ch05.check_parameter_count].answer, capsys)
    assert line.endswith("A contagem não depende de num_heads: a largura 8 custa 256 parâmetros com 1 cabeça e "
                         "256 com 4.")


def test_english_is_unchanged_without_a_language(capsys):
    assert current_language() == "en"
    line = success_line(ch06.check_max_tokens, REFERENCE[ch06.check_max_tokens].answer, capsys)
    assert line == ("✓ Exercise 6.1 · The longest sequence that fits: correct. In 80 GiB, batch 8 and 12 heads, "
                    "float32 scores fit 14,956 tokens; twice the memory fits 21,151, only √2 times as many.")


def test_a_named_mistake_gets_its_hint_in_portuguese(portuguese):
    with pytest.raises(ExerciseError) as info:
        ch06.check_decode_mask(lambda q, k: torch.ones(q, k, dtype=torch.bool).triu(k - q))
    assert info.value.hints == (
        "sua máscara está invertida: ela mantém o futuro de cada consulta e esconde o passado",
        "a consulta i pode ver as chaves até a própria posição, na diagonal deslocada e abaixo dela: torch.tril, "
        "não torch.triu")


def test_a_hint_with_values_fills_them_after_translating(portuguese):
    error = failure("ch06.check_decode_mask", WRONG_ANSWERS["ch06.check_decode_mask"])
    assert error.hints[0] == ("isto alinha a consulta i com a chave i (canto superior esquerdo), como faz o "
                              "is_causal da SDPA")
    assert error.hints[1].startswith("na decodificação as 3 novas consultas são os ÚLTIMOS 3 de 7 tokens: a "
                                     "consulta i é o token 4 + i, então sua linha termina 4 colunas mais à direita")


def test_expected_and_received_are_in_portuguese(portuguese):
    error = failure("ch07.check_learned_embedding", WRONG_ANSWERS["ch07.check_learned_embedding"])
    assert (error.expected, error.received) == ("pelo menos um parâmetro treinável: a tabela", "nenhum parâmetro")
    assert error.hints[0] == "a tabela não é treinável: um otimizador só atualiza module.parameters()"

    error = failure("ch08.check_cross_attention_steps", WRONG_ANSWERS["ch08.check_cross_attention_steps"])
    # Numbers with a decimal comma, and the row's list of them separated by semicolons.
    assert re.fullmatch(r"weights\[0, 0\], passo de saída 0 do exemplo 0: \[-?0,\d{3}(; -?0,\d{3}){5}\] "
                        r"\(soma 1,000\)", error.expected), error.expected
    assert error.received.startswith("weights[0, 0], passo de saída 0 do exemplo 0: [")


def test_the_layers_are_named_in_portuguese(portuguese):
    error = failure("ch07.check_equivariance", WRONG_ANSWERS["ch07.check_equivariance"])
    assert error.expected == ("com uma troca das pontas: equivariante para ['autoatenção', 'um MLP aplicado "
                              "posição a posição', 'a média dos tokens, dada a cada um']")
    assert error.received.startswith("uma resposta errada para ['autoatenção'")
    assert error.hints[0] == "você comparou a saída para a entrada embaralhada com a saída não embaralhada"


def test_a_label_with_a_case_is_translated_whole(portuguese):
    error = failure("ch05.check_head_weights", WRONG_ANSWERS["ch05.check_head_weights"])
    assert error.exercise == "Exercício 5.2 · os pesos de uma cabeça à mão (cabeça 0)"
    assert error.hints[0] == ("a cabeça 0 tem suas próprias linhas de W_q.weight e W_k.weight: as linhas 0 a 3")


@pytest.mark.parametrize("module", list(LABELS), ids=[module.__name__.rpartition(".")[2] for module in LABELS])
def test_every_label_has_its_portuguese_with_its_number(portuguese, module):
    for name in LABELS[module]:
        english = getattr(module, name)
        number = re.match(r"Exercise (\d\.\d) · ", english).group(1)
        assert _(english).startswith(f"Exercício {number} · "), english


def test_a_stub_carries_the_label_the_framework_translates(portuguese):
    def multihead_parameter_count(*sizes):
        raise NotImplementedError

    with pytest.raises(ExerciseNotAttempted) as info:
        ch05.check_parameter_count(multihead_parameter_count)
    assert _(info.value.exercise) == "Exercício 5.1 · parâmetros da atenção multi-cabeça"


@pytest.mark.parametrize("name", sorted(name for name in WRONG_ANSWERS if name.startswith(("ch05", "ch06", "ch07",
                                                                                           "ch08", "ch09"))))
def test_no_english_hint_is_left_in_portuguese(portuguese, name):
    error = failure(name, WRONG_ANSWERS[name])
    assert not set(failure_in_english(name).hints) & set(error.hints), name


def failure_in_english(name):
    set_language("en")
    try:
        return failure(name, WRONG_ANSWERS[name])
    finally:
        set_language("pt_BR")


# ---- the new messages of issue 48, in Portuguese: each asserted in English by the wrong-variant catalogue ----

def test_a_differing_row_is_named_in_portuguese(portuguese):
    error = failure("ch07.check_offset_rotation", lambda delta, omega: torch.tensor(
        [[math.cos(omega), math.sin(omega)], [-math.sin(omega), math.cos(omega)]]))  # δ left out
    assert error.expected.startswith("δ = 3, ω = 1, linha 0: [-0,99; ")
    assert error.hints[0] == ("a sua matriz gira cada par por ω, qualquer que seja o deslocamento, então só δ = 1 "
                              "sai certo: o ângulo cresce com δ")


class _WholeTable(torch.nn.Module):
    def __init__(self, max_len, num_hiddens):
        super().__init__()
        self.table = torch.nn.Parameter(0.02 * torch.randn(max_len, num_hiddens))

    def forward(self, X):
        return X + self.table


class _RowPerExample(_WholeTable):
    def forward(self, X):
        return X + self.table[:X.shape[0], None]


def test_a_python_error_is_explained_in_portuguese(portuguese):
    error = failure("ch07.check_learned_embedding", _WholeTable)
    assert error.expected == "um resultado de forward(X)"
    assert error.received.startswith("RuntimeError: The size of tensor a (7) must match the size of tensor b (10)")
    assert error.received.endswith(", levantado por forward(X)")
    assert error.hints == ("X tem 7 posições (eixo 1) e a tabela tem 10 linhas: só as primeiras 7 linhas da tabela "
                           "são somadas", "as linhas da tabela são posições: pegue tantas quantos passos X tem e "
                           "deixe o broadcasting espalhá-las pelo lote")
    error = failure("ch07.check_learned_embedding", _RowPerExample)
    assert error.expected.startswith("exemplo 0, posição 1: [")
    assert error.hints[0].startswith("o exemplo b recebeu a linha b da tabela em todas as posições")
    error = failure("ch07.check_equivariance", lambda layer, X, perm: torch.allclose(layer(X[perm]), layer(X)[perm]))
    assert error.hints[0].startswith("perm guarda posições de tokens, de 0 a 5, e você o usou no eixo 0 de X")


def test_predictions_are_checked_in_portuguese(portuguese, capsys):
    answer = REFERENCE[ch07.check_equivariance].answer
    with pytest.raises(ExerciseError) as info:
        ch07.check_equivariance(answer, predictions=["sim", "sim", "não", "sim", "sim", "não", "não"])
    assert info.value.received == "previsões que discordam dele para ['autoatenção depois de somar P']"
    assert info.value.hints[0].startswith("o seu teste está certo e as suas previsões não, para ['autoatenção")
    ch07.check_equivariance(answer, predictions=["sim", "não", "não", "sim", "sim", "não", "não"])
    assert capsys.readouterr().out.rstrip().endswith("As suas sete previsões também estavam certas.")
    ch07.check_equivariance(answer)
    assert capsys.readouterr().out.rstrip().endswith("As suas previsões não foram verificadas: passe-as como "
                                                     "predictions=, sete sim ou não na ordem da lista.")


def test_the_new_steps_of_6_1_and_9_1_speak_portuguese(portuguese):
    error = failure("ch06.check_max_tokens", lambda b, h, dtype, budget: budget // (b * h * dtype.itemsize))
    assert error.exercise == "Exercício 6.1 · A sequência mais longa que cabe"
    assert error.hints[0] == ("esse é o número de pontuações que cabem, e S guarda num_tokens² delas para cada "
                              "cabeça de cada exemplo")
    error = failure("ch09.check_sep_share", lambda attention: attention[..., :, -1].mean(-1))
    assert error.hints == ("você tirou a média sobre todas as linhas: as linhas do [CLS] e do [SEP] não são palavras "
                           "e devem ficar de fora",
                           'os tokens de palavras são as linhas 1 a T - 2, como em "Cabeças com uma função"')
