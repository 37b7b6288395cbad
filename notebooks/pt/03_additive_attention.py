# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,jupyter,cellView,en,-all
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en="6a12fb3f1dbe"
# # 03 · Atenção aditiva
#
# O kernel gaussiano do capítulo 01 comparava uma consulta com uma chave pela
# distância entre elas, o que só faz sentido quando as duas são vetores do
# mesmo tamanho. Muitas vezes elas não são. Em um modelo de tradução, a
# consulta pode descrever as palavras escritas até agora e cada chave, uma
# palavra da frase de origem; duas partes diferentes do modelo as produzem, e
# nada obriga as duas a terem o mesmo tamanho (o capítulo 08 constrói um
# pequeno modelo desse tipo). Abaixo, uma consulta de tamanho 20 encontra
# chaves de tamanho 2.
#
# Tamanhos diferentes, por si sós, não exigem uma rede. Uma única matriz
# aprendida, colocada entre a consulta e a chave, também transforma o par
# em um único número, só com produtos de matrizes: você cria essa
# pontuação no Exercício 3.1, e as projeções do capítulo 05 também aceitam
# tamanhos diferentes. O que distingue a atenção aditiva é o tipo de
# pontuação que ela calcula: uma pequena rede neural aprendida, com uma etapa
# não linear no meio. A rede leva a consulta e a chave para um espaço comum,
# soma as duas ali, curva a soma com $\tanh$ e reduz o resultado a um único
# número. Graças a essa curvatura, ela consegue aprender pontuações que
# produtos de matrizes sozinhos não conseguem dar.
#
# **Neste notebook você vai**
# 1. escrever a pontuação aditiva $a(q, k) = w_v^\top \tanh(W_q q + W_k k)$ em
#    `torch` puro, pontuando todos os pares (consulta, chave) de uma vez por
#    broadcasting;
# 2. verificar a sua versão com `d2lmini.AdditiveAttention` e com um laço
#    lento sobre os pares;
# 3. executar o exemplo de brinquedo clássico e prever a sua saída antes de
#    vê-la;
# 4. ver que a forma de "concatenação" $W_a [q; k]$ é a mesma função;
# 5. comparar os pesos aditivos com os de produto escalar, em um mapa de calor
#    e em um explorador.

# %% [markdown] en="91cf62f5742e"
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/pt/03_additive_attention.ipynb) abre a edição do aluno deste capítulo no Colab. Execute primeiro a célula de configuração recolhida logo abaixo: no Colab, ela instala o `d2lmini`, o pacote auxiliar desta coleção, e não mexe nos pacotes do próprio ambiente de execução; em um hub de curso, ela aponta qualquer arquivo seu que uma atualização tenha guardado com outro nome. Em qualquer outro lugar, ela não faz nada.

# %% cellView="form" jupyter={"source_hidden": true} tags=["colab-setup"]
# @title Configuração { display-mode: "form" }
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("d2lmini") is None:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "d2lmini @ git+https://github.com/attention-notebooks/attention-notebooks@v0.2.0"], check=True)
    print("d2lmini 0.2.0 instalado neste ambiente; torch, numpy, matplotlib e ipywidgets ficam como estavam.")

from d2lmini.updates import report_renamed_files

report_renamed_files()

from d2lmini.i18n import set_language

set_language("pt_BR")

# %%
import torch

import d2lmini as d2l
from d2lmini.exercises import ch03

device = d2l.try_gpu()

# %% [markdown] en="d73dff9f36b2"
# ## A função de pontuação
#
# Uma consulta $q \in \mathbb{R}^{d_q}$ e uma chave $k \in \mathbb{R}^{d_k}$ (os
# tamanhos $d_q$ e $d_k$ podem ser diferentes) são pontuadas por uma pequena
# rede neural com uma camada oculta. Em palavras simples, a rede trabalha em
# duas etapas. Primeiro, ela calcula $d_h$ números intermediários a partir da
# consulta e da chave; juntos, eles formam a *camada oculta*, e cada um deles
# é uma *unidade oculta* ("oculta" porque não é nem uma entrada nem a
# saída). Depois, ela combina esses $d_h$ números no único número que
# devolve, a pontuação:
#
# $$a(q, k) = w_v^\top \tanh\left(W_q\, q + W_k\, k\right),
# \qquad W_q \in \mathbb{R}^{d_h \times d_q},\; W_k \in \mathbb{R}^{d_h \times d_k},\;
# w_v \in \mathbb{R}^{d_h}.$$
#
# $W_q$ e $W_k$ levam a consulta e a chave para o mesmo espaço de dimensão
# $d_h$, onde elas podem ser somadas; $\tanh$, aplicada a cada entrada,
# comprime-a no intervalo $(-1, 1)$ e torna a pontuação não linear; $w_v$
# transforma as $d_h$ características ocultas em um único número. Os três são
# aprendidos. A dimensão oculta $d_h$ (`num_hiddens` no código) é uma
# configuração livre, escolhida quando a camada é construída: nada a amarra
# a $d_q$ ou a $d_k$, e as duas projeções a compartilham.
#
# Para um único par, a fórmula cabe em três linhas de `torch`. Aqui a
# consulta tem 5 características, a chave 3, e a camada oculta 8 unidades.
# Cada parâmetro aleatório é dividido pela raiz quadrada do tamanho do vetor
# que ele multiplica, para que cada produto, uma soma de tantos termos,
# fique com tamanho em torno de 1 (o capítulo 04 mede por que a raiz
# quadrada é o divisor certo):

