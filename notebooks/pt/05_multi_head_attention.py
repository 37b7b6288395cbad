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

# %% [markdown] en="1155ed739475"
# # 05 · Atenção multi-cabeça
#
# Uma camada de atenção dá a cada consulta um único conjunto de pesos, então
# tudo o que a consulta deveria coletar das chaves sai como uma única média
# ponderada. A atenção multi-cabeça executa várias atenções menores lado a
# lado, cada uma sobre a sua própria projeção aprendida das consultas, chaves
# e valores, e mistura os resultados com um último mapa linear.
# Uma cabeça pode comparar tokens por um conjunto de características enquanto
# outra os compara por um conjunto diferente.
#
# **Neste notebook você vai**
# 1. construir a atenção multi-cabeça do zero, primeiro uma cabeça por vez e
#    depois com todas as cabeças dobradas para dentro do lote (`transpose_qkv`
#    e `transpose_output`), acompanhando os formatos a cada passo;
# 2. verificar o resultado com `d2lmini.MultiHeadAttention` e com a
#    `torch.nn.MultiheadAttention` do PyTorch, copiando os pesos de uma para a
#    outra à mão;
# 3. ver o erro que aparece quando a largura não se divide em cabeças iguais;
# 4. desenhar os pesos de cada cabeça em um exemplo de autoatenção;
# 5. rastrear para onde vai cada característica quando as cabeças são
#    dobradas para dentro do lote, e ver o que uma transposição esquecida faz;
# 6. explorar cabeças, mascaramento causal e comprimentos válidos com
#    controles deslizantes;
# 7. conhecer `torch.einsum`, que escreve um produto em lote dando nome aos
#    seus eixos.

# %% [markdown] en="9150c6da6e4d"
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/pt/05_multi_head_attention.ipynb) abre a edição do aluno deste capítulo no Colab. Execute primeiro a célula de configuração recolhida logo abaixo: no Colab, ela instala o `d2lmini`, o pacote auxiliar desta coleção, e não mexe nos pacotes do próprio ambiente de execução; em um hub de curso, ela aponta qualquer arquivo seu que uma atualização tenha guardado com outro nome. Em qualquer outro lugar, ela não faz nada.

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
from torch import nn

import d2lmini as d2l
from d2lmini.exercises import ch05

device = d2l.try_gpu()

# %% [markdown] en="cd968d4f3343"
# ## Cabeças, em fórmulas
#
# A camada tem uma largura $d_\text{model}$ (o `num_hiddens` do código) e $h$
# cabeças (`num_heads`). Cada cabeça trabalha em um espaço de largura
# $d_\text{head} = d_\text{model} / h$: as suas consultas, chaves e valores
# têm todos $d_\text{head}$ características. A cabeça $i$ tem as suas
# próprias projeções
# $W_q^{(i)} \in \mathbb{R}^{d_\text{head} \times d_q}$,
# $W_k^{(i)} \in \mathbb{R}^{d_\text{head} \times d_k}$ e
# $W_v^{(i)} \in \mathbb{R}^{d_\text{head} \times d_v}$, em que $d_q$, $d_k$ e
# $d_v$ são os tamanhos dos vetores de consulta, chave e valor de entrada, e
# calcula a atenção de produto escalar escalonado (capítulo 04) nesse espaço,
# de modo que as suas pontuações são divididas por $\sqrt{d_\text{head}}$:
#
# $$\mathbf{h}_i = \operatorname{attention}\!\left(W_q^{(i)} q,\; W_k^{(i)} k,\;
# W_v^{(i)} v\right) \in \mathbb{R}^{d_\text{head}}.$$
#
# Os $h$ resultados são concatenados de volta à largura
# $h \cdot d_\text{head} = d_\text{model}$ e misturados por uma única matriz
# de saída $W_o \in \mathbb{R}^{d_\text{model} \times d_\text{model}}$:
#
# $$\operatorname{multihead}(q, k, v) = W_o \begin{bmatrix} \mathbf{h}_1 \\ \vdots \\
# \mathbf{h}_h \end{bmatrix}.$$
#
# Empilhe as projeções das cabeças umas sobre as outras e você obtém uma
# matriz $W_q$ comum, de $d_\text{model} \times d_q$: a cabeça $i$ fica com as
# linhas $i \cdot d_\text{head}$ a $(i + 1) \cdot d_\text{head} - 1$ (e o
# mesmo vale para $W_k$ e $W_v$). Assim, as projeções de todas as cabeças são
# calculadas por um único produto de matrizes, e uma cabeça é apenas uma
# fatia das características projetadas.
#
# ## Do zero, uma cabeça por vez
#
# Tome $d_\text{model} = 16$ e $h = 4$ cabeças de largura $d_\text{head} = 4$,
# um lote de dois exemplos com 3 consultas e 5 pares chave–valor cada,
# entradas de tamanho $d_q = d_k = d_v = 16$ e comprimentos válidos 1-D. Cada
# cabeça usa a `d2l.DotProductAttention` do capítulo 04.
#
# As fórmulas multiplicam uma coluna: $W_q q$. O código guarda cada consulta
# como uma linha, ao longo do último eixo de `queries`, então multiplica pela
# direita pela transposta: para uma linha $x$, $x W^\top$ contém os mesmos
# números que a coluna $W x$ (a entrada $j$ de ambas é a linha $j$ de $W$
# vezes $x$). Assim, `queries @ W_q.T` projeta todas as consultas do lote de
# uma vez, e a $W_q^{(i)}$ da cabeça $i$ é a fatia das suas $d_\text{head}$
# linhas, `W_q[rows]`, que projeta com `queries @ W_q[rows].T`.

# %%
num_hiddens, num_heads = 16, 4  # d_model e h
d_head = num_hiddens // num_heads  # largura de uma cabeça
input_size = 16  # d_q = d_k = d_v
torch.manual_seed(0)  # aqui, para que executar esta célula de novo sorteie os mesmos números
W_q, W_k, W_v = (torch.randn(num_hiddens, input_size) / input_size ** 0.5 for _ in range(3))  # (d_model, d_q)
W_o = torch.randn(num_hiddens, num_hiddens) / num_hiddens ** 0.5  # (d_model, d_model)
queries = torch.randn(2, 3, input_size)  # (lote, consultas, d_q)
keys = torch.randn(2, 5, input_size)  # (lote, chaves, d_k)
values = torch.randn(2, 5, input_size)  # (lote, chaves, d_v)
valid_lens = torch.tensor([3, 5])

