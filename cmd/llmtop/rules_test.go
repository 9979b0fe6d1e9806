package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/llmtop/llmtop/exporter"
)

func runRulesCmd(t *testing.T, engine string) (string, error) {
	t.Helper()
	old := engineFlags.engine
	defer func() { engineFlags.engine = old }()
	engineFlags.engine = engine
	var out bytes.Buffer
	cmd := &cobra.Command{}
	cmd.SetOut(&out)
	err := runRules(cmd, nil)
	return out.String(), err
}

// The printed file is YAML Prometheus loads: promtool check rules passes
// (when promtool is installed: make deps), and it reads back as the groups
// llmtop built.
func TestRulesFilePassesPromtool(t *testing.T) {
	out, err := runRulesCmd(t, "")
	if err != nil {
		t.Fatal(err)
	}
	var f exporter.RuleFile
	if err := yaml.Unmarshal([]byte(out), &f); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, out)
	}
	if len(f.Groups) != len(exporter.RuleEngines())+1 {
		t.Fatalf("%d groups, want one per engine and the exporter's", len(f.Groups))
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (make deps installs Debian's prometheus)")
	}
	path := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := exec.Command(promtool, "check", "rules", path).CombinedOutput()
	if err != nil || !strings.Contains(string(res), "SUCCESS") {
		t.Fatalf("promtool check rules: %v\n%s\n%s", err, res, out)
	}
}

func TestRulesEngineFlag(t *testing.T) {
	out, err := runRulesCmd(t, "llama.cpp")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "name: llmtop-llamacpp") || strings.Contains(out, "vllm:") {
		t.Errorf("--engine llama.cpp: want only llama.cpp's group (and the exporter's):\n%s", out)
	}
	if _, err := runRulesCmd(t, "ollama"); err == nil || !strings.Contains(err.Error(), "llmtop_finding") {
		t.Errorf("--engine ollama: %v, want an error pointing at the exporter's rules", err)
	}
	if _, err := runRulesCmd(t, "nginx"); err == nil {
		t.Error("--engine nginx accepted")
	}
}
