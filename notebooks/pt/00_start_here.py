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

# %% [markdown] en="be07e83d45db"
# # 00 · Comece aqui: o pooling de atenção em uma figura
#
# Boas-vindas! Esta coleção ensina como a atenção *pontua* e *agrega* (faz o
# *pooling*), uma ideia por notebook, com código que você pode rodar na CPU de
# um laptop e controles deslizantes que você pode mover.
#
# **Neste notebook você vai**
# 1. ver o pooling de atenção como uma média ponderada de valores;
# 2. calcular um pooling à mão, em `torch` puro, e depois verificá-lo com o `d2lmini`,
#    o pequeno pacote de funções auxiliares que acompanha estes notebooks;
# 3. ler um mapa de calor de atenção (as linhas são consultas, as colunas são
#    chaves);
# 4. mover uma consulta com o seu primeiro *explorador* e ver os pesos dela
#    acompanharem o movimento;
# 5. saber como os notebooks estão organizados e onde ficam os exercícios.

# %% [markdown] en="691af2ce0cdd"
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/pt/00_start_here.ipynb) abre a edição do aluno deste capítulo no Colab. Execute primeiro a célula de configuração recolhida logo abaixo: no Colab, ela instala o `d2lmini`, o pacote auxiliar desta coleção, e não mexe nos pacotes do próprio ambiente de execução; em um hub de curso, ela aponta qualquer arquivo seu que uma atualização tenha guardado com outro nome. Em qualquer outro lugar, ela não faz nada.

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
from d2lmini.diagrams import draw_queries_keys_values

# %% [markdown] en="a9f2a0abe6ee"
# ## O pooling de atenção em uma fórmula
#
# Temos um conjunto de **chaves** $k_1, \dots, k_n$, cada uma associada a um
# **valor** $v_i$, e uma **consulta** $q$. Pense em uma busca: a consulta é o
# que pedimos, cada chave é um rótulo que pode corresponder a ela, e o valor
# da chave é o que essa chave devolve. Em vez de devolver o valor da única
# melhor chave, o pooling de atenção responde à consulta com uma média
# ponderada de todos os valores:
#
# $$\operatorname{attention}(q) = \sum_{i=1}^{n} \alpha(q, k_i)\, v_i,
# \qquad \alpha(q, k_i) = \frac{\exp a(q, k_i)}{\sum_{j=1}^{n} \exp a(q, k_j)} .$$
#
# A **função de pontuação** $a(q, k)$ diz quão bem uma chave corresponde à
# consulta. O **softmax** (a fração à direita) transforma as pontuações em
# pesos positivos que somam 1, de modo que a resposta é uma média ponderada
# dos valores. Os capítulos 01, 03 e 04 escolhem, cada um, um $a$ diferente;
# os demais tratam dos pesos: quais chaves podem receber algum (02), vários
# conjuntos lado a lado (05), como calculá-los rapidamente (06), a ordem das
# palavras (07) e o que o treinamento faz deles (08, 09). O mapa no fim deste
# notebook lista todos eles.
#
# A figura acompanha uma consulta ao longo da fórmula. Ela usa a pontuação da
# próxima seção, $a(q, k) = -\tfrac12 (q - k)^2$, e quatro chaves sobre uma
# reta, cada uma com o seu valor: a consulta $q$ encontra cada chave $k_i$, um
# único softmax sobre as pontuações $a(q, k_i)$ dá os pesos $\alpha_i$, que
# somam 1, e a saída é $\sum_i \alpha_i v_i$. A chave mais próxima da
# consulta, $k_2 = 1$, recebe o maior peso. A figura numera as chaves a partir
# de 1, como a fórmula.

# %%
draw_queries_keys_values()

# %% [markdown] en="d6c7f0844033"
# ## Calculando um pooling à mão
#
# Tome seis chaves sobre uma reta, cada uma carregando um valor, e três
# consultas. Como pontuação, usamos o quadrado da distância com o sinal
# trocado, $a(q, k) = -\tfrac12 (q - k)^2$: uma chave perto da consulta tem
# pontuação alta. As quatro primeiras chaves e valores são os da figura.
#
# Daqui em diante, numeramos as chaves como o Python faz, a partir de 0:
# `keys[0]` é o $k_1$ da figura, `keys[1]` é o $k_2$, e assim por diante.
# As chaves ficam em 0, 1, …, 5, então "chave 2", abaixo, quer dizer
# `keys[2]`, a chave na posição 2 da reta.
#
# A linha que calcula `scores` compara todas as consultas com todas as chaves
# de uma vez. `queries` tem formato (3,) e `keys` tem formato (6,). Indexar com
# `None` acrescenta um eixo de comprimento 1: `queries[:, None]` é uma coluna
# de formato (3, 1), e `keys[None, :]` é uma linha de formato (1, 6). Ao subtrair
# uma linha de uma coluna, o PyTorch estica cada uma ao longo do seu eixo de
# comprimento 1, como faz o numpy (isso se chama **broadcasting**), e a
# diferença fica com formato (3, 6): a entrada $(i, j)$ é a consulta $i$ menos
# a chave $j$, uma linha por consulta e uma coluna por chave. O softmax ao
# longo de `dim=1` (o nome que o PyTorch dá ao `axis` do numpy), o eixo das
# chaves, transforma então cada linha em pesos, e `weights @ values` soma, em
# cada linha, os pesos vezes os valores: uma saída por consulta.

