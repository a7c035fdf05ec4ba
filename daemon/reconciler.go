package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	sd "github.com/coreos/go-systemd/v22/daemon"
	"github.com/fsnotify/fsnotify"
	"github.com/gofrs/flock"

	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/sources"
	"github.com/specd-dev/specd/specs"
)

// ErrAlreadyRunning is returned by Run when another daemon holds the spec
// tree's .specd.lock.
var ErrAlreadyRunning = errors.New("another specd daemon is running on this spec tree")

// Run is the daemon: it takes the tree's lock, watches the tree, scans it
// fully at start-up, on an inotify overflow and every rescan_interval, takes
// requests from the inbox, and runs every ready plan (PRODUCT.md section 4,
// "Lost events": events only enqueue work; this one loop decides). It
// blocks until ctx ends, then stops intake, lets running specialists be
// stopped by their groups' SIGTERM/SIGKILL, checkpoints and returns nil.
// Errors: ErrAlreadyRunning (wrapped with the lock path), and set-up
// failures naming the directory.
func (d *Daemon) Run(ctx context.Context) error {
	specsDir := d.opts.SpecsDir
	if err := os.MkdirAll(filepath.Join(specsDir, specs.InboxDir), 0o755); err != nil {
		return err
	}
	lk := flock.New(filepath.Join(specsDir, specs.DaemonLock))
	ok, err := lk.TryLock()
	if err != nil {
		return fmt.Errorf("lock %s: %w", lk.Path(), err)
	}
	if !ok && d.opts.Standby {
		d.opts.Log.Info().Str("lock", lk.Path()).Msg("standby: another daemon runs this tree; taking over when it stops")
		d.notify.Notify("STATUS=standby: waiting for " + lk.Path())
		if ok, err = lk.TryLockContext(ctx, 200*time.Millisecond); err != nil && ctx.Err() == nil {
			return fmt.Errorf("lock %s: %w", lk.Path(), err)
		}
		if ctx.Err() != nil {
			return nil
		}
		d.opts.Log.Info().Msg("standby: the other daemon stopped; taking over")
	}
	if !ok {
		return fmt.Errorf("%w (%s is locked; use --standby to wait and take over)", ErrAlreadyRunning, lk.Path())
	}
	defer lk.Unlock()

	w, err := newWatcher(specsDir)
	if err != nil {
		return fmt.Errorf("watch %s: %w", specsDir, err)
	}
	defer w.fs.Close()
	log := d.opts.Log
	if kind, ok := networkFS(specsDir); ok {
		log.Warn().Str("fs", kind).Msgf("%s is on a network filesystem: inotify does not see changes made elsewhere; they are found by the rescan every %s", specsDir, d.config().RescanInterval.Std())
	}

	hup := make(chan os.Signal, 1)
	if d.opts.Reload != nil {
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
	}
	l := &loop{d: d, w: w, ctx: ctx, due: make(chan string, 256), timers: map[string]*time.Timer{}, done: map[string]time.Time{}}
	l.fullScan()
	cfg := d.config()
	d.notify.Notify("READY=1\n" + d.stats.status())
	log.Info().Str("specs_dir", specsDir).Int("max_parallel", cfg.MaxParallel).
		Str("preset", cfg.Specialist.Preset).Msg("specd ready")

	tick := time.NewTicker(cfg.RescanInterval.Std())
	defer tick.Stop()
	// The heartbeat comes from this loop, so a wedged loop stops pinging
	// the watchdog and systemd restarts the service; STATUS= rides along.
	beat := watchdogInterval()
	pingWatchdog := beat > 0
	if !pingWatchdog {
		beat = time.Second
	}
	heart := time.NewTicker(beat)
	defer heart.Stop()
	lastStatus := ""
	for {
		select {
		case <-ctx.Done():
			d.notify.Notify("STOPPING=1")
			log.Info().Msg("stopping: intake closed, waiting for running specialists")
			for _, t := range l.timers {
				t.Stop()
			}
			l.runs.Wait()
			log.Info().Msg("stopped")
			return nil
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
			d.reload()
		case resume := <-d.pause:
			<-resume
		case ev, ok := <-w.fs.Events:
			if ok {
				l.event(ev)
			}
		case err, ok := <-w.fs.Errors:
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

// reload re-reads the config on SIGHUP (STYLE.md section 8): RELOADING=1,
// then READY=1; a bad config keeps the old one. Runs in progress go on;
// max_parallel keeps its start-up value until the next start.
func (d *Daemon) reload() {
	d.notify.Notify("RELOADING=1\nMONOTONIC_USEC=" + sd.SdNotifyMonotonicUsec())
	defer d.notify.Notify("READY=1")
	cfg, err := d.opts.Reload()
	var reg sources.Registry
	if err == nil {
		reg, err = loadRegistry(d.opts.Root, cfg)
	}
	if err != nil {
		d.opts.Log.Error().Err(err).Msg("reload failed; keeping the running config")
		return
	}
	d.mu.Lock()
	d.cfg, d.reg = cfg, reg
	d.mu.Unlock()
	d.opts.Log.Info().Str("preset", cfg.Specialist.Preset).Msg("config reloaded")
}

// loop is the state of Run's event loop; only its goroutine touches it.
type loop struct {
	d      *Daemon
	w      *watcher
	ctx    context.Context
	due    chan string            // directories whose debounce expired
	timers map[string]*time.Timer // pending debounce per directory
	done   map[string]time.Time   // finished runs: the mtime of reports/ when last read
	runs   sync.WaitGroup
}

// event turns an fsnotify event into a debounced look at its directory.
func (l *loop) event(ev fsnotify.Event) {
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		l.w.forget(ev.Name)
	}
	dir := l.w.target(ev.Name)
	if dir == "" {
		return
	}
	if ev.Has(fsnotify.Create) || filepath.Base(ev.Name) == plans.FileName && ev.Has(fsnotify.Write) {
		// A new directory gets its watches now, and a complete plan starts
		// at once; reconcile debounces a plan that may be half-written.
		l.reconcile(dir)
		return
	}
	l.schedule(dir)
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

// fullScan watches and looks at every directory of the tree.
func (l *loop) fullScan() {
	specsDir := l.d.opts.SpecsDir
	if _, err := l.w.add(specsDir); err != nil {
		l.d.opts.Log.Error().Err(err).Str("dir", specsDir).Msg("cannot watch")
	}
	l.reconcile(filepath.Join(specsDir, specs.InboxDir))
	names, err := specs.TopicDirs(specsDir)
	if err != nil {
		l.d.opts.Log.Error().Err(err).Str("dir", specsDir).Msg("cannot scan")
		return
	}
	for _, n := range names {
		l.reconcile(filepath.Join(specsDir, n))
	}
}

// reconcile decides what one directory needs: intake for the inbox, a run
// for a topic directory with a ready, unfinished plan.
func (l *loop) reconcile(dir string) {
	if l.ctx.Err() != nil {
		return
	}
	log := l.d.opts.Log
	if filepath.Base(dir) == specs.InboxDir && filepath.Dir(dir) == l.d.opts.SpecsDir {
		if _, err := l.w.add(dir); err != nil {
			log.Error().Err(err).Str("dir", dir).Msg("cannot watch")
		}
		l.intake(dir)
		return
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return // gone, a file, or a symlink: specd does not follow links out of its tree
	}
	if _, ok := specs.TopicNumber(filepath.Base(dir)); !ok {
		return
	}
	for _, sub := range []string{dir, filepath.Join(dir, specs.ReportsDir)} {
		if _, err := l.w.add(sub); err != nil && !errors.Is(err, fs.ErrNotExist) {
			log.Error().Err(err).Str("dir", sub).Msg("cannot watch")
		}
	}
	if l.d.isRunning(dir) {
		return
	}
	reports, err := os.Lstat(filepath.Join(dir, specs.ReportsDir))
	if err == nil && l.done[dir] == reports.ModTime() {
		// A finished run whose reports/ has not changed since (a rerun
		// rewrites .run.json by rename, which changes it): one stat, no reads.
		return
	}
	plan, ok := specs.FindPlan(dir)
	if !ok {
		return
	}
	pfi, err := os.Stat(plan)
	if err != nil {
		return
	}
	if age := time.Since(pfi.ModTime()); age < l.d.config().Debounce.Std() && !complete(plan) {
		l.schedule(dir) // perhaps still being written: wait for quiet
		return
	}
	if rfi, err := os.Stat(filepath.Join(dir, specs.ReportsDir, specs.RunStateFile)); err == nil {
		if rs, err := LoadRunState(dir); err == nil && rs.State == specs.StateFinished {
			switch {
			case rs.PlanError == "": // finished for good (PRODUCT.md section 4)
				if reports != nil {
					l.done[dir] = reports.ModTime()
				}
				return
			case !pfi.ModTime().After(rfi.ModTime()):
				return // rejected, and the plan has not changed since
			}
		}
	}
	delete(l.done, dir)
	l.start(dir)
}

// complete reports whether the plan parses and its last Status: line says
// PLAN_COMPLETE: writers put that line last, so the plan is whole and can
// start without waiting for the debounce (PRODUCT.md section 3, "Readiness").
func complete(path string) bool {
	p, err := plans.ParseFile(path)
	return err == nil && p.Status == plans.StatusComplete
}

// start runs the plan of dir in its own goroutine.
func (l *loop) start(dir string) {
	d := l.d
	d.mu.Lock()
	d.running[dir] = true
	d.mu.Unlock()
	l.runs.Add(1)
	go func() {
		defer l.runs.Done()
		defer func() {
			d.mu.Lock()
			delete(d.running, dir)
			d.mu.Unlock()
		}()
		_, err := d.RunPlan(l.ctx, dir)
		switch {
		case err == nil, errors.Is(err, ErrNotReady), errors.Is(err, ErrNoPlan), errors.Is(err, ErrInterrupted):
		case errors.Is(err, ErrRunLocked):
			d.opts.Log.Info().Str("run", filepath.Base(dir)).Msg("plan is being run by another process")
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

// intake takes every request file in the inbox (*.md, *.txt; dot files and
// temp files are skipped: a writer renames its file into place).
func (l *loop) intake(inbox string) {
	ents, err := os.ReadDir(inbox)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !e.Type().IsRegular() ||
			!(strings.HasSuffix(name, ".md") || strings.HasSuffix(name, ".txt")) {
			continue
		}
		path := filepath.Join(inbox, name)
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) < l.d.config().Debounce.Std() {
			l.schedule(inbox)
			continue
		}
		dir, err := takeInbox(l.d.opts.SpecsDir, path, l.d.now())
		if err != nil {
			l.d.opts.Log.Error().Err(err).Str("file", path).Msg("request rejected")
			l.d.logError(jsonl.Entry{
				ErrorType: jsonl.TypeParse, Source: "intake",
				Message:      err.Error(),
				Details:      map[string]any{"file": "inbox/" + name},
				RecoveryHint: "Fix the request and drop it in the inbox again; the rejected file was renamed to " + name + ".rejected.",
			})
			continue
		}
		l.d.opts.Log.Info().Str("file", name).Str("run", filepath.Base(dir)).Msg("request taken")
		l.reconcile(dir)
	}
}
