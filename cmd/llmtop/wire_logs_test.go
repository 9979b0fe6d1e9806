package main

import (
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
	for _, in := range logInputs(nil) {
		got = append(got, in.File+in.Command)
	}
	want := []string{
		"/var/log/vllm.log",
		"ssh gpu1 tail -F /var/log/vllm.log",
		"docker logs -f --timestamps --tail 200 vllm",
		"journalctl -fu vllm.service -n 200",
		"kubectl logs -f --timestamps --tail 200 -n prod deploy/vllm",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("inputs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
