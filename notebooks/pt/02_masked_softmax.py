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

# %% [markdown] en="2829c4db12b3"
# # 02 · Softmax mascarado
#
# Um modelo lê uma frase como uma sequência de **tokens** (aqui, simplesmente
# as suas palavras). As frases têm comprimentos diferentes, mas um
# **minibatch**, o grupo de exemplos que um modelo processa de uma só vez, é
# um único tensor retangular. Por isso, as frases curtas são completadas com
# um token de preenchimento até o comprimento da mais longa. A atenção
# precisa então ignorar esse preenchimento: uma chave de preenchimento tem de
# receber um peso exatamente igual a zero. A ferramenta para isso é o
# **softmax mascarado**, e todas as camadas de atenção dos capítulos
# seguintes precisam dele.
#
# **Neste notebook você vai**
# 1. escrever `sequence_mask` e `masked_softmax` em `torch` puro, para
#    comprimentos válidos dados por exemplo ou por consulta, e verificá-las com
#    o `d2lmini` e com a `scaled_dot_product_attention` do PyTorch;
# 2. comparar os valores usados para substituir as pontuações mascaradas
#    (−1e6, −inf, o mínimo do dtype) e ver, em números, o que cada um faz em
#    float16 e com uma consulta que não tem nada para onde olhar;
# 3. entender por que o `d2lmini` dá a uma consulta assim pesos todos nulos;
# 4. expressar o mascaramento causal, que impede um modelo que escreve da
#    esquerda para a direita de olhar adiante, como comprimentos válidos
#    $1, 2, \dots, n$;
# 5. editar uma máscara célula por célula e ver os pesos acompanharem a
#    mudança.

# %% [markdown] en="a9cbf554475c"
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/pt/02_masked_softmax.ipynb) abre a edição do aluno deste capítulo no Colab. Execute primeiro a célula de configuração recolhida logo abaixo: no Colab, ela instala o `d2lmini`, o pacote auxiliar desta coleção, e não mexe nos pacotes do próprio ambiente de execução; em um hub de curso, ela aponta qualquer arquivo seu que uma atualização tenha guardado com outro nome. Em qualquer outro lugar, ela não faz nada.

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
import torch.nn.functional as F

import d2lmini as d2l
from d2lmini.exercises import ch02

device = d2l.try_gpu()

# %% [markdown] en="11921d2bc319"
# ## Minibatches com preenchimento
#
# Três frases de 3, 2 e 4 palavras, completadas até 4 tokens. O
# **comprimento válido** de cada exemplo é o número de tokens reais.

# %%
sentences = [["o", "gato", "sentou"], ["cães", "latem"], ["aves", "cantam", "de", "manhã"]]
num_steps = max(len(s) for s in sentences)
for s in sentences:
    print(" ".join(f"{word:<6}" for word in s + ["<pad>"] * (num_steps - len(s))))
valid_lens = torch.tensor([len(s) for s in sentences])
print("valid_lens:", valid_lens.tolist())

# %% [markdown] en="6d66d4d158cb"
# Quando os tokens de uma frase prestam atenção uns aos outros, o que se
# chama **autoatenção** (o capítulo 04 a põe em prática), cada token é
# uma consulta e cada token é também uma chave. Uma camada de atenção então
# pontua este lote com um tensor de formato (lote, consultas, chaves) =
# (3, 4, 4). Usamos pontuações aleatórias (sorteadas na CPU a partir de uma
# semente, para que sejam as mesmas em qualquer dispositivo). Um softmax
# comum sobre as chaves dá então ao preenchimento esta parte do peso de cada
# consulta:

# %%
torch.manual_seed(0)
scores = torch.randn(3, num_steps, num_steps).to(device)  # (lote, consultas, chaves)
is_padding = torch.arange(num_steps) >= valid_lens[:, None]  # (lote, chaves)
plain = torch.softmax(scores, dim=-1)
weight_on_padding = (plain * is_padding[:, None, :].to(device)).sum(dim=-1)  # (lote, consultas)
print("peso que cada consulta põe no preenchimento (linhas = exemplos):")
print(d2l.number(d2l.numpy(weight_on_padding).round(3)))

# %% [markdown] en="132206e2fc8c"
# Cada consulta da segunda frase dá entre um quarto e 90% da sua atenção aos
# dois tokens `<pad>`. Esses pesos precisam virar zero, e os pesos dos tokens
# reais precisam voltar a somar 1.
#
# ## `sequence_mask` do zero
#
# Primeiro, uma função auxiliar: em um tensor de formato (lote, passos),
# sobrescrever com um valor dado toda posição $t \ge$ `valid_len[b]`. Uma
# comparação com `arange` constrói a máscara sem laço: `arange(steps)[None, :]`
# tem formato (1, passos), `valid_len[:, None]` tem formato (lote, 1), e a
# comparação entre os dois faz broadcasting para (lote, passos).

# %%
def sequence_mask(X, valid_len, value=0.0):
    """Uma cópia de X (lote, passos) com X[b, t] = value sempre que t >= valid_len[b]."""
    steps = torch.arange(X.shape[1], device=X.device)  # (passos,)
    keep = steps[None, :] < valid_len.to(X.device)[:, None]  # (lote, passos)
    X = X.clone()  # nunca escreva no tensor de quem chamou a função
    X[~keep] = value
    return X


