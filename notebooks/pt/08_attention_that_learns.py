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

# %% [markdown] en="c7207dba1a88"
# # 08 · Atenção que aprende
#
# Tirando a largura de kernel que o capítulo 01 ajusta, todos os mapas de
# calor até aqui vieram de pesos escolhidos por nós: projeções aleatórias,
# incorporações feitas à mão. Este notebook responde a uma pergunta que os
# estudantes costumam fazer: *como um modelo aprende para onde olhar?* Damos a
# um codificador–decodificador minúsculo uma tarefa cuja resposta correta para
# "para onde o passo de saída $t$ deve olhar?" é conhecida de antemão,
# treinamos o modelo por alguns segundos em uma única thread de CPU e vemos
# sua atenção cruzada passar de ruído a essa resposta.
#
# **Neste notebook você vai**
# 1. gerar em código duas tarefas de tradução de brinquedo, inversão e
#    ordenação, e desenhar o alinhamento que um modelo perfeito usaria;
# 2. ver a atenção cruzada ao lado da autoatenção em um diagrama com
#    legendas, conhecer em palavras simples as poucas peças padrão de um
#    modelo treinável e então montar o codificador–decodificador em torno da
#    atenção do `d2lmini`, verificando-o com
#    `d2lmini.seq2seq.AttentionSeq2Seq`;
# 3. treiná-lo com uma visualização ao vivo (barra de progresso, curva de
#    perda, mapa de calor) e pôr lado a lado instantâneos da sua atenção para
#    ver o momento em que acontece o "estalo";
# 4. medir quatro experimentos: sem codificação posicional, pontuações aditivas
#    contra pontuações de produto escalar, sequências mais longas que as do
#    treinamento, e um mapa de calor que não conta a história toda;
# 5. retreiná-lo você mesmo com outras configurações e interromper uma
#    execução no meio.

# %% [markdown] en="4e443eb37430"
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/pt/08_attention_that_learns.ipynb) abre a edição do aluno deste capítulo no Colab. Execute primeiro a célula de configuração recolhida logo abaixo: no Colab, ela instala o `d2lmini`, o pacote auxiliar desta coleção, e não mexe nos pacotes do próprio ambiente de execução; em um hub de curso, ela aponta qualquer arquivo seu que uma atualização tenha guardado com outro nome. Em qualquer outro lugar, ela não faz nada.

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
from IPython.display import display
from torch import nn

import d2lmini as d2l
from d2lmini import seq2seq
from d2lmini.exercises import ch08
from d2lmini.widgets import TrainingView, explore_alignment

torch.set_num_threads(1)  # os tensores são minúsculos: uma thread é o mais rápido, e repete suas somas sempre na mesma ordem
torch.manual_seed(0)
device = d2l.try_gpu()

# %% [markdown] en="2b7478c8488b"
# ## Duas tarefas com alinhamento conhecido
#
# Uma origem é uma linha de 4 a 8 dígitos; as linhas mais curtas recebem
# preenchimento até 8 com o token `PAD` (10), e `valid_lens` diz quantos
# dígitos cada linha contém. Cada passo de saída copia uma posição da origem:
#
# * **inversão**: o passo de saída $t$ copia a posição de origem $n - 1 - t$.
#   O alinhamento é a antidiagonal do bloco $n \times n$, a mesma para toda
#   entrada de um dado comprimento;
# * **ordenação** (dígitos distintos): o passo de saída $t$ copia a posição
#   do $t$-ésimo menor dígito, uma permutação que muda com o conteúdo.
#
# As duas são "ordenar as posições por uma chave de ordenação": a inversão as
# ordena pela posição, em ordem decrescente; a ordenação, pelo dígito que elas
# contêm. `seq2seq.make_batch` sorteia exemplos de qualquer uma das duas, a
# partir de um gerador com semente.

# %%
generator = torch.Generator().manual_seed(0)
reverse_demo = seq2seq.make_batch("reverse", 3, generator=generator)
sort_demo = seq2seq.make_batch("sort", 3, generator=generator)
for name, batch in [("inversão", reverse_demo), ("ordenação", sort_demo)]:
    for source, target in zip(batch.source, batch.target):
        print(f"{name:>9}: {seq2seq.as_text(source):<15} -> {seq2seq.as_text(target)}")
print("origem do terceiro exemplo, preenchida:", reverse_demo.source[2].tolist())
print("valid_lens do lote de inversão:         ", reverse_demo.valid_lens.tolist())

# %% [markdown] en="6c58322e8bf4"
# `batch.alignment` é a matriz (passo de saída, posição de origem) que uma
# atenção perfeita desenharia: 1 onde um passo copia aquela posição. As linhas
# são os passos de saída (as consultas), as colunas, as posições de origem (as
# chaves); cada círculo marca uma posição correta, e é com elas que a atenção
# do modelo será comparada.

# %%
demo = seq2seq.Batch.cat([reverse_demo[:2], sort_demo[:2]])
seq2seq.show_attention(demo.alignment, demo, titles=["inversão", "inversão", "ordenação", "ordenação"])
d2l.plt.show()

# %% [markdown] en="32b53f0226e2"
# Os dois painéis de inversão são antidiagonais; os painéis de ordenação são
# permutações que nenhuma regra sobre posições consegue prever sem ler os
# dígitos.
#
# ## Atenção cruzada versus autoatenção
#
# Os capítulos 04, 05 e 07 usaram **autoatenção**: as consultas, as chaves e
# os valores vinham todos de uma única sequência. Um modelo de tradução tem
# duas sequências: a origem, lida pelo **codificador**, e a saída, produzida
# um passo de cada vez pelo **decodificador**. Na **atenção cruzada**, as
# consultas vêm do decodificador (o que estou prestes a escrever?), e as
# chaves e os valores vêm das saídas do codificador (o que a origem diz, e
# onde?). Cada passo do decodificador recebe uma linha de pesos sobre as
# posições de origem: o alinhamento que queremos ver. É a imagem
# de Bahdanau et al. (2014), em que o estado de um decodificador recorrente é
# a consulta; aqui o decodificador é ainda mais simples, como mostra "O
# modelo, montado a partir de suas peças".

# %%
def draw_attention_kinds():
    """Autoatenção (uma sequência) ao lado da atenção cruzada (consultas vindas de outra): um diagrama com legendas."""
    fig, axes = d2l.plt.subplots(1, 2, figsize=(9.5, 3.4))
    source, decoder, query = ["3", "1", "4", "1", "5"], ["BOS", "5", "1", "4", "1"], 2
    panels = [  # título, linha de cima, seu rótulo, rótulo de baixo, os pesos de uma consulta
        ("Autoatenção (o codificador)", source, "tokens de origem → consultas Q",
         "os mesmos tokens → chaves K e valores V", [0.1, 0.15, 0.45, 0.15, 0.15]),
        ("Atenção cruzada (o decodificador)", decoder, "estados do decodificador (última saída) → consultas Q",
         "saídas do codificador → chaves K e valores V", [0.02, 0.03, 0.9, 0.03, 0.02])]
    for ax, (title, top, top_label, bottom_label, weights) in zip(axes, panels):
        for row, tokens, colour in [(1.0, top, "#cfe2ff"), (0.0, source, "#ffe0cc")]:
            for i, token in enumerate(tokens):
                asking = row == 1.0 and i == query
                ax.add_patch(d2l.plt.Rectangle((i - 0.3, row - 0.12), 0.6, 0.24, facecolor=colour,
                                               edgecolor="#1f6feb" if asking else "#555555",
                                               linewidth=2.5 if asking else 1))
                ax.text(i, row, token, ha="center", va="center", fontsize=11)
        for j, weight in enumerate(weights):
            ax.annotate("", xy=(j, 0.13), xytext=(query, 0.87),
                        arrowprops={"arrowstyle": "-|>", "color": "#cf222e", "lw": 0.5 + 6 * weight,
                                    "alpha": 0.3 + 0.7 * weight, "shrinkA": 0, "shrinkB": 0})
            x, y = j + 0.3 * (query - j), 0.13 + 0.3 * 0.74  # a 30% do caminho, subindo pela seta
            ax.text(x, y, f"{d2l.number(weight, '.2f')}", fontsize=8, color="#cf222e", ha="center", va="center",
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})
        ax.text(-0.45, 1.22, top_label, fontsize=10, color="#1f4e99")
        ax.text(-0.45, -0.3, bottom_label, fontsize=10, color="#9a4a12")
        ax.text(4.45, 0.55, "pesos α:\na linha de\numa consulta,\nsoma 1", fontsize=9, color="#cf222e")
        ax.set(xlim=(-0.5, 5.6), ylim=(-0.42, 1.35))
        ax.set_title(title, fontsize=12)
        ax.axis("off")
    fig.tight_layout()
    return fig


