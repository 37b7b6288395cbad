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

# %% [markdown] en="412eacdaf490"
# # 06 · Atenção eficiente: a mesma resposta sem a matriz n × n
#
# A atenção explícita dos capítulos 04 e 05 foi escrita para ser lida:
# pontuações, softmax mascarado, soma ponderada, cada etapa um tensor que você
# pode imprimir e plotar. Essa clareza tem um preço, que cresce com o quadrado
# do comprimento da sequência. Este capítulo calcula esse preço e mostra como
# evitá-lo sem mudar a resposta.
#
# **Neste notebook você vai**
# 1. contar a memória do caminho explícito e ver por que ela cresce como $n^2$;
# 2. calcular a atenção sobre as chaves bloco a bloco com o *softmax online*,
#    primeiro para uma consulta, depois para um lote, e verificar que ele dá a
#    mesma resposta do caminho explícito;
# 3. contar o que cada caminho guarda de uma só vez: $n \times n$ pontuações
#    contra $n \times \text{block}$;
# 4. percorrer o softmax online passo a passo em um explorador;
# 5. passar a atenção do `d2lmini` para o seu caminho rápido, uma única chamada
#    à `scaled_dot_product_attention` do PyTorch, que faz o mesmo em código
#    compilado.

# %% [markdown] en="030f78df7e35"
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/pt/06_efficient_attention.ipynb) abre a edição do aluno deste capítulo no Colab. Execute primeiro a célula de configuração recolhida logo abaixo: no Colab, ela instala o `d2lmini`, o pacote auxiliar desta coleção, e não mexe nos pacotes do próprio ambiente de execução; em um hub de curso, ela aponta qualquer arquivo seu que uma atualização tenha guardado com outro nome. Em qualquer outro lugar, ela não faz nada.

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
import math
import time

import torch
import torch.nn.functional as F
from matplotlib.ticker import LogLocator, NullFormatter, NullLocator, StrMethodFormatter

import d2lmini as d2l
from d2lmini.exercises import ch06

_ = torch.manual_seed(0)

# %% tags=["nbval-ignore-output"]
device = d2l.try_gpu()
print("este notebook roda em:", device)

# %% [markdown] en="12669948e38a"
# ## Para onde vai a memória
#
# Para um lote de $B$ sequências de $n$ tokens, com a largura do modelo
# $d_\text{model}$ dividida entre $h$ cabeças de largura
# $d_\text{head} = d_\text{model}/h$ (capítulo 05), o caminho explícito calcula,
# para todas as cabeças de uma vez,
#
# $$S = \frac{Q K^\top}{\sqrt{d_\text{head}}} \in \mathbb{R}^{B \times h \times n \times n},
# \qquad A = \operatorname{softmax}(S), \qquad O = A V .$$
#
# $Q$, $K$, $V$ e $O$ guardam $B \cdot n \cdot d_\text{model}$ números cada: eles
# crescem **linearmente** com $n$. $S$ e $A$ guardam $B \cdot h \cdot n^2$
# números cada: eles crescem **quadraticamente**. Durante o softmax, os dois
# existem ao mesmo tempo, então o caminho explícito precisa de pelo menos
# $2 \cdot B h n^2$ números.
#
# O caminho explícito guarda $A$ como `attention_weights`; medir esse tensor
# mostra o crescimento diretamente.

# %%
B, h, d_model = 2, 4, 64
explicit = d2l.MultiHeadAttention(d_model, h, 0.0, query_size=d_model, key_size=d_model,
                                  value_size=d_model).to(device).eval()

lengths = [64, 128, 256, 512, 1024]
weight_mib, input_mib = [], []  # MiB: 2**20 bytes
print(" tokens | Q, K ou V (MiB) |   pesos em A (MiB) | formato dos pesos")
for n in lengths:
    X = torch.randn(B, n, d_model).to(device)  # sorteado na CPU: os mesmos números em qualquer dispositivo
    with torch.no_grad():
        explicit(X, X, X)
    weights = explicit.attention_weights  # (lote, cabeças, consultas, chaves)
    weight_mib.append(weights.nelement() * weights.element_size() / 2**20)
    input_mib.append(X.nelement() * X.element_size() / 2**20)
    print(f"{n:7d} | {d2l.number(input_mib[-1], 'g'):15} | {d2l.number(weight_mib[-1], 'g'):18} | {tuple(weights.shape)}")  # exatos: potências de 2

# %%
fig, ax = d2l.plt.subplots(figsize=(4.5, 3))
ax.loglog(lengths, weight_mib, "o-", label="pesos $A$, $B h n^2$ números")
ax.loglog(lengths, input_mib, "s-", label="entrada $X$, $B n d_{model}$ números")
ax.set_xlabel("tokens n")
ax.set_ylabel("MiB (float32)")
ax.set_title("Memória de um tensor em função do comprimento")
ax.legend()
d2l.plt.show()

