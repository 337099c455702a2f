package main

import (
	"github.com/opcheck/opcheck/explore"
	"github.com/opcheck/opcheck/targets"
)

func main() { explore.Main(targets.All()...) }
