package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"

	"github.com/stratabroker/strata/cmd/internal/command"
	"github.com/stratabroker/strata/server/config"
	"github.com/stratabroker/strata/storage"
)

// repairLong is the description of `strata-server repair`.
const repairLong = `Repairs fenced partitions of a stopped single-node server: it keeps each
one's verified prefix (every message before the damage), moves the damaged
segment files and every segment after them aside into
<partition>/damaged-<UTC time>/ (nothing is deleted), lowers the
partition's recorded frontier to the end of the prefix and moves consumer
offsets stored past it back to its last message, so the partition serves
the prefix and takes sends again. Without --confirm it only prints what it
would do.

Exit codes: 0 nothing to repair or every fenced partition repaired (or, as
a dry run, listed), 1 a partition could not be repaired or a server still
runs over the data, 2 bad command line or configuration.`

// repairFlags are the flags of `strata-server repair`.
type repairFlags struct {
	configPath string
	only       string
	confirm    bool
}

// newRepairCommand is `strata-server repair`.
func newRepairCommand() *cobra.Command {
	var f repairFlags
	cmd := &cobra.Command{
		Use:   "repair [flags]",
		Short: "Repair the fenced partitions of a stopped server (a dry run without --confirm)",
		Long:  repairLong,
		Example: `  strata-server repair
  strata-server repair --partition 1/1/1 --confirm
  STRATA_SYSTEM_PATH=/var/lib/strata strata-server repair --confirm`,
		Args: command.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if code := runRepair(f, cmd.OutOrStdout(), cmd.ErrOrStderr()); code != 0 {
				return command.ExitCode(code)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.configPath, "config", "", "TOML configuration file (the embedded default when empty); STRATA_SYSTEM_PATH names the data directory")
	fs.StringVar(&f.only, "partition", "", "repair only this partition, as STREAM/TOPIC/PARTITION ids")
	fs.BoolVar(&f.confirm, "confirm", false, "carry the repair out (without it nothing on disk changes)")
	return cmd
}

// repairCopyBufferBytes is the buffer of the prefix copy.
const repairCopyBufferBytes = 1 << 20

// repairTempSuffix names the prefix copy until it replaces the segment.
const repairTempSuffix = ".repairing"

// runRepair is `strata-server repair`; it returns the exit code.
func runRepair(f repairFlags, stdout, stderr io.Writer) int {
	cfg, err := config.Load(f.configPath, os.Environ())
	if err != nil {
		fmt.Fprintf(stderr, "strata-server repair: %v\n", err)
		return 2
	}
	r := &repairer{disk: storage.OSFS{}, out: stdout, confirm: f.confirm, now: time.Now().UTC()}
	r.fs = r.disk
	if !r.confirm {
		r.fs = dryRunFS{disk: r.disk}
	}
	if addr, running := serverRunning(cfg.System.Path); running {
		fmt.Fprintf(stderr, "strata-server repair: a server answers on %s over %s; stop it first\n", addr, cfg.System.Path)
		return 1
	}
	dirs, err := r.partitionDirs(cfg.System.Path, f.only)
	if err != nil {
		fmt.Fprintf(stderr, "strata-server repair: %v\n", err)
		return 2
	}
	mode := "dry run: nothing on disk changes without --confirm"
	if r.confirm {
		mode = "repairing"
	}
	fmt.Fprintf(stdout, "strata-server repair: data in %s, partitions: %d (%s)\n", cfg.System.Path, len(dirs), mode)
	code := 0
	for _, dir := range dirs {
		if err := r.repairPartition(dir); err != nil {
			fmt.Fprintf(stdout, "  NOT REPAIRED: %v\n", err)
			code = 1
		}
	}
	switch {
	case r.fenced == 0:
		fmt.Fprintln(stdout, "no fenced partition")
	case !r.confirm:
		fmt.Fprintf(stdout, "fenced partitions to repair: %d; run again with --confirm to repair them\n", r.fenced)
	default:
		fmt.Fprintf(stdout, "fenced partitions repaired: %d of %d\n", r.repaired, r.fenced)
	}
	return code
}

// serverRunning reports whether a server answers on the TCP address the
// last boot over dataDir recorded (runtime/current_config.toml).
func serverRunning(dataDir string) (string, bool) {
	var current struct {
		Bound map[string]string `toml:"bound"`
	}
	if _, err := toml.DecodeFile(path.Join(dataDir, "runtime", "current_config.toml"), &current); err != nil {
		return "", false
	}
	addr := current.Bound["tcp"]
	if addr == "" {
		return "", false
	}
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return addr, false
	}
	_ = conn.Close()
	return addr, true
}