# %% [markdown] en="07d92abd3fb1"
# Leia a tabela de cima para baixo: cada linha dobra $n$, e a coluna dos pesos
# é multiplicada por exatamente 4 a cada vez, de 0,125 MiB com 64 tokens a
# 32 MiB com 1.024, o que corresponde a $B h n^2 = 2 \cdot 4 \cdot 1024^2$
# números de 4 bytes. Dezesseis vezes mais tokens, 256 vezes mais memória,
# enquanto a coluna da entrada apenas dobra a cada linha. São contagens de
# números, não medições: elas dão o mesmo resultado em qualquer máquina. O
# fator 4 é exato para o tensor de pesos; a memória total do caminho explícito
# inclui também $Q$, $K$, $V$ e a saída, que apenas dobram, de modo que, no
# total, ela cresce menos de 4 vezes por linha, e quase 4 vezes quando os
# tensores $n^2$ passam a dominar. No gráfico log-log, os pesos sobem com
# inclinação 2, e a entrada com inclinação 1. Com 1.024 tokens, lote 8 e 12
# cabeças (uma camada do GPT-2 small, um modelo com 12 cabeças de largura 64),
# uma cópia de $S$ em float32 ocupa 384 MiB; com 4.096 tokens, ocupa 6 GiB.
#
# ## O softmax de uma linha, um bloco por vez
#
# O caminho explícito guarda $S$ e $A$ porque essa é a forma mais simples de
# escrever a atenção, não porque a resposta precise deles. Tome uma consulta e
# a sua linha de pontuações $s_1, \dots, s_n$. Calculado do jeito que o
# `torch.softmax` o calcula, o softmax precisa, além das próprias pontuações,
# de apenas dois números: a maior pontuação da linha, $m$, que ele subtrai
# antes de exponenciar para que nenhuma exponencial estoure (o capítulo 01
# mostrou a mesma subtração mantendo um denominador longe de 0), e a soma
# $\ell$ das exponenciais. A saída $y$ é então
#
# $$y = \sum_j \frac{e^{s_j - m}}{\ell}\, v_j , \qquad \ell = \sum_j e^{s_j - m}.$$
#
# Tanto $m$ quanto $\ell$ podem ser mantidos como **quantidades acumuladas**
# enquanto as chaves são visitadas um bloco por vez, junto com uma soma
# ponderada acumulada $o$ dos valores (ainda não dividida por $\ell$). Comece
# com $m = -\infty$, $\ell = 0$, $o = 0$. Para cada bloco de chaves, com $j$
# percorrendo as chaves do bloco:
#
# $$m_\text{new} = \max\big(m, \max_j s_j\big), \quad
# \ell \leftarrow \ell\, e^{m - m_\text{new}} + \sum_j e^{s_j - m_\text{new}}, \quad
# o \leftarrow o\, e^{m - m_\text{new}} + \sum_j e^{s_j - m_\text{new}}\, v_j ,$$
#
# e depois $m \leftarrow m_\text{new}$. Por que o fator $e^{m - m_\text{new}}$?
# Tudo o que foi somado até aqui foi calculado como $e^{s - m}$. Quando um
# bloco traz um máximo maior, esses termos deveriam ter sido
# $e^{s - m_\text{new}}$, e $e^{s - m} \cdot e^{m - m_\text{new}} = e^{s - m_\text{new}}$:
# uma única multiplicação corrige todos eles de uma vez. Quando o máximo não
# cresce, o fator é $e^0 = 1$. Depois do último bloco, $o / \ell$ é a saída
# $y$. Nada é descartado nem aproximado, e só um bloco de pontuações existiu
# em cada momento. Este é o **softmax online**.
#
# Aqui está ele para uma consulta e oito chaves, em blocos de dois. A consulta
# e as chaves foram escolhidas para que as pontuações $q \cdot k_j / \sqrt{d}$
# sejam números inteiros que você pode acompanhar à mão, e o valor de cada
# chave é a sua posição $j$, de modo que a saída é a posição à qual a consulta
# presta atenção, em média.

# %%
q = torch.tensor([2.0, 0.0, 0.0, 0.0])  # d = 4, então q / √d = (1, 0, 0, 0)
K = torch.zeros(8, 4)  # (chaves, d)
K[:, 0] = torch.tensor([1.0, 3.0, 0.0, 2.0, 5.0, 1.0, 4.0, 2.0])  # a pontuação de cada chave é seu primeiro número
V = torch.arange(8.0)[:, None]  # (chaves, 1): a chave j carrega o valor j


def online_attention_one_query(q, K, V, block_size, trace=False):
    """softmax(K q / √d) V para uma consulta q (d,), visitando as chaves block_size por vez."""
    q = q / math.sqrt(q.shape[-1])
    m = torch.tensor(float("-inf"))  # a maior pontuação até agora
    total = torch.tensor(0.0)  # ℓ: a soma acumulada de exp(pontuação - m)
    o = torch.zeros(V.shape[-1])  # a soma acumulada de exp(pontuação - m) * valor, (value_size,)
    for start in range(0, K.shape[0], block_size):
        s = K[start:start + block_size] @ q  # (bloco,): as pontuações deste bloco
        m_new = torch.maximum(m, s.max())
        rescale = torch.exp(m - m_new)  # 0 no primeiro bloco (m = -inf), 1 quando o máximo não cresce
        p = torch.exp(s - m_new)  # (bloco,)
        total = total * rescale + p.sum()
        o = o * rescale + p @ V[start:start + block_size]
        m = m_new
        if trace:
            print(f"{start}-{start + len(s) - 1}  | {d2l.number(s.tolist()):10} | {d2l.number(m.item(), '.0f'):>3} | "
                  f"{d2l.number(rescale.item(), '.4f'):>8} | {d2l.number(total.item(), '.4f'):>6} | "
                  f"{d2l.number(o[0].item(), '.4f'):>6} | {d2l.number((o / total)[0].item(), '.4f')}")
    return o / total


print("chave| pontuações |   m | reescala |      ℓ |      o | o / ℓ")
blockwise_output = online_attention_one_query(q, K, V, block_size=2, trace=True)
explicit_output = torch.softmax(K @ q / math.sqrt(4), dim=-1) @ V  # o softmax(q Kᵀ/√d) V explícito
torch.testing.assert_close(blockwise_output, explicit_output)
print(f"softmax(q Kᵀ/√d) V explícito: {d2l.number(explicit_output.item(), '.4f')}")

