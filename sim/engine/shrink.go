package engine

// ShrinkList reduces items by delta debugging: it removes chunks (halves,
// then quarters, …) while try reports that what is left still fails, and
// returns the smallest list found. try reports false once a budget runs
// out, so ShrinkList ends gracefully; an error from try ends it at once.
func ShrinkList[A any](items []A, try func([]A) (bool, error)) ([]A, error) {
	for n := 2; len(items) > 0; {
		if n > len(items) {
			n = len(items)
		}
		removed := false
		for i := 0; i < n; i++ {
			lo, hi := i*len(items)/n, (i+1)*len(items)/n
			rest := append(append([]A{}, items[:lo]...), items[hi:]...)
			ok, err := try(rest)
			if err != nil {
				return items, err
			}
			if ok {
				items, removed = rest, true
				n = max(n-1, 2)
				break
			}
		}
		if !removed {
			if n == len(items) {
				break
			}
			n *= 2
		}
	}
	return items, nil
}