# %%
keys = torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
values = torch.tensor([0.0, 2.0, 1.0, 4.0, 3.0, 5.0])
queries = torch.tensor([0.5, 2.5, 4.8])

scores = -0.5 * (queries[:, None] - keys[None, :]) ** 2  # (consultas, chaves)
weights = torch.softmax(scores, dim=1)  # cada linha soma 1
outputs = weights @ values  # (consultas,)

print("pesos (linhas = consultas, colunas = chaves):")
print(d2l.number(weights.numpy().round(3)))
print("somas das linhas:", d2l.number(weights.sum(dim=1).numpy().round(3)))
print("saídas:", d2l.number(outputs.numpy().round(3)))

# %% [markdown] en="fdb2ce6a95a3"
# Cada saída é uma mistura dos valores cujas chaves ficam perto da consulta: a
# consulta em 0,5 faz basicamente a média dos valores das chaves 0 e 1 (0 e
# 2), então a resposta fica em cerca de 1.
#
# O `d2lmini` oferece esse pooling como `nadaraya_watson`: com o kernel
# gaussiano de largura 1, os pesos dele são exatamente o softmax da nossa
# pontuação (o capítulo 01 explica o nome e o kernel). Construir primeiro à
# mão e depois verificar a nossa versão com o pacote é o padrão que todo
# capítulo segue:

# %%
package_outputs, package_weights = d2l.nadaraya_watson(queries, keys, values, kernel="gaussian", sigma=1.0)
torch.testing.assert_close(package_weights, weights)
torch.testing.assert_close(package_outputs, outputs)
print("o nosso pooling coincide com d2lmini.nadaraya_watson")

# %% [markdown] en="74f09f9d1f22"
# ## Lendo um mapa de calor de atenção
#
# Todos os notebooks desenham os pesos de atenção do mesmo jeito: **uma linha
# por consulta, uma coluna por chave**, e uma única barra de cores que vale
# para todos os painéis da figura. O mapa de cores é o viridis, que continua
# legível com as deficiências mais comuns de visão de cores e em impressão em
# tons de cinza: vai do roxo escuro, na base da barra de cores, ao amarelo, no
# topo, então mais claro quer dizer mais peso (o menu *mapa* de um explorador
# oferece outros; em tons de cinza, mais escuro quer dizer mais). Leia os
# números na barra de cores, já que a faixa dela muda de uma figura para
# outra (aqui ela termina perto de 0,5, o maior peso).

# %%
fig = d2l.show_heatmaps(weights, xlabel="Chaves", ylabel="Consultas", figsize=(4, 2.2))

# %% [markdown] en="06fc33bad105"
# A linha 0 põe o seu peso nas primeiras chaves, a linha 2 nas últimas: cada
# consulta presta atenção às chaves perto dela. O texto sob a figura diz o
# mesmo em palavras, para um leitor de tela.
#
# A partir do capítulo 02, algumas chaves são *mascaradas*: uma consulta não
# pode prestar atenção a elas, e elas recebem peso exatamente 0. Um mapa de
# calor simples (`d2l.show_heatmaps`) desenha essa célula como esse 0, com a
# cor da base da barra de cores. Já os exploradores, `d2l.show_weights` e os
# diagramas de máscara a deixam sem cor, cinza e hachurada, para que uma chave
# mascarada nunca pareça uma chave que apenas teve pontuação baixa.
#
# ## Experimente: o seu primeiro explorador
#
# Um *explorador* é uma figura com controles deslizantes e menus que se
# redesenha na hora. Este faz o pooling das seis chaves e valores acima para
# uma única consulta $q$: o controle deslizante move $q$ ao longo da reta, e o
# menu alterna a pontuação entre a pontuação de proximidade acima e o produto
# $a(q, k) = q \cdot k$. O painel de cima mostra cada valor na posição da sua
# chave, com um círculo cuja área é o peso da chave, e a resposta
# $\sum_i \alpha_i v_i$ como uma estrela na posição da consulta; a curva tênue
# é a resposta para cada posição de $q$. Abaixo dele, no mesmo eixo, os pesos
# formam um mapa de calor de uma linha só. O explorador começa em $q = 0{,}5$, a primeira
# linha do mapa de calor acima. Coisas para experimentar:
#
# * Coloque a consulta bem em cima de uma chave, em $q = 2$. A resposta é
#   igual ao valor dessa chave, 1?
# * Arraste $q$ até uma das pontas do controle deslizante, para além das
#   chaves. Até onde vai a resposta?
# * Mude a pontuação para o produto $q \cdot k$ e ponha $q$ em 1, 0 e $-1$.
#   Qual chave recebe mais peso agora? Importa de quais chaves a consulta
#   está perto?