# %%
query_size, key_size, num_hiddens = 5, 3, 8
torch.manual_seed(0)  # aqui, para que executar esta célula de novo sorteie os mesmos números
W_q = torch.randn(num_hiddens, query_size) / query_size ** 0.5
W_k = torch.randn(num_hiddens, key_size) / key_size ** 0.5
w_v = torch.randn(num_hiddens) / num_hiddens ** 0.5

q, k = torch.randn(query_size), torch.randn(key_size)
score = w_v @ torch.tanh(W_q @ q + W_k @ k)  # um escalar
print(f"a(q, k) = {d2l.number(score.item(), '.4f')}")

# %% [markdown] en="a60c63b51d33"
# As mesmas três linhas em um desenho, cada peça com o seu tamanho: $W_q$
# ($d_h \times d_q$) e $W_k$ ($d_h \times d_k$) levam $q \in \mathbb{R}^{d_q}$
# e $k \in \mathbb{R}^{d_k}$ para $\mathbb{R}^{d_h}$, onde elas podem ser
# somadas; a tanh mantém o tamanho $d_h$, e $w_v^\top$ ($1 \times d_h$)
# deixa um escalar. A linha de baixo é a próxima seção: as mesmas etapas
# para um lote inteiro.

# %%
from d2lmini.diagrams import draw_additive_scorer

draw_additive_scorer()

# %% [markdown] en="519797d2e196"
# ## Todos os pares de uma vez: broadcasting
#
# Em um minibatch de $B$ exemplos, cada um com $n_q$ consultas e $n_k$ chaves,
# temos consultas de formato $(B, n_q, d_q)$ e chaves de formato
# $(B, n_k, d_k)$, e precisamos de uma pontuação para cada um dos
# $n_q \times n_k$ pares. Projetar primeiro sai barato: cada consulta e cada
# chave passa pela sua matriz uma única vez. Depois, dois eixos de
# comprimento 1 inseridos deixam o broadcasting formar todas as somas.
# `x.unsqueeze(2)` insere um eixo assim na posição 2, então, para um `x` 3-D,
# equivale a `x[:, :, None]`; `x.unsqueeze(1)` equivale a `x[:, None]`:
#
# $$\underbrace{(B, n_q, 1, d_h)}_{W_q q} + \underbrace{(B, 1, n_k, d_h)}_{W_k k}
# \;\longrightarrow\; (B, n_q, n_k, d_h) \;\xrightarrow{\;w_v^\top \tanh(\cdot)\;}\; (B, n_q, n_k).$$

# %%
def additive_scores(queries, keys, W_q, W_k, w_v):
    """a(q, k) = w_vᵀ tanh(W_q q + W_k k) para cada par (consulta, chave) de um lote."""
    queries = queries @ W_q.T  # (B, n_q, d_h)
    keys = keys @ W_k.T  # (B, n_k, d_h)
    features = torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))  # (B, n_q, n_k, d_h)
    return features @ w_v  # (B, n_q, n_k)


queries, keys = torch.randn(2, 3, query_size), torch.randn(2, 4, key_size)
print("consultas projetadas, com unsqueeze:", tuple((queries @ W_q.T).unsqueeze(2).shape))
print("chaves projetadas, com unsqueeze:   ", tuple((keys @ W_k.T).unsqueeze(1).shape))
scores = additive_scores(queries, keys, W_q, W_k, w_v)
print("pontuações:                         ", tuple(scores.shape))

# %% [markdown] en="243ffe760ec2"
# A entrada `[b, i, j]` tem de ser a fórmula de um par aplicada à consulta
# `i` e à chave `j` do exemplo `b`. Verifique uma entrada e, depois, o tensor
# inteiro, com um laço duplo lento:

# %%
one_pair = w_v @ torch.tanh(W_q @ queries[1, 2] + W_k @ keys[1, 0])
torch.testing.assert_close(scores[1, 2, 0], one_pair)

B, n_q, n_k = scores.shape
looped = torch.zeros(B, n_q, n_k)  # preenchido um par de cada vez
for b in range(B):
    for i in range(n_q):
        for j in range(n_k):
            looped[b, i, j] = w_v @ torch.tanh(W_q @ queries[b, i] + W_k @ keys[b, j])
