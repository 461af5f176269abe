package shard

import "fmt"

// StartPlan creates and starts one shard per CPU of the plan: shard i on
// plan.CPUs[i], pinned when plan.Pin, with base's inbox capacity, event
// interval and (for unpinned plans) Unlocked. pollers, when not nil, gives shard i its IO engine. If a shard
// fails to start, those already started are stopped and the error names
// the shard.
func StartPlan(plan Plan, base Config, pollers func(shard int) Poller) ([]*Shard, error) {
	shards := make([]*Shard, 0, len(plan.CPUs))
	stopAll := func() {
		for _, started := range shards {
			started.Stop()
		}
	}
	for index, cpu := range plan.CPUs {
		config := base
		config.ID, config.CPU, config.Pin = index, cpu, plan.Pin
		if plan.Pin {
			config.Unlocked = false
		}
		if pollers != nil {
			config.Poller = pollers(index)
		}
		shard, err := New(config)
		if err == nil {
			err = shard.Start()
		}
		if err != nil {
			stopAll()
			return nil, fmt.Errorf("shard %d on CPU %d: %w", index, cpu, err)
		}
		shards = append(shards, shard)
	}
	return shards, nil
}
