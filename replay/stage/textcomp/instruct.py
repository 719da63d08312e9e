"""Instruct templates: the sequences a Text Completion front end writes around each turn, read
back into the turns of a chat, so a Text Completion front end's prompt folds as a chat does.

A front end's Text Completion connection sends one prompt string: the story (system prompt),
then each turn as ``sequence + (name: ) text + suffix`` in the model family's format, and at
the end the opening sequence of the reply to write. A :class:`Template` holds those sequences;
:func:`read_template` takes them from a game's ``options.json`` — ``"instruct": "chatml"`` (a
built-in one, :data:`BUILT_IN`), an object of the sequences themselves, or SillyTavern's
instruct preset JSON as it exports it — and :meth:`Template.parse` cuts a prompt into turns.

The turns are what the chat route reads from ``messages`` (system, user, assistant), each with
where its text lies in the prompt, so that the GM section is spliced into the client's own
prompt and nothing else of it changes. A prompt that does not parse with the template — none of
its sequences in it, or it does not end inside an assistant turn (an impersonation: the model
writes the player's line) — is a :class:`NotParsed` value saying why: the stage passes it on
untouched.

Each built-in is written from its model family's published chat template (the tokenizer's
``chat_template``), with the separators a front end puts between the sequence and the text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from ...files import InputError

Role = Literal["system", "user", "assistant"]
Names = Literal["none", "force", "always"]
# A sequence's macro ({{name}}, {{user}}, {{char}}): whatever name the front end put there.
MACRO = re.compile(r"\{\{[^{}]{1,32}\}\}")
MACRO_NAME = r"[^\n{}]{0,64}?"
# What a reply that has not begun yet holds when the front end writes the speaker's name first
# (SillyTavern's "GM:"): a name and a colon, nothing else.
NAME_ONLY = re.compile(r"[^\n\[\]{}:]{1,64}:")
MAX_SEQUENCE = 200  # characters of one sequence


@dataclass(frozen=True)
class Template:
    """The sequences of one instruct format (SillyTavern's instruct preset fields)."""

    name: str
    user: str  # input_sequence
    assistant: str  # output_sequence
    system: str = ""  # system_sequence; "" : as a user turn (system_same_as_user), else bare
    user_suffix: str = ""
    assistant_suffix: str = ""
    system_suffix: str = ""
    system_same_as_user: bool = False
    wrap: bool = False  # a newline between the sequence and the text, and after a bare text
    first_user: str = ""
    last_user: str = ""
    first_assistant: str = ""
    last_assistant: str = ""
    last_system: str = ""
    story_prefix: str = ""  # system_sequence_prefix: before the story (system prompt)
    stop: str = ""  # stop_sequence
    names: Names = "none"  # names_behavior: whether a turn's text begins with "Name: "

    @cached_property
    def _marks(self) -> tuple[re.Pattern[str], tuple[Role, ...]]:
        """One pattern of every sequence that opens a turn (the longest first where several
        match at one place), and the role of each alternative."""
        found: dict[str, Role] = {}
        openings: tuple[tuple[str, Role], ...] = (
            (self.system, "system"), (self.last_system, "system"), (self.story_prefix, "system"),
            (self.user, "user"), (self.first_user, "user"), (self.last_user, "user"),
            (self.assistant, "assistant"), (self.first_assistant, "assistant"),
            (self.last_assistant, "assistant"))
        for sequence, role in openings:
            opening = sequence if sequence.strip() else ""
            if opening and opening not in found:
                found[opening] = role
        ordered = sorted(found, key=lambda s: -len(s))
        pattern = "|".join(f"({_pattern(s)})" for s in ordered)
        return re.compile(pattern), tuple(found[s] for s in ordered)

    def suffix(self, role: Role) -> str:
        """What ends a turn of ``role`` (a newline when the template wraps and names none)."""
        if role == "system" and self.system:
            written = self.system_suffix
        elif role == "system" and not self.system_same_as_user:
            written = ""
        else:
            written = self.assistant_suffix if role == "assistant" else self.user_suffix
        return written or ("\n" if self.wrap else "")

    def system_turn(self, text: str) -> str:
        """``text`` as a system turn of this template, as the front end writes one in a chat:
        the system sequence, else (``system_same_as_user``) the user's, else bare."""
        sequence = self.system or (self.user if self.system_same_as_user else "")
        sequence = MACRO.sub("System", sequence)
        # a bare text is kept apart from the turn after it by a blank line
        suffix = MACRO.sub("System", self.suffix("system")) or ("" if sequence else "\n\n")
        return "\n".join(p for p in (sequence, text + suffix) if p) if self.wrap else \
            sequence + text + suffix

    def turn(self, role: Role, text: str, name: str | None = None,
             sequence: str | None = None) -> str:
        """One turn as a front end writes it: its sequence, the speaker's name when the
        template names speakers, the text, the suffix."""
        if role == "system":
            return self.system_turn(text)
        opening = sequence if sequence is not None else \
            self.user if role == "user" else self.assistant
        opening = MACRO.sub(name or "System", opening)
        written = f"{name}: {text}" if name and self.names == "always" else text
        return "\n".join(p for p in (opening, written + self.suffix(role)) if p) \
            if self.wrap else opening + written + self.suffix(role)

    def render(self, messages: Sequence[Mapping[str, Any]], reply: str = "",
               name: str | None = None) -> str:
        """A chat as a front end's Text Completion prompt: each message a turn, then the
        reply's sequence (the speaker ``name`` after it when the template names speakers)
        and ``reply``, the text it begins with. For tests and the model game harness."""
        written = "".join(self.turn(m["role"], str(m.get("content") or ""), m.get("name"))
                          for m in messages)
        opening = MACRO.sub(name or "Assistant", self.last_assistant or self.assistant)
        if self.wrap:
            opening += "\n"
        if name and self.names == "always":
            opening += f"{name}:" + (" " if reply else "")
        return written + opening + reply

    def parse(self, prompt: str) -> ParsedPrompt | NotParsed:
        """The turns of ``prompt``, the last one the assistant reply being written."""
        pattern, roles = self._marks
        marks = [(m.start(), m.end(), roles[m.lastindex - 1]) for m in pattern.finditer(prompt)
                 if m.lastindex is not None]
        if not marks:
            return NotParsed("no-turns", f"no turn of the {self.name!r} instruct template in "
                             "the prompt (is it the template the front end uses?)")
        turns: list[PromptTurn] = []
        head = prompt[:marks[0][0]]
        if head.strip():  # the story before the first sequence: a bare system prompt
            turns.append(PromptTurn("system", 0, 0, len(head.rstrip()), True))
        for index, (start, opened, role) in enumerate(marks):
            end = marks[index + 1][0] if index + 1 < len(marks) else len(prompt)
            text_start = opened + 1 if self.wrap and prompt.startswith("\n", opened) else opened
            text_start = min(text_start, end)
            segment = prompt[text_start:end]
            suffix = self.suffix(role).strip()
            kept = segment.rstrip()
            if suffix and kept.endswith(suffix):
                turns.append(PromptTurn(role, start, text_start,
                                        text_start + len(kept) - len(suffix), True))
            else:
                # no suffix, or one of blanks: the next sequence (or the prompt's end) ends it
                closed = index + 1 < len(marks) and (not suffix or role == "system")
                turns.append(PromptTurn(role, start, text_start,
                                        text_start + (len(kept) if closed else len(segment)),
                                        closed))
        last = turns[-1]
        if last.role == "user" and not last.closed:
            return NotParsed("impersonation", "the prompt ends inside a user turn: the model "
                             "writes the player's line (an impersonation)")
        if last.role != "assistant" or last.closed:
            return NotParsed("no-reply", "the prompt does not end inside an assistant turn")
        return ParsedPrompt(self, prompt, tuple(turns))


@dataclass(frozen=True)
class PromptTurn:
    """One turn of a prompt: its role, where its sequence starts and where its text lies."""

    role: Role
    start: int  # the turn's first character (its sequence's)
    text_start: int
    text_end: int
    closed: bool  # its suffix (or the next turn) ends it; the reply being written is not


@dataclass(frozen=True)
class NotParsed:
    """Why a prompt does not parse with a template (the reason is a header's value)."""

    reason: str
    message: str


@dataclass(frozen=True)
class ParsedPrompt:
    """A prompt cut into turns: the chat messages the fold reads, and where each lies."""

    template: Template
    prompt: str
    turns: tuple[PromptTurn, ...]

    @cached_property
    def opening(self) -> str:
        """The text of the reply being written that the prompt already holds."""
        last = self.turns[-1]
        return self.prompt[last.text_start:last.text_end]

    @property
    def continues(self) -> bool:
        """Whether the prompt continues a reply (SillyTavern's Continue, a prefill), not only
        opens one (nothing, or only the speaker's name, after the reply's sequence)."""
        written = self.opening.strip()
        return bool(written) and NAME_ONLY.fullmatch(written) is None

    @cached_property
    def counted(self) -> tuple[PromptTurn, ...]:
        """The turns that are chat messages: every one but an unwritten reply."""
        return self.turns if self.continues else self.turns[:-1]

    def messages(self) -> list[dict[str, str]]:
        """The chat as the chat route's ``messages`` (the reply being continued last)."""
        return [{"role": turn.role, "content": self.prompt[turn.text_start:turn.text_end]}
                for turn in self.counted]

    def offset(self, message: int) -> int:
        """Where in the prompt what goes before message ``message`` is put: the start of its
        turn; after the last message, before the reply's own sequence (never inside the reply
        being continued)."""
        counted = self.counted
        if message >= len(counted):
            return self.turns[-1].start
        return counted[message].start

    def text_span(self, message: int) -> tuple[int, int]:
        turn = self.counted[message]
        return turn.text_start, turn.text_end


def _pattern(sequence: str) -> str:
    """A sequence as a pattern: its text as written, each macro any short name."""
    pieces, at = [], 0
    for macro in MACRO.finditer(sequence):
        pieces += [re.escape(sequence[at:macro.start()]), MACRO_NAME]
        at = macro.end()
    pieces.append(re.escape(sequence[at:]))
    return "".join(pieces)


# The built-in templates, from each family's published chat template.
BUILT_IN: dict[str, Template] = {t.name: t for t in (
    # <|im_start|>role\ntext<|im_end|>\n (Qwen, Hermes, and every ChatML model)
    Template("chatml", "<|im_start|>user", "<|im_start|>assistant", "<|im_start|>system",
             "<|im_end|>\n", "<|im_end|>\n", "<|im_end|>\n", wrap=True, stop="<|im_end|>"),
    # Meta Llama 3 / 3.1 / 3.2 / 3.3
    Template("llama3", "<|start_header_id|>user<|end_header_id|>\n\n",
             "<|start_header_id|>assistant<|end_header_id|>\n\n",
             "<|start_header_id|>system<|end_header_id|>\n\n", "<|eot_id|>", "<|eot_id|>",
             "<|eot_id|>", stop="<|eot_id|>"),
    # Mistral V7 (Mistral Large 2411): [SYSTEM_PROMPT] ...[/SYSTEM_PROMPT][INST] ...[/INST] ...</s>
    Template("mistral-v7", "[INST] ", "[/INST] ", "[SYSTEM_PROMPT] ", "", "</s>",
             "[/SYSTEM_PROMPT]", last_assistant="[/INST]", stop="</s>"),
    # Mistral V7-Tekken (Mistral Small 3): the same without the spaces
    Template("mistral-v7-tekken", "[INST]", "[/INST]", "[SYSTEM_PROMPT]", "", "</s>",
             "[/SYSTEM_PROMPT]", stop="</s>"),
    # Mistral V3-Tekken (Nemo): no system turn, the system text is a user turn's
    Template("mistral-tekken", "[INST]", "[/INST]", "", "", "</s>", "",
             system_same_as_user=True, stop="</s>"),
    # Gemma 2 and 3: no system turn (the system text opens the first user turn)
    Template("gemma", "<start_of_turn>user", "<start_of_turn>model", "", "<end_of_turn>\n",
             "<end_of_turn>\n", "", system_same_as_user=True, wrap=True, stop="<end_of_turn>"),
    # Alpaca: ### Instruction: / ### Response:, the context as ### Input:
    Template("alpaca", "### Instruction:", "### Response:", "### Input:", "\n\n", "\n\n",
             "\n\n", wrap=True),
    # Metharme (Pygmalion): <|system|>, <|user|>, <|model|>, nothing between turns
    Template("metharme", "<|user|>", "<|model|>", "<|system|>", stop="</s>"),
    # Vicuna 1.1: "USER: ... ASSISTANT: ...</s>", the system text bare at the top
    Template("vicuna", "USER: ", "ASSISTANT: ", "", " ", "</s>", "\n\n", stop="</s>"),
)}
ALIASES = {"llama-3": "llama3", "gemma2": "gemma", "gemma3": "gemma", "gemma-2": "gemma",
           "gemma-3": "gemma", "mistral-v3-tekken": "mistral-tekken", "vicuna-1.1": "vicuna",
           "pygmalion": "metharme"}

# SillyTavern's instruct preset keys (as it exports them) -> Template fields.
PRESET_KEYS = {
    "input_sequence": "user", "output_sequence": "assistant", "system_sequence": "system",
    "input_suffix": "user_suffix", "output_suffix": "assistant_suffix",
    "system_suffix": "system_suffix", "first_input_sequence": "first_user",
    "last_input_sequence": "last_user", "first_output_sequence": "first_assistant",
    "last_output_sequence": "last_assistant", "last_system_sequence": "last_system",
    "system_sequence_prefix": "story_prefix", "stop_sequence": "stop",
}
# The sequences in gmtags' own spelling (camelCase, as every key of options.json).
OWN_KEYS = {
    "user": "user", "assistant": "assistant", "system": "system", "userSuffix": "user_suffix",
    "assistantSuffix": "assistant_suffix", "systemSuffix": "system_suffix",
    "firstUser": "first_user", "lastUser": "last_user", "firstAssistant": "first_assistant",
    "lastAssistant": "last_assistant", "lastSystem": "last_system",
    "storyPrefix": "story_prefix", "stop": "stop",
}


def read_template(options: Mapping[str, Any], path: object) -> Template | None:
    """The game's instruct template (``options.json`` ``"instruct"``), None when it has none.

    Raises :class:`InputError` naming the option's JSON pointer in ``path``."""
    value = options.get("instruct")
    if value is None:
        return None
    if isinstance(value, str):
        key = value.strip().lower().replace(" ", "-").replace("_", "-")
        found = BUILT_IN.get(ALIASES.get(key, key))
        if found is None:
            raise InputError(f"{path}#/instruct: {value!r} is no built-in template (there are "
                             f"{', '.join(sorted(BUILT_IN))}); or give the sequences, or "
                             "SillyTavern's instruct preset JSON")
        return found
    if not isinstance(value, dict):
        raise InputError(f"{path}#/instruct: is a built-in template's name or an object of "
                         "sequences")
    preset = "input_sequence" in value or "output_sequence" in value
    keys = PRESET_KEYS if preset else OWN_KEYS
    fields: dict[str, Any] = {}
    for key, item in value.items():
        target = keys.get(key)
        if target is None:
            continue  # a preset's other settings (activation_regex, macro, ...) and names
        if not isinstance(item, str) or len(item) > MAX_SEQUENCE:
            raise InputError(f"{path}#/instruct/{key}: is text of at most {MAX_SEQUENCE} "
                             "characters")
        fields[target] = item
    flags = (("wrap", "wrap"), ("system_same_as_user", "system_same_as_user")) if preset else \
        (("wrap", "wrap"), ("systemSameAsUser", "system_same_as_user"))
    for key, target in flags:
        if key in value:
            if not isinstance(value[key], bool):
                raise InputError(f"{path}#/instruct/{key}: is true or false")
            fields[target] = value[key]
    names = value.get("names_behavior" if preset else "names", "none")
    if names not in ("none", "force", "always"):
        raise InputError(f"{path}#/instruct/{'names_behavior' if preset else 'names'}: is "
                         f'"none", "force" or "always", not {names!r}')
    name = value.get("name") if isinstance(value.get("name"), str) else "custom"
    user, assistant = fields.get("user", ""), fields.get("assistant", "")
    if not user.strip() or not assistant.strip():
        raise InputError(f"{path}#/instruct: needs the user and assistant sequences (turns "
                         "are read by them)")
    if _pattern(user) == _pattern(assistant):
        raise InputError(f"{path}#/instruct: the user and assistant sequences are the same "
                         "(a name in them is not enough to tell the turns apart)")
    return Template(name=str(name)[:64], names=names, **fields)


__all__ = ["BUILT_IN", "NotParsed", "ParsedPrompt", "PromptTurn", "Template", "read_template"]