# %% [markdown] en="37d58e3b0015"
# Leia as linhas; *reescala* é $e^{m - m_\text{new}}$. O primeiro bloco define
# $m = 3$; seu fator de reescala é $e^{-\infty} = 0$, então o início vazio não
# pesa em nada. A maior pontuação do segundo bloco, 2, fica abaixo de 3: o fator
# é 1 e os novos termos são simplesmente somados. O terceiro bloco traz um 5,
# então tudo o que veio antes é multiplicado por $e^{3 - 5} = 0{,}1353$: $\ell$
# *diminui*, embora um bloco tenha sido acrescentado, porque cada termo agora
# é medido em relação ao máximo maior. O 4 do quarto bloco volta a ficar
# abaixo de 5. O último $o / \ell$, 4,2192, é a saída explícita: o
# `assert_close` verificou isso. A coluna $o / \ell$ depois de cada bloco é a
# atenção sobre as chaves vistas até ali; aqui ela se aproxima da resposta
# exata à medida que as chaves chegam (em geral, ela pode passar da resposta e
# voltar) e é igual à resposta exata depois do último bloco.
#
# O rastreamento também mostra o que o laço guarda: dois números e um vetor
# para a consulta ($m$, $\ell$ e $o$, que tem tantos números quanto um valor)
# e um bloco de pontuações, nunca a linha inteira. O softmax é chamado de
# **online** porque é calculado em uma única passada, à medida que as chaves
# chegam, sem esperar pela linha inteira.

# %% [markdown] en="184eb8d2853d"
# ## Um lote de consultas
#
# Nada no laço depende de haver uma só consulta. Com um lote de consultas, $m$
# e $\ell$ passam a ter um número por consulta, com formato
# (lote, consultas, 1), $o$ passa a ser (lote, consultas, value_size), e as
# pontuações de um bloco são (lote, consultas, bloco). O tamanho do bloco não
# precisa dividir o número de chaves: fatiar além do fim dá um último bloco
# mais curto. No código, `scores.amax(dim=-1, keepdim=True)` é a maior
# pontuação de cada linha, mantida como uma coluna de formato
# (lote, consultas, 1) para que faça broadcasting sobre o
# bloco; `torch.maximum` pega o maior de dois tensores elemento a elemento
# (enquanto `max` reduziria um único tensor).

# %%
def blockwise_attention(queries, keys, values, block_size):
    """softmax(Q Kᵀ / √d) V, visitando as chaves block_size por vez."""
    queries = queries / math.sqrt(queries.shape[-1])
    m = torch.full(queries.shape[:-1] + (1,), float("-inf"), dtype=queries.dtype,
                   device=queries.device)  # (lote, consultas, 1): a maior pontuação até agora
    total = torch.zeros_like(m)  # (lote, consultas, 1): ℓ, a soma acumulada de exp(pontuação - m)
    output = torch.zeros(queries.shape[:-1] + values.shape[-1:], dtype=queries.dtype,
                         device=queries.device)  # (lote, consultas, value_size): o
    for start in range(0, keys.shape[1], block_size):
        block_keys = keys[:, start:start + block_size]  # (lote, bloco, d)
        block_values = values[:, start:start + block_size]  # (lote, bloco, value_size)
        scores = torch.bmm(queries, block_keys.transpose(1, 2))  # (lote, consultas, bloco)
        new_m = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
        rescale = torch.exp(m - new_m)  # 0 no primeiro bloco, onde m = -inf
        p = torch.exp(scores - new_m)  # (lote, consultas, bloco)
        total = total * rescale + p.sum(dim=-1, keepdim=True)
        output = output * rescale + torch.bmm(p, block_values)
        m = new_m
    return output / total


# %% [markdown] en="67b0125e7a30"
# Compare-a com a fórmula explícita $\operatorname{softmax}(QK^\top/\sqrt{d})\,V$,
# escrita por extenso, com um tamanho de bloco que divide as 50 chaves, um que
# não divide, e uma chave por vez:

# %%
queries = torch.randn(2, 7, 16).to(device)
keys = torch.randn(2, 50, 16).to(device)
values = torch.randn(2, 50, 3).to(device)
reference = torch.softmax(queries @ keys.transpose(1, 2) / math.sqrt(16), dim=-1) @ values
for block_size in (10, 16, 1):
    torch.testing.assert_close(blockwise_attention(queries, keys, values, block_size), reference)
print("a atenção por blocos coincide com softmax(Q Kᵀ/√d) V para blocos de 10, 16 e 1")
print("primeira linha da saída:", d2l.number(d2l.numpy(reference[0, 0]).round(3)))

# %% [markdown] en="ffc972a0e348"
# O `d2lmini` oferece a mesma função como `d2l.blockwise_attention`, com
# verificações dos argumentos (um tamanho de bloco que não seja um int
# positivo, chaves e consultas de larguras diferentes). Ela concorda com a que
# construímos aqui:

# %%
for block_size in (10, 16, 1):
    torch.testing.assert_close(d2l.blockwise_attention(queries, keys, values, block_size),
                               blockwise_attention(queries, keys, values, block_size))
print("d2l.blockwise_attention == blockwise_attention acima, para blocos de 10, 16 e 1")

