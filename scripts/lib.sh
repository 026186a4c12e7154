# Shared by scripts/serve, scripts/test and scripts/bench: install what a
# fresh Debian machine with only the Rust toolchain lacks.

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# tmux is required; tests that need it fail (never skip) without it.
ensure_tmux() {
  if command -v tmux >/dev/null 2>&1; then return 0; fi
  echo "tmux not found; installing it with apt-get" >&2
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null
  command -v tmux >/dev/null 2>&1 || { echo "could not install tmux" >&2; return 1; }
}

ensure_cargo_component() {
  local component=$1 probe=$2
  if cargo "$probe" --version >/dev/null 2>&1; then return 0; fi
  rustup component add "$component"
}

# Programs the screen-fidelity tests run inside tmux (tests/fidelity_live.rs);
# those tests fail, never skip, without them. apt runs only when one is missing.
ensure_test_programs() {
  local missing=()
  command -v vim >/dev/null 2>&1 || missing+=(vim)
  command -v less >/dev/null 2>&1 || missing+=(less)
  command -v top >/dev/null 2>&1 || missing+=(procps)
  command -v python3 >/dev/null 2>&1 && python3 -c 'import curses' 2>/dev/null || missing+=(python3)
  command -v tput >/dev/null 2>&1 || missing+=(ncurses-bin)
  ((${#missing[@]} == 0)) && return 0
  echo "installing test programs with apt-get: ${missing[*]}" >&2
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}
