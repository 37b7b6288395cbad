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

# %% [markdown] en="2e90971a2647"
# # 04 · Atenção de produto escalar escalonado
#
# A atenção aditiva (capítulo 03) executa uma pequena rede para cada par
# (consulta, chave). Quando consultas e chaves têm o mesmo tamanho, existe uma
# pontuação muito mais barata: o produto escalar entre elas. Ela não precisa de
# parâmetro nenhum, e um lote inteiro de pontuações é um único produto de
# matrizes. A única sutileza é uma divisão por $\sqrt{d}$, e este notebook
# mede por que ela está ali.
#
# **Neste notebook você vai**
# 1. escrever $\operatorname{softmax}(QK^\top/\sqrt{d})\,V$ com `torch.bmm`;
# 2. verificar o resultado com `d2lmini.DotProductAttention` e com a
#    `scaled_dot_product_attention` do PyTorch, com e sem máscaras;
# 3. medir a variância de $q^\top k$ à medida que $d$ cresce, com e sem a
#    escala, e ver o que um softmax sem escala faz com os pesos e com os
#    gradientes que voltam através dele;
# 4. executar autoatenção causal em duas frases curtas que compartilham uma palavra;
# 5. explorar dimensão, escala, temperatura e máscaras com controles deslizantes.

# %% [markdown] en="339913da6429"
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/pt/04_scaled_dot_product.ipynb) abre a edição do aluno deste capítulo no Colab. Execute primeiro a célula de configuração recolhida logo abaixo: no Colab, ela instala o `d2lmini`, o pacote auxiliar desta coleção, e não mexe nos pacotes do próprio ambiente de execução; em um hub de curso, ela aponta qualquer arquivo seu que uma atualização tenha guardado com outro nome. Em qualquer outro lugar, ela não faz nada.

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

import torch
import torch.nn.functional as F

import d2lmini as d2l
from d2lmini.exercises import ch04

device = d2l.try_gpu()

# %% [markdown] en="1b06f5dd7a9a"
# ## A pontuação e a sua forma em lote
#
# Para uma consulta e uma chave do mesmo tamanho $d$,
#
# $$a(q, k) = \frac{q^\top k}{\sqrt{d}} .$$
#
# Empilhe as $n_q$ consultas de um exemplo como as linhas de uma matriz
# $\mathbf{Q} \in \mathbb{R}^{n_q \times d}$, as $n_k$ chaves como
# $\mathbf{K} \in \mathbb{R}^{n_k \times d}$ e os valores, de tamanho $d_v$, como
# $\mathbf{V} \in \mathbb{R}^{n_k \times d_v}$. Todas as $n_q \cdot n_k$
# pontuações passam a ser um único produto de matrizes, e o pooling, outro:
#
# $$\operatorname{softmax}\!\left(\frac{\mathbf{Q}\mathbf{K}^\top}{\sqrt{d}}\right)\mathbf{V}
# \in \mathbb{R}^{n_q \times d_v}.$$
#
# `torch.bmm` faz um produto desses para cada exemplo do lote. As chaves de
# preenchimento ficam por conta do softmax mascarado do capítulo 02.

# %%
def scaled_dot_product(queries, keys, values, valid_lens=None):
    """softmax(Q Kᵀ / √d) V por exemplo; devolve a saída e os pesos."""
    d = queries.shape[-1]
    scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # (B, n_q, d) @ (B, d, n_k) -> (B, n_q, n_k)
    weights = d2l.masked_softmax(scores, valid_lens)  # (B, n_q, n_k)
    return torch.bmm(weights, values), weights  # (B, n_q, n_k) @ (B, n_k, d_v) -> (B, n_q, d_v)


torch.manual_seed(0)  # aqui, para que executar esta célula de novo sorteie os mesmos números
queries = torch.randn(2, 3, 8).to(device)  # (lote, consultas, d)
keys = torch.randn(2, 5, 8).to(device)  # (lote, chaves, d)
values = torch.randn(2, 5, 4).to(device)  # (lote, chaves, d_v)
valid_lens = torch.tensor([2, 4]).to(device)

output, weights = scaled_dot_product(queries, keys, values, valid_lens)
print("saída:", tuple(output.shape), " pesos:", tuple(weights.shape))
print("pesos do exemplo 0 (2 chaves válidas):")
print(d2l.number(d2l.numpy(weights[0]).round(3)))

# %% [markdown] en="d585cb459942"
# ## Verificando com o `d2lmini` e o PyTorch
#
# `d2l.DotProductAttention` calcula a mesma coisa, com dropout nos pesos
# durante o treinamento. O PyTorch oferece a operação como
# `torch.nn.functional.scaled_dot_product_attention` (SDPA). A SDPA não recebe
# comprimentos; ela recebe uma máscara booleana `attn_mask` que vale `True`
# onde uma consulta pode olhar para uma chave. Um comprimento por exemplo dá
# uma máscara de formato (lote, 1, chaves), que faz broadcasting sobre as
# consultas.

# %%
attention = d2l.DotProductAttention(dropout=0.0)
package_output = attention(queries, keys, values, valid_lens)

key_positions = torch.arange(keys.shape[1], device=device)
allowed = key_positions < valid_lens[:, None, None]  # (lote, 1, chaves), True = pode prestar atenção
sdpa_output = F.scaled_dot_product_attention(queries, keys, values, attn_mask=allowed)

torch.testing.assert_close(package_output, output)
torch.testing.assert_close(attention.attention_weights, weights)
torch.testing.assert_close(sdpa_output, output)
print("a nossa == d2l.DotProductAttention == F.scaled_dot_product_attention (comprimentos válidos 1-D)")

# %% [markdown] en="d355add72072"
# O mesmo vale com um comprimento por consulta (um tensor de comprimentos
# (lote, consultas), uma máscara (lote, consultas, chaves)) e sem máscara
# nenhuma:

