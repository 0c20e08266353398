# W7.7 The training benchmark
"""bench-evidence.py: chapter 7's model in PyTorch, training tokens/s."""
import sys
import time
try:
    import torch
    import torch.nn.functional as fn
except ImportError:
    print("PyTorch is not installed (Debian: python3-torch): skipped")
    sys.exit(0)

V, D, LAYERS, H, HKV, F, T, B = 64, 64, 2, 4, 2, 192, 256, 8
HD = D // H
THREADS = int(sys.argv[sys.argv.index("--threads") + 1]) \
    if "--threads" in sys.argv else 1
torch.set_num_threads(THREADS)
torch.manual_seed(1)
DT = torch.float32
MASK = torch.full((T, T), float("-inf"), dtype=DT).triu(1)


def rotate_half(x):
    return torch.cat((-x[..., HD // 2:], x[..., :HD // 2]), dim=-1)


def rms(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        lin = lambda i, o: torch.nn.Linear(i, o, bias=False, dtype=DT)
        one = lambda n: torch.nn.Parameter(torch.ones(n, dtype=DT))
        self.n1, self.n2, self.qn, self.kn = one(D), one(D), one(HD), one(HD)
        self.q, self.k, self.v = lin(D, D), lin(D, HKV * HD), lin(D, HKV * HD)
        self.o, self.up, self.down = lin(D, D), lin(D, F), lin(F, D)
        self.gate = lin(D, F)

    def forward(self, x, cos, sin):
        h = rms(x, self.n1)
        q = rms(self.q(h).view(B, T, H, HD), self.qn)
        k = rms(self.k(h).view(B, T, HKV, HD), self.kn)
        v = self.v(h).view(B, T, HKV, HD)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(H // HKV, dim=2)
        v = v.repeat_interleave(H // HKV, dim=2)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        if hasattr(fn, "scaled_dot_product_attention"):
            a = fn.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # PyTorch before 2.0: the softmax written out
            s = q @ k.transpose(-1, -2) / HD ** 0.5 + MASK
            a = torch.softmax(s, dim=-1) @ v
        x = x + self.o(a.transpose(1, 2).reshape(B, T, D))
        h = rms(x, self.n2)
        return x + self.down(fn.silu(self.gate(h)) * self.up(h))
head = torch.nn.Linear(D, V, bias=False, dtype=DT)
blocks = torch.nn.ModuleList(Block() for _ in range(LAYERS))
norm = torch.nn.Parameter(torch.ones(D, dtype=DT))
params = [head.weight, norm] + list(blocks.parameters())
opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01)
inv = 1.0 / (1e4 ** (torch.arange(0, HD, 2, dtype=DT) / HD))
ang = torch.outer(torch.arange(T, dtype=DT), inv)
cos = torch.cat([ang.cos(), ang.cos()], -1).view(1, T, 1, HD)
sin = torch.cat([ang.sin(), ang.sin()], -1).view(1, T, 1, HD)


def step():
    x = torch.randint(0, V, (B, T))
    y = torch.randint(0, V, (B, T))
    h = head.weight[x]
    for blk in blocks:
        h = blk(h, cos, sin)
    loss = fn.cross_entropy(head(rms(h, norm)).view(-1, V), y.view(-1))
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()


steps = int(sys.argv[sys.argv.index("--steps") + 1]) \
    if "--steps" in sys.argv else 8
for _ in range(2):
    step()
best = 0.0
for _ in range(3):
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    best = max(best, steps * B * T / (time.perf_counter() - t0))
print("tokens/s %.1f" % best)