X = torch.tensor([[1, 2, 3], [4, 5, 6]])
ours = sequence_mask(X, torch.tensor([1, 2]))
torch.testing.assert_close(ours, d2l.sequence_mask(X, torch.tensor([1, 2])))
print(ours.tolist(), "— igual a d2l.sequence_mask")

# %% [markdown] en="ba29466a9142"
# ## `masked_softmax` do zero
#
# Para pontuações $X$ de formato (lote, consultas, chaves) e um comprimento
# válido $\ell$ para uma linha de pontuações, o softmax mascarado é
#
# $$\operatorname{masked\,softmax}(X)_{bij} =
# \begin{cases} \dfrac{\exp X_{bij}}{\sum_{j' < \ell} \exp X_{bij'}} & j < \ell \\[1ex]
# 0 & j \ge \ell \end{cases}$$
#
# em que $\ell \ge 1$ (uma linha com $\ell = 0$ não tem pelo que dividir: uma
# seção mais adiante trata disso) e $\ell$ vem de `valid_lens` em uma de três
# formas:
#
# | `valid_lens` | formato | $\ell$ para a linha $(b, i)$ | uso |
# |---|---|---|---|
# | `None` | — | todas as chaves | sem preenchimento |
# | 1-D | (lote,) | `valid_lens[b]` | um comprimento por exemplo: preenchimento |
# | 2-D | (lote, consultas) | `valid_lens[b, i]` | um comprimento por consulta: máscaras causais, mais abaixo |
#
# A implementação clássica (a do livro d2l) achata as pontuações em uma linha
# por (exemplo, consulta), dá a cada linha o seu comprimento, sobrescreve as
# pontuações mascaradas com um número muito negativo (−1e6) e aplica um
# softmax comum: $\exp(-10^6)$ é 0 em ponto flutuante, então as chaves
# mascaradas não recebem peso nenhum.

# %%
def masked_softmax(X, valid_lens, value=-1e6):
    """Softmax sobre o último eixo de X (lote, consultas, chaves), ignorando as chaves além de valid_lens."""
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    batch, queries, keys = X.shape
    if valid_lens.dim() == 1:
        valid_lens = valid_lens.repeat_interleave(queries)  # 3 consultas: [3, 2] -> [3, 3, 3, 2, 2, 2], um comprimento por linha
    else:
        valid_lens = valid_lens.reshape(-1)  # (lote * consultas,)
    X = sequence_mask(X.reshape(-1, keys), valid_lens, value)  # (lote * consultas, chaves)
    return torch.softmax(X.reshape(batch, queries, keys), dim=-1)


lens_per_query = torch.tensor([[1, 3, 2, 3], [2, 1, 2, 1], [4, 3, 2, 1]])  # (lote, consultas)
for name, lens in [("None", None), ("1-D", valid_lens), ("2-D", lens_per_query)]:
    torch.testing.assert_close(masked_softmax(scores, lens), d2l.masked_softmax(scores, lens))
    print(f"valid_lens {name}: o nosso masked_softmax é igual a d2l.masked_softmax")

ours = masked_softmax(scores, valid_lens)
print("peso no preenchimento agora:", d2l.number(d2l.numpy((ours * is_padding[:, None, :].to(device)).sum(dim=-1)).max().item()))
print("somas das linhas:", d2l.number(d2l.numpy(ours.sum(dim=-1)).round(3).ravel().tolist()))

# %% [markdown] en="30fb1cf283c4"
# ### Os mesmos pesos, pelo PyTorch
#
# O PyTorch tem a sua própria função de atenção,
# `torch.nn.functional.scaled_dot_product_attention` (SDPA); o capítulo 04
# constrói a mesma conta do zero. Aqui só precisamos saber o que ela
# calcula. Ela recebe três matrizes cujas linhas são as consultas ($Q$), as
# chaves ($K$) e os valores ($V$), e devolve
# $\operatorname{softmax}(\text{scale} \cdot QK^\top)\, V$, com o softmax
# tomado sobre cada linha. A entrada $(i, j)$ do produto de matrizes
# $QK^\top$ é o produto escalar da consulta $i$ com a chave $j$ (a soma dos
# produtos das suas entradas), então $QK^\top$ guarda uma pontuação por
# consulta e chave, uma linha por consulta; o softmax transforma cada linha
# em pesos, e a multiplicação por $V$ dá a cada consulta a sua média
# ponderada dos valores. O seu `attn_mask` booleano marca as chaves que uma
# consulta pode usar: **True significa "pode prestar atenção"**, e uma chave
# mascarada fica de fora do softmax da sua linha.
#
# A SDPA devolve as saídas, não os pesos, mas podemos fazê-la nos entregar os
# pesos. Tome as nossas pontuações como $Q$, a matriz identidade $I$ (1 na
# diagonal, 0 no resto) como $K$, e `scale=1`. A linha $j$ de $I$ vale 1 na
# posição $j$ e 0 no resto, então o seu produto escalar com a linha $i$ das
# pontuações seleciona a pontuação $(i, j)$: $QI^\top$ são as próprias
# pontuações. Tome $I$ também como $V$: multiplicar os pesos por $I$ os deixa
# como estão, então cada linha da saída é uma linha de pesos. A SDPA faz
# isso para cada exemplo de um lote; a `sdpa_weights` abaixo dá a cada
# exemplo a mesma identidade com `expand` (um simples `torch.eye` também
# faria broadcasting).

