package model

// PDRole is an engine's part in prefill/decode disaggregation: a prefill
// instance computes prompts and hands their KV over, a decode instance
// receives it and generates; a unified one does both. Empty when nothing
// said (not the same as unified).
type PDRole string

const (
	RolePrefill PDRole = "prefill"
	RoleDecode  PDRole = "decode"
	RoleUnified PDRole = "unified"
)

// LoRA is what an engine says of its LoRA adapters now (vLLM's
// lora_requests_info): the adapters in the running batch, those its waiting
// requests ask for, and how many one batch may hold (0: not said).
type LoRA struct {
	Running []string `json:"running"`
	Waiting []string `json:"waiting"`
	Max     int      `json:"max_lora,omitempty"`
}
