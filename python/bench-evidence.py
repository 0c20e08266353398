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

V, D, LAYERS, H, HKV, F, T, B = 32, 64, 2, 4, 2, 192, 32, 16
HD = D // H
torch.set_num_threads(1)
torch.manual_seed(1)
DT = torch.float64
def rotate_half(x):
    return torch.cat((-x[..., HD // 2:], x[..., :HD // 2]), dim=-1)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        lin = lambda i, o: torch.nn.Linear(i, o, bias=False, dtype=DT)
        self.n1 = torch.nn.Parameter(torch.ones(D, dtype=DT))
        self.n2 = torch.nn.Parameter(torch.ones(D, dtype=DT))
        self.q, self.k, self.v = lin(D, D), lin(D, HKV * HD), lin(D, HKV * HD)
        self.o, self.up, self.down = lin(D, D), lin(D, F), lin(F, D)
        self.gate = lin(D, F)

    def forward(self, x, cos, sin, mask):
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * self.n1
        q = self.q(h).view(B, T, H, HD)
        k = self.k(h).view(B, T, HKV, HD)
        v = self.v(h).view(B, T, HKV, HD)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(H // HKV, dim=2)
        v = v.repeat_interleave(H // HKV, dim=2)
        s = q.transpose(1, 2) @ k.transpose(1, 2).transpose(-1, -2)
        p = torch.softmax(s / HD ** 0.5 + mask, dim=-1)
        a = (p @ v.transpose(1, 2)).transpose(1, 2).reshape(B, T, D)
        x = x + self.o(a)
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * self.n2
        return x + self.down(fn.silu(self.gate(h)) * self.up(h))
emb = torch.nn.Parameter(torch.randn(V, D, dtype=DT))
blocks = torch.nn.ModuleList(Block() for _ in range(LAYERS))
norm = torch.nn.Parameter(torch.ones(D, dtype=DT))
params = [emb, norm] + list(blocks.parameters())
opt = torch.optim.AdamW(params, lr=3e-3, weight_decay=0.01)
inv = 1.0 / (1e4 ** (torch.arange(0, HD, 2, dtype=DT) / HD))
ang = torch.outer(torch.arange(T, dtype=DT), inv)
cos = torch.cat([ang.cos(), ang.cos()], -1).view(1, T, 1, HD)
sin = torch.cat([ang.sin(), ang.sin()], -1).view(1, T, 1, HD)
mask = torch.full((T, T), float("-inf"), dtype=DT).triu(1)


def step():
    half = torch.randint(0, V, (B, T // 2))
    x = torch.cat([half, half], 1)
    y = torch.full((B, T), -1)
    y[:, T // 2 - 1:T - 1] = x[:, T // 2:]
    h = emb[x]
    for blk in blocks:
        h = blk(h, cos, sin, mask)
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-5) * norm
    loss = fn.cross_entropy((h @ emb.t()).view(-1, V), y.view(-1),
                            ignore_index=-1)
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()


steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 10
for _ in range(2):
    step()
best = 0.0
for _ in range(3):
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    best = max(best, steps * B * T / (time.perf_counter() - t0))
print("tokens/s %.1f" % best)