# %%
per_query_lens = torch.tensor([[1, 3, 5], [2, 2, 4]]).to(device)
allowed = key_positions < per_query_lens[:, :, None]  # (lote, consultas, chaves)
torch.testing.assert_close(attention(queries, keys, values, per_query_lens),
                           F.scaled_dot_product_attention(queries, keys, values, attn_mask=allowed))
torch.testing.assert_close(attention(queries, keys, values),
                           F.scaled_dot_product_attention(queries, keys, values))
print("também iguais com comprimentos válidos 2-D e sem máscara")

# %% [markdown] en="f822c91487d0"
# **Dropout.** Durante o treinamento, `DotProductAttention` zera cada peso
# com probabilidade $p$, o seu argumento `dropout` (e multiplica os demais por
# $1/(1-p)$, o que preserva o valor esperado deles), de modo que duas chamadas
# dão duas respostas; no modo de avaliação, o dropout fica desligado. O
# equivalente na SDPA é o argumento `dropout_p`, que deixamos em 0.

# %%
noisy = d2l.DotProductAttention(dropout=0.5)
noisy.train()
print("modo de treino, duas chamadas iguais:   ", torch.equal(noisy(queries, keys, values), noisy(queries, keys, values)))
noisy.eval()
print("modo de avaliação, duas chamadas iguais:", torch.equal(noisy(queries, keys, values), noisy(queries, keys, values)))

# %% [markdown] en="dc55452ff475"
# ## Por que dividir por $\sqrt{d}$? A variância, medida
#
# Antes, três termos. A **média** $\mathbb{E}[x]$ de um número aleatório $x$
# é o seu valor médio ao longo de muitos sorteios, e a sua **variância** é a
# média do quadrado da sua distância até essa média, que é $\mathbb{E}[x^2]$
# quando a média é 0. Dois números aleatórios são **independentes** quando
# conhecer um não diz nada sobre o outro: nesse caso, a média do produto deles
# é o produto das médias, e a variância da soma é a soma das variâncias.
#
# Suponha que as coordenadas de $q$ e $k$ sejam independentes, com média 0 e
# variância 1. Cada produto $q_i k_i$ tem então média 0 e variância
# $\mathbb{E}[q_i^2 k_i^2] = \mathbb{E}[q_i^2]\,\mathbb{E}[k_i^2] = 1$, e os
# $d$ produtos são independentes, portanto
#
# $$\operatorname{Var}(q^\top k) = \sum_{i=1}^{d} \operatorname{Var}(q_i k_i) = d,
# \qquad \operatorname{Var}\!\left(\frac{q^\top k}{\sqrt{d}}\right) = 1 .$$
#
# Vamos verificar isso com 2.000 pares aleatórios por dimensão. São medições,
# e não código de modelo, então elas rodam na CPU em float64 (os números são
# sorteados em float32, que é mais rápido), o que faz os dígitos impressos
# serem os mesmos em qualquer máquina.

# %%
generator = torch.Generator().manual_seed(0)
dims = [2 ** i for i in range(11)]  # 1, 2, 4, ..., 1024
num_pairs = 2000
unscaled_var, scaled_var = [], []
for d in dims:
    q = torch.randn(num_pairs, d, generator=generator).double()
    k = torch.randn(num_pairs, d, generator=generator).double()
    dots = (q * k).sum(dim=1)  # (num_pairs,): um qᵀk por par
    unscaled_var.append(dots.var().item())
    scaled_var.append((dots / math.sqrt(d)).var().item())

print(f"{'d':>5} {'Var(qᵀk)':>10} {'Var(qᵀk/√d)':>12}")
for d, unscaled, scaled in list(zip(dims, unscaled_var, scaled_var))[::2]:
    print(f"{d:>5} {d2l.number(unscaled, '.1f'):>10} {d2l.number(scaled, '.2f'):>12}")

# %%
fig, ax = d2l.plt.subplots(figsize=(4.5, 3))
ax.loglog(dims, unscaled_var, "o-", label="qᵀk")
ax.loglog(dims, scaled_var, "s-", label="qᵀk / √d")
ax.loglog(dims, dims, "k:", label="d (teoria)")
ax.set_xlabel("dimensão d")
ax.set_ylabel("variância empírica")
ax.legend()
d2l.plt.show()

# %% [markdown] en="4e76828e7a15"
# A variância sem escala fica sobre a reta $y = d$; a com escala fica perto de
# 1 em todo $d$. Sem a escala, o desvio padrão das pontuações, a distância
# típica de uma pontuação até 0, é $\sqrt{d}$: cerca de 32 em $d = 1024$
# (na medição, $\sqrt{981{,}5} \approx 31$).
#
# ## O que pontuações grandes fazem com o softmax, e com o aprendizado
#
# O softmax transforma diferenças de pontuações em razões de pesos,
# $e^{s_i - s_j}$. Quando as pontuações se espalham por dezenas de unidades, a
# maior delas fica com quase todo o peso: o softmax **satura**. A explicação
# usual dos livros-texto vai um passo além: um softmax saturado tem gradientes
# minúsculos, então, sem a escala, o aprendizado emperraria. O artigo que
# introduziu a escala (Vaswani et al., 2017, "Attention Is All You Need") dá
# essa razão, como uma suspeita, em uma única frase. Aqui, pomos essa
# explicação à prova.
#
# Sorteamos 300 consultas, cada uma com 10 chaves próprias, e calculamos a
# linha de pesos de cada consulta com e sem a escala. Medimos três coisas, em
# cada $d$.
#
# 1. **Quão concentrados estão os pesos**, para ver se o softmax satura: o
#    maior peso de uma linha (1 significa one-hot: todo o peso em uma única
#    chave) e a entropia dos pesos $\alpha_j$ da linha,
#    $-\sum_j \alpha_j \log \alpha_j$ (0 significa one-hot; a distribuição
#    uniforme sobre 10 chaves dá $\log 10 \approx 2{,}30$).
# 2. **O gradiente nas pontuações $s$**, aquele de que fala a explicação dos
#    livros-texto. Um gradiente precisa de uma perda. Tomamos uma que depende
#    de todos os pesos, $L = \sum_j g_j \alpha_j$ com números aleatórios fixos
#    $g_j$: nenhuma tarefa real, apenas um substituto para qualquer perda que
#    o treinamento usaria. A diferenciação automática do PyTorch (autograd,
#    `.backward()`) calcula o gradiente.
# 3. **O gradiente na consulta $q$**, um passo mais para trás. O treinamento
#    não ajusta as pontuações diretamente: ele muda os pesos aprendidos que
#    produzem $q$ (as projeções da próxima seção). O gradiente desses pesos é
#    calculado a partir do gradiente em $q$, então este é um gradiente que o
#    aprendizado de fato recebe (as projeções das chaves aprendem pelo
#    gradiente em $k$, que se comporta da mesma forma; aqui as chaves são
#    fixas).
#
# Um gradiente é um vetor por linha; medimos o seu comprimento (norma), um
# número por consulta, e tiramos a média sobre as 300 linhas. Para o gradiente
# em $q$, damos também a **mediana**, a linha do meio depois que as
# linhas são ordenadas por esse comprimento. As duas dizem coisas diferentes:
# se algumas poucas linhas recebessem gradientes grandes e a maioria não
# recebesse nada, a média ainda poderia parecer saudável, mas a mediana
# ficaria perto de 0.