W_q, W_k, W_v, W_o = (W.to(device) for W in (W_q, W_k, W_v, W_o))
queries, keys, values, valid_lens = (t.to(device) for t in (queries, keys, values, valid_lens))
dot_product = d2l.DotProductAttention(dropout=0.0)


def multihead_loop(queries, keys, values, valid_lens):
    """Atenção multi-cabeça com um laço explícito sobre as cabeças."""
    heads = []
    for i in range(num_heads):
        rows = slice(i * d_head, (i + 1) * d_head)  # as linhas da cabeça i em cada projeção
        q_i, k_i, v_i = queries @ W_q[rows].T, keys @ W_k[rows].T, values @ W_v[rows].T  # (B, n, d_head)
        heads.append(dot_product(q_i, k_i, v_i, valid_lens))  # (B, n_q, d_head)
    return torch.cat(heads, dim=-1) @ W_o.T  # (B, n_q, h*d_head) -> (B, n_q, d_model)


looped = multihead_loop(queries, keys, values, valid_lens)
print("saída do laço:", tuple(looped.shape))

# %% [markdown] en="4bb3e04528c4"
# ## Todas as cabeças de uma vez: dobre-as para dentro do lote
#
# O laço executa $h$ pequenas atenções, uma depois da outra. Mas as cabeças
# são independentes, exatamente como os exemplos de um lote, então podemos
# *transformá-las* em exemplos do lote: projetar uma única vez com as
# matrizes completas, dividir o eixo das características em (cabeças,
# $d_\text{head}$), levar o eixo das cabeças para junto do eixo do lote e
# fundir os dois. Uma única chamada de atenção em lote atende então todas as
# cabeças de todos os exemplos. `X.permute(dims)` reordena os eixos: o eixo
# `k` do resultado é o eixo `dims[k]` de `X`. Então `permute(0, 2, 1, 3)`
# troca os eixos 1 e 2, e `permute(2, 0, 1)` de um tensor (A, B, C) dá
# (C, A, B): o novo eixo 0 é o antigo eixo 2, o novo eixo 1 é o antigo eixo 0,
# e o novo eixo 2 é o antigo eixo 1. Acompanhe os formatos:

# %%
B, n_q = queries.shape[0], queries.shape[1]
projected = queries @ W_q.T
print("projetado com W_q:                    ", tuple(projected.shape), " (lote, consultas, d_model)")
split = projected.reshape(B, n_q, num_heads, d_head)
print("características divididas em cabeças: ", tuple(split.shape), " (lote, consultas, cabeças, d_head)")
moved = split.permute(0, 2, 1, 3)
print("eixo das cabeças movido para a frente:", tuple(moved.shape), " (lote, cabeças, consultas, d_head)")
folded = moved.reshape(B * num_heads, n_q, d_head)
print("cabeças dobradas para dentro do lote: ", tuple(folded.shape), " (lote*cabeças, consultas, d_head)")

# %% [markdown] en="aeb1fe0e470c"
# Essas três linhas são o `transpose_qkv`. No lote dobrado, a linha
# `b * h + i` é a cabeça `i` do exemplo `b`. Os comprimentos válidos
# pertencem aos exemplos, então cada comprimento precisa ser repetido uma vez
# por cabeça, na mesma ordem (`repeat_interleave`). Depois da atenção,
# `transpose_output` desfaz a dobra — de (lote·cabeças, consultas,
# $d_\text{head}$) de volta para (lote, consultas, cabeças·$d_\text{head}$) —,
# e isso *é* a concatenação das cabeças, pronta para $W_o$.

# %%
def transpose_qkv(X):
    """(lote, n, d_model) -> (lote*cabeças, n, d_head): cada cabeça vira um exemplo."""
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)  # (lote, n, cabeças, d_head)
    X = X.permute(0, 2, 1, 3)  # (lote, cabeças, n, d_head)
    return X.reshape(-1, X.shape[2], X.shape[3])  # (lote*cabeças, n, d_head)


def transpose_output(X):
    """(lote*cabeças, n, d_head) -> (lote, n, cabeças*d_head): as cabeças lado a lado."""
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])  # (lote, cabeças, n, d_head)
    X = X.permute(0, 2, 1, 3)  # (lote, n, cabeças, d_head)
    return X.reshape(X.shape[0], X.shape[1], -1)  # (lote, n, cabeças*d_head)


def multihead_folded(queries, keys, values, valid_lens):
    """Atenção multi-cabeça com as cabeças dobradas para dentro do lote: uma única chamada de atenção."""
    q, k, v = transpose_qkv(queries @ W_q.T), transpose_qkv(keys @ W_k.T), transpose_qkv(values @ W_v.T)
    lens = torch.repeat_interleave(valid_lens, repeats=num_heads, dim=0)  # (lote*cabeças,)
    heads = dot_product(q, k, v, lens)  # (lote*cabeças, consultas, d_head)
    return transpose_output(heads) @ W_o.T  # (lote, consultas, d_model)


print("comprimentos por (exemplo, cabeça):", torch.repeat_interleave(valid_lens, num_heads).tolist())
torch.testing.assert_close(multihead_folded(queries, keys, values, valid_lens), looped)
print("cabeças dobradas == laço sobre as cabeças")

# %% [markdown] en="1b803d7ea899"
# A camada inteira em uma figura, para os tamanhos desta seção
# ($d_\text{model} = 16$, $h = 4$, $d_\text{head} = 4$). Cada coluna de
# característica é colorida de acordo com a cabeça para onde vai: a divisão
# (`transpose_qkv`) entrega à cabeça $i$ as suas próprias $d_\text{head}$
# colunas como um exemplo do lote de $B \cdot h$, as cabeças prestam atenção
# lado a lado, e a junção (`transpose_output`) devolve as colunas delas ao
# lugar de onde vieram, o que é a concatenação que $W_o$ mistura. Quais
# reshapes fazem a divisão, e por que a transposição entre eles importa, é o
# que rastreamos passo a passo mais adiante.

# %%
from d2lmini.diagrams import draw_multihead_split_merge

draw_multihead_split_merge()

