// Package command gives every Strata binary the same command-line shape
// (cobra): --help and `help CMD` exit 0, --version and a version command
// print the build (package buildinfo), `completion bash|zsh|fish|powershell`
// prints a shell completion script, and a mistake is an error: an unknown
// command, also inside a command group, exits 2 with "did you mean".
//
// A binary builds its cobra tree and hands it to Main (or, when it maps
// errors to exit codes itself, calls Prepare and executes the tree):
//
//	root := &cobra.Command{Use: "strata-sim", Short: "..."}
//	root.AddCommand(runCmd, swarmCmd)
//	os.Exit(command.Main(ctx, root, os.Args[1:], os.Stdout, os.Stderr))
package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stratabroker/strata/cmd/internal/buildinfo"
)

// Exit codes shared by the binaries.
const (
	// ExitOK is success.
	ExitOK = 0
	// ExitFailure is a failure of the command itself.
	ExitFailure = 1
	// ExitUsage is a mistake in the command line.
	ExitUsage = 2
)

// suggestDistanceMax is the largest edit distance between a mistyped
// command and a suggestion; words of up to shortWordMax letters allow
// one edit (else "lst" would suggest "get" as well as "list"), words of
// one or two letters none (every one-letter alias is one edit away).
const (
	suggestDistanceMax = 2
	shortWordMax       = 4
)

// UsageError marks a mistake in the command line: Main exits ExitUsage.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError.
func Usagef(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// IsUsage reports whether err is a command-line mistake.
func IsUsage(err error) bool {
	var ue UsageError
	return errors.As(err, &ue)
}

// ExitCode is returned by a command that already reported its failure and
// only wants the process to exit with the code.
type ExitCode int

func (e ExitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// UnknownCommandError is a command name that is not a subcommand of
// Parent; Suggestions are the close names.
type UnknownCommandError struct {
	Name        string
	Parent      string
	Suggestions []string
}

func (e *UnknownCommandError) Error() string {
	msg := fmt.Sprintf("unknown command %q for %q", e.Name, e.Parent)
	switch len(e.Suggestions) {
	case 0:
	case 1:
		msg += fmt.Sprintf("; did you mean %q?", e.Suggestions[0])
	default:
		quoted := make([]string, len(e.Suggestions))
		for i, s := range e.Suggestions {
			quoted[i] = fmt.Sprintf("%q", s)
		}
		msg += "; did you mean one of " + strings.Join(quoted, ", ") + "?"
	}
	return msg + fmt.Sprintf(" (run '%s --help' for the commands)", e.Parent)
}

// Unwrap makes an unknown command a usage error.
func (e *UnknownCommandError) Unwrap() error { return UsageError{errors.New("unknown command")} }

// Prepare gives the fully built tree under root the family's conventions.
// Call it after every subcommand was added (it walks the tree) and after
// SetOut (the completion command writes where root writes then).
func Prepare(root *cobra.Command, info buildinfo.Info) {
	root.SilenceErrors = true
	root.SilenceUsage = true
	root.Version = info.Version
	// The template is the whole description; it holds no template action.
	root.SetVersionTemplate(info.String())
	if !hasCommand(root, "version") {
		root.AddCommand(versionCommand(info))
	}
	root.SetHelpCommand(helpCommand())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return UsageError{err} })
	root.CompletionOptions.HiddenDefaultCmd = false
	// Added now, not at Execute, so the walk below covers it.
	root.InitDefaultCompletionCmd()
	walk(root, func(c *cobra.Command) {
		if c.HasSubCommands() && !c.Runnable() {
			// A group: without arguments it shows its help; with an
			// argument that names no subcommand it is an error (cobra
			// would print the help and exit 0).
			c.Args = NoArgs
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
			return
		}
		if validate := c.Args; validate != nil {
			// cobra's argument checks ("accepts 1 arg(s)") are usage errors.
			c.Args = func(cmd *cobra.Command, args []string) error {
				err := validate(cmd, args)
				if err != nil && !IsUsage(err) {
					err = UsageError{err}
				}
				return err
			}
		}
	})
}