# %% [markdown] en="9049e5d3c678"
# **Para ir mais fundo (você pode pular esta parte).** Os dois gradientes em
# fórmulas. Para $\alpha = \operatorname{softmax}(s)$, $\partial \alpha_i / \partial s_j =
# \alpha_i(\delta_{ij} - \alpha_j)$, com $\delta_{ij} = 1$ quando $i = j$ e 0
# caso contrário: a jacobiana é
# $J = \operatorname{diag}(\alpha) - \alpha\alpha^\top$ (simétrica), então
# $\partial L / \partial s = J\, \partial L / \partial \alpha = J g$. Um
# $\alpha$ one-hot faz $J = 0$: um softmax saturado quase não devolve
# gradiente às suas pontuações. Um passo adiante, $s_j = q^\top k_j$ (sem
# escala) dá
# $\partial L / \partial q = \sum_j (\partial L / \partial s_j)\, k_j$: o
# gradiente nas pontuações, ponderado pelas chaves, cujos comprimentos
# $\lVert k_j\rVert$ crescem como $\sqrt{d}$. Com escala,
# $s_j = q^\top k_j / \sqrt{d}$ acrescenta um fator $1/\sqrt{d}$ que cancela
# esse crescimento. E $Jg$ só fica longe de 0 quando um segundo peso da linha
# está longe de 0, isto é, quando as duas maiores pontuações da linha estão a
# poucas unidades uma da outra. Sem escala, as distâncias entre as pontuações
# crescem como $\sqrt{d}$ junto com as próprias pontuações, então cada vez
# menos linhas têm um quase empate desses: é por isso que o gradiente em $q$
# acaba concentrado em poucas linhas. A fração dessas linhas tende a cair como
# $1/\sqrt{d}$, enquanto o gradiente em $q$ de uma linha que tem um quase
# empate cresce como $\lVert k_j\rVert$, isto é, como $\sqrt{d}$: os dois
# efeitos se cancelam aproximadamente, e a média sobre as linhas se estabiliza
# em vez de crescer ou sumir.

# %% [markdown] en="956db2ad5e1e"
# O código abaixo mede tudo isso. Uma linha merece uma explicação. Depois de
# `.backward()`, o autograd guarda um gradiente em `.grad` apenas para os
# tensores que marcamos com `requires_grad_()`, aqui `q`. As pontuações são
# calculadas a partir de `q`: o autograd usa o gradiente delas no caminho de
# volta até `q` e depois o descarta. `scores.retain_grad()` pede que ele
# guarde esse gradiente, em `scores.grad`, para que possamos medi-lo.
#
# As duas últimas linhas impressas mostram como o gradiente em $q$ se
# distribui pelas linhas em $d = 1024$. Elas ordenam as 300 linhas pelo
# comprimento desse gradiente e dão duas frações: a fração das linhas que
# recebem quase nada (menos de 0,01) e a fração do total que cabe aos 10%
# das linhas com os maiores gradientes. Se todas as linhas recebessem o
# mesmo, esses 10% das linhas ficariam com 10% do total.

# %%
def softmax_statistics(q, k, scale, g):
    """Softmax sobre q·k·scale: peso máximo médio, entropia média, normas médias do gradiente em s e em q,
    mediana em q, e a norma do gradiente em q de cada linha."""
    q = q.detach().requires_grad_()  # (linhas, 1, d)
    scores = (q @ k.transpose(1, 2)).squeeze(1) * scale  # (linhas, chaves)
    scores.retain_grad()  # guarda ∂L/∂s em scores.grad (veja acima)
    weights = torch.softmax(scores, dim=-1)  # (linhas, chaves)
    (weights * g).sum().backward()  # L = Σ g · α, logo ∂L/∂α = g
    entropy = torch.special.entr(weights).sum(dim=-1)  # -Σ α log α, com 0 log 0 = 0
    at_q = q.grad.squeeze(1).norm(dim=-1)  # (linhas,)
    return (weights.max(dim=-1).values.mean().item(), entropy.mean().item(),
            scores.grad.norm(dim=-1).mean().item(), at_q.mean().item(), at_q.median().item(), at_q)


