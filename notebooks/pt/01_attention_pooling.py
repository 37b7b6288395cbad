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

# %% [markdown] en="94b717954e3d"
# # 01 · Pooling de atenção com um kernel gaussiano (Nadaraya–Watson)
#
# Muito antes dos transformers, os estatísticos previam um valor em um ponto
# novo fazendo a média dos alvos dos pontos de treinamento perto dele, com os
# pontos mais próximos contando mais. Nadaraya e Watson publicaram esse
# estimador em 1964. Lido com o vocabulário de hoje, ele é atenção: o ponto
# novo é uma **consulta**, as entradas de treinamento são **chaves**, os alvos
# delas são **valores**, e um kernel decide quanto cada chave importa.
#
# **Neste notebook você vai**
# 1. prever por uma média ponderada dos alvos de treinamento, com pesos dados
#    por um kernel, escrita em `torch` puro e verificada com o `d2lmini`;
# 2. contar os NaN que a normalização dos livros-texto produz com um kernel
#    estreito, e eliminá-los com um softmax;
# 3. variar a largura $\sigma$ do kernel e ver o ajuste e os pesos mudarem
#    juntos;
# 4. aprender $\sigma$ por gradiente descendente, e ver por que cada ponto de
#    treinamento precisa ficar fora das suas próprias chaves;
# 5. reescrever a pontuação gaussiana de um jeito que leva à atenção de
#    produto escalar do capítulo 04.
#
# A primeira célula carrega as bibliotecas e pede ao PyTorch que use uma única
# thread da CPU. Todo tensor deste notebook é pequeno: o maior, na busca em
# grade perto do fim, guarda 101 × 40 × 39 números. Para um trabalho tão
# pequeno, uma thread é mais rápida do que acordar uma segunda a cada
# operação.

# %% [markdown] en="3ea93eb4f3d8"
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/pt/01_attention_pooling.ipynb) abre a edição do aluno deste capítulo no Colab. Execute primeiro a célula de configuração recolhida logo abaixo: no Colab, ela instala o `d2lmini`, o pacote auxiliar desta coleção, e não mexe nos pacotes do próprio ambiente de execução; em um hub de curso, ela aponta qualquer arquivo seu que uma atualização tenha guardado com outro nome. Em qualquer outro lugar, ela não faz nada.

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
import ipywidgets as widgets
import matplotlib.pyplot as plt
import torch
from IPython.display import display

import d2lmini as d2l
from d2lmini.exercises import ch01

device = d2l.try_gpu()
torch.set_num_threads(1)

# %% [markdown] en="d6a16b13181e"
# ## Dados de brinquedo
#
# A função a recuperar é $f(x) = 2\sin x + x$. Nós a observamos em 40 pontos
# aleatórios de $[0, 5)$, com ruído gaussiano de desvio padrão 0,5. As
# entradas de treinamento $x_i$ são as chaves, e os alvos ruidosos $y_i$, os
# valores; as consultas são uma grade de 50 pontos sobre $[0, 5)$. Ordenamos
# as chaves para que colunas vizinhas de um mapa de calor sejam pontos
# vizinhos na reta.
#
# Os dados são sorteados na CPU a partir de uma semente fixa e depois movidos
# para `device`, então são os mesmos quer este notebook rode em uma CPU, quer
# em uma GPU.
#
# Como conhecemos $f$, podemos avaliar qualquer conjunto de previsões pelo seu
# **erro quadrático em relação a $f$**: a diferença ao quadrado entre a
# previsão em cada consulta e $f$ nesse ponto, com a média tomada sobre as 50
# consultas (`truth_error` abaixo). Com dados reais, $f$ é desconhecida; a
# seção "Aprendendo a largura" e o Exercício 1.2 julgam uma largura sem ela.

# %%
def f(x):
    return 2 * torch.sin(x) + x


torch.manual_seed(0)
n_train = 40
x_train, _ = torch.sort(torch.rand(n_train) * 5)  # chaves, (40,)
y_train = f(x_train) + 0.5 * torch.randn(n_train)  # valores, (40,)
x_val = torch.arange(0, 5, 0.1)  # consultas, (50,)
y_truth = f(x_val)  # a resposta sem ruído em cada consulta
x_train, y_train, x_val, y_truth = (t.to(device) for t in (x_train, y_train, x_val, y_truth))
print(f"{len(x_train)} chaves e valores, {len(x_val)} consultas")


def plot_fit(ax, predictions, title):
    """Desenha a verdade, os pontos de treinamento e um conjunto de previsões."""
    ax.plot(d2l.numpy(x_val), d2l.numpy(y_truth), label="verdade f(x)")
    ax.plot(d2l.numpy(x_val), d2l.numpy(predictions), label="previsão")
    ax.plot(d2l.numpy(x_train), d2l.numpy(y_train), "o", alpha=0.4, markersize=4, label="dados de treinamento")
    ax.set(title=title, xlabel="x")


def truth_error(predictions):
    """Distância quadrática média entre as previsões e f na grade de consultas."""
    return ((predictions - y_truth) ** 2).mean().item()


# %% [markdown] en="bf4e37479ed5"
# ## Uma linha de base: pooling médio
#
# O pooling mais simples ignora a consulta: toda consulta recebe a média de
# todos os valores, $\hat f(q) = \frac1n \sum_{i=1}^{n} y_i$. Cada chave tem
# peso $1/n$, qualquer que seja a consulta.

# %%
avg_predictions = y_train.mean().expand(len(x_val))  # (consultas,)
print(f"toda consulta prevê {d2l.number(y_train.mean().item(), '.3f')}; "
      f"erro quadrático em relação a f: {d2l.number(truth_error(avg_predictions), '.3f')}")

fig, ax = plt.subplots(figsize=(4.5, 3))
plot_fit(ax, avg_predictions, "Pooling médio")
ax.legend(fontsize=8)
plt.show()

