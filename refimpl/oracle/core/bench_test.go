package core_test

import (
	"testing"
	"time"
)

// BenchmarkRounds runs 100 requests with a 30 s period for one simulated
// hour: each round is a tick, a GET, the on-chain check, a signed
// broadcast and a Complete one second later. It reports simulated seconds
// per wall second of the core together with this package's scripted chain
// (which decodes every tx), so the core alone is faster than that.
func BenchmarkRounds(b *testing.B) {
	for b.Loop() {
		w := newWorld(b)
		for r := uint64(1); r <= 100; r++ {
			w.withDoc(doc(r, period(30)))
		}
		w.start()
		for s := 0; s < 3600; s++ {
			w.advance(time.Second)
			subs := w.broadcasts()
			w.outs = w.outs[:0]
			w.chain.Commit()
			for _, s := range subs {
				w.chain.Complete(s.r, s.n, w.now)
				w.complete(completeEntry{s.r, s.n, w.now})
			}
		}
		if w.c.Metrics().TxSubmitted < 100*3600/31 {
			b.Fatalf("only %d submissions", w.c.Metrics().TxSubmitted)
		}
	}
	b.ReportMetric(3600*float64(b.N)/b.Elapsed().Seconds(), "sim-s/s")
}
