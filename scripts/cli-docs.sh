#!/usr/bin/env bash
# Regenerates docs/CLI.md and docs/man/nucleic.1 from the command table (Sources/nucleic/
# NucleicCommands*.swift), the one source of `nucleic help`. With --golden, also the help goldens
# (Tests/EndToEndTests/Golden/help*.txt): review their diff before committing it.
# CommandLineTests fails when any of these differ from what the built binary prints.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product nucleic >&2
bin="$(swift build --show-bin-path)/nucleic"
"$bin" __docs markdown > docs/CLI.md
mkdir -p docs/man
"$bin" __docs man > docs/man/nucleic.1
if [ "${1:-}" = "--golden" ]; then
    golden=Tests/EndToEndTests/Golden
    rm -f "$golden"/help*.txt
    "$bin" help > "$golden/help.txt"
    "$bin" __docs commands | while read -r name; do
        # shellcheck disable=SC2086 # the words of a subcommand's name are separate arguments
        "$bin" help $name > "$golden/help-${name// /-}.txt"
    done
fi
