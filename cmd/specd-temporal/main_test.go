package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/notify"
)

// TestWebhookCommand: the daemon of 'specd-temporal run' finds this
// program as its own and runs it for a notification's POST, as
// specd-daemon runs specd: the request on stdin is posted and its answer
// printed.
func TestWebhookCommand(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Content-Type")
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	in, _ := json.Marshal(notify.WebhookRequest{URL: srv.URL, Header: map[string]string{"Content-Type": "application/json"}, Body: []byte("{}")})
	var out, errOut bytes.Buffer
	code := run([]string{notify.WebhookCommand}, bytes.NewReader(in), &out, &errOut)
	var a notify.WebhookAnswer
	if err := json.Unmarshal(out.Bytes(), &a); code != 0 || err != nil || a.Status != http.StatusAccepted || got != "application/json" {
		t.Errorf("exit %d, answer %q (%v), stderr %q; the hook saw %q", code, out.String(), err, errOut.String(), got)
	}
	if code := run([]string{notify.WebhookCommand}, strings.NewReader(""), &out, &errOut); code != 2 {
		t.Errorf("no request: exit %d, want 2", code)
	}
}