num_rows, num_keys = 300, 10
g = torch.randn(num_rows, num_keys, generator=generator).double()
stats = {"sem escala": [], "com escala": []}
for d in dims:
    q = torch.randn(num_rows, 1, d, generator=generator).double()
    k = torch.randn(num_rows, num_keys, d, generator=generator).double()
    stats["sem escala"].append(softmax_statistics(q, k, 1.0, g))
    stats["com escala"].append(softmax_statistics(q, k, 1 / math.sqrt(d), g))


def print_table(title, columns, labels, digits):
    """Uma linha a cada duas dimensões: as colunas escolhidas de stats, sem escala | com escala."""
    width = 9 * len(columns) - 1
    print(f"{title}\n{'':>5} | {'sem escala':^{width}} | {'com escala 1/√d':^{width}}")
    print(f"{'d':>5} | " + " | ".join([" ".join(f"{label:>8}" for label in labels)] * 2))
    for i in range(0, len(dims), 2):
        cells = [" ".join(f"{d2l.number(stats[name][i][c], f'.{digits}f'):>8}" for c in columns) for name in stats]
        print(f"{dims[i]:>5} | " + " | ".join(cells))


print_table("Os pesos", [0, 1], ["α máx", "entropia"], 3)
print()
print_table("Os gradientes (norma por linha)", [2, 3, 4], ["em s", "em q", "med. q"], 4)
print()
for name, rows in stats.items():
    at_q = rows[-1][5].sort(descending=True).values  # d = 1024, maior gradiente primeiro
    print(f"{name}, d = 1024: {(at_q < 0.01).double().mean():.0%} das linhas recebem um gradiente em q abaixo de 0,01; "
          f"os 10% das linhas com os maiores gradientes concentram {at_q[:num_rows // 10].sum() / at_q.sum():.0%} do total")

# %%
fig, axes = d2l.plt.subplots(2, 2, figsize=(8, 5), sharex=True)
for name, style in (("sem escala", "o-"), ("com escala", "s-")):
    label = name if name == "sem escala" else "com escala 1/√d"
    columns = list(zip(*stats[name]))  # α máx, entropia, gradiente em s, em q, mediana em q
    for ax, column in zip(axes.flat, columns[:4]):
        line, = ax.semilogx(dims, column, style, label=label)
    axes[1, 1].semilogx(dims, columns[4], "--", color=line.get_color(), label=f"{label}, mediana")
titles = ["peso máximo médio", "entropia média das linhas", "gradiente nas pontuações s (norma média)",
          "gradiente na consulta q (norma média; tracejado: mediana)"]
for ax, title in zip(axes.flat, titles):
    ax.set_title(title, fontsize=10)
for ax in axes[1]:
    ax.set_xlabel("dimensão d")
axes[0, 1].axhline(math.log(num_keys), color="k", linestyle=":", label="uniforme (log 10)")
axes[0, 1].legend(fontsize=8)
axes[1, 1].legend(fontsize=8)
fig.tight_layout()
d2l.plt.show()

# %% [markdown] en="ae597068a818"
# Sem escala, as linhas ficam quase one-hot à medida que $d$ cresce: em
# $d = 1024$, o maior peso é 0,963 em média, e a entropia, 0,086. O softmax
# satura. Agora os gradientes, na ordem em que os medimos:
#
# * **Nas pontuações**, a explicação dos livros-texto se confirma. O gradiente
#   encolhe, de 0,31 em $d = 1$ para 0,04 em $d = 1024$: um softmax saturado
#   mal reage a uma pequena mudança nas suas pontuações.
# * **Na consulta**, a média não encolhe. Ela cresce no começo, de 0,22 em
#   $d = 1$ para 1,20 em $d = 64$, e depois quase se estabiliza: 1,27 em
#   $d = 256$ e 1,36 em $d = 1024$. (O gráfico mostra quedas no meio do
#   caminho: a média de números tão desiguais, sobre 300 linhas, é ela mesma
#   ruidosa.) Dois efeitos se encontram na passagem de $s$ para $q$. Cada
#   unidade de pontuação devolve menos: a partir de $d = 64$, o gradiente nas
#   pontuações cai mais ou menos pela metade cada vez que $d$ quadruplica,
#   como $1/\sqrt{d}$. Mas mover $q$ muda cada pontuação $q^\top k$ em
#   proporção ao comprimento da chave, cerca de $\sqrt{d}$, que dobra cada vez
#   que $d$ quadruplica. Os dois efeitos praticamente se cancelam.
# * **A linha mediana** mostra o que a média esconde. Em $d = 1024$, ela
#   recebe 0,0000. As duas últimas linhas impressas dizem quão desigual é a
#   distribuição: 69% das linhas recebem menos de 0,01, e os 10% das linhas
#   com os maiores gradientes concentram 90% do total, e não 10%. A maioria
#   das consultas quase não devolve gradiente aos pesos que as produzem, e
#   umas poucas devolvem muito.
#
# Com a escala $1/\sqrt{d}$, todas as curvas ficam planas a partir de $d = 4$
# (em $d = 1$ a escala é 1, então as duas execuções são iguais): as linhas
# continuam tão espalhadas em $d = 1024$ quanto em $d = 4$, e o gradiente em
# $q$ tem mais ou menos a mesma média e a mesma mediana em todo $d$ (médias de
# 0,30 a 0,33 e medianas de 0,26 a 0,31). Ele continua espalhado pelas
# linhas: em $d = 1024$, nenhuma linha recebe menos de 0,01, e os 10% das
# linhas com os maiores gradientes concentram 19% do total.
#
# **Como isso se encaixa na explicação dos livros-texto.** A explicação diz:
# sem a escala, o softmax satura e os seus gradientes desaparecem. A primeira
# metade é o que medimos. A segunda metade vale nas pontuações. Mas os pesos
# que aprendem ficam atrás da consulta, e ali o gradiente médio não
# desaparece: ele se concentra nas poucas linhas cujas duas maiores
# pontuações por acaso estão próximas (a nota "Para ir mais fundo", acima,
# explica por quê). Assim, nesta medição, a escala não salva uma média que
# estaria sumindo. Ela mantém o gradiente espalhado por todas as consultas,
# com um tamanho que não muda com $d$, de modo que toda consulta, e não apenas
# algumas, passa um gradiente de volta aos pesos que a produzem.
#
# ## Autoatenção causal em duas frases
#
# Na **autoatenção**, consultas, chaves e valores vêm todos da mesma
# sequência $X$ (uma linha por token), por meio de três projeções, matrizes
# que levam as características de cada token a uma consulta, uma chave e um
# valor: $Q = X W_q^\top$, $K = X W_k^\top$, $V = X W_v^\top$. Um modelo de
# linguagem que lê da esquerda para a direita (um que prevê cada próximo
# token a partir dos tokens anteriores) não pode deixar um token olhar para
# os tokens que vêm depois dele: ele precisa da máscara causal do capítulo 02
# ([Softmax mascarado](02_masked_softmax.ipynb)), na qual a consulta $i$ vê as
# chaves $0, \dots, i$, dada pelos comprimentos válidos $1, 2, \dots, n$ de
# `d2l.causal_valid_lens`.
#
# Tome as frases "Ela comeu uma manga." e "A camisa tem manga.": o mesmo
# token, *manga*, é uma fruta em uma e a parte da camisa que cobre o braço na
# outra. A sua incorporação, o vetor de números que representa o token, é a
# mesma nas duas; só o contexto consegue distinguir os dois sentidos.
#
# Para manter todos os números legíveis, damos a cada palavra uma
# incorporação de 6 características feita à mão, em vez de uma aprendida
# (características: comida, roupa, número, verbo, palavra funcional, fim de
# frase), e escolhemos as projeções também à mão: $W_q = W_k = 2I$ (um
# produto escalar de características, mais acentuado) e $W_v = I$ (cada token
# passa adiante as suas próprias características). Um modelo treinado aprende
# tudo isso.