# %% [markdown] en="47d02f341f31"
# Uma reta horizontal não consegue seguir uma curva. Para fazer melhor, uma
# consulta deveria escutar principalmente as chaves perto dela.
#
# ## Kernels medem proximidade
#
# Um kernel $k(u)$ transforma a diferença escalonada $u = (q - x_i)/\sigma$
# entre a consulta e uma chave em uma similaridade não negativa. A **largura** $\sigma$ define o que quer dizer "perto".
# Quatro kernels:
#
# | kernel | $k(u)$ | em palavras |
# |---|---|---|
# | gaussiano | $\exp(-u^2/2)$ | toda chave conta, as mais próximas muito mais |
# | retangular (boxcar) | $1$ se $\lvert u\rvert < 1$, senão $0$ | média simples sobre uma janela de meia-largura $\sigma$ |
# | constante | $1$ | todas as chaves iguais: o pooling médio de novo |
# | Epanechnikov | $\max(1 - u^2, 0)$ | uma janela como a do retangular, com pesos que diminuem em direção às bordas |
#
# (Os livros de estatística multiplicam o kernel de Epanechnikov por $3/4$
# para que a integral dele seja 1; o fator se cancela quando os pesos são
# normalizados.) Escrevemos os quatro em `torch` puro, uma linha cada, em um
# dicionário que leva o nome de um kernel à sua função (`lambda u: …` é uma
# função de `u` escrita em uma linha), e os verificamos com os do `d2lmini`,
# `d2l.KERNELS`.

# %%
kernels = {
    "gaussian": lambda u: torch.exp(-u ** 2 / 2),
    "boxcar": lambda u: (u.abs() < 1).to(u.dtype),
    "constant": lambda u: torch.ones_like(u),
    "epanechnikov": lambda u: torch.clamp(1 - u ** 2, min=0),
}
u = torch.linspace(-3, 3, 121, device=device)
for name, ours in kernels.items():
    torch.testing.assert_close(ours(u), d2l.KERNELS[name](u))
print("os nossos quatro kernels coincidem com os do d2lmini")

# %% [markdown] en="90c34bf74107"
# ## Pooling de Nadaraya–Watson do zero
#
# A previsão na consulta $q$ é uma média ponderada dos valores, com cada valor
# do kernel dividido pela soma sobre todas as chaves:
#
# $$\hat f(q) = \sum_{i=1}^{n} \alpha(q, x_i)\, y_i, \qquad
# \alpha(q, x_i) = \frac{k\big((q - x_i)/\sigma\big)}{\sum_{j=1}^{n} k\big((q - x_j)/\sigma\big)} .$$
#
# Em código, uma linha por consulta e uma coluna por chave:

# %% en="a9b181d658cc"
# Dados em português: os nomes dos kernels como o leitor os lê (name_pt); o código usa os nomes em inglês
name_pt = {"gaussian": "gaussiano", "boxcar": "retangular", "constant": "constante", "epanechnikov": "Epanechnikov"}


def kernel_pooling(queries, keys, values, kernel, sigma):
    """Pooling de Nadaraya–Watson, normalizando os valores do kernel pela soma deles."""
    k = kernel((queries[:, None] - keys[None, :]) / sigma)  # (consultas, chaves)
    weights = k / k.sum(dim=1, keepdim=True)  # cada linha soma 1
    return weights @ values, weights  # (consultas,), (consultas, chaves)


sigma = 0.5
fits = {}
for name, kernel in kernels.items():
    ours, our_weights = kernel_pooling(x_val, x_train, y_train, kernel, sigma)
    theirs, their_weights = d2l.nadaraya_watson(x_val, x_train, y_train, name, sigma)
    torch.testing.assert_close(our_weights, their_weights)
    torch.testing.assert_close(ours, theirs)
    fits[name] = ours
    print(f"{name_pt[name]:>12}, σ = {d2l.number(sigma)}: coincide com d2l.nadaraya_watson; "
          f"erro quadrático em relação a f: {d2l.number(truth_error(ours), '.3f')}")
torch.testing.assert_close(fits["constant"], avg_predictions)
print("o kernel constante dá exatamente o pooling médio")

# %% [markdown] en="544fffbca271"
# Cada kernel (em cima, como função de $u$) e o ajuste que ele dá em
# $\sigma = 0{,}5$ (embaixo):

# %% en="b8a3f30a5e8a"
# Dados em português: os títulos dão o nome de cada kernel em português (name_pt, acima)
fig, axes = plt.subplots(2, 4, figsize=(12, 5), sharey="row")
for (ax_kernel, ax_fit), (name, kernel) in zip(axes.T, kernels.items()):
    ax_kernel.plot(d2l.numpy(u), d2l.numpy(kernel(u)))
    ax_kernel.set(title=f"kernel {name_pt[name]}", xlabel="u = (q − x) / σ")
    plot_fit(ax_fit, fits[name], f"{name_pt[name]}: ajuste, σ = {d2l.number(sigma)}")
axes[0, 0].set_ylabel("k(u)")
axes[1, 0].legend(fontsize=7)
fig.subplots_adjust(hspace=0.5, wspace=0.1)
plt.show()

# %% [markdown] en="bc3b788cf809"
# Os três kernels locais seguem a curva; o kernel constante é de novo a linha
# de base horizontal. Um kernel local reduz o erro quadrático em relação a $f$
# de 0,86 para 0,11 (gaussiano), 0,05 (retangular) ou 0,04 (Epanechnikov).
#
# ## Kernels estreitos: onde a fórmula dos livros-texto quebra
#
# Diminua $\sigma$ e $u = (q - x_i)/\sigma$ cresce, de modo que o valor do
# kernel gaussiano $\exp(-u^2/2)$ encolhe muito depressa. Um número float32
# não pode ficar arbitrariamente perto de 0: em float32, $\exp(-u^2/2)$ é
# arredondado para exatamente 0 assim que $u$ passa de cerca de 14,4. Esse
# arredondamento para 0 se chama **underflow**. Em $\sigma = 0{,}01$ ele
# acontece para qualquer chave a mais de 0,144 da consulta. Uma consulta sem
# nenhuma chave tão perto recebe 0 em todos os valores do kernel, e $0/0$ é
# NaN ("not a number", isto é, "não é um número"): toda a sua linha de pesos
# vira NaN, e a sua previsão também. (O livro d2l guarda as consultas como
# colunas, então lá elas são *colunas NaN*.)