# %%
def sdpa_weights(scores, allowed=None, is_causal=False):
    """Os pesos de atenção da SDPA para pontuações dadas (lote, consultas, chaves)."""
    identity = torch.eye(scores.shape[-1], dtype=scores.dtype, device=scores.device)
    identity = identity.expand(scores.shape[0], -1, -1)  # (lote, chaves, chaves)
    return F.scaled_dot_product_attention(scores, identity, identity, attn_mask=allowed,
                                          is_causal=is_causal, scale=1.0)


keys = torch.arange(num_steps)
allowed_1d = (keys < valid_lens[:, None])[:, None, :]  # (lote, 1, chaves), broadcasting sobre as consultas
allowed_2d = keys < lens_per_query[:, :, None]  # (lote, consultas, chaves)
for name, lens, allowed in [("1-D", valid_lens, allowed_1d), ("2-D", lens_per_query, allowed_2d)]:
    torch.testing.assert_close(masked_softmax(scores, lens), sdpa_weights(scores, allowed.to(device)))
    print(f"valid_lens {name}: o nosso masked_softmax é igual aos pesos da SDPA")

# %% [markdown] en="1ab6b115afc2"
# E uma consulta sem nenhuma chave válida? A resposta da SDPA mudou entre
# versões do PyTorch, então meça em vez de confiar em uma frase:

# %%
nothing_allowed = torch.zeros(1, 1, num_steps, dtype=torch.bool, device=device)  # (lote, consulta, chaves)
print("SDPA, uma linha sem chave válida:        ",
      d2l.number(d2l.numpy(sdpa_weights(scores[:1, :1], nothing_allowed)).round(3).ravel().tolist()))
print("masked_softmax do d2lmini, mesma linha:  ",
      d2l.number(d2l.numpy(d2l.masked_softmax(scores[:1, :1], torch.tensor([0], device=device))).round(3).ravel().tolist()))
print("nossa versão -1e6 acima, mesma linha:    ",
      d2l.number(d2l.numpy(masked_softmax(scores[:1, :1], torch.tensor([0], device=device))).round(3).ravel().tolist()))

# %% [markdown] en="05f13594ccb2"
# Com o torch que esta coleção fixa (2.13, na CPU), a SDPA dá zeros a uma
# linha assim, como faz o `d2lmini`; a nossa versão com −1e6 espalha a linha
# por igual sobre o preenchimento (mais sobre essa escolha abaixo). Versões
# mais antigas (antes de mais ou menos a 2.5) devolviam NaN nesse caso, e os
# kernels fundidos da GPU nem sempre concordaram com a CPU: se você depende
# disso, execute a célula acima na sua própria versão e no seu dispositivo.

# %% [markdown] en="76279727ca31"
# ## Como é a máscara
#
# Os pesos para os dois tipos de comprimento. Cada painel é um exemplo: as
# linhas são consultas, as colunas são chaves, e os seis painéis compartilham
# uma mesma escala de cores. As chaves mascaradas recebem um peso de
# exatamente 0, e esta figura desenha cada peso tal como ele é, então uma
# chave mascarada fica com a cor do 0, a mais escura.

# %%
weights_1d = d2l.masked_softmax(scores, valid_lens)  # (lote, consultas, chaves)
weights_2d = d2l.masked_softmax(scores, lens_per_query)
fig = d2l.show_heatmaps(torch.stack([weights_1d, weights_2d]), xlabel="Chaves", ylabel="Consultas",
                        titles=[f"exemplo {b}" for b in range(3)], figsize=(7.5, 5))
fig.axes[0].set_ylabel("valid_lens 1-D\nConsultas")
fig.axes[3].set_ylabel("valid_lens 2-D\nConsultas")
d2l.plt.show()

# %% [markdown] en="93c172b610c0"
# Linha de cima: nos exemplos 0 e 1, colunas inteiras escurecem além do
# comprimento do exemplo (3 e 2 chaves); o exemplo 2 usa todas as 4 chaves.
# Linha de baixo: cada consulta tem um comprimento próprio (1, 3, 2, 3 no
# exemplo 0; 4, 3, 2, 1 no exemplo 2), então a parte escura de cada linha
# começa em uma chave diferente.
#
# Este capítulo desenha as células mascaradas de duas maneiras. Os seus três
# mapas de calor estáticos (feitos por `d2l.show_heatmaps`: este, o dos pesos
# causais e o das máscaras editadas mais abaixo) mostram uma célula mascarada
# como o 0 que ela contém, a cor mais escura, como qualquer peso 0. Já os
# seus dois exploradores e o seu diagrama da máscara causal hachuram as
# células mascaradas em cinza, para que uma chave mascarada não seja
# confundida com uma chave cujo peso é apenas pequeno.
#
# ### Explore você mesmo
#
# O explorador abaixo mascara um tensor de pontuações aleatórias com um
# controle deslizante de comprimento válido por exemplo, e tem um modo por
# consulta. Coisas para experimentar:
#
# * Diminua o comprimento de um exemplo, um passo de cada vez, e veja uma
#   coluna virar hachura cinza, a marca do explorador para uma chave
#   mascarada, enquanto o resto de cada linha fica mais claro (os pesos
#   continuam somando 1).
# * Ponha um comprimento em 0. O painel inteiro fica hachurado: o `d2lmini`
#   dá a uma consulta sem chave válida pesos todos nulos. A próxima seção
#   explica por quê.
# * Passe para o modo por consulta. O exemplo 0 começa com os comprimentos
#   1, 2, 3, 4: quais chaves a consulta $i$ consegue ver? (A última seção
#   deste capítulo dá nome a esse padrão.)

