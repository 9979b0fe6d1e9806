"""Runs vLLM production-stack's own router /metrics handler
(src/vllm_router/routers/metrics_router.py) over its own metric definitions
(src/vllm_router/services/metrics_service/__init__.py), both read from the
repository at the commit given as argv[2], and prints what the handler
returns. Only the router's inputs are stand-ins: the request-stats monitor,
the engine-stats scraper, service discovery, psutil and FastAPI's decorator.
The stats fed are stated below and in the output's header.

usage: python3 gen-prodstack-router.py REPO_GIT_DIR COMMIT > prodstack-router-<commit>.txt
"""
import asyncio, subprocess, sys, types

repo, commit = sys.argv[1], sys.argv[2]

def src(path):
    return subprocess.run(["git", "--git-dir", repo, "show", f"{commit}:{path}"],
                          check=True, capture_output=True, text=True).stdout

def module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m

for pkg in ["vllm_router", "vllm_router.routers", "vllm_router.services", "vllm_router.stats"]:
    module(pkg, __path__=[])

# Stand-ins for what the handler reads.
class Stat:
    def __init__(self, **kw): self.__dict__.update(kw)

REQUEST_STATS = {  # per engine, as the router's request-stats monitor keeps them
    "http://10.0.0.11:8000": Stat(qps=4.2, avg_decoding_length=180.0, in_prefill_requests=3,
                                  in_decoding_requests=5, avg_latency=2.4, avg_itl=0.021, num_swapped_requests=0),
    "http://10.0.0.12:8000": Stat(qps=0.0, avg_decoding_length=0.0, in_prefill_requests=0,
                                  in_decoding_requests=0, avg_latency=0.0, avg_itl=0.0, num_swapped_requests=0),
}
ENGINE_STATS = {
    "http://10.0.0.11:8000": Stat(gpu_prefix_cache_hit_rate=0.5, gpu_prefix_cache_hits_total=1200.0,
                                  gpu_prefix_cache_queries_total=2400.0),
}
ENDPOINTS = [Stat(url="http://10.0.0.11:8000", healthy=True), Stat(url="http://10.0.0.12:8000", healthy=False)]

class Response:
    def __init__(self, body, media_type=None): self.body, self.media_type = body, media_type

class APIRouter:
    def get(self, _path):
        return lambda f: f

module("fastapi", APIRouter=APIRouter, Response=Response)
module("psutil", cpu_percent=lambda interval=None: 12.5,
       virtual_memory=lambda: Stat(percent=40.0), disk_usage=lambda _p: Stat(percent=55.0))
module("vllm_router.log", init_logger=lambda _n: None)
module("vllm_router.service_discovery",
       get_service_discovery=lambda: Stat(get_endpoint_info=lambda: ENDPOINTS))
module("vllm_router.stats.engine_stats",
       get_engine_stats_scraper=lambda: Stat(get_engine_stats=lambda: ENGINE_STATS))
module("vllm_router.stats.request_stats",
       get_request_stats_monitor=lambda: Stat(get_request_stats=lambda _t: REQUEST_STATS))
# routing_logic's label vocabularies only bound record_routing_decision's labels.
module("vllm_router.routers.routing_logic",
       ROUTING_ALGORITHMS=set(), ROUTING_DECISION_KINDS=set(), ROUTING_DECISION_REASONS=set())

ms = module("vllm_router.services.metrics_service")
exec(compile(src("src/vllm_router/services/metrics_service/__init__.py"), "metrics_service/__init__.py", "exec"), ms.__dict__)
mr = module("vllm_router.routers.metrics_router")
exec(compile(src("src/vllm_router/routers/metrics_router.py"), "metrics_router.py", "exec"), mr.__dict__)

resp = asyncio.run(mr.metrics())
sys.stdout.write(resp.body.decode())
