package cli

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratabroker/strata/client"
)

// completeTimeout bounds the server lookups of one completion.
const completeTimeout = 3 * time.Second

// addCompletions gives every command whose arguments name streams,
// topics, consumer groups or users (argsAnnotation) a completion that
// asks the server for the names, with the connection settings of the
// command line being completed (flags, environment, context).
func addCompletions(a *app, root *cobra.Command) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Annotations[argsAnnotation] != "" && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = a.complete
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// complete answers one shell completion request for cmd's next argument.
func (a *app) complete(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	const none = cobra.ShellCompDirectiveNoFileComp
	kinds := strings.Fields(cmd.Annotations[argsAnnotation])
	if len(args) >= len(kinds) {
		return nil, none
	}
	base := cmd.Context()
	if base == nil {
		base = context.Background()
	}
	ctx, cancel := context.WithTimeout(base, completeTimeout)
	defer cancel()
	arg := func(kind string) (client.Identifier, bool) {
		for i, k := range kinds[:len(args)] {
			if k == kind {
				return client.ParseIdentifier(args[i]), true
			}
		}
		return client.Identifier{}, false
	}
	c, err := a.connect(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []cobra.Completion
	addName := func(name, desc string) {
		if strings.HasPrefix(name, toComplete) {
			out = append(out, cobra.CompletionWithDesc(name, desc))
		}
	}
	switch kinds[len(args)] {
	case "stream":
		streams, err := c.GetStreams(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		for _, s := range streams {
			addName(s.Name, "stream "+u32(s.ID)+", "+u32(s.TopicsCount)+" topics")
		}
	case "topic":
		stream, ok := arg("stream")
		if !ok {
			return nil, none
		}
		topics, err := c.GetTopics(ctx, stream)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		for _, t := range topics {
			addName(t.Name, "topic "+u32(t.ID)+", "+u32(t.PartitionsCount)+" partitions")
		}
	case "partition":
		stream, ok1 := arg("stream")
		topic, ok2 := arg("topic")
		if !ok1 || !ok2 {
			return nil, none
		}
		t, err := c.GetTopic(ctx, stream, topic)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		for _, p := range t.Partitions {
			addName(strconv.FormatUint(uint64(p.ID), 10), u64(p.MessagesCount)+" messages")
		}
	case "group":
		stream, ok1 := arg("stream")
		topic, ok2 := arg("topic")
		if !ok1 || !ok2 {
			return nil, none
		}
		groups, err := c.GetConsumerGroups(ctx, stream, topic)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		for _, g := range groups {
			addName(g.Name, "group "+u32(g.ID)+", "+u32(g.MembersCount)+" members")
		}
	case "user":
		users, err := c.GetUsers(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		for _, u := range users {
			addName(u.Username, "user "+u32(u.ID))
		}
	}
	return out, none
}