# %%
from d2lmini.widgets import explore_masked_softmax

explorer = explore_masked_softmax()
explorer

# %% [markdown] en="8b76b41c0db7"
# <details>
# <summary>Respostas comentadas das coisas para experimentar (abra depois de experimentá-las)</summary>
#
# 1. Leve o segundo exemplo de 5 chaves para 4: os pesos da consulta 0 passam
#    de 0,108; 0,206; 0,122; 0,255; 0,309 para 0,156; 0,298; 0,176; 0,370 e 0.
#    Cada peso que sobra é dividido por $1 - 0{,}309$, o que a chave retirada
#    tinha, então as razões entre eles continuam as mesmas e cada linha ainda
#    soma 1. Mascarar uma chave não apenas zera o seu peso: o softmax entrega
#    esse peso às chaves que restam.
# 2. Com um comprimento 0, todos os pesos desse exemplo são exatamente 0 e
#    cada linha soma 0, não 1. Um softmax sobre nenhuma chave não tem pelo que
#    dividir; o `d2lmini` responde "não preste atenção a nada", em vez de NaN
#    ou de uma linha uniforme.
# 3. A consulta $i$ do exemplo 0 vê as chaves 0 a $i$ e nada depois delas: é
#    a **máscara causal** da última seção, as mesmas células de
#    `d2l.attention_mask(None, 1, 4, 8, causal=True)`. A consulta 0 é one-hot
#    (peso 1,000 na chave 0); a consulta 1 se divide em 0,830 e 0,170.
#
# </details>

# %% [markdown] en="4e7f58e21fe3"
# ## Que valor deve substituir as pontuações mascaradas?
#
# −1e6 é a escolha clássica. Ela funciona em float32 porque $e^{-10^6}$ é
# arredondado para 0. Mas os modelos muitas vezes rodam em float16, cuja
# maior magnitude é 65504:

# %%
print("maior magnitude do float16:", d2l.number(torch.finfo(torch.float16).max))
print("-1e6 guardado em float16:", d2l.number(torch.tensor(-1e6).to(torch.float16).item()))
fp16_scores = sequence_mask(scores[:1, 0].half(), torch.tensor([2]), value=-1e6)  # uma linha, 2 chaves válidas
print("uma linha em float16 preenchida do jeito clássico:", d2l.number(d2l.numpy(fp16_scores).round(3)))

# %% [markdown] en="28fdd1d9ca02"
# −1e6 vira −inf sem nenhum aviso. Para uma linha com pelo menos uma chave
# válida isso é inofensivo: $e^{-\infty} = 0$ também. O problema é uma linha
# **sem** chave válida: uma consulta em uma sequência vazia, ou uma consulta de
# preenchimento cujo comprimento por consulta é 0. Então todas as pontuações
# da linha são o valor de substituição, e o softmax devolve
# $\frac{e^{c}}{\sum e^{c}}$:
#
# * com um $c$ finito (−1e6 em float32, ou o mínimo do dtype), o resultado é
#   $1/n$: peso uniforme **sobre o preenchimento**, uma resposta errada e
#   silenciosa;
# * com $c = -\infty$ (−inf, ou −1e6 em float16), o resultado é $0/0$ = NaN.
#
# A mesma linha de pontuações com comprimento válido 0, preenchida de três
# maneiras, nos dois dtypes, ao lado de `d2l.masked_softmax`:

# %%
empty_row = scores[:1, :1]  # um exemplo, uma consulta: (1, 1, chaves)
no_valid_key = torch.tensor([0])
for dtype in (torch.float32, torch.float16):
    X = empty_row.to(dtype)
    print(f"{dtype}:")
    for name, value in [("-1e6", -1e6), ("-inf", float("-inf")), ("mín dtype", torch.finfo(dtype).min)]:
        print(f"  valor {name:>9}: {d2l.number(d2l.numpy(masked_softmax(X, no_valid_key, value).float()).round(3).ravel())}")
    print(f"  d2l.masked_softmax: {d2l.number(d2l.numpy(d2l.masked_softmax(X, no_valid_key).float()).round(3).ravel())}")

# %% [markdown] en="adcc9dadef23"
# O `d2lmini` substitui as pontuações mascaradas por −inf, o que dá peso
# exatamente zero em qualquer dtype, e depois põe uma linha sem chave válida
# **toda em zeros**. Por que zeros, e não NaN ou uma linha uniforme?
#
# * A saída de uma consulta assim passa a ser o vetor zero: "nada para onde
#   olhar" é lido como nada, e não como uma média do preenchimento.
# * NaN se espalha e, no treinamento, chega ao modelo inteiro. Os
#   **parâmetros** de um modelo são os números que ele aprende, como as
#   entradas de uma matriz de pesos. O treinamento resume em um único número o
#   quanto o modelo erra em um lote, a **perda**. Em seguida calcula o
#   **gradiente** da perda, que diz, para cada parâmetro, como a perda muda
#   quando esse parâmetro se move um pouco, e move cada parâmetro um pequeno
#   passo na direção que diminui a perda. Uma matriz de pesos é usada por
#   todos os exemplos do lote, então uma única linha NaN torna a perda NaN, o
#   gradiente dessa matriz NaN e, depois de um passo, a própria matriz NaN: a
#   partir daí, toda saída que passa por ela é NaN. Eis isso em miniatura:
#   dois exemplos, o primeiro com comprimento válido 0, e uma matriz 2 × 2 de
#   parâmetros `W` que multiplica a saída da atenção de ambos. `@` com
#   tensores 3-D multiplica separadamente as matrizes de cada exemplo:
#   (lote, consultas, chaves) @ (lote, chaves, tamanho do valor) dá
#   (lote, consultas, tamanho do valor). A soma das saídas faz o papel de uma
#   perda. `requires_grad_()` pede ao PyTorch que acompanhe `W`, e
#   `loss.backward()` calcula o gradiente e o guarda em `W.grad`.

