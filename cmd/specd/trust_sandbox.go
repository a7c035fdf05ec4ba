package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/specd-dev/specd/internal/config"
)

// widens is the mark of a sandbox setting that gives the specialists more
// than the default sandbox does, in the trust preview.
const widens = "  <- WIDENS the sandbox"

// describeSandbox prints the sandbox settings of the trust preview
// (docs/operating.md#security) and marks each that widens it: sandbox:
// off, a writable or readable path outside the project (after links),
// env_pass. The bounds follow, with their defaults named.
func describeSandbox(out io.Writer, root string, sb config.Sandbox) {
	if sb.Off {
		fmt.Fprintf(out, "sandbox: off: specialists run unconfined, with every right of specd's user%s\n", widens)
	} else {
		fmt.Fprintln(out, "sandbox: on")
	}
	for _, k := range []struct {
		key   string
		paths []string
	}{{"writable", sb.Writable}, {"readable", sb.Readable}} {
		for _, p := range k.paths {
			where, mark := "inside the project", ""
			if resolved, ok := insideProject(root, p); !ok {
				where, mark = "outside the project: "+resolved, widens
			}
			fmt.Fprintf(out, "  %s: %s (%s)%s\n", k.key, p, where, mark)
		}
	}
	if len(sb.ConnectPorts) > 0 {
		fmt.Fprintf(out, "  connect_ports: %v\n", sb.ConnectPorts)
	}
	for _, name := range sb.EnvPass {
		fmt.Fprintf(out, "  env_pass: %s (passed from specd's environment)%s\n", name, widens)
	}
	mem, pids, report := sb.Limits()
	fmt.Fprintf(out, "  memory_max: %s  pids_max: %s  report_max: %s\n", bound(mem, sb.MemoryMax == 0, true), bound(pids, sb.PidsMax == 0, false), bound(report, sb.ReportMax == 0, true))
}

// insideProject resolves p as the sandbox does (relative to root), then
// its links, and says whether it stays inside root; it returns the
// resolved path. A path that does not exist yet is judged as written.
func insideProject(root, p string) (string, bool) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	p = filepath.Clean(p)
	realRoot := root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		realRoot = r
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	rel, err := filepath.Rel(realRoot, p)
	if err != nil || !filepath.IsLocal(rel) {
		if rel2, err := filepath.Rel(root, p); err == nil && filepath.IsLocal(rel2) {
			return p, true
		}
		return p, false
	}
	return p, true
}

// bound renders one bound: bytes in MiB or GiB, "none" for -1, with
// "(default)" when the key is not set.
func bound(v int64, dflt, bytes bool) string {
	var s string
	switch {
	case v < 0:
		s = "none"
	case bytes && v%(1<<30) == 0:
		s = fmt.Sprintf("%dGiB", v>>30)
	case bytes && v%(1<<20) == 0:
		s = fmt.Sprintf("%dMiB", v>>20)
	default:
		s = fmt.Sprint(v)
	}
	if dflt {
		s += " (default)"
	}
	return strings.TrimSpace(s)
}
