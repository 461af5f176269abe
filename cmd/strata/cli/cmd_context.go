package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"

	"github.com/stratabroker/strata/net/units"
)

// Saved contexts, as `nats context` and `iggy context` keep them: named
// sets of connection settings (address, transport, TLS, credentials or a
// token) in contexts.toml under the user's config directory, written with
// mode 0600. One may be current. A setting given as a flag or in the
// environment still overrides the context's.

// contextsFile is the file name under Env.ConfigDir.
const contextsFile = "contexts.toml"

// defaultContext names "no saved context" in context use.
const defaultContext = "default"

// contextNameRE is what a context may be called.
var contextNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// errContexts marks a problem with the contexts file.
var errContexts = errors.New("saved contexts")

// savedContext is one context's settings; empty fields are not set.
type savedContext struct {
	Description string `toml:"description,omitempty"`
	Address     string `toml:"address,omitempty"`
	Transport   string `toml:"transport,omitempty"`
	TLSCA       string `toml:"tls_ca,omitempty"`
	TLSInsecure bool   `toml:"tls_insecure,omitempty"`
	Username    string `toml:"username,omitempty"`
	Password    string `toml:"password,omitempty"`
	Token       string `toml:"token,omitempty"`
}

// contextStore is the contexts file.
type contextStore struct {
	Current  string                  `toml:"current,omitempty"`
	Contexts map[string]savedContext `toml:"contexts"`
	path     string
}

// contextsPath is where the contexts live, "" when the CLI has no config
// directory.
func (a *app) contextsPath() string {
	if a.ConfigDir == "" {
		return ""
	}
	return filepath.Join(a.ConfigDir, contextsFile)
}

// loadContexts reads the contexts file; a missing file is no contexts.
func (a *app) loadContexts() (*contextStore, error) {
	st := &contextStore{Contexts: map[string]savedContext{}, path: a.contextsPath()}
	if st.path == "" {
		return st, nil
	}
	info, err := os.Stat(st.path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errContexts, err)
	}
	md, err := toml.DecodeFile(st.path, st)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errContexts, st.path, err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		return nil, fmt.Errorf("%w: %s: unknown key %s", errContexts, st.path, undecoded[0])
	}
	if st.Contexts == nil {
		st.Contexts = map[string]savedContext{}
	}
	if info.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(a.Stderr, "warning: %s holds credentials and is readable by others (mode %#o); chmod 600 it\n",
			st.path, info.Mode().Perm())
	}
	return st, nil
}

// save writes the store with mode 0600 (the directory 0700), replacing
// the file atomically.
func (st *contextStore) save() error {
	if st.path == "" {
		return fmt.Errorf("%w: no config directory (set STRATA_CONFIG_DIR)", errContexts)
	}
	dir := filepath.Dir(st.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%w: %w", errContexts, err)
	}
	tmp, err := os.CreateTemp(dir, contextsFile+".*")
	if err != nil {
		return fmt.Errorf("%w: %w", errContexts, err)
	}
	defer os.Remove(tmp.Name()) // after the rename there is nothing to remove
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("%w: %w", errContexts, err)
	}
	fmt.Fprintln(tmp, "# strata saved contexts (strata context --help); holds credentials, keep it mode 0600")
	if err := toml.NewEncoder(tmp).Encode(st); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("%w: %w", errContexts, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%w: %w", errContexts, err)
	}
	if err := os.Rename(tmp.Name(), st.path); err != nil {
		return fmt.Errorf("%w: %w", errContexts, err)
	}
	return nil
}

