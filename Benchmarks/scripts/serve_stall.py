#!/usr/bin/env python3
"""Does one connection's fan-out make another client wait? Against a running `hearth serve
--emulator`: a list of N children is written, one WebSocket connection holds L filtered listens
on it (`limitToLast(1)` … `limitToLast(L)`, tagged) and reads its pushes; then, once per round,
a REST write to the list is started and 50 ms later an unrelated client's `g` of another
location is timed. Prints each round's `g` latency (ms), then the median and the maximum.
(Benchmarks/README.md, "One connection's fan-out against another client's read".)

    serve_stall.py PORT [--listens 5000] [--children 2000] [--rounds 7]
"""
import argparse, base64, json, os, socket, statistics, struct, threading, time, urllib.request

def ws_connect(port):
    s = socket.create_connection(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall((f"GET /.ws?v=5&ns=t HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
               f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += s.recv(4096)
    rest = buf.split(b"\r\n\r\n", 1)[1]
    return Conn(s, rest)

class Conn:
    def __init__(self, s, rest):
        self.s, self.buf = s, rest
    def send(self, text):
        data = text.encode()
        head = bytes([0x81])
        n = len(data)
        if n < 126: head += bytes([0x80 | n])
        elif n < 65536: head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else: head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))
    def _need(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(1 << 20)
            if not chunk: raise EOFError
            self.buf += chunk
    def recv(self):
        self._need(2)
        n = self.buf[1] & 0x7F
        off = 2
        if n == 126: self._need(4); n = struct.unpack(">H", self.buf[2:4])[0]; off = 4
        elif n == 127: self._need(10); n = struct.unpack(">Q", self.buf[2:10])[0]; off = 10
        self._need(off + n)
        data, self.buf = self.buf[off:off + n], self.buf[off + n:]
        return data.decode()

def message(conn):
    t = conn.recv()
    if t.isdigit():
        t = "".join(conn.recv() for _ in range(int(t))) or "null"
    return json.loads(t)

def main():
    a = argparse.ArgumentParser()
    a.add_argument("port", type=int)
    a.add_argument("--listens", type=int, default=5000)
    a.add_argument("--children", type=int, default=2000)
    a.add_argument("--rounds", type=int, default=7)
    o = a.parse_args()
    base = f"http://127.0.0.1:{o.port}"
    body = json.dumps({f"k{i:05d}": i for i in range(o.children)}).encode()
    urllib.request.urlopen(urllib.request.Request(f"{base}/list.json", data=body, method="PUT")).read()
    heavy = ws_connect(o.port); heavy.recv()
    for n in range(1, o.listens + 1):
        heavy.send(json.dumps({"t": "d", "d": {"r": n, "a": "q", "b": {"p": "/list", "q": {"l": n, "vf": "l"}, "t": n, "h": ""}}}))
    oks = 0
    while oks < o.listens:
        m = message(heavy)
        if isinstance(m, dict) and m.get("d", {}).get("r") is not None: oks += 1
    # Keep reading the heavy connection's pushes, so it is a reader, not a stalled socket.
    threading.Thread(target=lambda: [heavy.recv() for _ in iter(int, 1)], daemon=True).start()
    reader = ws_connect(o.port); reader.recv()
    latencies = []
    for r in range(o.rounds):
        req = urllib.request.Request(f"{base}/list/k00000.json?print=silent", data=str(-r - 1).encode(), method="PUT")
        threading.Thread(target=lambda: urllib.request.urlopen(req).read(), daemon=True).start()
        time.sleep(0.05)  # the write is in
        t0 = time.monotonic()
        reader.send(json.dumps({"t": "d", "d": {"r": r + 1, "a": "g", "b": {"p": "/other"}}}))
        while True:
            m = message(reader)
            if isinstance(m, dict) and m.get("d", {}).get("r") == r + 1: break
        latencies.append((time.monotonic() - t0) * 1000)
        time.sleep(1.0)
    print("g latency ms:", " ".join(f"{x:.1f}" for x in latencies))
    print(f"median {statistics.median(latencies):.1f} ms, max {max(latencies):.1f} ms")

main()
