// Package web serves the read-only web view of a spec tree
// (docs/web.md): the runs, one run with its topics updated live through
// Server-Sent Events, a report rendered from Markdown and sanitised, a
// topic's log following live, errors.jsonl with filters, and the gap
// table. `specd web` serves it, and so does the daemon when web.listen is
// set.
//
// It only reads what the daemon writes, through the readers the commands
// use (progress, specs, jsonl, memory); no request changes anything: only
// GET and HEAD are answered. Without a token it answers loopback clients
// only, with a loopback Host (no DNS rebinding); with one, every request
// must carry it. Every page is sent with a Content-Security-Policy that
// allows no inline script and nothing from another origin, and report
// text goes through goldmark (raw HTML and dangerous links dropped) and
// bluemonday, so a hostile report renders inert.
package web

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/specd-dev/specd/internal/config"
)

// Options configure a Server.
type Options struct {
	// TreeDir is the spec tree (absolute), e.g. <root>/.opencode/specs.
	TreeDir string
	// Token is the secret every request must carry (docs/web.md#access);
	// "" answers loopback clients only.
	Token string
	// Poll is how often a live view looks at the files it follows; 0 is
	// 250 ms.
	Poll time.Duration
	// Now is the clock of elapsed times; nil is time.Now.
	Now func() time.Time
	// MaxMarkdown is the most bytes of a report, OVERVIEW.md or
	// REQUEST.md rendered as Markdown; the rest is shown as text
	// (docs/web.md#limits). 0 is DefaultMaxMarkdown (1 MiB).
	MaxMarkdown int
}

// Server is the web view's HTTP handler. It is safe for concurrent use.
type Server struct {
	opts  Options
	mux   *http.ServeMux
	index *runIndex
	md    *markdown
}

// New returns the web view of opts.TreeDir. It reads nothing yet.
func New(opts Options) *Server {
	if opts.Poll <= 0 {
		opts.Poll = 250 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{opts: opts, index: newRunIndex(opts.TreeDir), md: newMarkdown(opts.MaxMarkdown)}
	s.mux = s.routes()
	return s
}

// Warm reads every run of the tree once, so that the first runs list
// answers as fast as the next ones (a tree of 10,000 runs takes about a
// second to read); errors are left for the page to show.
func (s *Server) Warm() { s.index.list() }

// tokenCookie carries the token after a first request gave it in the URL.
const tokenCookie = "specd_token"

// contentSecurityPolicy allows scripts, styles, images and connections
// from this origin only, and no inline script or style.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// ServeHTTP answers r: the security headers on every answer, 405 for a
// method other than GET or HEAD, 403 for a client or Host that is not
// loopback when there is no token, 401 without the token when there is
// one; otherwise the page. A token given as ?token= is set as a cookie and
// the same URL without it is redirected to.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "the web view is read-only: only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	if s.opts.Token == "" {
		if !loopbackAddr(r.RemoteAddr) || !loopbackHost(r.Host) {
			http.Error(w, "no web.token is set, so only loopback clients at a loopback address are answered (docs/web.md#access)", http.StatusForbidden)
			return
		}
		s.mux.ServeHTTP(w, r)
		return
	}
	if q := r.URL.Query(); q.Has("token") {
		if !s.tokenOK(q.Get("token")) {
			http.Error(w, "wrong token (docs/web.md#access)", http.StatusUnauthorized)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: s.opts.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		q.Del("token")
		u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
		http.Redirect(w, r, u.String(), http.StatusSeeOther)
		return
	}
	given, ok := bearer(r.Header.Get("Authorization"))
	if c, err := r.Cookie(tokenCookie); err == nil && ok && given == "" {
		given = c.Value
	}
	if !s.tokenOK(given) {
		http.Error(w, "a token is required: open the view's URL with ?token=<web.token> once, or send 'Authorization: Bearer <token>' (docs/web.md#access)", http.StatusUnauthorized)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// bearer returns the token of an Authorization header, which must be
// "Bearer <token>" (the scheme in any case, RFC 6750), and ok; "" and ok
// for no header; ok false for another form (a bare token, Basic), which
// is refused rather than taken as the token.
func bearer(h string) (token string, ok bool) {
	if h == "" {
		return "", true
	}
	scheme, tok, found := strings.Cut(h, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// tokenOK compares given with the token in constant time. It compares
// their SHA-256 sums, which have one length, so that neither the time
// nor an early return tells the token's length
// (subtle.ConstantTimeCompare returns at once on different lengths).
func (s *Server) tokenOK(given string) bool {
	a, b := sha256.Sum256([]byte(given)), sha256.Sum256([]byte(s.opts.Token))
	return given != "" && subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// loopbackAddr reports whether a request's remote address (ip:port) is a
// loopback address.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackHost reports whether a Host header names this machine by a
// loopback name or address, so that a page of another site whose name
// was re-bound to 127.0.0.1 cannot read the view.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ErrNotLoopback is returned by Listen for an address that is not
// loopback when no token is set.
var ErrNotLoopback = errors.New("not a loopback address and no web.token is set")

// Listen opens addr (host:port) for the view. Without a token the host
// must be a loopback address or "localhost" (ErrNotLoopback, wrapped,
// naming addr and the keys to set); errors of net.Listen are returned as
// they are.
func Listen(addr, token string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("web listen address %q: want host:port, e.g. %s", addr, config.DefaultWebListen)
	}
	if token == "" && !loopbackHost(host) {
		return nil, fmt.Errorf("web listen address %q: %w: set web.token_file (or web.token) in %s, or listen on 127.0.0.1 (docs/web.md#access)", addr, ErrNotLoopback, ".opencode/specd.yaml")
	}
	return net.Listen("tcp", addr)
}

// Token returns the token the web: keys of a config name: web.token, or
// the first line of web.token_file (relative to root), trimmed; "" when
// neither is set. A token file that cannot be read, or holds no token, is
// an error naming it.
func Token(root string, w config.Web) (string, error) {
	if w.TokenFile == "" {
		return w.Token, nil
	}
	p := w.TokenFile
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("web.token_file: %w", err)
	}
	tok, _, _ := strings.Cut(string(b), "\n")
	if tok = strings.TrimSpace(tok); tok == "" {
		return "", fmt.Errorf("web.token_file: %s holds no token (one line of text)", p)
	}
	return tok, nil
}

// Open is the view of the spec tree treeDir of the project root as the
// web: keys w say, on addr: the token read (Token), the address checked
// and opened (Listen). It returns the listener and the handler for Serve;
// errors as Token and Listen.
func Open(root, treeDir, addr string, w config.Web) (net.Listener, *Server, error) {
	tok, err := Token(root, w)
	if err != nil {
		return nil, nil, err
	}
	ln, err := Listen(addr, tok)
	if err != nil {
		return nil, nil, err
	}
	return ln, New(Options{TreeDir: treeDir, Token: tok}), nil
}

// Serve answers requests on ln with h until ctx ends, then closes the
// listener and every open connection, live streams included (their
// requests' contexts end with ctx), waiting up to 5 s for pages being
// written. It returns nil after ctx ends, or the error that stopped
// serving.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
