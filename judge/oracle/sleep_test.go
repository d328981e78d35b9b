package oracle

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

// TestSleepersWakeOnTime: a checker that sleeps until its deadline
// (judge.Sleeper) finds its violation at the first record past the
// deadline even when that record is of a class it does not read. judgeRun
// requires the violations found by every record to be those found with
// every checker shown every record (requireSameSteps); here a block
// record, which none of these checkers reads, comes first past the
// deadline. (O9, O10, O16b, O20, O22, O26 and O28 meet it in
// TestCheckers' histories.)
func TestSleepersWakeOnTime(t *testing.T) {
	cases := []struct {
		name, checker string
		build         func() (Params, []history.Event)
	}{
		{"a block past a missing probe", nameHealthProbe, func() (Params, []history.Event) {
			b := newHB()
			b.manualProbes = true
			tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
			end := b.steady(tl+sec(0.5), 8, map[uint64]int{1: 0}, nil)
			for at := 30 * time.Second; at < end; at += 30 * time.Second {
				if at != time.Minute {
					b.status(at)
				}
			}
			b.block(64 * time.Second) // 30 s + ProbeBound has passed
			b.stop(end)
			return std(b)
		}},
		{"a block past T_sd", nameShutdown, func() (Params, []history.Event) {
			return stopDuring(0, 45*time.Second, false, func(b *hb, at time.Duration) {
				b.block(at + 41*time.Second) // the signal (at + 5 ms) + T_sd has passed
			})
		}},
		{"blocks past a restart's deadline", nameRestart, func() (Params, []history.Event) {
			return crashInFlightBlocks(false, ms(100))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, evs := tc.build()
			r := judgeRun(t, p, evs)
			require.Equal(t, judge.Violated, r.Verdict(tc.checker), describe(r, evs))
		})
	}
}
