# W8d.5 MiniMind's own code beside the C
"""crosscheck_model.py: MiniMind's whole model beside the rope book's C.

    python3 python/crosscheck_model.py --minimind /path/to/minimind \\
        [--rope build/rope] [--seeds 1 2 3]

Builds MiniMindForCausalLM from the syntax tree of the reader's
model/model_minimind.py (transformers is replaced by four small
stand-ins), draws seeded random weights at MiniMind's default
configuration, dense and MoE, converts them with minimind_convert.py,
and compares each block and the head of `rope generate`, computed from
MiniMind's own hidden states, with MiniMind's within twice the bound of
the block's reference (--block-reference), with and without YaRN; it
measures the end-to-end difference of the logits, with no bound, and
requires 64 greedy tokens with the cache to be the same.  The book's
chapter "Workshop: MiniMind's weights, tokens and its own code"
explains this file.  Exit status 0 when no row fails, 1 if one does
(an undecided route of the MoE is not a failure), 2 for a usage error.
"""
import argparse
import ast
import datetime
import math
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from crosscheck import commit_of, cpu_model, BOOK_COMMIT  # noqa: E402

WANTED = ("MiniMindConfig", "RMSNorm", "precompute_freqs_cis",
          "apply_rotary_pos_emb", "repeat_kv", "Attention", "FeedForward",
          "MOEFeedForward", "MiniMindBlock", "MiniMindModel",
          "MiniMindForCausalLM")


