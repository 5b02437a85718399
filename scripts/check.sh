#!/usr/bin/env bash
# The checks that need no build: formatting and document references.
#
#   scripts/check.sh
#
# 1. every tracked C++ file is formatted as .clang-format says (Debian's clang-format);
# 2. every document a tracked file names (a path ending in .md, e.g. docs/design.md or
#    docs/spec/ALGORITHMS.md) exists in the repository, relative to the repository root or to
#    the naming file's folder.
# Exit 0 when both hold, 1 listing what does not.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
rc=0

mapfile -t sources < <(git ls-files '*.cpp' '*.h')
if ! clang-format --dry-run -Werror "${sources[@]}" 2>/tmp/zotrain-format.$$; then
  echo "check: not formatted (run clang-format -i on them):" >&2
  grep -o '^[^:]*\.\(cpp\|h\)' /tmp/zotrain-format.$$ | sort -u | sed 's/^/  /' >&2
  rc=1
fi
rm -f /tmp/zotrain-format.$$

# Paths to .md files named in tracked text files; runs/ holds recorded outputs, not references.
missing=0
while IFS=: read -r file ref; do
  ref="${ref#./}"
  [[ -e "$ref" || -e "$(dirname "$file")/$ref" ]] && continue
  echo "check: $file names $ref, which does not exist" >&2
  missing=1
done < <(git ls-files -- ':!runs/' | grep -v '^docs/spec/' | xargs grep -IoE '[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md\b' 2>/dev/null |
  grep -vE ':(https?:|[^:]*/\.\./)' | sort -u)
((missing == 0)) || rc=1

((rc == 0)) && echo "check: formatting and document references ok"
exit "$rc"