torch.testing.assert_close(scores, looped)
print("as pontuações com broadcasting são iguais às do laço par a par")

# %% [markdown] en="85daa1fae026"
# ## Das pontuações à atenção
#
# O resto é o que o capítulo 02 construiu: um softmax mascarado sobre as
# chaves transforma as pontuações em pesos, de modo que as chaves de
# preenchimento além de `valid_lens` recebem peso 0, e um produto de matrizes
# em lote tira a média dos valores (cada um de tamanho $d_v$, que também não
# precisa coincidir com $d_q$ nem com $d_k$). `torch.bmm(A, B)` é esse
# produto: ele multiplica dois lotes de matrizes exemplo a exemplo, então a
# entrada `b` do seu resultado é `A[b] @ B[b]`.
#
# $$\operatorname{attention}(q) = \sum_{j} \alpha(q, k_j)\, v_j,
# \qquad \alpha = \operatorname{masked\_softmax}(a(q, \cdot)).$$

# %%
def additive_attention(queries, keys, values, valid_lens, W_q, W_k, w_v):
    """Pooling de atenção aditiva; devolve a saída e os pesos."""
    weights = d2l.masked_softmax(additive_scores(queries, keys, W_q, W_k, w_v), valid_lens)  # (B, n_q, n_k)
    return torch.bmm(weights, values), weights  # (B, n_q, d_v), (B, n_q, n_k)


# %% [markdown] en="3bed16830916"
# ## O exemplo de brinquedo clássico
#
# Dois exemplos, cada um com uma consulta de tamanho 20 e dez chaves de
# tamanho 2. Toda chave é o vetor (1, 1), e os valores são os números 0…39
# dispostos em dez linhas de quatro, os mesmos para os dois exemplos. O
# primeiro exemplo pode olhar para as suas 2 primeiras chaves, o segundo
# para as suas 6 primeiras.
#
# Antes de executar, preveja os pesos de atenção e as duas saídas. Você não
# precisa nem da consulta nem dos parâmetros da rede: olhe para as chaves.

# %%
queries = torch.normal(0, 1, (2, 1, 20))  # (lote, consultas, query_size)
keys = torch.ones((2, 10, 2))  # (lote, chaves, key_size)
values = torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)  # (lote, chaves, 4)
valid_lens = torch.tensor([2, 6])

print("linhas de valores de cada exemplo:")
print(values[0].numpy())

# %% [markdown] en="572ce9c680e8"
# Agora deixe o `d2lmini` executá-lo, na GPU se houver uma. As camadas são
# construídas com tamanhos explícitos, então os seus parâmetros iniciais
# aleatórios são sorteados na CPU e são os mesmos seja qual for o
# dispositivo que executa o notebook. O módulo também tem **dropout**, um
# recurso de treinamento que zera uma parte aleatória dos pesos de atenção e
# aumenta os outros para compensar (o capítulo 04 mostra isso em ação);
# `eval()` o desliga.

# %%
queries, keys, values, valid_lens = (t.to(device) for t in (queries, keys, values, valid_lens))
attention = d2l.AdditiveAttention(num_hiddens=8, dropout=0.1, key_size=2, query_size=20).to(device)
attention.eval()
output = attention(queries, keys, values, valid_lens)

print("pesos (uma linha para a consulta de cada exemplo):")
print(d2l.number(d2l.numpy(attention.attention_weights[:, 0]).round(3)))
print("saídas:")
print(d2l.number(d2l.numpy(output[:, 0]).round(3)))
torch.testing.assert_close(output.cpu(), torch.tensor([[[2.0, 3, 4, 5]], [[10.0, 11, 12, 13]]]))

# %% [markdown] en="2c1cf0f42c7a"
# Dez chaves idênticas recebem dez pontuações idênticas, qualquer que seja a
# consulta e quaisquer que sejam os parâmetros da rede, e um softmax de
# pontuações iguais é uniforme: peso 1/2 em cada uma das duas chaves
# válidas, 1/6 em cada uma das seis, zero no preenchimento. Então cada saída
# é a média simples das linhas de valores válidas: as linhas 0 e 1 dão em
# média [2, 3, 4, 5], as linhas 0 a 5, [10, 11, 12, 13].
#
# `d2l.show_weights` escreve cada peso na sua célula e hachura as chaves que
# a máscara removeu (`d2l.attention_mask` transforma os comprimentos válidos
# nessa máscara, True onde uma consulta pode olhar), para que uma chave
# mascarada não seja confundida com uma chave que apenas recebeu peso 0:

# %%
mask = d2l.attention_mask(valid_lens, batch_size=2, num_queries=1, num_keys=10)  # (lote, 1, chaves)
fig, axes = d2l.plt.subplots(2, 1, figsize=(7, 2.4), layout="constrained")
for b, ax in enumerate(axes):
    d2l.show_weights(attention.attention_weights[b], mask=mask[b], ax=ax, ylabels=["consulta"],
                     ylabel=f"exemplo {b}", xlabel="Chaves" if b == 1 else "", colorbar=False)
_ = fig.colorbar(axes[0].collections[0], ax=axes, label="peso de atenção", shrink=0.9)

# %% [markdown] en="e05e919cc4fd"
# ## Verificando com o `d2lmini`
#
# As nossas duas funções devem calcular o mesmo que `d2l.AdditiveAttention`.
# Entregue a elas os próprios parâmetros do módulo e compare. O módulo os
# guarda em três camadas `nn.Linear`, `attention.W_q`, `attention.W_k` e
# `attention.w_v`. Uma `nn.Linear` é a camada do PyTorch que multiplica a
# sua entrada por uma matriz aprendida e depois soma um vetor aprendido, o
# seu viés, a menos que seja construída com `bias=False`. A pontuação
# $a(q, k)$ não tem viés, então o módulo constrói as três com `bias=False`:
# cada uma só multiplica. O `.weight` de uma camada guarda a sua matriz com
# formato (saída, entrada), exatamente o formato das nossas $W_q$ e $W_k$.
# `w_v` é `nn.Linear(d_h, 1, bias=False)`, então o seu peso tem formato
# $(1, d_h)$, e `[0]` pega a sua única linha, o nosso vetor $w_v$. As chaves
# idênticas do exemplo de brinquedo esconderiam um erro que tratasse todas
# as chaves da mesma forma, então a comparação usa chaves aleatórias. O
# PyTorch não tem atenção aditiva pronta, então o laço par a par acima é a
# nossa referência independente.

# %%
random_keys = torch.randn(2, 10, 2).to(device)
output = attention(queries, random_keys, values, valid_lens)
ours, our_weights = additive_attention(queries, random_keys, values, valid_lens,
                                       attention.W_q.weight, attention.W_k.weight, attention.w_v.weight[0])
torch.testing.assert_close(our_weights, attention.attention_weights)
torch.testing.assert_close(ours, output)
print("a nossa atenção aditiva é igual a d2l.AdditiveAttention")

# %% [markdown] en="ac54526dec1a"
# ## A forma de concatenação
#
# Os artigos costumam escrever a pontuação aditiva como uma única matriz
# aplicada à consulta e à chave empilhadas em um só vetor:
#
# $$a(q, k) = w_v^\top \tanh\left(W_a \begin{bmatrix} q \\ k \end{bmatrix}\right),
# \qquad W_a \in \mathbb{R}^{d_h \times (d_q + d_k)}.$$
#
# Divida $W_a$ nas suas primeiras $d_q$ colunas e nas suas últimas $d_k$
# colunas, $W_a = [\,W_q \;\; W_k\,]$. Uma matriz vezes um vetor empilhado é
# a soma dos blocos vezes os pedaços, $W_a [q; k] = W_q q + W_k k$: as duas
# formas são a mesma família de funções, e cada $W_a$ dá um par
# $(W_q, W_k)$, e vice-versa.

# %%
W_a = torch.cat([W_q, W_k], dim=1)  # (d_h, d_q + d_k)
stacked = torch.cat([q, k])  # (d_q + d_k,)
torch.testing.assert_close(W_a @ stacked, W_q @ q + W_k @ k)
torch.testing.assert_close(w_v @ torch.tanh(W_a @ stacked), score)
print("W_a [q; k] é igual a W_q q + W_k k; formato de W_a:", tuple(W_a.shape))

# %% [markdown] en="2249ed328d4a"
# Funções iguais, custos diferentes. A forma empilhada multiplica por $W_a$
# um novo vetor de tamanho $(d_q + d_k)$ para cada um dos $n_q \cdot n_k$
# pares; a forma separada projeta cada consulta e cada chave uma única vez e
# só soma por par. Conte as operações aritméticas até a tanh (uma
# multiplicação-soma ou uma adição conta como uma operação) para 50
# consultas e 50 chaves, $d_q = d_k = 64$ e $d_h = 32$:

# %% en="4f5e6cbd9233"
# Dados em português: os milhares com ponto, como no texto (d2lmini.i18n.number)
from d2lmini.i18n import number

n_q, n_k, size, d_h = 50, 50, 64, 32  # size: d_q = d_k
stacked_cost = n_q * n_k * d_h * (size + size)  # um produto (d_h x 2*size) por par
split_cost = n_q * d_h * size + n_k * d_h * size + n_q * n_k * d_h  # projeta uma vez, depois soma por par
print(f"empilhada: {number(stacked_cost, ',')} operações")
print(f"separada:  {number(split_cost, ',')} operações, {d2l.number(stacked_cost / split_cost, '.0f')} vezes menos")

