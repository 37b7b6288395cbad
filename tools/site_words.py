"""What the web site itself writes on its pages, in each of its languages (docs/translating.md, "On the site").

A chapter's own text comes from its notebook, in its own language. Around it,
tools/build_site.py adds a few sentences of its own: the line of launch links,
the note under a *Why?* question, the alt text of a stored picture, the
landing page's edition sentence and chapter map. They are written here once,
in English (``ENGLISH``, by name), and each translation is a table keyed by the
English text it was made from (``TRANSLATED``): when the English changes, its
old translation no longer matches, the page shows the English until someone
translates it again, and ``untranslated`` (run by the tests) names it.

The chapter map's lines come from docs/chapters.md. A translated line records,
as the translated chapters' Markdown cells do, the first 12 hexadecimal digits
of the SHA-256 of the English line it was made from (``CHAPTER_ROWS``), and
``stale_rows`` names every line whose English has changed since.
"""

import hashlib
import re
import string

from d2lmini.widgets import DECLARATIONS

# Each book's name for its own language, as the language switch shows it (in that language).
LANGUAGE_NAMES = {"en": "English", "pt": "Português"}

# The site's own sentences, by name, in English. A {field} is filled after translation.
ENGLISH = {
    "run line": "<strong>Run this chapter</strong> (its learner edition, sliders live): {links}",
    "hub link": "your course's hub",
    "question note": "*On this page the options cannot be picked: run the chapter (links at the top) to choose one "
                     "and see what the check says about it.*",
    "explorer alt": "The {words} explorer's picture at its first settings ({settings}); with JavaScript it becomes "
                    "live, with a text summary of what it shows.",
    # Chapter 08's training view, which the page replays from recorded runs (build_site.REPLAYED).
    "training alt": "A recorded training run's attention ({run}, training step {step}): the cross-attention of "
                    "one example, and the held-out accuracy and alignment over the run; with JavaScript it becomes "
                    "live: pick a recorded run, then step through it or play it.",
    "figure alt": "A figure (its chapter's notebook has no alt text for it).",
    "learner edition": "The exercises are stubs here, as in the notebooks a learner runs: their answers are on no "
                       "page of this site.",
    "instructor edition": "**This is the instructor edition: every exercise shows its answer.** Keep it off any "
                          "address your learners can reach.",
    "hub sentence": ", or on your course's **JupyterHub**",
    "repository link": "[the repository]({url})",
    "map chapter": "Chapter",
    "map teaches": "What it teaches",
    "chapters caption": "Chapters",
    "guides caption": "Guides",
    "author": "the attention-notebooks contributors",  # the foot of every page: "By …", "© Copyright 2026, …"
    # Two names a screen reader says for the theme's navigation landmarks, which the theme writes in English
    # whatever the language (aria-label="Main", "Page"): build_site.name_landmarks writes these instead.
    "sidebar landmark": "Main",
    "page landmark": "Page",
}

# What an explorer is called in its picture's alt text: its name (a declaration's ``name``, as in
# d2lmini.widgets.DECLARATIONS) in words, "KernelPoolingExplorer": "kernel pooling".
EXPLORER_NAMES = [declaration.name for declaration in DECLARATIONS]


def explorer_words(name):
    """An explorer's name in English words: "KernelPoolingExplorer" -> "kernel pooling"."""
    return re.sub(r"(?<!^)(?=[A-Z])", " ", name.removesuffix("Explorer")).lower()


# Each translation of the sentences above, keyed by the English text it translates (docs/pt/glossario.md's terms).
TRANSLATED = {
    "pt": {
        "<strong>Run this chapter</strong> (its learner edition, sliders live): {links}":
            "<strong>Execute este capítulo</strong> (a edição do aluno, com os controles deslizantes funcionando): "
            "{links}",
        "your course's hub": "o hub do seu curso",
        "*On this page the options cannot be picked: run the chapter (links at the top) to choose one and see what "
        "the check says about it.*":
            "*Nesta página não dá para escolher uma opção: execute o capítulo (links no alto da página) para escolher "
            "uma e "
            "ver o que a verificação diz sobre ela.*",
        "The {words} explorer's picture at its first settings ({settings}); with JavaScript it becomes live, with a "
        "text summary of what it shows.":
            "A imagem do explorador “{words}” nas configurações iniciais ({settings}); com JavaScript, ela se torna "
            "interativa e traz um resumo em texto do que mostra.",
        "A recorded training run's attention ({run}, training step {step}): the cross-attention of one example, "
        "and the held-out accuracy and alignment over the run; with JavaScript it becomes live: pick a recorded "
        "run, then step through it or play it.":
            "A atenção de uma execução de treino gravada ({run}, passo de treino {step}): a atenção cruzada de "
            "um exemplo, e a acurácia no conjunto reservado e o alinhamento ao longo da execução; com JavaScript, "
            "ela se torna interativa: escolha uma execução gravada e avance passo a passo ou reproduza-a.",
        "A figure (its chapter's notebook has no alt text for it).":
            "Uma figura (o notebook do capítulo não tem texto alternativo para ela).",
        "The exercises are stubs here, as in the notebooks a learner runs: their answers are on no page of this "
        "site.":
            "Aqui os exercícios são esqueletos para completar, como nos notebooks que o aluno executa: as respostas "
            "deles não estão em nenhuma página deste site.",
        "**This is the instructor edition: every exercise shows its answer.** Keep it off any address your "
        "learners can reach.":
            "**Esta é a edição do instrutor: cada exercício mostra a sua resposta.** Não a coloque em nenhum endereço "
            "que os seus alunos possam acessar.",
        ", or on your course's **JupyterHub**": ", ou no **JupyterHub** do seu curso",
        "[the repository]({url})": "[o repositório]({url})",
        "Chapter": "Capítulo",
        "What it teaches": "O que ensina",
        "Chapters": "Capítulos",
        "Guides": "Guias",
        "the attention-notebooks contributors": "colaboradores do attention-notebooks",
        "Main": "Principal",
        "Page": "Ações da página",  # the header's buttons: download, full screen, language
        # The explorers' names (explorer_words).
        "query pooling": "pooling de uma consulta",
        "kernel pooling": "pooling com kernel",
        "masked softmax": "softmax mascarado",
        "mask editor": "editor de máscaras",
        "additive": "atenção aditiva",
        "dot product": "produto escalar",
        "shape tracer": "rastreador de formatos",
        "multi head": "atenção multi-cabeça",
        "online softmax": "softmax online",
        "positional encoding": "codificação posicional",
        "alignment": "alinhamento",
        "head view": "visão das cabeças",
    },
}