# %% [markdown] en="c3f5a245b4ec"
# Como ler a figura. Os dados fluem da esquerda para a direita, e o formato
# ao lado de cada rótulo é o do tensor naquele ponto. A faixa colorida são as
# $d_\text{model} = 16$ características de um token depois da projeção:
# colunas 0 a 3 na primeira cor, 4 a 7 na segunda, e assim por diante, uma
# cor por cabeça. Cada caixa de cabeça é tingida com a cor das suas 4
# colunas: elas vão para essa caixa e para nenhuma outra,
# e voltam como as 4 colunas de saída dessa cabeça, no mesmo lugar da faixa
# da direita. As quatro caixas são desenhadas separadas, mas o código não faz
# quatro chamadas: depois da divisão, elas são quatro linhas de um único lote
# de $B \cdot h$, e uma única chamada de atenção cuida de todas. Só $W_o$
# mistura as cores.

# %% [markdown] en="381f361dffb9"
# ## Verificando com o `d2lmini`
#
# `d2l.MultiHeadAttention` é esta versão dobrada, com $W_q, W_k, W_v, W_o$
# como camadas `nn.Linear` (a matriz aprendível $W$ do PyTorch, aplicada a uma
# linha $x$ como $x W^\top$, mais um viés quando pedido). Construa uma com
# tamanhos de entrada explícitos, para que as suas camadas já tenham matrizes
# de pesos (sem os tamanhos, elas esperariam a primeira chamada para
# descobri-los, e ainda não haveria onde copiar nada), copie para dentro dela
# as nossas matrizes e compare as saídas e os pesos por cabeça, que ela
# devolve no formato (lote, cabeças, consultas, chaves).

# %%
mha = d2l.MultiHeadAttention(num_hiddens, num_heads, dropout=0.0, query_size=input_size,
                             key_size=input_size, value_size=input_size).to(device)
with torch.no_grad():
    for layer, W in ((mha.W_q, W_q), (mha.W_k, W_k), (mha.W_v, W_v), (mha.W_o, W_o)):
        layer.weight.copy_(W)  # nn.Linear guarda (saída, entrada): o mesmo arranjo do nosso W

ours = mha(queries, keys, values, valid_lens)
torch.testing.assert_close(ours, looped)
torch.testing.assert_close(mha.transpose_qkv(queries @ W_q.T), transpose_qkv(queries @ W_q.T))
print("d2l.MultiHeadAttention == nosso laço; pesos:", tuple(mha.attention_weights.shape))

# %% [markdown] en="349fffbc83a4"
# A camada guarda as suas peças como atributos que você pode usar
# separadamente. `mha.num_heads` é $h$, o número de cabeças. `mha.W_q`,
# `mha.W_k`, `mha.W_v` e `mha.W_o` são as quatro camadas `nn.Linear`;
# `mha.transpose_qkv` e `mha.transpose_output` são as versões dela das nossas
# duas funções (a primeira acabou de ser verificada com a nossa). E
# `mha.attention` é uma `d2l.DotProductAttention` do capítulo 04: ela faz o
# papel de `dot_product` em `multihead_folded`, uma chamada sobre as cabeças
# dobradas, que recebe (lote·cabeças, n, $d_\text{head}$) e devolve
# (lote·cabeças, consultas, $d_\text{head}$). Depois de cada chamada, ela
# guarda os pesos dessa chamada, uma matriz por (exemplo, cabeça):
# `mha.attention.attention_weights`, de formato (lote·cabeças, consultas,
# chaves). `mha.attention_weights` são esses mesmos números, remodelados para
# (lote, cabeças, consultas, chaves).

# %%
print("mha.attention é da classe", type(mha.attention).__name__)
print("mha.attention.attention_weights:", tuple(mha.attention.attention_weights.shape), " (lote*cabeças, consultas, chaves)")
torch.testing.assert_close(mha.attention.attention_weights.reshape(2, num_heads, 3, 5), mha.attention_weights)
print("remodelados para (lote, cabeças, consultas, chaves), eles são mha.attention_weights")

# %% [markdown] en="4a139557493c"
# ## Verificando com `torch.nn.MultiheadAttention`
#
# A camada do PyTorch guarda as três projeções de entrada como **uma única**
# matriz, `in_proj_weight`, de formato ($3 d_\text{model}$, $d_\text{model}$):
# $W_q$, $W_k$ e $W_v$ empilhadas por linhas, nessa ordem. (As suas consultas
# precisam ter largura $d_\text{model}$; uma única matriz consegue guardar as
# três projeções porque aqui chaves e valores também têm essa largura,
# $d_k = d_v = d_\text{model}$, o padrão do PyTorch.) $W_o$ fica em
# `out_proj`. As cabeças dela dividem as linhas do mesmo jeito que as nossas
# (a cabeça $i$ fica com as linhas $i \cdot d_\text{head}$ a
# $(i+1) \cdot d_\text{head} - 1$ de cada bloco), então basta copiar as
# matrizes. Mais dois detalhes:
#
# * ela mascara com `key_padding_mask`, um tensor booleano (lote, chaves) que
#   vale **True no preenchimento** — o sentido oposto ao do `attn_mask` da
#   SDPA;
# * `average_attn_weights=False` devolve os pesos por cabeça em vez da média
#   deles.
#
# Primeiro, a cópia, escrita por extenso:

# %%
torch_mha = nn.MultiheadAttention(embed_dim=num_hiddens, num_heads=num_heads, bias=False,
                                  batch_first=True).to(device)
with torch.no_grad():
    torch_mha.in_proj_weight.copy_(torch.cat([W_q, W_k, W_v], dim=0))  # (3*d_model, d_model)
    torch_mha.out_proj.weight.copy_(W_o)  # (d_model, d_model)

padding = torch.arange(keys.shape[1], device=device) >= valid_lens[:, None]  # (lote, chaves), True = preenchimento
print("key_padding_mask:")
print(padding.cpu().int().numpy())

theirs, their_weights = torch_mha(queries, keys, values, key_padding_mask=padding, average_attn_weights=False)
torch.testing.assert_close(theirs, ours)
torch.testing.assert_close(their_weights, mha.attention_weights)
print("nn.MultiheadAttention == d2l.MultiHeadAttention, nas saídas e nos pesos por cabeça")

# %% [markdown] en="23d1c7b216b3"
# De agora em diante, os dois auxiliares que o `d2lmini` oferece fazem esse
# trabalho: `d2l.padding_mask(valid_lens, num_keys)` constrói a máscara e
# `d2l.to_torch_multihead(mha)` constrói a camada do PyTorch com os pesos
# copiados (inclusive os vieses, no caso de uma camada construída com
# `bias=True`).

