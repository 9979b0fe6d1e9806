package gpu

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

func readFixture(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/dcgm-constructed.prom")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseDCGMConstructedScrape(t *testing.T) {
	sc, err := ParseDCGM(readFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Driver != "570.86.15" || len(sc.GPUs) != 2 {
		t.Fatalf("driver %q, %d GPUs", sc.Driver, len(sc.GPUs))
	}
	g0, g1 := sc.GPUs[0], sc.GPUs[1]
	if g0.Index != 0 || g0.UUID != "GPU-8c16e996-bd76-aa91-17e7-b48bcd0208ba" || g0.Name != "NVIDIA H100 80GB HBM3" || g0.Host != "node-a" {
		t.Errorf("identity %+v", g0.GPU)
	}
	for _, c := range []struct {
		name      string
		got, want model.Opt
	}{
		{"g0 util", g0.Util, model.Some(97)},
		{"g0 memutil", g0.MemUtil, model.Some(41)},
		{"g0 used", g0.MemUsed, model.Some(76000 * mib)},
		{"g0 total = used+free+reserved", g0.MemTotal, model.Some((76000 + 4000 + 1559) * mib)},
		{"g0 power", g0.Power, model.Some(512.337)},
		{"g0 limit", g0.PowerLimit, model.Some(700)},
		{"g0 temp", g0.Temp, model.Some(61)},
		{"g0 sm", g0.SMClock, model.Some(1980)},
		{"g0 mem clock", g0.MemClock, model.Some(2619)},
		{"g0 rx KB/s", g0.PCIeRx, model.Some(8192 * 1024)},
		{"g0 tx KB/s", g0.PCIeTx, model.Some(2048 * 1024)},
		{"g0 ecc", g0.ECCVolatile, model.Some(0)},
		{"g0 xid", g0.Xid, model.Some(0)},
		{"g0 fan (not exported)", g0.Fan, model.None},
		{"g0 slowdown (not exported)", g0.TempSlowdown, model.None},
		{"g1 memutil blank", g1.MemUtil, model.None},
		{"g1 total = used+free", g1.MemTotal, model.Some(80000 * mib)},
		{"g1 rx from profiling", g1.PCIeRx, model.Some(1.5e9)},
		{"g1 tx absent", g1.PCIeTx, model.None},
		{"g1 ecc absent", g1.ECCVolatile, model.None},
		{"g1 xid", g1.Xid, model.Some(79)},
	} {
		if c.got != c.want {
			t.Errorf("%s = %+v, want %+v", c.name, c.got, c.want)
		}
	}
	if g0.Throttle == nil || len(g0.Throttle) != 0 {
		t.Errorf("g0 throttle %#v, want read and empty", g0.Throttle)
	}
	if strings.Join(g1.Throttle, ",") != "power cap,thermal" {
		t.Errorf("g1 throttle (old metric name) %q", g1.Throttle)
	}
}

func TestDCGMValueBlanks(t *testing.T) {
	for _, c := range []struct {
		v  float64
		ok bool
	}{
		{0, true}, {1e12, true}, {9223372036854775794, false}, {140737488355328, false},
		{2147483632, false}, {2147483634, false}, {2147483631, true}, {-1, false},
	} {
		if got := dcgmValue(c.v); got.OK != c.ok {
			t.Errorf("dcgmValue(%v).OK = %v", c.v, got.OK)
		}
	}
}

func TestParseDCGMEdgeCases(t *testing.T) {
	sc, err := ParseDCGM([]byte(`DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",modelName="NVIDIA A100-SXM4-40GB",GPU_I_ID="1",GPU_I_PROFILE="3g.20gb"} 50
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",modelName="NVIDIA A100-SXM4-40GB",GPU_I_ID="2",GPU_I_PROFILE="4g.20gb"} 70
DCGM_FI_DEV_GPU_UTIL{gpu="x"} 5
DCGM_FI_DEV_GPU_UTIL{gpu="3"} NaN
DCGM_FI_DEV_GPU_TEMP{gpu="4" 5
DCGM_FI_DEV_GPU_TEMP{gpu="5"} 50
`))
	if err == nil || !strings.Contains(err.Error(), "not valid Prometheus text") {
		t.Errorf("err %v", err)
	}
	if len(sc.GPUs) != 3 {
		t.Fatalf("want the 2 MIG instances and GPU 3 read before the bad line, got %+v", sc.GPUs)
	}
	if sc.GPUs[0].Name != "NVIDIA A100-SXM4-40GB MIG 3g.20gb" || sc.GPUs[0].Util != model.Some(50) ||
		sc.GPUs[1].Name != "NVIDIA A100-SXM4-40GB MIG 4g.20gb" || sc.GPUs[1].Util != model.Some(70) {
		t.Errorf("MIG %+v", sc.GPUs[:2])
	}
	if sc.GPUs[2].Index != 3 || sc.GPUs[2].Util.OK {
		t.Errorf("NaN must be absent: %+v", sc.GPUs[2])
	}
}

func TestDCGMSource(t *testing.T) {
	body := readFixture(t)
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		w.Write(body)
	}))
	defer srv.Close()
	now := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	src := NewDCGM(Config{Now: func() time.Time { return now }}, strings.TrimPrefix(srv.URL, "http://"))
	defer src.Close()

	snap, ev := src.Refresh()
	if snap.Err != "" || len(snap.GPUs) != 2 || snap.Driver != "570.86.15" || !strings.Contains(snap.Note, "DCGM") {
		t.Fatalf("%+v", snap)
	}
	if len(ev) != 1 || ev[0].Kind != KindGPUXid || ev[0].Severity != model.SevCrit ||
		ev[0].Fields["xid"] != "79" || !strings.Contains(ev[0].Title, "fallen off the bus") {
		t.Fatalf("events %+v", ev)
	}
	if _, ev := src.Refresh(); len(ev) != 0 {
		t.Errorf("same Xid raised again: %v", ev)
	}
	body = []byte(strings.ReplaceAll(string(body), `"} 79`, `"} 48`))
	if _, ev := src.Refresh(); len(ev) != 1 || ev[0].Fields["xid"] != "48" {
		t.Errorf("new Xid: %v", ev)
	}

	status = http.StatusServiceUnavailable
	snap, _ = src.Refresh()
	if !strings.Contains(snap.Err, "503") || len(snap.GPUs) != 0 {
		t.Errorf("503: %+v", snap)
	}

	status, body = http.StatusOK, []byte("# nothing here\n")
	if snap, _ = src.Refresh(); !strings.Contains(snap.Err, "reports no DCGM_FI_DEV_* metrics") {
		t.Errorf("empty: %q", snap.Err)
	}
}

func TestDCGMSourceFilterAndHosts(t *testing.T) {
	body := []byte(`DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",modelName="L40S",Hostname="n1"} 1
DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-b",modelName="L40S",Hostname="n1"} 2
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-c",modelName="L40S",Hostname="n2"} 3
`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	defer srv.Close()
	src := NewDCGM(Config{Filter: NewFilter(map[int]bool{0: true}, "", false)}, srv.URL+"/metrics")
	snap, _ := src.Refresh()
	if len(snap.GPUs) != 2 || snap.GPUs[0].Name != "L40S" || snap.GPUs[1].Name != "L40S" ||
		snap.GPUs[0].Owner == nil || snap.GPUs[0].Owner.Host != "n1" || snap.GPUs[1].Owner == nil || snap.GPUs[1].Owner.Host != "n2" {
		t.Errorf("%+v", snap.GPUs)
	}
}

func TestDCGMUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	snap, _ := NewDCGM(Config{Timeout: time.Second}, url).Refresh()
	if !strings.HasPrefix(snap.Err, "DCGM exporter unreachable") {
		t.Errorf("%q", snap.Err)
	}
}
