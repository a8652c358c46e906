#!/usr/bin/env bash
# Try `jaxfix lsp` as a new user would, in a real editor driven headless: Neovim (0.7 or later, e.g. Debian's
# `apt-get install neovim`) with scripts/nvim/init.lua opens a copy of a corpus file, gets jaxfix's diagnostic,
# applies its quick fix from the code action menu, writes the file; the written file must equal the corpus's
# after.py. Usage: scripts/nvim_smoke.sh   (JAXFIX=/path/to/jaxfix to use a jaxfix not on PATH)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
export JAXFIX="${JAXFIX:-$(command -v jaxfix)}"
command -v nvim >/dev/null || { echo "nvim_smoke: needs Neovim (nvim) on PATH" >&2; exit 2; }
[ -x "$JAXFIX" ] || { echo "nvim_smoke: needs jaxfix on PATH, or JAXFIX=/path/to/jaxfix" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
case_dir="$root/corpus/print_in_traced/jit_value"
cp "$case_dir/before.py" "$work/demo.py"
cd "$work"
nvim --version | head -1
# --headless: no UI; -u: only this set-up; -i NONE: no shada. drive.lua prints its report and quits.
timeout 120 nvim --headless -i NONE -u "$here/nvim/init.lua" demo.py -c "luafile $here/nvim/drive.lua"
echo
if diff -u "$case_dir/after.py" demo.py; then
  echo "nvim_smoke: ok: the file Neovim wrote equals corpus/print_in_traced/jit_value/after.py"
else
  echo "nvim_smoke: FAIL: the file Neovim wrote differs from after.py (above)"
  exit 1
fi