draw_attention_kinds()
d2l.plt.show()

# %% [markdown] en="73c2ac2af2a5"
# À esquerda, o token de origem destacado interroga todos os cinco tokens de
# origem, inclusive ele mesmo; os mesmos cinco tokens fornecem as consultas,
# as chaves e os valores. À direita, o passo 2 do decodificador, cuja entrada
# é o símbolo que ele escreveu por último (1), interroga as cinco saídas do
# codificador; se ele aprendeu a inverter, seu peso fica na posição de origem
# $n - 1 - 2 = 2$. (O passo 0 ainda não escreveu nada: sua entrada é um token
# próprio, `BOS`, de "begin", início.) O número de linhas (passos do
# decodificador) e o de colunas (posições de origem) não precisam coincidir,
# e o preenchimento a esconder é o **da origem**: uma posição de origem
# preenchida é uma chave que nenhuma consulta pode usar.
#
# ## Sete peças padrão, em palavras simples
#
# Um modelo que aprende precisa de algumas peças padrão que os capítulos
# anteriores não usaram. Aqui está cada uma em uma ou duas frases, e o que ela
# faz neste modelo. Você pode tratar todas como caixas-pretas: o capítulo
# nunca as abre, ele observa a atenção cruzada.
#
# * **Incorporação** (embedding): uma tabela de vetores aprendidos, uma linha
#   por símbolo; buscar um símbolo nela devolve o seu vetor. Aqui ela
#   transforma cada dígito, `PAD` e `BOS` em um vetor de $d_\text{model}$
#   números.
# * **Conexão residual**: a saída de um bloco é somada à sua entrada,
#   $X + \text{bloco}(X)$, de modo que o que entrou passa sem mudança e o
#   bloco só acrescenta uma correção. Aqui, em torno da autoatenção do
#   codificador e do seu bloco feed-forward.
# * **Normalização de camada** (LayerNorm): reescala o vetor de cada token
#   para média 0 e variância 1 e depois aplica uma escala e um deslocamento
#   aprendidos; ela mantém os números em uma faixa estável de bloco em bloco.
# * **Bloco feed-forward**: duas camadas lineares com uma ReLU, $\max(0, x)$,
#   entre elas, aplicadas a cada posição separadamente: depois que a atenção
#   misturou os tokens, ele transforma o vetor de cada token.
# * **Entropia cruzada**: a perda que o treinamento torna pequena. O modelo dá
#   uma pontuação a cada um dos 10 dígitos; um softmax transforma as
#   pontuações em probabilidades, e a perda é $-\log$ da probabilidade do
#   dígito correto, com a média tomada sobre os passos de saída reais: 0 para
#   uma resposta certa e segura.
# * **Teacher forcing** (forçamento pelo professor): no treinamento, a entrada
#   do decodificador no passo $t$ é o dígito anterior correto, e não o seu
#   próprio palpite, então todos os passos rodam de uma vez. Na hora do teste,
#   ele realimenta as próprias saídas, um passo de cada vez.
# * **Adam**: o otimizador, a regra que muda os pesos depois de cada lote: um
#   passo descendo o gradiente da perda, com tamanho adaptado a cada peso. A
#   *taxa de aprendizado* (0,003 aqui) dá a escala dos passos.
#
# ## O modelo, montado a partir de suas peças
#
# Com $d_\text{model}$ características por vetor (o `num_hiddens` do código, 32):
#
# * **incorporações mais posições**: cada dígito de origem e cada entrada do
#   decodificador vira um vetor aprendido de tamanho $d_\text{model}$, mais a
#   codificação posicional senoidal `d2l.PositionalEncoding` (capítulo 07),
#   para que o modelo consiga distinguir a posição 2 da posição 5;
# * **codificador**: um bloco de autoatenção sobre a origem
#   (`d2l.MultiHeadAttention` com uma cabeça, preenchimento mascarado por
#   `valid_lens`), depois um bloco feed-forward, cada um seguido de uma
#   conexão residual e de normalização de camada;
# * **decodificador**: no passo de saída $t$, seu estado é a incorporação da
#   saída anterior (o token `BOS`, número 11, no passo 0) mais a codificação
#   da posição $t$. A atenção cruzada toma as consultas $W_q\,\text{estado}$,
#   as chaves $W_k\,\text{saída do codificador}$ e, como valores, as próprias saídas
#   do codificador, com a máscara dada pelo `valid_lens` da origem; uma rede de
#   duas camadas lê o estado e o contexto e dá uma pontuação a cada um dos 10
#   dígitos.
#
# Um decodificador Transformer completo também prestaria atenção às suas
# próprias saídas anteriores (autoatenção causal); estas tarefas não precisam
# disso, e deixá-la de fora mantém curto um passo de treinamento: da ordem de
# dez milissegundos numa CPU, um pouco mais ou menos conforme a
# máquina (uma célula do Experimento 2 imprime quanto dura um passo na sua).
# Aqui está o modelo escrito por extenso, com
# `d2l.DotProductAttention` para a atenção cruzada:

# %%
class TinySeq2Seq(nn.Module):
    """Codificador (autoatenção) e decodificador (atenção cruzada) feitos com os módulos de atenção do d2lmini."""

    def __init__(self, num_hiddens=32, max_len=64):
        super().__init__()
        d = num_hiddens  # d_model
        self.source_embedding = nn.Embedding(seq2seq.VOCAB, d)
        self.target_embedding = nn.Embedding(seq2seq.VOCAB, d)
        self.positional = d2l.PositionalEncoding(d, 0.0, max_len)
        self.self_attention = d2l.MultiHeadAttention(d, 1, 0.0, query_size=d, key_size=d, value_size=d)
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))  # o bloco feed-forward
        self.W_q = nn.Linear(d, d, bias=False)
        self.W_k = nn.Linear(d, d, bias=False)
        self.cross_attention = d2l.DotProductAttention(0.0)
        self.output = nn.Sequential(nn.Linear(2 * d, d), nn.ReLU(), nn.Linear(d, seq2seq.SYMBOLS))

    def forward(self, source, decoder_inputs, valid_lens):
        # Codificador: consultas, chaves e valores, todos vindos da origem (autoatenção).
        X = self.positional(self.source_embedding(source))  # (B, S, d_model)
        X = self.norm1(X + self.self_attention(X, X, X, valid_lens))  # conexão residual, depois LayerNorm
        encoder_outputs = self.norm2(X + self.ffn(X))  # (B, S, d_model)
        # Decodificador: o símbolo de saída anterior, na sua posição.
        states = self.positional(self.target_embedding(decoder_inputs))  # (B, T, d_model)
        # Atenção cruzada: consultas do decodificador, chaves e valores do codificador.
        context = self.cross_attention(self.W_q(states), self.W_k(encoder_outputs), encoder_outputs,
                                       valid_lens)  # (B, T, d_model); pesos (B, T, S)
        return self.output(torch.cat([states, context], dim=-1))  # (B, T, 10): uma pontuação por dígito


# %% [markdown] en="9c21c14d65ec"
# Durante o treinamento, as entradas do decodificador são as saídas anteriores
# corretas, o alvo deslocado para a direita, atrás de `BOS` (teacher forcing),
# de modo que todos os passos rodam de uma vez. `seq2seq.AttentionSeq2Seq` é o
# mesmo modelo no pacote; com os pesos dele copiados para o nosso, os dois dão
# as mesmas pontuações e os mesmos pesos de atenção cruzada:

# %% en="ad9d087ceaf1"
# Dados em português: os milhares com ponto, como no texto (d2lmini.i18n.number)
from d2lmini.i18n import number

package_model = seq2seq.AttentionSeq2Seq(num_hiddens=32, attention="dot-product")
ours = TinySeq2Seq()
ours.load_state_dict(package_model.state_dict())

batch = reverse_demo
decoder_inputs = torch.cat([torch.full((len(batch), 1), seq2seq.BOS), batch.target[:, :-1]], dim=1)  # (B, T)
torch.testing.assert_close(ours(batch.source, decoder_inputs, batch.valid_lens),
                           package_model(batch.source, decoder_inputs, batch.valid_lens))
torch.testing.assert_close(ours.cross_attention.attention_weights, package_model.attention_weights)
print("TinySeq2Seq == seq2seq.AttentionSeq2Seq: pontuações e pesos da atenção cruzada")
print(f"{number(sum(p.numel() for p in ours.parameters()), ',')} parâmetros")
weights = package_model.attention_weights  # (B, T, S)
print("pesos da atenção cruzada:", tuple(weights.shape), "(exemplos, passos de saída, posições de origem)")
print(f"o exemplo 2 tem {batch.valid_lens[2].item()} dígitos; a primeira linha dos seus pesos, sem treino:",
      d2l.number(d2l.numpy(weights[2, 0]).round(2)))

# %% [markdown] en="8d759adbf861"
# A chave de preenchimento recebe peso exatamente 0: `valid_lens` chegou à
# atenção pela sua própria máscara, como no capítulo 02. Antes de qualquer
# treinamento, o peso se espalha por todas as chaves reais, de 0,08 a 0,25,
# em torno de $1/n$ (aqui $1/7 \approx 0{,}14$).
#
# ## Treinamento que você pode observar
#
# `TrainingView` treina um modelo novo na inversão: Adam, taxa de aprendizado
# 0,003, 128 sequências aleatórias por passo, a entropia cruzada do próximo
# dígito. A cada 20 passos, ele redesenha a perda, a acurácia em 500
# sequências reservadas (a fração decodificada inteiramente certa,
# realimentando as próprias saídas) e a atenção cruzada de um exemplo fixo de
# comprimento 8, com a posição correta de cada passo de saída circulada.
# Executar a célula abaixo treina por 400 passos, alguns segundos. (Os
# controles e o botão **Treinar** são para você, no fim do notebook.)
# *Reservadas* (em inglês, *held out*) quer dizer sorteadas por um gerador
# próprio, e não tiradas dos lotes de treinamento; há apenas 10.000 linhas de
# 4 dígitos, então 73 das 500 (67 delas de comprimento 4) também aparecem
# entre as 51.200 sequências de treinamento.

# %%
view = TrainingView("reverse", "dot-product", num_hiddens=32, lr=3e-3, num_steps=400, device=device)
display(view)
history = view.run()
model = view.model

# %% [markdown] en="fa2ad2414504"
# **Sobre os números do treinamento.** A execução acima, como toda execução
# deste notebook, tem semente fixa, então, em uma mesma máquina, o notebook
# imprime sempre os mesmos números. Em outra
# máquina, os números *do treinamento* (acurácias, massas, contagens de passos)
# saem diferentes: a CPU dela soma os números float32 em outra ordem, e o
# treinamento amplifica a diferença. Por isso o texto cita os números do
# treinamento como intervalos, e uma célula perto do fim ("Verificando as
# afirmações nesta máquina") verifica as principais afirmações sobre eles,
# por exemplo "a inversão chega a 95% em até 400 passos", nas execuções desta
# máquina. Os intervalos são o que cinco sementes e quatro configurações de
# ponto flutuante (quatro maneiras de arredondar essas somas, forçadas em uma
# máquina, um AMD EPYC) produziram (`benchmarks/chapter08_claims.py`); em uma
# segunda máquina, um Intel Xeon, a semente do próprio notebook ficou dentro
# de todos os intervalos que este texto cita, embora não dentro de todos os
# intervalos da tabela do próprio benchmark. Eles variam de máquina para
# máquina, então os seus podem cair fora de um intervalo; cada afirmação
# valeu em todas as execuções medidas, com folga. Os números que não envolvem
# treinamento (os dados, o modelo não treinado, o valor uniforme) são os
# mesmos em qualquer lugar.

# %% [markdown] en="d952bd359c33"
# **Para ir mais fundo (você pode pular esta parte).** Por que os números do
# treinamento mudam? Os pesos são sorteados por `torch.manual_seed`, os dados por um
# `torch.Generator` com semente, e uma única thread de CPU soma em uma ordem
# fixa, então uma mesma máquina se repete exatamente. Outra CPU (outro
# conjunto de instruções vetoriais), outra versão do PyTorch ou uma GPU soma
# os mesmos números float32 em outra ordem; os últimos bits das primeiras
# perdas diferem, e o treinamento amplifica essa diferença. Com a semente do
# notebook, nas duas máquinas e nas configurações medidas, a massa de
# alinhamento (o peso na posição certa da origem, definida abaixo da célula)
# depois de 400 passos fica entre 0,74 e 0,76, o passo que atinge 99% fica
# entre 260 e 320 (260 só na máquina Intel), e a acurácia no passo 400 fica
# entre 91% e 100%. A célula abaixo imprime os valores da sua máquina.

# %% tags=["nbval-ignore-output"]
accuracy, mass = history.evaluations[400]
test = history.test  # as 500 sequências reservadas
uniform = d2l.masked_softmax(torch.zeros(len(test), 8, 8), test.valid_lens)  # 1/n em cada chave real
chance = seq2seq.alignment_mass(uniform, test.alignment)
print(f"depois de 400 passos: acurácia no conjunto reservado {accuracy:.0%}")
print(f"atenção na posição correta: {d2l.number(mass, '.2f')} do peso (atenção uniforme: {d2l.number(chance, '.2f')})")
print(f"passos até atingir 95%: {history.steps_to(0.95)}, até atingir 99%: {history.steps_to(0.99)}")

# %% [markdown] en="5f9c0ca6fb7e"
# **A massa de alinhamento** é a medida impressa acima: para cada passo de
# saída real, o peso que a atenção põe na posição de origem correta, com a
# média tomada sobre todos os passos reais das 500 sequências. O alinhamento
# perfeito recebe 1. A atenção uniforme põe $1/n$ na posição correta em cada
# um dos $n$ passos de um exemplo; juntando todos os passos, isso dá um sobre
# o comprimento médio, $1/6 \approx 0{,}17$ para comprimentos de 4 a 8.
#
# Em que momento o modelo teve o "estalo"? As curvas dizem quando: a acurácia
# fica perto de 0 enquanto a perda já cai, e então salta. Vamos chamar de
# **estalo** a primeira avaliação com 50% ou mais. Quarenta passos antes dele,
# no máximo 11% estava certo, e os 95% vieram de 80 a 100 passos depois
# disso, em todas as sementes e configurações medidas. Aqui estão instantâneos
# da atenção do exemplo fixo no passo 0, quarenta passos antes do estalo, no
# estalo e no fim, em uma única escala de cores:

# %% tags=["nbval-ignore-output"]
click = history.steps_to(0.5)  # a primeira avaliação com 50% de acurácia ou mais
steps = [0, click - 40, click, history.steps[-1]]
example = history.examples[[0] * len(steps)]  # o exemplo fixo, uma vez por painel
snapshots = torch.stack([history.snapshots[s].weights[0] for s in steps])  # (painéis, T, S)
outputs = torch.stack([history.snapshots[s].predictions[0] for s in steps])  # (painéis, T)
own_mass = [seq2seq.alignment_mass(snapshots[[i]], example[0].alignment) for i in range(len(steps))]
titles = [f"passo {s}:\neste exemplo {d2l.number(m, '.2f')}" for s, m in zip(steps, own_mass)]  # em duas linhas: em uma só, os títulos vizinhos se sobrepõem
seq2seq.show_attention(snapshots, example, outputs, titles=titles)
d2l.plt.show()
for s in steps:
    accuracy, mass = history.evaluations[s]
    print(f"passo {s:>3}: acurácia no conjunto reservado {accuracy:>4.0%}, massa na posição correta {d2l.number(mass, '.2f')}")

