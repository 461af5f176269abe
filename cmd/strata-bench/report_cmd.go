package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// reportOptions are the flags of `strata-bench report`.
type reportOptions struct {
	htmlPath, labels, title string
}

// newReportCommand is `strata-bench report FILE.json [FILE.json...]`: the
// HTML report of saved runs, every workload's results overlaid on the
// same charts (run A against run B, or a comparison's Strata and NATS).
func newReportCommand() *cobra.Command {
	var o reportOptions
	cmd := &cobra.Command{
		Use:   "report [flags] FILE.json [FILE.json...]",
		Short: "HTML report of saved runs, overlaid on the same charts",
		Long: `Renders saved result files (--output of a workload, suite and compare runs)
as one self-contained HTML page; several files are overlaid on the same
charts.`,
		Example: `  strata-bench report a.json
  strata-bench report before.json after.json --labels before,after --html ab.html`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, files []string) error {
			return configError(o.run(files, cmd.OutOrStdout()))
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.htmlPath, "html", "", "write the HTML report to this file (default: FILE.html for one file, FILE-vs-FILE2.html next to the first for several)")
	fs.StringVar(&o.labels, "labels", "", "comma-separated names of the files' runs on the charts (default: the file names)")
	fs.StringVar(&o.title, "title", "", "page title (default: the file's title, or the labels joined by \" vs \")")
	return cmd
}

// run renders files as one page.
func (o *reportOptions) run(files []string, stdout io.Writer) error {
	if len(files) == 0 {
		return fmt.Errorf("%w: report needs at least one result file", ErrConfig)
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = strings.TrimSuffix(filepath.Base(f), ".json")
	}
	if o.labels != "" {
		given := strings.Split(o.labels, ",")
		if len(given) != len(files) {
			return fmt.Errorf("%w: --labels names %d runs for %d files", ErrConfig, len(given), len(files))
		}
		for i := range given {
			names[i] = strings.TrimSpace(given[i])
		}
	}
	seen := map[string]int{}
	var inputs []reportInput
	for i, f := range files {
		rep, err := readReport(f)
		if err != nil {
			return err
		}
		if len(rep.Results) == 0 {
			return fmt.Errorf("%w: %s has no results (a limits file?)", ErrConfig, f)
		}
		label := names[i]
		if seen[label]++; seen[label] > 1 {
			label = fmt.Sprintf("%s #%d", label, seen[label])
		}
		in := reportInput{File: f, Report: rep}
		if len(files) > 1 {
			in.Label = label
		}
		inputs = append(inputs, in)
	}
	t := o.title
	if t == "" && len(files) > 1 {
		var ls []string
		for _, in := range inputs {
			ls = append(ls, in.Label)
		}
		t = strings.Join(ls, " vs ")
	}
	out := o.htmlPath
	if out == "" {
		base := strings.TrimSuffix(files[0], ".json")
		for _, f := range files[1:] {
			base += "-vs-" + strings.TrimSuffix(filepath.Base(f), ".json")
		}
		out = base + ".html"
	}
	if err := writeHTMLPage(out, t, inputs); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", out)
	return nil
}