# %%
features = ["comida", "roupa", "número", "verbo", "função", "fim"]
embedding = {  # uma linha por palavra, uma coluna por característica
    "ela": [0, 0, 0, 0, 1, 0], "comeu": [1, 0, 0, 1, 0, 0], "uma": [0, 0, 1, 0, 0, 0],
    "manga": [1, 1, 0, 0, 0, 0], ".": [0, 0, 0, 0, 0, 1], "a": [0, 0, 0, 0, 1, 0],
    "camisa": [0, 1, 0, 0, 0, 0], "tem": [0, 0, 0, 1, 0, 0],
}
sentences = [["ela", "comeu", "uma", "manga", "."], ["a", "camisa", "tem", "manga", "."]]
X = torch.tensor([[embedding[word] for word in sentence] for sentence in sentences],
                 dtype=torch.float32).to(device)  # (lote=2, tokens=5, características=6)
W_q = W_k = 2 * torch.eye(6, device=device)
W_v = torch.eye(6, device=device)

queries, keys, values = X @ W_q.T, X @ W_k.T, X @ W_v.T  # cada um (2, 5, 6)
causal_lens = d2l.causal_valid_lens(batch_size=2, num_queries=5, device=device)
print("comprimentos válidos causais:", causal_lens.cpu().tolist())

self_attention = d2l.DotProductAttention(dropout=0.0)
contextual = self_attention(queries, keys, values, causal_lens)  # (2, 5, 6)
self_attention_weights = self_attention.attention_weights  # (2, 5, 5)

# %% [markdown] en="95da88478f55"
# Com esses comprimentos, `DotProductAttention` dá o mesmo resultado que a
# SDPA do PyTorch com `is_causal=True`:

# %%
torch.testing.assert_close(contextual, F.scaled_dot_product_attention(queries, keys, values, is_causal=True))
print("DotProductAttention com causal_valid_lens == SDPA(is_causal=True)")

# %% [markdown] en="95923110c157"
# As linhas são consultas e as colunas são chaves, rotuladas pelos seus
# tokens; os dois mapas de calor usam a mesma escala de cores, de 0 a 1.

# %%
for sentence, sentence_weights in zip(sentences, self_attention_weights):
    fig = d2l.show_heatmaps(sentence_weights, xlabel="Chaves", ylabel="Consultas", figsize=(3.2, 2.8),
                            vmin=0, vmax=1)
    ax = fig.axes[0]
    ax.set_xticks(range(5), sentence, rotation=45)
    ax.set_yticks(range(5), sentence)
    ax.set_title(" ".join(sentence))
d2l.plt.show()

# %% [markdown] en="640f05349fca"
# O triângulo superior está vazio: nenhum token vê o futuro. A linha de
# *manga* é impressa abaixo, nas duas frases. A maior parte do seu peso, 0,79,
# fica na própria *manga*, que compartilha duas características consigo mesma
# e no máximo uma com qualquer outro token. O resto vai principalmente para o
# único token anterior que compartilha uma característica com ela: 0,15 para
# *comeu* (comida) na primeira frase, 0,15 para *camisa* (roupa) na segunda.
# Essa parcela basta para fazer o mesmo vetor de entrada sair da camada como
# dois vetores diferentes, as saídas impressas abaixo dos pesos:

# %%
minute = 3  # posição de "manga" nas duas frases
torch.testing.assert_close(X[0, minute], X[1, minute])  # entrada idêntica
print("pesos da consulta 'manga' sobre as chaves:")
for sentence, row in zip(sentences, self_attention_weights[:, minute]):
    print("  " + "  ".join(f"{word} {d2l.number(weight, '.2f')}" for word, weight in zip(sentence, d2l.numpy(row))))
print("\nsaída de 'manga':")
print(f"{'':>22}" + "".join(f"{name:>9}" for name in features))
for sentence, row in zip(sentences, contextual[:, minute]):
    print(f"{' '.join(sentence[:minute + 1]):>22}" + "".join(f"{d2l.number(value, '.2f'):>9}" for value in d2l.numpy(row)))