# %% [markdown] en="0222785abd6f"
# É por isso que as implementações (inclusive o `d2lmini`) mantêm $W_q$ e
# $W_k$ separadas e usam broadcasting.
#
# ## Consultas e chaves de tamanhos diferentes
#
# O exemplo de brinquedo já pontuou consultas de tamanho 20 contra chaves de
# tamanho 2. O produto escalar $q^\top k$ não consegue fazer isso: ele exige
# tamanhos iguais. Ele é a pontuação de `d2l.DotProductAttention`, que o
# capítulo 04 constrói ($q^\top k$ dividido por $\sqrt{d}$, em que $d$ é
# esse tamanho comum); aqui basta ver que o módulo recusa as nossas entradas
# de brinquedo, e diz por quê:

# %%
try:
    d2l.DotProductAttention(dropout=0.0)(queries, keys, values)
except ValueError as error:
    print("ValueError:", error)

# %% [markdown] en="fe9e6b9c3f5a"
# `d2l.AdditiveAttention` aceita quaisquer três tamanhos: aqui, consultas de
# tamanho 5, chaves de tamanho 3 e valores de tamanho 7.

# %%
mixed = d2l.AdditiveAttention(num_hiddens=8, dropout=0.0, key_size=3, query_size=5).to(device)
mixed_output = mixed(torch.randn(2, 4, 5).to(device), torch.randn(2, 6, 3).to(device),
                     torch.randn(2, 6, 7).to(device), torch.tensor([3, 6]).to(device))
print("saída:", tuple(mixed_output.shape), " pesos:", tuple(mixed.attention_weights.shape))

# %% [markdown] en="a686deff8938"
# A atenção aditiva não é a única maneira de contornar o limite do produto
# escalar. Uma matriz aprendida entre a consulta e a chave, sem camada
# oculta e sem $\tanh$, também pontua uma consulta de um tamanho contra uma
# chave de outro (Exercício 3.1), e a atenção multi-cabeça do capítulo 05
# pontua consultas e chaves de tamanhos diferentes só com produtos de
# matrizes. O que a atenção aditiva acrescenta é a rede: a sua $\tanh$ lhe
# permite aprender pontuações que nenhum produto de matrizes dá, e mantém
# toda pontuação entre limites fixos (as respostas comentadas da seção
# "Explore" usam isso).

# %% [markdown] en="48d38b259756"
# ## Pesos aditivos versus pesos de produto escalar
#
# Quando as chaves e as consultas têm, sim, o mesmo tamanho, as duas funções
# de pontuação se aplicam. A figura pontua 4 consultas de tamanho 2 contra
# 10 chaves (o segundo exemplo, com 6 delas válidas) com cada função, duas
# vezes: uma com chaves idênticas, como no exemplo de brinquedo, e outra com
# ruído aleatório de escala 1 somado às chaves. As linhas são consultas, as
# colunas são chaves, e uma única escala de cores serve aos quatro painéis;
# as chaves mascaradas 6 a 9 aparecem como o 0 que contêm.
#
# Preveja antes de executar as duas próximas células: com chaves idênticas,
# as duas funções dão os mesmos pesos? E quando o ruído torna as chaves
# diferentes?

# %%
pair_queries = torch.randn(2, 4, 2)
identical_keys = torch.ones(2, 10, 2)
noisy_keys = identical_keys + torch.randn(2, 10, 2)
additive = d2l.AdditiveAttention(num_hiddens=8, dropout=0.0, key_size=2, query_size=2).to(device).eval()
dot_product = d2l.DotProductAttention(dropout=0.0).eval()

panels = []
for key_set in (identical_keys, noisy_keys):
    args = (pair_queries.to(device), key_set.to(device), values, valid_lens)
    additive(*args)
    dot_product(*args)
    panels.append(torch.stack([additive.attention_weights[1], dot_product.attention_weights[1]]))
panels = torch.stack(panels).detach().cpu()  # (conjuntos de chaves, funções de pontuação, consultas, chaves)

# %%
fig = d2l.show_heatmaps(panels, xlabel="Chaves", ylabel="Consultas",
                        titles=["aditiva", "produto escalar escalonado"], figsize=(7, 3.6))
fig.axes[0].set_xticks(range(0, 10, 2))  # os painéis compartilham os eixos: ajustar um ajusta todos
fig.axes[0].set_yticks(range(4))
fig.axes[0].set_ylabel("chaves idênticas\nConsultas")
fig.axes[2].set_ylabel("chaves com ruído\nConsultas")
d2l.plt.show()

