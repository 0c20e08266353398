# W8d.1 The converter
"""minimind_convert.py: a MiniMind checkpoint to a rope-minimind file.

    python3 python/minimind_convert.py CHECKPOINT OUT [--hidden-size 768 ...]

CHECKPOINT is MiniMind's .pth state dict (read with PyTorch), or a
transformers directory or its model.safetensors (read with NumPy
alone; a config.json beside it gives the configuration).  OUT is the
file format "rope-minimind 1" that the C library maps into memory.
Every tensor is checked, name, dtype and shape; the first problem is
one line on stderr and exit status 1, and nothing is written.  The
book's chapter "Workshop: MiniMind's weights, tokens and its own
code" explains this file.
"""
import argparse
import json
import math
import os
import sys

import numpy as np


FIELDS = (("hidden_size", int), ("num_hidden_layers", int),
          ("num_attention_heads", int), ("num_key_value_heads", int),
          ("head_dim", int), ("intermediate_size", int),
          ("vocab_size", int), ("max_position_embeddings", int),
          ("rope_theta", float), ("rms_norm_eps", float),
          ("use_moe", int), ("num_experts", int),
          ("num_experts_per_tok", int), ("moe_intermediate_size", int),
          ("norm_topk_prob", int))


def configuration(given):
    """MiniMindConfig's values: given ones, else MiniMind's defaults."""
    c = {"hidden_size": 768, "num_hidden_layers": 8,
         "num_attention_heads": 8, "num_key_value_heads": 4,
         "vocab_size": 6400, "max_position_embeddings": 32768,
         "rope_theta": 1e6, "rms_norm_eps": 1e-6, "use_moe": 0,
         "num_experts": 4, "num_experts_per_tok": 1, "norm_topk_prob": 1}
    c.update({k: v for k, v in given.items() if v is not None})
    if c.get("head_dim") is None:
        c["head_dim"] = c["hidden_size"] // c["num_attention_heads"]
    if c.get("intermediate_size") is None:
        c["intermediate_size"] = math.ceil(
            c["hidden_size"] * math.pi / 64) * 64
    if c.get("moe_intermediate_size") is None:
        c["moe_intermediate_size"] = c["intermediate_size"]
    return {name: kind(c[name]) for name, kind in FIELDS}


def config_problem(c):
    """None, or why the configuration cannot describe a MiniMind."""
    for name, kind in FIELDS:
        if kind is int and c[name] < 0:
            return "%s is %d, negative" % (name, c[name])
    for name in ("hidden_size", "num_hidden_layers", "num_attention_heads",
                 "num_key_value_heads", "head_dim", "intermediate_size",
                 "vocab_size", "max_position_embeddings"):
        if c[name] == 0:
            return "%s is 0" % name
    if c["num_attention_heads"] % c["num_key_value_heads"]:
        return "num_attention_heads %d is not a multiple of " \
               "num_key_value_heads %d" % (c["num_attention_heads"],
                                           c["num_key_value_heads"])
    if c["head_dim"] % 2:
        return "head_dim %d is odd: RoPE turns pairs" % c["head_dim"]
    if not (c["rope_theta"] > 1 and c["rms_norm_eps"] > 0):
        return "rope_theta must exceed 1 and rms_norm_eps be positive"
    if c["use_moe"] not in (0, 1) or c["norm_topk_prob"] not in (0, 1):
        return "use_moe and norm_topk_prob are 0 or 1"
    if c["use_moe"] and not (0 < c["num_experts_per_tok"]
                             <= c["num_experts"]
                             and c["moe_intermediate_size"] > 0):
        return "the MoE needs 0 < num_experts_per_tok <= num_experts " \
               "and moe_intermediate_size > 0"
    return None


def tensor_list(c):
    """(name, shape) of every tensor the file holds, in the file's order."""
    h, d = c["hidden_size"], c["head_dim"]
    q, kv = c["num_attention_heads"] * d, c["num_key_value_heads"] * d
    out = [("model.embed_tokens.weight", (c["vocab_size"], h))]
    for layer in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % layer
        out += [(p + "input_layernorm.weight", (h,)),
                (p + "self_attn.q_proj.weight", (q, h)),
                (p + "self_attn.k_proj.weight", (kv, h)),
                (p + "self_attn.v_proj.weight", (kv, h)),
                (p + "self_attn.o_proj.weight", (h, q)),
                (p + "self_attn.q_norm.weight", (d,)),
                (p + "self_attn.k_norm.weight", (d,)),
                (p + "post_attention_layernorm.weight", (h,))]
        if not c["use_moe"]:
            out += feed_forward(p + "mlp.", h, c["intermediate_size"])
            continue
        out.append((p + "mlp.gate.weight", (c["num_experts"], h)))
        for e in range(c["num_experts"]):
            out += feed_forward(p + "mlp.experts.%d." % e, h,
                                c["moe_intermediate_size"])
    out.append(("model.norm.weight", (h,)))
    return out


