#!/usr/bin/env bash
# Installs the pinned Python test peers (the real Claude Code and Codex CLIs, cbor2, noiseprotocol)
# into a virtualenv cached under ~/.cache/nucleic/, keyed by the pins, so a second run downloads
# nothing. Prints `export` lines for the environment the tests read:
#   NUCLEIC_PEERS_PYTHON   the virtualenv's python3
#   NUCLEIC_CLAUDE_BIN     the Claude Code CLI inside its wheel
#   NUCLEIC_CODEX_BIN      the Codex CLI inside its wheel
# Usage: eval "$(scripts/peers.sh)"
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
req="$here/Tests/Peers/requirements.txt"
key=$(sha256sum "$req" | cut -c1-12)
cache="${NUCLEIC_CACHE:-$HOME/.cache/nucleic}"
venv="$cache/peers-$key"
if [ ! -f "$venv/.complete" ]; then
    echo "peers: installing the pinned test peers into $venv" >&2
    rm -rf "$venv"
    mkdir -p "$cache"
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req" >&2
    touch "$venv/.complete"
fi
site=$("$venv/bin/python3" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "export NUCLEIC_PEERS_PYTHON=$venv/bin/python3"
echo "export NUCLEIC_CLAUDE_BIN=$site/claude_agent_sdk/_bundled/claude"
echo "export NUCLEIC_CODEX_BIN=$site/codex_cli_bin/bin/codex"