def stand_ins(torch):
    """What model_minimind.py imports from transformers, reduced to what
    MiniMindForCausalLM uses of it."""
    class PretrainedConfig:
        def __init__(self, **kwargs):
            pass

    class PreTrainedModel(torch.nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config

        def post_init(self):
            """transformers' _init_weights for this model: N(0, 0.02)
            for every Linear and Embedding weight; norms stay ones."""
            for m in self.modules():
                if isinstance(m, (torch.nn.Linear, torch.nn.Embedding)):
                    torch.nn.init.normal_(m.weight, 0.0, 0.02)

    class GenerationMixin:
        pass

    class MoeCausalLMOutputWithPast:
        def __init__(self, **fields):
            self.__dict__.update(fields)

    return {"PretrainedConfig": PretrainedConfig,
            "PreTrainedModel": PreTrainedModel,
            "GenerationMixin": GenerationMixin,
            "MoeCausalLMOutputWithPast": MoeCausalLMOutputWithPast,
            "ACT2FN": {"silu": torch.nn.SiLU()}}


def load_minimind(path, torch):
    """MiniMind's definitions as a dict, and each one's (first, last) line."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    found = {node.name: node for node in tree.body
             if isinstance(node, (ast.FunctionDef, ast.ClassDef))
             and node.name in WANTED}
    missing = [name for name in WANTED if name not in found]
    if missing:
        usage_error("%s defines no %s" % (path, ", ".join(missing)))
    module = ast.Module(body=[found[name] for name in WANTED], type_ignores=[])
    namespace = {"math": math, "torch": torch, "nn": torch.nn,
                 "F": torch.nn.functional}
    namespace.update(stand_ins(torch))
    exec(compile(module, path, "exec"), namespace)
    lines = {name: (found[name].lineno, found[name].end_lineno)
             for name in WANTED}
    return namespace, lines


def usage_error(message):
    print("crosscheck_model: error: " + message, file=sys.stderr)
    sys.exit(2)


def build(mm, torch, use_moe, seed, wide):
    """MiniMindForCausalLM at the default configuration, seeded: its own
    initialisation, or (wide) N(0, 0.1) matrices and norms in [0.5, 1.5]
    so that every weight of a norm matters and the logits spread."""
    torch.manual_seed(seed)
    model = mm["MiniMindForCausalLM"](mm["MiniMindConfig"](use_moe=use_moe))
    if wide:
        with torch.no_grad():
            for name, p in model.named_parameters():
                if p.dim() == 2:
                    p.normal_(0.0, 0.1)
                else:
                    p.uniform_(0.5, 1.5)
    return model.eval()


def with_yarn(mm, torch, model, use_moe):
    """The same weights under inference_rope_scaling=True."""
    config = mm["MiniMindConfig"](use_moe=use_moe,
                                  inference_rope_scaling=True)
    other = mm["MiniMindForCausalLM"](config)
    other.load_state_dict(model.state_dict())
    return other.eval()


class Rope:
    """`rope generate` on a converted model file."""
    def __init__(self, cli, work, threads):
        self.cli, self.work, self.threads = cli, work, threads

    def file(self, name):
        return os.path.join(self.work, name)

    def run(self, model, ids, flags, undecided_ok=False):
        p = subprocess.run([self.cli, "generate", "--model", model, "--ids",
                            " ".join(map(str, ids)), "--threads",
                            str(self.threads)] + [str(f) for f in flags],
                           capture_output=True, text=True)
        last = (p.stderr.strip().splitlines() or [""])[-1]
        if p.returncode != 0 and not (undecided_ok and "undecided" in last):
            raise RuntimeError("rope generate: exit %d: %s"
                               % (p.returncode, last))
        return p.stdout, (last if p.returncode else "")

    def blocks(self, model, ids, states, yarn, chunk, reference):
        """C's block outputs [L, n, hidden] and head logits [n, vocab] from
        MiniMind's states; with reference also the reference's (exact,
        bound) of the blocks and of the head, and its undecided line."""
        np.save(self.file("S.npy"), states)
        flags = ["--max-new", 0, "--states", self.file("S.npy"),
                 "--block-outputs", self.file("O.npy"), "--logits",
                 self.file("Z.npy"), "--prefill-chunk", chunk]
        flags += ["--yarn"] if yarn else []
        flags += ["--block-reference", self.file("R")] if reference else []
        _, note = self.run(model, ids, flags, reference)
        out = [np.load(self.file("O.npy")), np.load(self.file("Z.npy"))]
        if reference:
            out += [np.load(self.file("R-blocks.npy")),
                    np.load(self.file("R-head.npy")), note,
                    np.load(self.file("R-norms.npy"))]
        return out

    def logits(self, model, ids, yarn):
        flags = ["--max-new", 0, "--logits", self.file("L.npy")]
        self.run(model, ids, flags + (["--yarn"] if yarn else []))
        return np.load(self.file("L.npy"))

    def greedy(self, model, ids, n):
        out, _ = self.run(model, ids, ["--max-new", n, "--temperature", 0,
                                       "--eos", -1])
        return [int(w) for w in out.split()][-n:]


def convert(state, work, use_moe, torch):
    pth, out = (os.path.join(work, name) for name in ("m.pth", "m.rope"))
    torch.save(state, pth)
    p = subprocess.run([sys.executable, os.path.join(HERE,
                                                     "minimind_convert.py"),
                        pth, out, "--use-moe", str(int(use_moe))],
                       capture_output=True, text=True)
    os.remove(pth)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip())
    return out


def capture(torch, model, ids):
    """MiniMind on ids: the states entering each block and the final norm
    [L+1, n, hidden], each block's output [L, n, hidden], the logits
    [n, vocab], all float32, and each MoE router's logits."""
    inputs, outputs, routers, hooks = [], [], [], []
    layers = model.model.layers
    for block in layers:
        hooks.append(block.register_forward_pre_hook(
            lambda m, args: inputs.append(args[0][0].detach().clone())))
        hooks.append(block.register_forward_hook(
            lambda m, args, out: outputs.append(out[0][0].detach().clone())))
        if hasattr(block.mlp, "gate"):
            hooks.append(block.mlp.gate.register_forward_hook(
                lambda m, args, out: routers.append(out.detach().clone())))
    hooks.append(model.model.norm.register_forward_pre_hook(
        lambda m, args: inputs.append(args[0][0].detach().clone())))
    try:
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0].numpy()
    finally:
        for h in hooks:
            h.remove()
    states = torch.stack(inputs).numpy()
    blocks = torch.stack(outputs).numpy()
    if states.shape[0] != len(layers) + 1 or \
            not np.array_equal(blocks, states[1:]):
        raise RuntimeError("MiniMind's blocks do not chain as expected")
    return states, blocks, logits, [r.numpy() for r in routers]