// repairer repairs the fenced partitions of one data directory.
type repairer struct {
	disk storage.FS // the real files
	// fs is what recovery runs on: the disk, or a dry run of it.
	fs      storage.FS
	out     io.Writer
	confirm bool
	now     time.Time
	// fenced and repaired count partitions.
	fenced, repaired int
}

// partitionDirs lists the partition directories under dataDir
// (streams/{id}/topics/{id}/partitions/{id}, DESIGN.md decision 8), or the
// one named by only ("STREAM/TOPIC/PARTITION").
func (r *repairer) partitionDirs(dataDir, only string) ([]string, error) {
	root := path.Join(dataDir, "streams")
	if only != "" {
		ids := strings.Split(only, "/")
		if len(ids) != 3 {
			return nil, fmt.Errorf("--partition %q: want STREAM/TOPIC/PARTITION ids", only)
		}
		for _, id := range ids {
			if _, err := strconv.ParseUint(id, 10, 32); err != nil {
				return nil, fmt.Errorf("--partition %q: %q is not an id", only, id)
			}
		}
		dir := path.Join(root, ids[0], "topics", ids[1], "partitions", ids[2])
		if _, err := r.disk.Stat(dir); err != nil {
			return nil, fmt.Errorf("--partition %s: %w", only, err)
		}
		return []string{dir}, nil
	}
	var dirs []string
	streams, err := numericDirs(r.disk, root)
	if err != nil {
		return nil, err
	}
	for _, s := range streams {
		topics, err := numericDirs(r.disk, path.Join(root, s, "topics"))
		if err != nil {
			return nil, err
		}
		for _, t := range topics {
			parts, err := numericDirs(r.disk, path.Join(root, s, "topics", t, "partitions"))
			if err != nil {
				return nil, err
			}
			for _, p := range parts {
				dirs = append(dirs, path.Join(root, s, "topics", t, "partitions", p))
			}
		}
	}
	return dirs, nil
}