# %% [markdown] en="55303284685e"
# ## O que cada caminho guarda de uma só vez
#
# Conte o maior tensor que cada caminho guarda para um exemplo e uma cabeça,
# com $n$ consultas e $n$ chaves. O caminho explícito guarda as $n \times n$
# pontuações (e, durante o softmax, os $n \times n$ pesos ao lado delas). O
# caminho por blocos guarda um bloco de pontuações, $n \times \text{block}$, e
# as suas quantidades acumuladas: $m$ e $\ell$ ($n$ números cada) e $o$
# ($n \times d_\text{value}$, onde $d_\text{value}$ é o tamanho dos valores,
# `value_size` no código). Com o tamanho do bloco fixo, dobrar $n$ dobra o que
# o caminho por blocos guarda e quadruplica o que o caminho explícito guarda.
# A memória do caminho por blocos é de cerca de
# $n \times (2\,\text{block} + d_\text{value})$ números (as pontuações do bloco
# e suas exponenciais, e as quantidades acumuladas): ela cresce linearmente em
# $n$, com o tamanho do bloco, que o programador escolhe; nunca com $n^2$.

# %% en="64546eb6f89f"
# Dados em português: os milhares com ponto, como no texto (d2lmini.i18n.number)
from d2lmini.i18n import number

block_size, value_size = 64, 64
print("     n |       explícito: n × n |       por blocos: n × bloco | m, ℓ, o acumulados")
for n in (256, 1024, 4096, 16384):
    print(f"{n:6d} | {number(n * n, ','):>22} | {number(n * block_size, ','):>27} | "
          f"{number(n * (2 + value_size), ','):>15}")

# %% [markdown] en="03eea0bbe26b"
# Com 16.384 tokens, o caminho explícito guarda 268.435.456 pontuações por
# cabeça e por exemplo, um gigabyte em float32, e o dobro disso durante o
# softmax; o maior tensor do caminho por blocos, com blocos de 64, tem
# 1.048.576 pontuações, 256 vezes menos. A aritmética é a mesma: cada
# pontuação continua sendo calculada uma vez.
#
# ## O que os kernels fundidos fazem
#
# Um laço em Python sobre os blocos é lento: cada bloco custa várias operações
# separadas, cada uma lendo e escrevendo os seus tensores. O FlashAttention
# (Dao et al., nas leituras adicionais) faz o mesmo softmax online dentro de um
# único *kernel fundido*. Um kernel, aqui, é uma rotina compilada (não o kernel
# de similaridade do capítulo 01); um kernel fundido calcula as pontuações, o
# softmax e a soma ponderada juntos, bloco a bloco, na memória rápida do
# processador (o seu cache, ou a memória on-chip de uma GPU), e nunca grava as
# matrizes $n \times n$ fora dela. A
# `torch.nn.functional.scaled_dot_product_attention` (SDPA) do PyTorch escolhe
# entre kernels desse tipo conforme o seu dispositivo, o dtype e as entradas
# (e, na falta deles, recorre a um kernel escrito com operações comuns do
# PyTorch, não fundido, que constrói, sim, as $n \times n$ pontuações: a
# parte "Para ir mais fundo", mais abaixo, volta a ele). Ela recebe as mesmas consultas,
# chaves e valores e dá a mesma resposta que o laço por blocos e que a
# `DotProductAttention` explícita do `d2lmini`:

# %%
sdpa = F.scaled_dot_product_attention(queries, keys, values)
explicit_path = d2l.DotProductAttention(0.0)(queries, keys, values)
torch.testing.assert_close(d2l.blockwise_attention(queries, keys, values, 16), sdpa)
torch.testing.assert_close(explicit_path, sdpa)
print("SDPA == d2l.blockwise_attention == d2l.DotProductAttention (caminho explícito)")

# %% [markdown] en="fcdb7800cbb3"
# ## Explore: o softmax online passo a passo
#
# Primeiro, o rastreamento acima em forma de figura: depois de cada bloco de
# duas chaves, o máximo acumulado $m$ e a soma acumulada $\ell$, e $o / \ell$
# chegando à saída explícita (tracejada).

# %%
keys_seen = [2, 4, 6, 8]  # depois de cada bloco de duas chaves
maxima, sums, partial = [], [], []
for seen in keys_seen:  # m, ℓ e o / ℓ depois das primeiras `seen` chaves: as linhas do rastreamento
    scores = K[:seen] @ q / math.sqrt(4)  # (seen,)
    maxima.append(scores.max().item())
    sums.append(torch.exp(scores - scores.max()).sum().item())
    partial.append(online_attention_one_query(q, K[:seen], V[:seen], block_size=2).item())
fig, (ax_state, ax_out) = d2l.plt.subplots(1, 2, figsize=(7, 2.8))
ax_state.plot(keys_seen, maxima, "o-", label="máximo acumulado $m$")
ax_state.plot(keys_seen, sums, "s-", label="soma acumulada $\\ell$")
ax_state.set(xlabel="chaves vistas", ylim=(0, 6.8), title="depois de cada bloco de 2 chaves")
ax_state.legend(loc="upper left")
ax_out.plot(keys_seen, partial, "o-", color="C2", label="$o / \\ell$ até aqui")
ax_out.axhline(explicit_output.item(), color="C2", ls="--", lw=1, label="saída explícita")
ax_out.set(xlabel="chaves vistas", ylim=(0, 5.6), title="a saída")
ax_out.legend(loc="upper left")
d2l.plt.show()