# The chapter map's lines, translated: notebook stem -> (the English line's record, the line). The record is the
# first 12 hexadecimal digits of the SHA-256 of the English line in docs/chapters.md (english_record).
CHAPTER_ROWS = {
    "pt": {
        "00_start_here": (
            "3dc2a7122c8f",
            "o pooling de atenção como uma média ponderada de valores, calculada à mão e verificada com o `d2lmini`; "
            "como ler um mapa de calor; um primeiro explorador (uma consulta sobre seis chaves, pontuadas pela "
            "proximidade ou pelo produto); CPU ou GPU; como usar os notebooks; o mapa"),
        "01_attention_pooling": (
            "115f0a2adeef",
            "a regressão de Nadaraya–Watson em dados gerados: o pooling pela média, quatro kernels, as linhas NaN do "
            "k/Σk ingênuo com uma largura pequena e a ausência delas na versão em espaço logarítmico, a largura como "
            "o botão de ajuste, uma largura aprendível treinada com e sem leave-one-out, a ponte para a pontuação "
            "por produto escalar"),
        "02_masked_softmax": (
            "fbccf0c55ab1",
            "o preenchimento, `sequence_mask`, o `masked_softmax` com comprimentos válidos 1-D e 2-D (verificado com "
            "os pesos da SDPA), −1e6 virando −inf em float16 e o que isso faz com uma linha toda mascarada, a regra "
            "das linhas de zeros, as máscaras causais; um editor de máscaras: clique em células consulta × chave, "
            "ou escolha preenchimento, causal ou uma linha vazia, e observe os pesos"),
        "03_additive_attention": (
            "6c2d4f7201a3",
            "w_vᵀ tanh(W_q q + W_k k) por broadcasting; o exemplo de brinquedo que devolve exatamente [2, 3, 4, 5] e "
            "[10, 11, 12, 13]; a forma com concatenação W_a[q; k], que se mostra igual; consultas e chaves de "
            "tamanhos diferentes"),
        "04_scaled_dot_product": (
            "18143a3a9df6",
            "softmax(QKᵀ/√d)V igual a `F.scaled_dot_product_attention`; Var(qᵀk) medida em função de d, com e sem "
            "a escala; a saturação; o gradiente nas pontuações encolhe enquanto o gradiente em q se concentra em "
            "poucas linhas, e a escala corrige os dois; autoatenção causal em \"Ela comeu uma manga.\" / \"A camisa "
            "tem manga.\""),
        "05_multi_head_attention": (
            "31ac6cfa5030",
            "as cabeças dobradas para dentro do lote, iguais a `nn.MultiheadAttention` depois de copiados os pesos; o "
            "erro de divisibilidade; mapas de calor por cabeça em uma única escala; um rastreador de formatos (figura "
            "e explorador) que mostra onde `transpose_qkv` põe cada característica, e como um reshape sem a "
            "transposição mistura as posições"),
        "06_efficient_attention": (
            "45fd21cce1c3",
            "por que a memória do caminho explícito cresce como n²; a atenção em blocos com o softmax online, "
            "construída do zero e igual ao caminho explícito, guardando n × bloco pontuações em vez de n × n; um "
            "explorador que percorre os blocos; o caminho rápido do `d2lmini` (SDPA), igual ao explícito; (mais a "
            "fundo) os bytes das máscaras e tempos medidos na hora"),
        "07_self_attention_positional_encoding": (
            "fa197d5ecb3d",
            "a autoatenção é equivariante a permutações (tokens embaralhados dão saídas embaralhadas, com erro medido "
            "abaixo de 1e-6) até que as posições sejam somadas; a codificação posicional senoidal do zero, verificada "
            "com `d2lmini.PositionalEncoding`; a analogia do contador binário; um deslocamento como uma rotação de "
            "cada par (sen, cos), ajustada para vários deslocamentos; a similaridade em função da distância; os custos "
            "de CNN, RNN e autoatenção, contados"),
        "08_attention_that_learns": (
            "a849ebf95e99",
            "um codificador–decodificador minúsculo (13.642 parâmetros) sobre a própria atenção do `d2lmini`, "
            "treinado ao vivo em uma CPU para inverter e para ordenar sequências de dígitos, com uma barra de "
            "progresso, uma curva de perda e o mapa de calor da atenção cruzada redesenhado durante o treino, e um "
            "botão Treinar/Parar; o \"estalo\" do alinhamento em instantâneos; sem codificação posicional, a "
            "inversão fica em 0% (e por quê); aditiva versus produto escalar; sequências mais longas que as do "
            "treino; quando o mapa de calor engana"),
        "09_pretrained_attention": (
            "d5a17f0a9625",
            "um modelo treinado de verdade, offline: primeiro as 72 cabeças do all-MiniLM-L6-v2 (seus mapas, um "
            "explorador, cabeças com uma função encontradas por uma pontuação: a cabeça 2 da camada 0 dá 1,00 da "
            "atenção de cada palavra ao token anterior), as cabeças \"it\" → \"animal\", que, como se mostra, buscam "
            "substantivos em vez de resolver o pronome, as incorporações de frases; depois uma camada do BERT "
            "verificada com o `d2lmini` e, mais a fundo, safetensors e WordPiece do zero"),
    },
}

