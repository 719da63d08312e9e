"""Setting up a SillyTavern install and its data root for the real-client check.

Nothing of SillyTavern is in gmtags: these functions check a release out of the user's own git
copy (a clone or a bare snapshot) into a cache folder, run ``npm install`` there, and write the
few files the check needs in a data root of its own (settings, a character card). The pure parts
(the settings, the card, the config) are unit-tested in ``tests/benchmarks/``.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

CACHE = Path(os.environ.get("GMTAGS_ST_CACHE", Path.home() / ".cache" / "gmtags-sillytavern"))
USER = "default-user"  # SillyTavern's single user, when user accounts are off


# -- getting SillyTavern ----------------------------------------------------------------------


def _git(git_dir: Path, *args: str, **kw: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True,
                          capture_output=True, **kw)


def git_dir_of(path: Path) -> Path:
    """The git directory of a clone (``PATH/.git``) or of a bare repository (``PATH``)."""
    out = subprocess.run(["git", "-C", str(path), "rev-parse", "--absolute-git-dir"],
                         check=True, capture_output=True, text=True).stdout.strip()
    return Path(out)


def release_tags(git_dir: Path) -> list[str]:
    """The release tags (``1.12.6``, not ``1.12.0-preview``), oldest first."""
    tags = _git(git_dir, "tag").stdout.decode().split()
    plain = [t for t in tags if all(p.isdigit() for p in t.split("."))]
    return sorted(plain, key=lambda t: tuple(int(p) for p in t.split(".")))


def export_tag(git_dir: Path, tag: str, dest: Path) -> list[str]:
    """Write the files of ``tag`` under ``dest``; returns the paths whose content the copy lacks.

    A snapshot may lack its largest blobs (a source map, two tokenizer files that SillyTavern
    loads only when a model that needs them is chosen): those are left out and named, the rest
    is written as ``git archive`` would.
    """
    listing = _git(git_dir, "ls-tree", "-r", "-z", tag).stdout.decode().split("\0")
    entries = []
    for line in filter(None, listing):
        meta, path = line.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind == "blob":
            entries.append((mode, sha, path))
    shas = "".join(f"{sha}\n" for _, sha, _ in entries).encode()
    proc = subprocess.Popen(["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin and proc.stdout
    proc.stdin.write(shas)
    proc.stdin.close()
    missing = []
    tmp = dest.with_name(dest.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    for mode, _sha, path in entries:
        header = proc.stdout.readline().decode().split()
        if header[-1] == "missing":
            missing.append(path)
            continue
        size = int(header[2])
        data = proc.stdout.read(size)
        proc.stdout.read(1)  # the newline after each object
        target = tmp / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            target.symlink_to(data.decode())
        else:
            target.write_bytes(data)
            if mode == "100755":
                target.chmod(0o755)
    proc.wait()
    (tmp / ".gmtags-export.json").write_text(json.dumps({"tag": tag, "missing": missing}))
    tmp.rename(dest)
    return missing


def npm_install(st_dir: Path) -> None:
    """``npm install`` in ``st_dir`` unless its modules are there already."""
    stamp = st_dir / "node_modules" / ".gmtags-installed"
    if stamp.exists():
        return
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--omit=dev"], cwd=st_dir,
                   check=True)
    stamp.write_text("ok\n")


def version_of(st_dir: Path) -> str:
    return str(json.loads((st_dir / "package.json").read_text())["version"])


# -- running it with a config and data root of its own ----------------------------------------

#: config.yaml keys the check sets, over the install's ``default/config.yaml``. Loopback only,
#: the whitelist on (loopback addresses), no basic auth, no browser opened, nothing fetched
#: from the network (tokenizers, extension updates), no server plugins.
CONFIG_OVERRIDES: dict[str, Any] = {
    "listen": False,
    "protocol": {"ipv4": True, "ipv6": False},
    "whitelistMode": True,
    "whitelist": ["127.0.0.1", "::1"],
    "basicAuthMode": False,
    "enableUserAccounts": False,
    "securityOverride": False,
    "autorun": False,
    "enableExtensionsAutoUpdate": False,
    "enableDownloadableTokenizers": False,
    "enableServerPlugins": False,
    "disableChatBackup": True,
}


def config_yaml(port: int, data_root: Path) -> str:
    """The config the check runs SillyTavern with: flat YAML a reader of any version takes.

    Written as JSON values (YAML 1.2 is a superset of JSON), one key a line.
    """
    values = {"dataRoot": str(data_root), "port": port, **CONFIG_OVERRIDES}
    return "".join(f"{key}: {json.dumps(value)}\n" for key, value in values.items())


def shadow_dir(st_dir: Path, run_dir: Path, port: int, data_root: Path) -> Path:
    """A folder that is ``st_dir`` with the check's own ``config.yaml``.

    SillyTavern reads ``./config.yaml`` and its other files from its working directory; this
    folder links every entry of the install but ``config.yaml`` and ``data``, so the user's own
    config and data are never read or written.
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    for entry in st_dir.iterdir():
        if entry.name in ("config.yaml", "data", "access.log"):
            continue
        link = run_dir / entry.name
        if not link.exists() and not link.is_symlink():
            link.symlink_to(entry.resolve())
    (run_dir / "config.yaml").write_text(config_yaml(port, data_root))
    return run_dir


