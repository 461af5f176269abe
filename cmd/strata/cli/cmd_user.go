package cli

import (
	"encoding/json"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
)

// permissionFlags builds a permission set from --global and --json.
type permissionFlags struct {
	global []string
	json   string
}

func (p *permissionFlags) add(fs *pflag.FlagSet) {
	fs.StringSliceVar(&p.global, "global", nil, "global permissions, comma separated: "+strings.Join(globalPermissionNames, ","))
	fs.StringVar(&p.json, "permissions-json", "", `full permission set as JSON, e.g. '{"global":{"read_streams":true},"streams":[{"stream_id":1,"poll_messages":true}]}'`)
}

var globalPermissionNames = []string{"manage_servers", "read_servers", "manage_users", "read_users",
	"manage_streams", "read_streams", "manage_topics", "read_topics", "poll_messages", "send_messages"}

// build returns nil when neither flag was given.
func (p *permissionFlags) build() (*client.Permissions, error) {
	if len(p.global) == 0 && p.json == "" {
		return nil, nil
	}
	perms := &client.Permissions{}
	if p.json != "" {
		if err := json.Unmarshal([]byte(p.json), perms); err != nil {
			return nil, usagef("--permissions-json: %v", err)
		}
	}
	g := &perms.Global
	flags := map[string]*bool{"manage_servers": &g.ManageServers, "read_servers": &g.ReadServers,
		"manage_users": &g.ManageUsers, "read_users": &g.ReadUsers, "manage_streams": &g.ManageStreams,
		"read_streams": &g.ReadStreams, "manage_topics": &g.ManageTopics, "read_topics": &g.ReadTopics,
		"poll_messages": &g.PollMessages, "send_messages": &g.SendMessages}
	for _, name := range p.global {
		f, ok := flags[strings.TrimSpace(name)]
		if !ok {
			return nil, usagef("unknown global permission %q (known: %s)", name, strings.Join(globalPermissionNames, ", "))
		}
		*f = true
	}
	return perms, nil
}

func statusName(s uint8) string {
	switch s {
	case client.UserActive:
		return "active"
	case client.UserInactive:
		return "inactive"
	}
	return u32(uint32(s))
}

func parseStatus(s string) (uint8, error) {
	switch s {
	case "active":
		return client.UserActive, nil
	case "inactive":
		return client.UserInactive, nil
	}
	return 0, usagef("--status must be active or inactive, got %q", s)
}

func newUserCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "user",
		Aliases: []string{"u", "users"},
		Short:   "Manage users and their permissions",
		Long: `USER is a numeric id or a username.

  strata user create alice s3cret --global read_streams,poll_messages
  strata user list
  strata user get alice
  strata user update alice --name alicia --status inactive
  strata user password alicia s3cret n3w-s3cret
  strata user permissions alicia --permissions-json '{"streams":[{"stream_id":0,"poll_messages":true}]}'
  strata user permissions alicia --none
  strata user delete alicia`,
	}
	var createPerms permissionFlags
	var inactive bool
	create := &cobra.Command{
		Use:     "create USERNAME PASSWORD",
		Aliases: aliasesCreate,
		Short:   "Create a user",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			perms, err := createPerms.build()
			if err != nil {
				return err
			}
			status := client.UserActive
			if inactive {
				status = client.UserInactive
			}
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			u, err := c.CreateUser(cmd.Context(), args[0], args[1], status, perms)
			if err != nil {
				return err
			}
			return a.printer().message(toUserDetails(u), "created user "+u.Username+" with id "+u32(u.ID))
		},
	}
	createPerms.add(create.Flags())
	create.Flags().BoolVar(&inactive, "inactive", false, "create the user inactive")

	var newName, status string
	update := &cobra.Command{
		Use:         "update USER",
		Aliases:     aliasesUpdate,
		Short:       "Rename a user or change its status",
		Args:        cobra.ExactArgs(1),
		Annotations: argsAre("user"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var upd client.UserUpdate
			if newName != "" {
				upd.Username = &newName
			}
			if status != "" {
				s, err := parseStatus(status)
				if err != nil {
					return err
				}
				upd.Status = &s
			}
			if upd.Username == nil && upd.Status == nil {
				return usagef("nothing to update: give --name and/or --status")
			}
			return a.simple(cmd, func(c *client.Client) error {
				return c.UpdateUser(cmd.Context(), client.ParseIdentifier(args[0]), upd)
			}, "updated user "+args[0])
		},
	}
	update.Flags().StringVar(&newName, "name", "", "new username")
	update.Flags().StringVar(&status, "status", "", "active or inactive")

	var perms permissionFlags
	var none bool
	permissions := &cobra.Command{
		Use:         "permissions USER",
		Aliases:     []string{"perm", "perms"},
		Short:       "Replace a user's permissions",
		Args:        cobra.ExactArgs(1),
		Annotations: argsAre("user"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := perms.build()
			if err != nil {
				return err
			}
			if p == nil && !none {
				return usagef("give --global, --permissions-json, or --none to remove all permissions")
			}
			if p != nil && none {
				return usagef("--none cannot be combined with other permissions")
			}
			return a.simple(cmd, func(c *client.Client) error {
				return c.UpdatePermissions(cmd.Context(), client.ParseIdentifier(args[0]), p)
			}, "updated the permissions of user "+args[0])
		},
	}
	perms.add(permissions.Flags())
	permissions.Flags().BoolVar(&none, "none", false, "remove every permission")

	cmd.AddCommand(create, update, permissions, &cobra.Command{
		Use:     "list",
		Aliases: aliasesList,
		Short:   "List users",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			list, err := c.GetUsers(cmd.Context())
			if err != nil {
				return err
			}
			records := make([]userRecord, len(list))
			for i := range list {
				records[i] = toUserRecord(&list[i])
			}
			return printList(a.printer(), records, []string{"ID", "USERNAME", "STATUS", "CREATED"}, func(u userRecord) []string {
				return []string{u32(u.ID), u.Username, u.Status, micros(u.CreatedAt)}
			})
		},
	}, &cobra.Command{
		Use:         "get USER",
		Aliases:     aliasesGet,
		Short:       "Show a user and its permissions",
		Args:        cobra.ExactArgs(1),
		Annotations: argsAre("user"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			u, err := c.GetUser(cmd.Context(), client.ParseIdentifier(args[0]))
			if err != nil {
				return notFoundAs(err, wire.ErrResourceNotFound, "user %s", args[0])
			}
			permText := "none"
			if u.Permissions != nil {
				b, err := json.Marshal(u.Permissions)
				if err != nil {
					return err
				}
				permText = string(b)
			}
			return a.printer().object(toUserDetails(u), []field{{"id", u.ID}, {"username", u.Username},
				{"status", statusName(u.Status)}, {"created", micros(u.CreatedAt)}, {"permissions", permText}})
		},
	}, &cobra.Command{
		Use:         "delete USER",
		Aliases:     aliasesDelete,
		Short:       "Delete a user",
		Args:        cobra.ExactArgs(1),
		Annotations: argsAre("user"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.simple(cmd, func(c *client.Client) error {
				return c.DeleteUser(cmd.Context(), client.ParseIdentifier(args[0]))
			}, "deleted user "+args[0])
		},
	}, &cobra.Command{
		Use:         "password USER CURRENT_PASSWORD NEW_PASSWORD",
		Aliases:     []string{"pwd", "passwd"},
		Short:       "Change a user's password",
		Args:        cobra.ExactArgs(3),
		Annotations: argsAre("user"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.simple(cmd, func(c *client.Client) error {
				return c.ChangePassword(cmd.Context(), client.ParseIdentifier(args[0]), args[1], args[2])
			}, "changed the password of user "+args[0])
		},
	})
	return cmd
}

// createdToken is the JSON form of pat create.
type createdToken struct {
	Name  string `json:"name"`
	Token string `json:"token"`
}

func newPATCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "pat",
		Aliases: []string{"token", "tokens"},
		Short:   "Manage your personal access tokens",
		Long: `Personal access tokens log in without a password (--token or STRATA_TOKEN).
The raw token is printed once, at creation.

  strata pat create ci --expiry 720h
  strata pat list
  strata pat delete ci`,
	}
	var expiry string
	create := &cobra.Command{
		Use:     "create NAME",
		Aliases: aliasesCreate,
		Short:   "Create a token and print it",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			expiryMicros, err := patExpiry(expiry)
			if err != nil {
				return err
			}
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			token, err := c.CreatePersonalAccessToken(cmd.Context(), args[0], expiryMicros)
			if err != nil {
				return err
			}
			return a.printer().message(createdToken{Name: args[0], Token: token}, token)
		},
	}
	create.Flags().StringVar(&expiry, "expiry", "", `lifetime such as "30 days" or "720h" (empty, 0 or never: never expires)`)
	cmd.AddCommand(create, &cobra.Command{
		Use:     "list",
		Aliases: aliasesList,
		Short:   "List your tokens",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			list, err := c.GetPersonalAccessTokens(cmd.Context())
			if err != nil {
				return err
			}
			records := make([]tokenRecord, len(list))
			for i, p := range list {
				records[i] = tokenRecord{Name: p.Name, ExpiryAt: timestampOrNull(p.ExpiryAt)}
			}
			return printList(a.printer(), records, []string{"NAME", "EXPIRES"}, func(p tokenRecord) []string {
				exp := "never"
				if at, ok := p.ExpiryAt.(uint64); ok {
					exp = micros(at)
				}
				return []string{p.Name, exp}
			})
		},
	}, &cobra.Command{
		Use:     "delete NAME",
		Aliases: aliasesDelete,
		Short:   "Delete a token",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.simple(cmd, func(c *client.Client) error {
				return c.DeletePersonalAccessToken(cmd.Context(), args[0])
			}, "deleted token "+args[0])
		},
	})
	return cmd
}
