package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/specd-dev/specd/daemon/lifecycle"
	"github.com/specd-dev/specd/daemon/watch"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/intake"
	"github.com/specd-dev/specd/internal/liveness"
	"github.com/specd-dev/specd/internal/nofollow"
	"github.com/specd-dev/specd/internal/sandbox"
	"github.com/specd-dev/specd/internal/sources"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specs"
	"github.com/specd-dev/specd/systemd"
)

// ErrAlreadyRunning is returned by Run when another daemon holds the spec
// tree's .specd.lock.
var ErrAlreadyRunning = errors.New("another specd daemon is running on this spec tree")

// Run is the daemon: it takes the tree's lock, watches the tree, scans it
// fully at start-up, on an inotify overflow and every rescan_interval, takes
// requests from the inbox, and runs every ready plan (events only enqueue
// work; this one loop decides). It blocks until ctx
// ends, then shuts down warm (docs/operating.md#shutdown): intake stops, no
// new topic starts, and running specialists go on until they finish or
// until shutdown_timeout, or until StopNow (a second signal), when their
// groups get SIGTERM, then SIGKILL after specialist.grace. Topics finished
// meanwhile are judged; unfinished runs are checkpointed and resume at the
// next start. It returns nil then. Errors: ErrAlreadyRunning (wrapped with
// the lock path), and set-up failures naming the directory.
func (d *Daemon) Run(ctx context.Context) error {
	lk, err := d.lock(ctx)
	if err != nil || lk == nil {
		return err
	}
	defer lk.Close()
	defer sandbox.RemoveSpareCgroups()
	defer d.startNotify()() // flushed after the runs have stopped

	treeDir, log := d.opts.TreeDir, d.opts.Log
	tree, err := watch.New(treeDir, log)
	if err != nil {
		return fmt.Errorf("watch %s: %w", treeDir, err)
	}
	defer tree.Close()
	if kind, ok := watch.NetworkFS(treeDir); ok {
		log.Warn().Str("fs", kind).Msgf("%s is on a network filesystem: inotify does not see changes made elsewhere; they are found by the rescan every %s", treeDir, d.config().RescanInterval.Std())
	}

	hup := make(chan os.Signal, 1)
	if d.opts.Reload != nil {
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
	}
	d.spares = openSpares(d.fsRoot, treeDir, func() int { return d.config().MaxParallel + 1 })
	defer d.spares.close() // after serve: every run has returned
	go d.spares.fill(ctx)
	kill, killAll := context.WithCancel(context.Background())
	defer killAll()
	l := &loop{d: d, tree: tree, ctx: ctx, kill: kill, due: make(chan string, 256), timers: map[string]*time.Timer{}}
	up := l.ready()
	defer d.metrics.write() // specialists running 0, the last counts
	l.serve(up, hup, killAll)
	return nil
}

// lock creates the inbox and takes the tree's .specd.lock, which the
// caller closes. With Standby it waits for another daemon's lock; a nil
// file and nil error then mean that ctx ended first. Errors:
// ErrAlreadyRunning (wrapped with the lock path), and failures naming the
// directory.
func (d *Daemon) lock(ctx context.Context) (*os.File, error) {
	treeDir := d.opts.TreeDir
	if err := nofollow.MkdirAll(d.fsRoot, filepath.Join(treeDir, specs.InboxDir)); err != nil {
		return nil, err
	}
	lockPath := filepath.Join(treeDir, specs.DaemonLock)
	lk, ok, err := nofollow.Flock(ctx, d.fsRoot, lockPath, false)
	if err != nil {
		return nil, err
	}
	if !ok && d.opts.Standby {
		d.opts.Log.Info().Str("lock", lockPath).Msg("standby: another daemon runs this tree; taking over when it stops")
		d.notify.Notify("STATUS=standby: waiting for " + lockPath)
		if lk, ok, err = nofollow.Flock(ctx, d.fsRoot, lockPath, true); err != nil && ctx.Err() == nil {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, nil
		}
		d.opts.Log.Info().Msg("standby: the other daemon stopped; taking over")
	}
	if !ok {
		return nil, fmt.Errorf("%w (%s is locked; use --standby to wait and take over)", ErrAlreadyRunning, lockPath)
	}
	return lk, nil
}