# %% [markdown] en="b5638e27584e"
# Cada título dá o peso que este exemplo põe nos seus círculos; as linhas
# impressas abaixo da figura dão a acurácia e a massa no conjunto reservado
# nos mesmos passos. No passo 0, os pesos são um borrão. Quarenta passos
# antes do estalo, o primeiro passo de saída já pende para o último dígito da origem (o
# codificador consegue marcar o fim de uma sequência), mas o resto ainda é
# vago e as saídas (rótulos das linhas, em vermelho e marcadas com ✗ quando
# erradas) estão quase todas erradas. No estalo, a antidiagonal já está lá, e
# depois dele os pesos continuam ficando mais nítidos, com pequenas quedas. A
# massa fica bem abaixo de 1, e nada pede 1: a perda avalia o dígito de saída,
# não os pesos, e, assim que o dígito correto supera os outros no contexto, a
# saída fica certa.
#
# ### Explore a execução
#
# O explorador abaixo guarda o que a execução registrou: a atenção de quatro
# exemplos fixos (o primeiro é o de cima) a cada 10 passos. Deslize pelos
# passos de treinamento e troque de exemplo: os exemplos mais curtos mostram o
# seu preenchimento hachurado. À direita, a acurácia e a massa no conjunto
# reservado ao longo da execução; a linha tracejada marca o passo mostrado.

# %%
explore_alignment(history, step=click)

# %% [markdown] en="3d75f75a4d51"
# ## A tarefa de contraste: ordenação
#
# O mesmo modelo, treinado em ordenação por 100 passos. Seu alinhamento não é
# um padrão fixo: cada passo de saída precisa encontrar o menor dígito maior
# que o último que ele escreveu, onde quer que esse dígito esteja.

# %% tags=["nbval-ignore-output"]
torch.manual_seed(0)
sorter = seq2seq.AttentionSeq2Seq(32, "dot-product").to(device)
sort_test = seq2seq.make_batch("sort", 500, generator=torch.Generator().manual_seed(2))
sort_history = seq2seq.History(sort_test[:3], sort_test, snapshot_every=50)
seq2seq.train(sorter, "sort", 100, callback=sort_history)
accuracy, mass = sort_history.evaluations[100]
print(f"ordenação, depois de 100 passos: acurácia no conjunto reservado {accuracy:.0%}, massa na posição correta {d2l.number(mass, '.2f')}")
print(f"passos até atingir 95%: {sort_history.steps_to(0.95)}")
final = sort_history.snapshots[100]
seq2seq.show_attention(final.weights, sort_history.examples, final.predictions,
                       titles=[f"exemplo {i}" for i in range(3)])
d2l.plt.show()

# %% [markdown] en="6a8704a4f96a"
# Três entradas, três permutações diferentes. A ordenação é aprendida mais
# depressa que a inversão: depois de 100 passos, ela acerta de 92% a 100% nas
# sementes e configurações medidas, enquanto a inversão acerta de 11% a 71%.
# Uma razão provável, não testada aqui: para encontrar o próximo dígito, a
# consulta só precisa saber qual dígito foi escrito por último, e um produto
# escalar de dois vetores de dígito aprendidos consegue pontuar "maior, mas só
# um pouco" diretamente, sem posições a calcular. Se a atenção dela também
# termina mais nítida que a da inversão depende da semente (massa de 0,65 a
# 0,92 depois de 100 passos de ordenação, de 0,72 a 0,76 depois de 400 de
# inversão). A inversão precisa de posições, como mostra o próximo
# experimento.
#
# ## Experimento 1 · Sem codificação posicional, a inversão não pode ser aprendida
#
# Retire a codificação posicional, treine na inversão por 100 passos (o
# benchmark em `benchmarks/training.py` a treina por 30 segundos, bem mais de
# mil passos, e ainda assim ela só acerta uma sequência de 500) e observe um
# exemplo com um dígito repetido. Duas ferramentas de tensor aparecem aqui:
# `x.gather(1, index)` escolhe, em cada linha de `x`, as entradas nas colunas
# que `index` indica (a linha $b$ do resultado é `x[b, index[b]]`), e
# `mask.nonzero()` lista onde um tensor booleano vale True, uma linha por
# entrada True: um par (linha, coluna) para uma máscara 2-D, um único índice
# para uma 1-D.

# %% tags=["nbval-ignore-output"]
torch.manual_seed(0)
no_positions = seq2seq.AttentionSeq2Seq(32, "dot-product", positional=False).to(device)
no_pe_history = seq2seq.History(history.examples, test, snapshot_every=50)
seq2seq.train(no_positions, "reverse", 100, callback=no_pe_history)
accuracy, mass = no_pe_history.evaluations[100]
print(f"sem codificação posicional, 100 passos: acurácia no conjunto reservado {accuracy:.0%}, "
      f"massa na posição correta {d2l.number(mass, '.2f')} (uniforme: {d2l.number(chance, '.2f')})")

no_positions.eval()
predictions, weights = no_positions.predict(test.source.to(device), test.valid_lens.to(device))
predictions, weights = predictions.cpu(), weights.cpu()
favourite = test.source.gather(1, weights[:, 0].argmax(-1, keepdim=True))  # (B, 1): o dígito preferido do passo 0
copies = (test.source == favourite).sum(1)  # quantas vezes esse dígito aparece na sua origem
shown = next(i for i in range(len(test)) if test.valid_lens[i] == 8 and copies[i] >= 2)
seq2seq.show_attention(weights[[shown]], test[shown], predictions[[shown]], titles=["sem codificação posicional"])
d2l.plt.show()
digit = favourite[shown, 0].item()
columns = (test.source[shown] == digit).nonzero()[:, 0].tolist()
print(f"origem {seq2seq.as_text(test.source[shown])}: o dígito {digit} está nas posições {columns}")
for t in range(3):
    print(f"o passo de saída {t} dá a elas os pesos {d2l.number(d2l.numpy(weights[shown, t, columns]).round(3))}")

# %% [markdown] en="04ca898ca6b3"
# A acurácia é 0 e a massa é o valor uniforme: o modelo não aprendeu nada
# sobre *onde*. Sua atenção está espalhada por todas as cópias de um dígito:
# as cópias recebem pesos iguais, em todas as linhas. Por quê:
#
# * Sem posições, o codificador vê os dígitos, mas não a ordem deles.
#   O capítulo 07 ([Autoatenção e codificação posicional](07_self_attention_positional_encoding.ipynb))
#   mostrou que a autoatenção é **equivariante a permutações**: embaralhe os
#   tokens de entrada e as saídas se embaralham do mesmo jeito. Assim, dois
#   dígitos iguais saem do codificador como dois vetores iguais e recebem
#   chaves iguais e pesos iguais: a atenção cruzada não consegue distingui-los,
#   e também não consegue distinguir "primeiro" de "último".
# * Sem posições, o decodificador também não sabe em que passo está: sua
#   consulta é construída a partir do dígito que ele escreveu por último, e de
#   nada mais.
# * O que o decodificador recebe é, portanto, uma função do *multiconjunto* de
#   dígitos de origem (quais dígitos aparecem, e quantas vezes, sem ordem) e da
#   sua última saída. A inversão leva "3 1 4" e "4 1 3",
#   que têm o mesmo multiconjunto, a saídas diferentes, então nenhuma escolha
#   dos pesos consegue realizá-la.
#
# A ordenação é diferente: a saída ordenada *é* uma função do multiconjunto.
# O mesmo modelo sem posições a aprende:

# %% tags=["nbval-ignore-output"]
torch.manual_seed(0)
sort_no_positions = seq2seq.AttentionSeq2Seq(32, "dot-product", positional=False).to(device)
sort_no_pe_history = seq2seq.History(sort_test[:3], sort_test, snapshot_every=50)
seq2seq.train(sort_no_positions, "sort", 80, callback=sort_no_pe_history)
accuracy, mass = sort_no_pe_history.evaluations[80]
print(f"ordenação sem codificação posicional, 80 passos: acurácia no conjunto reservado {accuracy:.0%}, massa {d2l.number(mass, '.2f')}")

# %% [markdown] en="32c863d97a31"
# As posições são o que permite à atenção olhar para *algum lugar*, e não para
# *alguma coisa*: uma tarefa cujo alinhamento é uma regra sobre lugares
# precisa delas; uma tarefa cujo alinhamento segue o conteúdo, não.
#
# ## Experimento 2 · Atenção aditiva versus atenção de produto escalar escalonado
#
# A pontuação aditiva do capítulo 03, $w_v^\top \tanh(W_q q + W_k k)$, pode
# substituir o produto escalar na atenção cruzada (`attention="additive"`).
# Mesma semente, mesmos dados. A execução não precisa continuar depois de
# atingir 95% no conjunto reservado: `additive_history.reached(0.95)` é um sinal de
# parada que se liga quando o histórico registra 95%, e `train` o lê depois
# de cada passo (como lê o sinal do botão Parar), de modo que a execução
# termina um passo depois dessa avaliação.

# %% tags=["nbval-ignore-output"]
torch.manual_seed(0)
additive = seq2seq.AttentionSeq2Seq(32, "additive").to(device)
additive_history = seq2seq.History(history.examples, test, snapshot_every=50)
seq2seq.train(additive, "reverse", 400, callback=additive_history, stop=additive_history.reached(0.95))
print(f"{'atenção':<16} {'passos p/ 95%':>13}")
for name, run in [("produto escalar", history), ("aditiva", additive_history)]:
    print(f"{name:<16} {run.steps_to(0.95):>13}")

# %% [markdown] en="be123a72a935"
# As duas aprendem a inversão. Qual chega lá primeiro depende da semente: em
# cinco sementes e quatro configurações de ponto flutuante, o produto escalar
# precisou de 140 a 200 passos para atingir 95%, e a pontuação aditiva, de 120
# a 220. Na semente do notebook, o produto escalar chega primeiro (200 passos
# contra 220, em todas as configurações medidas); nas outras quatro sementes,
# é a pontuação aditiva. Uma única execução não permite concluir nada. Por
# passo, a pontuação aditiva custa mais: ela monta um tensor (consultas,
# chaves, $d_h$), aqui com $d_h = d_\text{model} = 32$, e uma $\tanh$,
# enquanto o produto escalar é um só produto de matrizes. A célula abaixo
# mede o tempo de 10 passos de cada uma nesta máquina (sua saída é uma medição
# ao vivo, então muda de uma execução para outra; `benchmarks/training.py`
# faz essa medição direito).

# %% en="dffe9d57fa75" tags=["nbval-ignore-output"]
# Dados em português: o nome de cada atenção como o leitor o lê (name_pt); o código usa os nomes em inglês
name_pt = {"dot-product": "produto escalar", "additive": "aditiva"}
for kind in seq2seq.ATTENTIONS:
    torch.manual_seed(0)
    timed = seq2seq.AttentionSeq2Seq(32, kind).to(device)
    start = time.perf_counter()
    seq2seq.train(timed, "reverse", 10)
    print(f"{name_pt[kind]:<16} {d2l.number((time.perf_counter() - start) / 10 * 1000, '.1f')} ms por passo")

# %% [markdown] en="b03a709f5f23"
# ## Experimento 3 · Sequências mais longas que as do treinamento
#
# O modelo viu comprimentos de 4 a 8. Dê a ele comprimentos de 8 a 12:

# %% tags=["nbval-ignore-output"]
long_test = seq2seq.make_batch("reverse", 500, (8, 12), generator=torch.Generator().manual_seed(3))
model.eval()
long_predictions, long_weights = model.predict(long_test.source.to(device), long_test.valid_lens.to(device))
long_predictions, long_weights = long_predictions.cpu(), long_weights.cpu()
print(f"{'compr.':>6} {'acurácia':>9} {'massa':>6}")
for n in range(8, 13):
    rows = (long_test.valid_lens == n).nonzero()[:, 0]
    subset = long_test[rows]
    print(f"{n:>6} {seq2seq.sequence_accuracy(long_predictions[rows], subset):>9.0%} "
          f"{d2l.number(seq2seq.alignment_mass(long_weights[rows], subset.alignment), '.2f'):>6}")
_, weights = model.predict(test.source.to(device), test.valid_lens.to(device))
by_step = seq2seq.alignment_mass(weights.cpu(), test.alignment, by_step=True)
print("massa por passo de saída, comprimentos 4-8: ", d2l.number(d2l.numpy(by_step).round(2)))
by_step = seq2seq.alignment_mass(long_weights, long_test.alignment, by_step=True)
print("massa por passo de saída, comprimentos 8-12:", d2l.number(d2l.numpy(by_step).round(2)))
looks_at = long_weights[:, 0].argmax(-1).float()  # (B,): onde o passo de saída 0 põe o seu maior peso
for n in range(8, 13):
    print(f"comprimento {n}: o passo de saída 0 deveria ler a posição {n - 1}, lê {d2l.number(looks_at[long_test.valid_lens == n].mean(), '.1f')} "
          "em média")
longest = (long_test.valid_lens == 12).nonzero()[0, 0].item()
seq2seq.show_attention(long_weights[[longest]], long_test[longest], long_predictions[[longest]],
                       titles=["comprimento 12, treinado em 4-8"], figsize=(4.2, 3.4))
d2l.plt.show()

# %% [markdown] en="e39119690d31"
# O comprimento 8, o mais longo do treinamento, ainda sai certo na maioria das
# vezes (de 68% a 100% nas sementes e configurações medidas); no 9, no máximo
# um quarto sai certo, e do 10 em diante, nada. O alinhamento quebra logo no
# **primeiro** passo de saída, que nos comprimentos 4–8 lê o último dígito, e
# quebra de um jeito ordenado: a antidiagonal mantém a sua forma, mas começa
# perto da posição 7 (o passo de saída 0 lê, em média, a posição 7,0 a 7,8,
# nas sementes e configurações medidas), a última posição em que alguma
# sequência de treinamento já terminou, de modo que os primeiros passos leem até $n - 8$ posições cedo demais. Para ser encontrada pelo passo $t$, a posição de origem $j$
# precisa anunciar "estou a $n - 1 - j$ do fim", e o codificador calcula isso
# a partir das posições da sequência inteira, algo que ele só fez para
# $n \le 8$. O modelo não aprendeu "inverter"; aprendeu "inverter sequências
# de 4 a 8 dígitos".
#
# ## Experimento 4 · O mapa de calor não conta a história toda
#
# Um mapa de calor mostra para onde vai o peso, e não qual entrada produziu a
# saída. Dois casos das execuções acima:
#
# 1. No conjunto reservado (comprimentos 4–8, em que o modelo quase sempre acerta), encontre um passo cujo maior
#    peso **não** está na posição correta, embora a saída esteja certa
#    (e a posição que ele prefere contenha o mesmo dígito).
# 2. Nas sequências longas, encontre um passo cujo maior peso **está** na
#    posição correta, embora a saída esteja errada.

# %% [markdown] en="c29e923056a7"
# **Etapa 1.** O lote reservado `test` traz, além das suas origens e dos seus
# alvos, `test.positions` (para cada passo de saída, a posição de origem que
# ele deve copiar) e `test.real` (True nos passos de saída reais, False no
# preenchimento). Rode o modelo treinado no conjunto reservado mais uma vez e
# anote, para cada passo de saída, três coisas: a posição de origem com o
# maior peso, o dígito nessa posição e se o dígito escrito está certo.
# A célula não imprime nada; cada linha termina com o formato do que ela calcula.

