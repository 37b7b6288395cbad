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

# %% [markdown] en="ad42e4f88187"
# # 07 · Autoatenção e codificação posicional
#
# Na autoatenção, uma sequência presta atenção a si mesma: cada token é uma
# consulta, e cada token é uma chave e um valor. Os capítulos 04 e 05 já a
# usaram. Este capítulo pergunta o que uma camada assim sabe sobre a
# **ordem**. Para a autoatenção sem máscara, em que cada consulta vê todas as
# chaves, a resposta é: nada. Embaralhe os tokens e as saídas serão
# embaralhadas do mesmo jeito, de modo que "o cachorro perseguiu o gato" e "o
# gato perseguiu o cachorro" parecem iguais para ela. (O capítulo 04 também
# usou uma máscara causal; máscaras são outra história, que o Exercício 7.3
# deixa você explorar.) A solução usual é somar antes uma **codificação
# posicional** aos tokens, e a codificação senoidal do artigo do Transformer
# tem propriedades elegantes, que medimos aqui.
#
# **Neste notebook você vai**
# 1. medir que a autoatenção sem máscara é *equivariante a permutações*, e que
#    somar as posições quebra essa simetria;
# 2. construir a codificação senoidal do zero, compará-la com
#    `d2lmini.PositionalEncoding` e lê-la como um contador binário suave;
# 3. verificar que deslocar $\delta$ posições é uma rotação da codificação, e
#    que o produto escalar de duas posições depende só da distância entre elas;
# 4. comparar convoluções, camadas recorrentes e autoatenção quanto ao custo e
#    ao comprimento do caminho, contando e medindo o tempo onde for possível;
# 5. explorar a dimensão e a base da codificação com controles deslizantes.

# %% [markdown] en="38d514ea927c"
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/pt/07_self_attention_positional_encoding.ipynb) abre a edição do aluno deste capítulo no Colab. Execute primeiro a célula de configuração recolhida logo abaixo: no Colab, ela instala o `d2lmini`, o pacote auxiliar desta coleção, e não mexe nos pacotes do próprio ambiente de execução; em um hub de curso, ela aponta qualquer arquivo seu que uma atualização tenha guardado com outro nome. Em qualquer outro lugar, ela não faz nada.

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
from torch import nn

import d2lmini as d2l
from d2lmini.exercises import ch07

torch.manual_seed(0)
device = d2l.try_gpu()

# %% [markdown] en="50268f5ffbcf"
# ## A autoatenção sem máscara não enxerga a ordem
#
# Dados os tokens $x_1, \dots, x_n$ (as linhas de $X$), uma camada de
# autoatenção sem máscara calcula, para cada posição $i$,
#
# $$y_i = \sum_{j=1}^{n} \alpha(x_i, x_j)\, W_v x_j, \qquad
# \alpha(x_i, x_j) = \operatorname{softmax}_j\!\left(\frac{(W_q x_i)^\top W_k x_j}{\sqrt{d}}\right),$$
#
# sendo $d$ o tamanho das consultas e das chaves projetadas. Com várias cabeças,
# cada cabeça faz isso com as suas próprias $W_q$, $W_k$, $W_v$ e
# $d = d_\text{head}$, e a $W_o$ do capítulo 05 depois mistura as saídas das
# cabeças, posição por posição. Nada nessa fórmula menciona $i$ ou $j$ a não
# ser por meio de $x_i$ e $x_j$: a soma sobre $j$ não se importa com a ordem
# em que as chaves vêm. Reordene os tokens por uma permutação $\pi$ e cada
# saída se move junto com o seu token: $f(X_{\pi}) = f(X)_{\pi}$. Uma função
# com essa propriedade é chamada de **equivariante a permutações**.
#
# Vamos medir isso em duas frases. As incorporações são vetores aleatórios
# criados aqui, um por palavra e com semente fixa, no lugar das incorporações
# aprendidas de um modelo real; "o" recebe o mesmo vetor nas duas vezes em que
# aparece. A camada é `d2l.MultiHeadAttention` com duas cabeças e pesos
# aleatórios, chamada com consultas = chaves = valores = $X$.

# %%
d_model = 16
generator = torch.Generator().manual_seed(7)
vocabulary = ["o", "cachorro", "perseguiu", "gato"]
embedding = {word: torch.randn(d_model, generator=generator) for word in vocabulary}
sentences = [["o", "cachorro", "perseguiu", "o", "gato"], ["o", "gato", "perseguiu", "o", "cachorro"]]
X = torch.stack([torch.stack([embedding[word] for word in sentence]) for sentence in sentences]).to(device)
print("X:", tuple(X.shape), "(frases, tokens, características)")

self_attention = d2l.MultiHeadAttention(d_model, 2, 0.0, query_size=d_model, key_size=d_model,
                                        value_size=d_model).to(device).eval()


def self_attend(X):
    """Autoatenção: a sequência fornece as consultas, as chaves e os valores."""
    return self_attention(X, X, X)


# %% [markdown] en="6088fd705a87"
# Primeiro, uma permutação aleatória dos tokens de cada frase e, depois, a
# maior diferença entre "embaralhar e depois aplicar a atenção" e "aplicar a
# atenção e depois embaralhar". Imprimimos se ela fica abaixo de $10^{-6}$, e
# não o próprio número, que é arredondamento de float32 e muda de máquina para
# máquina.

# %%
with torch.no_grad():
    Y = self_attend(X)  # (2, 5, d_model)
    perm = torch.randperm(5, generator=generator)
    error = (self_attend(X[:, perm]) - Y[:, perm]).abs().max().item()

    # O mesmo com 100 permutações aleatórias de uma sequência aleatória mais longa.
    long_X = torch.randn(1, 12, d_model, generator=generator).to(device)
    long_Y = self_attend(long_X)
    errors = []
    for _ in range(100):
        long_perm = torch.randperm(12, generator=generator)
        errors.append((self_attend(long_X[:, long_perm]) - long_Y[:, long_perm]).abs().max().item())

print("permutação:", perm.tolist())
print("max |f(X[:, perm]) - f(X)[:, perm]| < 1e-6:", error < 1e-6)
print("100 permutações de 12 tokens, todos os erros < 1e-6:", max(errors) < 1e-6)

