package main

import (
	"fmt"
	"strings"
	"testing"
)

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"vllm":                "vllm",
		"deploy/vllm-0":       "deploy/vllm-0",
		"my unit":             "'my unit'",
		"x; rm -rf ~":         "'x; rm -rf ~'",
		"it's":                `'it'\''s'`,
		"$(reboot)":           "'$(reboot)'",
		"":                    "''",
		"vllm.service":        "vllm.service",
		"--namespace=prod":    "--namespace=prod",
		"a\nb":                "'a\nb'",
		"user@host:/var/logs": "user@host:/var/logs",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLogInputs(t *testing.T) {
	saved := logFlags
	defer func() { logFlags = saved }()
	logFlags.files = []string{"/var/log/vllm.log"}
	logFlags.commands = []string{"ssh gpu1 tail -F /var/log/vllm.log"}
	logFlags.docker = []string{"vllm"}
	logFlags.journal = []string{"vllm.service"}
	logFlags.kube = []string{"-n prod deploy/vllm"}
	var got []string
	for _, in := range logInputs([]string{"/state/llmtop/run/engine.log"}) {
		got = append(got, fmt.Sprintf("%s%s launched=%v stamps=%d", in.File, in.Command, in.Launched, in.Stamps))
	}
	// The log of the engine llmtop run launched is all this run's; the
	// commands' backlogs are told by their stamps.
	want := []string{
		"/var/log/vllm.log launched=false stamps=0",
		"/state/llmtop/run/engine.log launched=true stamps=0",
		"ssh gpu1 tail -F /var/log/vllm.log launched=false stamps=0",
		"docker logs -f --timestamps --tail 200 vllm launched=false stamps=1",
		"journalctl -fu vllm.service -n 200 launched=false stamps=2",
		"kubectl logs -f --timestamps --tail 200 -n prod deploy/vllm launched=false stamps=1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("inputs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