def feed_forward(p, h, inter):
    return [(p + "gate_proj.weight", (inter, h)),
            (p + "up_proj.weight", (inter, h)),
            (p + "down_proj.weight", (h, inter))]


class Problem(Exception):
    """The first thing wrong with the checkpoint: one line."""


def as_float32(name, kind, raw, shape):
    """float32 values from raw little-endian data of a safetensors kind."""
    if kind == "F32":
        return raw.view("<f4").astype(np.float32).reshape(shape)
    if kind == "F16":
        return raw.view("<f2").astype(np.float32).reshape(shape)
    if kind == "BF16":
        bits = raw.view("<u2").astype(np.uint32) << 16
        return bits.view(np.float32).reshape(shape)
    raise Problem("%s: dtype %s, expected float32, float16 or bfloat16"
                  % (name, kind))


def read_pth(path):
    """A state dict saved by torch: [(name, dtype, shape, values)]."""
    try:
        import torch
    except ImportError:
        raise Problem("%s: reading a .pth needs PyTorch (Debian: "
                      "python3-torch)" % path)
    import inspect
    safe = {"weights_only": True} if "weights_only" in \
        inspect.signature(torch.load).parameters else {}
    try:
        state = torch.load(path, map_location="cpu", **safe)
    except Exception as e:   # torch says "truncated" in many ways
        why = " ".join(str(e).split())[:120]
        raise Problem("%s: unreadable or truncated (%s)" % (path, why))
    if not isinstance(state, dict):
        raise Problem("%s: not a state dict (a %s)"
                      % (path, type(state).__name__))
    kinds = {torch.float32: "F32", torch.float16: "F16",
             torch.bfloat16: "BF16"}
    out = []
    for name, t in state.items():
        if not isinstance(t, torch.Tensor):
            raise Problem("%s: not a tensor (a %s)"
                          % (name, type(t).__name__))
        kind = kinds.get(t.dtype, str(t.dtype).replace("torch.", ""))
        out.append((name, kind, tuple(t.shape),
                    lambda t=t: t.detach().float().contiguous().numpy()))
    return out


SAFE_KINDS = {"F32": 4, "F16": 2, "BF16": 2}
TORCH_NAMES = {"F64": "float64", "I64": "int64", "I32": "int32",
               "I16": "int16", "I8": "int8", "U8": "uint8", "BOOL": "bool"}


def read_safetensors(path):
    """A .safetensors file: [(name, dtype, shape, values)]."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise Problem("%s: truncated: %d bytes, no header length"
                              % (path, len(head)))
            n = int.from_bytes(head, "little")
            if n > size - 8:
                raise Problem("%s: truncated: header of %d bytes, file of %d"
                              % (path, n, size))
            header = json.loads(f.read(n).decode("utf-8"))
    except OSError as e:
        raise Problem("%s: unreadable (%s)" % (path, e.strerror))
    except (UnicodeDecodeError, ValueError):
        raise Problem("%s: the header is not JSON" % path)
    if not isinstance(header, dict):
        raise Problem("%s: the header is not a JSON object" % path)
    data = np.memmap(path, np.uint8, "r", offset=8 + n) \
        if size > 8 + n else np.zeros(0, np.uint8)
    out = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            kind, shape = info["dtype"], tuple(int(s) for s in info["shape"])
            begin, end = (int(x) for x in info["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise Problem("%s: malformed header entry" % name)
        count = int(np.prod(shape, dtype=np.int64))
        if kind in SAFE_KINDS and end - begin != count * SAFE_KINDS[kind]:
            raise Problem("%s: data_offsets hold %d bytes, the shape %s "
                          "needs %d" % (name, end - begin, list(shape),
                                        count * SAFE_KINDS[kind]))
        if not 0 <= begin <= end:
            raise Problem("%s: data_offsets [%d, %d] out of order"
                          % (name, begin, end))
        if end > len(data):
            raise Problem("%s: truncated: its data ends at byte %d of %d"
                          % (name, end, len(data)))
        out.append((name, kind, shape, lambda name=name, kind=kind,
                    raw=data[begin:end], shape=shape:
                    as_float32(name, kind, np.asarray(raw), shape)))
    return out


def locate(path):
    """(file, config.json or None): a directory of transformers holds
    model.safetensors or pytorch_model.bin beside its config.json."""
    if os.path.isdir(path):
        for name in ("model.safetensors", "pytorch_model.bin"):
            if os.path.isfile(os.path.join(path, name)):
                path = os.path.join(path, name)
                break
        else:
            raise Problem("%s: holds no model.safetensors or "
                          "pytorch_model.bin" % path)
    elif path.endswith((".pth", ".pt")):
        return path, None
    beside = os.path.join(os.path.dirname(path), "config.json")
    return path, (beside if os.path.isfile(beside) else None)


def written_by_torch(path):
    """torch.save writes a zip file (PK) or, before 1.6, a pickle (0x80)."""
    try:
        with open(path, "rb") as f:
            magic = f.read(2)
    except OSError as e:
        raise Problem("%s: unreadable (%s)" % (path, e.strerror))
    return magic == b"PK" or magic[:1] == b"\x80"


def check(c, tensors):
    """float32 arrays in the file's order, or Problem naming one tensor."""
    expected = dict(tensor_list(c))
    tied = "lm_head.weight"
    expected_tied = expected["model.embed_tokens.weight"]
    seen = {}
    for name, kind, got, values in tensors:
        shape = expected_tied if name == tied else expected.get(name)
        if shape is None:
            raise Problem("%s: unexpected tensor (not in MiniMind's state "
                          "dict for this configuration)" % name)
        if kind not in SAFE_KINDS:
            raise Problem("%s: dtype %s, expected float32, float16 or "
                          "bfloat16" % (name, TORCH_NAMES.get(kind, kind)))
        if got != shape:
            raise Problem("%s: shape %s, expected %s"
                          % (name, list(got), list(shape)))
        seen[name] = values()
    if "model.embed_tokens.weight" not in seen and tied in seen:
        seen["model.embed_tokens.weight"] = seen[tied]
    for name, _ in tensor_list(c):
        if name not in seen:
            raise Problem("%s: missing" % name)
    if tied in seen and not np.array_equal(
            seen[tied], seen["model.embed_tokens.weight"]):
        raise Problem("lm_head.weight: differs from "
                      "model.embed_tokens.weight; MiniMind ties them")
    return [seen[name] for name, _ in tensor_list(c)]


