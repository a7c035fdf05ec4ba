package sandbox

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Refusal is one access the sandbox refused a specialist, as read from
// what it printed (Policy.Refusals).
type Refusal struct {
	Path string `json:"path"` // absolute, as the specialist printed it
	// Access is "write", "read", or "" when neither the message nor the
	// policy tells which.
	Access string `json:"access"`
	// Setting is what would allow it: "sandbox.writable",
	// "sandbox.readable", or both joined by " or " when Access is "".
	Setting string `json:"setting"`
}

// maxRefusals is how many refused paths Refusals returns at most: the
// last ones printed, the nearest to the exit.
const maxRefusals = 3

// refusalRE matches a line that reports an access refused: EACCES,
// EPERM or EROFS (the mount namespace's read-only mounts) in the words of
// libc, Node, Python, Go, Rust and Bun/Effect (PermissionDenied).
var refusalRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)permission denied|operation not permitted|read-only file system|\bEACCES\b|\bEPERM\b|\bEROFS\b|PermissionDenied|\[errno (1|13|30)\]`)
})

// pathRE matches a path a message names: quoted ('…', "…", ‘…’, `…`),
// in parentheses (Effect: "FileSystem.open (/x)") or bare up to a space
// or colon (libc and Go: "open /x: permission denied"); absolute or
// under ~/.
var pathRE = sync.OnceValue(func() *regexp.Regexp {
	const p = `(?:/|~/)`
	return regexp.MustCompile(`'(` + p + `[^']*)'|"(` + p + `[^"]*)"|‘(` + p + `[^’]*)’|` + "`(" + p + "[^`]*)`" +
		`|\((` + p + `[^()]*)\)|(?:^|[\s=])(` + p + `[^\s:'"()‘’` + "`" + `,;]*)`)
})

// writeRE and readRE tell a refused write from a refused read by the
// operation a message names; a message that names neither ("cat: /x:
// Permission denied", Node's "open") leaves it to the policy.
var (
	writeRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)read-only file system|\bEROFS\b|\[errno 30\]|cannot (create|touch|remove|move|overwrite|write)|\b(mkdir|rmdir|unlink|rename|symlink|link|chmod|chown|utimes?|truncate|copyfile|creat|write|writeFile|appendFile|setxattr|FileSystem\.(makeDirectory|writeFile|remove|rename|truncate|copy))\b`)
	})
	readRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)cannot (open directory|access|read|stat)|\b(scandir|opendir|readdir|stat|lstat|readlink|realpath|readFile|FileSystem\.(readDirectory|readFile|stat))\b`)
	})
)

// Refusals reads what a specialist printed (the tail of its stderr) for
// accesses the sandbox refused (docs/operating.md#refused-by-the-sandbox): a line that
// reports EACCES, EPERM or EROFS and names a path (refusalRE, pathRE),
// where the path is one p does not allow that access to and one the
// file's owner and mode would allow specd's user (so that widening the
// sandbox would help). A path under ~/ is taken under the specialist's
// HOME as Prepare saw it. It returns the last maxRefusals of them, each
// path once, in the order printed; nil when none.
func (p *Policy) Refusals(printed []byte) []Refusal {
	var out []Refusal
	for _, line := range bytes.Split(printed, []byte("\n")) {
		loc := refusalRE().FindIndex(line)
		if loc == nil {
			continue
		}
		s := string(line)
		for _, path := range namedPaths(s, loc[0], p.home) {
			r, ok := p.refused(path, access(s))
			if !ok {
				continue
			}
			out = slices.DeleteFunc(out, func(o Refusal) bool { return o.Path == r.Path })
			out = append(out, r)
		}
	}
	return out[max(0, len(out)-maxRefusals):]
}

