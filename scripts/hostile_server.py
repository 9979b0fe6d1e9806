import gzip, http.server, io, os, socket, sys, time, zlib

# One path prefix per fault; every route under it behaves so.
BOMB = None
def bomb():
    global BOMB
    if BOMB is None:
        c = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing
        chunk = b"\0" * (1 << 20)
        parts = [c.compress(chunk) for _ in range(256)]  # 256 MiB of zeros
        parts.append(c.flush())
        BOMB = b"".join(parts)
    return BOMB

# A hostile Prometheus (the memory suite, scripts/memory.sh): under
# /promflood/ every instant query answers PROM_SERIES series spread over
# PROM_TARGETS vLLM targets with long pod names (as a Prometheus that
# scrapes a huge fleet, or a --match that selects far too much); under
# /promfleet/ 5 000 targets with two series each; under /prombig/ every query answers a valid envelope padded to PROM_BIG_MB MiB
# (under the per-answer cap, but 6-7 of them run at once).
PROM_TARGETS = int(os.environ.get("PROM_TARGETS", "9090"))
PROM_SERIES = int(os.environ.get("PROM_SERIES", "100000"))
PROM_BIG_MB = int(os.environ.get("PROM_BIG_MB", "200"))
CONCEPTS = ["labels", "gauge:running", "gauge:waiting", "gauge:kv_usage"]

def flood_rows(targets=PROM_TARGETS, series=PROM_SERIES):
    pad = "p" * 200
    for i in range(series):
        t = i % targets
        c = CONCEPTS[(i // targets) % len(CONCEPTS)]
        yield ('{"metric":{"job":"vllm","instance":"10.%d.%d.%d:8000","pod":"vllm-%s-%d","namespace":"prod",'
               '"model_name":"m%d","llmtop_concept":"%s"},"value":[1700000000,"%d"]}'
               % (t >> 16 & 255, t >> 8 & 255, t & 255, pad, t, i % 97, c, i % 50)).encode()

class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        case = self.path.strip("/").split("/")[0].split("?")[0]
        try:
            getattr(self, "case_" + case)()
        except (BrokenPipeError, ConnectionResetError):
            pass
    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        self.do_GET()
    def chunked(self, parts):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        buf = []
        size = 0
        for p in parts:
            buf.append(p)
            size += len(p)
            if size >= 1 << 16:
                b = b"".join(buf)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
                buf, size = [], 0
        b = b"".join(buf)
        if b:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
        self.wfile.write(b"0\r\n\r\n")
    def case_promflood(self, targets=PROM_TARGETS, series=PROM_SERIES):
        def parts():
            yield b'{"status":"success","data":{"resultType":"vector","result":['
            first = True
            for r in flood_rows(targets, series):
                yield r if first else b"," + r
                first = False
            yield b"]}}"
        self.chunked(parts())
    def case_promfleet(self):
        # 5 000 targets, two series each a query: within the byte bound,
        # over the target cap
        self.case_promflood(5000, 10000)
    def case_prombig(self):
        def parts():
            yield b'{"status":"success","warnings":["'
            block = b"w" * (1 << 20)
            for _ in range(PROM_BIG_MB):
                yield block
            yield b'"],"data":{"resultType":"vector","result":[]}}'
        self.chunked(parts())
    def case_hung(self):
        time.sleep(3600)
    def case_big(self):
        line = b"# padding padding padding padding padding padding padding padding padding padding\n"
        n = 100 << 20
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(n))
        self.end_headers()
        block = line * (65536 // len(line))
        sent = 0
        while sent < n:
            b = block[: n - sent]
            self.wfile.write(b)
            sent += len(b)
    def case_gzip(self):
        b = bomb()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    def case_stall(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", "100000")
        self.end_headers()
        self.wfile.write(b"# TYPE vllm:num_requests_running gauge\n")
        self.wfile.flush()
        time.sleep(3600)
    def case_loop(self):
        p = self.path
        nxt = p + ("&again=1" if "?" in p else "?again=1") if "again" not in p else p.split("?")[0]
        self.send_response(302)
        self.send_header("Location", nxt)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass

class S(http.server.ThreadingHTTPServer):
    daemon_threads = True

s = S(("127.0.0.1", 0), H)
bomb()
print(s.server_address[1], flush=True)
s.serve_forever()
