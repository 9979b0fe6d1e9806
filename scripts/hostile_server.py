import gzip, http.server, io, socket, sys, time, zlib

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

class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        case = self.path.strip("/").split("/")[0].split("?")[0]
        try:
            getattr(self, "case_" + case)()
        except (BrokenPipeError, ConnectionResetError):
            pass
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
