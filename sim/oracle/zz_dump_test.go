package oracle

import (
	"context"
	"encoding/json"
	"os"
	"testing"
)

func TestZZDump(t *testing.T) {
	o := Options{Seed: 1, Keep: true}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Create(os.Getenv("DUMP"))
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, e := range res.Events {
		enc.Encode(e)
	}
	t.Log(res.Hash)
}
