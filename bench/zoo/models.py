"""The zoo's model list: what each model is, how to build it offline, and what it is fed.

Every model is described twice over: a `Recipe` (how to build the torch module, lazily, and
what its inputs and outputs look like, with symbolic dimensions) for each size, and a
`ModelSpec` that names it and says which family and library it comes from. make_zoo.py
turns each (model, exporter) pair into one ONNX file; check_zoo.py only reads the manifest,
so nothing here is imported without torch.

Nothing is downloaded: Hugging Face models are built from config objects with random
weights, timm with pretrained=False, torchvision with weights=None. The seed of every model
is derived from its name, so a rebuild gives the same weights.

Small sizes are tiny configurations of the same architectures (2 layers, hidden 64, images
of 32-64 pixels, sequences of 8-12 tokens) so that the whole zoo exports in minutes on two
cores; full sizes are the published configurations, for benchmarks.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Callable

SIZES = ("small", "full")


@dataclass(frozen=True)
class Symbol:
    """A symbolic dimension: the value used at export and the two values a check runs at.

    The export value differs from both test values, so a size that an exporter baked into
    the graph shows up as a mismatch at the test values. A symbol with `sum_of` is the sum
    of other symbols (a KV-cache decoder's attention mask spans past + new tokens); the
    dynamo exporter cannot state such a relation, so it is left for torch.export to infer.

    `optimize_at`: for a dimension the model cannot run at graphsub's default value of 2 (raw
    audio samples, say), the value graphsub is given (`--dim NAME=VALUE`), as a user would.
    """

    name: str
    example: int
    tests: tuple[int, int]
    sum_of: tuple[str, ...] = ()
    optimize_at: int | None = None


@dataclass(frozen=True)
class Input:
    """One model input: dtype, shape (ints and symbol names) and how to draw its values.

    `values` is a plain dict so that it can go into the manifest unchanged:
    {"kind": "normal"}, {"kind": "ones"} or {"kind": "int", "low": L, "high": H}
    (high exclusive; token ids must stay inside the vocabulary).
    """

    name: str
    dtype: str
    shape: tuple
    values: dict


@dataclass(frozen=True)
class Output:
    """One model output; `axes` maps an axis to its symbol for the exporters' dynamic axes."""

    name: str
    axes: dict = field(default_factory=dict)


@dataclass
class Recipe:
    """How to build one model at one size: a lazy builder plus its interface."""

    build: Callable[[], object]
    inputs: list[Input]
    outputs: list[Output]
    symbols: list[Symbol]
    # Module classes exported as ONNX functions by the "ts-fn" exporter (None: not offered).
    function_classes: Callable[[], set] | None = None


@dataclass(frozen=True)
class ModelSpec:
    """A zoo model: its name, family, source library and recipe per size."""

    name: str
    family: str
    source: str
    recipe: Callable[[str], Recipe]
    note: str = ""


def seed_for(name: str) -> int:
    """A stable seed per model name, so weights and inputs do not depend on list order."""
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


# ---------------------------------------------------------------------------------------
# Symbols and inputs shared by many recipes


def text_symbols(size: str) -> list[Symbol]:
    """Batch and sequence: small tests at 1 and 3, 8 and 12; full ones at benchmark sizes."""
    if size == "small":
        return [Symbol("batch", 2, (1, 3)), Symbol("sequence", 10, (8, 12))]
    return [Symbol("batch", 2, (1, 4)), Symbol("sequence", 96, (64, 128))]


def batch_symbol(size: str) -> list[Symbol]:
    """Only the batch is symbolic for images and spectrograms: their sizes are fixed."""
    return [Symbol("batch", 2, (1, 3))] if size == "small" else [Symbol("batch", 2, (1, 4))]


def token_inputs(vocab: int, names=("input_ids", "attention_mask"), type_vocab: int = 2):
    """Token ids in the vocabulary, attention masks of ones, token type ids in range."""
    shape = ("batch", "sequence")
    out = []
    for n in names:
        if n == "input_ids":
            values = {"kind": "int", "low": 0, "high": vocab}
        elif n == "token_type_ids":
            values = {"kind": "int", "low": 0, "high": type_vocab}
        else:
            values = {"kind": "ones"}
        out.append(Input(n, "int64", shape, values))
    return out


def image_input(name: str, channels: int, height: int, width: int | None = None) -> Input:
    return Input(name, "float32", ("batch", channels, height, width or height), {"kind": "normal"})


def seq_out(name: str) -> Output:
    return Output(name, {0: "batch", 1: "sequence"})


def batch_out(name: str) -> Output:
    return Output(name, {0: "batch"})


# ---------------------------------------------------------------------------------------
# Wrappers: a fixed tuple of outputs with stable names, whatever the library returns


def _hf_module(model, arg_names, fields, extra_kwargs=None):
    """Wrap a transformers model so that it takes positional tensors and returns a tuple.

    transformers returns ModelOutput objects and takes keyword arguments; both exporters
    want positional inputs and tensor outputs whose order is the manifest's.
    """
    import torch

    class HFWrapper(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, *inputs):
            kwargs = dict(zip(arg_names, inputs))
            kwargs.update(extra_kwargs or {})
            out = self.model(**kwargs, return_dict=True)
            return tuple(out[f] for f in fields)

    return HFWrapper().eval()