# %%
torch.manual_seed(1)
scores_2 = torch.randn(2, 3, 4).to(device)  # (lote, consultas, chaves)
values = torch.randn(2, 4, 2).to(device)  # (lote, chaves, tamanho do valor)
W = torch.randn(2, 2).to(device).requires_grad_()  # parâmetros usados pelos dois exemplos
lens = torch.tensor([0, 3])
for name, weights in [("-inf, sem correção", masked_softmax(scores_2, lens, float("-inf"))),
                      ("d2l.masked_softmax", d2l.masked_softmax(scores_2, lens))]:
    W.grad = None  # backward() soma em W.grad: comece do zero
    loss = (weights @ values @ W).sum()  # (lote, consultas, tamanho do valor) somado
    loss.backward()
    print(f"{name:>22}: perda {d2l.number(loss.item(), '.3f')}, entradas NaN em W.grad: "
          f"{int(W.grad.isnan().sum())} de {W.numel()}")

# %% [markdown] en="7bb66dd0a5f4"
# O PyTorch fez a mesma escolha: desde a versão 2.5, o caminho matemático da
# SDPA devolve zeros para uma consulta que não pode prestar atenção a nada
# (ele chama um softmax "seguro", que zera essas linhas); a célula da SDPA
# mais acima neste capítulo mede isso no torch que você usa.
#
# Por que não o mínimo do dtype? Ele evita o NaN, mas dá a linha uniforme
# sobre o preenchimento mostrada acima.

# %% [markdown] en="9c83d05a360c"
# **Para ir mais fundo (você pode pular esta parte).** O mínimo do dtype tem um
# segundo defeito. Uma máscara também pode ser **aditiva**: um tensor somado
# às pontuações em vez de escrito por cima delas, 0 onde uma chave é
# permitida e o valor de substituição onde não é (a SDPA aceita um
# `attn_mask` de ponto flutuante desse tipo). Somado em float16, pontuação +
# mínimo dá −inf para qualquer pontuação de −16 ou menos, porque a soma é
# arredondada para além da maior magnitude. Uma linha sem chave válida cujas
# pontuações são tão baixas fica toda em −inf, e o seu softmax acaba sendo
# NaN de qualquer jeito, se você mesmo somar a máscara em float16 e usar
# `torch.softmax`, como abaixo (a SDPA na CPU soma em float32 e devolve a
# linha uniforme):

# %%
min16 = torch.finfo(torch.float16).min
print("mínimo do float16:", d2l.number(min16), "| -20 + mínimo em float16:",
      d2l.number((torch.tensor(-20.0, dtype=torch.float16) + min16).item()))

# %% [markdown] en="18f3f07332f7"
# ## Mascaramento causal: comprimentos válidos 1, 2, …, n
#
# Um **decodificador** é a parte de um modelo que escreve uma sequência um
# token de cada vez, cada novo token escolhido a partir dos tokens
# anteriores (o capítulo 08 treina um pequeno). Um decodificador construído
# com autoatenção recebe a frase-alvo inteira de uma vez no treinamento,
# para que todas as posições aprendam em paralelo: a posição $i$ aprende a
# prever o token $i + 1$, e o token $i$ é ao mesmo tempo a consulta $i$ e a
# chave $i$. Nada além da máscara impede a posição $i$ de olhar para a chave
# $i + 1$, justamente o token que ela está aprendendo a prever, ou para
# qualquer chave posterior. Então a consulta $i$ só pode prestar atenção às
# chaves $0, \dots, i$: ela mesma e o passado, nunca o futuro. Isso é o
# **mascaramento causal**.
#
# Ele é um caso particular do que já construímos. A consulta $i$ recebe o
# comprimento válido $i + 1$, então os comprimentos 2-D são $1, 2, \dots, n$
# para cada exemplo; `d2l.causal_valid_lens` os constrói. Como máscara
# booleana (True = pode prestar atenção), ela é o triângulo inferior da
# matriz (consultas, chaves), diagonal incluída: a linha $i$ tem $i + 1$
# entradas True, o seu comprimento. `d2l.attention_mask` com `causal=True`
# constrói esse triângulo diretamente.

# %%
n = 5
causal_lens = d2l.causal_valid_lens(2, n)  # (lote, consultas)
print("comprimentos válidos causais:", causal_lens.tolist())
lower = torch.ones(n, n, dtype=torch.bool).tril()  # True na diagonal e abaixo dela
print("máscara triangular inferior (1 = pode prestar atenção):")
print(lower.int().numpy())
print("entradas True por linha:", lower.sum(dim=1).tolist())
# attention_mask(valid_lens, batch_size, num_queries, num_keys): (lote, consultas, chaves)
assert torch.equal(d2l.attention_mask(None, 1, n, n, causal=True)[0], lower)
print("d2l.attention_mask(None, 1, n, n, causal=True) é o mesmo triângulo")