// names returns the context names, sorted.
func (st *contextStore) names() []string {
	out := make([]string, 0, len(st.Contexts))
	for n := range st.Contexts {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// lookup returns the context name, or an error listing the known ones.
func (st *contextStore) lookup(name string) (savedContext, error) {
	c, ok := st.Contexts[name]
	if !ok {
		known := "none saved"
		if len(st.Contexts) > 0 {
			known = "saved: " + strings.Join(st.names(), ", ")
		}
		return c, usagef("context %q not found (%s)", name, known)
	}
	return c, nil
}

// resolve fills the connection settings the flags left unset: from the
// environment, then from the selected saved context; the flag defaults
// remain for the rest. Credentials are taken as a whole: from the flags
// and environment when either gives any, else from the context.
func (a *app) resolve() error {
	if a.resolved {
		return nil
	}
	a.resolved = true
	var changed func(string) bool = func(string) bool { return false }
	if a.flags != nil {
		changed = func(name string) bool { f := a.flags.Lookup(name); return f != nil && f.Changed }
	}
	env := func(flag, name string, dst *string) bool {
		if changed(flag) {
			return true
		}
		if v := a.Getenv(name); v != "" {
			*dst = v
			return true
		}
		return false
	}
	explicitCreds := false
	for _, f := range []struct {
		flag, env string
		dst       *string
	}{{"username", "STRATA_USERNAME", &a.username}, {"password", "STRATA_PASSWORD", &a.password},
		{"token", "STRATA_TOKEN", &a.token}} {
		explicitCreds = env(f.flag, f.env, f.dst) || explicitCreds
	}
	hasAddress := env("address", "STRATA_ADDRESS", &a.address)
	hasTransport := env("transport", "STRATA_TRANSPORT", &a.transport)
	hasCA := env("tls-ca", "STRATA_TLS_CA", &a.tlsCA)
	hasInsecure := changed("tls-insecure")
	if v := a.Getenv("STRATA_TLS_INSECURE"); v != "" && !hasInsecure {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return usagef("STRATA_TLS_INSECURE must be true or false, got %q", v)
		}
		a.tlsInsecure, hasInsecure = b, true
	}
	if v := a.Getenv("STRATA_CONNECT_TIMEOUT"); v != "" && !changed("connect-timeout") {
		d, err := units.ParseDuration(v)
		if err != nil {
			return usagef("STRATA_CONNECT_TIMEOUT must be a duration such as 5s, got %q", v)
		}
		a.connectTimeout = time.Duration(d)
	}
	if a.connectTimeout <= 0 {
		return usagef("--connect-timeout must be positive")
	}
	name := a.contextName
	if name == "" {
		name = a.Getenv("STRATA_CONTEXT")
	}
	st, err := a.loadContexts()
	if err != nil {
		return err
	}
	if name == "" {
		name = st.Current
	}
	if name == "" || name == defaultContext {
		return nil
	}
	if st.path == "" {
		return usagef("context %q: no config directory to read contexts from (set STRATA_CONFIG_DIR)", name)
	}
	c, err := st.lookup(name)
	if err != nil {
		return err
	}
	if !hasAddress && c.Address != "" {
		a.address = c.Address
	}
	if !hasTransport && c.Transport != "" {
		a.transport = c.Transport
	}
	if !hasCA && c.TLSCA != "" {
		a.tlsCA = c.TLSCA
	}
	if !hasInsecure && c.TLSInsecure {
		a.tlsInsecure = true
	}
	if !explicitCreds {
		a.username, a.password, a.token = c.Username, c.Password, c.Token
	}
	return nil
}

// contextRecord is the JSON form of a listed context (no secrets).
type contextRecord struct {
	Name        string `json:"name"`
	Current     bool   `json:"current"`
	Description string `json:"description"`
	Address     string `json:"address"`
	Transport   string `json:"transport"`
	TLSCA       string `json:"tls_ca"`
	TLSInsecure bool   `json:"tls_insecure"`
	Username    string `json:"username"`
	// Auth is "password", "token" or "none".
	Auth string `json:"auth"`
}

func (c savedContext) auth() string {
	switch {
	case c.Token != "":
		return "token"
	case c.Username != "":
		return "password"
	}
	return "none"
}

func newContextCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "context",
		Aliases: []string{"ctx"},
		Short:   "Save, list, select and remove named connection settings",
		Long: `A context is a named set of connection settings: address, transport, TLS
(CA file or insecure), and a username/password or a token. "context add"
saves the connection flags given with it; "context use" makes one current,
so that commands without those flags use it. A flag or a STRATA_* variable
still overrides the context's setting; --context NAME (or STRATA_CONTEXT)
selects another context for one command.

Contexts are stored in contexts.toml in the user's config directory
(` + "`$XDG_CONFIG_HOME/strata`, else `~/.config/strata`" + ` on Linux; STRATA_CONFIG_DIR
overrides), with mode 0600: it holds passwords and tokens in clear.

  strata context add local --address 127.0.0.1:8090 -u iggy -p iggy --use
  strata context add prod --address tls://broker.example.com:8090 --tls-ca ca.pem --token "$TOKEN"
  strata context list
  strata context use prod
  strata --context local stream list
  strata context use default     # no saved context
  strata context remove prod`,
	}
	var description string
	var use, force bool
	add := &cobra.Command{
		Use:     "add NAME",
		Aliases: []string{"create", "a"},
		Short:   "Save the connection flags given with it as context NAME",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if !contextNameRE.MatchString(name) || name == defaultContext {
				return usagef("context name %q: use letters, digits, '.', '_' and '-' (and not %q)", name, defaultContext)
			}
			st, err := a.loadContexts()
			if err != nil {
				return err
			}
			if _, exists := st.Contexts[name]; exists && !force {
				return usagef("context %q exists; give --force to replace it", name)
			}
			changed := func(n string) bool { f := a.flags.Lookup(n); return f != nil && f.Changed }
			c := savedContext{Description: description}
			if changed("address") {
				c.Address = a.address
			}
			if changed("transport") {
				c.Transport = a.transport
			}
			if changed("tls-ca") {
				abs, err := filepath.Abs(a.tlsCA)
				if err != nil {
					return err
				}
				c.TLSCA = abs
			}
			c.TLSInsecure = changed("tls-insecure") && a.tlsInsecure
			if changed("token") {
				c.Token = a.token
			}
			if changed("username") || changed("password") {
				if c.Token != "" {
					return usagef("give --token or --username/--password, not both")
				}
				c.Username, c.Password = a.username, a.password
			}
			if c == (savedContext{Description: description}) {
				return usagef("nothing to save: give --address, --transport, --tls-ca, --tls-insecure, --username/--password or --token")
			}
			st.Contexts[name] = c
			if use {
				st.Current = name
			}
			if err := st.save(); err != nil {
				return err
			}
			text := "saved context " + name + " in " + st.path
			if use {
				text += "; it is now current"
			}
			return a.printer().message(done{OK: true, Message: text}, text)
		},
	}
	add.Flags().StringVar(&description, "description", "", "what the context is for")
	add.Flags().BoolVar(&use, "use", false, "make it the current context")
	add.Flags().BoolVar(&force, "force", false, "replace a context of the same name")

	cmd.AddCommand(add, &cobra.Command{
		Use:     "use NAME",
		Aliases: []string{"u", "select"},
		Short:   `Make context NAME current ("default": none)`,
		Args:    cobra.ExactArgs(1),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return a.contextNames(args), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := a.loadContexts()
			if err != nil {
				return err
			}
			name := args[0]
			if name == defaultContext {
				st.Current = ""
			} else {
				if _, err := st.lookup(name); err != nil {
					return err
				}
				st.Current = name
			}
			if err := st.save(); err != nil {
				return err
			}
			text := "using context " + name
			return a.printer().message(done{OK: true, Message: text}, text)
		},
	}, &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls", "l"},
		Short:   "List the saved contexts (the current one is marked *)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := a.loadContexts()
			if err != nil {
				return err
			}
			records := make([]contextRecord, 0, len(st.Contexts))
			for _, name := range st.names() {
				c := st.Contexts[name]
				records = append(records, contextRecord{Name: name, Current: name == st.Current, Description: c.Description,
					Address: c.Address, Transport: c.Transport, TLSCA: c.TLSCA, TLSInsecure: c.TLSInsecure,
					Username: c.Username, Auth: c.auth()})
			}
			return printList(a.printer(), records, []string{"", "NAME", "ADDRESS", "TRANSPORT", "TLS", "AUTH", "DESCRIPTION"}, func(r contextRecord) []string {
				mark, tlsText := " ", "-"
				if r.Current {
					mark = "*"
				}
				switch {
				case r.TLSInsecure:
					tlsText = "insecure"
				case r.TLSCA != "":
					tlsText = "ca " + r.TLSCA
				}
				auth := r.Auth
				if r.Username != "" {
					auth += " (" + r.Username + ")"
				}
				return []string{mark, r.Name, dash(r.Address), dash(r.Transport), tlsText, auth, r.Description}
			})
		},
	}, &cobra.Command{
		Use:     "remove NAME",
		Aliases: []string{"rm", "delete", "d"},
		Short:   "Remove context NAME",
		Args:    cobra.ExactArgs(1),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return a.contextNames(args), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := a.loadContexts()
			if err != nil {
				return err
			}
			if _, err := st.lookup(args[0]); err != nil {
				return err
			}
			delete(st.Contexts, args[0])
			if st.Current == args[0] {
				st.Current = ""
			}
			if err := st.save(); err != nil {
				return err
			}
			text := "removed context " + args[0]
			return a.printer().message(done{OK: true, Message: text}, text)
		},
	})
	return cmd
}

// contextNames completes a context name argument.
func (a *app) contextNames(args []string) []cobra.Completion {
	if len(args) > 0 {
		return nil
	}
	st, err := a.loadContexts()
	if err != nil {
		return nil
	}
	return st.names()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