# %%
torch.testing.assert_close(d2l.padding_mask(valid_lens, keys.shape[1]), padding)
copied = d2l.to_torch_multihead(mha)
torch.testing.assert_close(copied(queries, keys, values, key_padding_mask=padding)[0], ours)
print("d2l.to_torch_multihead + d2l.padding_mask reproduzem a mesma saída")

# %% [markdown] en="f0c1e7b46d31"
# ## Quando a largura não se divide
#
# Cada cabeça recebe $d_\text{head} = d_\text{model} / h$ características,
# então $d_\text{model}$ (`num_hiddens`) precisa ser múltiplo de $h$
# (`num_heads`). Peça 4 cabeças sobre 10 características e o `d2lmini` barra
# você já na construção, com uma sugestão:

# %%
try:
    d2l.MultiHeadAttention(num_hiddens=10, num_heads=4, dropout=0.0)
except ValueError as error:
    print("ValueError:", error)

# %% [markdown] en="c492cae72a49"
# O PyTorch também recusa, de forma mais seca:

# %%
try:
    nn.MultiheadAttention(embed_dim=10, num_heads=4)
except AssertionError as error:
    print("AssertionError:", error)

# %% [markdown] en="8ef959d622d4"
# ## Rastreando os formatos: por que a transposição importa
#
# `transpose_qkv` tem três linhas, e a do meio é fácil de esquecer: um único
# `reshape` para (lote·cabeças, n, $d_\text{head}$) também tem o formato
# certo. Os formatos sozinhos não distinguem os dois, então vamos fazer o
# próprio tensor nos contar de onde veio cada número. Tome um exemplo
# ($B = 1$) de $T = 4$ posições e $d_\text{model} = 8$ características
# divididas em $h = 2$ cabeças de largura $d_\text{head} = 4$, e construa dois
# tensores desse formato: um guarda a posição $t$ de cada célula, o outro a
# sua coluna de característica $j$. A coluna de característica $j$ pertence à
# cabeça $j \,//\, d_\text{head}$. Todo reshape e todo permute movem as
# células dos dois tensores da mesma maneira, então, no fim, cada célula
# ainda diz de onde veio.

# %%
T, d_model, h = 4, 8, 2
d_head = d_model // h  # 4, como no primeiro exemplo
positions = torch.arange(T).repeat_interleave(d_model).reshape(1, T, d_model)  # X[0, t, j] = t
columns = torch.arange(d_model).repeat(T).reshape(1, T, d_model)  # X[0, t, j] = j
# Usamos apenas o transpose_qkv e o transpose_output desta camada.
tracer = d2l.MultiHeadAttention(num_hiddens=d_model, num_heads=h, dropout=0.0)


def steps(X):
    """transpose_qkv um passo de cada vez: cada tensor intermediário, com o nome da operação que o criou."""
    split = X.reshape(1, T, h, d_head)  # (B, T, h, d_head)
    moved = split.permute(0, 2, 1, 3)  # (B, h, T, d_head)
    folded = moved.reshape(1 * h, T, d_head)  # (B*h, T, d_head)
    return {"X": X, "reshape": split, "permute(0, 2, 1, 3)": moved, "reshape = transpose_qkv": folded,
            "transpose_output": tracer.transpose_output(folded)}


traced = {name: steps(X) for name, X in (("positions", positions), ("columns", columns))}
wrong = positions.reshape(1 * h, T, d_head)  # o bug: sem transposição
for name, X in (("positions", positions), ("columns", columns)):
    torch.testing.assert_close(traced[name]["reshape = transpose_qkv"], tracer.transpose_qkv(X))
    torch.testing.assert_close(traced[name]["transpose_output"], X)
for step, tensor in traced["positions"].items():
    print(f"{step:<24}{tuple(tensor.shape)}")
print("passo a passo == o transpose_qkv do d2l; transpose_output traz X de volta")
print("posições na linha 0 do lote, com a transposição:", traced["positions"]["reshape = transpose_qkv"][0, :, 0].tolist())
print("posições na linha 0 do lote, só com reshape:    ", wrong[0, :, 0].tolist())

# %% [markdown] en="7446e454481b"
# Como ler a figura. Cada painel é um tensor (sem o eixo do lote, de tamanho
# 1), com o passo que o criou e o seu formato no título. Em todo painel, o
# último eixo corre ao longo de um bloco, o penúltimo desce pelas linhas do
# bloco, e cada índice dos eixos à frente desses dois dá mais um bloco, lado a
# lado, da esquerda para a direita. A cor de uma célula é a cabeça da sua
# coluna de característica, e o seu dígito é a posição de onde ela veio. O
# que você quer no fim da linha de cima: um bloco por cabeça, cada bloco de
# uma só cor (só as características de uma cabeça), com os dígitos 0, 1, 2, 3
# descendo pelas linhas (cada posição uma vez, em ordem).

# %%
from matplotlib.patches import Patch

from d2lmini.widgets.shape_tracer import head_colour, tensor_picture


def show_tensor(ax, name, tensor_positions, tensor_columns):
    """Um painel: um tensor rastreado como blocos de células, com o passo e o seu formato no título."""
    shape = tuple(tensor_positions.shape)
    blocks = (-1, *shape[-2:])  # (blocos, linhas, colunas): o lote e os eixos do meio, lado a lado
    picture = tensor_picture(tensor_positions.reshape(blocks), tensor_columns.reshape(blocks), d_head)
    ax.imshow(picture, interpolation="nearest")
    ax.set_title(f"{name}\n{shape}", fontsize=9)
    ax.set_axis_off()


names = list(traced["positions"])
blocks = [traced["positions"][n].reshape(-1, *traced["positions"][n].shape[-2:]).shape for n in names]
fig, axes = d2l.plt.subplots(2, len(names), figsize=(12, 3.6), layout="constrained",
                             width_ratios=[G * (C + 1) - 1 for G, _, C in blocks])  # a largura de cada painel, em células
for ax, name in zip(axes[0], names):
    show_tensor(ax, name, traced["positions"][name], traced["columns"][name])
show_tensor(axes[1, 0], "X", positions, columns)
show_tensor(axes[1, 3], "só reshape (o bug)", wrong, columns.reshape(1 * h, T, d_head))
for ax in (axes[1, 1], axes[1, 2], axes[1, 4]):
    ax.set_axis_off()