# %% [markdown] en="77c41120ba62"
# **Para ir mais fundo (você pode pular esta parte).** De onde vem o 14,4. O menor
# número float32 positivo é $2^{-149} \approx 1{,}4 \times 10^{-45}$. Um resultado
# abaixo da metade dele, $2^{-150}$, é arredondado para 0, e $e^{-103{,}97} = 2^{-150}$
# (porque $150 \ln 2 = 103{,}97$). Então $\exp(-u^2/2)$ sofre underflow assim que
# $u^2/2 > 103{,}97$, isto é, $u > 14{,}42$; em $\sigma = 0{,}01$, $u > 14{,}42$ significa
# uma distância acima de 0,1442. As duas exponenciais abaixo ficam uma de cada
# lado desse limite:

# %%
print(f"float32: exp(-103) = {d2l.number(torch.exp(torch.tensor(-103.0)).item(), '.1e')}, "
      f"exp(-104) = {d2l.number(torch.exp(torch.tensor(-104.0)).item())}")

# %% [markdown] en="232d7e11af3f"
# O kernel retangular tem o problema dos NaN por construção: uma consulta sem nenhuma
# chave dentro da sua janela não tem do que tirar a média. Vamos contar as
# linhas NaN à medida que $\sigma$ diminui.

# %%
def nan_rows(weights):
    return int(weights.isnan().any(dim=1).sum())


print("   σ    linhas NaN: k/Σk (de 50)       linhas NaN: d2l.nadaraya_watson")
print("        gaussiano  retangular          gaussiano  retangular")
compared = ("gaussian", "boxcar")
for sigma in (0.5, 0.1, 0.05, 0.02, 0.01, 0.005):
    naive = [nan_rows(kernel_pooling(x_val, x_train, y_train, kernels[name], sigma)[1]) for name in compared]
    stable = [nan_rows(d2l.nadaraya_watson(x_val, x_train, y_train, name, sigma)[1]) for name in compared]
    print(f"{d2l.number(sigma):>6} {naive[0]:>10} {naive[1]:>11} {stable[0]:>18} {stable[1]:>11}")

# %% [markdown] en="3a89998b02ef"
# Em $\sigma = 0{,}01$ três consultas perdem a sua previsão gaussiana; em
# $\sigma = 0{,}005$, mais ainda. `d2l.nadaraya_watson` não perde nenhuma. O
# truque dela: os pesos gaussianos são um softmax do *log* dos valores do
# kernel,
#
# $$\alpha(q, x_i) = \frac{\exp(-u_i^2/2)}{\sum_j \exp(-u_j^2/2)}
# = \operatorname{softmax}_i\!\left(-\tfrac12 u_i^2\right),$$
#
# e `torch.softmax` subtrai o máximo de cada linha antes de exponenciar. A
# chave mais próxima então contribui com $\exp(0) = 1$ para o denominador, que
# não pode mais ser 0. Eis essa versão, feita do zero. No fim da célula,
# `x_val[lost]` indexa com um tensor de booleanos, um por consulta: ele mantém
# as entradas de `x_val` em que `lost` é True.

# %%
def gaussian_pooling(queries, keys, values, sigma):
    """Pooling gaussiano de Nadaraya–Watson calculado como um softmax de -u²/2."""
    scores = -((queries[:, None] - keys[None, :]) / sigma) ** 2 / 2  # (consultas, chaves): log k(u)
    weights = torch.softmax(scores, dim=1)  # (consultas, chaves)
    return weights @ values, weights


for sigma in (0.5, 0.01):
    ours, our_weights = gaussian_pooling(x_val, x_train, y_train, sigma)
    theirs, their_weights = d2l.nadaraya_watson(x_val, x_train, y_train, "gaussian", sigma)
    torch.testing.assert_close(our_weights, their_weights)
    torch.testing.assert_close(ours, theirs)
    print(f"σ = {d2l.number(sigma)}: a forma softmax coincide com o d2lmini, linhas NaN: {nan_rows(our_weights)}")

naive_weights = kernel_pooling(x_val, x_train, y_train, kernels["gaussian"], 0.01)[1]
lost = naive_weights.isnan().any(dim=1)  # as consultas que a fórmula ingênua perdeu
stable_weights = gaussian_pooling(x_val, x_train, y_train, 0.01)[1]
print("consultas perdidas por k/Σk:", d2l.number(d2l.numpy(x_val[lost]).round(1)))
print("o maior peso softmax de cada uma:", d2l.number(d2l.numpy(stable_weights[lost].max(dim=1).values).round(3)))

# %% [markdown] en="c173b3e43964"
# As consultas resgatadas põem todo o seu peso na chave mais próxima, que é o
# que a fórmula significa no limite. Para o kernel retangular, uma consulta sem nenhuma
# chave na janela realmente não tem do que tirar a média, e nenhuma fórmula
# pode resgatá-la. O `d2lmini` dá a ela uma linha de pesos toda nula em vez de
# NaN, para que uma única janela vazia não espalhe NaN pelos cálculos
# seguintes. Isso evita o NaN, não o problema: uma soma ponderada com todos os
# pesos iguais a 0 prevê 0, e aqui 0 é um número errado ($f$ só vale 0 em
# $x = 0$). Ao contrário do NaN, ele parece uma resposta. O capítulo 02 dá a
# mesma linha toda nula a uma consulta sem nenhuma chave a que prestar
# atenção, e lá também a saída 0 deve ser lida como "nada a que prestar
# atenção", nunca como uma previsão. Por isso, uma linha toda nula precisa ser
# sinalizada ou evitada: conte as linhas cujos pesos somam 0, como abaixo, e
# alargue a janela até não sobrar nenhuma.

# %%
boxcar_predictions, boxcar_weights = d2l.nadaraya_watson(x_val, x_train, y_train, "boxcar", 0.01)
empty = boxcar_weights.sum(dim=1) == 0  # as consultas sem nenhuma chave na janela
print("retangular, σ = 0,01: linhas todas nulas:", int(empty.sum()), "| linhas NaN:", nan_rows(boxcar_weights))
print("as previsões delas são todas 0:", bool((boxcar_predictions[empty] == 0).all()),
      f"| f nessas consultas: de {d2l.number(y_truth[empty].min().item(), '.1f')} a {d2l.number(y_truth[empty].max().item(), '.1f')}")