# %% [markdown] en="d285322b1a39"
# O explorador faz o mesmo para uma consulta sobre dezesseis chaves com
# pontuações aleatórias (com semente fixa), para cada tamanho de bloco que
# divide 16. Em cima, os pesos $e^{s_j - m}/\ell$ sobre as chaves vistas até
# ali, com as chaves ainda não vistas hachuradas; embaixo, $m$ e $\ell$ depois
# de cada bloco, os dois números de $o / \ell$ depois de cada bloco comparados
# com a saída exata (tracejada), e as pontuações que cada caminho guarda de uma
# só vez para 16 consultas: $16 \times 16$ para o caminho explícito,
# $16 \times \text{block}$ para o caminho por blocos.
#
# * Com tamanho de bloco 1, percorra as chaves uma a uma. Em quais chaves $m$
#   cresce, e o que acontece com $\ell$ e com os pesos já desenhados quando
#   isso ocorre?
# * Vá até o último bloco com tamanhos de bloco 1, 4 e 16. Compare a saída
#   final e os pontos que o painel da saída tem em comum entre os tamanhos de
#   bloco.
# * Mova o tamanho do bloco de 1 a 16 e leia as barras. Quando o caminho por
#   blocos guarda tanto quanto o explícito?

# %%
from d2lmini.widgets import explore_online_softmax

explorer = explore_online_softmax()
explorer

# %% [markdown] en="d1bfc92da46c"
# <details>
# <summary>Respostas comentadas das coisas para experimentar (abra depois de experimentá-las)</summary>
#
# 1. $m$ cresce três vezes: na chave 0 (a primeira pontuação, −1,86), na
#    chave 1 (1,64) e na chave 10 (4,44). A cada vez, $\ell$ e $o$ são
#    multiplicados por $e^{m - m_\text{new}}$: na chave 10, por
#    $e^{1{,}64 - 4{,}44}$, cerca de 0,06, de modo que $\ell$ cai de 2,39 depois
#    de dez chaves para 1,15 depois de onze, e os pesos já desenhados
#    encolhem: a chave 10 fica com 0,87 do peso, e o peso da chave 1 cai de
#    0,42 para 0,05.
# 2. Todos os tamanhos de bloco terminam na mesma saída, as linhas tracejadas
#    (1,18 e 0,45). Os pontos com o mesmo número de chaves vistas também
#    coincidem: depois de 8 chaves, blocos de 1, 2, 4 ou 8 dão todos
#    $o/\ell$ = (0,82; 1,31), a atenção sobre as 8 primeiras chaves. O modo
#    como as chaves foram agrupadas não muda nada além de quantos pontos há.
# 3. A barra do caminho por blocos é $16 \times \text{block}$: 16, 32, 64, 128
#    e 256 pontuações. Com tamanho de bloco 16, um bloco é a linha inteira, e
#    o caminho por blocos guarda as $16 \times 16 = 256$ pontuações do
#    explícito.
#
# </details>

# %% [markdown] en="0e913eaf8fd4"
# ## O caminho rápido no `d2lmini`
#
# `DotProductAttention` e `MultiHeadAttention` recebem uma opção no
# construtor, `need_weights`. O padrão, `True`, é o caminho explícito que estes
# notebooks ensinam; ele guarda `attention_weights` para os mapas de calor.
# `need_weights=False` constrói o **caminho rápido**: uma única chamada à SDPA,
# que nunca devolve os pesos, de modo que `attention_weights` continua `None`.
# A escolha é feita uma vez, quando o módulo é construído, como no nanoGPT
# (uma implementação pequena e muito lida do GPT). Uma segunda opção,
# `causal=True`, faz a consulta $i$ ver apenas as chaves $0..i$; sem
# `valid_lens`, o caminho rápido a repassa à SDPA como `is_causal=True` (com
# eles, incorpora-a à máscara da SDPA), e o caminho explícito aplica a máscara
# triangular inferior (o mesmo que os comprimentos válidos 2-D
# $1, 2, \dots, n$, capítulo 02). No caminho rápido, `valid_lens` vira um
# `attn_mask` booleano, o argumento de máscara da SDPA, com True onde uma
# consulta pode prestar atenção (a parte "Para ir mais fundo", mais abaixo,
# conta os seus bytes).
#
# Os dois caminhos seguem a regra do pacote para uma consulta sem nenhuma
# chave válida (um comprimento válido 0): a sua linha de saída é zero, nunca
# NaN. Abaixo, o exemplo 1 não tem nenhuma chave válida.

# %%
torch.manual_seed(1)
B, n, d_model, h = 2, 6, 16, 4
sizes = dict(query_size=d_model, key_size=d_model, value_size=d_model)
explicit = d2l.MultiHeadAttention(d_model, h, 0.0, **sizes, causal=True).to(device).eval()
fast = d2l.MultiHeadAttention(d_model, h, 0.0, **sizes, causal=True, need_weights=False).to(device).eval()
fast.load_state_dict(explicit.state_dict())  # os mesmos W_q, W_k, W_v, W_o

X = torch.randn(B, n, d_model).to(device)
valid_lens = torch.tensor([4, 0], device=device)
with torch.no_grad():
    out_explicit = explicit(X, X, X, valid_lens)
    out_fast = fast(X, X, X, valid_lens)
torch.testing.assert_close(out_fast, out_explicit)
print("caminho rápido == caminho explícito:", torch.allclose(out_fast, out_explicit, atol=1e-6))
print("exemplo 1, sem chave válida, maior |saída|:", d2l.number(out_fast[1].abs().max().item()))
print("o caminho explícito guarda pesos de formato", tuple(explicit.attention_weights.shape))
print("o caminho rápido guarda:", fast.attention_weights)

# %% [markdown] en="94e1a5c01733"
# Estas são as matrizes que o caminho rápido nunca constrói: as quatro cabeças
# do exemplo 0, causais e limitadas às 4 primeiras chaves.

# %%
fig = d2l.show_heatmaps(explicit.attention_weights[:1], xlabel="Chaves", ylabel="Consultas",
                        titles=[f"cabeça {i}" for i in range(h)], figsize=(8, 2.4))