def _kv_module(model, config, layers: int):
    """Wrap a causal LM so that the KV cache comes in and goes out as plain tensors.

    transformers keeps the cache in a DynamicCache object; ONNX exports of decoders (as
    optimum writes them) take past_key_values.N.key/value and return present.N.key/value.
    """
    import torch
    from transformers import DynamicCache

    class KVWrapper(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, *past):
            pairs = [(past[2 * i], past[2 * i + 1]) for i in range(layers)]
            cache = DynamicCache(ddp_cache_data=pairs, config=config)
            out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                             past_key_values=cache, use_cache=True, return_dict=True)
            present = []
            for layer in out.past_key_values.layers:
                present += [layer.keys, layer.values]
            return (out.logits, *present)

    return KVWrapper().eval()


def _seeded(name: str, make: Callable[[], object]) -> Callable[[], object]:
    """Seed torch before building, so the random weights follow from the model name."""

    def build():
        import torch

        torch.manual_seed(seed_for(name))
        return make().eval()

    return build


# ---------------------------------------------------------------------------------------
# transformers: encoders


def _encoder_recipe(name, config_fn, model_cls, size, names=("input_ids", "attention_mask"),
                    fields=("last_hidden_state",), type_vocab=2):
    """An encoder over tokens: ids (+ mask, + types) in, hidden states (+ pooled) out."""
    config = config_fn(size)

    def make():
        import transformers

        return _hf_module(getattr(transformers, model_cls)(config), names, fields)

    outputs = [seq_out(f) if f != "pooler_output" else batch_out(f) for f in fields]
    return Recipe(_seeded(name, make), token_inputs(config.vocab_size, names, type_vocab),
                  outputs, text_symbols(size))


def _small_or_full(size, small: dict, full: dict) -> dict:
    return small if size == "small" else full


def bert(size):
    def cfg(size):
        import transformers

        return transformers.BertConfig(**_small_or_full(
            size,
            dict(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=128, max_position_embeddings=64),
            dict()))  # bert-base-uncased is BertConfig's default

    return _encoder_recipe("hf-bert", cfg, "BertModel", size,
                           ("input_ids", "attention_mask", "token_type_ids"),
                           ("last_hidden_state", "pooler_output"))


def distilbert(size):
    def cfg(size):
        import transformers

        return transformers.DistilBertConfig(**_small_or_full(
            size, dict(vocab_size=1000, dim=64, n_layers=2, n_heads=2, hidden_dim=128,
                       max_position_embeddings=64), dict()))

    return _encoder_recipe("hf-distilbert", cfg, "DistilBertModel", size)


def roberta(size):
    def cfg(size):
        import transformers

        return transformers.RobertaConfig(**_small_or_full(
            size,
            dict(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=128, max_position_embeddings=66, type_vocab_size=1),
            dict(vocab_size=50265, max_position_embeddings=514, type_vocab_size=1)))

    return _encoder_recipe("hf-roberta", cfg, "RobertaModel", size,
                           fields=("last_hidden_state", "pooler_output"))


def albert(size):
    def cfg(size):
        import transformers

        return transformers.AlbertConfig(**_small_or_full(
            size,
            dict(vocab_size=1000, embedding_size=32, hidden_size=64, num_hidden_layers=2,
                 num_attention_heads=2, intermediate_size=128, max_position_embeddings=64),
            dict(vocab_size=30000, embedding_size=128, hidden_size=768, num_hidden_layers=12,
                 num_attention_heads=12, intermediate_size=3072)))  # albert-base-v2

    return _encoder_recipe("hf-albert", cfg, "AlbertModel", size,
                           ("input_ids", "attention_mask", "token_type_ids"),
                           ("last_hidden_state", "pooler_output"))


def electra(size):
    def cfg(size):
        import transformers

        return transformers.ElectraConfig(**_small_or_full(
            size,
            dict(vocab_size=1000, embedding_size=32, hidden_size=64, num_hidden_layers=2,
                 num_attention_heads=2, intermediate_size=128, max_position_embeddings=64),
            dict(embedding_size=768, hidden_size=768, num_hidden_layers=12,
                 num_attention_heads=12, intermediate_size=3072)))  # electra-base

    return _encoder_recipe("hf-electra", cfg, "ElectraModel", size,
                           ("input_ids", "attention_mask", "token_type_ids"))


def deberta_v2(size):
    def cfg(size):
        import transformers

        common = dict(relative_attention=True, position_buckets=256 if size == "full" else 16,
                      pos_att_type=["p2c", "c2p"], norm_rel_ebd="layer_norm",
                      share_att_key=True, max_relative_positions=-1, type_vocab_size=0)
        return transformers.DebertaV2Config(**common, **_small_or_full(
            size,
            dict(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=128, max_position_embeddings=64),
            dict(vocab_size=128100, hidden_size=768, num_hidden_layers=12,
                 num_attention_heads=12, intermediate_size=3072,
                 max_position_embeddings=512)))  # deberta-v3-base

    return _encoder_recipe("hf-deberta-v2", cfg, "DebertaV2Model", size)


def mpnet(size):
    def cfg(size):
        import transformers

        return transformers.MPNetConfig(**_small_or_full(
            size,
            dict(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=128, max_position_embeddings=66),
            dict()))  # mpnet-base is the default

    return _encoder_recipe("hf-mpnet", cfg, "MPNetModel", size)


