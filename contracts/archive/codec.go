package archive

import (
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// level is the fixed zstd level: output bytes depend on it, so it never
// changes with the machine.
const level = zstd.SpeedDefault

// maxDecoded bounds the memory one in-memory decompression may use.
const maxDecoded = 1 << 30

// freeList keeps a few expensive codec values for reuse. Unlike sync.Pool it
// is not emptied by the garbage collector, which matters to a simulator that
// allocates heavily and archives often.
type freeList[T any] struct {
	mu    sync.Mutex
	items []T
}

const freeListCap = 8

func (l *freeList[T]) get() (T, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var zero T
	n := len(l.items)
	if n == 0 {
		return zero, false
	}
	it := l.items[n-1]
	l.items[n-1] = zero
	l.items = l.items[:n-1]
	return it, true
}

func (l *freeList[T]) put(it T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.items) < freeListCap {
		l.items = append(l.items, it)
	}
}

var (
	encoders       freeList[*zstd.Encoder]
	streamDecoders freeList[*zstd.Decoder]

	sharedDecoderOnce sync.Once
	sharedDecoder     *zstd.Decoder
	sharedDecoderErr  error
)

// getEncoder returns a streaming encoder writing to w. Streaming encoders
// with concurrency 1 produce the same bytes however the input is chunked.
func getEncoder(w io.Writer) (*zstd.Encoder, error) {
	if enc, ok := encoders.get(); ok {
		enc.Reset(w)
		return enc, nil
	}
	enc, err := zstd.NewWriter(w, zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(true))
	if err != nil {
		return nil, fmt.Errorf("archive: zstd encoder: %w", err)
	}
	return enc, nil
}

// putEncoder returns a closed encoder to the free list.
func putEncoder(enc *zstd.Encoder) {
	enc.Reset(nil)
	encoders.put(enc)
}

// getStreamDecoder returns a synchronous streaming decoder reading r.
func getStreamDecoder(r io.Reader) (*zstd.Decoder, error) {
	if dec, ok := streamDecoders.get(); ok {
		if err := dec.Reset(r); err != nil {
			dec.Close()
			return nil, fmt.Errorf("archive: zstd decoder: %w", err)
		}
		return dec, nil
	}
	dec, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxDecoded))
	if err != nil {
		return nil, fmt.Errorf("archive: zstd decoder: %w", err)
	}
	return dec, nil
}

func putStreamDecoder(dec *zstd.Decoder) {
	if err := dec.Reset(nil); err != nil {
		dec.Close()
		return
	}
	streamDecoders.put(dec)
}

// decodeAll decompresses data in memory with a decoder shared by every
// goroutine (DecodeAll is safe for concurrent use).
func decodeAll(data []byte) ([]byte, error) {
	sharedDecoderOnce.Do(func() {
		sharedDecoder, sharedDecoderErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxDecoded))
	})
	if sharedDecoderErr != nil {
		return nil, fmt.Errorf("archive: zstd decoder: %w", sharedDecoderErr)
	}
	out, err := sharedDecoder.DecodeAll(data, nil)
	if err != nil {
		return nil, fmt.Errorf("archive: decompress: %w", err)
	}
	return out, nil
}