# %% [markdown] en="891038a2b45d"
# Daqui em diante, usamos `d2l.nadaraya_watson`.
#
# ## A largura é o botão de ajuste
#
# Um kernel estreito escuta uma ou duas chaves: o ajuste persegue o ruído. Um
# kernel largo escuta todo mundo: o ajuste se achata em direção à média. O
# erro quadrático em relação a $f$ mostra as duas falhas, com as melhores
# larguras no meio:

# %%
for sigma in (0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 3.0):
    predictions, _ = d2l.nadaraya_watson(x_val, x_train, y_train, "gaussian", sigma)
    print(f"σ = {d2l.number(sigma):<5} erro quadrático em relação a f: {d2l.number(truth_error(predictions), '.3f')}")

# %% [markdown] en="61ab6c743b34"
# Quatro dessas larguras lado a lado: os ajustes e, depois, os pesos deles.
# Nos mapas de calor, cada linha é uma consulta (em cima: $q = 0$, embaixo:
# $q = 4{,}9$) e cada coluna, uma chave de treinamento, ordenada por $x_i$.
# Todos os painéis compartilham uma única escala de cores.

# %%
widths = (0.05, 0.2, 1.0, 3.0)
results = [d2l.nadaraya_watson(x_val, x_train, y_train, "gaussian", s) for s in widths]

fig, axes = plt.subplots(1, len(widths), figsize=(12, 2.8), sharey=True)
for ax, sigma, (predictions, _) in zip(axes, widths, results):
    plot_fit(ax, predictions, f"σ = {d2l.number(sigma)}")
axes[0].legend(fontsize=7)
plt.show()

# %%
width_weights = torch.stack([weights for _, weights in results])  # (larguras, consultas, chaves)
fig = d2l.show_heatmaps(width_weights, xlabel="Chaves (x_i ordenados)", ylabel="Consultas",
                        titles=[f"σ = {d2l.number(s)}" for s in widths], figsize=(12, 3.2))

# %% [markdown] en="1bfb8594724f"
# Em $\sigma = 0{,}05$ cada linha tem uma ou duas células claras, e elas descem
# pela diagonal: cada consulta copia os seus vizinhos mais próximos. Em
# $\sigma = 0{,}2$ a faixa se alarga para um punhado de chaves. Em $\sigma = 3$
# as linhas se achatam em direção a $1/40 = 0{,}025$, escuras nessa escala
# compartilhada: o modelo caminha para o pooling médio. Quanto ele já
# avançou, medido:

# %%
wide = width_weights[-1]  # σ = 3: (consultas, chaves)
print(f"σ = {d2l.number(widths[-1])}: todos os pesos entre {d2l.number(wide.min().item(), '.4f')} e {d2l.number(wide.max().item(), '.4f')} "
      f"(1/{wide.shape[-1]} = {d2l.number(1 / wide.shape[-1], '.4f')})")

# %% [markdown] en="4e597c593677"
# Mais achatadas, não planas: o maior peso ainda é quase quatro vezes o menor,
# porque, para uma consulta em uma ponta de $[0, 5)$, as chaves da outra ponta
# estão a mais de um $\sigma$ (3) de distância. Só quando $\sigma$ cresce sem
# limite é que todos os pesos se aproximam de $1/40$ e o ajuste, do pooling
# médio.
#
# ### Explore você mesmo
#
# O explorador abaixo redesenha juntos o ajuste e o mapa de calor dos pesos à
# medida que você move um controle deslizante logarítmico de $\sigma$, escolhe
# um kernel ou muda o número de pontos de treinamento (sorteados com a mesma
# semente: com 40, são os deste notebook). O mapa de calor dele põe a coluna
# de cada chave na posição da chave em $[0, 5)$, então as colunas têm larguras
# diferentes. Coisas para experimentar:
#
# * Gaussiano, $\sigma$ de grande para pequeno: veja a faixa se estreitar até a
#   diagonal e o ajuste passar de plano a serrilhado. Onde ele fica melhor?
# * Retangular com um $\sigma$ pequeno: as linhas sem nenhuma chave na janela
#   ficam com a cor do 0, a da base da barra de cores (pesos todos nulos), e as
#   previsões delas caem para 0.
# * Constante: toda linha é uniforme, seja qual for $\sigma$.
# * Epanechnikov ao lado do retangular com o mesmo $\sigma$: a mesma janela, mas
#   os pesos diminuem em direção às bordas da janela.
# * Com um $\sigma$ grande, o mapa de calor fica quase de uma cor só, a da base
#   da escala de 0 a 1. Mude **cores** para *ajustar aos pesos*: a barra de cores agora termina em 0,05 ou por aí, e a estrutura
#   tênue dos pesos aparece.

# %%
from d2lmini.widgets import explore_kernel_pooling

explorer = explore_kernel_pooling()
explorer

