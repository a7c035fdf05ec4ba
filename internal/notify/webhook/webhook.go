// Package webhook makes one notification webhook's POST, in a process of
// its own: the daemon runs `specd notify-webhook` (notify.WebhookCommand) with the
// request as JSON on stdin and reads the answer as JSON on stdout, so
// that net/http and crypto/tls are in the specd program but not in the
// long-lived daemon's (docs/operating.md#memory), as git keeps its HTTP
// transport in git-remote-https. The request travels on stdin, not on the
// command line, because its URL and header may be secrets.
package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/specd-dev/specd/internal/notify"
)

// maxRequest bounds what Main reads from stdin (bytes): a notification's
// body is a few KiB.
const maxRequest = 1 << 20

// Main reads a notify.WebhookRequest from stdin, POSTs it with the environment's proxy
// settings and writes its notify.WebhookAnswer to stdout. It returns the exit status: 0
// when an answer was written (whatever the HTTP status), 2 for a request
// it cannot read. The caller bounds its time by killing it.
func Main(stdin io.Reader, stdout io.Writer) int {
	var r notify.WebhookRequest
	if err := json.NewDecoder(io.LimitReader(stdin, maxRequest)).Decode(&r); err != nil {
		fmt.Fprintf(stdout, "{\"error\":%q}\n", "notify-webhook: cannot read the request: "+err.Error())
		return 2
	}
	b, _ := json.Marshal(Post(context.Background(), r))
	stdout.Write(append(b, '\n'))
	return 0
}

// Post sends r with http.DefaultClient and drains at most 64 KiB of the
// answer's body.
func Post(ctx context.Context, r notify.WebhookRequest) notify.WebhookAnswer {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return notify.WebhookAnswer{Error: "not a URL"}
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		// The error quotes the URL, which may be the secret: drop it.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return notify.WebhookAnswer{Error: err.Error()}
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return notify.WebhookAnswer{Status: resp.StatusCode}
}