def modernbert(size):
    def cfg(size):
        import transformers

        return transformers.ModernBertConfig(**_small_or_full(
            size,
            dict(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=96, max_position_embeddings=64,
                 global_attn_every_n_layers=2, local_attention=8, pad_token_id=0,
                 bos_token_id=1, eos_token_id=2, cls_token_id=1, sep_token_id=2),
            dict()))  # ModernBERT-base is the default

    return _encoder_recipe("hf-modernbert", cfg, "ModernBertModel", size)


def mobilebert(size):
    def cfg(size):
        import transformers

        return transformers.MobileBertConfig(**_small_or_full(
            size,
            dict(vocab_size=1000, hidden_size=64, embedding_size=32, true_hidden_size=32,
                 intra_bottleneck_size=32, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=64, num_feedforward_networks=2, max_position_embeddings=64),
            dict()))  # mobilebert-uncased is the default

    return _encoder_recipe("hf-mobilebert", cfg, "MobileBertModel", size,
                           ("input_ids", "attention_mask", "token_type_ids"))


def xlm_roberta(size):
    def cfg(size):
        import transformers

        return transformers.XLMRobertaConfig(**_small_or_full(
            size,
            dict(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=128, max_position_embeddings=66, type_vocab_size=1),
            dict(vocab_size=250002, max_position_embeddings=514, type_vocab_size=1)))

    return _encoder_recipe("hf-xlm-roberta", cfg, "XLMRobertaModel", size)


# ---------------------------------------------------------------------------------------
# transformers: the encoder half of encoder-decoders


def t5_encoder(size):
    def cfg(size):
        import transformers

        return transformers.T5Config(**_small_or_full(
            size,
            dict(vocab_size=1000, d_model=64, d_kv=32, d_ff=128, num_layers=2, num_heads=2,
                 relative_attention_num_buckets=8),
            dict(vocab_size=32128, d_model=768, d_kv=64, d_ff=3072, num_layers=12,
                 num_heads=12)))  # t5-base

    return _encoder_recipe("hf-t5-encoder", cfg, "T5EncoderModel", size)


def _bart_like_encoder(name, config_cls, size, small, full):
    """The encoder stack of a BART-style encoder-decoder: what a seq2seq export's encoder
    file holds."""
    import transformers

    config = getattr(transformers, config_cls)(**_small_or_full(size, small, full))

    def make():
        import transformers as t

        model_cls = getattr(t, config_cls.replace("Config", "Model"))
        return _hf_module(model_cls(config).get_encoder(), ("input_ids", "attention_mask"),
                          ("last_hidden_state",))

    return Recipe(_seeded(name, make), token_inputs(config.vocab_size),
                  [seq_out("last_hidden_state")], text_symbols(size))


def bart_encoder(size):
    return _bart_like_encoder(
        "hf-bart-encoder", "BartConfig", size,
        dict(vocab_size=1000, d_model=64, encoder_layers=2, decoder_layers=2,
             encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=128,
             decoder_ffn_dim=128, max_position_embeddings=64),
        dict(vocab_size=50265, d_model=768, encoder_layers=6, decoder_layers=6,
             encoder_attention_heads=12, decoder_attention_heads=12, encoder_ffn_dim=3072,
             decoder_ffn_dim=3072, max_position_embeddings=1024))  # bart-base


def marian_encoder(size):
    return _bart_like_encoder(
        "hf-marian-encoder", "MarianConfig", size,
        dict(vocab_size=1000, decoder_vocab_size=1000, d_model=64, encoder_layers=2,
             decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2,
             encoder_ffn_dim=128, decoder_ffn_dim=128, max_position_embeddings=64,
             pad_token_id=999, decoder_start_token_id=999),
        dict(vocab_size=58101, decoder_vocab_size=58101, d_model=512, encoder_layers=6,
             decoder_layers=6, encoder_attention_heads=8, decoder_attention_heads=8,
             encoder_ffn_dim=2048, decoder_ffn_dim=2048, max_position_embeddings=512,
             pad_token_id=58100))  # opus-mt-en-de


# ---------------------------------------------------------------------------------------
# transformers: decoders


def _decoder_recipe(name, config_cls, size, small, full):
    """A causal LM over a whole prompt (no cache in or out): ids and mask in, logits out."""
    import transformers

    config = getattr(transformers, config_cls)(**_small_or_full(size, small, full))

    def make():
        import transformers as t

        model = t.AutoModelForCausalLM.from_config(config)
        return _hf_module(model, ("input_ids", "attention_mask"), ("logits",),
                          {"use_cache": False})

    return Recipe(_seeded(name, make), token_inputs(config.vocab_size), [seq_out("logits")],
                  text_symbols(size))


def _kv_symbols(size):
    """Batch, new tokens, past tokens, and the mask's length: past + new, at each value."""
    base = text_symbols(size) + [Symbol("past_sequence", 5, (4, 6)) if size == "small"
                                 else Symbol("past_sequence", 96, (64, 128))]
    return base + [sum_symbol("total_sequence", base, ("past_sequence", "sequence"))]


GRAPHSUB_DEFAULT_DIM = 2  # the value graphsub gives a symbolic dimension without --dim