# %% [markdown] en="b330ac167c33"
# Com chaves idênticas (linha de cima), os dois painéis são planos sobre as
# seis chaves válidas, 1/6 cada: chaves iguais não dão a nenhuma função de
# pontuação nada para escolher. Com chaves com ruído (linha de baixo),
# as duas funções se separam. O produto escalar favorece, para cada
# consulta, as chaves com a maior componente na direção dela; a rede aditiva
# não treinada ainda é quase uniforme e, onde chega a preferir uma chave,
# essa chave não precisa ser a mesma. Nenhuma das duas está "certa": são
# funções diferentes, e o treinamento decide para onde cada uma olha.
#
# ## Explore
#
# O explorador abaixo redesenha as duas ponderações lado a lado conforme
# você mexe nos seus controles. Coisas para experimentar:
#
# * Ponha o ruído das chaves em 0: qualquer que seja a semente, os painéis
#   concordam e são planos sobre as chaves válidas.
# * Aumente o ruído devagar. Em que escala os pesos de produto escalar viram
#   linhas quase one-hot, com quase todo o peso em uma única chave? Os aditivos
#   chegam a virar?
# * Mude a semente com o ruído fixo: que partes do padrão se mantêm?
# * Baixe um comprimento válido para 1: a única chave válida leva todo o
#   peso, qualquer que seja a função de pontuação e qualquer que seja o
#   ruído. (Um comprimento 0 daria uma linha de zeros, a regra do `d2lmini`
#   vista no capítulo 02.)

# %%
from d2lmini.widgets import explore_additive

explorer = explore_additive()
explorer

# %% [markdown] en="0b80b211d2ee"
# <details>
# <summary>Respostas comentadas das coisas para experimentar (abra depois de experimentá-las)</summary>
#
# 1. Sem ruído, toda chave é $(1, 1)$, então cada consulta dá a mesma
#    pontuação a todas as suas chaves válidas: todo peso vale $1/2 = 0{,}5$ no
#    exemplo 0 e $1/6 \approx 0{,}167$ no exemplo 1, nos dois painéis e para
#    qualquer semente (a semente só sorteia o ruído, que é multiplicado
#    por 0).
# 2. Depende de quantas chaves dividem uma linha. No exemplo 0, com duas
#    chaves válidas, algumas linhas de produto escalar ficam quase one-hot a
#    partir de um ruído de mais ou menos 1 (o maior peso entre as sementes 0
#    a 9 é 0,990 com ruído 1); ali, as linhas aditivas nunca passam de 0,81.
#    No exemplo 1, com seis, as linhas de produto escalar só chegam perto no
#    topo da faixa do controle deslizante: o primeiro peso acima de 0,9
#    aparece com ruído 1,55 (semente 8), e o maior, 0,96, com ruído 2. Ainda
#    assim, elas se concentram muito mais depressa que as linhas
#    aditivas: nas sementes 0 a 9, o máximo médio de uma linha (uniforme:
#    0,167) é 0,36 com ruído 1 e 0,52 com ruído 2 para o produto escalar; as
#    linhas aditivas ficam em 0,23 e 0,29 e nunca passam de 0,39. A
#    pontuação de produto escalar cresce sem limite à medida que as chaves
#    crescem, enquanto a aditiva passa por $\tanh$, então fica dentro de
#    $\pm\sum_i |w_{v,i}|$, que é $\pm 1{,}81$ para o $w_v$ deste explorador:
#    com seis chaves, nenhum peso aditivo pode passar de
#    $e^{3{,}62}/(e^{3{,}62} + 5) \approx 0{,}88$.
# 3. As colunas hachuradas se mantêm (elas vêm dos comprimentos válidos), e
#    também o caráter de cada painel. As linhas aditivas de um painel se
#    parecem: com ruído 1, para cada semente de 0 a 9, as quatro consultas do
#    exemplo 1 escolhem a mesma chave, e nenhuma de suas linhas difere de
#    outra em mais de 0,041. Onde $\tanh$ é quase linear,
#    $w_v^\top \tanh(W_q q + W_k k) \approx w_v^\top W_q q + w_v^\top W_k k$;
#    o primeiro termo é o mesmo para todas as chaves e se cancela no softmax,
#    então a chave com o maior $w_v^\top W_k k$ vence para todas as consultas
#    (esse termo aponta a vencedora nas dez sementes). As linhas de produto
#    escalar diferem umas das outras, já que cada consulta tem a sua própria
#    direção. Qual chave vence muda com a semente, porque só o ruído torna as
#    chaves diferentes.
# 4. Uma linha com uma única chave válida é um softmax sobre uma única
#    pontuação, então essa chave recebe peso 1 (1,000 nos dois painéis) e a
#    saída é exatamente o seu valor.
#
# </details>