# %% [markdown] en="c40fb7a221db"
# <details>
# <summary>Respostas comentadas das coisas para experimentar (abra depois de experimentá-las)</summary>
#
# 1. No topo do controle deslizante, $\sigma = 8$, cada consulta faz a média de
#    quase todas as chaves e o ajuste é quase a reta horizontal da média (erro
#    quadrático em relação a $f$: 0,851). Diminuir $\sigma$ estreita a faixa;
#    em $\sigma = 0{,}0625$ o maior peso da figura é 0,999: aquela linha vê uma
#    única chave, e o ajuste copia o ruído (0,145, e 0,233 na base do controle deslizante). Ele fica melhor perto de
#    $\sigma = 0{,}25$, onde o erro é o menor da grade do controle deslizante,
#    0,036: a largura que o treinamento leave-one-out encontra mais adiante
#    (0,24).
# 2. No menor $\sigma$, $2^{-7}$, 46 das 50 consultas não têm nenhuma entrada
#    de treinamento dentro da janela: as linhas delas são todas nulas e as
#    previsões, 0. Ainda há 13 dessas linhas em $\sigma = 0{,}0625$, 5 em 0,125,
#    3 em 0,149 e nenhuma de 0,177 para cima. O kernel retangular não tem caudas, então
#    uma linha dessas não tem nada a normalizar; o `d2lmini` devolve zeros ali
#    em vez do NaN de $0/0$. As previsões 0 estão erradas do mesmo jeito, em
#    todo lugar menos em $x = 0$: o ajuste cai para 0 onde quer que uma janela
#    esteja vazia, seja qual for o valor de $f$ ali.
# 3. Todo peso é 0,025, isto é, $1/40$, tanto no menor $\sigma$ quanto no
#    maior, e o ajuste é a reta horizontal da média dos 40 alvos: pooling médio. O
#    kernel constante ignora a distância, então não há nada para $\sigma$
#    escalonar.
# 4. Em $\sigma = 0{,}5$ a consulta $x = 2{,}5$ dá peso às mesmas 7 chaves com os
#    dois kernels. O kernel retangular dá a cada uma delas $1/7 \approx 0{,}143$; o kernel
#    de Epanechnikov dá 0,205 à mais próxima e só 0,007 à que está na borda da
#    janela. Uma chave que entra na janela começa com peso 0 em vez de entrar
#    de um salto, então o ajuste não tem degraus, e fica mais perto de $f$
#    (erro quadrático 0,038 contra 0,047, impressos na seção do pooling feito
#    do zero).
# 5. Em $\sigma = 8$ o maior peso é 0,027, menos de 3% da altura da escala de
#    0 a 1, então a figura fica quase toda da cor do 0. *Ajustar aos pesos*
#    termina a barra de cores em 0,05, e uma faixa diagonal tênue aparece: as
#    chaves próximas ainda pesam um pouco mais, porque mesmo um kernel
#    gaussiano tão largo não é plano sobre $[0, 5)$.
#
# </details>

# %% [markdown] en="4b8094095256"
# ## Aprendendo a largura
#
# Em vez de testar larguras à mão, podemos aprender $\sigma$ por gradiente
# descendente sobre o erro quadrático nos pontos de treinamento.
# `d2l.NWKernelRegression` é um pooling gaussiano com um único parâmetro,
# $\log\sigma$ (para que $\sigma$ continue positivo, qualquer que seja o passo
# dado pelo gradiente descendente).
#
# Há uma armadilha. Se a consulta $x_i$ vê a sua própria chave $x_i$, o modelo
# pode encolher $\sigma$ em direção a 0, pôr todo o peso de $x_i$ nela mesma e
# prever $y_i$ exatamente: perda de treinamento zero, e um modelo que só copia
# os seus dados. O remédio é o **leave-one-out** ("deixar um de fora"): ao
# prever em $x_i$, use todos os pontos de treinamento exceto $i$.
# `d2l.leave_one_out` constrói essas chaves e valores, uma linha por consulta:

# %%
keys_loo, values_loo = d2l.leave_one_out(x_train, y_train)
print("chaves das 40 consultas de treinamento:", tuple(keys_loo.shape), "(a linha i não tem x_i)")
print("a linha 0 começa com x_1, x_2:", d2l.number(d2l.numpy(keys_loo[0, :2]).round(3)),
      "| x_0, x_1, x_2 são", d2l.number(d2l.numpy(x_train[:3]).round(3)))

# %% [markdown] en="cf705dff9b7b"
# A perda é o erro quadrático médio (MSE, na sigla em inglês) sobre os 40
# pontos de treinamento, $L = \frac1n \sum_i \big(\hat f(x_i) - y_i\big)^2$, e
# cada passo do gradiente descendente move o parâmetro no sentido contrário ao
# do seu gradiente, com uma taxa de aprendizado $\eta$:
#
# $$\log\sigma \leftarrow \log\sigma - \eta\, \frac{\partial L}{\partial \log\sigma} .$$
#
# Com um único parâmetro, escrevemos esse passo por extenso; é a atualização
# que `torch.optim.SGD` faz. O SGD, gradiente descendente *estocástico*,
# costuma dar cada passo com um lote aleatório dos dados; aqui todo passo usa
# os 40 pontos, então nada é aleatório. Treinamos duas vezes a partir de
# $\sigma = 1$ com $\eta = 2$: uma vez com chaves leave-one-out, outra com o
# conjunto de treinamento inteiro como chaves. Uma barra de progresso
# acompanha cada execução.
#
# O laço abaixo é o primeiro desta coleção a usar os gradientes automáticos do
# PyTorch. Quatro peças fazem o trabalho:
#
# * `net.log_sigma` é um `nn.Parameter`: um tensor que um modelo marca como um
#   dos seus números aprendíveis. O PyTorch registra toda operação que o
#   usa, até chegar à perda.
# * `loss.backward()` percorre esse registro de volta e calcula o gradiente
#   $\partial L / \partial \log\sigma$: com que rapidez a perda muda quando
#   $\log\sigma$ cresce um pouco.
# * O gradiente vai parar em `net.log_sigma.grad`. Cada `backward()` soma ao
#   que já está lá, então, depois de cada passo, nós o redefinimos como
#   `None`.
# * O PyTorch se recusa a alterar um parâmetro no próprio lugar (*in place*)
#   enquanto está registrando. `with torch.no_grad():` desliga o registro para
#   as linhas dentro dele, para que o passo de SGD possa alterar $\log\sigma$.
#
# As células seguintes chamam `.detach()`: ele dá os mesmos números sem o
# registro, para plotar e imprimir.

# %%
def train_width(keys, values, description, num_steps=50, lr=2.0):
    """Ajusta a largura do NWKernelRegression por SGD; devolve o modelo e o seu histórico."""
    net = d2l.NWKernelRegression(sigma=1.0).to(device)
    progress = widgets.IntProgress(value=0, max=num_steps, description=description)
    display(progress)
    losses, sigmas = [], []
    for step in range(num_steps + 1):  # registra o início e o estado depois de cada passo
        loss = ((net(x_train, keys, values) - y_train) ** 2).mean()
        losses.append(loss.item())
        sigmas.append(net.sigma.item())  # a largura com que esta perda foi calculada
        progress.value = step
        if step < num_steps:
            loss.backward()
            with torch.no_grad():
                net.log_sigma -= lr * net.log_sigma.grad  # o passo de SGD
            net.log_sigma.grad = None
    return net, losses, sigmas


