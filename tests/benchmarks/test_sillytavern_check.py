"""The SillyTavern real-client check's own parts, without SillyTavern, a model or a browser:
the counting of answer parts gmtags did not write, the files it writes for SillyTavern, the
snapshot export, and the reading of a streamed reply."""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from helpers import FIXTURES, ROOT

sys.path.append(str(ROOT / "benchmarks"))  # last: benchmarks/replay.py is no package

import sillytavern_check as check
from sillytavern import counting, prepare

RULESET = FIXTURES / "rulesets/harrow.json"
PARTY = FIXTURES / "parties/harrow.json"


# -- answer-like fragments ----------------------------------------------------------------------


def test_one_fragment_per_answer_part() -> None:
    text = ('[inventory: action="add" item="Rope" | ok="true" text="Added." answered="mid-reply"]'
            ' and [Battle: foe="dog" | ok="false" text="A fight begins."]')
    found = counting.answer_fragments(text)
    assert len(found) == 2
    assert found[0][1].startswith('| ok="true"')
    assert found[1][1] == '| ok="false" text="A fight begins."'


def test_two_parts_in_one_bracket_and_loose_parts_count_apart() -> None:
    text = ('[skill_check: skill="Sneak" | ok="true" text="Ada tries. | ok="true" text="10."]\n'
            'ok="true" at the start of a line,\nanswered="mid-reply" alone')
    assert len(counting.answer_fragments(text)) == 4


def test_prose_has_no_fragments() -> None:
    assert counting.answer_fragments("Bram nods: okay, the book is ok. Answered, he leaves.") == []


def test_unread_heads_are_the_brackets_left_after_the_tags_gmtags_reads() -> None:
    text = '[Add: inventory: action="add"] then [Give: item="rope"] and [a note] [x:y]'
    assert counting.unread_heads(text) == ["Add", "Give", "x"]


def test_blank_spans_takes_each_raw_once_in_order() -> None:
    text = "[a] x [a] y"
    assert counting.blank_spans(text, ["[a]"]) == "    x [a] y"
    assert counting.blank_spans(text, ["[a]", "[a]", "[b]"]) == "    x     y"


def test_answer_part_is_a_bar_outside_quotes() -> None:
    assert counting.has_answer_part('[loot: table="a|b" | ok="true" text="x"]')
    assert not counting.has_answer_part('[loot: table="a|b"]')
    assert not counting.has_answer_part(r'[loot: table="a\"|b"]')


# -- counting replies against gmtags' replay and regress ------------------------------------------

OWN = '[inventory: action="add" item="Torch" who="Ada" | ok="true" text="Added Torch ×1 to Ada\'s bag."]'
FAKE = '[Battle: foe="watchdog" | ok="false" text="A fight begins."]'
BROKEN = '[skill_check: skill="Sneak" dc="10" | ok="true" text="Ada sneaks. | ok="true" text="10."]'


def _answer(message: int, raw: str, ok: bool = True, reason: str | None = None) -> dict:
    return {"message": message, "tag": {"raw": raw}, "ok": ok, "reason": reason}


def _saved() -> list[dict]:
    return [
        {"mes": "Dusk settles.", "is_user": False},
        {"mes": "I take the torch.", "is_user": True},
        {"mes": f"You take it. {OWN}", "is_user": False},
        {"mes": "I sneak.", "is_user": True},
        {"mes": f"{FAKE} The dog wakes. {BROKEN}", "is_user": False},
        {"mes": "A note.", "is_user": False, "is_system": True},
    ]


def _shown(saved: list[dict]) -> list[dict]:
    return [{"mesid": i, "is_user": m["is_user"], "text": m["mes"]} for i, m in enumerate(saved)]


def test_gmtags_parts_pass_and_model_parts_are_counted() -> None:
    saved = _saved()
    replayed = {"answers": [_answer(2, OWN), _answer(4, BROKEN, False, "malformed")]}
    replies = counting.count_replies(saved, _shown(saved), replayed, {"chats": []})
    assert [r.mesid for r in replies] == [0, 2, 4]
    greeting, own, bad = replies
    assert (greeting.foreign, greeting.foreign_shown) == (0, 0)
    assert (own.tags_read, own.written, own.foreign, own.foreign_shown) == (1, 1, 0, 0)
    # the made-up head's part, and both parts of the malformed tag
    assert bad.foreign == 3 and bad.foreign_shown == 3
    assert bad.refused == {"malformed": 1}
    assert bad.unread == ["Battle"] and own.unread == []