# %% [markdown] en="897bf7493d27"
# Depois de "ela comeu uma", *manga* carrega mais *comida* do que *roupa*
# (0,94 contra 0,79); depois de "a camisa tem", a balança se inverte. É essa a
# ideia da autoatenção: a saída de um token é uma mistura dos tokens que ele
# consegue ver, então a sua representação depende do seu contexto.
#
# ## Pesos com e sem escala, como mapa de calor
#
# De volta aos vetores aleatórios: 6 consultas e 8 chaves de dimensão 64,
# ponderadas com e sem a escala $1/\sqrt{d}$, em uma mesma escala de cores. A
# entropia de cada linha é impressa abaixo da figura (log 8 ≈ 2,08 seria a
# distribuição uniforme).

# %%
q64 = torch.randn(1, 6, 64, generator=generator).to(device)
k64 = torch.randn(1, 8, 64, generator=generator).to(device)
unscaled_weights = torch.softmax(torch.bmm(q64, k64.transpose(1, 2)), dim=-1)  # (1, 6, 8)
scaled_weights = torch.softmax(torch.bmm(q64, k64.transpose(1, 2)) / math.sqrt(64), dim=-1)  # (1, 6, 8)
panels = torch.cat([unscaled_weights, scaled_weights]).cpu()  # (2, 6, 8)

fig = d2l.show_heatmaps(panels, xlabel="Chaves", ylabel="Consultas",
                        titles=["qᵀk sem escala", "qᵀk / √64 com escala"], figsize=(6, 2.6))
d2l.plt.show()
for title, panel in zip(["Pesos sem escala", "Pesos com escala"], panels):
    print(title, "— entropia de cada linha:", d2l.number(torch.special.entr(panel.double()).sum(dim=-1).numpy().round(2)))

# %% [markdown] en="9e6a534ce243"
# ## Explore
#
# O explorador desenha os pesos de consultas e chaves aleatórias junto com a
# entropia de cada linha. Os seus controles: a dimensão $d$, a escala
# $1/\sqrt{d}$ ligada ou desligada, uma temperatura $T$ que divide todas as
# pontuações ($\operatorname{softmax}(s / T)$), um comprimento válido e o
# mascaramento causal.
#
# * Desligue a escala e arraste $d$ para cima: veja as linhas ficarem one-hot
#   e as entropias caírem em direção a 0. Ligue-a de novo: as células ainda
#   mudam com $d$ (cada $d$ usa mais coordenadas dos vetores), mas as linhas
#   ficam mais ou menos igualmente concentradas em todo $d$, e as entropias
#   param de cair.
# * A temperatura faz o que $d$ fazia: $T < 1$ concentra os pesos, $T > 1$
#   os achata. Desligue a escala e escolha um $d$: qual $T$ desfaz ali a falta
#   da escala? O controle deslizante vai até 31,6, acima de
#   $\sqrt{512} \approx 22{,}6$, então há um $T$ assim em todo $d$.
# * Encurte o comprimento válido: as colunas mascaradas recebem peso 0 (o
#   explorador as hachura em cinza), e a entropia de nenhuma linha pode passar
#   do log do número de chaves às quais ela pode prestar atenção, a marca
#   tracejada na sua barra.
# * Ligue o mascaramento causal: o triângulo superior fica hachurado. A
#   primeira consulta só pode prestar atenção à chave 0, então a sua linha é
#   one-hot. (Aqui, consultas e chaves são vetores aleatórios diferentes,
#   então a chave 0 não é "a própria consulta".) Com um comprimento válido de
#   0, nenhuma consulta fica com chave alguma, e todas as linhas são só zeros.

# %%
from d2lmini.widgets import explore_dot_product

explorer = explore_dot_product()
explorer

# %% [markdown] en="bcbd3f1b68ce"
# <details>
# <summary>Respostas comentadas das coisas para experimentar (abra depois de experimentá-las)</summary>
#
# 1. Sem escala, a entropia média das linhas sobre as oito consultas é 1,50
#    em $d = 1$, 0,77 em $d = 16$, 0,21 em $d = 64$ e 0,08 em $d = 512$, onde
#    o maior peso de uma linha é, em média, 0,95 (a queda não é suave, já que
#    cada $d$ acrescenta novas coordenadas aleatórias). Com escala, ela fica
#    entre 1,50 (em $d = 1$) e 1,79 (em $d = 16$): dividir por $\sqrt{d}$
#    mantém a variância das pontuações perto de 1, então o softmax vê a mesma
#    dispersão de pontuações.
# 2. $T = \sqrt{d}$, exatamente: com a escala desligada, $s / T = s / \sqrt{d}$
#    é a pontuação com escala. O controle deslizante anda em passos de
#    $10^{0{,}05}$, então escolha o valor mais próximo, 3,98 para $d = 16$ ou
#    22,4 para $d = 512$; os pesos então diferem dos pesos com escala em
#    $T = 1$ por no máximo 0,0015 e 0,006.
# 3. Com um comprimento válido de 3, as oito entropias ficam entre 0,83 e
#    1,08, todas abaixo de $\ln 3 \approx 1{,}10$, a marca tracejada: nenhuma
#    distribuição sobre três chaves é mais espalhada que a uniforme. Com o
#    comprimento completo, o limite é $\ln 8 \approx 2{,}08$.
# 4. A linha da consulta 0 é 1, 0, …, 0, e a sua entropia é 0; a consulta $i$
#    pode prestar atenção a $i + 1$ chaves, e as entropias em geral crescem
#    de uma linha para a seguinte (0,45 para a consulta 1, 1,89 para a
#    consulta 7). Com um comprimento válido de 0, todas as linhas, e não só a
#    primeira, são só zeros: o comprimento válido mascara todas as chaves para
#    todas as consultas. Com mascaramento causal e um comprimento válido de 3,
#    as linhas 2 a 7 veem as mesmas três chaves, de 0 a 2, já que uma chave
#    precisa passar pelas duas máscaras.
#
# </details>