def sum_symbol(name: str, symbols: list[Symbol], parts: tuple[str, ...]) -> Symbol:
    """A symbol whose export and test values are the sums of those of `parts`; graphsub is
    given the sum of the values it optimizes the parts at, so that the model runs there (its
    latency guard and its check in ONNX Runtime run the model at those values)."""
    by_name = {s.name: s for s in symbols}
    example = sum(by_name[p].example for p in parts)
    tests = tuple(sum(by_name[p].tests[k] for p in parts) for k in (0, 1))
    optimize_at = sum(by_name[p].optimize_at or GRAPHSUB_DEFAULT_DIM for p in parts)
    return Symbol(name, example, tests, parts, optimize_at)


def _kv_decoder_recipe(name, config_cls, size, small, full):
    """A causal LM one step into generation: the cache of past tokens in, the grown cache out.

    The attention mask spans past + new tokens; the cache tensors are
    (batch, kv_heads, past_sequence, head_dim) as transformers keeps them.
    """
    import transformers

    config = getattr(transformers, config_cls)(**_small_or_full(size, small, full))
    layers = config.num_hidden_layers
    kv_heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads

    def make():
        import transformers as t

        return _kv_module(t.AutoModelForCausalLM.from_config(config), config, layers)

    inputs = [Input("input_ids", "int64", ("batch", "sequence"),
                    {"kind": "int", "low": 0, "high": config.vocab_size}),
              Input("attention_mask", "int64", ("batch", "total_sequence"), {"kind": "ones"})]
    outputs = [seq_out("logits")]
    for i in range(layers):
        for kv in ("key", "value"):
            inputs.append(Input(f"past_key_values.{i}.{kv}", "float32",
                                ("batch", kv_heads, "past_sequence", head_dim),
                                {"kind": "normal"}))
            outputs.append(Output(f"present.{i}.{kv}", {0: "batch", 2: "total_sequence"}))
    return Recipe(_seeded(name, make), inputs, outputs, _kv_symbols(size))


SMALL_LLAMA = dict(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                   num_key_value_heads=2, intermediate_size=128, max_position_embeddings=128)
# SmolLM2-135M: a current Llama-architecture model that stays far below 2 GB in float32.
FULL_LLAMA = dict(vocab_size=49152, hidden_size=576, num_hidden_layers=30, num_attention_heads=9,
                  num_key_value_heads=3, intermediate_size=1536, max_position_embeddings=8192,
                  rope_theta=100000.0, tie_word_embeddings=True, rms_norm_eps=1e-5)
SMALL_GPT2 = dict(vocab_size=1000, n_positions=128, n_embd=64, n_layer=2, n_head=2,
                  bos_token_id=1, eos_token_id=2)
FULL_GPT2 = dict()  # gpt2 (124M) is GPT2Config's default


def gpt2(size):
    return _decoder_recipe("hf-gpt2", "GPT2Config", size, SMALL_GPT2, FULL_GPT2)


def gpt2_kv(size):
    return _kv_decoder_recipe("hf-gpt2-kv", "GPT2Config", size, SMALL_GPT2, FULL_GPT2)


def llama(size):
    return _decoder_recipe("hf-llama", "LlamaConfig", size, SMALL_LLAMA, FULL_LLAMA)


def llama_kv(size):
    return _kv_decoder_recipe("hf-llama-kv", "LlamaConfig", size, SMALL_LLAMA, FULL_LLAMA)


def qwen2(size):
    # Qwen2.5-0.5B: the smallest Qwen2 (about 2.0 GB in float32, at the protobuf limit).
    return _decoder_recipe("hf-qwen2", "Qwen2Config", size, SMALL_LLAMA, dict(
        vocab_size=151936, hidden_size=896, num_hidden_layers=24, num_attention_heads=14,
        num_key_value_heads=2, intermediate_size=4864, max_position_embeddings=32768,
        tie_word_embeddings=True))


def qwen3(size):
    # Qwen3-0.6B's layer shapes with 8 layers instead of 28 (q/k RMSNorm, head_dim 128).
    return _decoder_recipe("hf-qwen3", "Qwen3Config", size, dict(SMALL_LLAMA, head_dim=32), dict(
        vocab_size=151936, hidden_size=1024, num_hidden_layers=8, num_attention_heads=16,
        num_key_value_heads=8, head_dim=128, intermediate_size=3072,
        max_position_embeddings=40960, tie_word_embeddings=True))


def gpt_neox(size):
    return _decoder_recipe("hf-gpt-neox", "GPTNeoXConfig", size, dict(
        vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=128, max_position_embeddings=128, rotary_pct=0.25), dict(
        vocab_size=50304, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
        intermediate_size=3072, max_position_embeddings=2048, rotary_pct=0.25))  # pythia-160m


def phi(size):
    return _decoder_recipe("hf-phi", "PhiConfig", size, dict(
        vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=128, max_position_embeddings=128, partial_rotary_factor=0.5), dict(
        vocab_size=51200, hidden_size=2048, num_hidden_layers=6, num_attention_heads=32,
        intermediate_size=8192, max_position_embeddings=2048, partial_rotary_factor=0.5))


def opt(size):
    return _decoder_recipe("hf-opt", "OPTConfig", size, dict(
        vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
        ffn_dim=128, word_embed_proj_dim=64, max_position_embeddings=128), dict(
        vocab_size=50272, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
        ffn_dim=3072, word_embed_proj_dim=768, max_position_embeddings=2048))  # opt-125m