# %% [markdown] en="08178fe749f5"
# Em uma grade, com linhas para as consultas e colunas para as
# chaves, o tempo corre para a direita e para baixo, e a máscara certa (à
# esquerda) é o triângulo inferior com a diagonal; as células mascaradas são
# hachuradas em cinza, como nos exploradores deste capítulo. Ao lado dela,
# dois erros comuns, com as células erradas contornadas em vermelho. O
# primeiro mascara também a diagonal (`diagonal=-1` em `tril`): uma consulta
# não consegue ver a si mesma, e a consulta 0 fica sem chave nenhuma (uma
# linha vazia, que recebe pesos nulos). O segundo é a máscara invertida
# (`triu` no lugar de `tril`), o triângulo superior: a consulta $i$ vê a si
# mesma e todas as chaves depois dela. A consulta 0 vê então o futuro
# inteiro e a última consulta só a si mesma, de modo que todas as consultas,
# menos a última, olham adiante.

# %%
from d2lmini.diagrams import draw_causal_mask

draw_causal_mask(n)

# %%
torch.manual_seed(2)
self_scores = torch.randn(2, n, n).to(device)  # (lote, consultas, chaves)
causal = d2l.masked_softmax(self_scores, causal_lens)
from_triangle = torch.softmax(self_scores.masked_fill(~lower.to(device), float("-inf")), dim=-1)
torch.testing.assert_close(causal, from_triangle)
torch.testing.assert_close(causal, sdpa_weights(self_scores, is_causal=True))
print("comprimentos válidos 1..n = máscara triangular inferior = SDPA com is_causal=True")

fig = d2l.show_heatmaps(causal, xlabel="Chaves", ylabel="Consultas",
                        titles=["exemplo 0", "exemplo 1"], figsize=(5, 2.6))

# %% [markdown] en="ebc1a4623c2e"
# A consulta 0 tem uma única chave para onde olhar, então o seu peso é 1;
# cada consulta seguinte distribui o seu peso por uma chave a mais. Os
# capítulos seguintes usam o mascaramento causal tal como construído aqui:
# `d2l.causal_valid_lens` fornece os comprimentos a qualquer camada de
# atenção, e o capítulo 04 os aplica à autoatenção de frases reais.
#
# O mascaramento causal se combina com o preenchimento: uma chave precisa
# então passar nos dois testes, ter posição no máximo $i$ e ficar abaixo do
# comprimento válido do exemplo. Dois tensores booleanos se combinam entrada
# por entrada com `&`, "e": `a & b` é True onde `a` e `b` são ambos True, e
# False em todo o resto (`|`, "ou", é True onde pelo menos um deles é). O
# `and` do próprio Python não funciona com tensores: ele precisa de um único
# True ou False para o tensor inteiro, e um tensor com mais de um valor se
# recusa a virar um só (a célula abaixo captura esse erro e o imprime). E
# `&` tem precedência sobre comparações como `<` e `<=`, então cada
# comparação vai entre os seus próprios parênteses: `(a < b) & (c < d)`. Como
# na aritmética, `&` faz broadcasting: o triângulo causal, de formato
# (1, 5, 5), e uma máscara de preenchimento com 3 chaves válidas, (1, 1, 5),
# dão uma única máscara (1, 5, 5), a mesma que `d2l.attention_mask` constrói
# quando recebe um comprimento junto com `causal=True`.

# %%
a = torch.tensor([True, True, False, False])
b = torch.tensor([True, False, True, False])
print("a & b:", (a & b).tolist(), "| a | b:", (a | b).tolist())
try:
    a and b  # o and do Python: pede ao tensor inteiro um único valor de verdade
except RuntimeError as error:
    print("'a and b': RuntimeError:", error)

causal_mask = d2l.attention_mask(None, 1, n, n, causal=True)  # (1, consultas, chaves): o triângulo
padding_mask = d2l.attention_mask([3], 1, n, n)  # (1, 1, chaves): as chaves 0, 1 e 2 são reais
both = causal_mask & padding_mask  # (1, consultas, chaves): True onde as duas máscaras permitem
print("causal & preenchimento (1 = pode prestar atenção):")
print(both[0].int().numpy())
assert torch.equal(both, d2l.attention_mask([3], 1, n, n, causal=True))
print("a mesma máscara que d2l.attention_mask([3], 1, n, n, causal=True)")

# %% [markdown] en="f1b0f0b2d276"
# ## Edite uma máscara à mão
#
# Comprimentos e a opção causal são duas formas curtas de descrever uma
# máscara, mas a máscara em si é apenas uma matriz booleana, True onde a
# consulta $i$ pode prestar atenção à chave $j$, e qualquer matriz assim é
# permitida. Eis três delas sobre as mesmas pontuações, para um exemplo de 6
# consultas e 6 chaves: preenchimento, causal com preenchimento, e uma
# consulta que não pode prestar atenção a nada (um comprimento por consulta
# igual a 0).

# %%
torch.manual_seed(3)
edit_scores = torch.randn(1, 6, 6)  # (lote, consultas, chaves)
edit_masks = {  # cada uma (1, consultas ou 1, chaves), True = pode prestar atenção
    "preenchimento, 4 chaves": d2l.attention_mask([4], 1, 6, 6),
    "causal + preenchimento": d2l.attention_mask([4], 1, 6, 6, causal=True),
    "consulta 2: sem chave": d2l.attention_mask([[6, 6, 0, 6, 6, 6]], 1, 6, 6),
}
edit_weights = torch.cat([d2l.masked_softmax(edit_scores, mask=mask) for mask in edit_masks.values()])
print("consulta 2, sem chave para onde olhar:", d2l.number(edit_weights[2, 2].tolist()))
fig = d2l.show_heatmaps(edit_weights, xlabel="Chaves", ylabel="Consultas", titles=list(edit_masks),
                        figsize=(8, 2.9))