net_loo, losses_loo, sigmas_loo = train_width(keys_loo, values_loo, "leave-one-out")

# %%
net_all, losses_all, sigmas_all = train_width(x_train, y_train, "todas as chaves")

# %% [markdown] en="0c7e40663fcb"
# As curvas de perda e as larguras (em cima), e os ajustes que as duas
# larguras aprendidas dão na grade de consultas, com os 40 pontos de
# treinamento como chaves (embaixo):

# %%
fig, ((ax_loss, ax_sigma), (ax_fit_loo, ax_fit_all)) = plt.subplots(2, 2, figsize=(9, 5.6))
for losses, sigmas, label in [(losses_loo, sigmas_loo, "leave-one-out"), (losses_all, sigmas_all, "todas as chaves")]:
    ax_loss.plot(losses, label=label)
    ax_sigma.plot(sigmas, label=label)
ax_loss.set(xlabel="passos de SGD dados", ylabel="perda de treinamento (MSE)", title="Curva de perda")
ax_sigma.set(xlabel="passos de SGD dados", ylabel="σ", yscale="log", title="Largura")
ax_loss.legend(fontsize=8)
for ax, net, label in [(ax_fit_loo, net_loo, "leave-one-out"), (ax_fit_all, net_all, "todas as chaves")]:
    sigma = net.sigma.detach()
    predictions, _ = d2l.nadaraya_watson(x_val, x_train, y_train, "gaussian", sigma)
    plot_fit(ax, predictions, f"treinado com {label}: σ = {d2l.number(sigma.item(), '.3f')}")
ax_fit_loo.legend(fontsize=7)
fig.subplots_adjust(hspace=0.5, wspace=0.25)
plt.show()

# %% [markdown] en="29d468c32863"
# Os números das duas execuções. A "perda de treinamento" é o que o SGD
# minimizou; o erro em relação a $f$ usa a largura aprendida na grade de
# consultas, com os 40 pontos de treinamento como chaves, como faria uma
# previsão.

# %%
for net, losses, label in [(net_loo, losses_loo, "leave-one-out"), (net_all, losses_all, "todas as chaves")]:
    sigma = net.sigma.detach()
    predictions, _ = d2l.nadaraya_watson(x_val, x_train, y_train, "gaussian", sigma)
    print(f"{label:>13}: σ = {d2l.number(sigma.item(), '.3f')}, perda final de treinamento {d2l.number(losses[-1], '.3f')}, "
          f"erro quadrático em relação a f {d2l.number(truth_error(predictions), '.3f')}")

own_weight = net_all.attention_weights.diagonal()  # o peso que cada x_i põe na sua própria chave
print(f"com todas as chaves, cada consulta de treinamento põe em média {d2l.number(own_weight.mean().item(), '.2f')} "
      "do seu peso na sua própria chave")

# %% [markdown] en="f45bac81e74e"
# Sem leave-one-out, $\sigma$ não para de encolher e a perda de treinamento
# não para de cair, enquanto o erro em relação à função verdadeira fica várias
# vezes pior: o modelo aprendeu a consultar a si mesmo. Com leave-one-out, a
# perda se estabiliza em uma largura que equilibra ruído e detalhe.
#
# Essa largura é a melhor para a perda leave-one-out? Uma busca em grade sobre
# $\sigma$ responde a isso sem nenhum gradiente. Avaliamos as 101 larguras de
# uma vez: o pooling gaussiano na forma softmax, com mais um eixo à frente
# para a largura. Indexar com `None` insere um eixo de comprimento 1, e o
# broadcasting repete um tensor ao longo desse eixo para combinar com o outro.
# As 40 consultas de treinamento passam a ter formato $(1, 40, 1)$, as suas
# chaves leave-one-out, $(1, 40, 39)$, e as larguras, $(101, 1, 1)$, então `u`
# guarda uma distância escalonada para cada largura, consulta e chave:
# $(101, 40, 39)$.

# %%
grid = torch.logspace(-2, 0.5, 101).to(device)  # 101 larguras, de 0,01 a 3,16
u = (x_train[None, :, None] - keys_loo[None, :, :]) / grid[:, None, None]  # (larguras, consultas, chaves)
loo_predictions = (torch.softmax(-u ** 2 / 2, dim=-1) * values_loo).sum(dim=-1)  # (larguras, consultas)
loo_losses = ((loo_predictions - y_train) ** 2).mean(dim=-1)  # (larguras,)
best = loo_losses.argmin()
print(f"mínimo da perda leave-one-out na grade: σ = {d2l.number(grid[best].item(), '.2f')} "
      f"(perda {d2l.number(loo_losses[best].item(), '.3f')}); o SGD encontrou σ = {d2l.number(net_loo.sigma.item(), '.2f')}")