# ---------------------------------------------------------------------------------------
# transformers: vision and speech


def _hf_image_recipe(name, config_cls, model_cls, size, small, full, fields=("last_hidden_state",)):
    """A vision model on pixel_values (batch, 3, H, W), H and W fixed by the config."""
    import transformers

    config = getattr(transformers, config_cls)(**_small_or_full(size, small, full))

    def make():
        import transformers as t

        return _hf_module(getattr(t, model_cls)(config), ("pixel_values",), fields)

    image = config.image_size
    image = image if isinstance(image, int) else image[0]
    outputs = [batch_out(f) for f in fields]
    return Recipe(_seeded(name, make), [image_input("pixel_values", 3, image)], outputs,
                  batch_symbol(size))


SMALL_VIT = dict(image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2,
                 num_attention_heads=2, intermediate_size=128)


def vit(size):
    return _hf_image_recipe("hf-vit", "ViTConfig", "ViTModel", size, SMALL_VIT, dict(),
                            ("last_hidden_state", "pooler_output"))


def deit(size):
    return _hf_image_recipe("hf-deit", "DeiTConfig", "DeiTModel", size, SMALL_VIT, dict())


def dinov2(size):
    return _hf_image_recipe("hf-dinov2", "Dinov2Config", "Dinov2Model", size, SMALL_VIT,
                            dict(image_size=224, patch_size=14),
                            ("last_hidden_state", "pooler_output"))


def swin(size):
    return _hf_image_recipe("hf-swin", "SwinConfig", "SwinModel", size, dict(
        image_size=64, patch_size=4, embed_dim=32, depths=[2, 2], num_heads=[2, 4],
        window_size=4), dict(), ("last_hidden_state", "pooler_output"))  # swin-tiny default


def clip_vision(size):
    return _hf_image_recipe("hf-clip-vision", "CLIPVisionConfig", "CLIPVisionModel", size,
                            SMALL_VIT, dict(image_size=224, patch_size=32),
                            ("last_hidden_state", "pooler_output"))  # clip-vit-base-patch32


def siglip_vision(size):
    return _hf_image_recipe("hf-siglip-vision", "SiglipVisionConfig", "SiglipVisionModel", size,
                            SMALL_VIT, dict(image_size=224, patch_size=16),
                            ("last_hidden_state", "pooler_output"))


def whisper_encoder(size):
    """Whisper's encoder on log-mel frames; the frame count is fixed (2 x max_source_positions)."""
    import transformers

    config = transformers.WhisperConfig(**_small_or_full(
        size,
        dict(vocab_size=1000, num_mel_bins=16, d_model=64, encoder_layers=2, decoder_layers=2,
             encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=128,
             decoder_ffn_dim=128, max_source_positions=16, max_target_positions=32,
             pad_token_id=1, bos_token_id=2, eos_token_id=3, decoder_start_token_id=2),
        dict(d_model=512, encoder_layers=6, decoder_layers=6, encoder_attention_heads=8,
             decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048)))  # base

    def make():
        import transformers as t

        return _hf_module(t.WhisperModel(config).get_encoder(), ("input_features",),
                          ("last_hidden_state",))

    frames = 2 * config.max_source_positions
    inputs = [Input("input_features", "float32", ("batch", config.num_mel_bins, frames),
                    {"kind": "normal"})]
    return Recipe(_seeded("hf-whisper-encoder", make), inputs, [batch_out("last_hidden_state")],
                  batch_symbol(size))


def wav2vec2(size):
    """wav2vec 2.0 on raw samples: a convolutional feature encoder, then a transformer."""
    import transformers

    config = transformers.Wav2Vec2Config(**_small_or_full(
        size,
        dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
             conv_dim=(32, 32), conv_stride=(5, 2), conv_kernel=(10, 3),
             num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
             do_stable_layer_norm=True, feat_extract_norm="layer"),
        dict(do_stable_layer_norm=True, feat_extract_norm="layer")))  # wav2vec2-large-lv60 style

    def make():
        import transformers as t

        return _hf_module(t.Wav2Vec2Model(config), ("input_values",), ("last_hidden_state",))

    # The feature encoder needs hundreds of samples: graphsub is given a value (--dim).
    symbols = [Symbol("batch", 2, (1, 3)), Symbol("samples", 200, (160, 240), optimize_at=200)] \
        if size == "small" else [Symbol("batch", 2, (1, 2)),
                                 Symbol("samples", 24000, (16000, 32000), optimize_at=24000)]
    inputs = [Input("input_values", "float32", ("batch", "samples"), {"kind": "normal"})]
    return Recipe(_seeded("hf-wav2vec2", make), inputs, [batch_out("last_hidden_state")],
                  symbols)


# ---------------------------------------------------------------------------------------
# timm and torchvision classifiers


def _classifier_recipe(name, make, size, image_small=64, image_full=224, function_classes=None):
    """An image classifier: input (batch, 3, H, W) -> logits (batch, classes)."""
    image = image_small if size == "small" else image_full
    return Recipe(_seeded(name, make), [image_input("input", 3, image)], [batch_out("logits")],
                  batch_symbol(size), function_classes)