axes[1, 1].text(0.5, 0.5, "sem permute: o mesmo\nformato (2, 4, 4), mas\no bloco 0 guarda as\nposições 0, 0, 1, 1",
                ha="center", va="center", fontsize=9, transform=axes[1, 1].transAxes)
fig.legend(handles=[Patch(color=head_colour(i), label=f"cabeça {i}") for i in range(h)], loc="lower right",
           ncols=h, fontsize=9, frameon=False)
d2l.plt.show()

# %% [markdown] en="f592f9b6971b"
# Leia a linha de cima da esquerda para a direita, um painel de cada vez.
#
# * **X**, (1, 4, 8): um bloco, uma linha por posição (dígitos 0 a 3, de cima
#   para baixo), uma coluna por característica; as colunas 0 a 3 são da
#   cabeça 0, e as 4 a 7, da cabeça 1.
# * **reshape**, (1, 4, 2, 4): os eixos à frente dos dois últimos agora são
#   (lote, posições), então há um bloco por posição, quatro ao todo. As duas
#   linhas de cada bloco são as cabeças (primeiro a cabeça 0, depois a 1), e
#   as colunas, as 4 características de uma cabeça. Nenhum número se moveu:
#   são as mesmas 32 células, agrupadas de outro jeito.
# * **permute(0, 2, 1, 3)**, (1, 2, 4, 4): o eixo das cabeças agora vem antes
#   das posições, então há um bloco por cabeça. O bloco 0 é todo da cor da
#   cabeça 0, o bloco 1 todo da cor da cabeça 1, e cada um tem as posições 0
#   a 3 descendo pelas linhas. Esta é a figura que queríamos.
# * **reshape = transpose_qkv**, (2, 4, 4): fundir lote e cabeças em um único
#   eixo de 2 não muda bloco nenhum, já que o lote tem um só exemplo. Esses
#   dois blocos são o que a atenção recebe: duas sequências de 4 posições.
# * **transpose_output**, (1, 4, 8): as mesmas células de X, nos mesmos
#   lugares.
#
# A linha de baixo pula o permute. O formato é o mesmo, (2, 4, 4), mas
# observe as cores e os dígitos do bloco 0: as suas linhas alternam entre as
# cores das duas cabeças e dizem 0, 0, 1, 1. Um `reshape` preenche o novo
# formato na ordem da memória, e a memória guarda X linha por linha: todas as
# 8 características da posição 0, depois todas as da posição 1, e assim por
# diante. Então o bloco 0 recebe os 16 primeiros números, as posições 0 e 1,
# cortados em linhas de 4. A atenção sobre essa "cabeça" trataria as duas
# metades de um token como dois tokens e nunca veria as posições 2 e 3, que
# ficam no bloco 1. Nenhum erro aparece — só os números saem errados.

# %% [markdown] en="6fc68ff52850"
# ## O que cada cabeça observa
#
# Pesos aleatórios produzem cabeças aleatórias, o que diz pouco. Para ver
# cabeças fazendo trabalhos diferentes, reaproveitamos as características de
# palavras feitas à mão do capítulo 04 (comida, roupa, número, verbo, palavra
# funcional, fim de frase) na frase "Ela comeu uma manga." e construímos à
# mão uma camada de $h = 3$ cabeças de largura $d_\text{head} = 2$
# ($d_\text{model} = 6$, o número de características): $W_q = W_k = 2I$,
# $W_v = W_o = I$. As cabeças são numeradas a partir de 0, como no código e
# no explorador abaixo: a cabeça 0 então vê só as características (comida,
# roupa), a cabeça 1 só (número, verbo), a cabeça 2 só (função, fim) — cada
# cabeça compara os tokens pelas suas próprias duas características. Isto é
# autoatenção (consultas, chaves e valores são todos a frase) sem máscara.

# %%
features = ["comida", "roupa", "número", "verbo", "função", "fim"]
sentence = ["ela", "comeu", "uma", "manga", "."]
X = torch.tensor([[0, 0, 0, 0, 1, 0],  # ela
                  [1, 0, 0, 1, 0, 0],  # comeu
                  [0, 0, 1, 0, 0, 0],  # uma
                  [1, 1, 0, 0, 0, 0],  # manga
                  [0, 0, 0, 0, 0, 1]],  # .
                 dtype=torch.float32).unsqueeze(0).to(device)  # (lote=1, tokens=5, características=6)

by_hand = d2l.MultiHeadAttention(num_hiddens=6, num_heads=3, dropout=0.0, query_size=6, key_size=6,
                                 value_size=6).to(device)
with torch.no_grad():
    for layer, scale in ((by_hand.W_q, 2.0), (by_hand.W_k, 2.0), (by_hand.W_v, 1.0), (by_hand.W_o, 1.0)):
        layer.weight.copy_(scale * torch.eye(6))
sentence_output = by_hand(X, X, X)
per_head = by_hand.attention_weights[0].detach().cpu()  # (cabeças, consultas, chaves)
print("saída:", tuple(sentence_output.shape), " pesos por cabeça do exemplo:", tuple(per_head.shape))

# %%
titles = [f"cabeça {i}\n({features[2 * i]}, {features[2 * i + 1]})" for i in range(3)]
fig = d2l.show_heatmaps(per_head, xlabel="Chaves", ylabel="Consultas", titles=titles, figsize=(8.5, 3.2))
fig.axes[0].set_xticks(range(5), sentence)  # os painéis compartilham os eixos: ajustar um ajusta todos
fig.axes[0].set_yticks(range(5), sentence)
for ax in fig.axes[:3]:
    ax.tick_params(axis="x", labelrotation=45)
d2l.plt.show()

# %% [markdown] en="423c160d7fc8"
# Cada painel é uma cabeça; as três compartilham uma mesma escala de cores. A
# cabeça 0 liga *comeu* e *manga* (as duas carregam comida) e faz *manga*
# prestar atenção principalmente a si mesma. A cabeça 1 deixa *comeu* e *uma* prestarem
# atenção a si mesmas — nenhum outro token compartilha a característica de
# verbo ou de número delas. A cabeça 2 faz o mesmo com *ela* e com o ponto
# final. Um token sem nada nas duas características de uma cabeça tem
# pontuação 0 contra todas as chaves ali, então a sua linha é uniforme: essa
# cabeça não tem nada a dizer sobre ele. Concatenar as três cabeças e aplicar
# $W_o$ dá a cada token uma única saída que combina as três visões.

