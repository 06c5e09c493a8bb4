#!/usr/bin/env bash
# Installs what building Nucleic needs on Debian: the C libraries it links (libgit2, SQLite,
# libsodium, libqrencode, libdbus-1, libcurl, libcrypto) and python3-venv for the test peers; dbus-daemon and
# python3-dbusmock (run by Debian's /usr/bin/python3) for the desktop notification tests.
# zsh and fish check the shell completions (`nucleic completion zsh|fish`), groff the man page.
# Idempotent: installs only what is missing.
# Swift 6 itself is expected at /opt/swift or on PATH (see README.md).
set -euo pipefail
packages=(libgit2-dev libsqlite3-dev libsodium-dev libqrencode-dev libdbus-1-dev libcurl4-openssl-dev libssl-dev dbus-daemon python3-dbusmock pkg-config python3-venv git tmux zsh fish groff-base)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# python3-venv is Debian's packaging of the venv module; a Python that has it built in is fine.
if printf '%s\n' "${missing[@]}" | grep -qx python3-venv && python3 -c 'import venv, ensurepip' 2>/dev/null; then
    missing=("${missing[@]/python3-venv}")
fi
missing=($(printf '%s\n' "${missing[@]}" | grep -v '^$' || true))
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >&2
fi
if ! command -v swift >/dev/null 2>&1; then
    if [ -x /opt/swift/usr/bin/swift ]; then
        echo "export PATH=/opt/swift/usr/bin:\$PATH"
    else
        echo "setup: Swift 6 is not installed; get it from https://swift.org/install/linux/ and put it on PATH" >&2
        exit 1
    fi
fi