// ready scans the tree fully, writes the daemon's status file and
// metrics, tells systemd READY=1, and logs the configuration in force. It
// returns the status written.
func (l *loop) ready() liveness.Status {
	d, log, treeDir := l.d, l.d.opts.Log, l.d.opts.TreeDir
	// Before any topic starts: what a killed specd's cgroups still hold
	// ran without a lock of its own (docs/contract.md#locks).
	sandbox.RemoveStaleCgroups()
	l.fullScan()
	cfg := d.config()
	up := liveness.Status{
		PID:         os.Getpid(),
		StartedAt:   time.Now().UTC(),
		State:       liveness.StateReady,
		MaxParallel: cfg.MaxParallel,
		Preset:      cfg.Specialist.Preset,
		Sandbox:     sandboxState(cfg.Sandbox),
	}
	d.inForce(&up, cfg)
	if err := liveness.Write(treeDir, up); err != nil {
		log.Warn().Err(err).Msg("cannot write the daemon status file; specd status cannot show uptime")
	}
	d.metrics.write()
	d.notify.Notify("READY=1\n" + d.stats.status())
	log.Info().Str("specs_dir", treeDir).Int("max_parallel", cfg.MaxParallel).
		Str("preset", cfg.Specialist.Preset).Str("sandbox", up.Sandbox).Msg("specd ready")
	d.warnAgent(cfg.Specialist)
	d.warnSandbox(cfg.Sandbox)
	return up
}

// serve is the daemon's one loop: it takes fsnotify events, watcher
// errors, debounced directories, the rescan tick, SIGHUP (hup) and pauses,
// and feeds the watchdog with STATUS= from the heartbeat. It returns when
// the loop's context ends, after the warm shutdown (drain; killAll stops
// the running specialists).
func (l *loop) serve(up liveness.Status, hup <-chan os.Signal, killAll func()) {
	d, log := l.d, l.d.opts.Log
	tick := time.NewTicker(d.config().RescanInterval.Std())
	defer tick.Stop()
	// The heartbeat comes from this loop, so a wedged loop stops pinging
	// the watchdog and systemd restarts the service; STATUS= rides along.
	beat := systemd.WatchdogInterval()
	pingWatchdog := beat > 0
	if !pingWatchdog {
		beat = time.Second
	}
	heart := time.NewTicker(beat)
	defer heart.Stop()
	lastStatus := ""
	for {
		select {
		case <-l.ctx.Done():
			for _, t := range l.timers {
				t.Stop()
			}
			l.drain(up, heart.C, pingWatchdog, killAll)
			return
		case <-heart.C:
			state := ""
			if pingWatchdog {
				state = "WATCHDOG=1"
			}
			if st := d.stats.status(); st != lastStatus {
				state, lastStatus = strings.TrimPrefix(state+"\n"+st, "\n"), st
			}
			if state != "" {
				d.notify.Notify(state)
			}
		case <-hup:
			up = d.reload(up)
		case resume := <-d.pause:
			<-resume
		case ev, ok := <-l.tree.Events():
			if ok {
				l.event(ev)
			}
		case err, ok := <-l.tree.Errors():
			if !ok {
				continue
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				d.stats.overflow.Add(1)
				log.Warn().Msg("inotify queue overflowed: rescanning the whole tree")
				l.fullScan()
			} else {
				log.Error().Err(err).Msg("watcher")
			}
		case dir := <-l.due:
			delete(l.timers, dir)
			l.reconcile(dir)
		case <-tick.C:
			l.fullScan()
		}
	}
}

