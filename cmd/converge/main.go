package main

import "github.com/wsconverge/converge/cmd/converge/cli"

func main() { cli.Main() }