def server_command(run_dir: Path, port: int, data_root: Path) -> list[str]:
    """``node server.js`` with the settings that matter on the command line as well."""
    return ["node", str(run_dir / "server.js"), "--port", str(port), "--listen", "false",
            "--whitelist", "true", "--autorun", "false", "--basicAuthMode", "false",
            "--dataRoot", str(data_root)]


# -- the data root: settings, the GM's card, the persona --------------------------------------

GM_NAME = "Harrow GM"
GM_PROMPT = (
    "You are the game master of Harrow Vale, a small farming valley with a mill, a toll bridge "
    "and a ruined watchtower. The player plays Ada; Bram the Quiet travels with her. Narrate "
    "briefly and fairly in the second person, and use the game's tags for anything the rules "
    "decide."
)
GM_GREETING = ("Dusk settles over Harrow Vale. Ada and Bram stand at the edge of the old mill "
               "yard; a lantern flickers in the miller's window. What do you do?")


def character_card(name: str = GM_NAME, prompt: str = GM_PROMPT,
                   greeting: str = GM_GREETING) -> dict[str, Any]:
    """A Character Card V2 for the GM (the format SillyTavern reads from a PNG's ``chara``)."""
    data = {
        "name": name, "description": prompt, "personality": "", "scenario": "",
        "first_mes": greeting, "mes_example": "", "creator_notes": "gmtags real-client check",
        "system_prompt": "", "post_history_instructions": "", "alternate_greetings": [],
        "tags": [], "creator": "gmtags", "character_version": "1", "extensions": {},
    }
    flat = {k: data[k] for k in ("name", "description", "personality", "scenario",
                                 "first_mes", "mes_example")}
    return {**flat, "spec": "chara_card_v2", "spec_version": "2.0", "data": data}


def _chunk(kind: bytes, body: bytes) -> bytes:
    return (struct.pack(">I", len(body)) + kind + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))


def card_png(card: dict[str, Any], size: int = 64) -> bytes:
    """A plain grey PNG of ``size`` square carrying ``card`` as SillyTavern reads it.

    The card is a ``tEXt`` chunk with keyword ``chara`` and the card's JSON in base64.
    """
    row = b"\x00" + b"\x80\x80\x80" * size
    ihdr = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    text = b"chara\x00" + base64.b64encode(json.dumps(card).encode())
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"tEXt", text)
            + _chunk(b"IDAT", zlib.compress(row * size)) + _chunk(b"IEND", b""))


