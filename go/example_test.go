package c2prover_test

import (
	"fmt"
	"log"
	"os"

	c2prover "github.com/c2prover/c2prover/go"
)

// Loads parameters, proves the circuits of a witness file and verifies the
// proofs against their public inputs.
func Example() {
	params, err := c2prover.LoadParams("testdata/small.params", c2prover.WithCache())
	if err != nil {
		log.Fatal(err)
	}
	defer params.Close()

	f, err := os.Open("testdata/small.wit")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	circuits, err := c2prover.ReadWitness(f)
	if err != nil {
		log.Fatal(err)
	}

	// Prove in the background while doing other work, then collect.
	job, err := c2prover.ProveStart(params, circuits)
	if err != nil {
		log.Fatal(err)
	}
	defer job.Close()
	proofs, err := job.Finish()
	if err != nil {
		log.Fatal(err)
	}

	for i, proof := range proofs {
		ok, err := c2prover.Verify(params, circuits[i].Inputs[1:], proof)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("proof %d: %d bytes, valid: %v\n", i, len(proof), ok)
	}
	// Output:
	// proof 0: 192 bytes, valid: true
	// proof 1: 192 bytes, valid: true
	// proof 2: 192 bytes, valid: true
}
