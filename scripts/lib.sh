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

# Programs the screen-fidelity tests run inside tmux (tests/fidelity_live.rs,
# and tests/attention.rs: vim, less, `man bash`, python3, top);
# those tests fail, never skip, without them. apt runs only when one is missing.
ensure_test_programs() {
  local missing=()
  command -v vim >/dev/null 2>&1 || missing+=(vim)
  command -v less >/dev/null 2>&1 || missing+=(less)
  command -v man >/dev/null 2>&1 || missing+=(man-db)
  command -v top >/dev/null 2>&1 || missing+=(procps)
  command -v python3 >/dev/null 2>&1 && python3 -c 'import curses' 2>/dev/null || missing+=(python3)
  command -v tput >/dev/null 2>&1 || missing+=(ncurses-bin)
  ((${#missing[@]} == 0)) && return 0
  echo "installing test programs with apt-get: ${missing[*]}" >&2
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# The fleet's network tests (tests/fleet_netns.rs): `ip netns` and veth pairs
# from iproute2, and OpenSSH's server and client for the SSH transport; they
# fail, never skip, without them (and they need root). apt runs only when one
# is missing.
ensure_fleet_tools() {
  local missing=()
  command -v ip >/dev/null 2>&1 || missing+=(iproute2)
  [ -x /usr/sbin/sshd ] || missing+=(openssh-server)
  command -v ssh >/dev/null 2>&1 || missing+=(openssh-client)
  command -v ssh-keygen >/dev/null 2>&1 || missing+=(openssh-client)
  ((${#missing[@]} == 0)) && return 0
  echo "installing the fleet tests' tools with apt-get: ${missing[*]}" >&2
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# Debian's chromium for the dashboard's browser tests (tests/dashboard.rs);
# they fail, never skip, without it. apt runs only when it is missing.
ensure_chromium() {
  if [ -x "${TMUXD_CHROMIUM:-/usr/bin/chromium}" ]; then return 0; fi
  echo "chromium not found; installing Debian's chromium with apt-get" >&2
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  [ -x /usr/bin/chromium ] || { echo "could not install chromium" >&2; return 1; }
}

# playwright-core (the browser tests' driver, no browser of its own) from
# tests/browser/package-lock.json; `npm ci` runs when it is missing or the
# lockfile changed. Node 20 or later is needed.
ensure_browser_driver() {
  local major
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$major" -lt 20 ] || ! command -v npm >/dev/null 2>&1; then
    echo "the browser tests need node >= 20 and npm (found node major $major)" >&2
    return 1
  fi
  local dir=tests/browser
  if [ -d "$dir/node_modules/playwright-core" ] &&
    [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then
    return 0
  fi
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
}

# The Python test tools (a Prometheus parser, schemathesis) pinned in
# tests/py/requirements.txt, in a virtualenv reused across runs; reinstalled
# only when the requirements change. Tests fail, never skip, without them.
ensure_python_tools() {
  local venv=${TMUXD_TEST_VENV:-$HOME/.cache/tmuxd/py-venv}
  local wanted=tests/py/requirements.txt stamp=$venv/.requirements
  if [ -x "$venv/bin/python" ] && cmp -s "$wanted" "$stamp"; then return 0; fi
  if ! python3 -m venv --help >/dev/null 2>&1; then
    echo "python3 venv support missing; installing it with apt-get" >&2
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
  fi
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$wanted"
  cp "$wanted" "$stamp"
}

# tmux 3.7c, the first release without the control-client crash of tmux
# issue 4980, which Debian 13's backports ship: a minimal Debian 13 root
# (debootstrap, from Debian's registry) with tmux from trixie-backports,
# run with that root's own loader and libraries (its glibc is newer than
# the host's). Prints the directory of a `tmux` wrapper to put first on PATH.
ensure_tmux_37() {
  local root=${TMUXD_TRIXIE_ROOT:-$HOME/.cache/tmuxd/trixie-root}
  local bin=${root%/*}/bin-3.7c
  if [ ! -x "$root/usr/bin/tmux" ]; then
    command -v debootstrap >/dev/null 2>&1 || {
      as_root apt-get update -qq >&2
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
    }
    echo "making a Debian 13 root for tmux 3.7c in $root (once)" >&2
    mkdir -p "${root%/*}"
    as_root debootstrap --variant=minbase trixie "$root" http://deb.debian.org/debian >/dev/null
    echo "deb http://deb.debian.org/debian trixie-backports main" |
      as_root tee "$root/etc/apt/sources.list.d/backports.list" >/dev/null
    as_root chroot "$root" apt-get update -qq >&2
    as_root chroot "$root" env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq -t trixie-backports tmux >/dev/null
  fi
  mkdir -p "$bin"
  cat >"$bin/tmux" <<WRAPPER
#!/bin/sh
exec "$root/lib64/ld-linux-x86-64.so.2" --library-path "$root/lib/x86_64-linux-gnu:$root/usr/lib/x86_64-linux-gnu" "$root/usr/bin/tmux" "\$@"
WRAPPER
  chmod +x "$bin/tmux"
  case "$("$bin/tmux" -V)" in
    "tmux 3.7"*) echo "$bin" ;;
    *) echo "the tmux in $root is not 3.7: $("$bin/tmux" -V)" >&2; return 1 ;;
  esac
}