# %% [markdown] en="ef940c4071d5"
# ## Resumo
#
# * A atenção aditiva pontua um par com uma pequena rede aprendida, com uma
#   camada oculta e uma etapa não linear,
#   $a(q, k) = w_v^\top \tanh(W_q q + W_k k)$. Consultas e chaves podem ter
#   tamanhos diferentes $d_q$ e $d_k$; uma matriz aprendida entre elas
#   também lida com tamanhos diferentes, só com produtos de matrizes
#   (Exercício 3.1). A dimensão oculta $d_h$ é uma configuração livre que as
#   duas projeções compartilham.
# * Projetar primeiro e fazer o broadcasting de
#   $(B, n_q, 1, d_h) + (B, 1, n_k, d_h)$ pontua todos os pares de uma vez;
#   um softmax mascarado e `torch.bmm` completam o pooling.
# * Chaves idênticas recebem pontuações idênticas e, portanto, pesos
#   uniformes sobre as chaves válidas: o exemplo de brinquedo devolve as
#   médias [2, 3, 4, 5] e [10, 11, 12, 13].
# * $W_a [q; k] = W_q q + W_k k$ com $W_a = [W_q \; W_k]$: a forma de
#   concatenação é a mesma função. Calculada como está escrita, com um
#   produto para cada par, ela custa mais operações aritméticas do que
#   projetar cada consulta e cada chave uma única vez e usar broadcasting,
#   assim que há várias de cada (a contagem acima).
# * `d2l.AdditiveAttention` é igual à versão feita do zero quando recebe os
#   mesmos parâmetros.
# * Com chaves idênticas, a atenção aditiva e a de produto escalar dão os
#   mesmos pesos uniformes; com chaves com ruído, elas se separam.

# %% [markdown] en="b9564fdf6f3c"
# ## Por quê? Uma pergunta de verificação
#
# **No exemplo de brinquedo, as dez chaves são todas (1, 1). Por que os
# pesos são uniformes sobre as chaves válidas, qualquer que seja a consulta
# e quaisquer que sejam os parâmetros da rede?**

# %%
from d2lmini.exercises import questions

questions.ask("03")


# %% [markdown] en="5de1d88c26b9"
# ## Produtos de matrizes, antes dos exercícios
#
# O Exercício 3.1 pede que você construa uma pontuação só com produtos de
# matrizes. Três fatos bastam.
#
# * Uma matriz com $m$ linhas e $n$ colunas vezes um vetor de tamanho $n$ dá
#   um vetor de tamanho $m$: a entrada $i$ de $A x$ é $\sum_j A_{ij} x_j$.
#   Assim, uma matriz pode transformar um vetor de um tamanho em um vetor de
#   outro, como $W_k k$ fez acima.
# * Dois vetores do mesmo tamanho dão um único número, o seu produto
#   escalar $u^\top x = \sum_i u_i x_i$. Vetores de tamanhos diferentes não
#   têm produto escalar.
# * A matriz identidade $I$ (`torch.eye`), com uns na diagonal e zeros no
#   resto, deixa qualquer vetor como está: $I x = x$.
#
# Em `torch`, `@` multiplica. Um lote, um tensor 3-D, vezes uma matriz 2-D
# multiplica cada matriz do lote por essa mesma matriz; dois lotes são
# multiplicados exemplo a exemplo, como `torch.bmm` fez acima.
# `.transpose(1, 2)` troca os dois últimos eixos de um lote. Verifique cada
# formato impresso com estas regras:

# %%
A, x = torch.randn(4, 3), torch.randn(3)  # A: 4 linhas, 3 colunas
X, Y = torch.randn(2, 5, 4), torch.randn(2, 6, 3)  # lotes de 2 matrizes, (5, 4) e (6, 3)
print("A @ x:            ", tuple((A @ x).shape))
print("X @ A:            ", tuple((X @ A).shape))
print("Y.transpose(1, 2):", tuple(Y.transpose(1, 2).shape))
print("torch.eye(3) @ x é igual a x:", torch.equal(torch.eye(3) @ x, x))

# %% [markdown] en="08a8cbedef76"
# ## Exercícios
#
# Complete o corpo de cada função abaixo e depois execute a célula de
# verificação logo abaixo dela.

# %% [markdown] en="3120c8711484"
# ### Exercício 3.1 · Uma pontuação só com produtos de matrizes (★)
#
# A atenção aditiva usa uma camada oculta e uma $\tanh$ para pontuar uma
# consulta de tamanho $d_q$ contra uma chave de tamanho $d_k$. Produtos de
# matrizes sozinhos também conseguem fazer isso, como o capítulo disse; aqui
# você descobre como. Crie uma pontuação $a(q, k)$ que
#
# * use uma única matriz aprendível $W$ de formato $(d_q, d_k)$ e apenas
#   produtos de matrizes: sem camada oculta, sem $\tanh$;
# * dê um único número para cada par (consulta, chave);
# * seja o simples produto escalar $q^\top k$ quando $d_q = d_k$ e $W = I$.
#
# Depois escreva `matrix_scores(queries, keys, W)` para um lote: consultas
# $(B, n_q, d_q)$ e chaves $(B, n_k, d_k)$ na entrada, pontuações
# $(B, n_q, n_k)$ na saída, usando `@` ou `torch.bmm` (sem laços).

