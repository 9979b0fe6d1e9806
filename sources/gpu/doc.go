// Package gpu owns llmtop's view of the GPUs: it reads every visible NVIDIA
// device through NVML (github.com/NVIDIA/go-nvml), or a DCGM exporter's
// Prometheus endpoint where NVML is not reachable, or simulated devices in
// the demo, and delivers one model.GPUSnapshot per refresh.
//
// Three rules shape it:
//   - Every field is read with its own guarded call. A field the device does
//     not support (MIG, unified memory, consumer cards) is absent, never 0,
//     and does not hide the others. A device that stops answering
//     (ERROR_GPU_IS_LOST) is marked Lost and raises an event; the other
//     devices keep going.
//   - No driver is not an error for llmtop: the snapshot carries one line
//     saying why there are no GPUs, and the rest of the monitor is unaffected.
//   - One goroutine polls all devices per refresh; NVML calls are batched,
//     never one goroutine per field.
//
// NVML needs cgo. Files that touch go-nvml are behind the cgo build tag;
// nocgo.go keeps the package (and the binary) building with CGO_ENABLED=0,
// where the NVML source reports why it is unavailable and the demo's
// simulated GPUs are computed directly.
package gpu