# %%
from d2lmini.widgets import explore_one_query

explorer = explore_one_query()
explorer

# %% [markdown] en="279c2ac7bb45"
# <details>
# <summary>Respostas comentadas das coisas para experimentar (abra depois de experimentá-las)</summary>
#
# 1. Não. Em $q = 2$ a chave 2 recebe o maior peso, 0,40, mas as chaves 1 e 3
#    recebem 0,24 cada e as chaves 0 e 4 recebem 0,05 cada, então a resposta,
#    2,045, é uma mistura puxada para cima pelos valores 2 e 4 dos vizinhos.
#    Uma pontuação que recompensa a proximidade ainda deixa uma consulta
#    posta sobre uma chave ouvir os vizinhos dessa chave.
# 2. Em $q = 6$ a última chave recebe 0,81 e a resposta é 4,624; em $q = -1$
#    a primeira chave recebe 0,81 e a resposta é 0,376. Para além das chaves,
#    a resposta se estabiliza, aproximando-se dos valores das pontas, 5 e 0, e
#    a curva tênue nunca sai do intervalo de 0 a 5. Por que ela não pode sair
#    é a pergunta do fim deste notebook.
# 3. Com $q \cdot k$, a posição da consulta já não escolhe os vizinhos dela.
#    Em $q = 1$, sobre a chave 1, a maior chave, 5, recebe 0,63 e a resposta é
#    4,266; em $q = 0$ cada chave recebe $1/6 \approx 0{,}167$ e a resposta é a
#    média simples dos valores, 2,5; em $q = -1$ a chave 0 recebe 0,63 e a
#    resposta é 0,734. O produto favorece as chaves mais distantes na direção
#    da consulta, e um $\lvert q\rvert$ maior deixa os pesos mais concentrados
#    ($q = 2$ põe 0,86 na chave 5). O capítulo 01 mostra quando as duas
#    pontuações dão os mesmos pesos, e o capítulo 04 se apoia no produto.
#
# </details>

# %% [markdown] en="0386350336ec"
# ## CPU ou GPU
#
# Tudo roda na CPU de um laptop. Se houver uma GPU, `d2l.try_gpu()` a escolhe
# (primeiro CUDA, depois o MPS da Apple), e este notebook e os capítulos
# 01–08 movem os seus tensores para ela; caso contrário, a função devolve a
# CPU. O capítulo 09 roda o seu modelo pré-treinado na CPU. Os números
# impressos são arredondados, para que a maioria deles saia igual em qualquer
# máquina; algumas células imprimem o dispositivo ou um tempo medido, que
# variam, e o capítulo 08, que treina modelos, diz quanto os números dele
# podem mudar.

# %% tags=["nbval-ignore-output"]
device = d2l.try_gpu()
print("este notebook roda em:", device)

# %%
on_device = d2l.nadaraya_watson(queries.to(device), keys.to(device), values.to(device))[0]
print("saídas calculadas no dispositivo escolhido:", d2l.number(d2l.numpy(on_device).round(3)))