// drain is the warm shutdown (docs/operating.md#shutdown): intake is
// closed and no topic starts (the runs' start context has ended); running
// specialists go on until every run has returned, keeping the watchdog
// fed and STATUS= current. shutdown_timeout, or StopNow, stops them (killAll).
func (l *loop) drain(up liveness.Status, heart <-chan time.Time, pingWatchdog bool, killAll func()) {
	d, log := l.d, l.d.opts.Log
	timeout := d.config().ShutdownTimeout.Std()
	up.State, up.DrainUntil = liveness.StateDraining, time.Now().UTC().Add(timeout)
	if err := liveness.Write(d.opts.TreeDir, up); err != nil {
		log.Warn().Err(err).Msg("cannot write the daemon status file")
	}
	done := make(chan struct{})
	go func() {
		l.runs.Wait()
		close(done)
	}()
	status := func() string {
		n := d.stats.running.Load()
		if n == 0 {
			return "draining: checkpointing runs"
		}
		return fmt.Sprintf("draining: %d specialists running (Ctrl-C again to stop them now)", n)
	}
	msg := status()
	d.notify.Notify("STOPPING=1\nSTATUS=" + msg)
	log.Info().Int64("running", d.stats.running.Load()).Str("shutdown_timeout", timeout.String()).
		Msgf("%s; no new topic starts; running specialists may finish within shutdown_timeout %s", msg, timeout)
	limit := time.NewTimer(timeout)
	defer limit.Stop()
	hard := d.hard
	for {
		select {
		case <-done:
			log.Info().Msg("stopped")
			return
		case <-hard:
			log.Warn().Int64("running", d.stats.running.Load()).Msg("second signal: stopping running specialists now (SIGTERM, then SIGKILL after specialist.grace)")
			killAll()
			hard = nil // a closed channel would spin this loop
		case <-limit.C:
			log.Warn().Int64("running", d.stats.running.Load()).Msgf("shutdown_timeout %s reached: stopping running specialists (SIGTERM, then SIGKILL after specialist.grace); their topics run again at the next start", timeout)
			killAll()
		case <-heart:
			state := "STATUS=" + status()
			if pingWatchdog {
				state = "WATCHDOG=1\n" + state
			}
			d.notify.Notify(state)
		}
	}
}

// reload re-reads the config on SIGHUP (docs/operating.md#daemon): RELOADING=1,
// then READY=1; a bad config keeps the old one. Runs in progress go on;
// max_parallel keeps its start-up value until the next start. It returns
// up with the config in force or the failed reload, also written to the
// status file for `specd status`.
func (d *Daemon) reload(up liveness.Status) liveness.Status {
	d.notify.Notify("RELOADING=1\nMONOTONIC_USEC=" + systemd.MonotonicUsec())
	defer d.notify.Notify("READY=1")
	cfg, err := d.opts.Reload()
	var reg sources.Registry
	if err == nil {
		reg, err = loadRegistry(d.opts.Root, cfg)
	}
	if err != nil {
		d.opts.Log.Error().Err(err).Msg("reload failed; keeping the running config")
		up.ReloadError, up.ReloadFailedAt = err.Error(), time.Now().UTC()
	} else {
		d.mu.Lock()
		d.cfg, d.reg = cfg, reg
		d.mu.Unlock()
		d.opts.Log.Info().Str("preset", cfg.Specialist.Preset).Msg("config reloaded")
		d.inForce(&up, cfg)
	}
	if err := liveness.Write(d.opts.TreeDir, up); err != nil {
		d.opts.Log.Warn().Err(err).Msg("cannot write the daemon status file; specd status cannot show the reload")
	}
	return up
}

// inForce records cfg in up as the config in force, loaded now, its file
// relative to the project root.
func (d *Daemon) inForce(up *liveness.Status, cfg config.Config) {
	file, sum := cfg.Source()
	if rel, err := filepath.Rel(d.opts.Root, file); err == nil && filepath.IsAbs(file) {
		file = filepath.ToSlash(rel)
	}
	up.Config, up.ConfigSHA256, up.ConfigLoadedAt = file, sum, time.Now().UTC()
	up.ReloadError, up.ReloadFailedAt = "", time.Time{}
}

// loop is the state of Run's event loop; only its goroutine touches it.
type loop struct {
	d      *Daemon
	tree   *watch.Tree
	ctx    context.Context        // ends at shutdown: no intake, no new topic
	kill   context.Context        // ends at a cold shutdown: running specialists are stopped
	due    chan string            // directories to look at again (debounce expired, run returned)
	timers map[string]*time.Timer // pending debounce per directory
	runs   sync.WaitGroup
}

// event turns an fsnotify event into a look at its directory: now, or
// once the directory is quiet (schedule).
func (l *loop) event(ev fsnotify.Event) {
	switch dir, a := l.tree.Event(ev); a {
	case watch.Cancel:
		l.d.takeCancel(dir)
	case watch.Look:
		// A new directory gets its watches now, and a complete plan starts
		// at once; reconcile debounces a plan that may be half-written.
		l.reconcile(dir)
	case watch.Settle:
		l.schedule(dir)
	}
}