# %% [markdown] en="d39fce208ff2"
# ## Uma ponte para a atenção de produto escalar
#
# Até aqui, consultas e chaves eram números; nos próximos capítulos, elas são
# vetores de $d$ números cada. Duas notações sustentam o resto da coleção:
#
# * o **produto escalar** de dois vetores do mesmo tamanho,
#   $q^\top k = \sum_{i=1}^{d} q_i k_i$: multiplicamos os dois entrada por
#   entrada e somamos tudo, o que dá um único número. Aqui os vetores
#   são colunas; o $\top$ (*transposta*) transforma a coluna $q$ em uma linha, e uma linha vezes uma coluna é essa
#   soma;
# * o **comprimento**, ou **norma**, de um vetor, $\lVert q\rVert$: a raiz
#   quadrada da soma dos quadrados das suas entradas, de modo que
#   $\lVert q\rVert^2 = q^\top q$.
#
# A distância entre uma consulta e uma chave é o comprimento da sua diferença,
# $\lVert q - k\rVert$. Com $\sigma = 1$, a pontuação gaussiana de uma consulta $q$
# e uma chave $k$ (daqui em diante, $k$ é uma chave, não mais o kernel) é
# $-\tfrac12 \lVert q - k\rVert^2$, que, para números, é o
# $-\tfrac12 (q - k)^2$ do capítulo 00. Expandir o quadrado entrada por
# entrada, como $(a - b)^2 = a^2 - 2ab + b^2$, e somar
# sobre as $d$ entradas dá
# $\lVert q - k\rVert^2 = \lVert q\rVert^2 - 2\, q^\top k + \lVert k\rVert^2$, e então
#
# $$-\tfrac12 \lVert q - k\rVert^2 = q^\top k - \tfrac12 \lVert k\rVert^2 - \tfrac12 \lVert q\rVert^2 .$$
#
# O último termo depende só da consulta, então é o mesmo para todas as chaves
# de uma linha de pontuações, e um softmax não muda quando se soma uma
# constante a uma linha inteira. Ele se cancela: a atenção gaussiana é
# $\operatorname{softmax}\big(q^\top k - \tfrac12\lVert k\rVert^2\big)$, um
# produto escalar mais um viés por chave. Se todas as chaves têm a mesma
# norma, esse viés também se cancela e sobra só $\operatorname{softmax}(q^\top k)$:
# a pontuação de produto escalar do capítulo 04. (Uma largura $\sigma$ divide
# toda pontuação por $\sigma^2$. Um número que divide toda pontuação se chama
# *temperatura*: uma temperatura alta achata os pesos, uma baixa os concentra.
# O $\sqrt d$ do capítulo 04 é uma temperatura desse tipo, escolhida lá para
# que aumentar o tamanho $d$ dos vetores não concentre, por si só, os pesos.)
#
# Verificamos cada passo numericamente com vetores aleatórios de dimensão 4. O
# código guarda as 3 consultas como as linhas de `q`, de formato (3, 4), e as
# 6 chaves como as linhas de `k`, (6, 4). `k.T` é `k` transposto: as suas
# linhas viram colunas, de formato (4, 6). `@` multiplica matrizes: a entrada
# $(i, j)$ de `q @ k.T` é o produto escalar da linha $i$ de `q` com a coluna
# $j$ de `k.T`, isto é, $q^\top k$ para a consulta $i$ e a chave $j$. Assim,
# `q @ k.T`, de formato (3, 6), contém todas as pontuações $q^\top k$, uma
# linha por consulta e uma coluna por chave, como as pontuações do capítulo 00.
# `(k ** 2).sum(dim=-1)` eleva ao quadrado cada entrada e soma cada linha: um
# $\lVert k\rVert^2$ por chave.

# %%
torch.manual_seed(1)
q = torch.randn(3, 4).to(device)  # 3 consultas
k = torch.randn(6, 4).to(device)  # 6 chaves


def distance_scores(q, k):
    return -0.5 * ((q[:, None, :] - k[None, :, :]) ** 2).sum(dim=-1)  # (consultas, chaves)


expanded = q @ k.T - 0.5 * (k ** 2).sum(dim=-1)[None, :] - 0.5 * (q ** 2).sum(dim=-1)[:, None]
torch.testing.assert_close(distance_scores(q, k), expanded)
print("-½‖q−k‖² é igual a qᵀk − ½‖k‖² − ½‖q‖²")

without_q_term = q @ k.T - 0.5 * (k ** 2).sum(dim=-1)[None, :]  # (consultas, chaves)
torch.testing.assert_close(torch.softmax(distance_scores(q, k), dim=-1), torch.softmax(without_q_term, dim=-1))
print("descartar o termo ‖q‖² deixa os pesos do softmax inalterados")

unit_keys = k / k.norm(dim=-1, keepdim=True)  # agora toda chave tem norma 1
torch.testing.assert_close(torch.softmax(distance_scores(q, unit_keys), dim=-1),
                           torch.softmax(q @ unit_keys.T, dim=-1))
print("com chaves de mesma norma, os pesos gaussianos são softmax(qᵀk)")
print("já as próprias pontuações diferem, por ½‖q‖² + ½ em cada linha:",
      d2l.number(d2l.numpy((q @ unit_keys.T - distance_scores(q, unit_keys))[:, 0]).round(3)))

# %% [markdown] en="d978f577c93d"
# ## Resumo
#
# * A regressão de Nadaraya–Watson é pooling de atenção: as consultas são
#   entradas novas, as chaves e os valores são as entradas e os alvos de
#   treinamento, e os pesos são valores do kernel normalizados sobre as
#   chaves.
# * O kernel constante dá o pooling médio; os kernels locais (gaussiano,
#   retangular, Epanechnikov) seguem os dados.
# * Normalizar como $k/\sum k$ dá linhas NaN assim que um kernel gaussiano
#   estreito sofre underflow em todas as chaves (3 de 50 consultas em
#   $\sigma = 0{,}01$, aqui). Um softmax do log dos valores do kernel nunca dá;
#   `d2l.nadaraya_watson` calcula os pesos desse jeito, e dá a uma consulta
#   sem nenhuma chave na janela de um kernel retangular pesos todos nulos em vez de NaN.
#   A previsão dessas consultas, 0, continua errada (em todo lugar menos em
#   $x = 0$): conte essas linhas e alargue a janela até não sobrar nenhuma.
# * A largura $\sigma$ equilibra ruído e detalhe. Ela pode ser aprendida por
#   gradiente descendente, mas só com chaves leave-one-out: com a própria
#   chave à vista, o modelo encolhe $\sigma$ e copia $y_i$.
# * $-\tfrac12\lVert q-k\rVert^2 = q^\top k - \tfrac12\lVert k\rVert^2 - \tfrac12\lVert q\rVert^2$,
#   e o termo $\lVert q\rVert^2$ se cancela no softmax: a pontuação gaussiana
#   está a um passo do produto escalar.

# %% [markdown] en="e9de56c0b28d"
# ## Por quê? Uma pergunta de verificação
#
# **Treinada com todos os pontos de treinamento como chaves, a largura σ não
# para de encolher e a perda de treinamento não para de cair. Por quê?**

# %%
from d2lmini.exercises import questions

questions.ask("01")


