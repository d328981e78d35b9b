package chain

import (
	"time"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/internal/streams"
)

// PeerMix is the script of the peer providers (ORACLE-SPEC 4.7): how
// often a peer is prompt, late, absent, submits a wrong nonce or
// duplicates its submission for a round (relative weights), and how long
// after the round opens (bt + period) a prompt or late peer submits.
type PeerMix struct {
	Prompt, Late, Absent, WrongNonce, Duplicate uint32
	// PromptDelay and LateDelay are [min, max] delays.
	PromptDelay, LateDelay [2]time.Duration
}

// HealthyPeers is a mix in which every peer submits every round within a
// second: liveness scenarios use it.
func HealthyPeers() PeerMix {
	return PeerMix{Prompt: 1, PromptDelay: [2]time.Duration{0, time.Second}}
}

// DefaultPeerMix is mostly prompt peers with some of every misbehaviour.
func DefaultPeerMix() PeerMix {
	return PeerMix{Prompt: 80, Late: 8, Absent: 6, WrongNonce: 3, Duplicate: 3,
		PromptDelay: [2]time.Duration{0, 2 * time.Second}, LateDelay: [2]time.Duration{5 * time.Second, 40 * time.Second}}
}

// PeerPlan is one peer's behaviour for one round.
type PeerPlan struct {
	Behaviour history.PeerBehaviour
	// Delay is after the round opens (bt + period); 0 for an absent peer.
	Delay time.Duration
}

// Plan draws peer's behaviour for round n of request r from seed. It is a
// pure function of its arguments: the plans of different peers and rounds
// do not depend on the order they are drawn in.
func (m PeerMix) Plan(seed uint64, peer int, r, n uint64) PeerPlan {
	total := uint64(m.Prompt) + uint64(m.Late) + uint64(m.Absent) + uint64(m.WrongNonce) + uint64(m.Duplicate)
	if total == 0 {
		return PeerPlan{Behaviour: history.PeerAbsent}
	}
	pick := streams.SubSeed(seed, uint64(peer), r, n, 0) % total
	delay := func(rng [2]time.Duration) time.Duration {
		if rng[1] <= rng[0] {
			return rng[0]
		}
		return rng[0] + time.Duration(streams.SubSeed(seed, uint64(peer), r, n, 1)%uint64(rng[1]-rng[0]+1))
	}
	switch {
	case pick < uint64(m.Prompt):
		return PeerPlan{history.PeerPrompt, delay(m.PromptDelay)}
	case pick < uint64(m.Prompt)+uint64(m.Late):
		return PeerPlan{history.PeerLate, delay(m.LateDelay)}
	case pick < uint64(m.Prompt)+uint64(m.Late)+uint64(m.Absent):
		return PeerPlan{Behaviour: history.PeerAbsent}
	case pick < total-uint64(m.Duplicate):
		return PeerPlan{history.PeerWrongNonce, delay(m.PromptDelay)}
	}
	return PeerPlan{history.PeerDuplicate, delay(m.PromptDelay)}
}
