"""Schemathesis hooks for fuzzing tmuxd (tests/fuzz.rs). They keep what is
generated from doing harm or taking long, and nothing else: commands run in
new sessions are made inert (kept, as a shell comment, so odd bytes still
reach tmux), and waits are capped so a case never blocks for minutes.

With TMUXD_FUZZ_NO_AUTH set (a daemon without tokens), the document's
bearer requirement is dropped before the run: it describes a daemon with a
token, and one without needs none."""

import os

import schemathesis

# A wait longer than this is capped (the API allows an hour).
MAX_WAIT_MS = 200
INERT = "exec sleep 3600 #"


@schemathesis.hook
def before_call(context, case, kwargs):
    body = case.body
    if not isinstance(body, dict):
        return
    path, method = case.operation.path, case.method.upper()
    if method == "POST" and path == "/v1/sessions" and isinstance(body.get("command"), str):
        # A comment ends at a newline: drop those so nothing after it runs.
        tail = body["command"].replace("\n", " ").replace("\r", " ")
        body["command"] = INERT + tail
    elif method == "POST" and path == "/v1/sessions" and body.get("command") is None:
        # Absent or null means the default shell, which would then run
        # whatever text the fuzzer types into it (it once made files).
        body["command"] = INERT
    if method == "POST" and path.endswith("/wait"):
        timeout = body.get("timeout_ms")
        if timeout is None or (isinstance(timeout, int) and not isinstance(timeout, bool) and timeout > MAX_WAIT_MS):
            body["timeout_ms"] = MAX_WAIT_MS


@schemathesis.hook
def before_load_schema(context, raw_schema):
    if not os.environ.get("TMUXD_FUZZ_NO_AUTH"):
        return
    raw_schema.pop("security", None)
    for item in raw_schema.get("paths", {}).values():
        for operation in item.values():
            if isinstance(operation, dict):
                operation.pop("security", None)
