package retryhttp

import (
	"net/http"
	"time"

	"example.com/retryhttp/breaker"
)

// Client sends requests with Policy, through one breaker per host.
type Client struct {
	HTTP     *http.Client
	Policy   Policy
	breakers map[string]*breaker.Breaker
}

// Do sends req until it succeeds, is not retryable, or the attempts run
// out, sleeping Policy.Delay (or the server's Retry-After) between
// attempts. An open breaker fails the call at once with breaker.ErrOpen.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	b := c.breaker(req.URL.Host)
	var resp *http.Response
	var err error
	for n := 0; n < c.Policy.Attempts; n++ {
		if n > 0 {
			d := c.Policy.Delay(n)
			if ra, ok := RetryAfter(resp); ok {
				d = ra
			}
			time.Sleep(d)
		}
		if err := b.Allow(); err != nil {
			return nil, err
		}
		resp, err = c.HTTP.Do(req)
		if !Retryable(resp, err) {
			b.Success()
			return resp, nil
		}
		b.Failure()
	}
	return resp, err
}

func (c *Client) breaker(host string) *breaker.Breaker {
	if c.breakers == nil {
		c.breakers = map[string]*breaker.Breaker{}
	}
	if c.breakers[host] == nil {
		c.breakers[host] = breaker.New(5, 30*time.Second)
	}
	return c.breakers[host]
}