def _timm(name, arch_small, arch_full, size, small_kwargs=None, image_small=64, image_full=224):
    """A timm classifier, pretrained=False; small mode shrinks it through create_model's kwargs."""

    def make():
        import timm

        if size == "small":
            return timm.create_model(arch_small, pretrained=False, num_classes=10,
                                     **(small_kwargs or {}))
        return timm.create_model(arch_full, pretrained=False)

    return _classifier_recipe(name, make, size, image_small, image_full)


def timm_resnet(size):
    return _timm("timm-resnet", "resnet18", "resnet50", size,
                 dict(channels=(16, 32, 64, 128), stem_width=16))


def timm_efficientnet(size):
    return _timm("timm-efficientnet", "tinynet_e", "efficientnet_b0", size)


def timm_mobilenetv3(size):
    return _timm("timm-mobilenetv3", "mobilenetv3_small_050", "mobilenetv3_large_100", size)


def timm_regnet(size):
    return _timm("timm-regnet", "regnety_002", "regnety_040", size)


def timm_convnext(size):
    return _timm("timm-convnext", "convnext_atto", "convnext_tiny", size,
                 dict(dims=(16, 32, 64, 128), depths=(1, 1, 2, 1)))


def timm_vit(size):
    return _timm("timm-vit", "vit_tiny_patch16_224", "vit_base_patch16_224", size,
                 dict(img_size=32, patch_size=8, embed_dim=64, depth=2, num_heads=2),
                 image_small=32)


def timm_deit(size):
    return _timm("timm-deit", "deit_tiny_distilled_patch16_224", "deit_small_patch16_224", size,
                 dict(img_size=32, patch_size=8, embed_dim=64, depth=2, num_heads=2),
                 image_small=32)


def timm_swin(size):
    return _timm("timm-swin", "swin_tiny_patch4_window7_224", "swin_tiny_patch4_window7_224",
                 size, dict(img_size=64, window_size=4, embed_dim=32, depths=(2, 2),
                            num_heads=(2, 4)))


def timm_mobilevit(size):
    return _timm("timm-mobilevit", "mobilevit_xxs", "mobilevit_s", size, image_full=256)


def timm_mixer(size):
    # mixer_*'s entry points fix patch_size, depth and width, so small mode builds the class.
    def make():
        import timm
        from timm.models.mlp_mixer import MlpMixer

        if size == "small":
            return MlpMixer(num_classes=10, img_size=32, patch_size=8, num_blocks=2, embed_dim=64)
        return timm.create_model("mixer_b16_224", pretrained=False)

    return _classifier_recipe("timm-mixer", make, size, 32, 224)


def timm_ghostnet(size):
    return _timm("timm-ghostnet", "ghostnet_050", "ghostnet_100", size)


def timm_edgenext(size):
    return _timm("timm-edgenext", "edgenext_xx_small", "edgenext_small", size, image_full=256)


def _tv(name, make_small, make_full, size, image_small=64, function_classes=None,
        image_full=224):
    """A torchvision classifier with weights=None; small mode builds the class at small widths."""

    def make():
        return make_small() if size == "small" else make_full()

    return _classifier_recipe(name, make, size, image_small, image_full, function_classes)


def tv_resnet(size):
    # torchvision's ResNet has fixed widths; bottleneck blocks at width 8 keep it near 12 MB.
    def small():
        from torchvision.models.resnet import Bottleneck, ResNet

        return ResNet(Bottleneck, [1, 1, 1, 1], width_per_group=8, num_classes=10)

    def full():
        import torchvision

        return torchvision.models.resnet50(weights=None)

    def classes():
        from torchvision.models.resnet import BasicBlock, Bottleneck

        return {BasicBlock, Bottleneck}

    return _tv("tv-resnet", small, full, size, function_classes=classes)


def tv_mobilenet_v3(size):
    import torchvision

    return _tv("tv-mobilenet-v3",
               lambda: torchvision.models.mobilenet_v3_small(width_mult=0.5, num_classes=10),
               lambda: torchvision.models.mobilenet_v3_large(weights=None), size)


def tv_mobilenet_v2(size):
    import torchvision

    return _tv("tv-mobilenet-v2",
               lambda: torchvision.models.mobilenet_v2(width_mult=0.35, num_classes=10),
               lambda: torchvision.models.mobilenet_v2(weights=None), size)


def tv_efficientnet(size):
    def small():
        from torchvision.models import efficientnet as e

        setting, last = e._efficientnet_conf("efficientnet_b0", width_mult=0.25, depth_mult=0.34)
        return e.EfficientNet(setting, 0.2, num_classes=10, last_channel=last)

    def full():
        import torchvision

        return torchvision.models.efficientnet_b0(weights=None)

    return _tv("tv-efficientnet", small, full, size)


def tv_regnet(size):
    def small():
        from torchvision.models.regnet import BlockParams, RegNet

        params = BlockParams.from_init_params(depth=4, w_0=16, w_a=8.0, w_m=2.0, group_width=8,
                                              se_ratio=0.25)
        return RegNet(params, num_classes=10, stem_width=16)

    def full():
        import torchvision

        return torchvision.models.regnet_y_400mf(weights=None)

    return _tv("tv-regnet", small, full, size)


