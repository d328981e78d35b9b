package main

import (
	"github.com/wsconverge/converge/cmd/converge/cli"
	"github.com/wsconverge/converge/cmd/converge/realcli"
)

func main() { cli.Main(cli.WithCommands(realcli.Serve, realcli.Conform)) }