# %% [markdown] en="802d403282c1"
# Como na primeira figura, uma célula mascarada aparece como o 0 que ela
# contém, a cor mais escura. A linha da consulta 2 é escura de ponta a
# ponta: uma consulta sem chave para onde olhar recebe pesos todos nulos, a
# regra do `d2lmini` vista na seção sobre os valores de substituição.
#
# ### Edite você mesmo
#
# No editor abaixo, cada botão da grade é uma célula da máscara: um botão
# pressionado (✓) significa que a consulta pode prestar atenção à chave, e um
# botão em branco, que ela está mascarada. Clique em uma célula e os pesos,
# `d2l.masked_softmax(scores, mask=mask)` sobre pontuações aleatórias fixas,
# são redesenhados na hora; as predefinições montam a grade inteira a partir
# de `d2l.attention_mask`. A legenda acima da imagem nomeia as consultas
# cuja linha inteira está mascarada. Coisas para experimentar:
#
# * Escolha a predefinição *uma linha inteira mascarada: consulta 2*. A linha dela vira hachura cinza e os seus pesos
#   são exatamente 0, não NaN. Reative uma das células dessa linha: a
#   consulta 2 passa a pôr todo o seu peso, 1, nessa única chave.
# * Apague uma coluna inteira: essa chave vira preenchimento para todas as
#   consultas, e os outros pesos de cada linha crescem para que a linha
#   continue somando 1.
# * Parta de *causal* e inverta-a para anticausal: apague as células abaixo
#   da diagonal e pressione as de cima. A consulta 0 passa a ver todas as
#   chaves futuras, e a última consulta vê só a si mesma. Um decodificador
#   treinado assim aprende a ler o próximo token na sua entrada, em vez de
#   prevê-lo: a perda de treinamento parece excelente, mas na hora da
#   geração o próximo token ainda não existe, então aquilo em que ele
#   aprendeu a se apoiar está faltando.

# %%
from d2lmini.widgets import explore_mask_editor

mask_editor = explore_mask_editor()
mask_editor

# %% [markdown] en="4abee365bf4f"
# <details>
# <summary>Respostas comentadas das coisas para experimentar (abra depois de experimentá-las)</summary>
#
# 1. A legenda termina com "totalmente mascarada: consulta 2, pesos todos
#    nulos pela regra do d2lmini" e a linha é formada por seis zeros. Ative, por
#    exemplo, a chave 4 nessa linha e ela passa a ser 0, 0, 0, 0, 1, 0: um
#    softmax sobre uma única pontuação vale 1, qualquer que seja a pontuação.
# 2. A partir de *sem máscara*, apague a coluna da chave 3: os
#    outros pesos de cada linha são multiplicados por $1/(1 - w_3)$, em que
#    $w_3$ era o peso dessa linha na chave 3: por 1,113 para a consulta 0 e
#    por 1,215 para a consulta 5 (cujo peso na chave 3 era 0,177). As linhas
#    continuam somando 1 e mantêm a sua forma.
# 3. Com a máscara anticausal, a consulta 0 distribui o seu peso pelas seis
#    chaves (de 0,049 a 0,365) e a consulta 5 põe 1,000 em si mesma; 15 das
#    36 células estão mascaradas, como em *causal*, mas do outro lado. A
#    máscara continua válida, então nada avisa você: só a direção está
#    errada, e esse bug só é pego olhando, ou com um teste que compare com
#    uma máscara causal conhecida.
#
# </details>

# %% [markdown] en="fe78705189cf"
# ## Resumo
#
# * O preenchimento torna um lote retangular; o softmax mascarado dá às
#   chaves de preenchimento peso exatamente zero e renormaliza o resto.
# * `valid_lens` é `None`, 1-D (um comprimento por exemplo) ou 2-D (um
#   comprimento por consulta); `sequence_mask` e um achatamento fazem o
#   resto.
# * −1e6 vira −inf em float16. Qualquer valor de substituição que seja −inf
#   torna NaN uma linha sem chave válida; um valor finito a torna uniforme
#   sobre o preenchimento.
# * O `d2lmini` substitui por −inf e dá às linhas sem chave válida pesos
#   todos nulos, de modo que uma única linha vazia não possa transformar em
#   NaN a perda e, pelo seu gradiente, os parâmetros do modelo. A SDPA do
#   PyTorch também dá zeros nesse caso no torch 2.13 (medido acima);
#   versões mais antigas davam NaN.
# * O mascaramento causal, que impede um decodificador de ver os tokens
#   depois do atual, é o mascaramento com comprimentos válidos
#   $1, \dots, n$: o triângulo inferior da matriz (consultas, chaves),
#   diagonal incluída. Mascarar também a diagonal, ou tomar o triângulo
#   superior, são os erros clássicos.
# * Uma máscara é qualquer matriz booleana (consultas, chaves), True onde
#   uma consulta pode prestar atenção; comprimentos e a opção causal são
#   atalhos para as mais comuns.
#   `a & b` combina duas máscaras entrada por entrada (o `and` do Python não
#   consegue).

