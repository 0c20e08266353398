# W8d.2 A second model in NumPy
"""minimind_numpy.py: MiniMind's forward pass in NumPy, float32.

    model = MiniMindNumpy("model.rope-minimind")
    logits = model.forward([1, 2, 3])          # [3, vocab_size]

Reads a rope-minimind file and computes MiniMindForCausalLM's logits
for one sequence from position 0, with no cache: a second
implementation, written from the model's definition for the tests
and not from the C, so that the C is compared with something other
than itself.  The book's chapter "Workshop: MiniMind's weights,
tokens and its own code" explains this file.
"""
import math

import numpy as np


INTS = ("hidden_size", "num_hidden_layers", "num_attention_heads",
        "num_key_value_heads", "head_dim", "intermediate_size",
        "vocab_size", "max_position_embeddings", "use_moe", "num_experts",
        "num_experts_per_tok", "moe_intermediate_size", "norm_topk_prob")


def read(path):
    """(configuration, {name: float32 array}) of a rope-minimind file."""
    config, shapes, start = {}, [], None
    with open(path, "rb") as f:
        if f.readline() != b"rope-minimind 1\n":
            raise ValueError("%s: not a rope-minimind 1 file" % path)
        while start is None:
            words = f.readline().decode("ascii").split()
            if not words:
                raise ValueError("%s: the header ends before data" % path)
            if words[0] == "tensor":
                shapes.append((words[1], tuple(int(w) for w in words[3:])))
            elif words[0] == "data":
                start = int(words[1])
            else:
                config[words[0]] = (int(words[1]) if words[0] in INTS
                                    else float(words[1]))
    data = np.memmap(path, "<f4", "r", offset=start)
    weights, at = {}, 0
    for name, shape in shapes:
        n = int(np.prod(shape))
        weights[name] = data[at:at + n].reshape(shape)
        at += n
    if at != data.size:
        raise ValueError("%s: %d floats of data, the tensors hold %d"
                         % (path, data.size, at))
    return config, weights


F = np.float32