def tv_convnext(size):
    def small():
        from torchvision.models.convnext import CNBlockConfig, ConvNeXt

        cfg = [CNBlockConfig(16, 32, 1), CNBlockConfig(32, 64, 1), CNBlockConfig(64, 128, 2),
               CNBlockConfig(128, None, 1)]
        return ConvNeXt(cfg, num_classes=10)

    def full():
        import torchvision

        return torchvision.models.convnext_tiny(weights=None)

    def classes():
        from torchvision.models.convnext import CNBlock

        return {CNBlock}

    return _tv("tv-convnext", small, full, size, function_classes=classes)


def tv_vit(size):
    def small():
        from torchvision.models.vision_transformer import VisionTransformer

        return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                 hidden_dim=64, mlp_dim=128, num_classes=10)

    def full():
        import torchvision

        return torchvision.models.vit_b_16(weights=None)

    def classes():
        from torchvision.models.vision_transformer import EncoderBlock

        return {EncoderBlock}

    return _tv("tv-vit", small, full, size, image_small=32, function_classes=classes)


def tv_swin(size):
    def small():
        from torchvision.models.swin_transformer import SwinTransformer

        return SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4],
                               window_size=[4, 4], num_classes=10)

    def full():
        import torchvision

        return torchvision.models.swin_t(weights=None)

    return _tv("tv-swin", small, full, size)


def tv_squeezenet(size):
    import torchvision

    return _tv("tv-squeezenet", lambda: torchvision.models.squeezenet1_1(num_classes=10),
               lambda: torchvision.models.squeezenet1_1(weights=None), size)


def tv_shufflenet(size):
    import torchvision

    return _tv("tv-shufflenet",
               lambda: torchvision.models.shufflenet_v2_x0_5(num_classes=10),
               lambda: torchvision.models.shufflenet_v2_x1_0(weights=None), size)


def tv_mnasnet(size):
    import torchvision

    return _tv("tv-mnasnet", lambda: torchvision.models.mnasnet0_5(num_classes=10),
               lambda: torchvision.models.mnasnet1_0(weights=None), size)


def tv_densenet(size):
    def small():
        from torchvision.models import DenseNet

        return DenseNet(growth_rate=8, block_config=(2, 2, 2, 2), num_init_features=16,
                        num_classes=10)

    def full():
        import torchvision

        return torchvision.models.densenet121(weights=None)

    return _tv("tv-densenet", small, full, size)


def tv_maxvit(size):
    def small():
        from torchvision.models.maxvit import MaxVit

        return MaxVit(input_size=(64, 64), stem_channels=16, partition_size=2,
                      block_channels=[16, 32], block_layers=[1, 1], head_dim=8,
                      stochastic_depth_prob=0.0, num_classes=10)

    def full():
        import torchvision

        return torchvision.models.maxvit_t(weights=None)

    return _tv("tv-maxvit", small, full, size)


def tv_googlenet(size):
    import torchvision

    # aux_logits off: torchvision's eval-mode forward returns only the main logits anyway.
    return _tv("tv-googlenet",
               lambda: torchvision.models.googlenet(num_classes=10, aux_logits=False,
                                                    init_weights=True),
               lambda: torchvision.models.googlenet(weights=None, aux_logits=False,
                                                    init_weights=True), size)


def tv_inception_v3(size):
    import torchvision

    # Inception v3 needs at least 75 pixels; its published size is 299.
    def small():
        return torchvision.models.inception_v3(num_classes=10, aux_logits=False,
                                               init_weights=True)

    def full():
        return torchvision.models.inception_v3(weights=None, aux_logits=False, init_weights=True)

    return _tv("tv-inception-v3", small, full, size, image_small=96, image_full=299)


def tv_resnext(size):
    def small():
        from torchvision.models.resnet import Bottleneck, ResNet

        return ResNet(Bottleneck, [1, 1, 1, 1], groups=4, width_per_group=8, num_classes=10)

    def full():
        import torchvision

        return torchvision.models.resnext50_32x4d(weights=None)

    return _tv("tv-resnext", small, full, size)


def torch_transformer_encoder(size):
    """torch's own nn.TransformerEncoder (post-norm, ReLU MLP) in its default sequence-first
    layout, (sequence, batch, d_model), at static shapes: the TorchScript exporter bakes the
    example's batch and sequence into nn.MultiheadAttention's reshapes, so a file with
    symbolic dimensions would be wrong at any other size."""
    import torch

    d_model, heads, layers, ff, seq = (64, 4, 2, 128, 8) if size == "small" else (
        512, 8, 6, 2048, 128)

    def make():
        layer = torch.nn.TransformerEncoderLayer(d_model, heads, ff, dropout=0.0)
        # The fast path (nested tensors) is an inference kernel the exporters do not trace.
        return torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).eval()

    inputs = [Input("src", "float32", (seq, 1, d_model), {"kind": "normal"})]
    return Recipe(_seeded("torch-transformer-encoder", make), inputs, [Output("output")], [])


# ---------------------------------------------------------------------------------------
# The list