# %% [markdown] en="b0f6e2407f18"
# O caminho rápido também concorda com a própria `nn.MultiheadAttention` do
# PyTorch, para a qual `d2l.to_torch_multihead` copia os pesos. As máscaras
# booleanas dela usam a convenção oposta, True onde a atenção é *proibida*;
# daí `triu(1)` e `padding_mask`:

# %%
valid_lens = torch.tensor([4, 6], device=device)
future = torch.ones(n, n, dtype=torch.bool, device=device).triu(1)  # True: não pode prestar atenção
torch_mha = d2l.to_torch_multihead(fast).eval()
with torch.no_grad():
    theirs, _ = torch_mha(X, X, X, key_padding_mask=d2l.padding_mask(valid_lens, n),
                          attn_mask=future, need_weights=False)
    ours = fast(X, X, X, valid_lens)
torch.testing.assert_close(ours, theirs)
print("caminho rápido == nn.MultiheadAttention:", torch.allclose(ours, theirs, atol=1e-6))

# %% [markdown] en="bfd276a7ac91"
# Mais uma diferença: com dropout, o caminho rápido pede à SDPA que descarte
# pesos (`dropout_p`) apenas no modo de treinamento, e sorteia os seus próprios
# números aleatórios, de modo que os dois caminhos concordam no modo de
# avaliação, mas não sorteio a sorteio no treinamento.
#
# ## Resumo
#
# * O caminho explícito guarda as pontuações e os pesos
#   $B \times h \times n \times n$. O tensor de pesos cresce exatamente 4 vezes
#   a cada vez que $n$ dobra, em qualquer máquina; as entradas e as saídas
#   apenas dobram, então o caminho como um todo cresce menos de 4 vezes a cada
#   duplicação, e quase 4 vezes quando os tensores $n \times n$ passam a
#   dominar.
# * O softmax online visita as chaves bloco a bloco, mantendo para cada
#   consulta o máximo acumulado $m$, a soma acumulada $\ell$ e a saída
#   acumulada $o$, e reescalando $\ell$ e $o$ por $e^{m - m_\text{new}}$
#   quando o máximo cresce. Depois do último bloco, $o/\ell$ é a saída
#   explícita, a menos do arredondamento de ponto flutuante.
# * Ele guarda um bloco de pontuações, $n \times \text{block}$, e as suas
#   quantidades acumuladas, cerca de $n \times (2\,\text{block} + d_\text{value})$
#   números ao todo: linear em $n$, não $n^2$. A aritmética continua crescendo
#   como $n^2$.
# * Kernels fundidos (o FlashAttention, os kernels por trás da SDPA do PyTorch)
#   fazem o softmax online em código compilado. `need_weights=False` passa a
#   atenção do `d2lmini` para uma única chamada à SDPA, com a mesma resposta,
#   máscaras e linhas zeradas incluídas. Mantenha `need_weights=True` quando
#   quiser olhar os pesos.

# %% [markdown] en="904d3d2b83c0"
# ## Máscaras e tempos
#
# **Para ir mais fundo (você pode pular esta parte).** Quanto custam as máscaras
# do caminho rápido, e como o seu tempo cresce, medido na sua máquina. Nada
# depois desta parte depende dela; o texto principal continua na pergunta
# abaixo.
#
# **Máscaras.** Para `valid_lens` 1-D, a máscara booleana do caminho rápido é
# levada por broadcasting ao formato $(B, 1, 1, n)$, uma linha por
# exemplo, compartilhada por todas as consultas e cabeças. Para comprimentos
# 2-D, ou para comprimentos junto com `causal=True`, cada consulta tem a sua
# própria linha e a máscara é $(B, 1, n, n)$: quadrática de novo, mas
# compartilhada pelas $h$ cabeças, e com um byte por entrada, enquanto $S$
# custa $4h$ bytes em float32. O que a SDPA faz com uma máscara booleana
# depende do kernel que ela escolhe e, portanto, do dispositivo, do dtype e da
# versão do torch: alguns de seus kernels (o escrito com operações comuns do
# PyTorch, por exemplo) primeiro a transformam em uma máscara de ponto
# flutuante do mesmo formato (0 onde uma consulta pode prestar atenção,
# $-\infty$ onde não pode, somada às pontuações); outros a leem como ela está.
# Com essa cópia em ponto flutuante e as duas máscaras booleanas do próprio
# pacote (a máscara em si e a cópia que deixa uma consulta sem chave válida
# prestar atenção em algum lugar, cuja saída é depois zerada), as máscaras
# chegam a no máximo cerca de 6 bytes por par consulta–chave. Com
# `causal=True` e sem `valid_lens`, o caminho rápido não passa máscara
# nenhuma.
#
# **Medindo o tempo dos dois caminhos.** Tamanhos pequenos, para que esta
# célula leve um ou dois segundos; cada tempo é o da mais rápida de sete
# chamadas, em uma única thread da CPU. Outros trabalhos na máquina só podem
# deixar uma chamada mais lenta, nunca mais rápida, então a mais rápida de
# várias chamadas é a estimativa mais estável do quanto a própria chamada
# custa. Leia como os tempos *crescem*, não os tempos em si: cada linha dobra
# $n$, e as colunas marcadas com × dão o fator pelo qual o tempo cresceu desde
# a linha de cima. Se o $n^2$ mandasse, todos os fatores seriam 4.

# %% tags=["nbval-ignore-output"]
def fastest_ms(fn, *args, repeats=7):
    """O tempo da mais rápida de `repeats` chamadas de fn(*args), em ms, após uma chamada de aquecimento."""
    fn(*args)
    times = []
    for _ in range(repeats):
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn(*args)
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