def test_a_part_that_differs_from_the_engine_is_not_gmtags() -> None:
    saved = _saved()[:3]
    replayed = {"answers": [_answer(2, OWN)]}
    regressed = {"chats": [{"differences": [{"message": 2, "tag": "x"}]}]}
    own = counting.count_replies(saved, _shown(saved), replayed, regressed)[1]
    assert (own.written, own.differing, own.foreign, own.foreign_shown) == (0, 1, 1, 1)


def test_the_page_is_counted_on_its_own_text() -> None:
    saved = _saved()[:3]
    shown = _shown(saved)
    shown[2]["text"] += ' | ok="true" text="rendered only"'  # what markdown or a script added
    replies = counting.count_replies(saved, shown, {"answers": [_answer(2, OWN)]}, {})
    assert (replies[1].foreign, replies[1].foreign_shown) == (0, 1)


def test_a_reply_not_on_the_page_is_not_counted() -> None:
    saved = _saved()[:3]
    replies = counting.count_replies(saved, _shown(saved)[:2], {"answers": []}, {})
    assert [r.mesid for r in replies] == [0]


def test_the_header_line_of_a_saved_chat_is_skipped() -> None:
    lines = [json.dumps({"user_name": "Ada", "character_name": "GM", "chat_metadata": {}}),
             json.dumps({"name": "GM", "is_user": False, "mes": "Hello."}), ""]
    assert counting.read_sillytavern_chat(lines) == [{"name": "GM", "is_user": False,
                                                      "mes": "Hello."}]


def test_counting_reads_what_gmtags_replay_and_regress_print(tmp_path: Path) -> None:
    """The JSON shapes and message numbers assumed above, from the real commands on a saved
    SillyTavern chat: one reply as gmtags answers it, one with a model's made-up answer."""
    header = {"user_name": "Ada", "character_name": "GM", "create_date": "x",
              "chat_metadata": {}}
    rows = [header,
            {"name": "GM", "is_user": False, "is_system": False, "mes": "Dusk."},
            {"name": "Ada", "is_user": True, "is_system": False, "mes": "I take a torch."},
            {"name": "GM", "is_user": False, "is_system": False,
             "mes": 'You take it. [inventory: action="add" item="Torch" who="Ada"]'},
            {"name": "Ada", "is_user": True, "is_system": False, "mes": "I fight."},
            {"name": "GM", "is_user": False, "is_system": False, "mes": f"{FAKE} Run!"}]
    chat = tmp_path / "raw.jsonl"
    chat.write_text("".join(json.dumps(r) + "\n" for r in rows))
    recorded = tmp_path / "chat.jsonl"
    gmtags = [sys.executable, "-c", "from replay.cli import main; main()"]
    files = ["--ruleset", str(RULESET), "--party", str(PARTY)]
    subprocess.run([*gmtags, "record", str(chat), *files, "-o", str(recorded)], check=True,
                   cwd=ROOT)
    replayed = json.loads(subprocess.run(
        [*gmtags, "replay", str(recorded), *files, "--format", "json"], check=True,
        capture_output=True, text=True, cwd=ROOT).stdout)
    regressed = json.loads(subprocess.run(
        [*gmtags, "regress", str(recorded), *files, "--format", "json"],
        capture_output=True, text=True, cwd=ROOT).stdout)
    saved = counting.read_sillytavern_chat(recorded.read_text().splitlines())
    offset = check.message_offset(saved, replayed)
    replies = counting.count_replies(saved, _shown(saved), replayed, regressed, offset)
    by_id = {r.mesid: r for r in replies}
    assert (by_id[2].written, by_id[2].foreign, by_id[2].foreign_shown) == (1, 0, 0)
    assert (by_id[4].written, by_id[4].foreign, by_id[4].foreign_shown) == (0, 1, 1)


# -- the files written for SillyTavern ------------------------------------------------------------


def test_config_is_loopback_with_the_check_data_root(tmp_path: Path) -> None:
    text = prepare.config_yaml(8123, tmp_path / "data")
    values = {}
    for line in text.splitlines():
        key, _, value = line.partition(": ")
        values[key] = json.loads(value)  # each value is JSON, which YAML reads the same
    assert values["dataRoot"] == str(tmp_path / "data")
    assert values["port"] == 8123
    assert values["listen"] is False and values["whitelistMode"] is True
    assert values["whitelist"] == ["127.0.0.1", "::1"]
    assert values["basicAuthMode"] is False and values["autorun"] is False
    assert values["enableDownloadableTokenizers"] is False


