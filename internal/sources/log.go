package sources

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/specd-dev/specd/internal/lockedappend"
)

// LogLine formats the validation log line (docs/contract.md#source-quality)
// for one validation run over the summaries of its reports:
//
//	[2026-11-23T10:00:00Z] WEB-RESEARCH-VALIDATION | sources=N | avg_score=X | gaps=[a,b] | time=Ns | conflicts=N
//
// at is written in UTC to the second; sources counts every scored source;
// avg_score is their mean total, rounded half up (0 without sources); gaps
// lists the distinct gap types, sorted, comma-separated; time is elapsed in
// seconds with one decimal; conflicts counts tier conflicts.
func LogLine(at time.Time, sums []Summary, elapsed time.Duration) string {
	n, total, conflicts := 0, 0, 0
	for _, s := range sums {
		for _, sc := range s.Scores {
			n++
			total += sc.Total
		}
		conflicts += s.Conflicts
	}
	avg := 0
	if n > 0 {
		avg = (total + n/2) / n
	}
	return fmt.Sprintf("[%s] WEB-RESEARCH-VALIDATION | sources=%d | avg_score=%d | gaps=[%s] | time=%.1fs | conflicts=%d",
		at.UTC().Format(time.RFC3339), n, avg, strings.Join(SortedGapTypes(sums), ","), elapsed.Seconds(), conflicts)
}

// AppendLog appends line and a newline to the log at path (by default
// .opencode/logs/web-research-validation.log) the way errors.jsonl is
// written, with lockedappend.Append: under
// an flock on path+".lock", a permanent file that is never removed, the
// file is opened O_APPEND and the line written in one write(2), so
// concurrent writers never interleave; a line torn by a crashed writer is
// left on its own line. Missing directories are created. It blocks until
// the lock is free; it returns an error for a line that holds a newline
// (nothing is written), and the error of the lock, open, write or close,
// naming the file. Nothing below the directory that holds the log's
// directory (.opencode/) is reached through a symbolic link: a link is
// refused with a *nofollow.LinkError (docs/operating.md#links).
func AppendLog(path, line string) error {
	if strings.ContainsAny(line, "\r\n") {
		return errors.New("validation log line holds a newline")
	}
	root := filepath.Dir(filepath.Dir(path))
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	return lockedappend.Append(root, path, []byte(line+"\n"), nil)
}