def margin(router_logits, k):
    """The smallest gap, over the positions, between the k-th and the
    (k+1)-th largest of the router's softmax scores."""
    z = router_logits.astype(np.float64)
    p = np.exp(z - z.max(axis=-1, keepdims=True))
    p = -np.sort(-(p / p.sum(axis=-1, keepdims=True)), axis=-1)
    return float(np.min(p[:, k - 1] - p[:, k]))


ROWS = []


def row(kind, model, rope, n, chunk, part, diff, bound, ratio, result,
        note=""):
    ROWS.append((kind, model, rope, n, chunk, part, diff, bound, ratio,
                 result))
    print(("%-9s %-14s %-4s %-5s %-5s %-4s %-10s %-10s %-9s %-9s %s"
           % (kind, model, rope, n, chunk, part, diff, bound, ratio,
              result, note)).rstrip())
    sys.stdout.flush()


def e(x):
    return "%.3e" % x


def within(kind, label, chunk, part, theirs, ours, ref, note=""):
    """One row: MiniMind's and C's outputs against 2 bounds, on the
    tokens whose routes are decided."""
    decided = np.all(np.isfinite(ref[1]), axis=-1)
    if not decided.any():
        row(kind, *label, chunk, part, "-", "inf", "-", "undecided", note)
        return
    exact, bound = ref[0][decided], ref[1][decided]
    theirs, ours = theirs[decided], ours[decided]
    diff = np.abs(ours.astype(np.float64) - theirs)
    ratio = float(np.max(diff / (2 * bound)))
    sides = "C/ref %.1e torch/ref %.1e bound/|out| %.1e" % (
        np.max(np.abs(ours - exact) / bound),
        np.max(np.abs(theirs - exact) / bound),
        np.max(bound) / np.max(np.abs(exact)))
    ok = ratio <= 1 and ours.shape == theirs.shape
    telling = 2 * np.max(bound) < np.max(np.abs(exact))
    result = ("pass" if telling else "vacuous") if ok else "FAIL"
    row(kind, *label, chunk, part, e(diff.max()), e(2 * bound.max()),
        "%.2e" % ratio, result, (note + " " + sides).strip())


def within_norm(label, chunk, part, theirs, ours, exact, nb):
    """One row: each token's output vectors, MiniMind's and C's, against
    2 norm bounds, on the tokens whose routes are decided."""
    decided = np.isfinite(nb)
    if not decided.any():
        row("norm", *label, chunk, part, "-", "inf", "-", "undecided")
        return
    nb, exact = nb[decided], exact[decided].astype(np.float64)
    theirs, ours = theirs[decided], ours[decided].astype(np.float64)
    diff = np.linalg.norm(ours - theirs, axis=-1)
    size = np.linalg.norm(exact, axis=-1)
    ratio = float(np.max(diff / (2 * nb)))
    telling = int(np.sum(2 * nb < size))
    sides = "C/ref %.1e torch/ref %.1e bound/|out| %.1e telling %d/%d" % (
        np.max(np.linalg.norm(ours - exact, axis=-1) / nb),
        np.max(np.linalg.norm(theirs - exact, axis=-1) / nb),
        np.max(nb / size), telling, len(nb))
    result = "FAIL" if not ratio <= 1 else "pass" if telling == len(nb) \
        else "partial" if telling else "vacuous"
    row("norm", *label, chunk, part, e(diff.max()), e(2 * nb.max()),
        "%.2e" % ratio, result, sides)


