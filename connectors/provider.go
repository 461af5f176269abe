package connectors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// ConfigEntry is one connector's chosen configuration, or the error that
// keeps that connector (and only it) from running.
type ConfigEntry struct {
	Key, Kind string
	Version   uint64
	Config    *ConnectorConfig
	Err       error
}

// id is the runtime's name for the connector: kind/key.
func (e ConfigEntry) id() string { return e.Kind + "/" + e.Key }

// Provider supplies connector configurations. Load returns an error only
// when the provider itself fails; a bad connector config is an entry Err.
type Provider interface {
	Load(ctx context.Context) ([]ConfigEntry, error)
}

// NewProvider builds the provider the runtime config selects.
func NewProvider(c ProviderConfig) Provider {
	if c.ConfigType == "http" {
		return &HTTPProvider{URL: c.URL, Client: &http.Client{Timeout: httpProviderTimeout}}
	}
	return &LocalProvider{Dir: c.ConfigDir}
}

// activeVersionsFile pins versions in a local config directory:
//
//	[sources]
//	random = 2
//	[sinks]
//	file = 1
const activeVersionsFile = ".active_versions.toml"

// configFileName matches {key}_{source|sink}[_v{N}].toml.
var configFileName = regexp.MustCompile(`^(.+)_(source|sink)(?:_v([0-9]+))?\.toml$`)

// LocalProvider reads a directory of connector config files. Hidden files
// and files not ending in .toml are skipped; for each key the highest
// version wins unless .active_versions.toml names one.
type LocalProvider struct {
	Dir string
}

type activeVersions struct {
	Sources map[string]uint64 `toml:"sources"`
	Sinks   map[string]uint64 `toml:"sinks"`
}

// Load implements Provider.
func (p *LocalProvider) Load(context.Context) ([]ConfigEntry, error) {
	files, err := os.ReadDir(p.Dir)
	if err != nil {
		return nil, fmt.Errorf("%w: config directory: %w", ErrProvider, err)
	}
	var active activeVersions
	if b, err := os.ReadFile(filepath.Join(p.Dir, activeVersionsFile)); err == nil {
		if _, err := toml.Decode(string(b), &active); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrProvider, activeVersionsFile, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s: %w", ErrProvider, activeVersionsFile, err)
	}
	type candidate struct {
		version uint64
		file    string
	}
	groups := map[[2]string][]candidate{}
	for _, f := range files {
		name := f.Name()
		if strings.HasPrefix(name, ".") || f.IsDir() || !strings.HasSuffix(name, ".toml") {
			continue
		}
		m := configFileName.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		var v uint64
		if m[3] != "" {
			if v, err = strconv.ParseUint(m[3], 10, 64); err != nil {
				continue
			}
		}
		k := [2]string{m[1], m[2]}
		groups[k] = append(groups[k], candidate{v, name})
	}
	var out []ConfigEntry
	for k, cands := range groups {
		sort.Slice(cands, func(i, j int) bool { return cands[i].version > cands[j].version })
		chosen := cands[0]
		pins := active.Sinks
		if k[1] == KindSource {
			pins = active.Sources
		}
		e := ConfigEntry{Key: k[0], Kind: k[1]}
		if want, ok := pins[k[0]]; ok {
			found := false
			for _, c := range cands {
				if c.version == want {
					chosen, found = c, true
				}
			}
			if !found {
				e.Version = want
				e.Err = fmt.Errorf("%w: %s %s: active version %d has no file", ErrConfig, k[1], k[0], want)
				out = append(out, e)
				continue
			}
		}
		e.Version = chosen.version
		b, err := os.ReadFile(filepath.Join(p.Dir, chosen.file))
		if err != nil {
			e.Err = fmt.Errorf("%w: %s: %w", ErrConfig, chosen.file, err)
		} else if e.Config, err = ParseConnectorConfig(string(b), k[0], k[1]); err != nil {
			e.Err = fmt.Errorf("%s: %w", chosen.file, err)
		} else {
			e.Config.Version = chosen.version
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id() < out[j].id() })
	return out, nil
}

// HTTP provider limits.
const (
	httpProviderTimeout     = 10 * time.Second
	httpProviderAttemptsMax = 5
	httpProviderBackoffBase = 100 * time.Millisecond
	httpProviderBodyMax     = 16 << 20
)

// HTTPProvider fetches connector configs with GET URL, which answers a
// JSON array of {"key", "type", "version", "config"} where config is the
// connector's TOML text. Connection errors and 5xx answers are retried
// with backoff; a 4xx answer is final.
type HTTPProvider struct {
	URL    string
	Client *http.Client
}

type httpConfigEntry struct {
	Key     string `json:"key"`
	Type    string `json:"type"`
	Version uint64 `json:"version"`
	Config  string `json:"config"`
}

// errPermanent marks a failure that retrying cannot fix.
var errPermanent = errors.New("permanent")

// Load implements Provider.
func (p *HTTPProvider) Load(ctx context.Context) ([]ConfigEntry, error) {
	var body []byte
	var err error
	backoff := httpProviderBackoffBase
	for attempt := 1; ; attempt++ {
		body, err = p.fetch(ctx)
		if err == nil || errors.Is(err, errPermanent) || attempt == httpProviderAttemptsMax {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %w", ErrProvider, ctx.Err())
		case <-time.After(backoff):
		}
		backoff *= 2
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrProvider, p.URL, err)
	}
	var raw []httpConfigEntry
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("%w: %s: body: %w", ErrProvider, p.URL, err)
	}
	out := make([]ConfigEntry, 0, len(raw))
	for _, r := range raw {
		e := ConfigEntry{Key: r.Key, Kind: r.Type, Version: r.Version}
		if e.Config, e.Err = ParseConnectorConfig(r.Config, r.Key, r.Type); e.Err == nil {
			e.Config.Version = r.Version
		}
		out = append(out, e)
	}
	return out, nil
}

func (p *HTTPProvider) fetch(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errPermanent, err)
	}
	resp, err := p.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, httpProviderBodyMax))
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode >= 500:
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	case resp.StatusCode >= 400:
		return nil, fmt.Errorf("%w: status %d", errPermanent, resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%w: status %d", errPermanent, resp.StatusCode)
	}
	return b, nil
}