# %% [markdown] en="ed79d944a004"
# ## Resumo
#
# * A atenção de produto escalar escalonado é $\operatorname{softmax}(QK^\top/\sqrt{d})V$:
#   dois produtos de matrizes em lote e um softmax mascarado, sem parâmetros.
# * `d2l.DotProductAttention` é igual a `F.scaled_dot_product_attention` com
#   uma máscara booleana construída a partir dos comprimentos válidos (e
#   `is_causal=True` para os comprimentos causais); o seu dropout só atua no
#   modo de treinamento.
# * Para coordenadas de variância unitária, $\operatorname{Var}(q^\top k) = d$:
#   medimos perto de 1.000 em $d = 1024$ sem escala, e perto de 1 com escala.
# * Sem a escala, o softmax satura à medida que $d$ cresce (peso máximo → 1,
#   entropia → 0). O gradiente nas pontuações encolhe; o gradiente na consulta
#   não encolhe em média, já que as pontuações também crescem, mas ele se
#   concentra em poucas linhas, enquanto a maioria das linhas recebe quase
#   nada. Com a escala, ele continua espalhado por todas as linhas, com mais
#   ou menos a mesma média e a mesma mediana a partir de $d = 4$.
# * A autoatenção faz a saída de um token depender do seu contexto: *manga*
#   sai diferente depois de "ela comeu uma" e de "a camisa tem". A máscara
#   causal apenas limita esse contexto ao próprio token e aos que vêm antes
#   dele.

# %% [markdown] en="1fca5377c443"
# ## Por quê? Uma pergunta de verificação
#
# **Por que as pontuações são divididas por √d, e não por d?**

# %%
from d2lmini.exercises import questions

questions.ask("04")


# %% [markdown] en="2294243a4dc6"
# ## Exercícios

# %% [markdown] en="73c54ba95040"
# ### Exercício 4.1 · Uma soma é uma boa pontuação? (★)
#
# Alguém propõe a pontuação $a(q, k) = \sum_i (q_i + k_i)$: somar os dois
# vetores e depois somar as coordenadas. Escreva `sum_scores(queries, keys)`
# para um lote, que recebe (B, n_q, d) e (B, n_k, d) e devolve (B, n_q, n_k).
# A verificação então examina os pesos que ela produz. Antes de executá-la,
# preveja: quanto os pesos de duas consultas diferentes podem diferir?

# %% tags=["exercise"]
def sum_scores(queries, keys):
    """Σᵢ (qᵢ + kᵢ) para cada par (consulta, chave), formato (B, n_q, n_k)."""
    ### BEGIN SOLUTION
    return queries.sum(dim=-1).unsqueeze(2) + keys.sum(dim=-1).unsqueeze(1)  # (B, n_q, 1) + (B, 1, n_k)
    ### END SOLUTION


# %% tags=["check"]
ch04.check_sum_scores(sum_scores)

# %% [markdown] en="a341be7d3f71"
# ### Exercício 4.2 · O custo da atenção à medida que a sequência cresce (★)
#
# Para um exemplo com $n_q$ consultas, $n_k$ chaves, e consultas, chaves e
# valores todos de tamanho $d$, escreva `attention_cost(num_queries, num_keys,
# d, bytes_per_element=4)`, que devolve um par `(multiply_adds, weight_bytes)`:
# o número de multiplicações-somas dos dois produtos de matrizes $QK^\top$ e
# $\alpha V$ (ignore o softmax) e o número de bytes da matriz de pesos
# $\alpha$. A verificação compara os seus bytes com uma chamada real de
# `DotProductAttention` e depois diz quanto custa dobrar a sequência.

# %% tags=["exercise"]
def attention_cost(num_queries, num_keys, d, bytes_per_element=4):
    """(multiplicações-somas de QKᵀ e αV, bytes da matriz de pesos α)."""
    ### BEGIN SOLUTION
    multiply_adds = num_queries * num_keys * d + num_queries * num_keys * d  # QKᵀ, depois αV
    weight_bytes = num_queries * num_keys * bytes_per_element
    return multiply_adds, weight_bytes
    ### END SOLUTION


# %% tags=["check"]
ch04.check_attention_cost(attention_cost)

# %% [markdown] en="b28b95212a86"
# ### Exercício 4.3 · O kernel gaussiano como atenção de produto escalar (★★)
#
# O capítulo 01 terminou expandindo a pontuação do kernel gaussiano
# ([Pooling de atenção](01_attention_pooling.ipynb), "Uma ponte para a atenção
# de produto escalar"): com largura $\sigma = 1$, os seus pesos são
# $\operatorname{softmax}(q^\top k - \tfrac12\|k\|^2)$, um produto escalar mais
# um viés por chave. Então a atenção com kernel gaussiano é quase uma atenção
# de produto escalar. Mostre que ela é exatamente uma atenção de produto
# escalar, sobre vetores com uma coordenada a mais.
#
# Escreva `distance_as_dot_product(queries, keys)`, que acrescenta uma
# coordenada a cada consulta e uma a cada chave, (B, n_q, d) → (B, n_q, d + 1)
# e (B, n_k, d) → (B, n_k, d + 1). Escolha essas coordenadas de modo que o
# softmax dos produtos escalares simples dos vetores mais longos dê os pesos
# do kernel gaussiano; a escolha mais simples faz cada produto escalar ser
# exatamente $q^\top k - \tfrac12\|k\|^2$. Devolva o par
# `(longer_queries, longer_keys)`. A verificação os multiplica com `torch.bmm`
# e compara o softmax dos resultados com os pesos do kernel gaussiano.
# Produtos escalares que diferem de $q^\top k - \tfrac12\|k\|^2$ por um número
# que é o mesmo para todas as chaves de uma consulta dão o mesmo softmax (o
# Exercício 4.1 já esbarrou nisso): eles também passam, e a mensagem da
# verificação avisa.

