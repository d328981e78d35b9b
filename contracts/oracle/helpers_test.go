package oracle

import "time"

const (
	self  = "guru1self"
	peerA = "guru1peera"
	peerB = "guru1peerb"
)

func sec(n int) time.Duration { return time.Duration(n) * time.Second }

// doc is request 7, ENABLED, period 30 s, self at index 1 of three
// accounts, two endpoints, nonce 0; opts change it.
func doc(opts ...func(*RequestDoc)) RequestDoc {
	d := RequestDoc{
		RequestID:   7,
		Period:      30,
		AccountList: []string{peerA, self, peerB},
		Quorum:      2,
		Endpoints: []Endpoint{
			{URL: "http://src/r/7/e/0", ParseRule: "data.price"},
			{URL: "http://src/r/7/e/1", ParseRule: "result.value"},
		},
		Status: StatusEnabled,
	}
	for _, o := range opts {
		o(&d)
	}
	return d
}