# %% [markdown] en="1a8682897615"
# ## Por quê? Uma pergunta de verificação
#
# **Por que o d2lmini dá a uma consulta sem chave válida uma linha de pesos
# nulos, em vez do mesmo peso em todas as chaves?**

# %%
from d2lmini.exercises import questions

questions.ask("02")


# %% [markdown] en="0d93ec3e52a8"
# ## Exercícios
#
# Complete cada função, execute a célula dela e depois execute a verificação
# logo abaixo. Uma verificação imprime uma linha quando a sua resposta está
# certa; caso contrário, ela diz o que esperava, o que obteve, e dá uma dica.

# %% [markdown] en="9155b0121337"
# ### Exercício 2.1 · Média sobre os passos válidos (★)
#
# Escreva `masked_mean(values, valid_lens)`: para `values` de formato
# (lote, passos, dim) e `valid_lens` 1-D, devolva a média dos primeiros
# `valid_lens[b]` passos de cada exemplo, com formato (lote, dim), sem laço
# sobre os exemplos. Os passos de preenchimento não podem contar, e um
# exemplo de comprimento 0 dá um vetor zero. Dica: uma média é uma média
# ponderada. Que peso ela dá a cada passo real, e a cada passo de
# preenchimento? Onde, neste capítulo, você já encontrou pesos assim?

# %% tags=["exercise"]
def masked_mean(values, valid_lens):
    """Média dos primeiros valid_lens[b] passos de cada exemplo: (lote, passos, dim) -> (lote, dim)."""
    ### BEGIN SOLUTION
    scores = torch.zeros(values.shape[0], 1, values.shape[1], device=values.device)  # todas iguais
    weights = d2l.masked_softmax(scores, valid_lens)  # (lote, 1, passos)
    return (weights @ values).squeeze(1)  # (lote, dim)
    ### END SOLUTION


# %% tags=["check"]
ch02.check_masked_mean(masked_mean)

# %% [markdown] en="30868dab78e3"
# ### Exercício 2.2 · Consultas de preenchimento, não só chaves de preenchimento (★★)
#
# Na autoatenção, cada token é tanto uma consulta quanto uma chave,
# preenchimento incluído. Um `valid_lens` 1-D esconde as *chaves* de
# preenchimento, mas cada consulta de preenchimento ainda recebe uma linha
# completa de pesos: atenção calculada para um token que não existe.
# Escreva `self_attention_weights(scores, valid_lens)`: para pontuações de
# autoatenção de formato (lote, passos, passos) e `valid_lens` 1-D, devolva
# os pesos em que uma consulta real ($i <$ `valid_lens[b]`) presta atenção
# só às chaves reais e a linha de uma consulta de preenchimento é toda de
# zeros. Não modifique `scores`. Dica: comprimentos válidos 2-D dão a cada
# consulta um comprimento próprio.

# %% tags=["exercise"]
def self_attention_weights(scores, valid_lens):
    """Softmax mascarado de pontuações (lote, passos, passos): chaves e consultas de preenchimento não recebem peso."""
    ### BEGIN SOLUTION
    is_real = torch.arange(scores.shape[1], device=valid_lens.device) < valid_lens[:, None]  # (lote, consultas)
    lens = torch.where(is_real, valid_lens[:, None], 0)  # (lote, consultas): 0 para uma consulta de preenchimento
    return d2l.masked_softmax(scores, lens)
    ### END SOLUTION


# %% tags=["check"]
ch02.check_padded_queries(self_attention_weights)

# %% [markdown] en="a0c3d11e24fb"
# ### Exercício 2.3 · Uma máscara causal de janela deslizante (★★)
#
# Com uma máscara causal, a última de $n$ consultas presta atenção a todas
# as $n$ chaves, então o custo ainda cresce como $n^2$. Alguns modelos (o
# Mistral 7B, por exemplo) deixam cada consulta ver apenas as `window`
# chaves mais recentes, ela mesma incluída: a consulta $i$ presta atenção às
# chaves $i - \text{window} + 1, \dots, i$. Escreva
# `local_causal_mask(num_steps, window)`: um tensor booleano de formato
# (num_steps, num_steps), True onde a consulta $i$ (linha) pode prestar
# atenção à chave $j$ (coluna), como no `attn_mask` da SDPA. Construa-o a
# partir de comparações com `torch.arange`, como faz `sequence_mask`: os
# comprimentos causais $i + 1$ dão a cada linha a sua última chave, e a
# janela lhe dá uma primeira.

# %% tags=["exercise"]
def local_causal_mask(num_steps, window):
    """Máscara booleana (num_steps, num_steps): True onde i - window < j <= i."""
    ### BEGIN SOLUTION
    steps = torch.arange(num_steps)
    queries, keys = steps[:, None], steps[None, :]  # (num_steps, 1), (1, num_steps)
    return (keys <= queries) & (keys > queries - window)
    ### END SOLUTION


# %% tags=["check"]
ch02.check_local_causal_mask(local_causal_mask)

# %% [markdown] en="69aa77c2ce0a"
# ## Leituras adicionais
#
# * A. Vaswani et al. (2017), "Attention Is All You Need", seção 3.2.3: a
#   máscara do decodificador, com as pontuações das conexões proibidas postas
#   em $-\infty$ antes do softmax.
# * A documentação do PyTorch de `torch.nn.functional.scaled_dot_product_attention`:
#   o seu `attn_mask` booleano (True = pode prestar atenção) e `is_causal`.
# * O livro d2l, seção "Attention Scoring Functions", onde a operação de
#   softmax mascarado é apresentada.
