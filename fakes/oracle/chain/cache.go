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
// It is a queue of entries in use order (so in stamp order) and, for the
// SUT's hashes, a map from hash to the stamp of its last use. An entry
// that a later use of its hash superseded, or whose hash was removed, is
// marked dead where it lies (found by its stamp); eviction skips dead
// entries, and they are dropped once they outnumber the live ones. The
// chain's own txs are never looked up by content (their bytes are built
// only when read, and nobody re-sends them), so they have no map entry:
// the tx keeps the stamp of its last entry.
//
// A stamp is cached while its entry has not been evicted: entries are in
// stamp order and only dead ones are dropped otherwise, so an evicted
// stamp is older than every entry left (live). Eviction therefore only
// moves the head: a map entry whose stamp was evicted is stale, not
// deleted there (a delete per eviction, a cold probe of a hash map, was
// 1.5 % of the oracle world's day), and the stale ones are swept out
// together once they outnumber the live ones (sweep). The queue
// holds no pointer and no hash, so eviction never reads an old tx and the
// collector never scans the queue. Every operation is amortised O(1) but
// a removal or a repeated use, O(log n), and the queue's array is reused.
type txCache struct {
	size   int
	stamps map[[32]byte]uint64 // the SUT's hashes, some stale (live)
	n      int                 // entries cached (not dead, not evicted)
	hashes int                 // of which the SUT's (in stamps)
	queue  []cacheEntry
	head   int
	next   uint64
}

type cacheEntry struct {
	stamp uint64
	own   bool // one of the chain's own txs (no map entry)
	dead  bool // superseded or removed
}

func newTxCache(size int) *txCache {
	return &txCache{size: size, stamps: make(map[[32]byte]uint64, size)}
}

// live reports whether the entry of stamp (not 0, not killed) is still
// cached, that is, not evicted.
func (c *txCache) live(stamp uint64) bool {
	return stamp != 0 && c.head < len(c.queue) && stamp >= c.queue[c.head].stamp
}

// push adds key as the most recently used; false (and key refreshed) if it
// was already there.
func (c *txCache) push(key [32]byte) bool {
	stamp, had := c.stamps[key]
	had = had && c.live(stamp)
	c.use(stamp, had, false)
	c.stamps[key] = c.next
	if !had {
		c.hashes++
	}
	if len(c.stamps) > 2*c.hashes+64 {
		c.sweep()
	}
	return !had
}

// pushOwn adds one of the chain's own txs as the most recently used.
func (c *txCache) pushOwn(m *memTx) {
	c.use(m.cacheStamp, c.live(m.cacheStamp), true)
	m.cacheStamp = c.next
}

// use queues a new entry (own: of one of the chain's own txs), the cached
// entry of stamp superseded when had (room made otherwise); its stamp is
// c.next.
func (c *txCache) use(stamp uint64, had, own bool) {
	if had {
		c.kill(stamp)
	} else {
		c.makeRoom()
		c.n++
	}
	c.next++
	c.add(cacheEntry{stamp: c.next, own: own})
	c.compact()
}

// cachedOwn reports whether one of the chain's own txs is cached: its last
// entry was neither removed (stamp 0) nor evicted.
func (c *txCache) cachedOwn(m *memTx) bool { return c.live(m.cacheStamp) }

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
	for c.n >= c.size {
		c.evictOldest()
	}
}

// evictOldest drops the least recently used entry (its map entry, if it
// has one, is stale from now on).
func (c *txCache) evictOldest() {
	for c.head < len(c.queue) {
		e := c.queue[c.head]
		c.head++
		if !e.dead {
			c.n--
			if !e.own {
				c.hashes--
			}
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

// sweep deletes the stale map entries (their stamps were evicted). Which
// ones are deleted does not depend on the map's order.
func (c *txCache) sweep() {
	for key, stamp := range c.stamps {
		if !c.live(stamp) {
			delete(c.stamps, key)
		}
	}
}

func (c *txCache) remove(key [32]byte) {
	if stamp, ok := c.stamps[key]; ok {
		if c.live(stamp) {
			c.kill(stamp)
			c.n--
			c.hashes--
		}
		delete(c.stamps, key)
	}
}

// removeOwn forgets one of the chain's own txs.
func (c *txCache) removeOwn(m *memTx) {
	if c.cachedOwn(m) {
		c.kill(m.cacheStamp)
		c.n--
	}
	m.cacheStamp = 0
}

func (c *txCache) has(key [32]byte) bool {
	stamp, ok := c.stamps[key]
	return ok && c.live(stamp)
}

func (c *txCache) len() int { return c.n }
