/*
 * A stand-in libnvidia-ml.so.1 for scripts/dist-test.sh: one GPU with fixed
 * readings, so the release builds can show that they find the library at
 * run time (dlopen), resolve NVML's entry points in it, call them and put
 * the answers on screen, on a machine without an NVIDIA driver. It exports
 * the calls llmtop makes (sources/gpu/nvml.go, fields.go); a call it lacks
 * would end llmtop with "symbol lookup error", which the test would catch.
 *
 *   gcc -shared -fPIC -Wl,-soname,libnvidia-ml.so.1 -o DIR/libnvidia-ml.so.1 fakenvml.c
 *   LD_LIBRARY_PATH=DIR llmtop snapshot --json URL
 *
 * Types are NVML's ABI (nvml.h), written out so that no header is needed.
 *
 * With FAKENVML_BUSY=1 in the environment (scripts/monitor-cost.sh, GPU=1)
 * it is one busy GPU instead: its utilisation, power, temperature and SM
 * clock move on every refresh, as a loaded GPU's do, and it lists one
 * compute process holding 70 GiB, FAKENVML_PID (llmtop itself when unset).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int nvmlReturn_t;
typedef struct fake_device *nvmlDevice_t;
struct fake_device { int index; };
static struct fake_device gpu0 = {0};

enum { SUCCESS = 0, ERROR_INVALID_ARGUMENT = 2, ERROR_NOT_SUPPORTED = 3, ERROR_INSUFFICIENT_SIZE = 7, ERROR_TIMEOUT = 10 };

typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned int pid; unsigned long long usedGpuMemory; } nvmlProcessInfo_v1_t;

static int inited;
static int busy = -1;    /* FAKENVML_BUSY=1: the readings move, one process is listed */
static unsigned int reads; /* utilisation reads, one a refresh: what the busy readings move with */

static int is_busy(void)
{
	if (busy < 0) {
		const char *b = getenv("FAKENVML_BUSY");
		busy = b != NULL && strcmp(b, "1") == 0;
	}
	return busy;
}

/* moving is v when idle, and v plus a step of the refresh's count when busy */
static unsigned int moving(unsigned int v, unsigned int period, unsigned int step)
{
	return is_busy() ? v + reads % period * step : v;
}

static nvmlReturn_t copy(char *dst, unsigned int n, const char *s)
{
	if (dst == NULL || strlen(s) + 1 > n)
		return ERROR_INSUFFICIENT_SIZE;
	strcpy(dst, s);
	return SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void) { inited = 1; return SUCCESS; }
nvmlReturn_t nvmlInit(void) { return nvmlInit_v2(); }
nvmlReturn_t nvmlShutdown(void) { inited = 0; return SUCCESS; }

const char *nvmlErrorString(nvmlReturn_t r)
{
	switch (r) {
	case SUCCESS: return "Success";
	case ERROR_NOT_SUPPORTED: return "Not Supported";
	case ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
	case ERROR_TIMEOUT: return "Timeout";
	}
	return "Unknown Error";
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int n) { return copy(v, n, "999.99-fake"); }
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v) { *v = 12080; return SUCCESS; }

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) { *n = 1; return SUCCESS; }

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	if (i != 0)
		return ERROR_INVALID_ARGUMENT;
	*d = &gpu0;
	return SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *v, unsigned int n) { (void)d; return copy(v, n, "GPU-fa4e0000-0000-4000-8000-000000000000"); }
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *v, unsigned int n) { (void)d; return copy(v, n, "llmtop fake NVML GPU"); }

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
	(void)d;
	reads++;
	u->gpu = moving(42, 9, 6);
	u->memory = moving(17, 13, 3);
	return SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	(void)d;
	m->total = 80ULL << 30;
	m->used = 6ULL << 30;
	m->free = m->total - m->used;
	return SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw) { (void)d; *mw = moving(123000, 37, 13000); return SUCCESS; }
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int *mw) { (void)d; *mw = 700000; return SUCCESS; }
nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned int *mw) { (void)d; *mw = 700000; return SUCCESS; }
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *c) { (void)d; (void)sensor; *c = moving(55, 7, 3); return SUCCESS; }
nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t d, int kind, unsigned int *c) { (void)d; (void)kind; *c = 90; return SUCCESS; }

/* clock type 0 is graphics, 1 SM, 2 memory */
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *mhz) { (void)d; *mhz = type == 2 ? 2619 : moving(1755, 4, 15); return SUCCESS; }
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned int *mhz) { (void)d; *mhz = type == 2 ? 2619 : 1980; return SUCCESS; }

nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t d, unsigned int *pct) { (void)d; (void)pct; return ERROR_NOT_SUPPORTED; }
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned int *kbs) { (void)d; *kbs = counter == 0 ? 1000 : 2000; return SUCCESS; }
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *r) { (void)d; *r = 0; return SUCCESS; }
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter, unsigned long long *n) { (void)d; (void)type; (void)counter; *n = 0; return SUCCESS; }

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *count, nvmlProcessInfo_v1_t *infos)
{
	const char *pid = getenv("FAKENVML_PID");
	(void)d;
	if (!is_busy()) {
		*count = 0;
		return SUCCESS;
	}
	if (*count < 1) {
		*count = 1;
		return ERROR_INSUFFICIENT_SIZE;
	}
	*count = 1;
	infos[0].pid = pid != NULL && *pid != '\0' ? (unsigned int)atoi(pid) : (unsigned int)getpid();
	infos[0].usedGpuMemory = 70ULL << 30;
	return SUCCESS;
}

/* Xid events (sources/gpu/nvml.go): the set is made, but this GPU, like many
 * consumer cards, does not register for critical-Xid events; a wait times out. */
typedef struct fake_event_set *nvmlEventSet_t;
struct fake_event_set { int unused; };
static struct fake_event_set events;
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set) { *set = &events; return SUCCESS; }
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) { (void)set; return SUCCESS; }
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set) { (void)d; (void)types; (void)set; return ERROR_NOT_SUPPORTED; }
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, void *data, unsigned int ms) { (void)set; (void)data; (void)ms; return ERROR_TIMEOUT; }
nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, void *data, unsigned int ms) { return nvmlEventSetWait_v2(set, data, ms); }

/* Remapped rows (sources/gpu/fields.go): none corrected or pending, no failure. */
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int *corr, unsigned int *unc, unsigned int *pending, unsigned int *failed)
{
	(void)d;
	*corr = *unc = *pending = *failed = 0;
	return SUCCESS;
}
