package cli

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress is a progress bar on a terminal and nothing otherwise.
type progress struct {
	bar *progressbar.ProgressBar
}

// progressThrottle limits redraws of the bar.
const progressThrottle = 100 * time.Millisecond

// newProgress returns a bar of total units (-1 = unknown: a spinner) when
// stderr is a terminal, else an inert progress.
func (a *app) newProgress(total int64, description string, bytes bool) *progress {
	if a.StderrIsTerminal == nil || !a.StderrIsTerminal() {
		return &progress{}
	}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(a.Stderr),
		progressbar.OptionSetDescription(description),
		progressbar.OptionThrottle(progressThrottle),
		progressbar.OptionShowCount(),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
	}
	if bytes {
		opts = append(opts, progressbar.OptionShowBytes(true))
	}
	return &progress{bar: progressbar.NewOptions64(total, opts...)}
}

// add advances the bar by n units.
func (p *progress) add(n int) error {
	if p.bar == nil {
		return nil
	}
	return p.bar.Add(n)
}

// finish completes and clears the bar.
func (p *progress) finish() error {
	if p.bar == nil {
		return nil
	}
	return p.bar.Finish()
}

// inputSize returns the byte size of r when it is a regular file, else -1.
func inputSize(r io.Reader) int64 {
	f, ok := r.(*os.File)
	if !ok {
		return -1
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return -1
	}
	return st.Size()
}