# %% [markdown] en="0854f617b9f3"
# ## Explore
#
# Primeiro, os formatos. O rastreador dobra um tensor (1, T, 8) em
# (h, T, 8/h), como na figura acima, com o próprio `transpose_qkv` do `d2l`,
# ou com um `reshape` simples quando você desmarca *com transposição*. Ele desenha X à esquerda, uma linha por posição, e o tensor
# dobrado à direita, em que o bloco $b$ é a linha $b$ do lote; dígitos e
# cores significam o mesmo que na figura (posição e cabeça). Uma dobra
# correta mostra cada bloco de uma só cor, com as posições em ordem descendo
# pelas linhas:
#
# * Passe o número de cabeças por 1, 2, 4, 8 com a transposição: cada bloco
#   continua de uma só cor, com as posições 0 a T − 1 descendo pelas linhas.
# * Desmarque *com transposição*: agora os blocos misturam cores (cabeças) e as
#   suas linhas repetem posições. Com h = 1 os dois coincidem: uma única
#   cabeça não precisa ser movida.
# * Mude T: sem a transposição, as posições que um bloco contém também mudam.

# %%
from d2lmini.widgets import explore_shape_tracer

shape_tracer = explore_shape_tracer()
shape_tracer

# %% [markdown] en="6b4f594def5d"
# <details>
# <summary>Respostas comentadas das coisas para experimentar (abra depois de experimentá-las)</summary>
#
# 1. Com a transposição, a entrada (1, 4, 8) vira (1, 4, 8), (2, 4, 4),
#    (4, 4, 2) e (8, 4, 1) para $h$ = 1, 2, 4, 8, e em todo $h$ o bloco $b$
#    contém só as $d_\text{head} = 8/h$ colunas da cabeça $b$, com as posições
#    0, 1, 2, 3 descendo pelas linhas. É disso que a atenção precisa: cada
#    bloco é a sequência própria de uma cabeça.
# 2. Sem ela, em $h = 2$ cada bloco contém as colunas das duas cabeças, e as
#    suas linhas são as posições 0, 0, 1, 1; em $h = 4$, o bloco 0 é a posição
#    0 inteira, com as quatro cabeças dela. A atenção dentro de um bloco
#    desses trataria pedaços de uma mesma posição como tokens diferentes e
#    misturaria as características das cabeças. Em $h = 1$, a legenda mostra o
#    mesmo formato, (1, 4, 8), nos dois casos, e os blocos coincidem.
# 3. Em $h = 4$ sem a transposição, $T = 3$ dá blocos com as posições
#    0, 0, 0 / 0, 1, 1 / 1, 1, 2 / 2, 2, 2, e $T = 5$ dá 0, 0, 0, 0, 1 /
#    1, 1, 1, 2, 2 / … Um `reshape` simples corta a memória contínua em
#    pedaços iguais, então o ponto onde um bloco começa depende de $T$; com a
#    transposição, cada bloco contém as posições 0 a $T - 1$, seja qual for
#    $T$.
#
# </details>

# %% [markdown] en="4ea060200ca6"
# Agora, os pesos das cabeças. O segundo explorador executa uma camada de
# autoatenção multi-cabeça sobre seis posições cujas incorporações são
# vetores aleatórios (elas não representam palavra nenhuma: o capítulo 09
# mostra as cabeças de um modelo treinado sobre frases reais) e redesenha os
# mapas de calor por cabeça, em uma mesma escala de cores, à medida que você
# mexe nos controles: o número de cabeças, qual cabeça mostrar (ou todas
# elas), o mascaramento causal e o comprimento válido.
#
# * Passe o número de cabeças por 1, 2, 4, 8: a largura por cabeça,
#   $d_\text{head} = d_\text{model} / h$ com $d_\text{model} = 16$, encolhe,
#   e os padrões das cabeças mudam, porque cada uma vê menos características.
# * Mostre todas as cabeças de uma vez, depois uma só: duas cabeças chegam a
#   ficar parecidas?
# * Ligue o mascaramento causal: todas as cabeças perdem o triângulo superior
#   ao mesmo tempo, porque todas recebem a mesma máscara.
# * Encurte o comprimento válido: as colunas de preenchimento vão a zero em
#   todas as cabeças.

# %%
from d2lmini.widgets import explore_multihead

explorer = explore_multihead()
explorer

# %% [markdown] en="fec1b45ceff5"
# <details>
# <summary>Respostas comentadas das coisas para experimentar (abra depois de experimentá-las)</summary>
#
# 1. A legenda dá a largura por cabeça: 16 com uma cabeça, depois 8, 4 e 2.
#    Com menos características por cabeça, cada pontuação é um produto
#    escalar sobre menos coordenadas, então os padrões mudam de uma contagem
#    de cabeças para a seguinte; o maior peso de qualquer cabeça é 0,79 com
#    uma cabeça e de 0,96 a 0,98 com duas ou mais.
# 2. Não aqui. Mesmo o par de cabeças mais parecido difere em pelo menos
#    0,48 em alguma célula (com 8 cabeças; 0,61 com 4 e 0,94 com 2). Cada
#    cabeça tem a sua própria fatia de $W_q$ e $W_k$, sorteada ao acaso, e
#    nada aqui as treinou para concordarem.
# 3. O triângulo superior é 0 em todas as cabeças (a soma dele é exatamente 0
#    nas quatro cabeças, em $h = 4$), e a consulta 0 põe peso 1 na chave 0 em
#    cada uma. A camada constrói uma máscara por exemplo, a partir dos
#    comprimentos válidos e da opção causal, e entrega essa mesma máscara a
#    todas as cabeças do exemplo.
# 4. Com um comprimento válido de 3, as chaves 3 a 5 recebem peso 0 em todas
#    as cabeças, e cada linha de cada cabeça continua somando 1 sobre as
#    chaves 0 a 2.
#
# </details>

