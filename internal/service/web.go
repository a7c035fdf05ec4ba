package service

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/spf13/pflag"

	"github.com/specd-dev/specd/internal/config"
)

// WebProgram is the binary of the web view (docs/web.md), a program of
// its own so that specd, and the daemon, do not link its Markdown
// renderer, sanitiser and templates: linked, their start-up data alone
// would add megabytes to every daemon's idle memory.
const WebProgram = "specd-web"

// WebHelp is the long help of `web` in specd and specd-web.
const WebHelp = `Serve the spec tree as web pages until Ctrl-C: the runs (newest first, filtered by
state, 50 a page), each run with its request, topics, OVERVIEW.md and errors, updated live
while it runs; each report rendered from Markdown and sanitised (no script runs, nothing
is fetched from another host; quarantined texts and spotlight marks shown as such,
citations path:line marked); a topic's log, following live; errors.jsonl with filters;
and the gap table. It only reads files, and answers only GET and HEAD.

It listens on --listen (default: web.listen of .opencode/specd.yaml, else ` + config.DefaultWebListen + `).
Without web.token (or web.token_file, or --token-file) only loopback clients are
answered and the address must be loopback; with a token every request must carry it:
open the view once with ?token=TOKEN and the browser keeps it in a cookie.
The daemon serves the same view when web.listen is set.
The view is the program specd-web, which specd runs in its place (same arguments); install
it next to specd with
  go install github.com/specd-dev/specd/cmd/specd-web@latest
More: docs/web.md.`

// WebOptions are the flags of web.
type WebOptions struct {
	Global
	Listen    string
	TokenFile string
	// UntilStdinCloses stops the view when its standard input ends: the
	// daemon that started it has stopped or died.
	UntilStdinCloses bool
}

// AddFlags defines web's own flags on fs (the global ones are Global.AddFlags).
func (o *WebOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Listen, "listen", "", "host:port to listen on (default: web.listen, else "+config.DefaultWebListen+")")
	fs.StringVar(&o.TokenFile, "token-file", "", "a file holding the token every request must carry (default: web.token_file)")
	fs.BoolVar(&o.UntilStdinCloses, "until-stdin-closes", false, "stop when standard input ends (how the daemon runs the view)")
	fs.MarkHidden("until-stdin-closes")
}

// ServingPrefix starts the line the web view prints on stdout once it
// listens: "specd web: serving <tree> at <url> …".
const ServingPrefix = "specd web: serving "

// StartWeb starts the web view of project p on addr as a child of this
// process (docs/web.md#daemon): specd-web, found next to this program or
// on PATH, with --until-stdin-closes, its stderr on stderr. It returns once
// the view listens, with its URL and stop, which ends it (its standard
// input closed) and waits for it. Errors: specd-web is not installed (how
// to install it), or it exited before listening (why, from its stderr:
// a bad address, a port in use, a token file missing).
func StartWeb(p Project, addr string, stderr io.Writer) (url string, stop func(), err error) {
	path := sibling(WebProgram)
	if path == "" {
		return "", nil, fmt.Errorf("web.listen is set, and the web view is the program %s, which is not installed next to specd or on PATH: "+
			"install it with 'go install github.com/specd-dev/specd/cmd/specd-web@latest' (or 'go install ./cmd/...' in a checkout), "+
			"or unset web.listen (docs/web.md)", WebProgram)
	}
	cmd := exec.Command(path, "web", "--root", p.Root, "--specs-dir", p.TreeDir, "--listen", addr, "--until-stdin-closes")
	cmd.Dir = p.Root
	var tail strings.Builder
	cmd.Stderr = io.MultiWriter(stderr, &limitWriter{w: &tail, n: 2000})
	in, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start %s: %w", path, err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if !strings.HasPrefix(line, ServingPrefix) {
		in.Close()
		werr := cmd.Wait()
		why := strings.TrimSpace(tail.String())
		if why == "" && werr != nil {
			why = werr.Error()
		}
		return "", nil, errors.New("the web view did not start: " + why)
	}
	go io.Copy(io.Discard, out)
	_, url, _ = strings.Cut(strings.TrimPrefix(line, ServingPrefix), " at ")
	url, _, _ = strings.Cut(url, " ")
	return url, func() { in.Close(); cmd.Wait() }, nil
}

// limitWriter keeps the first n bytes written to it.
type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if k := min(len(p), l.n); k > 0 {
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