# %% [markdown] en="5a979ace0f86"
# ## Como usar estes notebooks
#
# 1. **Primeiro, execute todas as células** (*Run → Run All Cells*). Fora a
#    célula de configuração no Colab, nenhum notebook baixa nada. Na CPU de um
#    laptop, cada capítulo roda em menos de 20 segundos, exceto o capítulo 08,
#    que treina modelos pequenos: ele leva até um minuto. Uma parte que
#    começa com
#    **Para ir mais fundo (você pode pular esta parte).** traz material para uma
#    segunda leitura (uma dedução, um detalhe de ponto flutuante, como
#    funciona um formato de arquivo): o resto do capítulo não depende dela.
# 2. **Depois, brinque.** Todo capítulo tem pelo menos um explorador como o de
#    cima. Antes de você executar a célula dele, e no GitHub, a saída de um
#    explorador mostra a figura com que ele começa, e uma figura estática
#    aparece antes dele no texto. Cada explorador vem com coisas para
#    experimentar e, logo depois delas, respostas comentadas que ficam
#    fechadas até você clicar nelas: experimente primeiro, depois compare.
#    *Salvar*, sob a figura de um explorador, grava a vista atual em um arquivo
#    PNG ou SVG, ou os pesos que ele desenha em um arquivo `.npz`.
# 3. **Responda à pergunta do porquê.** Todo capítulo faz uma, logo antes dos
#    exercícios (aqui, antes das leituras adicionais). Escolha uma opção e
#    pressione *Verificar*: cada opção tem o seu próprio comentário. Uma opção
#    errada diz qual confusão está por trás dela e remete à parte do
#    capítulo que a esclarece; a certa diz por que está certa. Sem um kernel
#    (no GitHub, em um PDF), as opções aparecem como texto sob a célula.
# 4. **Faça os exercícios.** Os capítulos 01 a 09 terminam com pelo menos
#    três cada um (este não tem nenhum), marcados de ★ a ★★★. Cada um pede que
#    você complete uma função ou uma classe em uma célula de código, e a
#    célula logo abaixo verifica a sua resposta. Na edição do aluno (a
#    cópia que `make lab` abre em `learner/pt/`, e que o Binder também abre),
#    é você quem preenche essas células; os capítulos em `notebooks/pt/`
#    trazem as respostas de referência. Enquanto você não tentar, a
#    verificação diz que o exercício ainda não foi tentado. Depois disso, ela
#    diz em uma linha que a sua resposta está certa, ou informa o que
#    esperava, o que recebeu e uma primeira dica; `ch01.hint()` (para o
#    capítulo 01) em uma célula nova dá a dica seguinte.
#
# ## O mapa
#
# | Notebook | Função de pontuação | A pergunta que ele responde |
# |---|---|---|
# | 01 · Pooling de atenção | Kernel gaussiano | Por que uma média ponderada dos vizinhos já é atenção, e o que a largura faz |
# | 02 · Softmax mascarado | — | Como as chaves de preenchimento recebem peso exatamente zero, em qualquer dtype |
# | 03 · Atenção aditiva | $w_v^\top \tanh(W_q q + W_k k)$ | Como pontuar consultas e chaves de tamanhos diferentes |
# | 04 · Atenção de produto escalar escalonado | $q^\top k / \sqrt d$ | Por que o $1/\sqrt d$ está ali, com medições |
# | 05 · Atenção multi-cabeça | $h$ cabeças em paralelo | Como as cabeças são dobradas para dentro do lote, e para onde cada cabeça olha |
# | 06 · Atenção eficiente | a mesma, fundida | Por que os pesos ocupam memória $n^2$, e como um cálculo fundido evita armazená-los |
# | 07 · Autoatenção e codificação posicional | $q^\top k / \sqrt d$ sobre $X + P$ | Por que a autoatenção não distingue a ordem das palavras sem posições, e como senos e cossenos a fornecem |
# | 08 · Atenção que aprende | aditiva ou $q^\top k / \sqrt d$, treinada | Como um modelo aprende para onde olhar: um minúsculo codificador–decodificador, treinado em tarefas de brinquedo, cuja atenção cruzada encontra o alinhamento conhecido na CPU de um laptop |
# | 09 · A atenção de um modelo real | 6 camadas × 12 cabeças, treinadas | Para onde olham as cabeças de um modelo pré-treinado (all-MiniLM-L6-v2, offline), e o que os mapas delas não conseguem dizer |

# %% [markdown] en="7c48fedc06b9"
# ## Resumo
#
# * O pooling de atenção responde a uma consulta com uma média ponderada de
#   valores.
# * Os pesos são um softmax das pontuações $a(q, k)$: positivos, com soma 1.
# * Um mapa de calor de pesos tem uma linha por consulta e uma coluna por
#   chave.
# * A pontuação decide quais chaves uma consulta escuta: a proximidade escolhe
#   os vizinhos dela, um produto escolhe as chaves mais distantes na direção
#   dela.
# * O resto da coleção trata de escolher $a$ e de controlar os pesos.

# %% [markdown] en="ab07062c1f0a"
# ## Por quê? Uma pergunta de verificação
#
# **Por que o pooling de atenção sempre responde com um número entre o menor
# e o maior valor?**

# %%
from d2lmini.exercises import questions

questions.ask("00")

# %% [markdown] en="4e3e8a3fb3e7"
# ## Leituras adicionais
#
# * O livro d2l ("Dive into Deep Learning"), capítulo "Attention Mechanisms
#   and Transformers", seção "Queries, Keys, and Values": a mesma imagem da
#   atenção como uma busca suave em um banco de dados. Cada capítulo aqui
#   termina com os artigos que correspondem a ele e, quando o livro tem uma,
#   a seção correspondente do livro.