# %%
model.eval()
predictions, weights = model.predict(test.source.to(device), test.valid_lens.to(device))
predictions, weights = predictions.cpu(), weights.cpu()  # (B, T) dígitos escritos, (B, T, S) pesos
largest = weights.argmax(-1)  # (B, T): a posição em que cada passo põe o seu maior peso
digit_there = test.source.gather(1, largest)  # (B, T): o dígito nessa posição
says_right = predictions == test.target  # (B, T): True onde o dígito escrito está certo

# %% [markdown] en="b628f08e1e30"
# **Etapa 2, o primeiro caso.** Um passo "parece deslocado" quando o seu maior
# peso erra a posição correta, mas cai em outra cópia do dígito correto. Fique
# com os passos reais que parecem deslocados e estão certos, conte-os e pegue
# o primeiro: a saída deve mostrar uma contagem acima de zero e um par
# (sequência, passo).

# %% tags=["nbval-ignore-output"]
looks_off = (largest != test.positions) & (digit_there == test.target)  # (B, T)
case_1 = looks_off & says_right & test.real  # (B, T): saídas certas que parecem deslocadas
first, step = case_1.nonzero()[0].tolist()  # o primeiro desses pares (sequência, passo de saída)
print(f"{case_1.sum().item()} passos assim nas 500 sequências reservadas; o primeiro: sequência {first}, passo {step}")

# %% [markdown] en="18866c030458"
# **Etapa 3, o segundo caso.** Agora o contrário, nas sequências longas do
# Experimento 3: um passo cujo maior peso está na posição correta, embora o
# dígito que ele escreve esteja errado.

# %% tags=["nbval-ignore-output"]
long_looks_right = long_weights.argmax(-1) == long_test.positions  # (B, T)
long_says_right = long_predictions == long_test.target  # (B, T)
case_2 = long_looks_right & ~long_says_right & long_test.real  # (B, T): saídas erradas que parecem certas
second, long_step = case_2.nonzero()[0].tolist()
print(f"{case_2.sum().item()} passos assim nas 500 sequências longas; o primeiro: sequência {second}, passo {long_step}")

# %% [markdown] en="99ac2b5368c9"
# **Etapa 4, os dois passos de perto.** `describe_step` imprime o que um passo
# deveria copiar e o que ele escreveu, e depois os seus pesos duas vezes: por
# posição de origem e somados por dígito (todas as cópias de um dígito
# juntas). Compare o dígito que concentra a maior parte do peso com o dígito
# escrito.

# %% tags=["nbval-ignore-output"]
def describe_step(batch, weights, predictions, i, t):
    """Imprime o passo de saída t da sequência i: a posição e o dígito que ele deve copiar, o dígito escrito, seus pesos."""
    n = batch.valid_lens[i].item()
    row = weights[i, t, :n]  # (n,): os pesos do passo sobre as posições de origem reais
    digits = batch.source[i, :n]  # (n,)
    print(f"origem {seq2seq.as_text(batch.source[i])}, passo de saída {t}: deveria copiar a posição "
          f"{batch.positions[i, t].item()} (dígito {batch.target[i, t].item()}), escreveu {predictions[i, t].item()}")
    print(f"  pesos por posição {d2l.number(d2l.numpy(row).round(2))}")
    by_digit = {d: round(row[digits == d].sum().item(), 2) for d in sorted(set(digits.tolist()))}
    print("  pesos por dígito ", d2l.number(by_digit))


describe_step(test, weights, predictions, first, step)
describe_step(long_test, long_weights, long_predictions, second, long_step)

# %% [markdown] en="82890090647a"
# **Etapa 5, os mapas de calor** das duas sequências. Os círculos marcam as
# posições corretas; encontre a linha do passo citado em cada título e veja
# onde fica a sua célula mais escura.

# %% tags=["nbval-ignore-output"]
fig_1 = seq2seq.show_attention(weights[[first]], test[first], predictions[[first]],
                               titles=[f"saída certa, o passo {step} parece deslocado"], figsize=(3.6, 3.0))
fig_2 = seq2seq.show_attention(long_weights[[second]], long_test[second], long_predictions[[second]],
                               titles=[f"passo {long_step} parece certo, saída errada"], figsize=(4.2, 3.4))
d2l.plt.show()

# %% [markdown] en="a508fa9c8939"
# No primeiro caso, o maior peso fica em outra **cópia do mesmo dígito**: o
# vetor de contexto que o passo lê contém o dígito certo de qualquer jeito,
# então a perda nunca pediu ao modelo que escolhesse entre as cópias. Quem
# lesse o mapa de calor diria "ele olhou para o lugar errado"; a saída não tem
# como perceber a diferença. No segundo, o maior peso individual está na
# posição correta, mas não é o peso todo: o resto fica em outros dígitos, e o
# contexto é uma *média* ponderada de todos eles. A rede de saída lê essa
# mistura como outro dígito (os pesos por dígito impressos mostram a mistura
# desta execução). Um mapa de pesos mostra o que uma camada mistura, e não por
# que o modelo responde como responde.
#
# ## Verificando as afirmações nesta máquina
#
# O texto cita os números do treinamento como intervalos e faz afirmações sobre
# eles ("a inversão chega a 95% em até 400 passos"). A célula abaixo verifica
# as principais nas execuções do próprio notebook, com `seq2seq.expect(condition,
# claim, measured)`: ela não imprime nada quando todas valem, e uma afirmação
# que falha diz qual é e o valor que esta máquina mediu. Ela não ensina nada
# de novo; você pode pulá-la.

# %%
# Treinamento que você pode observar: a execução de inversão.
final_accuracy, final_mass = history.evaluations[400]
seq2seq.expect(history.steps_to(0.95) is not None, "a inversão chega a 95% no conjunto reservado em até 400 passos",
               f"{max(a for a, _ in history.evaluations.values()):.0%} no melhor caso")
seq2seq.expect(final_accuracy >= 0.85, "pelo menos 85% ainda está certo no passo 400", f"{final_accuracy:.0%}")
seq2seq.expect(final_mass >= 0.6, "pelo menos 0,6 do peso na posição correta (uniforme: 0,17)",
               f"{d2l.number(final_mass, '.2f')}")
seq2seq.expect(abs(history.evaluations[0][1] - chance) < 0.03, "no passo 0 a atenção é quase uniforme",
               f"massa {d2l.number(history.evaluations[0][1], '.2f')} contra {d2l.number(chance, '.2f')}")
before = click - 40  # quarenta passos antes do estalo
seq2seq.expect(history.evaluations[before][0] <= 0.2, "40 passos antes do estalo, no máximo 20% está certo",
               f"{history.evaluations[before][0]:.0%}")
seq2seq.expect(history.steps_to(0.95) - before <= 120, "daí até 95% leva no máximo 120 passos",
               f"{history.steps_to(0.95) - before} passos")
last = history.examples.valid_lens[0].item() - 1  # a posição do último dígito do exemplo fixo
leaning = history.snapshots[before].weights[0, 0, last].item()  # o peso que o passo de saída 0 põe nela
seq2seq.expect(leaning >= 0.5, "40 passos antes do estalo, o passo de saída 0 pende para o último dígito",
               f"peso {d2l.number(leaning, '.2f')}")

# A tarefa de contraste: ordenação.
sort_accuracy, reverse_accuracy = sort_history.evaluations[100][0], history.evaluations[100][0]
seq2seq.expect(sort_accuracy >= 0.85, "depois de 100 passos a ordenação acerta pelo menos 85%", f"{sort_accuracy:.0%}")
seq2seq.expect(sort_accuracy >= reverse_accuracy + 0.1, "isso fica bem à frente da inversão depois de 100 passos",
               f"ordenação {sort_accuracy:.0%}, inversão {reverse_accuracy:.0%}")

# Experimento 1: sem codificação posicional.
no_pe_accuracy, no_pe_mass = no_pe_history.evaluations[100]
seq2seq.expect(no_pe_accuracy <= 0.01 and abs(no_pe_mass - chance) < 0.02, "sem posições a inversão fica "
               "em 0% e a massa no valor uniforme",
               f"{no_pe_accuracy:.0%}, massa {d2l.number(no_pe_mass, '.2f')} contra {d2l.number(chance, '.2f')}")