def test_settings_keep_the_defaults_and_set_the_connection() -> None:
    defaults = {"firstRun": True, "username": "User", "main_api": "koboldhorde",
                "amount_gen": 350, "power_user": {"personas": {"x.png": "X"}, "fast_ui_mode": True},
                "oai_settings": {"stream_openai": False, "chat_completion_source": "openai",
                                 "temp_openai": 1.0}}
    out = prepare.settings(defaults, "http://127.0.0.1:9/games/harrow/v1", max_tokens=200)
    assert defaults["username"] == "User"  # the defaults are not changed
    assert out["firstRun"] is False and out["username"] == "Ada"
    assert out["main_api"] == "openai" and out["amount_gen"] == 350
    oai = out["oai_settings"]
    assert oai["chat_completion_source"] == "custom"
    assert oai["custom_url"] == "http://127.0.0.1:9/games/harrow/v1"
    assert oai["stream_openai"] is True and oai["openai_max_tokens"] == 200
    assert oai["temp_openai"] == 1.0
    assert out["power_user"]["personas"] == {"x.png": "X", "user-default.png": "Ada"}
    assert out["active_character"] == f"{prepare.GM_NAME}.png"


def test_a_text_completion_connection_is_llama_cpp_in_instruct_mode(tmp_path: Path) -> None:
    st = tmp_path / "st"
    content = st / "default" / "content"
    (content / "presets" / "instruct").mkdir(parents=True)
    (content / "presets" / "context").mkdir(parents=True)
    (content / "settings.json").write_text(json.dumps({
        "main_api": "koboldhorde", "amount_gen": 350, "oai_settings": {},
        "textgenerationwebui_settings": {"type": "ooba", "server_urls": {}, "streaming": False},
        "power_user": {"instruct": {"enabled": False, "preset": "Alpaca"},
                       "context": {"preset": "Default"}}}))
    (content / "presets" / "instruct" / "ChatML.json").write_text(json.dumps(
        {"input_sequence": "<|im_start|>user", "name": "ChatML"}))
    (content / "presets" / "context" / "ChatML.json").write_text(json.dumps(
        {"story_string": "<|im_start|>system\n{{system}}<|im_end|>", "name": "ChatML"}))
    user = prepare.write_data_root(tmp_path / "data", st, "http://127.0.0.1:9/games/harrow",
                                   instruct="ChatML", max_tokens=200)
    out = json.loads((user / "settings.json").read_text())
    assert out["main_api"] == "textgenerationwebui" and out["amount_gen"] == 200
    textgen = out["textgenerationwebui_settings"]
    assert textgen["type"] == "llamacpp" and textgen["streaming"] is True
    assert textgen["server_urls"] == {"llamacpp": "http://127.0.0.1:9/games/harrow"}
    instruct = out["power_user"]["instruct"]
    assert instruct["enabled"] is True and instruct["preset"] == "ChatML"
    assert instruct["input_sequence"] == "<|im_start|>user"
    assert out["power_user"]["context"]["preset"] == "ChatML"


def test_the_card_is_a_png_with_the_gm_prompt() -> None:
    png = prepare.card_png(prepare.character_card())
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png.endswith(b"IEND\xaeB`\x82")
    pos = 8
    while pos < len(png):  # every chunk's CRC is right
        length = int.from_bytes(png[pos:pos + 4], "big")
        body = png[pos + 4:pos + 8 + length]
        assert zlib.crc32(body) == int.from_bytes(png[pos + 8 + length:pos + 12 + length], "big")
        pos += 12 + length
    card = prepare.read_card_png(png)
    assert card["spec"] == "chara_card_v2" and card["name"] == prepare.GM_NAME
    assert card["data"]["description"].startswith("You are the game master of Harrow Vale")


def test_the_data_root_holds_settings_and_the_card(tmp_path: Path) -> None:
    st = tmp_path / "st"
    (st / "default" / "content").mkdir(parents=True)
    (st / "default" / "content" / "settings.json").write_text(json.dumps({"oai_settings": {}}))
    user = prepare.write_data_root(tmp_path / "data", st, "http://127.0.0.1:9/v1")
    assert json.loads((user / "settings.json").read_text())["oai_settings"]["custom_url"] \
        == "http://127.0.0.1:9/v1"
    assert (user / "characters" / f"{prepare.GM_NAME}.png").exists()


