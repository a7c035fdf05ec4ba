package temporal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"go.temporal.io/sdk/converter"
)

// ServeCodec serves c over HTTP at listen ("host:port") with the Temporal
// codec server protocol (POST /encode and /decode), so that the Temporal
// UI or CLI of people allowed to read research text can read histories
// the cluster only holds sealed (docs/operating.md#security). With origin
// set (the Temporal UI's, e.g. http://localhost:8233), CORS lets that
// origin call it. Once it listens it writes "specd: codec server on
// http://ADDR" to stderr. It blocks until ctx ends (then nil) or the
// server fails (listening, serving).
func ServeCodec(ctx context.Context, c *Codec, listen, origin string, stderr io.Writer) error {
	h := converter.NewPayloadCodecHTTPHandler(c)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if origin != "" {
				w.Header().Set("Access-Control-Allow-Origin", origin)
				w.Header().Set("Access-Control-Allow-Credentials", "true")
				w.Header().Set("Access-Control-Allow-Headers", "Content-Type,X-Namespace,Authorization")
				w.Header().Set("Access-Control-Allow-Methods", "POST,OPTIONS")
				if r.Method == http.MethodOptions {
					return
				}
			}
			h.ServeHTTP(w, r)
		})}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("codec server: %w", err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-ctx.Done():
			_ = srv.Close()
		case <-stop:
		}
	}()
	fmt.Fprintf(stderr, "specd: codec server on http://%s\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
