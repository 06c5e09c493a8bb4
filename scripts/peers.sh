#!/usr/bin/env bash
# Installs the pinned Python test peers (the real Claude Code and Codex CLIs, cbor2, noiseprotocol)
# into a virtualenv cached under ~/.cache/nucleic/, keyed by the pins, so a second run downloads
# nothing. Prints `export` lines for the environment the tests read:
#   NUCLEIC_PEERS_PYTHON   the virtualenv's python3
#   NUCLEIC_CLAUDE_BIN     the Claude Code CLI inside its wheel
#   NUCLEIC_CODEX_BIN      the Codex CLI inside its wheel
#   NUCLEIC_ACP_PYTHON     the ACP reference agent's Python 3.12 (its SDK), when a 3.12 is found
#   NUCLEIC_VIBE_BIN       Mistral Vibe's vibe-acp, in a Python 3.12 virtualenv of its own
#   NUCLEIC_PUSH_PYTHON    the push-service peers' python3 (http_ece, py_vapid; hypercorn, h2, PyJWT)
#   NUCLEIC_KIMI_BIN       Kimi CLI (the archived kimi-cli) through bin/kimi-legacy, in a Python 3.13 virtualenv of its own
# Usage: eval "$(scripts/peers.sh)"
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache="${NUCLEIC_CACHE:-$HOME/.cache/nucleic}"
peers="$here/Tests/Peers"

# venv NAME PYTHON REQUIREMENTS WHAT: prints the folder of the virtualenv
# $cache/NAME-<hash of REQUIREMENTS>, made once with PYTHON and the pins installed (a `.complete`
# file marks a finished install, so a second run downloads nothing and a broken one is redone).
# Fails (status 1) when the install does: the caller decides whether that ends the setup.
venv() {
    local name=$1 python=$2 req=$3 what=$4
    local dir
    dir="$cache/$name-$(sha256sum "$req" | cut -c1-12)"
    if [ ! -f "$dir/.complete" ]; then
        echo "peers: installing $what into $dir" >&2
        rm -rf "$dir" && mkdir -p "$cache" || return 1
        "$python" -m venv "$dir" >&2 || return 1
        "$dir/bin/pip" install --quiet --disable-pip-version-check -r "$req" >&2 || return 1
        touch "$dir/.complete"
    fi
    echo "$dir"
}

# find_python VERSION: prints a python3 of that minor version (pyenv's first), or nothing.
find_python() {
    local candidate
    for candidate in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$1".*/bin/python3 "$(command -v "python$1" || true)"; do
        [ -x "$candidate" ] && { echo "$candidate"; return; }
    done
}

venv=$(venv peers python3 "$peers/requirements.txt" "the pinned test peers")
site=$("$venv/bin/python3" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "export NUCLEIC_PEERS_PYTHON=$venv/bin/python3"
echo "export NUCLEIC_CLAUDE_BIN=$site/claude_agent_sdk/_bundled/claude"
echo "export NUCLEIC_CODEX_BIN=$site/codex_cli_bin/bin/codex"

# The ACP reference agent's SDK needs Python >= 3.10: its own virtualenv on a Python 3.12 (pyenv's
# when there is one); skipped with a note when no 3.12 is found. The real ACP agents from PyPI get
# one virtualenv each (their SDK pins differ); one that fails to install only skips its tests.
acp_py=$(find_python 3.12)
if [ -n "$acp_py" ]; then
    acp_venv=$(venv acp "$acp_py" "$peers/requirements-acp.txt" "the ACP SDK")
    echo "export NUCLEIC_ACP_PYTHON=$acp_venv/bin/python3"
    if vibe_venv=$(venv vibe "$acp_py" "$peers/requirements-vibe.txt" "Mistral Vibe"); then
        echo "export NUCLEIC_VIBE_BIN=$vibe_venv/bin/vibe-acp"
    fi
else
    echo "peers: no Python 3.12 found; the ACP reference agent's tests are skipped" >&2
fi

# Kimi CLI needs a Python whose typing tolerates its frozen slotted generic dataclasses: 3.13
# (pyenv's when there is one). Its last release's `kimi` only prints a deprecation notice, so
# bin/kimi-legacy runs the original command line (`kimi-legacy acp` is `kimi acp`).
kimi_py=$(find_python 3.13)
if [ -z "$kimi_py" ]; then
    echo "peers: no Python 3.13 found; the Kimi CLI tests are skipped" >&2
elif kimi_venv=$(venv kimi "$kimi_py" "$peers/requirements-kimi.txt" "Kimi CLI"); then
    kimi="$kimi_venv/bin/kimi-legacy"
    if [ ! -x "$kimi" ]; then
        printf '%s\n' "#!$kimi_venv/bin/python3" "import sys" "from kimi_cli.__main__ import run_original_cli" \
            "sys.exit(run_original_cli(sys.argv[1:]))" > "$kimi"
        chmod +x "$kimi"
    fi
    echo "export NUCLEIC_KIMI_BIN=$kimi"
fi

# The push-service peers (Web Push: http_ece, py_vapid; APNs: hypercorn, h2, PyJWT): a virtualenv
# of their own, so adding them does not reinstall the agent CLIs.
push_venv=$(venv push python3 "$peers/requirements-push.txt" "the push-service peers")
echo "export NUCLEIC_PUSH_PYTHON=$push_venv/bin/python3"
