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
