"""Credentials against a running `hearth serve`, with Python's standard library only: a raw
WebSocket (protocol v5) `auth` then an optional put, a REST request, and tokens to send.

Run by the hearth serve process tests in Tests/HearthToolTests (ServeTokenTests.swift, ServeLimitsProcessTests.swift,
ServeNamespaceTests.swift, ServeQueryRulesProcessTests.swift, …). Each command prints one JSON object.
Usage:
  token_client.py ws PORT CREDENTIAL [PATH VALUE_JSON]   -> {"hello": …, "auth": {"s":…,"d":…}, "put": {"s":…}}
  token_client.py rest PORT METHOD PATH [BODY_JSON] [--bearer CRED] [--param K=V]…
                                                          -> {"status": N, "body": TEXT}
  token_client.py listens PORT COUNT PUT_BYTES             -> {"listens": [STATUS…], "put": STATUS}
  token_client.py query PORT CREDENTIAL ACTION PATH QUERY_JSON
                                                          -> {"auth": {…}, "answer": {"s":…,"d":…}, "data": …}
  token_client.py hs256 SECRET CLAIMS_JSON                -> {"token": …}
  token_client.py unsigned CLAIMS_JSON                    -> {"token": …}
Claims are used byte for byte (so `1e300` stays `1e300`). A connection the server drops shows
as {"error": …} in place of an answer.
"""
import base64
import hashlib
import hmac
import json
import os
import socket
import struct
import sys
import urllib.error
import urllib.parse
import urllib.request


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hs256(secret, claims):
    signing_input = b64url(b'{"alg":"HS256","typ":"JWT"}') + "." + b64url(claims.encode())
    signature = hmac.new(secret.encode(), signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + b64url(signature)


def unsigned(claims):
    return b64url(b'{"alg":"none","typ":"JWT"}') + "." + b64url(claims.encode()) + "."


class WebSocket:
    def __init__(self, port, last_session=None):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        # The database (namespace) every WebSocket of this run opens.
        ns = urllib.parse.quote(os.environ.get("TOKEN_CLIENT_NS", "test"))
        self.sock.sendall(
            (f"GET /.ws?v=5{'&ls=' + last_session if last_session else ''}&ns={ns} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
             f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self.recv_some()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise ConnectionError(head.decode(errors="replace"))

    def recv_some(self):
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("the server closed the connection")
        return data

    def read(self, n):
        while len(self.buffer) < n:
            self.buffer += self.recv_some()
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def send(self, text):
        payload, mask = text.encode(), os.urandom(4)
        n = len(payload)
        header = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                                  bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 else
                                  bytes([0x80 | 127]) + struct.pack(">Q", n))
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def frame(self):
        first, second = self.read(2)
        n = second & 0x7F
        if n == 126:
            n = struct.unpack(">H", self.read(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self.read(8))[0]
        payload = self.read(n)
        if first & 0x0F == 8:
            raise ConnectionError("close frame")
        return payload.decode()

    def message(self):
        """One protocol message (a count frame first when the server split it)."""
        text = self.frame()
        if text.isdigit():
            text = "".join(self.frame() for _ in range(int(text)))
        return json.loads(text)

    def request(self, number, action, body):
        self.send(json.dumps({"t": "d", "d": {"r": number, "a": action, "b": body}}))
        while True:
            m = self.message()
            if m.get("t") == "d" and m["d"].get("r") == number:
                return m["d"]["b"]


def ws(port, credential, path=None, value=None):
    out = {}
    try:
        s = WebSocket(port)
        out["hello"] = s.message()
        out["auth"] = s.request(1, "auth", {"cred": credential})
        if path is not None:
            out["put"] = s.request(2, "p", {"p": path, "d": json.loads(value)})
    except (OSError, ConnectionError, ValueError) as e:
        out["error"] = f"{type(e).__name__}: {e}"
    return out


def ondisconnect(port, pid, sig):
    """Queues onDisconnect operations (each acknowledged), then sends the server `sig` while the
    connection is still open, and waits until the server is gone."""
    out = {}
    try:
        s = WebSocket(port)
        s.message()  # the hello
        out["o1"] = s.request(1, "o", {"p": "presence/u1", "d": False})["s"]
        out["o2"] = s.request(2, "o", {"p": "count", "d": {".sv": {"increment": 1}}})["s"]
        out["o3"] = s.request(3, "om", {"p": "last", "d": {"u1": {".value": 1, ".priority": {".sv": "timestamp"}}}})["s"]
        os.kill(int(pid), int(sig))
        try:
            while True:
                s.recv_some()
        except (OSError, ConnectionError):
            out["closed"] = True
    except (OSError, ConnectionError, ValueError) as e:
        out["error"] = f"{type(e).__name__}: {e}"
    return out


def stale(port):
    """A connection queues online=false and writes online=true; a second one, reconnecting with
    ls, writes online=true: the first is closed and its operation ran before the second's write."""
    out = {}
    try:
        first = WebSocket(port)
        session = first.message()["d"]["d"]["s"]
        out["o"] = first.request(1, "o", {"p": "online", "d": False})["s"]
        out["p1"] = first.request(2, "p", {"p": "online", "d": True})["s"]
        second = WebSocket(port, last_session=session)
        second.message()  # the hello
        out["p2"] = second.request(1, "p", {"p": "online", "d": True})["s"]
        try:
            while True:
                first.recv_some()
        except socket.timeout:
            out["firstClosed"] = False
        except (OSError, ConnectionError):
            out["firstClosed"] = True
        out["get"] = second.request(2, "g", {"p": "online"})["d"]
    except (OSError, ConnectionError, ValueError, KeyError) as e:
        out["error"] = f"{type(e).__name__}: {e}"
    return out


def listens(port, count, put_bytes):
    """`count` listens on one connection (their statuses), then a put of a string `put_bytes` long."""
    out = {"listens": []}
    try:
        s = WebSocket(port)
        s.message()  # the hello
        for i in range(int(count)):
            out["listens"].append(s.request(i + 1, "q", {"p": f"l/{i}", "h": ""})["s"])
        out["put"] = s.request(int(count) + 1, "p", {"p": "big", "d": "x" * int(put_bytes)})["s"]
    except (OSError, ConnectionError, ValueError) as e:
        out["error"] = f"{type(e).__name__}: {e}"
    return out


def query(port, credential, action, path, params):
    """`auth` (unless CREDENTIAL is -), then one listen (`q`) or get (`g`) at `path` with the
    query parameters `params` (the wire's `q` object). A listen's answer comes with the data the
    server pushed for it before the answer (`data`, null when none)."""
    out = {}
    try:
        s = WebSocket(port)
        s.message()  # the hello
        if credential != "-":
            out["auth"] = s.request(1, "auth", {"cred": credential})
        body = {"p": path, "q": json.loads(params)}
        if action == "q":
            body.update({"t": 1, "h": ""})
        s.send(json.dumps({"t": "d", "d": {"r": 2, "a": action, "b": body}}))
        out["data"] = None
        while "answer" not in out:
            m = s.message()
            if m.get("t") != "d":
                continue
            m = m["d"]
            if m.get("r") == 2:
                out["answer"] = m["b"]
            elif m.get("a") == "d":
                out["data"] = m["b"].get("d")
    except (OSError, ConnectionError, ValueError) as e:
        out["error"] = f"{type(e).__name__}: {e}"
    return out


def rest(port, method, path, args):
    body, bearer, params = None, None, []
    i = 0
    while i < len(args):
        if args[i] == "--bearer":
            bearer, i = args[i + 1], i + 2
        elif args[i] == "--param":
            params.append(tuple(args[i + 1].split("=", 1)))
            i += 2
        else:
            body, i = args[i], i + 1
    query = ("?" + urllib.parse.urlencode(params)) if params else ""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/{path}.json{query}", method=method,
                                     data=body.encode() if body is not None else None)
    if bearer is not None:
        request.add_header("Authorization", "Bearer " + bearer)
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return {"status": r.status, "body": r.read().decode()}
    except urllib.error.HTTPError as e:
        return {"status": e.code, "body": e.read().decode()}
    except OSError as e:
        return {"error": f"{type(e).__name__}: {e}"}


command = sys.argv[1]
if command == "ws":
    result = ws(int(sys.argv[2]), *sys.argv[3:])
elif command == "rest":
    result = rest(int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:])
elif command == "ondisconnect":
    result = ondisconnect(int(sys.argv[2]), sys.argv[3], sys.argv[4])
elif command == "stale":
    result = stale(int(sys.argv[2]))
elif command == "listens":
    result = listens(int(sys.argv[2]), sys.argv[3], sys.argv[4])
elif command == "query":
    result = query(int(sys.argv[2]), *sys.argv[3:7])
elif command == "hs256":
    result = {"token": hs256(sys.argv[2], sys.argv[3])}
elif command == "unsigned":
    result = {"token": unsigned(sys.argv[2])}
else:
    raise SystemExit(f"unknown command {command}")
print(json.dumps(result), flush=True)