// schedule looks at dir once no event has arrived for it for the debounce
// time (a plan still being written waits).
func (l *loop) schedule(dir string) {
	if t, ok := l.timers[dir]; ok {
		t.Stop()
	}
	l.timers[dir] = time.AfterFunc(l.d.config().Debounce.Std(), func() {
		select {
		case l.due <- dir:
		case <-l.ctx.Done():
		}
	})
}

// scanGCPercent is the GC percent of a full scan: its garbage is
// collected often, so that the heap it leaves, which an idle daemon keeps,
// is not the live state spread thin over the pages of a heap grown for
// the daemon's usual GC percent (service.Run): over 10,000 finished runs
// 1.7 MB less idle RSS than at 400 (docs/operating.md#memory).
const scanGCPercent = 25

// fullScan watches and looks at every directory of the tree. The names
// come from one ReadDir, which says which are directories (not symlinks).
// Afterwards the scan's garbage goes back to the OS at once (one GC of a
// small heap) rather than over minutes, so that an idle daemon over a
// large tree stays small between its rescans.
func (l *loop) fullScan() {
	defer debug.FreeOSMemory()
	defer debug.SetGCPercent(debug.SetGCPercent(scanGCPercent))
	treeDir := l.d.opts.TreeDir
	if _, err := l.tree.AddDir(treeDir); err != nil {
		l.d.opts.Log.Error().Err(err).Str("dir", treeDir).Msg("cannot watch")
	}
	l.reconcile(filepath.Join(treeDir, specs.InboxDir))
	names, err := specs.RunDirs(treeDir)
	if err != nil {
		l.d.opts.Log.Error().Err(err).Str("dir", treeDir).Msg("cannot scan")
		return
	}
	for _, n := range names {
		l.runDir(filepath.Join(treeDir, n), true)
	}
}

// reconcile decides what one directory needs: intake for the inbox, a run
// for a run directory with a ready, unfinished plan.
func (l *loop) reconcile(dir string) {
	if l.ctx.Err() != nil {
		return
	}
	if filepath.Base(dir) == specs.InboxDir && filepath.Dir(dir) == l.d.opts.TreeDir {
		if _, err := l.tree.AddDir(dir); err != nil {
			l.d.opts.Log.Error().Err(err).Str("dir", dir).Msg("cannot watch")
		}
		l.intake(dir)
		return
	}
	l.runDir(dir, false)
}

// runDir is reconcile for a run directory; isDir says the caller has
// seen that dir is a directory (not a symlink: specd does not follow links
// out of its tree). reports/ is watched before the look, so that a change
// after the look sends an event.
func (l *loop) runDir(dir string, isDir bool) {
	if l.ctx.Err() != nil {
		return
	}
	tp := l.tree.Topic(dir, isDir)
	if tp == nil {
		return
	}
	if l.d.isRunning(dir) {
		tp.WatchReports()
		tp.WatchDir(true)
		l.d.takeCancel(dir) // a request whose event was lost
		return
	}
	if tp.Finished() {
		return
	}
	tp.WatchReports()
	plan, pfi, ok := specs.StatPlan(dir)
	if !ok {
		// New watches: a plan that came before them sent no event. The
		// directory's watch comes first, so that a reports/ made after the
		// second try to watch it still sends an event.
		dirAdded := tp.WatchDir(true)
		if tp.WatchReports() || dirAdded {
			if _, _, ok := specs.StatPlan(dir); ok {
				l.runDir(dir, true)
			}
		}
		return
	}
	if h, runJSON, err := specs.PeekRun(dir); err == nil && h.State == specs.StateFinished &&
		(pfi.ModTime().UnixNano() <= runJSON.Mtime || slices.Contains([]string{h.PlanSHA256, h.PlanWarned}, planHash(plan))) {
		// Finished, and the plan is the one it ran (or was warned
		// about): nothing to do. A changed plan goes to RunPlan, which
		// runs added topics or warns (docs/contract.md#readiness). Only
		// reports/ is watched then (a rerun, a changed plan), and the
		// directory too when the plan is there.
		planUp := filepath.Dir(plan) == dir
		tp.Finish(runJSON, pfi.ModTime().UnixNano(), planUp)
		if tp.WatchDir(planUp) && !tp.Finished() {
			l.runDir(dir, true) // changed before the new watch could tell
		}
		return
	}
	tp.WatchDir(true)
	tp.WatchReports()
	l.start(dir) // a plan perhaps still being written comes back (errSettling)
}