# %% [markdown] en="4d56d9dafe76"
# ## Mais uma ferramenta: `torch.einsum`
#
# O Exercício 5.5 escreve produtos de tensores com `torch.einsum`, que dá a
# cada eixo o nome de uma letra em vez de ficar movendo eixos de lugar. O seu
# primeiro argumento é uma string: as letras de cada entrada, separadas por
# vírgulas, depois `->` e as letras da saída. `"bij,bjk->bik"` diz: a
# primeira entrada tem os eixos (b, i, j), a segunda (b, j, k), e a saída
# (b, i, k). As letras decidem o que acontece:
#
# * uma letra que aparece nas entradas mas não depois da seta (aqui `j`) é
#   somada: as entradas que a compartilham são multiplicadas, e os produtos,
#   somados;
# * uma letra que as duas entradas compartilham e que a saída mantém (aqui
#   `b`) emparelha as entradas índice a índice, como os exemplos de um lote;
# * uma letra de uma só entrada que a saída mantém (aqui `i` e `k`) é um eixo
#   comum do resultado;
# * os eixos da saída vêm na ordem em que as suas letras são escritas.
#
# Uma letra usada duas vezes precisa nomear eixos de mesmo comprimento (ou de
# comprimento 1, que faz broadcasting). Então
# `"bij,bjk->bik"` calcula, para cada `b`, `i` e `k`, a soma sobre `j` de
# `x[b, i, j] * y[b, j, k]`: um produto de matrizes em lote, o que `torch.bmm`
# e `@` calculam.

# %%
x = torch.randn(2, 3, 4)  # (b, i, j)
y = torch.randn(2, 4, 5)  # (b, j, k)
product = torch.einsum("bij,bjk->bik", x, y)  # (b, i, k): j é somado
print("einsum('bij,bjk->bik'):", tuple(product.shape))
torch.testing.assert_close(product, torch.bmm(x, y))
torch.testing.assert_close(product, x @ y)
print("igual a torch.bmm(x, y) e a x @ y")

# %% [markdown] en="34c7db9053aa"
# Como as letras dizem quais eixos se emparelham, nenhuma transposição é
# necessária. As pontuações de produto escalar do capítulo 04,
# `q @ k.transpose(1, 2)`, são um único einsum: `d` (as características) é
# somado, e cada consulta `q` encontra cada chave `k`.

# %%
q, k = torch.randn(2, 3, 4), torch.randn(2, 5, 4)  # (lote, consultas, d), (lote, chaves, d)
scores = torch.einsum("bqd,bkd->bqk", q, k)  # (lote, consultas, chaves)
torch.testing.assert_close(scores, q @ k.transpose(1, 2))
print("einsum('bqd,bkd->bqk'):", tuple(scores.shape), "== q @ k.transpose(1, 2)")

# %% [markdown] en="b642712e26d7"
# ## Resumo
#
# * $h$ cabeças de largura $d_\text{head} = d_\text{model} / h$ executam,
#   cada uma, a atenção de produto escalar escalonado sobre a sua própria
#   fatia das consultas, chaves e valores projetados; $W_o$ mistura os
#   resultados concatenados.
# * Dobrar as cabeças para dentro do lote (`transpose_qkv`, depois
#   `transpose_output`) executa todas elas em uma única chamada em lote; os
#   comprimentos válidos são repetidos para cada cabeça.
# * A dobra precisa do seu permute: um `reshape` simples para (lote·cabeças,
#   n, $d_\text{head}$) tem o formato certo, mas enche cada "cabeça" com
#   pedaços de várias posições.
# * $d_\text{model}$ (`num_hiddens`) precisa ser divisível por $h$: o
#   `d2lmini` avisa isso com um ValueError que sugere números de cabeças
#   válidos.
# * Com os pesos copiados (`in_proj_weight` = $[W_q; W_k; W_v]$,
#   `out_proj` = $W_o$) e uma `key_padding_mask` feita a partir dos
#   comprimentos válidos, `nn.MultiheadAttention` devolve as mesmas saídas e
#   os mesmos pesos por cabeça.
# * `torch.einsum` dá a cada eixo o nome de uma letra: uma letra que falta na
#   saída é somada, então `"bij,bjk->bik"` é um produto de matrizes em lote.
# * Mapas de calor por cabeça em uma mesma escala de cores mostram a que cada
#   cabeça presta atenção.

# %% [markdown] en="2c8daaf4dd83"
# ## Por quê? Uma pergunta de verificação
#
# **Por que o transpose_qkv move o eixo das cabeças para a frente antes de
# fundi-lo ao lote, em vez de fazer um único reshape de (lote, n, d_model)
# para (lote·cabeças, n, d_head)?**

# %%
from d2lmini.exercises import questions

questions.ask("05")


# %% [markdown] en="2294243a4dc6"
# ## Exercícios

# %% [markdown] en="b58ec1a53c16"
# ### Exercício 5.1 · Mais cabeças custam mais parâmetros? (★)
#
# Escreva `multihead_parameter_count(num_hiddens, num_heads, query_size,
# key_size, value_size, bias)`, que devolve o número de valores aprendíveis de
# uma `d2l.MultiHeadAttention` com esses argumentos, pela fórmula, e não
# construindo uma. Preveja primeiro: como a contagem muda quando você dobra o
# número de cabeças?

# %% tags=["exercise"]
def multihead_parameter_count(num_hiddens, num_heads, query_size, key_size, value_size, bias):
    """Número de parâmetros de d2l.MultiHeadAttention(num_hiddens, num_heads, ...)."""
    ### BEGIN SOLUTION
    weights = num_hiddens * (query_size + key_size + value_size + num_hiddens)  # W_q, W_k, W_v, W_o
    biases = 4 * num_hiddens if bias else 0
    return weights + biases
    ### END SOLUTION


# %% tags=["check"]
ch05.check_parameter_count(multihead_parameter_count)


# %% [markdown] en="e000565367e8"
# ### Exercício 5.2 · Os pesos de uma cabeça, à mão (★★)
#
# Escreva `head_weights(mha, X, head)`, que devolve os pesos de autoatenção
# da cabeça de número `head` (contando a partir de 0) para a entrada `X`
# (lote, n, d_q) — formato (lote, n, n) —, calculados apenas a partir das
# linhas de `mha.W_q.weight` e de `mha.W_k.weight` que pertencem a essa
# cabeça, sem chamar `mha`. O resultado precisa ser igual a
# `mha.attention_weights[:, head]` depois de `mha(X, X, X)`.

# %% tags=["exercise"]
def head_weights(mha, X, head):
    """Pesos de autoatenção de uma cabeça de uma d2l.MultiHeadAttention sem viés, (lote, n, n)."""
    ### BEGIN SOLUTION
    d_head = mha.W_q.weight.shape[0] // mha.num_heads
    rows = slice(head * d_head, (head + 1) * d_head)
    q, k = X @ mha.W_q.weight[rows].T, X @ mha.W_k.weight[rows].T  # (lote, n, d_head)
    return torch.softmax(q @ k.transpose(1, 2) / d_head ** 0.5, dim=-1)
    ### END SOLUTION