B, h, d_model = 2, 4, 64
sizes = dict(query_size=d_model, key_size=d_model, value_size=d_model)
explicit = d2l.MultiHeadAttention(d_model, h, 0.0, **sizes, causal=True).to(device).eval()
fast = d2l.MultiHeadAttention(d_model, h, 0.0, **sizes, causal=True, need_weights=False).to(device).eval()
timing_lengths = [64, 128, 256, 512, 1024]
explicit_ms, fast_ms = [], []
threads = torch.get_num_threads()
torch.set_num_threads(1)  # em uma CPU: uma só thread é mais estável quando outros programas dividem o processador
print("tokens |  explíc. ms |     × | ráp. ms |     × |  explíc. ÷ ráp.")
with torch.no_grad():
    for n in timing_lengths:
        X = torch.randn(B, n, d_model).to(device)
        explicit_ms.append(fastest_ms(explicit, X, X, X))
        fast_ms.append(fastest_ms(fast, X, X, X))
        # × : o tempo dividido pelo tempo da linha de cima, onde n era a metade
        growth = [f"{d2l.number(ms[-1] / ms[-2], '.1f'):5}" if len(ms) > 1 else " " * 5 for ms in (explicit_ms, fast_ms)]
        print(f"{n:6d} | {d2l.number(explicit_ms[-1], '.2f'):11} | {growth[0]} | {d2l.number(fast_ms[-1], '.2f'):7} | {growth[1]} | "
              f"{d2l.number(explicit_ms[-1] / fast_ms[-1], '.1f'):15}")
torch.set_num_threads(threads)

fig, ax = d2l.plt.subplots(figsize=(4.5, 3))
ax.loglog(timing_lengths, explicit_ms, "o-", label="explícito (need_weights=True)")
ax.loglog(timing_lengths, fast_ms, "s-", label="rápido (need_weights=False)")
# Marcas nos comprimentos medidos e em 1, 2 e 5 vezes as potências de dez, com
# rótulos simples: senão, um eixo logarítmico rotula só as potências de dez, como 10^2, 10^3.
ax.set_xticks(timing_lengths, [str(n) for n in timing_lengths])
ax.xaxis.set_minor_locator(NullLocator())
ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
ax.yaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
ax.yaxis.set_minor_formatter(NullFormatter())
ax.set_xlabel("tokens n")
ax.set_ylabel("ms por chamada (a mais rápida de 7)")
ax.set_title(f"Atenção multi-cabeça causal em {device.type}")
ax.legend()
d2l.plt.show()

# %% [markdown] en="029e63809cc6"
# Por que os fatores não são todos 4? Só uma parte de uma chamada cresce como
# $n^2$: as pontuações, a máscara, o softmax e a soma ponderada. Uma chamada
# também paga custos que nem crescem com $n$ (o Python, as verificações dos
# argumentos, o início de cada operação) e custos que crescem apenas
# linearmente: as quatro projeções $W_q$, $W_k$, $W_v$, $W_o$ custam
# $4 n d_\text{model}^2$ multiplicações-somas por sequência, tantas quanto as
# $2 n^2 d_\text{model}$ das pontuações e da soma ponderada quando
# $n = 2 d_\text{model} = 128$. Espere, portanto, fatores bem abaixo de 4 nos
# comprimentos curtos, subindo em direção a 4 à medida que o trabalho $n^2$
# toma conta. Um fator também pode passar de 4 em qualquer um dos caminhos: as
# matrizes $n \times n$ do caminho explícito podem deixar de caber no cache do
# processador, os dois caminhos podem trocar de kernel de CPU a partir de
# algum tamanho, e uma máquina ocupada acrescenta ruído a qualquer linha. Em
# uma GPU, nesses tamanhos, iniciar as operações pode levar mais tempo que a
# aritmética, e os tempos podem quase não crescer.
#
# O caminho rápido ainda calcula todas as pontuações, então, no fim, o seu
# tempo também cresce como $n^2$; um kernel causal pode pular os blocos de
# chaves que ficam inteiramente acima da diagonal, quase metade deles para $n$
# grande, mas metade de $n^2$ continua crescendo como $n^2$. O que o caminho
# rápido economiza é a memória de $S$ e $A$, e o tempo gasto para gravá-las e
# lê-las de volta.
#
# `make bench` mede a mesma comparação em tamanho real: lote 8, 1.024 tokens,
# largura 768, 12 cabeças, causal, float32, contra o código do livro,
# a `nn.MultiheadAttention` e uma chamada direta à SDPA, medindo também o pico de
# memória. `benchmarks/README.md` lista os resultados e a máquina em que foram
# medidos; lá, o caminho rápido foi mais ou menos tão rápido quanto uma
# chamada direta à SDPA e precisou de cerca de um sétimo da memória do caminho
# explícito. *(Fim da parte "Para ir mais fundo".)*
#
# ## Por quê? Uma pergunta de verificação
#
# **Por que o softmax por blocos dá a mesma saída que o softmax completo (a
# menos do arredondamento de ponto flutuante), embora nunca guarde uma linha
# inteira de pontuações?**

# %%
from d2lmini.exercises import questions

questions.ask("06")


# %% [markdown] en="2294243a4dc6"
# ## Exercícios