// numericDirs returns the subdirectories of dir named by a decimal id, in
// numeric order; a missing dir has none.
func numericDirs(fsys storage.FS, dir string) ([]string, error) {
	entries, err := fsys.ReadDir(dir)
	if errors.Is(err, storage.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var ids []uint64
	for _, e := range entries {
		if id, err := strconv.ParseUint(e.Name, 10, 32); err == nil && e.IsDir {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = strconv.FormatUint(id, 10)
	}
	return names, nil
}

// segmentFile is one `.log` or `.index` file of a partition directory.
type segmentFile struct {
	name  string
	start uint64
}

// segmentFiles lists the segment files of dir by start offset.
func segmentFiles(fsys storage.FS, dir string) ([]segmentFile, error) {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var files []segmentFile
	for _, e := range entries {
		digits, ok := strings.CutSuffix(e.Name, ".log")
		if !ok {
			digits, ok = strings.CutSuffix(e.Name, ".index")
		}
		start, err := strconv.ParseUint(digits, 10, 64)
		if ok && !e.IsDir && err == nil && len(digits) == len(storage.SegmentLogName(0))-len(".log") {
			files = append(files, segmentFile{name: e.Name, start: start})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	return files, nil
}

// partitionPlan is what repairing one partition does.
type partitionPlan struct {
	dir string
	sb  storage.PartitionSuperblock
	// servedBelow is the end of the verified prefix: the partition's next
	// offset after the repair.
	servedBelow, firstOffset uint64
	// damaged is the segment file with the damage ("" when the fence is
	// missing history only); keepBytes of it are the verified prefix, kept
	// when recreate.
	damaged   string
	keepBytes int64
	recreate  bool
	// moved are the segment files moved aside (names in dir).
	moved []string
	// offsets are the consumer and group offsets stored past the prefix.
	offsets []storage.StoredOffset
	// filesEnd is the next offset of the files as found (the damage
	// included): offsets below it may have been handed out.
	filesEnd uint64
}

// reserveEnd is where the repaired partition's next message goes: past
// the verified prefix, the old durable frontier and the old reservation.
func (plan *partitionPlan) reserveEnd() uint64 {
	return max(plan.servedBelow, plan.sb.DurableOffset, plan.sb.ReservedOffset, plan.filesEnd)
}

// repairPartition inspects one partition and, when it is fenced, repairs
// it (or, in a dry run, says how).
func (r *repairer) repairPartition(dir string) error {
	if err := r.finishInterrupted(dir); err != nil {
		return err
	}
	sb, report, err := storage.LoadPartitionSuperblock(r.disk, dir)
	if err != nil {
		r.fenced++
		fmt.Fprintf(r.out, "%s: fenced\n", dir)
		return fmt.Errorf("no valid superblock (%w): the partition's identity is unknown; restore superblock.a or .b from a backup, or delete and recreate the partition", err)
	}
	if !report.Found {
		fmt.Fprintf(r.out, "%s: no superblock (never opened): skipped\n", dir)
		return nil
	}
	log, rec, err := storage.OpenLog(r.fs, dir, storage.LogOptions{})
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	stats, corruption := log.Stats(), log.Fenced()
	if err := log.Close(); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	for _, t := range rec.Truncations {
		fmt.Fprintf(r.out, "%s: %s a torn tail of %s at byte %d (%d bytes, %d messages), as every boot does\n",
			dir, r.verb("cut", "would cut"), path.Base(t.File), t.Position, t.BytesDropped, t.MessagesDropped)
	}
	if corruption == nil && sb.DurableOffset <= stats.NextOffset {
		fmt.Fprintf(r.out, "%s: ok, offsets %d..%d\n", dir, stats.FirstOffset, int64(stats.NextOffset)-1)
		return nil
	}
	r.fenced++
	plan := partitionPlan{dir: dir, sb: sb, servedBelow: stats.NextOffset, firstOffset: stats.FirstOffset, filesEnd: stats.NextOffset}
	fmt.Fprintf(r.out, "%s: fenced\n", dir)
	if corruption != nil {
		if err := r.planDamage(&plan, corruption); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(r.out, "  missing history: the files hold offsets up to %d, the superblock recorded %d\n",
			int64(stats.NextOffset)-1, int64(sb.DurableOffset)-1)
	}
	offsets, _, err := storage.LoadConsumerOffsets(r.disk, dir)
	if err != nil {
		return err
	}
	for _, o := range offsets {
		if o.Offset >= plan.servedBelow {
			plan.offsets = append(plan.offsets, o)
		}
	}
	r.describe(&plan)
	if !r.confirm {
		return nil
	}
	if err := r.apply(&plan); err != nil {
		return err
	}
	r.repaired++
	return nil
}

// verb picks the form of an action for a repair (done or to do) or for
// a dry run (would).
func (r *repairer) verb(done, would string) string {
	if r.confirm {
		return done
	}
	return would
}

// planDamage fills the plan of a partition fenced by damage in its log.
func (r *repairer) planDamage(plan *partitionPlan, c *storage.Corruption) error {
	fmt.Fprintf(r.out, "  damage: %s at byte %d, from offset %d on\n  reason: %v\n", path.Base(c.File), c.Position, c.Offset, c.Err)
	files, err := segmentFiles(r.disk, plan.dir)
	if err != nil {
		return err
	}
	damaged := path.Base(c.File)
	var start uint64
	found := false
	for _, f := range files {
		if f.name == damaged {
			start, found = f.start, true
		}
	}
	if !found {
		return fmt.Errorf("%s: the damaged file %s is not a segment of the partition", plan.dir, c.File)
	}
	first := true
	for _, f := range files {
		if f.start < start {
			first = false
		}
		if f.start >= start {
			plan.moved = append(plan.moved, f.name)
		}
	}
	plan.damaged, plan.keepBytes, plan.servedBelow = damaged, c.Position, c.Offset
	// A segment keeps its name when it keeps bytes, or when it is the
	// first (its name is where the partition's offsets start); an empty
	// segment after others is left out (the one before it continues).
	plan.recreate = plan.keepBytes > 0 || first
	return nil
}

// asideDir is where the repair moves a partition's damaged files.
func (r *repairer) asideDir(dir string) string {
	return path.Join(dir, "damaged-"+r.now.Format("20060102T150405Z"))
}

// describe prints the plan.
func (r *repairer) describe(plan *partitionPlan) {
	w := r.out
	if plan.servedBelow > plan.firstOffset {
		fmt.Fprintf(w, "  keep: offsets %d..%d", plan.firstOffset, plan.servedBelow-1)
		if plan.damaged != "" && plan.keepBytes > 0 {
			fmt.Fprintf(w, " (with the first %d bytes of %s)", plan.keepBytes, plan.damaged)
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, "  keep: no message (the damage is at the start of the partition)")
	}
	if len(plan.moved) > 0 {
		fmt.Fprintf(w, "  %s aside to %s: %s\n", r.verb("move", "would move"), r.asideDir(plan.dir), strings.Join(plan.moved, ", "))
	}
	fmt.Fprintf(w, "  superblock: %s the durable frontier from %d to %d; new messages get offsets from %d on (the moved-aside offsets are never given to another message)\n",
		r.verb("set", "would set"), plan.sb.DurableOffset, plan.servedBelow, plan.reserveEnd())
	for _, o := range plan.offsets {
		kind := "consumer"
		if o.Kind == storage.GroupOffset {
			kind = "consumer group"
		}
		if plan.servedBelow == 0 {
			fmt.Fprintf(w, "  %s %d: %s the stored offset %d aside (no message is left before it)\n", kind, o.ID, r.verb("move", "would move"), o.Offset)
		} else {
			fmt.Fprintf(w, "  %s %d: %s the stored offset %d back to %d, the last kept message (its file aside)\n",
				kind, o.ID, r.verb("move", "would move"), o.Offset, plan.servedBelow-1)
		}
	}
}

// offsetDirName is the offsets subdirectory of a kind (PROTOCOL.md §6.8).
func offsetDirName(kind storage.OffsetKind) string {
	if kind == storage.GroupOffset {
		return "groups"
	}
	return "consumers"
}

// apply carries a plan out. The order keeps the directory recoverable at
// every step: the prefix is copied to a temporary file first, then the
// damaged files are moved aside, then the copy takes the damaged
// segment's name (finishInterrupted completes a repair cut off between the
// two), then offsets and the superblock follow, and the log is reopened
// to check the result.
func (r *repairer) apply(plan *partitionPlan) error {
	dir, aside := plan.dir, r.asideDir(plan.dir)
	if err := r.disk.MkdirAll(aside); err != nil {
		return fmt.Errorf("create %s: %w", aside, err)
	}
	if plan.damaged != "" && plan.recreate {
		if err := copyPrefix(r.disk, path.Join(dir, plan.damaged), path.Join(dir, plan.damaged+repairTempSuffix), plan.keepBytes); err != nil {
			return err
		}
	}
	for _, name := range plan.moved {
		if err := r.disk.Rename(path.Join(dir, name), path.Join(aside, name)); err != nil {
			return fmt.Errorf("move %s aside: %w", name, err)
		}
		fmt.Fprintf(r.out, "  moved %s to %s\n", name, aside)
	}
	if err := r.disk.SyncDir(aside); err != nil {
		return fmt.Errorf("sync %s: %w", aside, err)
	}
	if plan.damaged != "" && plan.recreate {
		if err := r.disk.Rename(path.Join(dir, plan.damaged+repairTempSuffix), path.Join(dir, plan.damaged)); err != nil {
			return fmt.Errorf("put the prefix of %s in place: %w", plan.damaged, err)
		}
		if plan.keepBytes > 0 {
			fmt.Fprintf(r.out, "  wrote %s: the first %d bytes of the damaged file\n", plan.damaged, plan.keepBytes)
		} else {
			fmt.Fprintf(r.out, "  wrote %s empty: the partition's offsets go on starting there\n", plan.damaged)
		}
	}
	if err := r.disk.SyncDir(dir); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	for _, o := range plan.offsets {
		sub := offsetDirName(o.Kind)
		id := strconv.FormatUint(uint64(o.ID), 10)
		if err := r.disk.MkdirAll(path.Join(aside, "offsets", sub)); err != nil {
			return err
		}
		if err := r.disk.Rename(path.Join(dir, "offsets", sub, id), path.Join(aside, "offsets", sub, id)); err != nil {
			return fmt.Errorf("move the offset of %s %s aside: %w", sub, id, err)
		}
		if err := r.disk.SyncDir(path.Join(aside, "offsets", sub)); err != nil {
			return err
		}
		if plan.servedBelow > 0 {
			if err := storage.StoreConsumerOffset(r.disk, dir, o.Kind, o.ID, plan.servedBelow-1, true); err != nil {
				return err
			}
		} else if err := r.disk.SyncDir(path.Join(dir, "offsets", sub)); err != nil {
			return err
		}
		fmt.Fprintf(r.out, "  moved the offset of %s %s to %s\n", sub, id, path.Join(aside, "offsets", sub))
	}
	log, rec, err := storage.OpenLog(r.disk, dir, storage.LogOptions{})
	if err != nil {
		return fmt.Errorf("reopen %s: %w", dir, err)
	}
	stats, corruption := log.Stats(), log.Fenced()
	if err := log.Close(); err != nil {
		return err
	}
	if corruption != nil || stats.NextOffset != plan.servedBelow {
		return fmt.Errorf("%s still does not open cleanly: next offset %d, want %d, damage %+v", dir, stats.NextOffset, plan.servedBelow, corruption)
	}
	// The superblock last: a repair cut off before it leaves the old
	// frontier, which fences the partition again (missing history), and
	// the repair runs again. The reservation ends past every offset the
	// moved-aside files held, so none is given to another message.
	sb := plan.sb
	sb.Sequence++
	sb.FirstOffset, sb.DurableOffset, sb.DurableMessages = plan.firstOffset, plan.servedBelow, stats.Messages
	sb.ReservedOffset = plan.reserveEnd()
	if err := storage.StorePartitionSuperblock(r.disk, dir, sb); err != nil {
		return err
	}
	fmt.Fprintf(r.out, "  wrote the superblock: durable frontier %d, next message at offset %d\n", sb.DurableOffset, sb.ReservedOffset)
	for _, index := range rec.IndexesRebuilt {
		fmt.Fprintf(r.out, "  rebuilt %s from its log\n", path.Base(index))
	}
	fmt.Fprintf(r.out, "  verified: %d messages in %d segments, next offset %d\n", stats.Messages, stats.Segments, stats.NextOffset)
	return nil
}

// copyPrefix writes the first n bytes of src to dst and syncs dst.
func copyPrefix(fsys storage.FS, src, dst string, n int64) error {
	in, err := fsys.Open(src)
	if err != nil {
		return fmt.Errorf("open %s: %w", src, err)
	}
	defer in.Close()
	out, err := fsys.Create(dst)
	if err != nil {
		return fmt.Errorf("create %s: %w", dst, err)
	}
	buf := make([]byte, min(n, repairCopyBufferBytes))
	for at := int64(0); at < n; {
		chunk := buf[:min(int64(len(buf)), n-at)]
		if _, err := in.ReadAt(chunk, at); err != nil {
			return errors.Join(fmt.Errorf("read %s at byte %d: %w", src, at, err), out.Close())
		}
		if _, err := out.WriteAt(chunk, at); err != nil {
			return errors.Join(fmt.Errorf("write %s: %w", dst, err), out.Close())
		}
		at += int64(len(chunk))
	}
	if err := out.Sync(); err != nil {
		return errors.Join(fmt.Errorf("sync %s: %w", dst, err), out.Close())
	}
	return out.Close()
}

// finishInterrupted completes a repair cut off after the damaged segment
// was moved aside and before its prefix took its name: the prefix copy is
// renamed into place. A copy whose segment is still there is from a repair
// cut off before anything moved; the new repair writes it again.
func (r *repairer) finishInterrupted(dir string) error {
	entries, err := r.disk.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name, repairTempSuffix)
		if !ok || e.IsDir {
			continue
		}
		if exists, err := storage.Exists(r.disk, path.Join(dir, name)); err != nil || exists {
			continue
		}
		fmt.Fprintf(r.out, "%s: %s the interrupted repair of %s\n", dir, r.verb("finished", "would finish"), name)
		if !r.confirm {
			continue
		}
		if err := r.disk.Rename(path.Join(dir, e.Name), path.Join(dir, name)); err != nil {
			return fmt.Errorf("finish the repair of %s: %w", name, err)
		}
		if err := r.disk.SyncDir(dir); err != nil {
			return err
		}
	}
	return nil
}
