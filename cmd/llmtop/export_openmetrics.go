package main

import (
	"bufio"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmtop/llmtop/recording"
)

// `llmtop export-openmetrics FILE > out.om`: a recording's engine and GPU
// series, timestamped, for `promtool tsdb create-blocks-from openmetrics`.

func init() {
	root.AddCommand(&cobra.Command{
		Use:   "export-openmetrics FILE",
		Short: "Write a recording's engine and GPU series in OpenMetrics format, for promtool tsdb create-blocks-from openmetrics",
		Long: `Write the engine metrics (gauges, counters, latency histograms, finish
reasons), whether each scrape read them, and the GPU readings of a recording
made with --record, in the OpenMetrics text format with their timestamps:

  llmtop export-openmetrics incident.llmrec > incident.om
  promtool tsdb create-blocks-from openmetrics incident.om ./data

Series are named llmtop_<concept> with endpoint, model and source labels
(docs/recording.md). A value the engine did not give is left out, not 0.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := readStream(args[0])
			if err != nil {
				return err
			}
			defer r.Close()
			out := bufio.NewWriter(safeOut(cmd.OutOrStdout()))
			n, err := recording.OpenMetrics(out, r)
			printNotes(cmd.ErrOrStderr(), args[0], r.Notes())
			if err == nil {
				err = out.Flush()
			}
			if err != nil {
				return fmt.Errorf("export-openmetrics: %w", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "llmtop: %d points from %s\n", n, args[0])
			return nil
		},
	})
}