MODELS: list[ModelSpec] = [
    ModelSpec("hf-bert", "transformers-encoder", "transformers", bert),
    ModelSpec("hf-distilbert", "transformers-encoder", "transformers", distilbert),
    ModelSpec("hf-roberta", "transformers-encoder", "transformers", roberta),
    ModelSpec("hf-xlm-roberta", "transformers-encoder", "transformers", xlm_roberta),
    ModelSpec("hf-albert", "transformers-encoder", "transformers", albert),
    ModelSpec("hf-electra", "transformers-encoder", "transformers", electra),
    ModelSpec("hf-deberta-v2", "transformers-encoder", "transformers", deberta_v2),
    ModelSpec("hf-mpnet", "transformers-encoder", "transformers", mpnet),
    ModelSpec("hf-modernbert", "transformers-encoder", "transformers", modernbert),
    ModelSpec("hf-mobilebert", "transformers-encoder", "transformers", mobilebert),
    ModelSpec("hf-t5-encoder", "encoder-decoder-encoder", "transformers", t5_encoder),
    ModelSpec("hf-bart-encoder", "encoder-decoder-encoder", "transformers", bart_encoder),
    ModelSpec("hf-marian-encoder", "encoder-decoder-encoder", "transformers", marian_encoder),
    ModelSpec("hf-gpt2", "transformers-decoder", "transformers", gpt2),
    ModelSpec("hf-gpt2-kv", "transformers-decoder-kv", "transformers", gpt2_kv),
    ModelSpec("hf-llama", "transformers-decoder", "transformers", llama),
    ModelSpec("hf-llama-kv", "transformers-decoder-kv", "transformers", llama_kv),
    ModelSpec("hf-qwen2", "transformers-decoder", "transformers", qwen2),
    ModelSpec("hf-qwen3", "transformers-decoder", "transformers", qwen3),
    ModelSpec("hf-gpt-neox", "transformers-decoder", "transformers", gpt_neox),
    ModelSpec("hf-phi", "transformers-decoder", "transformers", phi),
    ModelSpec("hf-opt", "transformers-decoder", "transformers", opt),
    ModelSpec("hf-vit", "vision-transformer", "transformers", vit),
    ModelSpec("hf-deit", "vision-transformer", "transformers", deit),
    ModelSpec("hf-dinov2", "vision-transformer", "transformers", dinov2),
    ModelSpec("hf-swin", "vision-transformer", "transformers", swin),
    ModelSpec("hf-clip-vision", "vision-transformer", "transformers", clip_vision),
    ModelSpec("hf-siglip-vision", "vision-transformer", "transformers", siglip_vision),
    ModelSpec("hf-whisper-encoder", "speech", "transformers", whisper_encoder),
    ModelSpec("hf-wav2vec2", "speech", "transformers", wav2vec2),
    ModelSpec("torch-transformer-encoder", "transformers-encoder", "torch",
              torch_transformer_encoder),
    ModelSpec("timm-resnet", "cnn-classifier", "timm", timm_resnet),
    ModelSpec("timm-efficientnet", "cnn-classifier", "timm", timm_efficientnet,
              "small: tinynet_e (an EfficientNet-B0 scaled by TinyNet's rule)"),
    ModelSpec("timm-mobilenetv3", "cnn-classifier", "timm", timm_mobilenetv3),
    ModelSpec("timm-regnet", "cnn-classifier", "timm", timm_regnet),
    ModelSpec("timm-convnext", "cnn-classifier", "timm", timm_convnext),
    ModelSpec("timm-ghostnet", "cnn-classifier", "timm", timm_ghostnet),
    ModelSpec("timm-vit", "vision-transformer", "timm", timm_vit),
    ModelSpec("timm-deit", "vision-transformer", "timm", timm_deit),
    ModelSpec("timm-swin", "vision-transformer", "timm", timm_swin),
    ModelSpec("timm-mixer", "vision-mlp", "timm", timm_mixer),
    ModelSpec("timm-mobilevit", "vision-hybrid", "timm", timm_mobilevit),
    ModelSpec("timm-edgenext", "vision-hybrid", "timm", timm_edgenext),
    ModelSpec("tv-resnet", "cnn-classifier", "torchvision", tv_resnet),
    ModelSpec("tv-mobilenet-v2", "cnn-classifier", "torchvision", tv_mobilenet_v2),
    ModelSpec("tv-mobilenet-v3", "cnn-classifier", "torchvision", tv_mobilenet_v3),
    ModelSpec("tv-efficientnet", "cnn-classifier", "torchvision", tv_efficientnet),
    ModelSpec("tv-regnet", "cnn-classifier", "torchvision", tv_regnet),
    ModelSpec("tv-convnext", "cnn-classifier", "torchvision", tv_convnext),
    ModelSpec("tv-squeezenet", "cnn-classifier", "torchvision", tv_squeezenet),
    ModelSpec("tv-shufflenet", "cnn-classifier", "torchvision", tv_shufflenet),
    ModelSpec("tv-mnasnet", "cnn-classifier", "torchvision", tv_mnasnet),
    ModelSpec("tv-densenet", "cnn-classifier", "torchvision", tv_densenet),
    ModelSpec("tv-googlenet", "cnn-classifier", "torchvision", tv_googlenet),
    ModelSpec("tv-inception-v3", "cnn-classifier", "torchvision", tv_inception_v3),
    ModelSpec("tv-resnext", "cnn-classifier", "torchvision", tv_resnext),
    ModelSpec("tv-vit", "vision-transformer", "torchvision", tv_vit),
    ModelSpec("tv-swin", "vision-transformer", "torchvision", tv_swin),
    ModelSpec("tv-maxvit", "vision-hybrid", "torchvision", tv_maxvit),
]
