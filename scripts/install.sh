# Sourced by scripts/demo and scripts/test: the one install they share, and (for the tests)
# the system programs apt-get installs.
#
# install_gmtags [EXTRA] makes .venv (if missing) and installs gmtags into it editable, from
# this checkout, with the optional extra ("test"). A second call finds the install already
# there and skips pip, unless the packaging files changed since or an extra is missing, so
# scripts/demo after scripts/test keeps the test tools and the editable install both.

STAMP=.venv/.gmtags-install  # the extras installed, written after a successful install

install_gmtags() {
    local extra="${1:-}" wanted=".[${1:-}]"
    [ -n "$extra" ] || wanted="."
    [ -x .venv/bin/python ] || python3 -m venv .venv
    if [ -f "$STAMP" ] && [ -x .venv/bin/gmtags ] \
        && { [ -z "$extra" ] || grep -qx "$extra" "$STAMP"; } \
        && [ -z "$(find pyproject.toml setup.py tagparse/_scan.c tagparse/_scan_reader.h \
                        -newer "$STAMP" 2>/dev/null)" ]; then
        return 0
    fi
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e "$wanted"
    { [ -f "$STAMP" ] && cat "$STAMP"; echo "${extra:-base}"; } | sort -u > "$STAMP.new"
    mv "$STAMP.new" "$STAMP"
}

# The system programs: need PROGRAM PACKAGE WHAT-NEEDS-IT installs PACKAGE with apt-get when
# PROGRAM (a path or a name on PATH) is missing. apt-get waits up to APT_WAIT seconds for
# another apt holding its lock and is tried three times; where it cannot run, this says what
# to install, and under CI (the CI variable set) exits 1 instead of letting tests skip.

APT_WAIT="${APT_WAIT:-600}"
APT_PAUSE="${APT_PAUSE:-15}"  # seconds times the attempt between tries
say() { echo "scripts/test: $*" >&2; }

# How to run apt-get here: as root, through sudo, or not at all (prints why not).
apt_runner() {
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "no apt-get on this machine"; return 1
    fi
    if [ "$(id -u)" -eq 0 ]; then echo ""; return 0; fi
    if command -v sudo >/dev/null 2>&1; then
        if [ -t 0 ] || sudo -n true 2>/dev/null; then echo "sudo"; return 0; fi
        echo "sudo needs a password and there is no terminal to ask for it"; return 1
    fi
    echo "this is not root and there is no sudo"; return 1
}

# apt_install PACKAGE: wait for a busy apt, retry, and be quiet unless it fails.
apt_install() {
    local runner="$1" package="$2" attempt log
    log="$(mktemp)"
    for attempt in 1 2 3; do
        if $runner apt-get -o DPkg::Lock::Timeout="$APT_WAIT" update -qq >"$log" 2>&1 \
            && $runner env DEBIAN_FRONTEND=noninteractive \
                apt-get -o DPkg::Lock::Timeout="$APT_WAIT" install -y -qq "$package" \
                >>"$log" 2>&1; then
            rm -f "$log"; return 0
        fi
        say "apt-get install $package failed (attempt $attempt of 3):"
        tail -n 3 "$log" | sed 's/^/    /' >&2
        [ "$attempt" -lt 3 ] && sleep $((attempt * APT_PAUSE))
    done
    rm -f "$log"; return 1
}

# need PROGRAM-PATH-OR-NAME PACKAGE WHAT-NEEDS-IT: install PACKAGE when PROGRAM is missing.
need() {
    local program="$1" package="$2" why="$3" runner
    if [ -x "$program" ] || command -v "$program" >/dev/null 2>&1; then return 0; fi
    if runner="$(apt_runner)" && apt_install "$runner" "$package"; then return 0; fi
    [ -n "$runner" ] && [ "$runner" != "sudo" ] || runner="apt-get failed"
    say "cannot install $package ($runner): install it yourself, e.g." \
        "'sudo apt-get install $package', so that $program exists."
    if [ -n "${CI:-}" ]; then
        say "CI is set, so a missing $package fails the run ($why need it)."
        exit 1
    fi
    say "until then $why skip."
}

