package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// `llmtop man`: the manual page, written from the commands and flags
// themselves so it cannot drift from --help. `make dist` ships its output
// as llmtop.1; the install script puts it where man finds it.

func init() {
	root.AddCommand(&cobra.Command{
		Use:   "man",
		Short: "Print the manual page (roff): llmtop man > ~/.local/share/man/man1/llmtop.1",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writeMan(cmd.OutOrStdout(), root)
		},
	})
}

func writeMan(w io.Writer, top *cobra.Command) error {
	top.InitDefaultCompletionCmd() // cobra adds `completion` when it executes; the page lists it either way
	var b strings.Builder
	date := buildDate
	if len(date) >= 10 {
		date = date[:10]
	}
	fmt.Fprintf(&b, ".TH LLMTOP 1 %q %q \"User Commands\"\n", date, "llmtop "+version)
	b.WriteString(".ad l\n") // ragged right: URLs and flag lists do not stretch the lines
	b.WriteString(".SH NAME\nllmtop \\- " + roffText(top.Short) + "\n")
	b.WriteString(".SH SYNOPSIS\n.B llmtop\n[\\fIflags\\fR] [\\fIURL\\fR...]\n.br\n.B llmtop\n\\fICOMMAND\\fR [\\fIflags\\fR] [\\fIargs\\fR]\n")
	b.WriteString(".SH DESCRIPTION\n")
	desc := top.Long
	if desc == "" {
		desc = top.Short + "."
	}
	b.WriteString(roffParagraphs(desc))
	b.WriteString(".PP\nWithout a URL llmtop looks for engines on 127.0.0.1. A value an engine does not expose is shown as \\-\\- (JSON null), never as 0.\n")
	b.WriteString(".SH OPTIONS\n")
	writeFlags(&b, top.NonInheritedFlags())
	b.WriteString(".SH COMMANDS\n")
	for _, c := range top.Commands() {
		if !c.IsAvailableCommand() || c.Name() == "help" {
			continue
		}
		writeCommand(&b, c)
	}
	b.WriteString(".SH EXIT STATUS\n0 on success; 1 on an error. \\fBllmtop diagnose\\fR exits 0 when healthy, 1 on warnings, 2 on critical findings, 3 when no endpoint answered.\n")
	b.WriteString(".SH GPUS\nGPU rows come from NVML: llmtop loads \\fIlibnvidia\\-ml.so.1\\fR (installed with the NVIDIA driver) at run time and starts without it; the GPU pane then says why it is empty. \\fB\\-\\-dcgm\\fR \\fIURL\\fR reads a DCGM exporter instead. \\fBllmtop version\\fR says whether this build reads NVML.\n")
	b.WriteString(".SH SEE ALSO\n\\fBnvidia\\-smi\\fR(1), \\fBnvtop\\fR(1), \\fBtop\\fR(1)\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeCommand(b *strings.Builder, c *cobra.Command) {
	fmt.Fprintf(b, ".SS \"%s\"\n", roffText(c.CommandPath()))
	fmt.Fprintf(b, ".B %s\n.PP\n", roffText(c.UseLine()))
	desc := c.Long
	if desc == "" {
		desc = c.Short + "."
	}
	b.WriteString(roffParagraphs(desc))
	if c.HasAvailableLocalFlags() {
		writeFlags(b, c.LocalFlags())
	}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			writeCommand(b, sub)
		}
	}
}

func writeFlags(b *strings.Builder, fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		name, usage := pflag.UnquoteUsage(f)
		b.WriteString(".TP\n")
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			fmt.Fprintf(b, "\\fB\\-%s\\fR, ", f.Shorthand)
		}
		fmt.Fprintf(b, "\\fB\\-\\-%s\\fR", roffText(f.Name))
		if name != "" {
			fmt.Fprintf(b, " \\fI%s\\fR", roffText(name))
		}
		b.WriteString("\n" + roffText(usage))
		if d := f.DefValue; d != "" && d != "false" && d != "0" && d != "[]" && d != "0s" {
			b.WriteString(" (default " + roffText(d) + ")")
		}
		b.WriteString("\n")
	})
}

// roffParagraphs keeps the help text's lines; blank lines start paragraphs
// and indented lines (examples, tables) are set as they are.
func roffParagraphs(s string) string {
	var b strings.Builder
	inVerbatim := false
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		verbatim := strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")
		switch {
		case strings.TrimSpace(line) == "":
			if inVerbatim {
				b.WriteString(".fi\n")
				inVerbatim = false
			}
			b.WriteString(".PP\n")
			continue
		case verbatim && !inVerbatim:
			b.WriteString(".nf\n")
			inVerbatim = true
		case !verbatim && inVerbatim:
			b.WriteString(".fi\n")
			inVerbatim = false
		}
		b.WriteString(roffText(line) + "\n")
	}
	if inVerbatim {
		b.WriteString(".fi\n")
	}
	return b.String()
}

// roffText escapes what roff would read as markup: backslashes, hyphens
// (so they are not broken or turned into dashes) and a leading dot or quote.
func roffText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