# %% tags=["exercise"]
def matrix_scores(queries, keys, W):
    """Uma pontuação por par (consulta, chave) a partir de produtos de matrizes com W (d_q, d_k): formato (B, n_q, n_k)."""
    ### BEGIN SOLUTION
    return queries @ W @ keys.transpose(1, 2)
    ### END SOLUTION


# %% tags=["check"]
ch03.check_bilinear_scores(matrix_scores)

# %% [markdown] en="1fd7635022b0"
# ### Exercício 3.2 · Quantifique a diferença (★)
#
# A figura de comparação mostrou as duas ponderações lado a lado. Escreva
# `weight_gap(additive, queries, keys, values, valid_lens)`: execute o módulo
# `d2l.AdditiveAttention` recebido e uma `d2l.DotProductAttention` (sem
# dropout) sobre as mesmas entradas e devolva a maior diferença absoluta
# entre os seus pesos de atenção, como um tensor 0-d.
#
# A verificação a executa em dois casos como os da figura, chaves idênticas
# e chaves aleatórias, e em um terceiro: consultas que apontam todas na direção
# de $(1, 0)$, e chaves $(1, t_j)$ com oito números $t_j$ diferentes, de modo
# que não há duas chaves iguais. Antes de executar, preveja a terceira
# diferença. Ela é zero? Alguma das duas ponderações é uniforme ali, e por
# quê?

# %% tags=["exercise"]
def weight_gap(additive, queries, keys, values, valid_lens):
    """O maior |peso aditivo - peso de produto escalar| sobre todas as consultas e chaves."""
    ### BEGIN SOLUTION
    additive(queries, keys, values, valid_lens)
    dot_product = d2l.DotProductAttention(dropout=0.0)
    dot_product(queries, keys, values, valid_lens)
    return (additive.attention_weights - dot_product.attention_weights).abs().max()
    ### END SOLUTION


# %% tags=["check"]
ch03.check_weight_gap(weight_gap)

# %% [markdown] en="2d1b50a411ff"
# ### Exercício 3.3 · A forma de concatenação, em lote (★★)
#
# Escreva `concat_scores(queries, keys, W_a, w_v)`, que calcula
# $w_v^\top \tanh(W_a [q; k])$ para cada par (consulta, chave), com a
# consulta primeiro no vetor empilhado. `queries` é $(B, n_q, d_q)$, `keys` é
# $(B, n_k, d_k)$, `W_a` é $(d_h, d_q + d_k)$ e `w_v` é $(d_h,)$; devolva as
# pontuações, $(B, n_q, n_k)$. Construa os pares empilhados explicitamente:
# depois do `unsqueeze`, como em `additive_scores`, aplique `expand` aos dois
# tensores até $(B, n_q, n_k, \cdot)$ e então junte-os com `torch.cat`.
# (`expand` repete um eixo de comprimento 1 até o comprimento que você der,
# sem copiar; `-1` mantém um eixo como está.) O objetivo é ver a forma
# empilhada funcionar, não ganhar velocidade.

# %% tags=["exercise"]
def concat_scores(queries, keys, W_a, w_v):
    """Pontuações w_vᵀ tanh(W_a [q; k]) para cada par (consulta, chave), formato (B, n_q, n_k)."""
    ### BEGIN SOLUTION
    B, n_q, n_k = queries.shape[0], queries.shape[1], keys.shape[1]
    pairs = torch.cat([queries.unsqueeze(2).expand(B, n_q, n_k, -1),
                       keys.unsqueeze(1).expand(B, n_q, n_k, -1)], dim=-1)  # (B, n_q, n_k, d_q + d_k)
    return torch.tanh(pairs @ W_a.T) @ w_v
    ### END SOLUTION


# %% tags=["check"]
ch03.check_concat_scores(concat_scores)

# %% [markdown] en="7b06896002aa"
# ## Leituras adicionais
#
# * D. Bahdanau, K. Cho e Y. Bengio (2014), "Neural Machine Translation by
#   Jointly Learning to Align and Translate" (arXiv:1409.0473): a pontuação
#   aditiva, introduzida para que um modelo de tradução, ao escrever cada
#   palavra, possa olhar de volta para cada palavra da frase de origem. O
#   capítulo 08 treina um pequeno modelo desse tipo.
# * M.-T. Luong, H. Pham e C. D. Manning (2015), "Effective Approaches to
#   Attention-based Neural Machine Translation": a pontuação aditiva medida
#   contra o produto escalar e contra uma pontuação construída com uma única
#   matriz, que eles chamam de "general".
# * O livro d2l, seção "Attention Scoring Functions".