def test_the_run_folder_links_the_install_but_its_config(tmp_path: Path) -> None:
    st = tmp_path / "st"
    (st / "public").mkdir(parents=True)
    (st / "server.js").write_text("// server")
    (st / "config.yaml").write_text("listen: true\n")
    (st / "data").mkdir()
    run = prepare.shadow_dir(st, tmp_path / "run", 8123, tmp_path / "data2")
    assert (run / "server.js").resolve() == (st / "server.js").resolve()
    assert (run / "public").is_symlink()
    assert not (run / "data").exists()
    assert not (run / "config.yaml").is_symlink()
    assert "port: 8123" in (run / "config.yaml").read_text()
    assert (st / "config.yaml").read_text() == "listen: true\n"  # the user's config untouched
    command = prepare.server_command(run, 8123, tmp_path / "data2")
    assert command[:2] == ["node", str(run / "server.js")]
    assert command[command.index("--listen") + 1] == "false"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                    *args], check=True, capture_output=True)


def test_a_tag_is_exported_from_a_git_copy(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "package.json").write_text('{"version": "1.12.6"}')
    (repo / "bin").mkdir()
    (repo / "bin" / "run.sh").write_text("#!/bin/sh\n")
    (repo / "bin" / "run.sh").chmod(0o755)
    (repo / "link").symlink_to("package.json")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one")
    _git(repo, "tag", "1.12.6")
    _git(repo, "tag", "1.12.0-preview")
    _git(repo, "tag", "1.9.1")
    git_dir = prepare.git_dir_of(repo)
    assert prepare.release_tags(git_dir) == ["1.9.1", "1.12.6"]
    dest = tmp_path / "out" / "1.12.6"
    dest.parent.mkdir()
    assert prepare.export_tag(git_dir, "1.12.6", dest) == []
    assert prepare.version_of(dest) == "1.12.6"
    assert (dest / "bin" / "run.sh").stat().st_mode & 0o111
    assert (dest / "link").is_symlink()


# -- the live reply and the report ---------------------------------------------------------------


def test_a_streamed_reply_is_read_with_its_gmtags_object() -> None:
    stream = "\n".join([
        'data: {"choices":[{"delta":{"role":"assistant","content":"You "}}]}', "",
        'data: {"choices":[{"delta":{"content":"take it."}}]}', "",
        'data: {"choices":[{"delta":{},"finish_reason":"stop"}],"gmtags":{"answers":[1],'
        '"takenOut":["| ok=\\"true\\""]}}', "", "data: [DONE]", ""])
    text, meta = check.streamed_reply(stream)
    assert text == "You take it."
    assert meta == {"answers": [1], "takenOut": ['| ok="true"']}
    assert check.streamed_reply(None) == (None, None)


def test_a_text_completion_stream_is_read_too() -> None:
    llama = "\n".join(['data: {"content":"You ","stop":false}', "",
                       'data: {"content":"take it.","stop":false}', "",
                       'data: {"content":"","stop":true,"gmtags":{"answers":[1]}}', ""])
    assert check.streamed_reply(llama) == ("You take it.", {"answers": [1]})
    openai = 'data: {"choices":[{"text":"Go.","finish_reason":"stop"}],"gmtags":{}}\n\n'
    assert check.streamed_reply(openai) == ("Go.", {})


@pytest.mark.parametrize(("version", "expected"), [("1.12.6", (1, 12, 6)),
                                                    ("1.13.0-preview", (1, 13, 0))])
def test_versions_compare_as_numbers(version: str, expected: tuple[int, ...]) -> None:
    assert check.version_tuple(version) == expected
    assert check.version_tuple(version) >= check.MINIMUM


def test_the_report_names_what_was_not_gmtags() -> None:
    result = {
        "sillytavern": "1.12.6", "gmtags_root": "/g", "model": "m.gguf", "turns": 6,
        "swipes": 1, "regenerates": 1, "foreign_shown": 1, "foreign_saved": 1,
        "regress_answers": 5, "regress_differences": 0, "regress_unanswered": 0,
        "regress_exit": 0, "tags_read": 6, "unread": 1, "refused": {}, "live_equal": 8,
        "live_compared": 8, "seconds": [60.0], "errors": [], "access": [],
        "live": [{"kind": "send", "said": "I sneak.", "seconds": 60.0, "answers": 1,
                  "takenOut": ['| ok="true"'], "cut": None, "saved": True}],
        "replies": [{"mesid": 2, "tags_read": 1, "written": 0, "differing": 0,
                     "foreign_saved": ['| ok="true" text="x"'], "foreign_shown": 1,
                     "unread": ["Battle"],
                     "saved_text": "[Battle: | ok=\"true\" text=\"x\"]"}],
        "passed": False,
    }
    text = check.report(result)
    assert "answer parts not written by gmtags: page 1, saved chat 1" in text
    assert "NOT GMTAGS' (saved)" in text and "taken out: | ok=" in text
    assert "heads not read: ['Battle']" in text
    assert text.endswith("FAIL")
