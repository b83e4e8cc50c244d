import os, random, subprocess, sys, threading, time, shutil
hearth, store, mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
shutil.rmtree(store, ignore_errors=True)
words = ["hearth", "offline", "sync", "cache", "write", "query", "listen", "token"]
random.seed(7)
lines = []
total = 0
i = 0
while total < mb << 20:
    v = " ".join(random.choice(words) + str(random.randrange(10000)) for _ in range(400))[:4096]
    lines.append('{"op":"serverSet","path":"chat/m%07d","value":"%s"}' % (i, v))
    total += len(v); i += 1
peak = [0, {}]
stop = False
def sample():
    while not stop:
        try:
            names = os.listdir(store)
            sizes = {}
            for n in names:
                try: sizes[n] = os.stat(os.path.join(store, n)).st_size
                except FileNotFoundError: pass
            t = sum(sizes.values())
            if t > peak[0]: peak[0], peak[1] = t, sizes
        except FileNotFoundError:
            pass
t = threading.Thread(target=sample); t.start()
p = subprocess.run([hearth, "apply", store, "--cache-size", str(1 << 20), "--durability", "batched"], input="\n".join(lines) + "\n", capture_output=True, text=True)
stop = True; t.join()
final = sum(os.stat(os.path.join(store, n)).st_size for n in os.listdir(store))
print(f"fed {total} bytes in {i} writes, exit {p.returncode}; peak on disk {peak[0]} bytes = {peak[0] / (1 << 20):.2f} x the 1 MiB cap; at the end {final}")
print("files at the peak:", sorted(peak[1].items()))
