package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// printer writes results as a table or as JSON lines.
type printer struct {
	w    io.Writer
	json bool
}

// field is one labelled value of a single-object table view.
type field struct {
	label string
	value any
}

// object prints one record: JSON of v, or "label: value" lines.
func (p *printer) object(v any, fields []field) error {
	if p.json {
		return p.jsonLine(v)
	}
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	for _, f := range fields {
		if _, err := fmt.Fprintf(tw, "%s:\t%v\n", f.label, f.value); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// printList prints records: a JSON line per item, or a table with
// headers and row(item) as each item's cells.
func printList[T any](p *printer, items []T, headers []string, row func(T) []string) error {
	if p.json {
		for _, it := range items {
			if err := p.jsonLine(it); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	if _, err := fmt.Fprintln(tw, strings.Join(headers, "\t")); err != nil {
		return err
	}
	for _, it := range items {
		if _, err := fmt.Fprintln(tw, strings.Join(row(it), "\t")); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// message prints a one-line confirmation (table) or a JSON object.
func (p *printer) message(v any, text string) error {
	if p.json {
		return p.jsonLine(v)
	}
	_, err := fmt.Fprintln(p.w, text)
	return err
}

func (p *printer) jsonLine(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = p.w.Write(b)
	return err
}

// micros renders a micros-since-epoch timestamp in UTC RFC 3339.
func micros(t uint64) string {
	if t == 0 {
		return "-"
	}
	return time.UnixMicro(int64(t)).UTC().Format(time.RFC3339Nano)
}

// bytesText renders a byte count with IEC units.
func bytesText(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// maxText renders u64::MAX as a word.
func maxText(v uint64, word string, render func(uint64) string) string {
	switch v {
	case ^uint64(0):
		return word
	case 0:
		return "server default"
	}
	return render(v)
}
