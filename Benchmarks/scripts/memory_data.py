#!/usr/bin/env python3
# The steps of ServerBench's memory-data mode (Benchmarks/ServerBench/MemoryData.swift) as a script,
# to compare two `hearth` binaries without building the benchmarks package:
#   python3 Benchmarks/scripts/memory_data.py HEARTH MB[,MB…] RUNS SCRATCH_DIR
# One JSON line per run.
# MB MiB of JSON user records PUT over REST in 1 MiB bodies into a fresh `hearth serve DIR --emulator`,
# VmRSS once settled, the store directory's bytes; stop (SIGTERM), start again, one shallow GET of
# the root, VmRSS once settled.
import json, os, shutil, signal, subprocess, sys, time, urllib.request

def splitmix(seed):
    state = seed
    while True:
        state = (state + 0x9E3779B97F4A7C15) & (2**64 - 1)
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & (2**64 - 1)
        yield z ^ (z >> 31)

NAMES = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "John", "Radia", "Ken"]
TAGS = ["admin", "beta", "mobile", "web", "paid", "trial", "eu", "us"]

def records(nbytes, chunk, rng):
    out = ["{"]; size = 1; i = 0
    while size < nbytes:
        name = NAMES[next(rng) % len(NAMES)]
        first, count = next(rng) % len(TAGS), next(rng) % 4
        tags = ",".join('"%s":true' % TAGS[(first + j) % len(TAGS)] for j in range(count))
        s = ('%s"c%d-u%d":{"name":"%s %d","email":"%s%d@example.com","age":%d,"score":%s,"active":%s,"joined":%d,"tags":{%s}}'
             % ("," if i else "", chunk, i, name, next(rng) % 100000, name.lower(), next(rng) % 1000000, 18 + next(rng) % 70,
                repr((next(rng) % 1000000) / 100), "true" if next(rng) % 2 == 0 else "false", 1600000000000 + next(rng) % 100000000000, tags))
        out.append(s); size += len(s); i += 1
    out.append("}")
    return "".join(out)

def rss(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"): return int(line.split()[1])

def settled(pid):
    time.sleep(1); last = rss(pid)
    for _ in range(18):
        time.sleep(0.5); m = rss(pid)
        if abs(m - last) * 200 < max(1, last): return m
        last = m
    return last

def dirbytes(d):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(d) for f in fs if os.path.isfile(os.path.join(r, f)))

def start(hearth, d):
    pf = d + ".port"
    if os.path.exists(pf): os.remove(pf)
    p = subprocess.Popen([hearth, "serve", d, "--port", "0", "--port-file", pf, "--emulator"], stderr=subprocess.DEVNULL)
    while not (os.path.exists(pf) and open(pf).read().strip().isdigit()): time.sleep(0.01)
    return p, int(open(pf).read())

def stop(p):
    p.send_signal(signal.SIGTERM); p.wait()

def run(hearth, mb, base):
    d = base + "/db"; shutil.rmtree(base, ignore_errors=True); os.makedirs(base)
    load = os.getloadavg()
    p, port = start(hearth, d)
    empty = settled(p.pid)
    rng = splitmix(48); json_bytes = 0; t0 = time.time()
    for c in range(mb):
        body = records(1 << 20, c, rng).encode(); json_bytes += len(body)
        req = urllib.request.Request("http://127.0.0.1:%d/d/c%05d.json?print=silent" % (port, c), data=body, method="PUT")
        with urllib.request.urlopen(req) as r: assert r.status in (200, 204), r.status
    load_s = time.time() - t0
    loaded = settled(p.pid); disk_loaded = dirbytes(d)
    stop(p); disk_stopped = dirbytes(d)
    p, port = start(hearth, d)
    urllib.request.urlopen("http://127.0.0.1:%d/.json?shallow=true" % port).read()
    restarted = settled(p.pid); stop(p)
    shutil.rmtree(base, ignore_errors=True)
    r = dict(mb=mb, load=[round(x, 2) for x in load], json=json_bytes, disk_loaded=disk_loaded, disk_stopped=disk_stopped,
             rss_empty_kib=empty, rss_loaded_kib=loaded, rss_restarted_kib=restarted, load_seconds=round(load_s, 1),
             loaded_x_disk=round(loaded * 1024 / disk_loaded, 2), loaded_x_json=round(loaded * 1024 / json_bytes, 2),
             restarted_x_disk=round(restarted * 1024 / disk_stopped, 2))
    print(json.dumps(r), flush=True)

if __name__ == "__main__":
    hearth, mbs, runs, base = sys.argv[1], [int(x) for x in sys.argv[2].split(",")], int(sys.argv[3]), sys.argv[4]
    for _ in range(runs):
        for mb in mbs: run(hearth, mb, base)