def rope_tables(c, n, yarn):
    """cos, sin [n, head_dim] as MiniMind's precompute_freqs_cis makes
    them in float32 (rows 0..n-1 of its tables), YaRN if asked."""
    d, theta = c["head_dim"], c["rope_theta"]
    exponent = np.arange(0, d, 2, dtype=F) / F(d)
    freqs = F(1) / np.power(F(theta), exponent)
    end, original = c["max_position_embeddings"], 2048
    if yarn and end / original > 1:
        def dim_of(turns):
            return (d * math.log(original / (turns * 2 * math.pi))
                    / (2 * math.log(theta)))
        low = max(math.floor(dim_of(32)), 0)
        high = min(math.ceil(dim_of(1)), d // 2 - 1)
        ramp = (np.arange(d // 2, dtype=F) - F(low)) / F(max(high - low,
                                                               0.001))
        ramp = np.clip(ramp, F(0), F(1))
        freqs = freqs * (F(1) - ramp + ramp / F(16))
    angles = np.arange(n, dtype=F)[:, None] * freqs[None, :]
    cos, sin = np.cos(angles), np.sin(angles)
    return np.concatenate([cos, cos], 1), np.concatenate([sin, sin], 1)


def rms_norm(x, weight, eps):
    """x * (mean of squares + eps)^(-1/2), scaled: RMSNorm over the last
    axis."""
    mean = np.mean(x * x, axis=-1, keepdims=True, dtype=F)
    return weight * (x * (F(1) / np.sqrt(mean + F(eps))))


def rotate(x, cos, sin):
    """x [n, heads, d]: each position's vector turned by its angles."""
    half = x.shape[-1] // 2
    turned = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos[:, None, :] + turned * sin[:, None, :]


def silu(x):
    return x / (F(1) + np.exp(-x))


def feed_forward(x, w, p):
    gate = x @ w[p + "gate_proj.weight"].T
    return (silu(gate) * (x @ w[p + "up_proj.weight"].T)) \
        @ w[p + "down_proj.weight"].T


def attention(x, w, p, c, cos, sin):
    """One Attention.forward over all n positions, causal, no cache."""
    n, d = x.shape[0], c["head_dim"]
    heads, kv_heads = c["num_attention_heads"], c["num_key_value_heads"]
    q = (x @ w[p + "q_proj.weight"].T).reshape(n, heads, d)
    k = (x @ w[p + "k_proj.weight"].T).reshape(n, kv_heads, d)
    v = (x @ w[p + "v_proj.weight"].T).reshape(n, kv_heads, d)
    eps = c["rms_norm_eps"]
    q = rotate(rms_norm(q, w[p + "q_norm.weight"], eps), cos, sin)
    k = rotate(rms_norm(k, w[p + "k_norm.weight"], eps), cos, sin)
    out = np.empty((n, heads, d), F)
    later = np.triu(np.ones((n, n), bool), 1)
    for h in range(heads):
        g = h // (heads // kv_heads)     # the key/value head it shares
        scores = (q[:, h] @ k[:, g].T) / F(math.sqrt(d))
        scores[later] = -np.inf
        e = np.exp(scores - scores.max(axis=1, keepdims=True))
        out[:, h] = (e / e.sum(axis=1, keepdims=True)) @ v[:, g]
    return out.reshape(n, heads * d) @ w[p + "o_proj.weight"].T


def moe(x, w, p, c):
    """MOEFeedForward: each position through its top-k experts."""
    logits = x @ w[p + "gate.weight"].T
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    scores = e / e.sum(axis=1, keepdims=True)
    k = c["num_experts_per_tok"]
    top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    weight = np.take_along_axis(scores, top, axis=1)
    if c["norm_topk_prob"]:
        weight = weight / (weight.sum(axis=1, keepdims=True) + F(1e-20))
    y = np.zeros_like(x)
    for expert in range(c["num_experts"]):
        rows, slot = np.nonzero(top == expert)
        if rows.size:
            out = feed_forward(x[rows], w, p + "experts.%d." % expert)
            y[rows] += out * weight[rows, slot][:, None]
    return y


class MiniMindNumpy:
    def __init__(self, path):
        self.config, self.weights = read(path)

    def tables(self, n, yarn, start=0):
        """cos, sin of the positions start .. start + n - 1."""
        cos, sin = rope_tables(self.config, start + n, yarn)
        return cos[start:], sin[start:]

    def block(self, layer, h, cos, sin):
        """MiniMindBlock.forward of layer on the hidden states h [n, hidden]."""
        c, w = self.config, self.weights
        p, eps = "model.layers.%d." % layer, c["rms_norm_eps"]
        x = rms_norm(h, w[p + "input_layernorm.weight"], eps)
        h = h + attention(x, w, p + "self_attn.", c, cos, sin)
        x = rms_norm(h, w[p + "post_attention_layernorm.weight"], eps)
        return h + (moe(x, w, p + "mlp.", c) if c["use_moe"]
                    else feed_forward(x, w, p + "mlp."))

    def head(self, h):
        """The final norm and the tied lm_head: logits [n, vocab_size]."""
        w = self.weights
        h = rms_norm(h, w["model.norm.weight"], self.config["rms_norm_eps"])
        return h @ w["model.embed_tokens.weight"].T

    def forward(self, ids, yarn=False, states=None, start=0):
        """logits [n, vocab_size], float32, of the tokens ids[0..n-1] at the
        positions start ..; states, a list, receives each block's input and
        the final norm's."""
        w = self.weights
        ids = np.asarray(ids, np.int64)
        cos, sin = self.tables(len(ids), yarn, start)
        h = np.array(w["model.embed_tokens.weight"][ids], F)
        for layer in range(self.config["num_hidden_layers"]):
            if states is not None:
                states.append(h)
            h = self.block(layer, h, cos, sin)
        if states is not None:
            states.append(h)
        return self.head(h)
