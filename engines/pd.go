package engines

import (
	"regexp"
	"sort"

	"github.com/llmtop/llmtop/model"
)

// pdLabels are the labels an engine's series (or its wrapper's) carry its
// prefill/decode role in, and what each value means: SGLang's engine_type
// (disaggregation/utils.py to_engine_type), KServe's llm_isvc_role (the
// pod's llm-d.ai/role), Dynamo's worker_type on dynamo_component_*, and
// disaggregation_mode on Dynamo's TensorRT-LLM worker's trtllm_* series.
var pdLabels = map[string]map[string]model.PDRole{
	SGLangEngineType: {"prefill": model.RolePrefill, "decode": model.RoleDecode, "unified": model.RoleUnified},
	KServeRoleLabel:  {"prefill": model.RolePrefill, "decode": model.RoleDecode, "both": model.RoleUnified},
	DynamoWorkerType: {"prefill": model.RolePrefill, "decode": model.RoleDecode},
	TRTLLMDisaggMode: {"prefill": model.RolePrefill, "decode": model.RoleDecode, "prefill_and_decode": model.RoleUnified},
}

// PDRoleOf is the role a label's value says (false when the label is not
// a role label or the value names no role: Dynamo's "backend").
func PDRoleOf(label, value string) (model.PDRole, bool) {
	r, ok := pdLabels[label][value]
	return r, ok
}

// PDLabels lists the role labels, sorted.
func PDLabels() []string {
	out := make([]string, 0, len(pdLabels))
	for l := range pdLabels {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

// kvRole is vLLM's kv_role in --kv-transfer-config's JSON.
var kvRole = regexp.MustCompile(`"?kv_role"?\s*:\s*"?(` + VLLMKVRoleProducer + `|` + VLLMKVRoleConsumer + `|` + VLLMKVRoleBoth + `)`)

// disaggMode is SGLang's --disaggregation-mode value.
var disaggMode = regexp.MustCompile(SGLangDisaggMode + `[ =](prefill|decode|null)\b`)

// PDRoleFromFlags reads the role an engine was started in from its
// command line: vLLM's --kv-transfer-config kv_role (kv_producer prefill,
// kv_consumer decode, kv_both either), SGLang's --disaggregation-mode.
// The second value is the flag that said it ("" when none did).
func PDRoleFromFlags(cmdline string) (model.PDRole, string) {
	if m := kvRole.FindStringSubmatch(cmdline); m != nil {
		switch m[1] {
		case VLLMKVRoleProducer:
			return model.RolePrefill, VLLMKVTransferConfig + " kv_role " + m[1]
		case VLLMKVRoleConsumer:
			return model.RoleDecode, VLLMKVTransferConfig + " kv_role " + m[1]
		}
		return model.RoleUnified, VLLMKVTransferConfig + " kv_role " + m[1]
	}
	if m := disaggMode.FindStringSubmatch(cmdline); m != nil {
		switch m[1] {
		case "prefill":
			return model.RolePrefill, SGLangDisaggMode + " prefill"
		case "decode":
			return model.RoleDecode, SGLangDisaggMode + " decode"
		}
		return model.RoleUnified, SGLangDisaggMode + " null"
	}
	return "", ""
}
