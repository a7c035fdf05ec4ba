package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/specd-dev/specd/internal/progress"
	"github.com/specd-dev/specd/specs"
)

// Live updates (docs/web.md#live) are Server-Sent Events that static/live.js
// reads: "update" carries {"html": …}, the new content of an element with
// data-live; "reset" empties an element with data-follow and each "chunk"
// (a JSON string) is appended to it; "end" says the stream is over, and
// the page closes it instead of reconnecting.

// keepAlive is how often an idle stream sends a comment, so that proxies
// and the browser keep the connection.
const keepAlive = 15 * time.Second

// eventStream writes Server-Sent Events to one client.
type eventStream struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func newEventStream(w http.ResponseWriter) *eventStream {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	es := &eventStream{w: w, rc: http.NewResponseController(w)}
	es.rc.Flush()
	return es
}

// send writes one event whose data is v as JSON, and flushes it.
func (es *eventStream) send(event string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(es.w, "event: %s\ndata: %s\n\n", event, b); err != nil {
		return err
	}
	return es.rc.Flush()
}

func (es *eventStream) ping() error {
	if _, err := es.w.Write([]byte(": keep-alive\n\n")); err != nil {
		return err
	}
	return es.rc.Flush()
}

// fileVersion identifies one version of a file written by rename (temp +
// rename makes a new inode each time): inode, size and modification time;
// the zero value when the file does not exist.
type fileVersion struct{ ino, size, mtime int64 }

func versionOf(path string) fileVersion {
	fi, err := os.Stat(path)
	if err != nil {
		return fileVersion{}
	}
	v := fileVersion{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		v.ino = int64(st.Ino)
	}
	return v
}

// runEvents streams a run's page: each time its .run.json changes (and
// once at the start) an "update" with the page's live part, then "end"
// once the run has finished. It stops when the client goes or the server
// shuts down.
func (s *Server) runEvents(w http.ResponseWriter, r *http.Request) {
	dir := s.runDir(w, r)
	if dir == "" {
		return
	}
	es := newEventStream(w)
	if r.Method == http.MethodHead {
		return
	}
	state := filepath.Join(dir, specs.ReportsDir, specs.RunStateFile)
	last := fileVersion{ino: -1}
	tick := time.NewTicker(s.opts.Poll)
	defer tick.Stop()
	idle := time.Now()
	for {
		if v := versionOf(state); v != last {
			last = v
			run := progress.ReadRun(dir)
			var buf bytes.Buffer
			if err := pages["run"].ExecuteTemplate(&buf, "run-live", s.runLive(r.Context(), run)); err != nil {
				return
			}
			if es.send("update", map[string]string{"html": buf.String()}) != nil {
				return
			}
			if run.Finished() {
				es.send("end", nil)
				return
			}
			idle = time.Now()
		} else if time.Since(idle) >= keepAlive {
			if es.ping() != nil {
				return
			}
			idle = time.Now()
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

// chunkWriter sends each write as a "chunk" event.
type chunkWriter struct{ es *eventStream }

func (c chunkWriter) Write(p []byte) (int, error) {
	if err := c.es.send("chunk", string(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// logEvents streams a topic's log as `specd logs N --topic I -f` prints
// it (progress.Follow): "reset", the logs so far and what they gain as
// "chunk" events, then "end" once the topic has its final outcome.
func (s *Server) logEvents(w http.ResponseWriter, r *http.Request) {
	run, t, ok := s.topicOf(w, r)
	if !ok {
		return
	}
	streams, err := progress.Streams(run, t.Index)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	es := newEventStream(w)
	if r.Method == http.MethodHead || es.send("reset", nil) != nil {
		return
	}
	finished := func() bool {
		rs := progress.ReadRun(run.Dir).State
		return rs == nil || rs.State == specs.StateFinished || t.Index < len(rs.Topics) && rs.Topics[t.Index].Outcome.Final()
	}
	err = progress.Follow(r.Context(), chunkWriter{es}, streams, s.opts.Poll, finished)
	if r.Context().Err() != nil {
		return
	}
	if err != nil { // a link or a FIFO at a log path: say so, and end
		if es.send("chunk", "\n"+err.Error()+"\n") != nil {
			return
		}
	}
	es.send("end", nil)
}