// namedPaths returns the paths line names about the refusal at byte at:
// the one just before it, nothing but punctuation between ("open /x:
// permission denied", "touch: cannot touch '/x': Permission denied"),
// else every one after it ("EACCES: permission denied, rename '/a' ->
// '/b'", "[Errno 13] Permission denied: '/x'"). A path under ~/ is taken
// under home (left out without home); each is cleaned.
func namedPaths(line string, at int, home string) []string {
	var out []string
	for _, m := range pathRE().FindAllStringSubmatchIndex(line, -1) {
		if m[0] < at && (m[1] > at || strings.Trim(line[m[1]:at], " :'\"’`)") != "") {
			continue // before the refusal (or around it), and not its subject
		}
		g := 2
		for m[g] < 0 {
			g += 2
		}
		path := line[m[g]:m[g+1]]
		if rest, ok := strings.CutPrefix(path, "~/"); ok {
			if home == "" {
				continue
			}
			path = filepath.Join(home, rest)
		}
		if m[0] < at {
			return []string{filepath.Clean(path)}
		}
		out = append(out, filepath.Clean(path))
	}
	return out
}

// access is the access a refusal line names: "write", "read" or "".
func access(line string) string {
	switch {
	case writeRE().MatchString(line):
		return "write"
	case readRE().MatchString(line):
		return "read"
	}
	return ""
}

// refused decides whether the sandbox refused access to path: not when p
// allows it (writing allows reading too), nor when the file's mode
// refuses it to specd's user (the sandbox is then not what stands in the
// way). A read p allows was not refused by the sandbox, so an access the
// message did not name is a write there (unless the file may have been
// run: execRefused), as it is to a file that does not exist.
func (p *Policy) refused(path, access string) (Refusal, bool) {
	if covers(p.Write, path) {
		return Refusal{}, false
	}
	if covers(p.Read, path) {
		if access == "read" || access == "" && execRefused(path) {
			return Refusal{}, false
		}
		access = "write"
	}
	if _, err := os.Lstat(path); access == "" && errors.Is(err, fs.ErrNotExist) {
		access = "write" // a read of a file that is not there fails ENOENT: this was a create
	}
	if !modeAllows(path, access) {
		return Refusal{}, false
	}
	r := Refusal{Path: path, Access: access}
	switch access {
	case "write":
		r.Setting = "sandbox.writable"
	case "read":
		r.Setting = "sandbox.readable"
	default:
		r.Setting = "sandbox.readable or sandbox.writable"
	}
	return r, true
}

// execRefused reports whether path is a file its mode keeps specd's
// user from running: then "bash: /x: Permission denied" may be that run
// refused as well as a write (the sandbox lets a readable file run).
func execRefused(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && unix.Faccessat(unix.AT_FDCWD, path, unix.X_OK, unix.AT_EACCESS) != nil
}

// covers reports whether path is one of paths or beneath one, as printed
// or with the links of either resolved (Landlock's view).
func covers(paths []string, path string) bool {
	resolved := filepath.Join(real(filepath.Dir(path)), filepath.Base(path))
	for _, q := range paths {
		for _, d := range []string{q, real(q)} {
			for _, x := range []string{path, resolved} {
				if x == d || strings.HasPrefix(x, d+"/") || d == "/" {
					return true
				}
			}
		}
	}
	return false
}

// modeAllows reports whether the file's owner and mode let specd's user
// have access to path (for a write to a file that does not exist, to its
// nearest directory that does): faccessat with the effective ids, which
// knows root's rights. A path that cannot be checked counts as allowed.
func modeAllows(path, access string) bool {
	mode := uint32(unix.R_OK)
	if access == "write" {
		mode = unix.W_OK
	}
	for p := path; ; p = filepath.Dir(p) {
		err := unix.Faccessat(unix.AT_FDCWD, p, mode, unix.AT_EACCESS)
		if !errors.Is(err, fs.ErrNotExist) || p == "/" || access != "write" {
			return err == nil || !(errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EROFS))
		}
	}
}

// DescribeRefusals says in one line what the sandbox refused and what
// would allow it: "the sandbox refused write access to /x (allowed by
// sandbox.writable), read access to /y (allowed by sandbox.readable)";
// "" for none.
func DescribeRefusals(rs []Refusal) string {
	if len(rs) == 0 {
		return ""
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		what := "access to "
		if r.Access != "" {
			what = r.Access + " " + what
		}
		parts[i] = what + r.Path + " (allowed by " + r.Setting + ")"
	}
	return "the sandbox refused " + strings.Join(parts, ", ")
}
