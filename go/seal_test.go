package c2prover

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/filecoin-project/go-state-types/abi"
)

// The real 2 KiB sector of tests/fixtures/porep-2kib (miner 1000, sector 7).
const (
	fixtureMiner  abi.ActorID      = 1000
	fixtureSector abi.SectorNumber = 7
)

// sealFixture returns the 2 KiB C1 output and the directory of its
// parameters, which the Rust suite (tests/seal.rs) makes and caches; the
// test is skipped, and says so, when they are not there yet.
func sealFixture(t *testing.T) ([]byte, string) {
	t.Helper()
	c1, err := os.ReadFile("../tests/fixtures/porep-2kib/c1-api.json")
	if err != nil {
		t.Fatal(err)
	}
	cache := os.Getenv("C2P_TEST_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "c2prover")
	}
	dir := filepath.Join(cache, "filecoin-proof-parameters-2kib")
	if found, _ := filepath.Glob(filepath.Join(dir, "*.vk")); len(found) == 0 {
		t.Skipf("SKIPPED: no 2 KiB parameters in %s (cargo test --features porep --test seal makes them)", dir)
	}
	return c1, dir
}

func TestProverIDIsFilecoinFFIs(t *testing.T) {
	id, err := ProverID(fixtureMiner)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := hex.DecodeString("e807000000000000000000000000000000000000000000000000000000000000")
	if !bytes.Equal(id[:], want) {
		t.Fatalf("ProverID(1000) = %x, want %x", id, want)
	}
}

func TestSealCommitPhase2(t *testing.T) {
	c1, dir := sealFixture(t)
	// The library verifies every proof against the .vk before returning it.
	proof, err := SealCommitPhase2With(c1, fixtureSector, fixtureMiner, WithParamsDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(proof) != ProofBytes {
		t.Fatalf("%d bytes, want one partition's %d", len(proof), ProofBytes)
	}
	// For filecoin-proofs' own verify_seal, in the Rust suite (.ci/run).
	if out := os.Getenv("C2P_GO_PROOF_OUT"); out != "" {
		if err := os.WriteFile(out, proof, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	job, err := SealStart(c1, fixtureSector, fixtureMiner, WithParamsDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	for i := range c1 {
		c1[i] = 0 // the library holds its own copy
	}
	if proof, err = job.Finish(); err != nil || len(proof) != ProofBytes {
		t.Fatalf("split form: %d bytes, %v", len(proof), err)
	}
	if _, err = job.Finish(); !IsStatus(err, StatusBadState) {
		t.Fatalf("a second Finish: %v", err)
	}
	job.Close()
}

func TestSealCommitPhase2Errors(t *testing.T) {
	c1, dir := sealFixture(t)
	_, err := SealCommitPhase2With(c1, fixtureSector+1, fixtureMiner, WithParamsDir(dir))
	if !IsStatus(err, StatusInvalidArgument) {
		t.Fatalf("another sector number: %v", err)
	}
	_, err = SealCommitPhase2With(c1[:len(c1)/2], fixtureSector, fixtureMiner, WithParamsDir(dir))
	if !IsStatus(err, StatusInvalidArgument) {
		t.Fatalf("truncated JSON: %v", err)
	}
	_, err = SealCommitPhase2With(c1, fixtureSector, fixtureMiner, WithParamsDir(t.TempDir()))
	if !IsStatus(err, StatusIO) {
		t.Fatalf("no parameters: %v", err)
	}
	job, err := SealStart(c1, fixtureSector, fixtureMiner, WithParamsDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	job.Close() // cancels
	if _, err = job.Finish(); !IsStatus(err, StatusBadState) {
		t.Fatalf("Finish after Close: %v", err)
	}

	// Close while another goroutine waits in Finish cancels the wait.
	job, err = SealStart(c1, fixtureSector, fixtureMiner, WithParamsDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { _, err := job.Finish(); done <- err }()
	time.Sleep(200 * time.Millisecond) // Finish is waiting: synthesis alone takes seconds
	job.Close()
	if err = <-done; !IsStatus(err, StatusCancelled) {
		t.Fatalf("Finish cancelled by Close: %v", err)
	}
	if _, err = SealCommitPhase2With(c1, fixtureSector, fixtureMiner, WithParamsDir(dir+"\x00x")); !IsStatus(err, StatusInvalidArgument) {
		t.Fatalf("a NUL in the directory: %v", err)
	}
}