// planHash is the plan identity (lifecycle.Sum) of the plan file at
// path, "" when unreadable.
func planHash(path string) string {
	data, err := specs.ReadRegular(path, plans.MaxBytes)
	if err != nil {
		return ""
	}
	return lifecycle.Sum(data)
}

// lockedRetry is how soon a run whose lock another process holds is
// looked at again.
const lockedRetry = 500 * time.Millisecond

// start runs the plan of dir in its own goroutine.
func (l *loop) start(dir string) {
	d := l.d
	d.mu.Lock()
	d.running[dir] = true
	d.mu.Unlock()
	l.runs.Add(1)
	go func() {
		defer l.runs.Done()
		debounce := d.config().Debounce.Std()
		_, err := d.runPlan(l.ctx, l.kill, dir, debounce)
		// Not running any more before anything below asks the loop to
		// look again: a look while it still were would be dropped.
		d.mu.Lock()
		delete(d.running, dir)
		d.mu.Unlock()
		lookAgain := func(after time.Duration) {
			time.AfterFunc(after, func() {
				select {
				case l.due <- dir:
				case <-l.ctx.Done():
				}
			})
		}
		switch {
		case errors.Is(err, errSettling):
			// Look again once it had time to settle; an event meanwhile
			// looks earlier.
			lookAgain(debounce)
		case errors.Is(err, errUntrusted):
			// Look again once the user may have run specd trust (at most
			// once a second); an event meanwhile looks earlier.
			lookAgain(max(debounce, time.Second))
		case err == nil:
			// Look again: the plan may have changed while the run finished.
			select {
			case l.due <- dir:
			default: // the queue is full: the rescan looks
			}
		case errors.Is(err, ErrNotReady), errors.Is(err, ErrNoPlan), errors.Is(err, ErrInterrupted):
		case errors.Is(err, specs.ErrRunLocked):
			// Another process (specd submit --wait, or specd rerun while it
			// reopens the run) holds the run lock. Releasing a lock makes no
			// file event, so look again soon rather than at the next rescan.
			d.opts.Log.Debug().Str("run", filepath.Base(dir)).Msg("plan is being run by another process; looking again in 500ms")
			lookAgain(lockedRetry)
		default:
			d.opts.Log.Error().Err(err).Str("run", filepath.Base(dir)).Msg("run failed")
			d.logError(jsonl.Entry{
				ErrorType: jsonl.TypeFile, Source: "daemon",
				Message:      fmt.Sprintf("run of %s failed: %v", filepath.Base(dir), err),
				Details:      map[string]any{"spec_dir": filepath.Base(dir)},
				RecoveryHint: "Check permissions and free space in the spec tree; the run resumes at the next rescan.",
			})
		}
	}()
}

func (d *Daemon) isRunning(dir string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.running[dir]
}

// intake takes every request file in the inbox that is ready
// (intake.Pending); a younger one is looked at again after the debounce.
func (l *loop) intake(inbox string) {
	ready, wait := intake.Pending(inbox, l.d.config().Debounce.Std(), time.Now())
	if wait {
		l.schedule(inbox)
	}
	for _, path := range ready {
		name := filepath.Base(path)
		dir, err := intake.TakeInbox(l.d.opts.TreeDir, path, l.d.now())
		if err != nil {
			l.d.opts.Log.Error().Err(err).Str("file", path).Msg("request rejected")
			l.d.logError(jsonl.Entry{
				ErrorType: jsonl.TypeParse, Source: "intake",
				Message:      err.Error(),
				Details:      map[string]any{"file": "inbox/" + name},
				RecoveryHint: "Fix the request and drop it in the inbox again; the rejected file was renamed to " + name + intake.RejectedSuffix + ", and " + name + intake.WhySuffix + " beside it says why.",
			})
			continue
		}
		l.d.opts.Log.Info().Str("file", name).Str("run", filepath.Base(dir)).Msg("request taken")
		l.reconcile(dir)
	}
}
