package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// cmdReport is `strata-bench report FILE.json [FILE.json...]`: the HTML
// report of saved runs, every workload's results overlaid on the same
// charts (run A against run B, or a comparison's Strata and NATS).
func cmdReport(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("strata-bench report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	htmlPath := fs.String("html", "", "write the HTML report to this file (default: FILE.html for one file, FILE-vs-FILE2.html next to the first for several)")
	labels := fs.String("labels", "", "comma-separated names of the files' runs on the charts (default: the file names)")
	title := fs.String("title", "", "page title (default: the file's title, or the labels joined by \" vs \")")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: strata-bench report [flags] FILE.json [FILE.json...]\n\nRenders saved result files (--output of a workload, suite and compare runs) as one\nself-contained HTML page; several files are overlaid on the same charts.")
		fs.PrintDefaults()
	}
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		fs.Usage()
		return fmt.Errorf("%w: report needs at least one result file", ErrConfig)
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = strings.TrimSuffix(filepath.Base(f), ".json")
	}
	if *labels != "" {
		given := strings.Split(*labels, ",")
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
	t := *title
	if t == "" && len(files) > 1 {
		var ls []string
		for _, in := range inputs {
			ls = append(ls, in.Label)
		}
		t = strings.Join(ls, " vs ")
	}
	out := *htmlPath
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

// parseInterspersed parses flags that may come before, between or after
// the positional arguments and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
