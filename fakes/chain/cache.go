package chain

import (
	"cmp"
	"slices"
)

// txCache is CometBFT's mempool cache: an LRU set of tx hashes of a fixed
// capacity. A hash enters when CheckTx starts on a tx and leaves when the
// tx is rejected, fails in a block or is evicted, or when it is the least
// recently used and room is needed.
//
// It is a map from hash to the stamp of its last use and a queue of
// entries in use order (so in stamp order). An entry that a later use of
// its hash superseded, or whose hash was removed, is marked dead where it
// lies (found by its stamp); eviction skips dead entries, and they are
// dropped once they outnumber the live ones. The chain's own txs are never
// looked up by content (their bytes are built only when read, and nobody
// re-sends them), so they take a place in the queue and in the count
// without a map entry: the tx keeps the stamp of its last entry, and is
// cached while that entry has not been evicted (cachedOwn). The queue
// holds no pointer, so eviction never reads an old tx and the collector
// never scans the queue. Every operation is amortised O(1) but a removal
// or a repeated use, O(log n), and the queue's array is reused.
type txCache struct {
	size   int
	stamps map[[32]byte]uint64
	own    int // own txs cached
	queue  []cacheEntry
	head   int
	next   uint64
}

type cacheEntry struct {
	key   [32]byte // a hash's entry
	stamp uint64
	own   bool // one of the chain's own txs (key unused)
	dead  bool // superseded or removed
}

func newTxCache(size int) *txCache {
	return &txCache{size: size, stamps: make(map[[32]byte]uint64, size)}
}

// push adds key as the most recently used; false (and key refreshed) if it
// was already there.
func (c *txCache) push(key [32]byte) bool {
	stamp, had := c.stamps[key]
	if had {
		c.kill(stamp)
	} else {
		c.makeRoom()
	}
	c.next++
	c.stamps[key] = c.next
	c.add(cacheEntry{key: key, stamp: c.next})
	c.compact()
	return !had
}

// pushOwn adds one of the chain's own txs as the most recently used.
func (c *txCache) pushOwn(m *memTx) {
	if c.cachedOwn(m) {
		c.kill(m.cacheStamp)
	} else {
		c.makeRoom()
		c.own++
	}
	c.next++
	m.cacheStamp = c.next
	c.add(cacheEntry{stamp: c.next, own: true})
	c.compact()
}

// cachedOwn reports whether one of the chain's own txs is cached: its last
// entry was neither removed (stamp 0) nor evicted (older than every entry
// left; entries are in stamp order and only dead ones are dropped
// otherwise).
func (c *txCache) cachedOwn(m *memTx) bool {
	return m.cacheStamp != 0 && c.head < len(c.queue) && m.cacheStamp >= c.queue[c.head].stamp
}

// kill marks the live entry of stamp dead.
func (c *txCache) kill(stamp uint64) {
	live := c.queue[c.head:]
	if i, ok := slices.BinarySearchFunc(live, stamp, func(e cacheEntry, s uint64) int {
		return cmp.Compare(e.stamp, s)
	}); ok {
		live[i].dead = true
	}
}

// add appends e to the queue. When the array is full and at least half of
// it lies before the head (entries already evicted), the rest moves to the
// front instead of the array doubling and copying the dead half along (a
// full cache evicts one entry per push: the growth was 1 % of the oracle
// world's day).
func (c *txCache) add(e cacheEntry) {
	if len(c.queue) == cap(c.queue) && c.head > 0 && 2*c.head >= len(c.queue) {
		n := copy(c.queue, c.queue[c.head:])
		c.queue, c.head = c.queue[:n], 0
	}
	c.queue = append(c.queue, e)
}

func (c *txCache) makeRoom() {
	for c.len() >= c.size {
		c.evictOldest()
	}
}

// evictOldest drops the least recently used entry.
func (c *txCache) evictOldest() {
	for c.head < len(c.queue) {
		e := &c.queue[c.head]
		c.head++
		switch {
		case e.dead:
		case e.own:
			c.own--
			return
		default:
			delete(c.stamps, e.key)
			return
		}
	}
}

// compact drops dead entries once they outnumber the live ones.
func (c *txCache) compact() {
	if len(c.queue)-c.head <= 2*c.len()+64 {
		return
	}
	live := c.queue[:0]
	for _, e := range c.queue[c.head:] {
		if !e.dead {
			live = append(live, e)
		}
	}
	c.queue, c.head = live, 0
}

func (c *txCache) remove(key [32]byte) {
	if stamp, ok := c.stamps[key]; ok {
		c.kill(stamp)
		delete(c.stamps, key)
	}
}

// removeOwn forgets one of the chain's own txs.
func (c *txCache) removeOwn(m *memTx) {
	if c.cachedOwn(m) {
		c.kill(m.cacheStamp)
		c.own--
	}
	m.cacheStamp = 0
}

func (c *txCache) has(key [32]byte) bool {
	_, ok := c.stamps[key]
	return ok
}

func (c *txCache) len() int { return len(c.stamps) + c.own }
