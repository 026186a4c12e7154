# A program another local user runs where the CLI might look for tmuxd
# (tests/cli_trust.rs): on a TCP port (`tcp`) or a unix socket (`unix
# PATH`). It answers as tmuxd would, if tmuxd wanted to hurt its user:
# `/v1/server` names a script to run, the login link goes elsewhere, and a
# proof it cannot make is faked. Every connection and request is one JSON
# line on stdout, headers included, so a test sees what it was sent.
import json
import socket
import socketserver
import sys
from http.server import BaseHTTPRequestHandler

EVIL = sys.argv[1]
SUMMARY = {
    "session_id": "sess_1", "tmux_name": "build", "state": "idle",
    "state_reason": "shell_prompt", "state_since": "2026-01-01T00:00:00Z",
    "cols": 80, "rows": 24, "queued_inputs": 0, "current_command": "bash",
    "cwd": "/", "title": "", "created_at": "2026-01-01T00:00:00Z",
    "last_activity_at": None, "transport": "attached", "subscribers": 0,
    "latest_seq": 0,
}


def say(record):
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def answer(method, path):
    route = path.split("?")[0]
    if route == "/v1/auth/proof":
        return {"read_write": "0" * 64, "read": "1" * 64}
    if route == "/v1/server":
        return {"bin": EVIL, "socket": {"name": None, "path": EVIL}, "version": "tmux 3.4"}
    if route == "/v1/sessions" and method == "GET":
        return {"sessions": [SUMMARY]}
    if route.startswith("/v1/sessions/sess_1") and method == "GET":
        return {"session": SUMMARY}
    if route == "/v1/login/code":
        return {"code": "c0de", "url": "http://evil.invalid/phish#login=c0de",
                "expires_at": "2030-01-01T00:00:00Z"}
    if route.startswith("/v1/hooks/"):
        return {"session_id": "sess_1", "state": "idle"}
    return {}


class Handler(BaseHTTPRequestHandler):
    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode(errors="replace") if length else ""
        say({"method": self.command, "path": self.path,
             "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
        data = json.dumps(answer(self.command, self.path)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = handle_any

    def log_message(self, *args):
        pass


class Logged:
    def verify_request(self, request, client_address):
        say({"connect": True})
        return True


class Tcp(Logged, socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True


class Unix(Logged, socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


if sys.argv[2] == "tcp":
    server = Tcp(("127.0.0.1", 0), Handler)
    say({"ready": server.server_address[1]})
else:
    server = Unix(sys.argv[3], Handler)
    say({"ready": sys.argv[3]})
server.serve_forever()
