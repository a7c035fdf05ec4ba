package webhook_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/notify"
	"github.com/specd-dev/specd/internal/notify/webhook"
)

// TestMainPosts: the request read on stdin is POSTed with its header and
// body, and the answer's status is printed; a refused connection is
// reported without the URL, which may be a secret.
func TestMainPosts(t *testing.T) {
	var got struct {
		header http.Header
		body   string
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.header, got.body = r.Header.Clone(), string(b)
		w.WriteHeader(http.StatusTeapot)
	}))
	defer srv.Close()
	answer := func(r notify.WebhookRequest) (notify.WebhookAnswer, int) {
		in, _ := json.Marshal(r)
		var out bytes.Buffer
		code := webhook.Main(bytes.NewReader(in), &out)
		var a notify.WebhookAnswer
		if err := json.Unmarshal(out.Bytes(), &a); err != nil {
			t.Fatalf("output %q: %v", out.String(), err)
		}
		return a, code
	}
	a, code := answer(notify.WebhookRequest{URL: srv.URL + "/hook", Header: map[string]string{"Authorization": "Bearer s"}, Body: []byte("hi")})
	if code != 0 || a.Status != http.StatusTeapot || got.body != "hi" || got.header.Get("Authorization") != "Bearer s" {
		t.Errorf("got exit %d, %+v; the hook saw %q, %v", code, a, got.body, got.header)
	}
	secret := "http://127.0.0.1:9/secret-token"
	a, code = answer(notify.WebhookRequest{URL: secret})
	if code != 0 || a.Status != 0 || a.Error == "" || strings.Contains(a.Error, "secret-token") {
		t.Errorf("a refused connection: exit %d, %+v", code, a)
	}
	var out bytes.Buffer
	if code := webhook.Main(strings.NewReader("not json"), &out); code != 2 || !strings.Contains(out.String(), "cannot read the request") {
		t.Errorf("bad input: exit %d, %q", code, out.String())
	}
}
