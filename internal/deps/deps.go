//go:build tools

package deps

import (
	_ "charm.land/bubbles/v2/help"
	_ "charm.land/bubbletea/v2"
	_ "charm.land/lipgloss/v2"
	_ "github.com/HdrHistogram/hdrhistogram-go"
	_ "github.com/NVIDIA/go-nvml/pkg/nvml"
	_ "github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	_ "github.com/charmbracelet/x/exp/teatest/v2"
	_ "github.com/guptarohit/asciigraph"
	_ "github.com/nxadm/tail"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_model/go"
	_ "github.com/prometheus/common/expfmt"
	_ "github.com/spf13/cobra"
	_ "golang.org/x/time/rate"
)
