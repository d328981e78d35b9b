// Command acme-converge is converge's CLI with acme's control plane
// registered next to the reference: `acme-converge sim --system acme`
// judges it, `acme-converge replay FILE` replays a failing run of it.
package main

import (
	"github.com/wsconverge/converge/cmd/converge/cli"

	"example.com/acme/acme"
)

func main() {
	cli.Main(cli.WithSystem("acme", acme.NewSystem))
}