_, no_pe_weights = no_positions.predict(test.source.to(device), test.valid_lens.to(device))
no_pe_weights = no_pe_weights.cpu()
same_digit = test.source[:, :, None] == test.source[:, None, :]  # (B, S, S): posições que contêm o mesmo dígito
gap = (no_pe_weights[:, :, :, None] - no_pe_weights[:, :, None, :]).abs()  # (B, T, S, S)
largest_gap = gap.masked_fill(~same_digit[:, None], 0).max().item()
seq2seq.expect(largest_gap < 1e-4, "as cópias de um dígito recebem pesos iguais", f"uma diferença de {d2l.number(largest_gap, '.1e')}")
sort_no_pe_accuracy = sort_no_pe_history.evaluations[80][0]
seq2seq.expect(sort_no_pe_accuracy >= 0.9, "sem posições a ordenação ainda chega a 90% em 80 passos",
               f"{sort_no_pe_accuracy:.0%}")

# Experimento 2: a pontuação aditiva.
seq2seq.expect(additive_history.steps_to(0.95) is not None, "a pontuação aditiva também aprende a inversão (95%)",
               "não em até 400 passos")

# Experimento 3: sequências mais longas.
longer = long_test.valid_lens >= 10
long_accuracy = seq2seq.sequence_accuracy(long_predictions[longer], long_test[longer])
seq2seq.expect(long_accuracy <= 0.05, "do comprimento 10 em diante, quase nada está certo", f"{long_accuracy:.0%}")
reads = max(looks_at[long_test.valid_lens == n].mean().item() for n in range(9, 13))
seq2seq.expect(reads < 8, "nos comprimentos 9 a 12, o passo de saída 0 lê perto da posição 7, não n - 1",
               f"{d2l.number(reads, '.1f')} em média, no máximo")

# Experimento 4: o mapa de calor não conta a história toda.
seq2seq.expect(bool(case_1.any()), "uma saída certa pode olhar para a cópia errada",
               "nenhum passo assim entre as 500 sequências reservadas")
seq2seq.expect(bool(case_2.any()), "uma saída errada pode olhar para o lugar certo",
               "nenhum passo assim entre as 500 sequências longas")

# %% [markdown] en="474641b7bfec"
# ## Sua vez: retreine o modelo
#
# Abaixo está a visualização de treinamento do início do notebook, mostrada
# mais uma vez (é o mesmo widget: as duas cópias acompanham a mesma execução).
# **Treinar** treina um modelo novo com as configurações que você
# escolher, inclusive a semente; **Parar** encerra uma execução depois
# do passo em andamento, e as configurações ficam travadas enquanto uma
# execução está rodando. Executar o notebook de cima a baixo nunca aperta
# esse botão. Coisas para experimentar:
#
# * desligue a *codificação posicional* na inversão e depois na ordenação;
# * *aditiva* contra *produto escalar*, com algumas
#   sementes para cada: quanto variam os passos até 95% de uma semente para
#   outra?
# * *taxa de aprendizado* 0,03, e *dimensão oculta* 16;
# * comprimentos 6–10: o estalo de uma tarefa mais longa vem mais tarde?
#
# Um modelo retreinado fica em `view.model` e o seu registro em `view.history`
# (`explore_alignment(view.history)` o explora); as variáveis `model` e
# `history` acima guardam a execução do próprio notebook.

# %%
view

# %% [markdown] en="85a0eed23bf3"
# <details>
# <summary>Respostas comentadas das coisas para experimentar (abra depois de experimentá-las)</summary>
#
# Estes números vêm das execuções da própria visualização (400 passos,
# semente 0 quando nenhuma outra é indicada; a acurácia no conjunto reservado é
# medida a cada 20 passos). O notebook não os imprime, e eles variam de
# máquina para máquina: um número único valeu nas duas máquinas de "Sobre os
# números do treinamento"; um intervalo abrange o AMD EPYC e o Intel Xeon. Na
# sua CPU, uma contagem de passos pode mudar em uma avaliação ou mais, e uma
# acurácia final em dez pontos ou mais (veja "Sobre os números do
# treinamento", logo depois da primeira visualização de treinamento).
#
# 1. Na inversão, sem a codificação, a acurácia nunca passa de 0,2%
#    (uma sequência de 500) em 400 passos, e a massa fica em 0,17, o
#    valor uniforme: o Experimento 1 explica por que nenhum conjunto de pesos
#    consegue realizá-la. Na ordenação, o modelo ainda aprende, até 100%, só
#    um pouco mais tarde (95% no passo 80 em vez de 60). Sua atenção fica
#    menos concentrada no dígito que ele copia (massa 0,73 contra 0,95), e
#    mesmo assim todas as saídas estão certas: a ordenação precisa de
#    conteúdo, não de lugares.
# 2. Passos até 95% para as sementes 0 a 4: produto escalar 200, 160, 160,
#    140, 160; aditiva 220, 120, 140, 120, 120. Só com a semente 0, você
#    diria que o produto escalar é mais rápido; as outras quatro dizem o
#    contrário. Dentro de uma mesma pontuação, as sementes se espalham por 60
#    passos (produto escalar) e 100 (aditiva), de três a cinco vezes a
#    diferença de 20 passos entre as médias das duas pontuações (164 e 144),
#    então uma única execução não permite concluir nada.
# 3. Com taxa de aprendizado 0,03, a acurácia passa de 50% mais cedo (passo
#    80 a 100, contra 140), mas chega a 95% pouco ou nada mais cedo (passo
#    180 a 260, contra 200) e termina entre 84% e 100%, conforme a máquina:
#    os passos maiores encontram o alinhamento mais cedo, mas podem se
#    acomodar pior. Sua massa, de 0,86 a 0,96, é a mais nítida das execuções
#    de inversão aqui. Com dimensão
#    oculta 16, o estalo vem mais tarde
#    (50% no passo 180, 95% no 220), com massa de 0,70 a 0,71.
# 4. Não vem mais tarde: com comprimentos 6–10, a acurácia passa de 50% no
#    passo 140 e de 95% no passo 200, como com 4–8; só os 99% demoram mais
#    (passo 360 a 400, contra 260 a 320 com as configurações padrão). O mais curto, 3–6, chega lá mais cedo (95% no passo 140). Sequências
#    mais longas não atrasaram o estalo aqui; elas dão a um único erro mais
#    lugares onde acontecer, então os últimos pontos percentuais demoram mais.
#
# </details>

# %% [markdown] en="87bab13d8723"
# ## Resumo
#
# * Uma tarefa com alinhamento conhecido (inversão, a antidiagonal; ordenação,
#   uma permutação que segue o conteúdo) transforma "a atenção aprende?" em
#   uma medida: a fração da atenção que cai na posição de origem correta.
# * Na atenção cruzada, as consultas vêm do decodificador, e as chaves e os
#   valores, do codificador; o preenchimento a mascarar é o da origem.
# * Um codificador–decodificador de 13.642 parâmetros, feito com a atenção do
#   `d2lmini`, aprende a inversão até 95% no conjunto reservado em 140 a 200 passos
#   (o intervalo em cinco sementes e quatro configurações de ponto flutuante),
#   alguns segundos em uma única thread de CPU; sua acurácia salta de no
#   máximo 11% para 95% em 80 a 100 passos, enquanto a atenção se concentra
#   nitidamente na antidiagonal.
# * As outras peças do modelo (incorporações, conexões residuais, LayerNorm,
#   o bloco feed-forward, Adam) são padrão e podem continuar caixas-pretas; a
#   atenção cruzada é a peça que você pode ver aprender.
# * Sem codificação posicional, a inversão fica em 0%: o codificador é
#   equivariante a permutações, dígitos iguais recebem pesos iguais, e o que o
#   decodificador lê depende só do multiconjunto de dígitos. A ordenação, uma
#   função do multiconjunto, continua funcionando.
# * As pontuações aditiva e de produto escalar aprendem a tarefa; o produto
#   escalar é mais barato por passo.
# * O alinhamento aprendido não se estende a comprimentos maiores do que os
#   vistos no treinamento: do comprimento 10 em diante, nada sai certo.
# * Os pesos de atenção mostram o que é misturado, e não por que a saída é a
#   que é.

