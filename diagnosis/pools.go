package diagnosis

import (
	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// PDRole is the endpoint's prefill/decode role: what its metrics say
// (Identity.Role), else what its command line says (the current run's
// cmdline, from /proc or llmtop run: vLLM's --kv-transfer-config kv_role,
// SGLang's --disaggregation-mode). The second value names the evidence;
// the role is "" when nothing said.
func (e *Endpoint) PDRole() (model.PDRole, string) {
	if e.Identity.Role != "" {
		return e.Identity.Role, e.Identity.RoleFrom
	}
	if n := len(e.Runs); n > 0 {
		for _, k := range []string{"cmdline", "launch.cmdline"} {
			if r, from := engines.PDRoleFromFlags(e.Runs[n-1].Config[k]); r != "" {
				return r, from
			}
		}
	}
	return "", ""
}

// Pool names the endpoints that are replicas of one another: one model,
// one prefill/decode role. A prefill instance and a decode instance of the
// same model do different work and are never compared as replicas.
func (e *Endpoint) Pool() string {
	m := e.Model()
	if m == "" {
		return ""
	}
	if r, _ := e.PDRole(); r == model.RolePrefill || r == model.RoleDecode {
		return m + " (" + string(r) + ")"
	}
	return m
}