def compare(torch, mm, model, rope, path, ids, label, yarn, chunks):
    """Block by block and the head, each prefill chunk; then end to end."""
    states, blocks, logits, routers = capture(torch, model, ids)
    k = model.config.num_experts_per_tok
    reference = None
    for chunk in chunks:
        try:
            got = rope.blocks(path, ids, states, yarn, chunk,
                              reference is None)
        except RuntimeError as err:
            row("block", *label, chunk, "all", "-", "-", "-", "FAIL",
                str(err)[:100])
            return
        if reference is None:
            reference = got[2:]
        ref_blocks, ref_head, note, ref_norms = reference
        for layer in range(len(blocks)):
            why = ""
            open_ = ~np.all(np.isfinite(ref_blocks[1, layer]), axis=-1)
            if routers and open_.any():
                why = "undecided=%d/%d margin=%.2e" % (
                    open_.sum(), len(ids), margin(routers[layer][open_], k))
            within("block", label, chunk, layer, blocks[layer],
                   got[0][layer], ref_blocks[:, layer], why)
            within_norm(label, chunk, layer, blocks[layer], got[0][layer],
                        ref_blocks[0, layer], ref_norms[layer])
        within("head", label, chunk, "head", logits, got[1], ref_head)
    if len(ids) > 1:
        control(torch, mm, model, states, reference[0], reference[3],
                label)
    plain = rope.logits(path, ids, yarn)
    diff = float(np.max(np.abs(plain.astype(np.float64) - logits)))
    top = float(np.max(np.abs(logits)))
    row("e2e", *label, "-", "all", e(diff), e(top), "%.2e" % (diff / top),
        "measured")


def interleaved_rope(torch):
    """A wrong pairing: dimensions (0, 1), (2, 3), ... turned with
    MiniMind's tables, as code written for the other convention would."""
    def apply(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
        def turn(x):
            return torch.stack((-x[..., 1::2], x[..., 0::2]),
                               dim=-1).flatten(-2)
        c, s = cos.unsqueeze(unsqueeze_dim), sin.unsqueeze(unsqueeze_dim)
        return ((q * c + turn(q) * s).to(q.dtype),
                (k * c + turn(k) * s).to(k.dtype))
    return apply


def tiled_repeat_kv(torch):
    """A wrong grouping: query head h reads key-value head h mod Hkv
    (the heads tiled) instead of MiniMind's h // (H / Hkv)."""
    def repeat(x, n_rep):
        return torch.cat([x] * n_rep, dim=2)
    return repeat


MISTAKES = ("moved", "pairing", "heads")


def control(torch, mm, model, states, ref_blocks, ref_norms, label):
    """Can the block check fail? MiniMind's own blocks on the same
    inputs with a mistake: the last token moved one position on (only
    its output changes), or the wrong pairing (every token past the
    first). Is an output outside a bound that is informative there?"""
    n = states.shape[1]
    saved = mm["apply_rotary_pos_emb"], mm["repeat_kv"]
    for mistake in MISTAKES:
        pos = list(range(n - 1)) + [n] if mistake == "moved" else \
            list(range(n))
        rows = [n - 1] if mistake == "moved" else list(range(1, n))
        cos = model.model.freqs_cos[pos]
        sin = model.model.freqs_sin[pos]
        if mistake == "pairing":
            mm["apply_rotary_pos_emb"] = interleaved_rope(torch)
        if mistake == "heads":
            mm["repeat_kv"] = tiled_repeat_kv(torch)
        try:
            caught, telling, worst = control_blocks(
                torch, model, states, ref_blocks, ref_norms, rows,
                (cos, sin))
        finally:
            mm["apply_rotary_pos_emb"], mm["repeat_kv"] = saved
        row("control", *label, "-", mistake, "%d/%d" % (caught, telling),
            "-", "%.2e" % worst, "vacuous" if telling == 0 else
            "caught" if caught == telling else "partly" if caught else
            "within")


def control_blocks(torch, model, states, ref_blocks, ref_norms, rows, rope):
    """Over the blocks: how many have a token of rows whose bound,
    entrywise or in norm, is informative, in how many of those such a
    token's output falls outside a bound, and the largest difference
    of a token's output from the exact one over its norm bound."""
    caught = telling = 0
    worst = 0.0
    with torch.no_grad():
        for layer, block in enumerate(model.model.layers):
            exact = ref_blocks[0, layer, rows]
            bound, nb = ref_blocks[1, layer, rows], ref_norms[layer, rows]
            tell = np.isfinite(nb) & (
                (2 * bound.max(axis=-1) < np.abs(exact).max(axis=-1))
                | (2 * nb < np.linalg.norm(exact, axis=-1)))
            if not tell.any():
                continue  # a bound larger than the output tells nothing
            telling += 1
            out = block(torch.from_numpy(states[layer][None].copy()),
                        rope)[0][0].numpy()[rows].astype(np.float64)
            dist = np.linalg.norm(out - exact, axis=-1)
            out_of = np.any(np.abs(out - exact) > bound, axis=-1) | (dist > nb)
            caught += bool(np.any(out_of & tell))
            worst = max(worst, float(np.max(dist[tell] / nb[tell])))
    return caught, telling, worst


def two_largest_gap(x):
    top = np.sort(np.asarray(x, np.float64))[-2:]
    return float(top[1] - top[0])


def compare_greedy(torch, model, rope, path, prompt, n, label):
    """MiniMind's generate and the C's, greedy with their caches."""
    steps = []
    hook = model.lm_head.register_forward_hook(
        lambda m, args, out: steps.append(out[0, -1].detach().numpy()))
    try:
        with torch.no_grad():
            out = model.generate(torch.tensor([prompt]), max_new_tokens=n,
                                 do_sample=False, eos_token_id=None,
                                 top_k=0, top_p=1.0, temperature=1.0,
                                 use_cache=True)
    finally:
        hook.remove()
    theirs = out[0, len(prompt):].tolist()
    ours = rope.greedy(path, prompt, n)
    same = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b),
                min(len(ours), len(theirs)))
    note = ""
    if ours != theirs:
        c = rope.logits(path, prompt + ours[:same], False)[-1]
        note = "step %d: C %d gap %.2e torch %d gap %.2e" % (
            same, ours[same], two_largest_gap(c), theirs[same],
            two_largest_gap(steps[same]))
    row("greedy", label[0], label[1], len(prompt), "-", n,
        "%d/%d" % (same, n), "-", "-",
        "identical" if ours == theirs else "FAIL", note)