# %% tags=["exercise"]
def distance_as_dot_product(queries, keys):
    """Consultas e chaves com uma coordenada a mais, cujos produtos escalares são qᵀk - ½‖k‖²."""
    ### BEGIN SOLUTION
    ones = torch.ones_like(queries[..., :1])  # (B, n_q, 1): a mesma coordenada extra para toda consulta
    minus_half_norms = -0.5 * (keys ** 2).sum(dim=-1, keepdim=True)  # (B, n_k, 1): uma por chave
    return torch.cat([queries, ones], dim=-1), torch.cat([keys, minus_half_norms], dim=-1)
    ### END SOLUTION


# %% tags=["check"]
ch04.check_distance_scores(distance_as_dot_product)

# %% [markdown] en="3af4dcacc5b3"
# ### Exercício 4.4 · Encontre o bug nos pesos causais (★★)
#
# Um colega escreveu a função abaixo para os pesos da autoatenção causal: a
# consulta i deve prestar atenção apenas às chaves 0 a i. Ela roda, a saída
# tem o formato certo e zeros nos lugares certos, e mesmo assim ela tem um
# bug. Execute-a, leia a saída linha por linha e então encontre o bug.

# %%
def causal_weights_with_a_bug(queries, keys):
    """Pesos de atenção causal, (B, n, n): a consulta i presta atenção às chaves 0..i."""
    n, d = queries.shape[1], queries.shape[2]
    scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # (B, n, n)
    weights = torch.softmax(scores, dim=-1)
    future = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)  # True acima da diagonal
    return weights.masked_fill(future, 0.0)


torch.manual_seed(45)
random_tokens = torch.randn(1, 4, 8)
buggy = causal_weights_with_a_bug(random_tokens, random_tokens)
print(buggy[0].round(decimals=2))

# %% [markdown] en="4369c793d781"
# Escreva `causal_weights(queries, keys)`, a mesma função com o bug
# corrigido: mude o mínimo que puder. A verificação também avisa quando a sua
# correção é uma das erradas mais comuns.

# %% tags=["exercise"]
def causal_weights(queries, keys):
    """Pesos de atenção causal, (B, n, n): a consulta i presta atenção às chaves 0..i."""
    ### BEGIN SOLUTION
    n, d = queries.shape[1], queries.shape[2]
    scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # (B, n, n)
    future = torch.triu(torch.ones(n, n, dtype=torch.bool, device=scores.device), diagonal=1)
    return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    ### END SOLUTION


# %% tags=["check"]
ch04.check_fixed_causal_weights(causal_weights)

# %% [markdown] en="006022e877d6"
# ### Exercício 4.5 · Uma máscara causal com prefixo (★★)
#
# O capítulo 02 construiu a máscara causal como o triângulo inferior de
# `torch.tril`. Alguns modelos vão um passo além. Eles leem um prompt, uma
# pergunta, por exemplo, por inteiro, e depois escrevem a resposta um token
# de cada vez. Os primeiros $p$ tokens do prompt, o **prefixo**, são dados
# todos de uma vez, então cada um deles pode prestar atenção a todos os $p$,
# nas duas direções. Todo token depois do prefixo continua causal. Assim, a
# consulta $i$ pode prestar atenção às chaves $0, \dots, \max(i, p - 1)$. Com
# $p = 1$, essa é a máscara causal comum. (Um modelo assim é chamado de
# *modelo de linguagem com prefixo*.)
#
# Escreva `causal_attention(queries, keys, values, prefix=1)` para
# autoatenção com tantas consultas quanto chaves: pontuações de produto
# escalar escalonado, uma máscara booleana que parte de `torch.tril` e libera
# as chaves que acabamos de descrever, usada como na sua correção do
# Exercício 4.4, e então o produto com os valores. Devolva a saída,
# (B, n, d_v). A verificação primeiro a chama sem prefixo e a compara com
# `DotProductAttention` e `d2l.causal_valid_lens`; depois, a chama com
# `prefix=3`. Antes de rodar a verificação, preveja: quais comprimentos
# válidos dariam os mesmos pesos que um prefixo de 3 sobre 5 tokens?

# %% tags=["exercise"]
def causal_attention(queries, keys, values, prefix=1):
    """Atenção de produto escalar escalonado em que a consulta i vê as chaves 0..max(i, prefix - 1)."""
    ### BEGIN SOLUTION
    n, d = queries.shape[1], queries.shape[2]
    scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # (B, n, n)
    allowed = torch.tril(torch.ones(n, n, dtype=torch.bool, device=scores.device))  # (n, n): o triângulo causal
    allowed[:, :prefix] = True  # toda consulta também vê o prefixo inteiro
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return torch.bmm(weights, values)
    ### END SOLUTION


# %% tags=["check"]
ch04.check_causal_attention(causal_attention)

# %% [markdown] en="c80968c61ef5"
# ## Leituras adicionais
#
# * A. Vaswani et al. (2017), "Attention Is All You Need", seção 3.2.1: a
#   atenção de produto escalar escalonado e o argumento da variância para
#   $1/\sqrt d$, em um parágrafo e uma nota de rodapé. A razão que o artigo dá
#   para a escala, como suspeita e não como medição, são os gradientes
#   pequenos do softmax: o gradiente nas pontuações, nos termos deste
#   capítulo.
# * M.-T. Luong, H. Pham e C. D. Manning (2015), "Effective Approaches to
#   Attention-based Neural Machine Translation": a pontuação de produto
#   escalar sem escala, dois anos antes.
# * O livro d2l, seção "Attention Scoring Functions" ("Funções de Pontuação de
#   Atenção", na edição em português).
