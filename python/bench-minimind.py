# W8c.9 Recording the numbers
"""bench-minimind.py: a model of MiniMind's default shape in plain
PyTorch (not MiniMind's code), prefill and decode tokens/s (W8c)."""
import os
import resource
import sys
import time


def arg(name, default):
    return int(sys.argv[sys.argv.index(name) + 1]) \
        if name in sys.argv else default


THREADS, PROMPT = arg("--threads", 1), arg("--prompt", 512)
DPROMPT, DECODE, REPS = arg("--decode-prompt", 64), arg("--decode", 128), \
    arg("--reps", 3)
# the BLAS library starts its own threads: as many as PyTorch's
os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = \
    str(THREADS)
try:
    import torch
    import torch.nn.functional as fn
except ImportError:
    print("PyTorch is not installed (Debian: python3-torch): skipped")
    sys.exit(0)
D, LAYERS, H, HKV, HD, F, V = 768, 8, 8, 4, 96, 2432, 6400
THETA, EPS = 1e6, 1e-6
torch.set_num_threads(THREADS)
torch.manual_seed(1)
class RMSNorm(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(n))

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, True) + EPS))


def rotate_half(x):
    return torch.cat((-x[..., HD // 2:], x[..., :HD // 2]), dim=-1)


def linear(i, o):
    return torch.nn.Linear(i, o, bias=False)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm, self.post_attention_layernorm = \
            RMSNorm(D), RMSNorm(D)
        self.q_proj, self.o_proj = linear(D, H * HD), linear(H * HD, D)
        self.k_proj, self.v_proj = linear(D, HKV * HD), linear(D, HKV * HD)
        self.q_norm, self.k_norm = RMSNorm(HD), RMSNorm(HD)
        self.gate_proj, self.up_proj = linear(D, F), linear(D, F)
        self.down_proj = linear(F, D)

    def forward(self, x, cos, sin, cache):
        b, t, _ = x.shape
        h = self.input_layernorm(x)
        q = self.q_norm(self.q_proj(h).view(b, t, H, HD))
        k = self.k_norm(self.k_proj(h).view(b, t, HKV, HD))
        v = self.v_proj(h).view(b, t, HKV, HD)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        if cache is not None:
            k, v = torch.cat([cache[0], k], 1), torch.cat([cache[1], v], 1)
        cache = (k, v)
        q = q.transpose(1, 2)
        k = k.repeat_interleave(H // HKV, dim=2).transpose(1, 2)
        v = v.repeat_interleave(H // HKV, dim=2).transpose(1, 2)
        s = q @ k.transpose(-1, -2) / HD ** 0.5
        if t > 1:
            n = k.shape[2]
            s = s + torch.full((t, n), float("-inf")).triu(n - t + 1)
        a = torch.softmax(s, dim=-1) @ v
        x = x + self.o_proj(a.transpose(1, 2).reshape(b, t, H * HD))
        h = self.post_attention_layernorm(x)
        g = fn.silu(self.gate_proj(h)) * self.up_proj(h)
        return x + self.down_proj(g), cache


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = torch.nn.Embedding(V, D)
        self.layers = torch.nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = RMSNorm(D)
        inv = 1.0 / THETA ** (torch.arange(0, HD, 2).float() / HD)
        ang = torch.outer(torch.arange(PROMPT + DPROMPT + DECODE).float(),
                          inv)
        self.cos = torch.cat([ang.cos(), ang.cos()], -1)
        self.sin = torch.cat([ang.sin(), ang.sin()], -1)

    def forward(self, ids, caches):
        past = caches[0][0].shape[1] if caches[0] is not None else 0
        t = ids.shape[1]
        cos = self.cos[past:past + t].unsqueeze(1)
        sin = self.sin[past:past + t].unsqueeze(1)
        x = self.embed_tokens(ids)
        for i, layer in enumerate(self.layers):
            x, caches[i] = layer(x, cos, sin, caches[i])
        x = self.norm(x)
        return fn.linear(x[:, -1:, :], self.embed_tokens.weight)
def blas():
    with open("/proc/self/maps") as f:
        for line in f:
            if "blas" in line and "/" in line:
                return os.path.realpath(line[line.index("/"):].strip())
    return "unknown"


model = Model()
ids = torch.randint(0, V, (1, PROMPT + DECODE))
best_prefill = best_decode = 0.0
with torch.inference_mode():
    for rep in range(-1, REPS):
        t0 = time.perf_counter()
        model(ids[:, :PROMPT], [None] * LAYERS)
        t1 = time.perf_counter()
        caches = [None] * LAYERS
        model(ids[:, :DPROMPT], caches)
        t2 = time.perf_counter()
        for k in range(DECODE):
            model(ids[:, DPROMPT + k:DPROMPT + k + 1], caches)
        t3 = time.perf_counter()
        if rep >= 0:
            best_prefill = max(best_prefill, PROMPT / (t1 - t0))
            best_decode = max(best_decode, DECODE / (t3 - t2))
print("prefill %.3f" % best_prefill)
print("decode %.3f" % best_decode)
print("rss_mib %.1f" % (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                        / 1024))
print("torch %s" % torch.__version__)
print("blas %s" % blas())
