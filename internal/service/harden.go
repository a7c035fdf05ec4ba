package service

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"
)

// ownSecrets are the variables specd reads for itself (TemporalFlags.Apply)
// and no child needs: Harden drops them once read.
var ownSecrets = []string{"SPECD_CODEC_KEYS", "TEMPORAL_API_KEY"}

// Harden makes this process non-dumpable (prctl PR_SET_DUMPABLE 0: its
// /proc files — environ, cmdline, maps, mem — then belong to root, and
// no process without CAP_SYS_PTRACE reads them or attaches to it; no core
// dump) and drops ownSecrets from its environment: from the one its
// children inherit (os.Unsetenv) and, overwritten with NULs, from the
// block the kernel shows as /proc/<pid>/environ, which Unsetenv leaves
// (docs/operating.md#security). Call it once the secrets are read and
// copied (strings.Clone: the environment's strings are that block), and
// after the decision to exec specd-temporal, which reads them again. The
// error says what could not be done; the process goes on.
func Harden() error {
	var errs []string
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		errs = append(errs, "prctl(PR_SET_DUMPABLE, 0): "+err.Error())
	}
	var names []string
	for _, n := range ownSecrets {
		if _, ok := os.LookupEnv(n); ok {
			names = append(names, n)
			os.Unsetenv(n)
		}
	}
	if err := scrubEnviron(names); err != nil {
		errs = append(errs, "overwriting "+strings.Join(names, ", ")+" in /proc/self/environ: "+err.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// scrubEnviron overwrites the entries NAME=… of names with NULs in the
// environment block the process started with (/proc/self/stat's
// env_start and env_end, written through /proc/self/mem).
func scrubEnviron(names []string) error {
	if len(names) == 0 {
		return nil
	}
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return err
	}
	// Fields after "(comm) ": state is field 3; env_start and env_end
	// are fields 50 and 51 (proc(5)).
	i := bytes.LastIndexByte(stat, ')')
	f := strings.Fields(string(stat[i+1:]))
	if i < 0 || len(f) < 49 {
		return fmt.Errorf("/proc/self/stat has no env_start")
	}
	start, err1 := strconv.ParseInt(f[47], 10, 64)
	end, err2 := strconv.ParseInt(f[48], 10, 64)
	if err1 != nil || err2 != nil || end <= start {
		return fmt.Errorf("/proc/self/stat: env_start %q, env_end %q", f[47], f[48])
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, start); err != nil {
		return err
	}
	off := int64(0)
	for _, entry := range bytes.Split(block, []byte{0}) {
		for _, n := range names {
			if bytes.HasPrefix(entry, []byte(n+"=")) {
				if _, err := mem.WriteAt(make([]byte, len(entry)), start+off); err != nil {
					return err
				}
			}
		}
		off += int64(len(entry)) + 1
	}
	return nil
}

// harden is Harden, its failure a warning on log.
func harden(log zerolog.Logger) {
	if err := Harden(); err != nil {
		log.Warn().Err(err).Msg("specd stays readable to processes of its user (docs/operating.md#security)")
	}
}
