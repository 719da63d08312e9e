"""Instruct templates (issue 42): read from a game's options, cut a prompt into turns, never
raise on any prompt."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.files import InputError
from replay.stage.textcomp.instruct import BUILT_IN, NotParsed, ParsedPrompt, read_template

CHAT = [{"role": "system", "content": "You are the GM."},
        {"role": "assistant", "content": "Welcome.", "name": "GM"},
        {"role": "user", "content": "I pick up the rope.", "name": "Ada"},
        {"role": "assistant", "content": 'Taken. [inventory: action="add" item="Rope"]',
         "name": "GM"},
        {"role": "user", "content": "Onward.", "name": "Ada"}]
# SillyTavern's instruct preset keys, as it exports a preset (the ChatML sequences)
PRESET = {"input_sequence": "<|im_start|>user", "output_sequence": "<|im_start|>assistant",
          "last_output_sequence": "", "system_sequence": "<|im_start|>system",
          "stop_sequence": "<|im_end|>", "wrap": True, "macro": True, "names_behavior": "always",
          "activation_regex": "", "system_sequence_prefix": "", "system_sequence_suffix": "",
          "first_output_sequence": "", "skip_examples": False, "output_suffix": "<|im_end|>\n",
          "input_suffix": "<|im_end|>\n", "system_suffix": "<|im_end|>\n",
          "user_alignment_message": "", "system_same_as_user": False,
          "last_system_sequence": "", "name": "My ChatML"}


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_every_built_in_reads_back_the_chat_it_writes(name: str) -> None:
    template = BUILT_IN[name]
    parsed = template.parse(template.render(CHAT))
    assert isinstance(parsed, ParsedPrompt) and not parsed.continues
    assert [m["content"] for m in parsed.messages()] == [m["content"] for m in CHAT]
    assert [m["role"] for m in parsed.messages()][1:] == [m["role"] for m in CHAT][1:]
    continued = template.parse(template.render(CHAT, "Ada looks"))
    assert isinstance(continued, ParsedPrompt) and continued.continues
    assert continued.messages()[-1] == {"role": "assistant", "content": "Ada looks"}


def test_a_names_template_opens_the_reply_with_the_speakers_name() -> None:
    template = read_template({"instruct": PRESET}, "options.json")
    assert template is not None and template.names == "always"
    prompt = template.render(CHAT, name="GM")
    assert prompt.endswith("<|im_start|>assistant\nGM:")
    parsed = template.parse(prompt)
    assert isinstance(parsed, ParsedPrompt) and not parsed.continues
    assert parsed.messages()[3]["content"].startswith("GM: Taken. [inventory:")


@pytest.mark.parametrize(("value", "name"), [
    ("chatml", "chatml"), ("ChatML", "chatml"), ("Llama 3", "llama3"), ("gemma3", "gemma"),
    ("Mistral V7-Tekken", "mistral-v7-tekken"), ("vicuna_1.1", "vicuna"),
    ({"user": "<u>", "assistant": "<a>", "system": "<s>"}, "custom"),
    (PRESET, "My ChatML")])
def test_the_template_is_read_from_the_games_options(value: Any, name: str) -> None:
    template = read_template({"instruct": value}, "options.json")
    assert template is not None and template.name == name


@pytest.mark.parametrize(("value", "pointer"), [
    ("chatlm", "#/instruct: 'chatlm' is no built-in"), (7, "#/instruct: is a built-in"),
    ({"user": "<u>"}, "#/instruct: needs the user and assistant"),
    ({"input_sequence": "<|im_start|>[{{name}}]", "output_sequence": "<|im_start|>[{{name}}]"},
     "are the same"),
    ({"user": "<u>", "assistant": 3}, "#/instruct/assistant: is text"),
    ({"user": "<u>", "assistant": "<a>", "wrap": "yes"}, "#/instruct/wrap: is true or false"),
    ({"user": "<u>", "assistant": "<a>", "names": "some"}, "#/instruct/names: is")])
def test_a_bad_template_names_its_option(value: Any, pointer: str) -> None:
    with pytest.raises(InputError, match=pointer.replace("[", r"\[").replace("(", r"\(")):
        read_template({"instruct": value}, "options.json")


def test_no_template_is_none() -> None:
    assert read_template({}, "options.json") is None


@pytest.mark.parametrize(("prompt", "reason"), [
    ("just some text", "no-turns"),
    ("<|im_start|>user\nhi<|im_end|>\n<|im_start|>user\n", "impersonation"),
    ("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nyo<|im_end|>\n", "no-reply")])
def test_a_prompt_that_does_not_parse_says_why(prompt: str, reason: str) -> None:
    parsed = BUILT_IN["chatml"].parse(prompt)
    assert isinstance(parsed, NotParsed) and parsed.reason == reason


SEQUENCES = st.sampled_from(["<|im_start|>user\n", "<|im_start|>assistant\n",
                             "<|im_start|>system\n", "<|im_end|>\n", "[INST]", "[/INST]", "</s>",
                             "USER: ", "ASSISTANT: ", "### Response:", "\n", "{{", ":"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=12), SEQUENCES), max_size=14),
       st.sampled_from(sorted(BUILT_IN)))
def test_any_prompt_parses_or_says_why_and_never_raises(parts: list[str], name: str) -> None:
    prompt = "".join(parts)
    parsed = BUILT_IN[name].parse(prompt)
    if isinstance(parsed, ParsedPrompt):
        for index, message in enumerate(parsed.messages()):
            start, end = parsed.text_span(index)
            assert prompt[start:end] == message["content"]
            assert 0 <= parsed.offset(index) <= start
        assert parsed.offset(len(parsed.messages())) <= len(prompt)