# %% [markdown] en="34ea500614db"
# A segunda frase *é* uma permutação da primeira: "cachorro" e "gato" trocam
# de lugar (posições 1 e 4). Então a camada dá a "cachorro" o mesmo vetor de
# saída, seja ele quem persegue ou quem é perseguido, e os seus pesos na
# segunda frase são os da primeira com linhas e colunas trocadas. Os dois
# painéis mostram a cabeça 0, na mesma escala de cores; as linhas são
# consultas, e as colunas, chaves.

# %%
swap = torch.tensor([0, 4, 2, 3, 1])  # frase 2 = frase 1 com os tokens 1 e 4 trocados
assert [sentences[0][i] for i in swap] == sentences[1]
with torch.no_grad():
    Y = self_attend(X)  # (2, 5, d_model)
dog_chasing, dog_chased = Y[0, 1], Y[1, 4]
print("'cachorro' recebe a mesma saída nas duas frases:", torch.allclose(dog_chasing, dog_chased, atol=1e-6))

weights = self_attention.attention_weights[:, 0].cpu()  # (frases, consultas, chaves), cabeça 0
torch.testing.assert_close(weights[1], weights[0][swap][:, swap])
# Dois painéis, cada um com os rótulos dos seus tokens, e uma só escala de cores: de 0 ao maior peso dos dois.
fig, axes = d2l.plt.subplots(1, 2, figsize=(6.5, 3), layout="constrained")
for ax, sentence, panel in zip(axes, sentences, weights):
    image = ax.imshow(panel, cmap=d2l.plotting.CMAP, vmin=0, vmax=weights.max().item())
    ax.set_xticks(range(5), sentence, rotation=45)
    ax.set_yticks(range(5), sentence)
    ax.set(title=" ".join(sentence), xlabel="Chaves")
    print(d2l.describe_weights(panel, query_labels=sentence, key_labels=sentence))  # para um leitor de tela
axes[0].set_ylabel("Consultas")
fig.colorbar(image, ax=axes, shrink=0.8, label="peso de atenção")
d2l.plt.show()

# %% [markdown] en="4ffc12360c8e"
# ### Somar as posições quebra a simetria
#
# Se cada token carrega a sua posição, $x_i + p_i$, uma frase embaralhada é uma
# entrada diferente: os tokens se movem, mas as posições ficam onde estão.
# Somamos `d2l.PositionalEncoding` (construída do zero mais abaixo) e medimos
# de novo.

# %%
positional_encoding = d2l.PositionalEncoding(d_model, 0.0).to(device).eval()


def self_attend_with_positions(X):
    """Autoatenção sobre os tokens somados à sua codificação posicional."""
    X = positional_encoding(X)
    return self_attention(X, X, X)


with torch.no_grad():
    Y = self_attend_with_positions(X)
    perm = torch.tensor([3, 0, 4, 1, 2])
    error = (self_attend_with_positions(X[:, perm]) - Y[:, perm]).abs().max().item()
print("com posições, max |f(X[:, perm]) - f(X)[:, perm]| < 1e-6:", error < 1e-6, f"(vale {d2l.number(error, '.2f')})")
gap = ((Y[0, 1] - Y[1, 4]).norm() / Y[0, 1].norm()).item()
print(f"'cachorro' que persegue vs. 'cachorro' perseguido: as saídas diferem em {gap:.0%} do seu comprimento")

# %% [markdown] en="f9bba7c20237"
# Agora a camada consegue distinguir as duas frases. Quão distantes elas
# acabam ficando, e quão útil é essa diferença, depende da codificação, que é
# o nosso assunto agora.
#
# ## A codificação senoidal, do zero
#
# Para uma sequência de $n$ posições e uma codificação de largura $d$, o artigo
# do Transformer preenche uma matriz $P \in \mathbb{R}^{n \times d}$ com senos e
# cossenos. ($P$ é somada aos tokens, então a sua largura é a largura do modelo
# $d_\text{model}$; daqui em diante, este capítulo a escreve como $d$, assim
# como o controle deslizante do explorador.)
#
# $$P_{i,\,2j} = \sin\!\left(\frac{i}{10000^{2j/d}}\right), \qquad
# P_{i,\,2j+1} = \cos\!\left(\frac{i}{10000^{2j/d}}\right).$$
#
# As colunas $2j$ e $2j + 1$ formam um par que compartilha uma frequência,
# $\omega_j = 10000^{-2j/d}$: a posição $i$ fica no ângulo $\omega_j i$ de um
# círculo. As frequências caem geometricamente de $\omega_0 = 1$ (uma volta
# completa a cada $2\pi \approx 6{,}3$ posições) em direção a $1/10000$: o par
# mais lento tem $10000^{-(d-2)/d}$, cerca de $1/5600$ para $d = 32$. Chamamos
# 10000 de **base**; `d2l.PositionalEncoding` a recebe como argumento nomeado,
# `base=10000`.

