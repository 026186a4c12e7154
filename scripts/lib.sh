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
