package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/preset"
	"github.com/specd-dev/specd/internal/specialist"
	"github.com/specd-dev/specd/internal/specialist/local/index"
)

// The -scale mode (docs/local-specialist.md#speed): the local specialist
// on a large tree, as the daemon runs it — `specd specialist local` as a
// child process per topic (preset.Argv of the local preset, the input in
// SPECD_* variables and as JSON on stdin, the project root as its working
// directory), at most -parallel at once, each with GOMAXPROCS=-cpus —
// for two requests of four topics: the first from no index (it includes
// the build), the second with other topics; then a third after one file
// was edited. Each child's peak RSS is its rusage's ru_maxrss from wait4,
// which also covers the processes it waited for (git, ctags).

// scaleTopics are the two requests' topics, about a Go source tree such
// as $(go env GOROOT)/src; any tree works, the answers then matter less.
var scaleTopics = [2][4]string{{
	"How does the HTTP server handle keep-alive connections",
	"How does the garbage collector decide when to start a cycle",
	"How are goroutines scheduled onto threads",
	"How does TLS session resumption work with tickets",
}, {
	"How does context cancellation propagate to child contexts",
	"How does sync.Pool reduce allocations",
	"How does the linker resolve relocations for ELF",
	"How are map iterations randomized",
}}

// request is how one request of topics went.
type request struct {
	wall   time.Duration
	cpu    time.Duration // user + system time of the children
	maxRSS int64         // KiB, the largest of the children
	logs   []string      // the children's index lines
	failed int
	report string // the first topic's report
}

// scale runs the -scale mode on dir. It removes dir's index first, and
// edits one file of dir for the third request (restored after).
func scale(dir string, parallel, cpus int) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "codeqa-scale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "specd")
	build := exec.Command("go", "build", "-o", bin, "./cmd/specd")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/specd (run codeqa from the repository root): %w", err)
	}
	indexDir := filepath.Join(dir, filepath.FromSlash(index.Dir))
	if err := os.RemoveAll(indexDir); err != nil {
		return err
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("scale: %s, %d topics per request, %d at a time, GOMAXPROCS=%d, %d CPUs, load average %s\n",
		dir, len(scaleTopics[0]), parallel, cpus, runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:3], " "))

	start := time.Now()
	grep := exec.Command("grep", "-rlI", "keep-alive", dir)
	grep.Run()
	fmt.Printf("floor: grep -rlI keep-alive over the tree: %.2fs\n", time.Since(start).Seconds())

	first, err := runRequest(bin, dir, tmp, "first", scaleTopics[0][:], parallel, cpus)
	if err != nil {
		return err
	}
	if m := regexp.MustCompile(`Searched (\d+) text files \((\d+) lines\)`).FindStringSubmatch(first.report); m != nil {
		fmt.Printf("tree: %s text files, %s lines\n", m[1], m[2])
	}
	size, shards := dirSize(indexDir)
	fmt.Printf("index: %s, %.1f MB on disk in %d shards\n", index.Dir, float64(size)/1e6, shards)
	printRequest("first request (builds the index)", first)

	second, err := runRequest(bin, dir, tmp, "second", scaleTopics[1][:], parallel, cpus)
	if err != nil {
		return err
	}
	printRequest("second request (other topics)", second)

	// One file edited: the next request reads it again, and only it.
	edited, restore, err := editOne(dir)
	if err != nil {
		return err
	}
	third, err := runRequest(bin, dir, tmp, "third", scaleTopics[0][:], parallel, cpus)
	restore()
	if err != nil {
		return err
	}
	printRequest("after editing "+edited, third)
	if first.failed+second.failed+third.failed > 0 {
		return errors.New("some specialists failed")
	}
	return nil
}

func printRequest(name string, r request) {
	fmt.Printf("%-40s wall %6.2fs  cpu %6.2fs  peak RSS %4d MB  (%d failed)\n", name+":", r.wall.Seconds(), r.cpu.Seconds(), r.maxRSS/1024, r.failed)
	for _, l := range r.logs {
		fmt.Printf("    %s\n", l)
	}
}