# %% [markdown] en="2ac8c7d52c91"
# ### Exercício 6.1 · A sequência mais longa que cabe (★)
# A tabela de "Para onde vai a memória" conta a memória dos pesos para um
# dado comprimento. Inverta a pergunta: escreva `max_tokens(batch_size, num_heads, dtype, budget_bytes)`,
# o maior número de tokens cuja matriz de pontuações $S$ (um número por
# exemplo, cabeça, consulta e chave) ainda cabe em `budget_bytes` bytes, como
# um `int`. Um `torch.dtype` sabe o seu tamanho em bytes como
# `dtype.itemsize`. Antes de executar a verificação, preveja: quantas vezes mais
# tokens cabem no dobro da memória?

# %% tags=["exercise"]
def max_tokens(batch_size, num_heads, dtype, budget_bytes):
    """O maior num_tokens cujo tensor (batch_size, num_heads, num_tokens, num_tokens) do tipo dtype cabe."""
    ### BEGIN SOLUTION
    numbers = budget_bytes // (batch_size * num_heads * dtype.itemsize)  # pontuações que cabem: no máximo n² delas
    return math.isqrt(numbers)  # o maior n inteiro com n² ≤ numbers
    ### END SOLUTION


# %% tags=["check"]
ch06.check_max_tokens(max_tokens)

# %% [markdown] en="851e075a38bf"
# ### Exercício 6.2 · Uma máscara causal para decodificação com cache (★★)
# Um modelo que gera texto guarda as chaves e os valores dos tokens que já
# processou (o *cache KV*) e executa apenas as consultas dos tokens novos
# contra todos eles. Com `num_keys` tokens ao todo, dos quais os últimos
# `num_queries` são novos, a consulta nova $i$ é o token na posição
# `num_keys - num_queries + i`. O `is_causal=True` da SDPA não sabe disso: ele
# alinha a consulta $i$ com a chave $i$ (o canto superior esquerdo), o que só
# está certo quando há tantas consultas quanto chaves. Escreva
# `decode_mask(num_queries, num_keys)`: o `attn_mask` booleano, de formato
# (num_queries, num_keys), com True onde uma consulta nova pode prestar
# atenção. A verificação executa a SDPA com a sua máscara e compara as saídas
# dos tokens novos com a atenção causal sobre todos os tokens.

# %% tags=["exercise"]
def decode_mask(num_queries, num_keys):
    """Booleano (num_queries, num_keys): as consultas novas são as últimas num_queries de num_keys tokens."""
    ### BEGIN SOLUTION
    positions = torch.arange(num_keys - num_queries, num_keys)  # o lugar de cada consulta nova na sequência
    return torch.arange(num_keys)[None, :] <= positions[:, None]
    ### END SOLUTION


# %% tags=["check"]
ch06.check_decode_mask(decode_mask)

# %% [markdown] en="88f789594a29"
# ### Exercício 6.3 · Preenchimento à esquerda para geração em lote (★★★)
# Para gerar a partir de vários prompts de uma vez, um lote costuma ser
# preenchido à **esquerda**, para que todo prompt termine na última posição e
# os próximos tokens fiquem alinhados. `valid_lens` passa então a contar as
# *últimas* posições de cada exemplo. Escreva
# `left_padded_mask(valid_lens, num_steps)`: o `attn_mask` booleano da
# autoatenção causal sobre um lote assim, de formato
# (lote, num_steps, num_steps). A consulta $i$ do exemplo $b$ pode prestar
# atenção à chave $j$ quando $j \le i$ e a chave $j$ é um token real; uma
# consulta de preenchimento, sem nenhuma chave real na sua posição ou antes
# dela, recebe uma linha de False. A verificação compara a saída de cada token
# real com uma execução da sua sequência sozinha, sem preenchimento.

# %% tags=["exercise"]
def left_padded_mask(valid_lens, num_steps):
    """Booleano (lote, num_steps, num_steps): causal; preenchimento nas primeiras num_steps - valid_lens[b] chaves."""
    ### BEGIN SOLUTION
    steps = torch.arange(num_steps, device=valid_lens.device)
    causal = steps[None, :] <= steps[:, None]  # (consultas, chaves): chave j <= consulta i
    real = steps[None, :] >= (num_steps - valid_lens)[:, None]  # (lote, chaves): as últimas valid_lens[b]
    return causal[None, :, :] & real[:, None, :]  # (lote, consultas, chaves)
    ### END SOLUTION


# %% tags=["check"]
ch06.check_left_padded_mask(left_padded_mask)

# %% [markdown] en="3c1e4f8e582b"
# ### Indo além (sem verificação)
# * Estenda `blockwise_attention` (construída no texto principal) com uma opção
#   `causal`. Quais blocos de chaves um bloco de consultas pode pular por
#   inteiro?
# * Execute `make bench` e compare a coluna de memória com
#   $2 \cdot B h n^2 \cdot 4$ bytes. O que mais o caminho explícito guarda no
#   seu pico?

# %% [markdown] en="3daac42b8248"
# ## Leituras adicionais
#
# * M. Milakov e N. Gimelshein (2018), "Online normalizer calculation for
#   softmax": o softmax de uma só passada em que a atenção por blocos se
#   apoia.
# * M. N. Rabe e C. Staats (2021), "Self-attention Does Not Need O(n²)
#   Memory": a atenção calculada em pedaços, com a mesma reescala online.
# * T. Dao, D. Y. Fu, S. Ermon, A. Rudra e C. Ré (2022), "FlashAttention:
#   Fast and Memory-Efficient Exact Attention with IO-Awareness": o kernel
#   fundido para GPU; o seu sucessor, o FlashAttention-2, é um dos kernels entre
#   os quais a SDPA do PyTorch escolhe em uma GPU.
# * A documentação do PyTorch sobre `torch.nn.functional.scaled_dot_product_attention`:
#   quais kernels existem e quando cada um é escolhido.
