"""A served model's tokenizer and chat template, loaded without torch or transformers.

An OpenAI-compatible server applies its chat template and tokenizes on its side; an audit
that must see the exact text (faults: the rendered context before a tool return) or score
exact tokens needs both here. :func:`load_served_tokenizer` reads them from

* a model folder (``tokenizer.json`` with ``tokenizer_config.json``, the template there or
  in ``chat_template.jinja`` / ``chat_template.json``), as every Hugging Face model has;
* a GGUF file, whose metadata carries the vocabulary, the merges and the template
  (byte-level BPE vocabularies: ``tokenizer.ggml.model == "gpt2"``, e.g. Qwen2);
* ``embedded:qwen`` (the embedded GGUF) or ``embedded:gemma`` (its converted folder).

Tokenization uses the ``tokenizers`` library and templates render in a Jinja2 sandbox with
the conventions of ``transformers``' ``apply_chat_template`` (``trim_blocks``,
``lstrip_blocks``, ``loopcontrols``, a ``tojson`` that keeps key order and non-ASCII
text, ``raise_exception`` and ``strftime_now``), so a chat renders to the same text and
the same token ids as the in-process backends (checked in tests/models/test_template.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from toolaudit.errors import MissingDependencyError, ModelError
from toolaudit.models._base import ChatTurn, ToolSpec
from toolaudit.models._messages import text_messages

# llama.cpp's token types (gguf.TokenType): control tokens are special; user-defined ones
# are matched whole in text but kept on decoding.
_CONTROL, _USER_DEFINED = 3, 4
# The pre-tokenizer split of byte-level BPE vocabularies, by tokenizer.ggml.pre.
_GGUF_SPLITS = {
    "qwen2": (
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
        r"|\s*[\r\n]+|\s+(?!\S)|\s+"
    ),
}


def _require() -> tuple[Any, Any]:
    try:
        import jinja2.sandbox
        import tokenizers
    except ImportError:
        raise MissingDependencyError("tokenizers", "serve") from None
    return tokenizers, jinja2.sandbox


def _tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _raise(message: str) -> None:
    raise ModelError(f"chat template: {message}")


def _environment() -> Any:
    _, sandbox = _require()
    from jinja2.ext import Extension, loopcontrols
    from jinja2.nodes import CallBlock

    class Generation(Extension):
        """``{% generation %}`` marks assistant text for training masks; renders its body."""

        tags = {"generation"}

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

        def _body(self, caller: Any) -> str:
            return str(caller())

    env = sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[Generation, loopcontrols]
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    return env


def normalize_messages(messages: Sequence[ChatTurn]) -> list[dict[str, Any]]:
    """Copies with tool-call arguments as objects (templates ``tojson`` them) and content
    as text (never ``None``; OpenAI content-part lists joined:
    :func:`toolaudit.models._messages.content_text`)."""
    out = []
    for turn in text_messages(messages):
        m: dict[str, Any] = dict(turn)
        calls = m.get("tool_calls")
        if calls:
            fixed = []
            for tc in calls:
                tc = dict(tc)
                fn = dict(tc.get("function") or {})
                if isinstance(fn.get("arguments"), str):
                    try:
                        fn["arguments"] = json.loads(fn["arguments"] or "{}")
                    except json.JSONDecodeError:
                        pass  # rendered as the string it is
                tc["function"] = fn
                fixed.append(tc)
            m["tool_calls"] = fixed
        out.append(m)
    return out


class ServedTokenizer:
    """A tokenizer (``tokenizers.Tokenizer``) with its chat template and special tokens.

    Attributes:
        source: where it was read from (for messages).
        digest: 16 hex digits over the vocabulary and the template (part of a model's
            identity: another tokenizer scores other tokens).
    """

    def __init__(
        self,
        tokenizer: Any,
        *,
        template: str | None,
        special: dict[str, str],
        add_bos: bool,
        source: str,
    ) -> None:
        self.tokenizer = tokenizer
        self.template = template
        self.special = dict(special)
        self.add_bos = bool(add_bos)
        self.source = source
        h = hashlib.sha256(tokenizer.to_str().encode())
        h.update((template or "").encode())
        self.digest = h.hexdigest()[:16]
        self._compiled: Any = None

    def __repr__(self) -> str:
        return f"ServedTokenizer({self.source!r}, digest={self.digest})"

    @property
    def bos_token(self) -> str | None:
        """The ``<bos>`` text, if the model has one."""
        return self.special.get("bos_token")

    def token_id(self, token: str | None) -> int | None:
        """The id of a token given as its text (``None`` when unknown)."""
        if not token:
            return None
        found = self.tokenizer.token_to_id(token)
        return None if found is None else int(found)

    def encode_context(self, text: str) -> list[int]:
        """Ids of a context as the in-process backends encode it: special tokens
        recognized, ``<bos>`` first where the model adds one (never twice)."""
        bos = self.bos_token
        lead = self.add_bos and not (bos and text.startswith(bos))
        ids = [int(i) for i in self.tokenizer.encode(text, add_special_tokens=lead).ids]
        bos_id = self.token_id(bos)
        if lead and bos_id is not None and ids[:1] != [bos_id]:
            ids = [bos_id, *ids]  # a GGUF vocabulary: the post-processor adds nothing
        return ids

    def encode_continuation(self, text: str) -> list[int]:
        """Ids of a continuation (no special tokens added)."""
        return [int(i) for i in self.tokenizer.encode(text, add_special_tokens=False).ids]

    def decode(self, ids: Sequence[int], *, skip_special_tokens: bool = True) -> str:
        """Text of token ids."""
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=skip_special_tokens))

    def render(
        self,
        messages: Sequence[ChatTurn],
        tools: Sequence[ToolSpec] | None = None,
        *,
        add_generation_prompt: bool = True,
        parse_arguments: bool = True,
    ) -> str:
        """The chat as the model's own template writes it (tools included); tool-call
        arguments given as JSON text are parsed first, as ``transformers`` and vLLM do
        (``parse_arguments=False`` keeps them as text, as llama-cpp-python's server does)."""
        if not self.template:
            raise ModelError(f"{self.source}: the tokenizer has no chat template")
        if self._compiled is None:
            self._compiled = compile_template(self.template, source=self.source)
        if parse_arguments:
            shown = normalize_messages(messages)
        else:
            shown = text_messages(messages)
        from jinja2.exceptions import SecurityError, TemplateError

        try:
            return str(
                self._compiled.render(
                    messages=shown,
                    tools=list(tools) if tools else None,
                    documents=None,
                    add_generation_prompt=add_generation_prompt,
                    **self.special,
                )
            )
        except SecurityError as exc:  # the sandbox refused an attribute or a call
            raise ModelError(
                f"{self.source}: its chat template does what the Jinja sandbox refuses ({exc})"
            ) from None
        except TemplateError as exc:  # an undefined filter or test met only when rendering
            raise ModelError(f"{self.source}: its chat template fails to render ({exc})") from None


def compile_template(template: str, *, source: str, where: str | None = None) -> Any:
    """The template compiled in the sandbox; a syntax error is a ModelError naming
    ``source`` (and the template's file, ``where``) and the template line."""
    from jinja2.exceptions import TemplateSyntaxError

    try:
        return _environment().from_string(template)
    except TemplateSyntaxError as exc:
        at = f"{where}, " if where else ""
        raise ModelError(
            f"{source}: {at}chat template line {exc.lineno}: does not parse ({exc.message})"
        ) from None


def load_served_tokenizer(spec: str) -> ServedTokenizer:
    """The tokenizer and chat template a ``tokenizer=`` option names: ``embedded:qwen``,
    ``embedded:gemma``, a model folder, a ``tokenizer.json`` file or a ``.gguf`` file."""
    _require()
    if spec.startswith("embedded:"):
        return _embedded(spec)
    path = Path(spec).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return _from_gguf(path, source=spec)
    if path.is_file() and path.name == "tokenizer.json":
        path = path.parent
    if path.is_dir():
        return _from_folder(path, source=spec)
    raise ModelError(
        f"tokenizer={spec}: no such folder or file; give the served model's folder (with "
        "tokenizer.json and tokenizer_config.json), a .gguf file or embedded:qwen"
    )


def _embedded(spec: str) -> ServedTokenizer:
    from toolaudit.models._embedded import cache_root, embedded_entry, embedded_gguf_path

    entry = embedded_entry(spec.partition(":")[2])
    if entry.name != "gemma":  # their GGUFs hold a BPE vocabulary and a chat template
        return _from_gguf(embedded_gguf_path(entry.name), source=spec)
    # Gemma's GGUF holds a SentencePiece vocabulary: its converted folder carries the
    # tokenizer.json (written by `toolaudit models prepare`).
    for folder in sorted((cache_root() / "models").glob(f"{entry.stem}-*")):
        if (folder / "tokenizer.json").is_file():
            return _from_folder(folder, source=spec)
    raise ModelError(
        f"tokenizer={spec}: its converted folder is missing; run `toolaudit models prepare` "
        "(needs the [models] extra) or give the model's folder"
    )


def _special_text(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) and value else None


def _read_text(file: Path, *, source: str) -> str:
    """A model folder's text file, decoded as UTF-8; anything else is one line."""
    from toolaudit.traces import read_regular

    try:
        raw = read_regular(file)
    except ValueError as exc:  # TraceFormatError: a FIFO, a device, a link loop
        raise ModelError(f"tokenizer={source}: {exc}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelError(f"tokenizer={source}: {file}: not UTF-8 text (byte {exc.start})") from None


def _read_object(file: Path, *, source: str) -> dict[str, Any]:
    """A model folder's JSON object (``tokenizer_config.json``, ``chat_template.json``)."""
    try:
        data = json.loads(_read_text(file, source=source))
    except json.JSONDecodeError as exc:
        raise ModelError(f"tokenizer={source}: {file}: not JSON ({exc})") from None
    except (ValueError, RecursionError) as exc:
        raise ModelError(f"tokenizer={source}: {file}: unreadable JSON ({exc!r})") from None
    if not isinstance(data, dict):
        raise ModelError(
            f"tokenizer={source}: {file}: expected a JSON object, got {type(data).__name__}"
        )
    return data


def _folder_template(folder: Path, config: dict[str, Any], *, source: str) -> str | None:
    jinja = folder / "chat_template.jinja"
    if jinja.is_file():
        return _read_text(jinja, source=source)
    as_json = folder / "chat_template.json"
    if as_json.is_file():
        data = _read_object(as_json, source=source)
        text = data.get("chat_template")
        if text is not None and not isinstance(text, str):
            raise ModelError(
                f"tokenizer={source}: {as_json}, field 'chat_template': expected a string, "
                f"got {type(text).__name__}"
            )
        return text or None
    template = config.get("chat_template")
    if isinstance(template, list):  # named templates: the default one
        named = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
        template = named.get("default") or next(iter(named.values()), None)
    return template if isinstance(template, str) and template else None


def _from_folder(folder: Path, *, source: str) -> ServedTokenizer:
    tokenizers, _ = _require()
    file = folder / "tokenizer.json"
    if not file.is_file():
        raise ModelError(
            f"tokenizer={source}: {folder} has no tokenizer.json (a fast tokenizer file, "
            "as Hugging Face model folders have)"
        )
    try:
        tok = tokenizers.Tokenizer.from_file(str(file))
    except Exception as exc:  # the Rust library raises a plain Exception
        raise ModelError(f"tokenizer={source}: {file}: cannot read it ({exc})") from None
    config: dict[str, Any] = {}
    cfg_file = folder / "tokenizer_config.json"
    if cfg_file.is_file():
        config = _read_object(cfg_file, source=source)
    special = {
        k: text
        for k in ("bos_token", "eos_token", "unk_token", "pad_token")
        if (text := _special_text(config.get(k)))
    }
    template = _folder_template(folder, config, source=source)
    if template is not None:  # a template that does not parse is refused now, not mid-run
        compile_template(template, source=f"tokenizer={source}", where=str(folder))
    if template is None and tok.token_to_id("<start_of_turn>") is not None:
        from toolaudit.models._gemma import GEMMA_CHAT_TEMPLATE

        template = GEMMA_CHAT_TEMPLATE  # as install_gemma_template does in process
    # The folder's post-processor adds <bos> itself where the model uses one.
    return ServedTokenizer(tok, template=template, special=special, add_bos=True, source=source)


def _gguf_value(fields: Any, key: str) -> Any:
    field = fields.get(key)
    if field is None:
        return None
    parts = [field.parts[i] for i in field.data]
    if len(field.types) > 1 or (field.types and field.types[0].name == "ARRAY"):
        if field.types[-1].name == "STRING":
            return [bytes(p).decode("utf-8") for p in parts]
        return [int(p[0]) for p in parts]
    if field.types and field.types[0].name == "STRING":
        return bytes(parts[0]).decode("utf-8")
    return parts[0][0].item()


def _from_gguf(path: Path, *, source: str) -> ServedTokenizer:
    tokenizers, _ = _require()
    try:
        from gguf import GGUFReader
    except ImportError:
        raise MissingDependencyError("gguf", "serve") from None
    try:
        fields = GGUFReader(str(path)).fields
    except (OSError, ValueError) as exc:
        raise ModelError(f"tokenizer={source}: {path}: not a readable GGUF ({exc})") from None
    model = _gguf_value(fields, "tokenizer.ggml.model")
    pre = _gguf_value(fields, "tokenizer.ggml.pre")
    if model != "gpt2" or pre not in _GGUF_SPLITS:
        raise ModelError(
            f"tokenizer={source}: its GGUF vocabulary ({model}, pre-tokenizer {pre}) is not "
            f"one read here (byte-level BPE: {', '.join(sorted(_GGUF_SPLITS))}); give the "
            "model's folder with tokenizer.json instead"
        )
    tokens: list[str] = _gguf_value(fields, "tokenizer.ggml.tokens")
    types: list[int] = _gguf_value(fields, "tokenizer.ggml.token_type") or [1] * len(tokens)
    merges: list[str] = _gguf_value(fields, "tokenizer.ggml.merges") or []
    from tokenizers import AddedToken, Regex, decoders, models, normalizers, pre_tokenizers

    bpe = models.BPE(
        vocab={t: i for i, t in enumerate(tokens)},
        merges=[(a, b) for a, _, b in (m.partition(" ") for m in merges)],
        fuse_unk=False,
        byte_fallback=False,
    )
    tok = tokenizers.Tokenizer(bpe)
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(_GGUF_SPLITS[pre]), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    kinds = list(zip(tokens, types, strict=True))
    tok.add_special_tokens(
        [AddedToken(t, special=True, normalized=False) for t, ty in kinds if ty == _CONTROL]
    )
    tok.add_tokens(
        [AddedToken(t, special=False, normalized=False) for t, ty in kinds if ty == _USER_DEFINED]
    )
    special = {}
    for name in ("bos", "eos", "unknown", "padding"):
        idx = _gguf_value(fields, f"tokenizer.ggml.{name}_token_id")
        if isinstance(idx, int) and 0 <= idx < len(tokens):
            key = {"unknown": "unk", "padding": "pad"}.get(name, name)
            special[f"{key}_token"] = tokens[idx]
    add_bos = bool(_gguf_value(fields, "tokenizer.ggml.add_bos_token"))
    template = _gguf_value(fields, "tokenizer.chat_template")
    if template:
        compile_template(template, source=f"tokenizer={source}", where=str(path))
    return ServedTokenizer(tok, template=template, special=special, add_bos=add_bos, source=source)