def number(x):
    """A float as the header writes it: shortest, round-trips."""
    if x == int(x) and abs(x) < 1e16:
        return "%d" % x
    return repr(float(x))


def header(c):
    lines = ["rope-minimind 1"]
    lines += ["%s %s" % (name, number(c[name]) if kind is float
                         else "%d" % c[name]) for name, kind in FIELDS]
    for name, shape in tensor_list(c):
        lines.append("tensor %s f32 %s" % (name, " ".join(map(str, shape))))
    text = "\n".join(lines) + "\n"
    start = 4096
    while len(text) + len("data %d\n" % start) > start:
        start += 4096
    text += "data %d\n" % start
    return (text + "\n" * (start - len(text))).encode("ascii")


def write(out, c, arrays):
    """OUT.tmp, then renamed to OUT: a failure leaves neither."""
    tmp = out + ".tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(header(c))
            for a in arrays:
                f.write(np.ascontiguousarray(a, "<f4").tobytes())
        os.replace(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def options():
    ap = argparse.ArgumentParser(
        prog="minimind_convert",
        description="A MiniMind checkpoint to a rope-minimind file.")
    ap.add_argument("checkpoint", help=".pth, model.safetensors or its "
                    "directory")
    ap.add_argument("out", help="the rope-minimind file to write")
    for name, kind in FIELDS:
        flags = ["--" + name.replace("_", "-")]
        if name in ("use_moe", "norm_topk_prob"):
            ap.add_argument(*flags, "--" + name, type=int, nargs="?",
                            const=1, choices=(0, 1), metavar="0|1")
        else:
            ap.add_argument(*flags, "--" + name, type=kind)
    return ap


def convert(args):
    given = {name: getattr(args, name) for name, _ in FIELDS}
    path, beside = locate(args.checkpoint)
    c = configuration(dict(read_config(beside), **{
        k: v for k, v in given.items() if v is not None}))
    why = config_problem(c)
    if why:
        raise Problem("configuration: " + why)
    tensors = read_pth(path) if written_by_torch(path) \
        else read_safetensors(path)
    write(args.out, c, check(c, tensors))


def read_config(path):
    """The MiniMindConfig fields of a config.json (transformers writes it)."""
    if path is None:
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            j = json.load(f)
    except (OSError, ValueError) as e:
        raise Problem("%s: unreadable (%s)" % (path, e))
    if j.get("hidden_act", "silu") != "silu":
        raise Problem("%s: hidden_act %s; MiniMind's is silu"
                      % (path, j["hidden_act"]))
    if not j.get("tie_word_embeddings", True):
        raise Problem("%s: tie_word_embeddings is false; the file format "
                      "ties lm_head to the embedding" % path)
    out = {name: j.get(name) for name, _ in FIELDS}
    for flag in ("use_moe", "norm_topk_prob"):
        if out[flag] is not None:
            out[flag] = int(bool(out[flag]))
    return out


def main(argv=None):
    args = options().parse_args(argv)
    try:
        convert(args)
    except Problem as e:
        print("minimind_convert: %s" % e, file=sys.stderr)
        return 1
    except OSError as e:
        print("minimind_convert: %s: %s" % (e.filename or args.out,
                                            e.strerror), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