# %%
def sinusoidal_encoding(num_steps, num_hiddens, base=10000, dtype=torch.float32):
    """P, (num_steps, num_hiddens): senos nas colunas pares, cossenos nas ímpares."""
    positions = torch.arange(num_steps, dtype=dtype).unsqueeze(1)  # (num_steps, 1): unsqueeze(1) cria um eixo de tamanho 1
    exponents = torch.arange(0, num_hiddens, 2, dtype=dtype) / num_hiddens  # (ceil(d/2),): 2j/d
    angles = positions / base ** exponents  # (num_steps, ceil(d/2)): i · ω_j
    P = torch.zeros(num_steps, num_hiddens, dtype=dtype)
    P[:, 0::2] = torch.sin(angles)
    P[:, 1::2] = torch.cos(angles[:, :num_hiddens // 2])  # uma largura ímpar tem um seno a mais
    return P


for num_steps, num_hiddens, base in [(60, 32, 10000), (60, 32, 100), (9, 7, 10000)]:
    package = d2l.PositionalEncoding(num_hiddens, 0.0, max_len=num_steps, base=base).P[0]  # (passos, d)
    torch.testing.assert_close(sinusoidal_encoding(num_steps, num_hiddens, base), package)
print("a nossa == d2l.PositionalEncoding(...).P para larguras 32 e 7 e bases 10000 e 100")

# %% [markdown] en="e766d947ae58"
# `PositionalEncoding` soma $P$ à sua entrada (e aplica dropout durante o
# treinamento); ela guarda $P$ como um buffer: por isso, $P$ se move com
# `.to(device)` e não é um parâmetro aprendido. Aqui estão quatro de suas
# colunas ao longo de 60 posições, como o livro as desenha: o par 6, 7 gira
# $10000^{2/32} \approx 1{,}78$ vezes mais rápido que o par 8, 9.

# %%
P = sinusoidal_encoding(60, 32)
fig, ax = d2l.plt.subplots(figsize=(7, 2.5), layout="constrained")
d2l.plot(torch.arange(60), P[:, 6:10].T, xlabel="posição i", ylabel="P[i, coluna]", axes=ax)
ax.legend([f"coluna {c}" for c in range(6, 10)], fontsize="small", loc="upper left", bbox_to_anchor=(1, 1))
d2l.plt.show()

# %% [markdown] en="68312563e600"
# ## Um contador binário, suavizado
#
# Escreva as posições em binário: o bit mais baixo muda a cada passo, o
# seguinte a cada dois passos, o próximo a cada quatro. Cada bit é uma onda
# quadrada, e cada um é duas vezes mais lento que o anterior.

# %%
for i in range(8):
    print(f"{i} em binário: {i:03b}")

# %% [markdown] en="964a6cfe6ceb"
# A codificação faz o mesmo com ondas suaves: o par de colunas $j$ é uma onda
# cujo período cresce por um fator $10000^{2/d}$ de um par para o seguinte
# (1,78 para $d = 32$), em vez de 2. Lado a lado, ao longo de 64 posições, com
# o bit mais rápido e a coluna mais rápida à esquerda:

# %%
num_positions, num_bits = 64, 6
# i >> b desloca i em b dígitos binários para a direita; & 1 mantém o último dígito
bits = (torch.arange(num_positions).unsqueeze(1) >> torch.arange(num_bits)) & 1  # (64, 6): o bit b de i
P = sinusoidal_encoding(num_positions, 32)
fig, (ax_bits, ax_code) = d2l.plt.subplots(1, 2, figsize=(8, 3.4), width_ratios=(1, 3), layout="constrained")
image = ax_bits.imshow(bits, cmap="Greys", aspect="auto", interpolation="nearest")
ax_bits.set(title="dígitos binários de i", xlabel="bit (o mais baixo primeiro)", ylabel="posição i")
fig.colorbar(image, ax=ax_bits, ticks=[0, 1], label="bit")
image = ax_code.imshow(P, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
ax_code.set(title="codificação senoidal P, d = 32", xlabel="coluna (dimensão da codificação)")
fig.colorbar(image, ax=ax_code, label="P[i, coluna]")
d2l.plt.show()

# %% [markdown] en="ccb8e0128318"
# Um bit salta entre 0 e 1; uma coluna desliza suavemente entre −1 e 1, de
# modo que posições vizinhas recebem códigos parecidos. Cada par tem um seno e
# um cosseno porque, juntos, eles fixam o ângulo no círculo, e é isso que
# torna possível a próxima propriedade.
#
# ## Deslocar $\delta$ posições é uma rotação
#
# Tome um par, $p_i = (\sin \omega i,\ \cos \omega i)$. O par da posição
# $i + \delta$ é $(\sin \omega(i + \delta),\ \cos \omega(i + \delta))$. As
# fórmulas de adição de ângulos valem para quaisquer dois ângulos $a$ e $b$:
#
# $$\sin(a + b) = \sin a \cos b + \cos a \sin b, \qquad
# \cos(a + b) = \cos a \cos b - \sin a \sin b.$$
#
# Com $a = \omega i$ e $b = \omega\delta$, elas escrevem cada uma das duas
# entradas de $p_{i+\delta}$ como uma combinação fixa de $\sin \omega i$ e
# $\cos \omega i$, com coeficientes que dependem só de $\omega\delta$. Então existe uma matriz $2 \times 2$
# $M_\delta$ com $p_{i+\delta} = M_\delta\, p_i$ **em toda posição $i$**:
# deslocar por $\delta$ é uma transformação linear. É uma rotação, pelo ângulo
# $\omega\delta$: ela leva o ponto no ângulo $\omega i$ do círculo ao ponto no
# ângulo $\omega(i + \delta)$. Aqui, o ângulo $\theta$ designa o ponto
# $(\sin \theta, \cos \theta)$, então os ângulos são medidos a partir do eixo
# do cosseno em direção ao eixo do seno. Num desenho com o seno na horizontal e
# o cosseno na vertical, esse giro é no sentido horário; um livro-texto que
# mede os ângulos no sentido anti-horário a partir do primeiro eixo chamaria
# $M_\delta$ de rotação por $-\omega\delta$. Na codificação inteira, é uma
# rotação por par, uma matriz bloco-diagonal.
#
# Essa propriedade é a razão que o artigo do Transformer dá para os seus senos
# e cossenos: os autores *levantaram a hipótese* de que ela facilitaria para um
# modelo aprender a prestar atenção por posição relativa, "três posições
# atrás", qualquer que seja a posição. Isso é uma hipótese, não um resultado
# medido. O que o artigo de fato mediu é que vetores de posição aprendidos
# (Exercício 7.2) deram resultados quase iguais; ele manteve os senos porque
# eles talvez permitissem a um modelo lidar com sequências mais longas do que
# aquelas com que foi treinado. E a passagem da codificação para uma camada
# não é automática: uma camada nunca vê $p_i$ sozinho, mas sim $x_i + p_i$, e
# as suas projeções atuam sobre os dois,
# $W_q(x_i + p_i) = W_q x_i + W_q p_i$. A rotação descreve apenas a parte
# posicional; o conteúdo do token passa pelas mesmas matrizes, e se uma camada
# treinada usa ou não a rotação é algo que cabe ao treinamento decidir.
#
# Vamos encontrar a transformação de cada par só a partir da tabela.
# Procuramos a matriz $2 \times 2$ $A$ com $p_i A \approx p_{i+\delta}$ para as
# linhas $p_i$, em todas as posições ao mesmo tempo. Há muito mais linhas do
# que os quatro números de $A$, então, em geral, nenhuma $A$ se ajustaria a
# todas elas, e pedimos o melhor meio-termo: os **mínimos quadrados** escolhem
# a $A$ que torna a soma das diferenças ao quadrado entre $p_i A$ e
# $p_{i+\delta}$, sobre todas as linhas, a menor possível. Quando alguma $A$ se
# ajusta exatamente a todas as linhas, essa soma é 0 e os mínimos quadrados
# devolvem essa $A$. `torch.linalg.lstsq` a calcula (aqui em float64). Depois
# verificamos que ela se ajusta exatamente, que é uma rotação ($A^\top A = I$,
# $\det A = 1$) e que o seu ângulo é $\omega\delta$. $A$ multiplica uma linha
# pela direita; o mesmo passo aplicado a uma coluna é $M_\delta = A^\top$. O
# Exercício 7.1 pede $M_\delta$, a forma que multiplica uma coluna, como uma
# fórmula em $\delta$ e $\omega$.

# %%
num_steps, num_hiddens = 100, 16
P64 = sinusoidal_encoding(num_steps, num_hiddens, dtype=torch.float64)
omegas = 10000.0 ** (-torch.arange(0, num_hiddens, 2, dtype=torch.float64) / num_hiddens)  # (8,)


def fitted_map(P, delta, j):
    """A de mínimos quadrados, (2, 2), com P[i, par j] A ≈ P[i + δ, par j] para todo i; e o maior resíduo."""
    start, stop = max(0, -delta), P.shape[0] - max(0, delta)
    here = P[start:stop, 2 * j:2 * j + 2]  # (linhas, 2): (sin ωi, cos ωi)
    there = P[start + delta:stop + delta, 2 * j:2 * j + 2]  # o mesmo par, δ posições adiante
    A = torch.linalg.lstsq(here, there).solution
    return A, (here @ A - there).abs().max().item()


table = [f"{'δ':>4} | {'exato em todo i':>15} | {'AᵀA = I':>8} | {'det A = 1':>9} | {'ângulo = ωδ':>10}"]
for delta in (1, 5, 20, -7):
    fits, orthogonal, unit, angles = [], [], [], []
    for j, omega in enumerate(omegas):
        A, residual = fitted_map(P64, delta, j)
        fits.append(residual < 1e-9)
        orthogonal.append(torch.allclose(A.T @ A, torch.eye(2, dtype=torch.float64), atol=1e-9))
        unit.append(abs(torch.linalg.det(A).item() - 1) < 1e-9)
        angle = math.atan2(A[1, 0].item(), A[0, 0].item())
        turn = math.remainder(angle - omega.item() * delta, 2 * math.pi)  # 0 quando iguais, a menos de voltas inteiras
        angles.append(abs(turn) < 1e-9)
    table.append(f"{delta:>4} | {str(all(fits)):>15} | {str(all(orthogonal)):>8} | {str(all(unit)):>9} | "
                 f"{str(all(angles)):>10}")
print("\n".join(table))

# %% [markdown] en="3913e61b9ea1"
# Todo par, todo deslocamento: um ajuste exato, ortogonal, determinante 1,
# girado em $\omega\delta$. As incorporações de posição rotativas (RoPE, de
# *rotary position embeddings*) se baseiam exatamente nisso, mas aplicam a
# rotação depois das projeções: elas giram cada consulta e cada chave pelos
# ângulos da sua posição, de modo que o deslocamento $i - j$ entra em cada
# pontuação por construção, e não por treinamento.
#
# A tabela lê o ângulo como um livro-texto leria: `atan2(A[1, 0], A[0, 0])` é
# o $\theta$ de uma matriz
#
# $$\begin{bmatrix}\cos\theta & -\sin\theta\\ \sin\theta & \cos\theta\end{bmatrix},$$
#
# e $A$ é essa matriz com $\theta = \omega\delta$. A leitura do livro-texto
# supõe uma matriz que multiplica uma coluna e ângulos medidos no sentido
# anti-horário a partir do primeiro eixo. Já $A$ multiplica uma linha, e este
# capítulo mede os ângulos a partir do segundo eixo, o do cosseno, em direção
# ao primeiro. Cada uma das duas diferenças inverte o sentido do giro, então,
# juntas, elas se anulam: $A$ tem o ângulo de livro-texto $+\omega\delta$, e
# $p_i A = p_{i+\delta}$ gira cada par para a frente em $\omega\delta$ no
# sentido deste capítulo. Ponha $A$ no lugar de $M_\delta$, multiplicando uma
# coluna, e só resta a segunda diferença: $A\, p_i = M_\delta^\top p_i = p_{i-\delta}$
# (a transposta de uma rotação é a sua inversa) gira cada par em $-\omega\delta$ no sentido deste capítulo, $\delta$
# posições para trás. As duas leituras valem: elas descrevem a mesma matriz
# usada de dois modos. É por isso que a verificação do Exercício 7.1, quando
# recebe $A$, a chama de rotação por $-\omega\delta$.
#
# ## A similaridade depende só da distância
#
# Uma rotação preserva produtos escalares: $(M p)^\top (M q) = p^\top q$. Então o
# produto escalar de duas posições,
#
# $$P_i \cdot P_j = \sum_{k} \left(\sin \omega_k i \sin \omega_k j + \cos \omega_k i \cos \omega_k j\right)
# = \sum_{k} \cos\!\big(\omega_k (i - j)\big),$$
#
# em que $k$ percorre os $d/2$ pares de colunas, depende só do deslocamento
# $i - j$, e vale $d/2$ na diagonal. Na medição, toda diagonal de $PP^\top$ é
# constante.

# %%
num_steps, num_hiddens = 100, 64
P64 = sinusoidal_encoding(num_steps, num_hiddens, dtype=torch.float64)
gram = P64 @ P64.T  # (posições, posições): P_i · P_j
# torch.diagonal(gram, offset): as entradas gram[i, i + offset]; offset 0 é a diagonal principal
spreads = [torch.diagonal(gram, offset).max() - torch.diagonal(gram, offset).min()
           for offset in range(-num_steps + 1, num_steps)]
print("toda diagonal de P Pᵀ é constante (amplitude < 1e-9):", max(spreads).item() < 1e-9)
print("P_i · P_i =", d2l.number(round(gram[0, 0].item(), 6)), "= d/2")
# .flip(0) inverte a ordem: behind começa na posição 49, depois 48, e assim por diante
ahead, behind = gram[50, 51:], gram[50, :50].flip(0)[:49]  # P_50 · P_(50+δ) e P_50 · P_(50-δ), δ = 1..49
print("a partir da posição 50, 50 + δ e 50 - δ parecem iguais para todo δ:", torch.allclose(ahead, behind))

# %% [markdown] en="f4cc8427c0e7"
# Dividido por $d/2$, o produto escalar é a similaridade de cosseno de duas
# posições (todo $P_i$ tem comprimento $\sqrt{d/2}$, então esse é o produto
# escalar dos dois vetores reescalados para comprimento 1). À esquerda, a
# matriz inteira para $d = 64$: uma faixa ao longo da diagonal, igual ao longo
# de cada diagonal. À direita, a sua primeira linha em função da distância,
# para várias bases.

# %%
similarity = gram / (num_hiddens / 2)  # similaridade de cosseno: P_i tem norma √(d/2)
fig, (ax_map, ax_curve) = d2l.plt.subplots(1, 2, figsize=(9, 3.4), layout="constrained")
image = ax_map.imshow(similarity, cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest")
ax_map.set(title=r"$P_i \cdot P_j\,/\,(d/2)$, base 10000", xlabel="Chaves (posição j)",
           ylabel="Consultas (posição i)")
fig.colorbar(image, ax=ax_map, label="similaridade de cosseno")
distances = torch.arange(num_steps)
for base, style in [(10000, "-"), (1000, "--"), (100, "-."), (10, ":")]:
    curve = sinusoidal_encoding(num_steps, num_hiddens, base, dtype=torch.float64)
    ax_curve.plot(distances, curve @ curve[0] / (num_hiddens / 2), style, label=f"base {base}")
ax_curve.axhline(0, color="gray", linewidth=0.5)
ax_curve.set(xlabel="distância |i - j|", ylabel=r"$P_i \cdot P_j\,/\,(d/2)$",
             title="similaridade em função da distância, d = 64")
ax_curve.legend(fontsize="small")
d2l.plt.show()

# %% [markdown] en="68e8f166fb67"
# Com a base 10000, a similaridade cai rápido nas primeiras posições, depois
# devagar, com ondulações: posições próximas se parecem, as distantes, menos.
# Uma base pequena torna todas as ondas curtas: a curva cai para zero em poucas
# posições e depois oscila, de modo que posições muito afastadas podem parecer
# tão semelhantes quanto posições razoavelmente próximas. Note também o que o
# produto escalar não consegue dizer: $P_i \cdot P_{i+\delta} = P_i \cdot P_{i-\delta}$,
# então ele conhece a distância, mas não o sentido. As projeções aprendidas
# $W_q$ e $W_k$ de uma camada real podem quebrar essa simetria; os métodos de
# posição relativa (veja as leituras adicionais) codificam o deslocamento
# diretamente.
#
# ## Custos: convolução, recorrência, autoatenção
#
# Três maneiras de deixar $n$ tokens de largura $d$ trocarem informação. Uma
# **convolução** com tamanho de kernel $k$ é uma janela que desliza ao longo
# da sequência: a saída em cada posição é uma soma ponderada das $k$ entradas
# ao seu redor, com os mesmos pesos em todas as posições (cada peso uma matriz
# $d \times d$, já que cada posição carrega $d$ números). Uma **camada
# recorrente** (RNN) lê os tokens um de cada vez, da esquerda para a direita, e
# mantém um estado oculto, um vetor que ela atualiza a partir do estado
# anterior e do token atual; o estado na última posição viu todos os tokens. A
# autoatenção mistura cada posição com todas as outras. Este capítulo não
# precisa saber mais sobre convoluções e RNNs do que dizem essas duas frases:
# até onde uma camada alcança, e quais passos precisam esperar uns pelos
# outros. Nós as comparamos sob três aspectos: o custo de cálculo de uma camada, as
# operações que precisam ser executadas uma após a outra, e o caminho mais
# longo que um sinal percorre entre duas posições (o artigo do Transformer
# argumenta que caminhos curtos tornam as dependências de longo alcance mais
# fáceis de aprender).
#
# | camada | custo de cálculo | operações sequenciais | comprimento máximo do caminho |
# |---|---|---|---|
# | convolução, tamanho de kernel $k$ | $O(knd^2)$ | $O(1)$ | $O(n/k)$ |
# | recorrente (RNN) | $O(nd^2)$ | $O(n)$ | $O(n)$ |
# | autoatenção | $O(n^2 d)$ | $O(1)$ | $O(1)$ |
#
# **O custo de cálculo, contado.** As multiplicações-somas de uma passagem para a
# frente (*forward*) decorrem dos formatos: uma convolução com $d$ canais de
# entrada e de saída (as características de cada posição) faz $knd^2$, uma RNN
# faz $2nd^2$ (a entrada e o estado oculto, cada um passando por uma matriz
# $d \times d$), e a autoatenção faz $4nd^2$ para as suas quatro projeções,
# mais $2n^2 d$ para as pontuações e a soma ponderada. O termo $n^2 d$ é o da
# tabela; ele supera as projeções quando $n > 2d$. (O
# `torch.utils.flop_counter.FlopCounterMode` do PyTorch conta os mesmos
# números em camadas reais, em FLOPs, dois por multiplicação-soma; ele
# precisa de um segundo ou mais para aquecer, por isso fica de fora aqui.)

# %%
d, k = 64, 3
multiply_adds = {"convolução": lambda n: k * n * d * d, "RNN": lambda n: 2 * n * d * d,
                 "autoatenção": lambda n: 4 * n * d * d + 2 * n * n * d}
table = [f"{'n':>5} | " + " | ".join(f"{name:>14}" for name in multiply_adds)
         + f"   (milhões de multiplicações-somas, d = {d}, k = {k})"]
for n in (16, 64, 128, 256, 1024, 4096):
    table.append(f"{n:>5} | " + " | ".join(f"{d2l.number(count(n) / 1e6, '.2f'):>14}" for count in multiply_adds.values()))
print("\n".join(table))

# %% [markdown] en="89fa8b777b37"
# **O comprimento do caminho, medido.** Quantas convoluções empilhadas são
# necessárias até que a última saída dependa da primeira entrada? Empilhamos
# camadas até que o gradiente da última saída em relação à primeira entrada
# deixe de ser zero. Para que esse teste seja justo, um gradiente zero precisa
# significar "nenhuma conexão", e nada mais. Por isso, todo peso da convolução
# é fixado em 1: cada rota da primeira entrada até a última saída soma então
# uma quantidade positiva ao gradiente, e nenhuma rota pode anular outra. Com
# pesos aleatórios de ambos os sinais, as rotas poderiam se anular, e o
# gradiente poderia ser zero mesmo com as posições conectadas.
# Com tamanho de kernel $k$ (e preenchimento dos dois lados), cada camada
# enxerga $(k-1)/2$ posições a mais em cada direção, então $n$ posições exigem
# cerca de $2(n-1)/(k-1)$ camadas. Uma única camada de autoatenção já conecta
# todos os pares (medido do mesmo jeito). Uma RNN leva o primeiro token até o
# último por meio de $n - 1$ passos da sua recorrência, um após o outro.

# %%
def layers_to_connect(layer, n, width, max_layers=100):
    """Quantas cópias de `layer`, (1, n, width) -> o mesmo, empilhar até que a saída n-1 dependa da entrada 0."""
    X = torch.ones(1, n, width, requires_grad=True)
    hidden = X
    for depth in range(1, max_layers + 1):
        hidden = layer(hidden)
        # o gradiente da última saída em relação a X, devolvido em vez de deixado em X.grad;
        # retain_graph mantém o registro, que a chamada da próxima profundidade percorre de novo
        (gradient,) = torch.autograd.grad(hidden[0, -1].sum(), X, retain_graph=True)
        if gradient[0, 0].abs().sum() > 0:
            return depth
    raise RuntimeError(f"ainda não conectadas depois de {max_layers} camadas")


def convolution(kernel_size):
    """Uma Conv1d de um canal sobre as posições, como uma camada de (1, n, 1) para (1, n, 1)."""
    conv = nn.Conv1d(1, 1, kernel_size, padding=kernel_size // 2, bias=False)
    nn.init.constant_(conv.weight, 1.0)  # todo peso igual a 1, como explica o texto
    return lambda X: conv(X.transpose(1, 2)).transpose(1, 2)


attention_layer = d2l.MultiHeadAttention(4, 1, 0.0, query_size=4, key_size=4, value_size=4)
table = [f"{'n':>4} | {'conv, k = 3':>11} | {'conv, k = 5':>11} | {'conv, k = 9':>11} |    autoatenção"]
for n in (8, 16, 32):
    depths = [layers_to_connect(convolution(size), n, 1) for size in (3, 5, 9)]
    depths.append(layers_to_connect(lambda X: attention_layer(X, X, X), n, 4))
    table.append(f"{n:>4} | " + " | ".join(f"{depth:>11}" for depth in depths[:3]) + f" | {depths[3]:>14}")
print("\n".join(table))

# %% [markdown] en="6e472c33700f"
# **O tempo, na sua máquina.** Uma passagem para a frente de cada camada
# ($d = 64$, uma sequência, uma thread da CPU), a mais rápida de algumas
# chamadas: `nn.Conv1d`, `nn.RNN` e `d2l.MultiHeadAttention` com uma cabeça.
# Esses números dependem do seu hardware e do que mais ele está fazendo; as
# contagens acima, não. Compare-os com as contagens: a RNN é a que faz menos
# aritmética, mas muitas vezes é a mais lenta, pelo menos nos comprimentos
# mais curtos. Os seus $n$ passos são executados um após o outro, cada um
# sendo um pequeno produto de um vetor por uma matriz, enquanto a convolução e
# a autoatenção tratam todas as posições em alguns poucos produtos de matrizes
# grandes, que um processador executa muito mais rápido por
# multiplicação-soma. Com 256 tokens, a autoatenção faz seis vezes a
# aritmética da RNN (veja a tabela acima); compare isso com a razão entre os
# tempos das duas.

# %% tags=["nbval-ignore-output"]
conv = nn.Conv1d(d, d, kernel_size=k, padding=1, bias=False)
rnn = nn.RNN(d, d, batch_first=True, bias=False)
attention = d2l.MultiHeadAttention(d, 1, 0.0, query_size=d, key_size=d, value_size=d).eval()
layers = {"convolução": lambda X: conv(X.transpose(1, 2)), "RNN": lambda X: rnn(X),
          "autoatenção": lambda X: attention(X, X, X)}


def fastest_ms(fn, X, repeats=5):
    """O tempo da mais rápida de `repeats` chamadas de fn(X), em milissegundos, após uma chamada de aquecimento.

    Outros trabalhos na máquina só podem deixar uma chamada mais lenta: a mais rápida é a estimativa mais estável.
    """
    times = []
    with torch.no_grad():
        fn(X)
        for _ in range(repeats):
            start = time.perf_counter()
            fn(X)
            times.append(time.perf_counter() - start)
    return min(times) * 1e3


threads = torch.get_num_threads()
torch.set_num_threads(1)  # uma thread: comparamos as camadas, não o quanto cada uma aproveita um pool de threads
table = [f"{'n':>5} | " + " | ".join(f"{name:>14}" for name in layers) + "   (ms, CPU, uma thread)"]
for n in (64, 256, 512):
    X = torch.randn(1, n, d)
    table.append(f"{n:>5} | " + " | ".join(f"{d2l.number(fastest_ms(layer, X), '.2f'):>14}" for layer in layers.values()))
torch.set_num_threads(threads)
print("\n".join(table))

# %% [markdown] en="dc890f75205e"
# ## Explore
#
# O explorador mostra a codificação $P$ de 64 posições (à esquerda; colunas
# desenhadas em coluna / $d$, de modo que as colunas rápidas ficam à esquerda,
# qualquer que seja $d$) e, à direita, o que a autoatenção faz só com as
# posições: $\operatorname{softmax}(PP^\top/\sqrt{d})$, os pesos que uma
# camada com projeções identidade daria se os tokens não carregassem nada além
# das suas posições. As linhas são consultas, e as colunas, chaves. Ele começa
# com a escala de cores ajustada aos pesos; "0 a 1" compara figuras na mesma
# escala.
#
# * Aumente $d$: a figura de $P$ fica mais fina, mas mantém a forma (as
#   frequências sempre vão de 1 até perto de 1/base); a faixa de pesos em
#   torno da diagonal se estreita, porque cada pontuação é $\sqrt{d}/2$ vezes a
#   similaridade de cosseno de duas posições (1 na diagonal, menos no resto),
#   então a diferença entre a diagonal e o resto de uma linha cresce com $d$.
# * Diminua a base: todas as colunas, exceto o primeiro par, giram mais
#   rápido, e os pesos mostram listras paralelas à diagonal, posições distantes
#   que se parecem. A legenda indica o maior comprimento de onda: quando ele
#   fica menor que 64, até o par mais lento completa uma volta dentro da
#   figura, e nas bases mais baixas uma posição distante pode se parecer mais
#   com a posição $i$ do que uma próxima.
# * De volta à base 10000 e a $d = 2$: um único par, uma onda de período
#   $2\pi$; os pesos se repetem a cada 6 posições, mais ou menos.

# %%
from d2lmini.widgets import explore_positional_encoding

explorer = explore_positional_encoding()
explorer

# %% [markdown] en="234745d30473"
# <details>
# <summary>Respostas comentadas das coisas para experimentar (abra depois de experimentá-las)</summary>
#
# 1. De $d = 16$ para cima, a faixa se estreita: as chaves a que uma linha dá
#    mais de 0,01 caem de 55 de 64, em média, para 47 com $d = 64$ e 30 com
#    $d = 128$, e o peso médio na diagonal cresce de 0,034 para 0,059 e
#    0,089. A pontuação na diagonal, $\lVert p_i \rVert^2/\sqrt{d} = \sqrt{d}/2$,
#    é 2 com $d = 16$ e 5,7 com $d = 128$. As pontuações fora da diagonal
#    também crescem, mas menos: na linha da posição 32, a pontuação da posição
#    62 vai de 0,67 a 3,2, então a sua distância até a diagonal aumenta de 1,3
#    para 2,5, e o softmax favorece cada vez mais a diagonal. (Abaixo de
#    $d = 16$, a figura é quase só listras: com poucos pares, o mais rápido,
#    que se repete a cada $2\pi \approx 6{,}3$ posições, pesa muito. Com
#    $d = 8$, a linha da posição 32 dá 0,028 à posição 38, seis casas adiante,
#    contra 0,030 a si mesma; veja a resposta 3.)
# 2. O maior comprimento de onda indicado na legenda é de 35.300 posições na
#    base 10.000, 160 na base 31,6, 93,3 na 17,8 e 54,4 na 10, o primeiro
#    valor abaixo de 64. Na base mais baixa, 3,16 (maior comprimento de onda
#    18,5), a linha da posição 32 dá 0,020 à posição 46, catorze casas
#    adiante, e só 0,002 à posição 36: a codificação diz que 46 se parece mais
#    com 32 do que 36. Essas repetições são as listras.
# 3. Com $d = 2$, a legenda indica comprimentos de onda "de 2π ≈ 6,28 a
#    6,28": um seno e um cosseno. A linha da posição 0 tem picos nas posições
#    6, 13, 19, 25, …, os inteiros mais próximos dos múltiplos de $2\pi$, onde
#    a onda volta ao ponto de partida; posições separadas por um período
#    recebem a mesma codificação, a menos do arredondamento.
#
# </details>

# %% [markdown] en="7f445b76e877"
# ## Resumo
#
# * A autoatenção sem máscara é equivariante a permutações: embaralhar os
#   tokens embaralha as saídas do mesmo jeito (medido abaixo de $10^{-6}$), de
#   modo que, sem posições, "o cachorro perseguiu o gato" e "o gato perseguiu
#   o cachorro" dão a "cachorro" o mesmo vetor.
# * Somar uma codificação posicional aos tokens quebra essa simetria.
# * A codificação senoidal coloca a posição $i$ no ângulo $\omega_j i$ de um
#   círculo por par de colunas, com frequências $\omega_j = \text{base}^{-2j/d}$
#   que caem geometricamente: um contador binário suave.
# * Deslocar $\delta$ posições gira cada par em $\omega_j\delta$, a mesma
#   transformação linear em todas as posições, e o produto escalar
#   $P_i \cdot P_j$ depende só de $i - j$ (e não do seu sinal). Que um modelo
#   possa usar a rotação para prestar atenção por posição relativa é a
#   hipótese do artigo do Transformer: as projeções de uma camada atuam sobre o
#   token e a sua posição juntos.
# * A autoatenção custa $O(n^2 d)$, mas tem $O(1)$ em operações sequenciais e
#   em comprimento de caminho; uma RNN precisa de $O(n)$ de ambos, e uma
#   convolução, de $O(n/k)$ camadas para conectar posições distantes.

# %% [markdown] en="8d708782a9e1"
# ## Por quê? Uma pergunta de verificação
#
# **Sem posições, a autoatenção dá a 'cachorro' a mesma saída em 'o cachorro
# perseguiu o gato' e em 'o gato perseguiu o cachorro'. Por quê?**

# %%
from d2lmini.exercises import questions

questions.ask("07")


# %% [markdown] en="bfd6cdb651ec"
# ## Exercícios
#
# ### Exercício 7.1 · Um deslocamento como rotação (★)
#
# Para um par de colunas com frequência $\omega$, escreva
# `offset_rotation(delta, omega)`, que devolve o tensor $2 \times 2$ $M$ com
#
# $$\begin{bmatrix}\sin \omega(i+\delta)\\ \cos \omega(i+\delta)\end{bmatrix}
# = M \begin{bmatrix}\sin \omega i\\ \cos \omega i\end{bmatrix}
# \quad\text{para toda posição } i.$$
#
# Essa é a forma de coluna $M_\delta$, não a forma de linha $A$ que
# `fitted_map` calcula: $M_\delta = A^\top$.
# `delta` é um int e `omega` um float (use `math.sin` e `math.cos`, ou as
# funções do torch em um tensor). A verificação testa vários deslocamentos e
# frequências e depois aplica a sua matriz a cada linha da tabela de
# `d2l.PositionalEncoding`.

# %% tags=["exercise"]
def offset_rotation(delta, omega):
    """A matriz 2 × 2 que desloca o par (sin ωi, cos ωi) em delta posições."""
    ### BEGIN SOLUTION
    c, s = math.cos(omega * delta), math.sin(omega * delta)
    rows = [[c, s], [-s, c]]  # a linha 0 dá o novo seno, a linha 1 o novo cosseno
    return torch.tensor(rows)
    ### END SOLUTION


# %% tags=["check"]
ch07.check_offset_rotation(offset_rotation)

# %% [markdown] en="3020912c8c37"
# ### Exercício 7.2 · Uma incorporação posicional aprendida (★★)
#
# O BERT e o GPT-2 não usam senos: eles aprendem um vetor por posição, como uma
# incorporação de palavras cujas "palavras" são as posições de 0 a
# `max_len - 1`. Para escrever uma camada assim, você precisa de duas peças do
# PyTorch.
#
# Uma camada é um **módulo**: uma classe derivada de `nn.Module`. O seu
# `__init__` primeiro chama `super().__init__()`, que prepara o módulo, e
# depois cria os tensores aprendíveis da camada. O seu `forward` calcula a
# saída, e chamar o objeto, `layer(X)`, executa `forward(X)`. Todas as
# camadas que este capítulo chamou, entre elas `d2l.MultiHeadAttention`,
# `d2l.PositionalEncoding` e `nn.Conv1d`, são módulos.
#
# Os tensores aprendíveis são objetos `nn.Parameter`, que você conheceu no
# capítulo 01: lá, `d2l.NWKernelRegression` guardava a sua largura como
# `log_sigma`, e o gradiente descendente a alterava. Um parâmetro armazenado
# como atributo de um módulo (`self.name = nn.Parameter(...)`) fica registrado
# nele: `parameters()` e `named_parameters()` o listam. Assim, você pode
# entregar todos os parâmetros de um módulo de uma vez a um otimizador, o
# objeto que dá o passo de gradiente do capítulo 01 em cada tensor que recebe:
# `torch.optim.SGD(layer.parameters(), lr=0.1)`. `nn.Parameter` também liga o
# registro das operações, de modo que `backward()` preenche o seu `.grad`. Um
# tensor comum armazenado do mesmo jeito não é um parâmetro: nenhuma das duas
# listas o mostra. Um pequeno módulo com um fator aprendido por
# característica:

# %%
class Scale(nn.Module):
    """Multiplica cada característica de X por um fator aprendido."""

    def __init__(self, num_features):
        super().__init__()  # prepara o módulo antes de lhe dar parâmetros
        self.factor = nn.Parameter(torch.ones(num_features))  # aprendido, começa em 1

    def forward(self, X):
        return X * self.factor  # (lote, passos, num_features) vezes (num_features,)


scale = Scale(3)
print("parâmetros:", [(name, tuple(p.shape)) for name, p in scale.named_parameters()])
Y_small = scale(torch.ones(2, 4, 3))  # chama forward
print("saída:", tuple(Y_small.shape))
Y_small.sum().backward()
print("gradiente do fator:", scale.factor.grad)  # cada fator multiplicou 2 × 4 uns: gradiente 8

# %% [markdown] en="8ccbe61a31e8"
# Agora complete `LearnedPositionalEmbedding(max_len, num_hiddens)`: a sua
# tabela é um parâmetro de formato (max_len, num_hiddens), iniciado com pequenos
# valores aleatórios para que, no começo, as posições não abafem os vetores dos
# tokens (ou, se você já conhece, um `torch.nn.Embedding` com uma linha por
# posição), e `forward(X)` soma as linhas das primeiras `steps` posições a uma
# entrada (lote, steps, num_hiddens), as mesmas linhas para todos os exemplos.
# A verificação olha os formatos, o que é somado e o gradiente que chega à
# tabela.

# %% tags=["exercise"]
class LearnedPositionalEmbedding(nn.Module):
    """X + E[:steps], com E uma tabela aprendida (max_len, num_hiddens)."""

    def __init__(self, max_len, num_hiddens):
        super().__init__()
        ### BEGIN SOLUTION
        self.table = nn.Parameter(0.02 * torch.randn(max_len, num_hiddens))  # uma linha aprendida por posição
        ### END SOLUTION

    def forward(self, X):
        ### BEGIN SOLUTION
        steps = X.shape[1]
        return X + self.table[:steps]  # (passos, num_hiddens): faz broadcasting sobre o lote
        ### END SOLUTION


# %% tags=["check"]
ch07.check_learned_embedding(LearnedPositionalEmbedding)

# %% [markdown] en="e18f27140604"
# ### Exercício 7.3 · Quais camadas ignoram a ordem? (★★)
#
# Escreva `is_permutation_equivariant(layer, X, perm)`, que devolve `True`
# quando embaralhar os tokens de `X` (eixo 1, pelo tensor de índices `perm`)
# antes da camada dá o mesmo que embaralhar a saída da camada, a menos do
# arredondamento de ponto flutuante, e `False` caso contrário. `layer` é
# qualquer função de (lote, tokens, características) para o mesmo formato. A
# verificação aplica o seu teste às sete camadas abaixo, nesta ordem:
#
# 1. autoatenção
# 2. autoatenção depois de somar P
# 3. autoatenção causal
# 4. um MLP aplicado posição a posição, a mesma pequena rede de duas camadas
#    lineares aplicada a cada token isoladamente
# 5. a média dos tokens, entregue a cada token
# 6. uma convolução sobre os tokens
# 7. uma RNN
#
# Preveja primeiro: em `my_predictions()`, escreva a lista
# `predictions = [...]`, com um `"sim"` (equivariante) ou `"não"` por camada,
# nesta ordem, antes de escrever o teste. A verificação lê as suas previsões
# quando o seu teste estiver certo e diz quais delas o teste contradiz.

# %% tags=["exercise"]
def is_permutation_equivariant(layer, X, perm):
    """Se layer(X[:, perm]) é igual a layer(X)[:, perm], a menos do arredondamento."""
    ### BEGIN SOLUTION
    shuffled_first = layer(X[:, perm])
    shuffled_after = layer(X)[:, perm]
    return torch.allclose(shuffled_first, shuffled_after, atol=1e-5)
    ### END SOLUTION


def my_predictions():
    """As suas sete previsões, "sim" (equivariante) ou "não", na ordem da lista acima."""
    ### BEGIN SOLUTION
    predictions = ["sim", "não", "não", "sim", "sim", "não", "não"]
    ### END SOLUTION
    return predictions


# %% tags=["check"]
ch07.check_equivariance(is_permutation_equivariant, predictions=my_predictions)

# %% [markdown] en="9fa0fb6ebdc8"
# ## Leituras adicionais
#
# * Vaswani et al., *Attention Is All You Need* (2017): a seção 3.5,
#   "Positional Encoding", apresenta a codificação senoidal e a observação de
#   que um deslocamento é uma função linear dela; a tabela 1 compara os custos
#   vistos acima (a sua linha de convolução supõe convoluções dilatadas, com um
#   caminho de $O(\log_k n)$; a seção 4 dá $O(n/k)$ para kernels contíguos,
#   como aqui).
# * Gehring et al., *Convolutional Sequence to Sequence Learning* (2017):
#   incorporações de posição aprendidas somadas aos tokens, como no
#   Exercício 7.2.
# * Shaw, Uszkoreit e Vaswani, *Self-Attention with Relative Position
#   Representations* (2018): o deslocamento $i - j$ fornecido diretamente à
#   atenção.
# * Su et al., *RoFormer: Enhanced Transformer with Rotary Position
#   Embedding* (2021): a rotação deste capítulo, aplicada às consultas e às
#   chaves.
# * *Dive into Deep Learning*, capítulo "Attention Mechanisms and
#   Transformers", seção "Self-Attention and Positional Encoding".