// Main prepares root with the build information of the program root
// names, runs it with args and returns the exit code: ExitOK, ExitUsage
// for a command-line mistake, the code of an ExitCode error, else
// ExitFailure. Errors are printed to stderr as "program: message".
func Main(ctx context.Context, root *cobra.Command, args []string, stdout, stderr io.Writer) int {
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	Prepare(root, buildinfo.Read(root.Name()))
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var code ExitCode
	if errors.As(err, &code) {
		return int(code)
	}
	fmt.Fprintf(stderr, "%s: %v\n", root.Name(), err)
	if IsUsage(err) {
		return ExitUsage
	}
	return ExitFailure
}

// NoArgs accepts no positional argument: one that could be a mistyped
// subcommand is answered with suggestions. Commands that run and also
// have subcommands (strata-server) use it.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.HasAvailableSubCommands() {
		return &UnknownCommandError{Name: args[0], Parent: cmd.CommandPath(), Suggestions: Suggestions(cmd, args[0])}
	}
	return Usagef("%s takes no arguments, got %q", cmd.CommandPath(), args[0])
}

// Suggestions returns the subcommands of cmd whose name or alias is close
// to typed (edit distance, or a prefix).
func Suggestions(cmd *cobra.Command, typed string) []string {
	var out []string
	t := strings.ToLower(typed)
	maxDistance := suggestDistanceMax
	switch n := len([]rune(t)); {
	case n < 3:
		maxDistance = -1 // one or two letters: prefixes only
	case n <= shortWordMax:
		maxDistance = 1
	}
	for _, sub := range cmd.Commands() {
		if !sub.IsAvailableCommand() && sub.Name() != "help" {
			continue
		}
		for _, name := range append([]string{sub.Name()}, sub.Aliases...) {
			n := strings.ToLower(name)
			if editDistance(t, n) <= maxDistance || (len(t) > 1 && strings.HasPrefix(n, t)) {
				out = append(out, sub.Name())
				break
			}
		}
	}
	return out
}

// editDistance is the edit distance of a and b, a swap of two adjacent
// letters counting as one edit ("lsit" is one edit from "list"): the
// optimal string alignment distance.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

func walk(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		walk(sub, f)
	}
}

func hasCommand(c *cobra.Command, name string) bool {
	for _, sub := range c.Commands() {
		if sub.Name() == name {
			return true
		}
	}
	return false
}

// versionCommand prints info: the multi-line form, or JSON when the
// command has an --output flag set to json (strata -o json version).
func versionCommand(info buildinfo.Info) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date, Go version and protocol version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f := cmd.Flags().Lookup("output"); f != nil && f.Value.String() == "json" {
				b, err := json.Marshal(info)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", b)
				return err
			}
			_, err := fmt.Fprint(cmd.OutOrStdout(), info.String())
			return err
		},
	}
}

// helpCommand is `help [command]`: cobra's, except that an unknown topic
// is an error instead of the root's usage with exit 0.
func helpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "Help prints the help of any command: help stream list.",
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			cmd, _, err := c.Root().Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					out = append(out, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd := c.Root()
			for _, name := range args {
				next := findSub(cmd, name)
				if next == nil {
					return &UnknownCommandError{Name: name, Parent: cmd.CommandPath(), Suggestions: Suggestions(cmd, name)}
				}
				cmd = next
			}
			cmd.InitDefaultHelpFlag()
			cmd.InitDefaultVersionFlag()
			return cmd.Help()
		},
	}
}

// findSub returns the subcommand of c named or aliased name.
func findSub(c *cobra.Command, name string) *cobra.Command {
	for _, sub := range c.Commands() {
		if sub.Name() == name || sub.HasAlias(name) {
			return sub
		}
	}
	return nil
}