def run_all(mm, torch, rope, work, args):
    for seed in args.seeds:
        for use_moe in (False, True):
            for wide in (False, True):
                name = "%s-%s-s%d" % ("moe" if use_moe else "dense",
                                      "wide" if wide else "init", seed)
                model = build(mm, torch, use_moe, seed, wide)
                path = convert(model.state_dict(), work, use_moe, torch)
                rng = np.random.default_rng(seed)
                for n in args.lengths:
                    ids = rng.integers(0, 6400, n).tolist()
                    compare(torch, mm, model, rope, path, ids,
                            (name, "rope", n), False, args.chunks)
                if args.yarn_length and not wide:
                    ids = rng.integers(0, 6400, args.yarn_length).tolist()
                    yarn = with_yarn(mm, torch, model, use_moe)
                    compare(torch, mm, yarn, rope, path, ids,
                            (name, "yarn", args.yarn_length), True,
                            args.chunks)
                prompt = rng.integers(0, 6400, 8).tolist()
                compare_greedy(torch, model, rope, path, prompt,
                               args.greedy, (name, "rope"))
                os.remove(path)


def summary():
    checks = [r for r in ROWS if r[0] in ("block", "head")]
    passed = sum(r[9] == "pass" for r in checks)
    undecided = sum(r[9] == "undecided" for r in checks)
    vacuous = sum(r[9] == "vacuous" for r in checks)
    failed = len(checks) - passed - undecided - vacuous
    print("summary comparisons %d passed %d failed %d undecided %d "
          "vacuous %d" % (len(checks), passed, failed, undecided, vacuous))
    norms = [r for r in ROWS if r[0] == "norm"]
    count = {k: sum(r[9] == k for r in norms)
             for k in ("pass", "partial", "vacuous", "undecided", "FAIL")}
    failed += count["FAIL"]
    print("summary norm comparisons %d passed %d partial %d vacuous %d "
          "undecided %d failed %d" % ((len(norms),) + tuple(count.values())))
    rated = [r for r in checks if r[8] != "-"]
    if rated:
        w = max(rated, key=lambda r: float(r[8]))
        print("summary worst-ratio %s %s %s %s %s %s %s"
              % (w[8], w[0], w[1], w[2], w[3], w[4], w[5]))
    e2e = [r for r in ROWS if r[0] == "e2e"]
    if e2e:
        w = max(e2e, key=lambda r: float(r[8]))
        print("summary e2e-max-relative %s %s %s %s"
              % (w[8], w[1], w[2], w[3]))
    greedy = [r for r in ROWS if r[0] == "greedy"]
    same = sum(r[9] == "identical" for r in greedy)
    print("summary greedy identical %d of %d" % (same, len(greedy)))
    for mistake in MISTAKES:
        rows = [r for r in ROWS if r[0] == "control" and r[5] == mistake]
        caught = sum(int(r[6].split("/")[0]) for r in rows)
        telling = sum(int(r[6].split("/")[1]) for r in rows)
        worst = max([float(r[8]) for r in rows] + [0.0])
        print("summary control %s blocks caught %d of %d informative, "
              "largest %.2e of the bound" % (mistake, caught, telling,
                                             worst))
    return failed + len(greedy) - same


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minimind", required=True, help="a MiniMind checkout")
    ap.add_argument("--rope", default=os.environ.get(
        "ROPE_CLI", os.path.join(HERE, os.pardir, "build", "rope")),
        help="the rope program (default: $ROPE_CLI or build/rope)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--lengths", type=int, nargs="+",
                    default=[1, 7, 64, 512])
    ap.add_argument("--chunks", type=int, nargs="+", default=[128, 1])
    ap.add_argument("--yarn-length", type=int, default=2100)
    ap.add_argument("--greedy", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    path = os.path.join(args.minimind, "model", "model_minimind.py")
    if not os.path.isfile(path):
        usage_error("%s not found; --minimind must name a MiniMind checkout"
                    % path)
    if not os.access(args.rope, os.X_OK):
        usage_error("%s is not a program; build it with make" % args.rope)
    try:
        import torch
    except ImportError:
        usage_error("PyTorch is not installed for %s (Debian: python3-torch)"
                    % sys.executable)
    torch.set_num_threads(args.threads)
    mm, lines = load_minimind(path, torch)
    commit = commit_of(args.minimind)
    began = time.time()
    print("# command: %s" % " ".join(["crosscheck_model.py"] + sys.argv[1:]))
    print("# MiniMind: model/model_minimind.py at commit %s" % commit)
    print("# its definitions: " + ", ".join(
        "%s %d-%d" % (name, a, b) for name, (a, b) in lines.items()))
    print("# torch %s, numpy %s, Python %s; %d thread(s)"
          % (torch.__version__, np.__version__, platform.python_version(),
             args.threads))
    print("# date %s UTC; CPU %s" % (datetime.datetime.now(
        datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"), cpu_model()))
    if not commit.startswith(BOOK_COMMIT):
        print("# warning: not the book's commit %s" % BOOK_COMMIT)
    print("%-9s %-14s %-4s %-5s %-5s %-4s %-10s %-10s %-9s %s" % (
        "kind", "model", "rope", "n", "chunk", "part", "max|diff|",
        "2*bound", "ratio", "result"))
    with tempfile.TemporaryDirectory() as work:
        run_all(mm, torch, Rope(args.rope, work, args.threads), work, args)
    failed = summary()
    print("# %.0f seconds" % (time.time() - began))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