# %% tags=["check"]
ch05.check_head_weights(head_weights)

# %% [markdown] en="8d008ede6ffd"
# ### Exercício 5.3 · Quanto uma cabeça importa? (★★)
#
# Um teste simples da importância de uma cabeça: silencie-a e veja o quanto a
# saída muda. Escreva `output_without_head(mha, X, head)`, que executa a
# autoatenção sobre `X` como `mha(X, X, X)`, exceto que a fatia da cabeça
# escolhida nas cabeças concatenadas é zerada antes de $W_o$. Use as
# próprias peças do módulo, apresentadas depois da verificação com o
# `d2lmini`: `mha.W_q`, `mha.W_k`, `mha.W_v`, `mha.transpose_qkv`,
# `mha.attention`, `mha.transpose_output` e `mha.W_o`. A verificação então
# mostra, para cada cabeça de uma camada aleatória, o quanto a saída muda
# sem ela.

# %% tags=["exercise"]
def output_without_head(mha, X, head):
    """mha(X, X, X) com a cabeça de número `head` silenciada antes de W_o."""
    ### BEGIN SOLUTION
    q, k, v = (mha.transpose_qkv(layer(X)) for layer in (mha.W_q, mha.W_k, mha.W_v))
    concatenated = mha.transpose_output(mha.attention(q, k, v))  # (lote, n, d_model)
    d_head = concatenated.shape[-1] // mha.num_heads
    concatenated = concatenated.clone()
    concatenated[..., head * d_head:(head + 1) * d_head] = 0
    return mha.W_o(concatenated)
    ### END SOLUTION


# %% tags=["check"]
ch05.check_output_without_head(output_without_head)

# %% [markdown] en="46a593e72a64"
# ### Exercício 5.4 · Cabeças para dentro do lote, a partir de um tensor com a sequência primeiro (★★)
#
# Nem toda camada põe o lote primeiro. A `nn.MultiheadAttention` construída
# sem `batch_first=True` (o padrão dela é `False`) recebe tensores de formato
# (T, B, d_model): primeiro as posições, depois os exemplos. Escreva
# `split_heads_seq_first(X, num_heads)`, que transforma um `X` desses no lote
# (B·num_heads, T, d_head) que o `transpose_qkv` produz a partir do tensor com
# o lote primeiro, com d_head = d_model / num_heads: a linha b·num_heads + i é
# a cabeça i do exemplo b, e a linha t dela é a posição t. Use `reshape` e
# `permute` (ou `transpose`), e não os auxiliares do próprio `d2l`, que a
# verificação desliga. Preveja primeiro: um `reshape` sozinho consegue
# transformar (T, B, d_model) em (B, T, d_model)? A verificação também
# executa as divisões erradas mais típicas e diz qual delas é a sua.

# %% tags=["exercise"]
def split_heads_seq_first(X, num_heads):
    """(T, B, d_model) -> (B*num_heads, T, d_head): cada cabeça de cada exemplo vira uma linha do lote."""
    ### BEGIN SOLUTION
    T, B, d_model = X.shape
    X = X.reshape(T, B, num_heads, d_model // num_heads)  # (T, B, h, d_head)
    X = X.permute(1, 2, 0, 3)  # (B, h, T, d_head)
    return X.reshape(B * num_heads, T, d_model // num_heads)
    ### END SOLUTION


# %% tags=["check"]
ch05.check_split_heads_seq_first(split_heads_seq_first)

# %% [markdown] en="5a622e6b6a14"
# ### Exercício 5.5 · Atenção multi-cabeça com um `einsum` por passo (★★★)
#
# Escreva `einsum_multihead(queries, keys, values, mha)`, que reproduz
# `mha(queries, keys, values)` para uma `d2l.MultiHeadAttention` construída
# com `bias=False`, sem `transpose_qkv`: projete com `mha.W_q.weight` (e com
# os outros), aplique `reshape` para (lote, n, cabeças, d_head) e escreva as
# pontuações e o pooling como chamadas de `torch.einsum` com um eixo de
# cabeças separado, por exemplo `"bqhd,bkhd->bhqk"` (`d` percorre as
# características de uma cabeça; a seção sobre `torch.einsum`, antes do
# resumo, dá as regras). Nenhuma máscara é necessária.

# %% tags=["exercise"]
def einsum_multihead(queries, keys, values, mha):
    """mha(queries, keys, values) para uma d2l.MultiHeadAttention sem viés, com einsum."""
    ### BEGIN SOLUTION
    h = mha.num_heads
    B, n_q, n_k = queries.shape[0], queries.shape[1], keys.shape[1]
    q = (queries @ mha.W_q.weight.T).reshape(B, n_q, h, -1)  # (B, n_q, h, d_head)
    k = (keys @ mha.W_k.weight.T).reshape(B, n_k, h, -1)  # (B, n_k, h, d_head)
    v = (values @ mha.W_v.weight.T).reshape(B, n_k, h, -1)  # (B, n_k, h, d_head)
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / q.shape[-1] ** 0.5  # (B, h, n_q, n_k)
    heads = torch.einsum("bhqk,bkhd->bqhd", torch.softmax(scores, dim=-1), v)  # (B, n_q, h, d_head)
    return heads.reshape(B, n_q, -1) @ mha.W_o.weight.T  # (B, n_q, d_model)
    ### END SOLUTION


# %% tags=["check"]
ch05.check_einsum_multihead(einsum_multihead)

# %% [markdown] en="30cf7d8c3697"
# ## Leituras adicionais
#
# * A. Vaswani et al. (2017), "Attention Is All You Need", seção 3.2.2: a
#   atenção multi-cabeça, com $h = 8$ cabeças de tamanho
#   $d_\text{model}/h = 64$, ao custo de uma única cabeça de largura
#   completa.
# * E. Voita, D. Talbot, F. Moiseev, R. Sennrich e I. Titov (2019),
#   "Analyzing Multi-Head Self-Attention: Specialized Heads Do the Heavy
#   Lifting, the Rest Can Be Pruned", e P. Michel, O. Levy e G. Neubig
#   (2019), "Are Sixteen Heads Really Better than One?": medições do que
#   acontece quando se removem cabeças (o Exercício 5.3 em miniatura).
# * O livro d2l, seção "Multi-Head Attention".