# Each translated landing page (site/<folder>/index.md, written whole in its language): the record of the
# English landing page, site/index.md, it was made from (english_record).
LANDING_RECORDS = {"pt": "072e68c9b90e"}


def english_record(text):
    """What a translation records of the English it was made from: the start of its SHA-256."""
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def say(folder, english, **fields):
    """``english`` (a text of ``ENGLISH`` or an explorer's words) in the language of ``folder`` ("en", "pt"),
    its fields filled; the English where the translation has none yet (``untranslated`` names it)."""
    text = english if folder == "en" else TRANSLATED[folder].get(english, english)
    return text.format(**fields) if fields else text


def words(folder, name, **fields):
    """The site's sentence ``name`` (a key of ``ENGLISH``) in the language of ``folder``, its fields filled."""
    return say(folder, ENGLISH[name], **fields)


def _fields(text):
    return {field for _, field, _, _ in string.Formatter().parse(text) if field}


def site_english():
    """Every English text the site writes on its pages: its sentences and its explorers' names."""
    return list(ENGLISH.values()) + [explorer_words(name) for name in EXPLORER_NAMES]


def untranslated(folder, english=None, translated=None):
    """One line for each English text of the site (``english``, by default ``site_english()``) that the
    translation ``translated`` (by default ``TRANSLATED[folder]``) lacks or gives other {fields}, and for
    each translation made from an English text the site no longer writes."""
    english = site_english() if english is None else english
    translated = TRANSLATED[folder] if translated is None else translated
    where = f"TRANSLATED[{folder!r}] in tools/site_words.py"
    lines = [f"no translation of {text!r}: the English is new or changed; translate it in {where}"
             for text in english if text not in translated]
    lines += [f"{text!r} has the fields {sorted(_fields(translated[text]))}, the English "
              f"{sorted(_fields(text))}: fix it in {where}"
              for text in english if text in translated and _fields(translated[text]) != _fields(text)]
    lines += [f"a translation of {text!r}, which the site no longer writes: remove it from {where}"
              for text in translated if text not in english]
    return lines


def stale_rows(folder, english_rows, rows=None):
    """One line for each chapter whose translated map line (``rows``, by default ``CHAPTER_ROWS[folder]``)
    was not made from its English line now in docs/chapters.md (``english_rows``: stem -> line)."""
    rows = CHAPTER_ROWS[folder] if rows is None else rows
    where = f"CHAPTER_ROWS[{folder!r}] in tools/site_words.py"
    lines = [f"{stem}: no translated line in {where}" for stem in english_rows if stem not in rows]
    lines += [f"{stem}: made from another English line; translate it again and record "
              f"{english_record(english_rows[stem])!r} in {where}. The English now reads: {english_rows[stem]!r}"
              for stem in english_rows if stem in rows and rows[stem][0] != english_record(english_rows[stem])]
    lines += [f"{stem}: a line for a chapter that docs/chapters.md does not list; remove it from {where}"
              for stem in rows if stem not in english_rows]
    return lines


def stale_landing(folder, english_landing):
    """A line when the landing page of ``folder`` was made from another English landing page than
    ``english_landing`` (site/index.md's text), else None."""
    record = english_record(english_landing)
    if LANDING_RECORDS[folder] == record:
        return None
    return (f"site/{folder}/index.md was made from another English landing page: bring it in step with "
            f"site/index.md, then record {record!r} in LANDING_RECORDS[{folder!r}] in tools/site_words.py")