// runRequest runs the topics as the daemon would, parallel at a time.
func runRequest(bin, dir, tmp, name string, topics []string, parallel, cpus int) (request, error) {
	var r request
	var mu sync.Mutex
	work := make(chan int)
	var wg sync.WaitGroup
	reports := make([]string, len(topics))
	start := time.Now()
	for range parallel {
		wg.Go(func() {
			for i := range work {
				rss, cpu, log, report, err := runSpecialist(bin, dir, tmp, name, i, topics[i], cpus)
				mu.Lock()
				r.maxRSS = max(r.maxRSS, rss)
				r.cpu += cpu
				if err != nil {
					r.failed++
					fmt.Fprintf(os.Stderr, "codeqa: %s topic %d: %v\n%s\n", name, i+1, err, log)
				}
				for l := range strings.SplitSeq(log, "\n") {
					if strings.HasPrefix(l, "local index: ") {
						r.logs = append(r.logs, strings.TrimPrefix(l, "local index: "+filepath.Join(dir, filepath.FromSlash(index.Dir))+": "))
					}
				}
				reports[i] = report
				mu.Unlock()
			}
		})
	}
	for i := range topics {
		work <- i
	}
	close(work)
	wg.Wait()
	r.wall = time.Since(start)
	r.report = reports[0]
	return r, nil
}

// runSpecialist runs one topic's specialist process and returns its peak
// RSS in KiB, its CPU time, its stderr and its report.
func runSpecialist(bin, dir, tmp, name string, i int, topic string, cpus int) (int64, time.Duration, string, string, error) {
	reports := filepath.Join(tmp, name)
	if err := os.MkdirAll(reports, 0o755); err != nil {
		return 0, 0, "", "", err
	}
	in := specialist.Input{ReportPath: filepath.Join(reports, fmt.Sprintf("%03d.md", i+1)), Topic: topic,
		TopicIndex: i, TopicCount: 4, SpecDir: reports, ResearchComplexity: 2, WorkflowID: "scale", ProjectRoot: dir}
	sp := config.Default().Specialist
	argv, err := preset.Argv(sp, bin, in)
	if err != nil {
		return 0, 0, "", "", err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(append(append(os.Environ(), preset.Env(sp)...), in.Env()...), fmt.Sprintf("GOMAXPROCS=%d", cpus))
	cmd.Stdin = bytes.NewReader(in.JSON())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Run()
	var rss int64
	var cpu time.Duration
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = ru.Maxrss
		}
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	report, _ := os.ReadFile(in.ReportPath)
	return rss, cpu, stderr.String(), string(report), err
}

// dirSize is the bytes of the files in dir and how many are shards.
func dirSize(dir string) (int64, int) {
	var size int64
	n := 0
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			size += fi.Size()
		}
		if strings.HasPrefix(e.Name(), "shard-") {
			n++
		}
	}
	return size, n
}

// editOne appends a comment line to the first .go file under dir and
// returns its path and a function that restores it (content and times).
func editOne(dir string) (string, func(), error) {
	var target string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || target != "" {
			return filepath.SkipDir
		}
		if d.IsDir() && p != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			target = p
			return filepath.SkipAll
		}
		return nil
	})
	if target == "" {
		return "", nil, fmt.Errorf("no .go file under %s to edit", dir)
	}
	fi, err := os.Stat(target)
	if err != nil {
		return "", nil, err
	}
	old, err := os.ReadFile(target)
	if err != nil {
		return "", nil, err
	}
	if err := os.WriteFile(target, append(bytes.Clone(old), "\n// edited by codeqa -scale\n"...), fi.Mode()); err != nil {
		return "", nil, err
	}
	rel, _ := filepath.Rel(dir, target)
	return filepath.ToSlash(rel), func() {
		os.WriteFile(target, old, fi.Mode())
		os.Chtimes(target, fi.ModTime(), fi.ModTime())
	}, nil
}
