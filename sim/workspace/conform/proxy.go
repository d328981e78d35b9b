package conform

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// proxyMode is what a proxy does with traffic.
type proxyMode int

const (
	// modePass forwards every byte.
	modePass proxyMode = iota
	// modeBlackhole holds every byte in both directions and accepts new
	// connections without forwarding them: a silent partition (neither
	// side sees a reset; the server ends the session only by its own
	// timeouts).
	modeBlackhole
	// modeRefuse closes every connection and refuses new ones: an outage
	// the client sees at once.
	modeRefuse
	// modeSlow forwards with a delay before each chunk.
	modeSlow
)

// proxy is a TCP proxy on loopback that the run creates in front of a
// service, so that it can partition one instance from it, cut it off or
// slow it down (SPEC's services are reached only through it).
type proxy struct {
	name     string
	upstream string
	ln       net.Listener

	mu    sync.Mutex
	cond  *sync.Cond
	mode  proxyMode
	delay time.Duration
	conns map[*proxyConn]struct{}
	wg    sync.WaitGroup
	done  chan struct{}
}

type proxyConn struct{ client, server net.Conn }

func (c *proxyConn) close() {
	_ = c.client.Close()
	_ = c.server.Close()
}

// newProxy listens on 127.0.0.1 (a free port) and forwards to upstream.
func newProxy(name, upstream string) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{name: name, upstream: upstream, ln: ln, conns: map[*proxyConn]struct{}{}, done: make(chan struct{})}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *proxy) Addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse := p.mode == modeRefuse
		p.mu.Unlock()
		if refuse {
			_ = c.Close()
			continue
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *proxy) serve(client net.Conn) {
	defer p.wg.Done()
	// A blackholed proxy accepts but does not connect until it heals.
	if !p.waitForward() {
		_ = client.Close()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	server, err := (&net.Dialer{}).DialContext(ctx, "tcp", p.upstream)
	cancel()
	if err != nil {
		_ = client.Close()
		return
	}
	pc := &proxyConn{client: client, server: server}
	p.mu.Lock()
	if p.mode == modeRefuse {
		p.mu.Unlock()
		pc.close()
		return
	}
	p.conns[pc] = struct{}{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(server, client); pc.close() }()
	go func() { defer wg.Done(); p.pipe(client, server); pc.close() }()
	wg.Wait()
	p.mu.Lock()
	delete(p.conns, pc)
	p.mu.Unlock()
}

// waitForward blocks while the proxy is blackholed; false once it is
// closed or refusing.
func (p *proxy) waitForward() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.mode == modeBlackhole {
		select {
		case <-p.done:
			return false
		default:
		}
		p.cond.Wait()
	}
	select {
	case <-p.done:
		return false
	default:
	}
	return p.mode != modeRefuse
}

func (p *proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.waitForward() {
				return
			}
			p.mu.Lock()
			d := time.Duration(0)
			if p.mode == modeSlow {
				d = p.delay
			}
			p.mu.Unlock()
			if d > 0 {
				select {
				case <-time.After(d): // the fault itself: a slow link, not synchronisation
				case <-p.done:
					return
				}
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return
			}
			if tc, ok := dst.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			return
		}
	}
}

// set changes the mode; refuse also closes every open connection.
func (p *proxy) set(m proxyMode, delay time.Duration) {
	p.mu.Lock()
	p.mode, p.delay = m, delay
	var open []*proxyConn
	if m == modeRefuse {
		for c := range p.conns {
			open = append(open, c)
		}
	}
	p.cond.Broadcast()
	p.mu.Unlock()
	for _, c := range open {
		c.close()
	}
}

// dropAll closes every open connection (a restarted server), leaving the
// mode as it is.
func (p *proxy) dropAll() {
	p.mu.Lock()
	var open []*proxyConn
	for c := range p.conns {
		open = append(open, c)
	}
	p.mu.Unlock()
	for _, c := range open {
		c.close()
	}
}

// Close stops the proxy and closes its connections.
func (p *proxy) Close() {
	p.mu.Lock()
	select {
	case <-p.done:
	default:
		close(p.done)
	}
	p.cond.Broadcast()
	p.mu.Unlock()
	_ = p.ln.Close()
	p.dropAll()
	p.wg.Wait()
}