# %% [markdown] en="0d93ec3e52a8"
# ## Exercícios
#
# Complete cada função, execute a célula dela e depois execute a verificação
# logo abaixo. Uma verificação imprime uma linha quando a sua resposta está
# certa; caso contrário, ela diz o que esperava, o que obteve, e dá uma dica.

# %% [markdown] en="db9689daa80b"
# ### Exercício 1.1 · O kernel triangular (★)
#
# O kernel triangular é uma tenda, $k(u) = \max(1 - \lvert u\rvert, 0)$: vale 1
# em $u = 0$, cai em linha reta até 0 em $\lvert u\rvert = 1$, e vale 0 daí em
# diante. Ele tem a janela do kernel retangular e do de Epanechnikov, mas não o
# perfil deles: compare $k(0{,}5)$ nos três. Escreva-o para um tensor `u` de
# qualquer formato, elemento a elemento, sem alterar `u`. O `d2lmini` não
# oferece este; quando a sua função passar, a verificação a entrega a
# `d2l.nadaraya_watson`, que aceita qualquer função de kernel, além de um
# nome.

# %% tags=["exercise"]
def triangular_kernel(u):
    """Devolve max(1 - |u|, 0) elemento a elemento."""
    ### BEGIN SOLUTION
    return torch.clamp(1 - u.abs(), min=0)
    ### END SOLUTION


# %% tags=["check"]
ch01.check_triangular(triangular_kernel)

# %% [markdown] en="d4da1d68acac"
# ### Exercício 1.2 · Escolha σ com dados reservados (★)
#
# A perda de treinamento simples não consegue escolher $\sigma$: com os pontos
# de treinamento como suas próprias chaves, a menor largura sempre vence. As
# chaves leave-one-out são uma saída (a do capítulo; o Exercício 1.3 a
# estende); reservar parte dos dados é outra. Escreva `best_sigma`, que
# devolve a largura de `sigmas` cujas previsões gaussianas de Nadaraya–Watson
# nas entradas reservadas `x_val` (chaves `x_train`, valores `y_train`) têm o
# menor erro quadrático médio em relação aos seus alvos `y_val`. Devolva um
# dos números de `sigmas`.

# %% tags=["exercise"]
def best_sigma(x_train, y_train, x_val, y_val, sigmas):
    """Devolve a largura de sigmas com o menor MSE nos dados reservados."""
    ### BEGIN SOLUTION
    errors = torch.stack([
        ((d2l.nadaraya_watson(x_val, x_train, y_train, "gaussian", s)[0] - y_val) ** 2).mean()
        for s in sigmas
    ])
    return sigmas[int(errors.argmin())]
    ### END SOLUTION


# %% tags=["check"]
ch01.check_best_sigma(best_sigma)

# %% [markdown] en="1ecddb7ca93f"
# ### Exercício 1.3 · Deixe de fora também os vizinhos (★★)
#
# O leave-one-out esconde só o ponto $i$ da consulta $x_i$. Dados reais muitas
# vezes contêm cópias quase idênticas de um ponto: a mesma medição feita duas vezes, ou
# duas leituras com um instante de diferença. Aí a consulta $x_i$ pode copiar
# o alvo da sua cópia, e a armadilha do capítulo está de volta. O remédio é
# esconder um bloco inteiro de vizinhos.
#
# Escreva `block_out_loss(x, y, sigma, m)`: o erro quadrático médio das
# previsões gaussianas de Nadaraya–Watson em cada entrada de treinamento
# $x_i$, em que a previsão para $x_i$ só pode usar os pontos $j$ com $\lvert i - j\rvert > m$.
# As entradas `x` estão ordenadas, então isso esconde $x_i$ e os seus $m$
# vizinhos mais próximos de cada lado (menos, nas pontas dos dados). Com
# $m = 0$, é a perda leave-one-out do capítulo. Devolva um tensor escalar. Uma
# consulta perto de uma ponta fica com mais chaves do que uma no meio, então
# as chaves de todas as consultas não cabem em uma única tabela de linhas
# iguais, como cabem as de `d2l.leave_one_out`. Em vez disso, faça um laço
# sobre $i$ e escolha as chaves e os valores da consulta $i$ com uma máscara
# booleana, como `x_val[lost]` escolheu consultas. Passe `x[i:i + 1]`, de
# formato (1,), como a consulta (`x[i]` não tem eixo nenhum), junte as previsões
# em uma lista e una-as em um único tensor com `torch.cat(predictions)`.
#
# Quando a sua função passar, a verificação duplica cada ponto de treinamento,
# de modo que cada ponto tem uma cópia exata ao lado, e escolhe $\sigma$ em
# uma grade pela sua perda, uma vez com $m = 0$ e outra com $m = 1$. Antes de
# executá-la: qual das duas você espera que escolha uma largura minúscula, e
# por quê?

# %% tags=["exercise"]
def block_out_loss(x, y, sigma, m):
    """Erro quadrático médio do pooling gaussiano quando a consulta i não pode ver os pontos j com |i - j| <= m."""
    ### BEGIN SOLUTION
    n = len(x)
    predictions = []
    for i in range(n):
        keep = (torch.arange(n, device=x.device) - i).abs() > m  # (n,) True fora do bloco
        prediction, _ = d2l.nadaraya_watson(x[i:i + 1], x[keep], y[keep], "gaussian", sigma)
        predictions.append(prediction)
    return ((torch.cat(predictions) - y) ** 2).mean()
    ### END SOLUTION


# %% tags=["check"]
ch01.check_block_out_loss(block_out_loss)

# %% [markdown] en="fcfcbe4b823e"
# ## Leituras adicionais
#
# * E. A. Nadaraya (1964), "On estimating regression", *Theory of
#   Probability and Its Applications* 9(1), e G. S. Watson (1964), "Smooth
#   regression analysis", *Sankhyā A* 26(4): os dois artigos que propuseram,
#   de forma independente, a média ponderada por kernel que este capítulo
#   constrói.
# * O livro d2l, capítulo "Attention Mechanisms and Transformers", seção
#   "Attention Pooling by Similarity": o mesmo estimador, com outros kernels
#   e uma largura aprendida.