def read_card_png(png: bytes) -> dict[str, Any]:
    """The card in a PNG written by :func:`card_png` (for the tests)."""
    pos = 8
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos:pos + 4])
        kind = png[pos + 4:pos + 8]
        body = png[pos + 8:pos + 8 + length]
        if kind == b"tEXt" and body.startswith(b"chara\x00"):
            return dict(json.loads(base64.b64decode(body[6:])))
        pos += 12 + length
    raise ValueError("no chara chunk")


def settings(defaults: dict[str, Any], endpoint: str, *, user: str = "Ada",
             model: str = "gmtags", max_tokens: int = 300,
             character: str = GM_NAME) -> dict[str, Any]:
    """SillyTavern's ``settings.json``: its own defaults with the check's connection.

    Chat Completion, source Custom (OpenAI-compatible) at ``endpoint``, streaming on, the
    persona ``user``, no first-run welcome, and the GM's card as the active character.
    """
    out: dict[str, Any] = json.loads(json.dumps(defaults))
    out["firstRun"] = False
    out["username"] = user
    out["main_api"] = "openai"
    out["active_character"] = f"{character}.png"
    oai = out.setdefault("oai_settings", {})
    oai.update({
        "chat_completion_source": "custom",
        "custom_url": endpoint,
        "custom_model": model,
        "custom_include_body": "",
        "custom_exclude_body": "",
        "custom_include_headers": "",
        "stream_openai": True,
        "openai_max_tokens": max_tokens,
    })
    power = out.setdefault("power_user", {})
    power["personas"] = {**power.get("personas", {}), "user-default.png": user}
    power["default_persona"] = None
    return out


def text_settings(defaults: dict[str, Any], base: str, instruct: dict[str, Any],
                  context: dict[str, Any], **kw: Any) -> dict[str, Any]:
    """:func:`settings` for a Text Completion connection instead: API type ``text_type``
    (llama.cpp, the default, or vLLM) at
    ``base`` (the stage's game URL, no ``/v1``), streaming on, instruct mode on with the
    ``instruct`` preset and the ``context`` template (SillyTavern's own, read from the
    install), the reply length ``max_tokens``."""
    kind = kw.pop("text_type", None) or "llamacpp"
    out = settings(defaults, base, **kw)
    out["main_api"] = "textgenerationwebui"
    out["amount_gen"] = kw.get("max_tokens", 300)
    textgen = out.setdefault("textgenerationwebui_settings", {})
    textgen.update({"type": kind, "streaming": True,
                    "server_urls": {**textgen.get("server_urls", {}), kind: base}})
    if kind == "vllm":
        textgen["vllm_model"] = "gm"  # llama-server serves one model, whatever it is called
    power = out["power_user"]
    power["instruct"] = {**power.get("instruct", {}), **instruct, "enabled": True,
                         "preset": instruct.get("name", "ChatML")}
    power["context"] = {**power.get("context", {}), **context,
                        "preset": context.get("name", "ChatML")}
    return out


def write_data_root(data_root: Path, st_dir: Path, endpoint: str, *,
                    instruct: str | None = None, **kw: Any) -> Path:
    """The check's data root: settings and the GM's card; SillyTavern seeds the rest. With
    ``instruct`` (a preset's name: ``ChatML``), a Text Completion connection to ``endpoint``
    with that instruct preset and context template, as the install ships them."""
    user_dir = data_root / USER
    (user_dir / "characters").mkdir(parents=True, exist_ok=True)
    content = st_dir / "default" / "content"
    defaults = json.loads((content / "settings.json").read_text())
    text_type = kw.pop("text_type", None)
    if instruct is None:
        written = settings(defaults, endpoint, **kw)
    else:
        written = text_settings(
            defaults, endpoint,
            json.loads((content / "presets" / "instruct" / f"{instruct}.json").read_text()),
            json.loads((content / "presets" / "context" / f"{instruct}.json").read_text()),
            text_type=text_type, **kw)
    (user_dir / "settings.json").write_text(json.dumps(written, indent=4))
    (user_dir / "characters" / f"{GM_NAME}.png").write_bytes(card_png(character_card()))
    return user_dir