# %% [markdown] en="826dede0dbd2"
# ## Por quê? Uma pergunta de verificação
#
# **Sem codificação posicional, o modelo aprende a ordenação, mas fica em 0%
# na inversão. Por quê?**
#
# %%
from d2lmini.exercises import questions

questions.ask("08")


# %% [markdown] en="861640e012b2"
# ## Exercícios
#
# ### Exercício 8.1 · O alinhamento da inversão (★)
#
# Escreva `reversal_alignment(valid_lens, num_steps)`: para um lote de
# comprimentos, o tensor de floats (lote, num_steps, num_steps) que vale 1
# onde o passo de saída $t$ copia a posição de origem $n - 1 - t$ e 0 nos
# demais lugares. Os passos de saída $t \ge n$ são preenchimento: suas linhas
# são todas 0.

# %% tags=["exercise"]
def reversal_alignment(valid_lens, num_steps):
    """(lote, num_steps, num_steps) floats: 1 em (t, n - 1 - t) para cada passo de saída real t."""
    ### BEGIN SOLUTION
    steps = torch.arange(num_steps)
    copied = valid_lens[:, None] - 1 - steps  # (lote, passos de saída): a posição de origem que o passo t copia
    return (copied[:, :, None] == steps).float()  # um passo de preenchimento copia uma posição negativa: nenhum 1 na sua linha
    ### END SOLUTION


# %% tags=["check"]
ch08.check_reversal_alignment(reversal_alignment)

# %% [markdown] en="dcce1577eb1a"
# ### Exercício 8.2 · Atenção cruzada, um passo de saída de cada vez (★★)
#
# Na hora do teste, um decodificador escreve a sua saída um passo de cada vez:
# ele precisa do símbolo que escreveu no passo $t$ antes de poder dar o passo
# $t + 1$. As saídas do codificador são as mesmas durante toda a saída, e as
# chaves delas também.
#
# Escreva `make_cross_attention(encoder_outputs, source_lens, W_q, W_k)`. Ela
# recebe as saídas do codificador (B, S, $d_\text{model}$), os comprimentos de
# origem (B,) e as projeções `W_q` e `W_k` do modelo (duas camadas
# `nn.Linear`). Ela faz uma única vez o trabalho que é igual para todos os
# passos e devolve uma função `step(decoder_state)` para um passo de saída:
# entra um estado do decodificador (B, $d_\text{model}$), sai
# `(context, weights)`, de formatos (B, $d_\text{model}$) e (B, S). Como em
# `TinySeq2Seq`, a consulta vem do decodificador (`W_q`), as chaves vêm do
# codificador (`W_k`), e os valores são as saídas do codificador, sem
# projeção. As posições de origem de preenchimento recebem peso 0, e os pesos
# de cada exemplo somam 1.
#
# Uma função definida dentro de outra continua enxergando as variáveis da
# função externa, mesmo depois que a função externa retornou (isso se chama
# clausura, em inglês *closure*):
#
# ```python
# def make_adder(n):
#     def add(x):
#         return x + n  # n pertence a make_adder
#     return add
#
# add_two = make_adder(2)
# add_two(5)  # 7
# ```
#
# Antes de escrevê-la, faça uma previsão: para uma saída de $T$ passos,
# quantas vezes `W_k` e `W_q` são executadas? A verificação executa o seu
# `step` uma vez por passo de saída e compara os resultados com os pesos e o
# contexto do próprio modelo. Ela conta as execuções de `W_k` e de `W_q`. Você
# pode usar `d2l.masked_softmax`; os módulos de atenção ficam desligados
# durante a verificação.

# %% tags=["exercise"]
def make_cross_attention(encoder_outputs, source_lens, W_q, W_k):
    """As chaves, uma única vez; devolve step(decoder_state) -> context (B, d_model), weights (B, S)."""
    ### BEGIN SOLUTION
    keys = W_k(encoder_outputs)  # (B, S, d_model): uma vez para a saída inteira

    def step(decoder_state):
        query = W_q(decoder_state)[:, None, :]  # (B, 1, d_model): uma consulta por exemplo
        scores = torch.bmm(query, keys.transpose(1, 2)) / math.sqrt(query.shape[-1])  # (B, 1, S)
        weights = d2l.masked_softmax(scores, source_lens)  # as posições de origem de preenchimento recebem 0
        return torch.bmm(weights, encoder_outputs)[:, 0], weights[:, 0]

    return step
    ### END SOLUTION


# %% tags=["check"]
ch08.check_cross_attention_steps(make_cross_attention)

# %% [markdown] en="e8f86deec9f2"
# ### Exercício 8.3 · O alinhamento da tarefa de ordenação (★★★)
#
# Escreva `sort_alignment(source, valid_lens)`: para um lote de origens de
# dígitos distintos, preenchidas com `PAD` (10), o tensor de floats
# (lote, passos, passos) com um 1 em (passo de saída $t$, posição de origem do
# $t$-ésimo menor dígito real) e linhas de 0 nos passos de preenchimento.
# Cuidado: há duas permutações em jogo, "que posição o passo $t$ copia?" e
# "para que passo vai a posição $j$?". Só uma delas é o alinhamento. Duas
# ferramentas que você ainda não viu ajudam: `torch.argsort(x, dim=1)` dá,
# para cada linha, as posições das suas entradas da menor para a maior, e
# `F.one_hot(indices, n)` transforma cada índice em uma linha de `n` zeros com
# um 1 nesse índice (inteiros: `.float()` os transforma em floats).

# %% tags=["exercise"]
def sort_alignment(source, valid_lens):
    """(lote, passos, passos) floats: 1 em (t, posição do t-ésimo menor dígito real)."""
    ### BEGIN SOLUTION
    steps = source.shape[1]
    real = torch.arange(steps) < valid_lens[:, None]  # (lote, passos)
    copied = source.masked_fill(~real, 10 ** 6).argsort(dim=1)  # (lote, passos): posições, do menor dígito em diante
    return F.one_hot(copied, steps).float() * real[:, :, None]  # os passos de preenchimento não copiam nada
    ### END SOLUTION


# %% tags=["check"]
ch08.check_sort_alignment(sort_alignment)

# %% [markdown] en="68f925e0e497"
# ### Indo além (sem verificação)
# * Acrescente uma camada de autoatenção causal ao decodificador de
#   `TinySeq2Seq`. A ordenação com dígitos **repetidos** passa a poder ser
#   aprendida? (O decodificador precisa contar quantas cópias já escreveu.)
# * Treine com comprimentos 4–12 e teste com 13–16. Um modelo treinado com
#   mais comprimentos extrapola para mais longe?
#
# ## Leituras adicionais
#
# * D. Bahdanau, K. Cho, Y. Bengio (2014), *Neural machine translation by
#   jointly learning to align and translate*, arXiv:1409.0473: atenção
#   cruzada com uma pontuação aditiva em um modelo de tradução recorrente, e
#   mapas de calor dos alinhamentos que ele aprendeu sem nunca ter visto um.
# * M.-T. Luong, H. Pham, C. D. Manning (2015), *Effective approaches to
#   attention-based neural machine translation*, EMNLP: produto escalar e
#   outras pontuações, atenção global e local.
# * A. Vaswani et al. (2017), *Attention is all you need*, NeurIPS: o
#   Transformer, cujo decodificador usa a mesma atenção cruzada depois da sua
#   própria autoatenção causal.
# * *Dive into Deep Learning*, seção "The Bahdanau Attention Mechanism"
#   (capítulo "Attention Mechanisms and Transformers"): a mesma ideia com um
#   decodificador recorrente, treinado em tradução de inglês para francês.
