package c2prover

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/filecoin-project/go-state-types/abi"
)

// The fixture: three circuits of 2^10 constraints and their parameters,
// written by scripts/build-go.sh (c2prover gen-srs).
const (
	paramsPath  = "testdata/small.params"
	witnessPath = "testdata/small.wit"
)

func fixture(t *testing.T) (*Params, []Assignment) {
	t.Helper()
	p, err := LoadParams(paramsPath)
	if err != nil {
		t.Fatalf("LoadParams: %v (run scripts/build-go.sh first)", err)
	}
	t.Cleanup(func() { p.Close() })
	f, err := os.Open(witnessPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	circuits, err := ReadWitness(f)
	if err != nil {
		t.Fatal(err)
	}
	return p, circuits
}

// blinding gives valid r, s values: below 2^248, so below the modulus.
func blinding(n int, seed byte) (r, s []Scalar) {
	r, s = make([]Scalar, n), make([]Scalar, n)
	for i := range r {
		for j := 0; j < 31; j++ {
			r[i][j] = seed + byte(i*7+j)
			s[i][j] = seed ^ byte(i*13+j*3+1)
		}
	}
	return r, s
}

func publicInputs(c Assignment) []Scalar { return c.Inputs[1:] }

func TestProveAndVerify(t *testing.T) {
	p, circuits := fixture(t)
	r, s := blinding(len(circuits), 1)
	proofs, err := Prove(p, circuits, WithRS(r, s))
	if err != nil {
		t.Fatal(err)
	}
	if len(proofs) != len(circuits) {
		t.Fatalf("%d proofs for %d circuits", len(proofs), len(circuits))
	}
	for i, proof := range proofs {
		if len(proof) != ProofBytes {
			t.Fatalf("proof %d has %d bytes", i, len(proof))
		}
		ok, err := Verify(p, publicInputs(circuits[i]), proof)
		if err != nil || !ok {
			t.Fatalf("proof %d: valid=%v err=%v", i, ok, err)
		}
		wrong := append([]Scalar(nil), publicInputs(circuits[i])...)
		wrong[0][0] ^= 1
		if ok, err := Verify(p, wrong, proof); err != nil || ok {
			t.Fatalf("proof %d verified a wrong public input: valid=%v err=%v", i, ok, err)
		}
	}
	again, err := Prove(p, circuits, WithRS(r, s))
	if err != nil {
		t.Fatal(err)
	}
	for i := range proofs {
		if !bytes.Equal(proofs[i], again[i]) {
			t.Fatalf("proof %d differs between two runs with the same r and s", i)
		}
	}
	random, err := Prove(p, circuits[:1])
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := Verify(p, publicInputs(circuits[0]), random[0]); err != nil || !ok {
		t.Fatalf("a proof with random r, s: valid=%v err=%v", ok, err)
	}
	info, err := p.Info()
	if err != nil || info.DomainSize != 1024 || info.NumInputs != len(circuits[0].Inputs) || info.LLen != len(circuits[0].Aux) {
		t.Fatalf("Info: %+v, %v", info, err)
	}
}

func TestSplitAPI(t *testing.T) {
	p, circuits := fixture(t)
	r, s := blinding(len(circuits), 2)
	want, err := Prove(p, circuits, WithRS(r, s))
	if err != nil {
		t.Fatal(err)
	}
	// The caller's memory may be reused as soon as ProveStart returns.
	copies := make([]Assignment, len(circuits))
	for i, c := range circuits {
		copies[i] = c
		copies[i].A = append([]Scalar(nil), c.A...)
	}
	job, err := ProveStart(p, copies, WithRS(r, s))
	if err != nil {
		t.Fatal(err)
	}
	for i := range copies {
		for j := range copies[i].A {
			copies[i].A[j] = Scalar{}
		}
	}
	got, err := job.Finish()
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if !bytes.Equal(want[i], got[i]) {
			t.Fatalf("split proof %d differs from Prove's", i)
		}
	}
	if _, err := job.Finish(); !errors.Is(err, ErrBadState) {
		t.Fatalf("second Finish: %v", err)
	}
	if err := job.Close(); err != nil {
		t.Fatal(err)
	}
	// Closing a job that was not finished cancels it; Finish then fails.
	job, err = ProveStart(p, circuits)
	if err != nil {
		t.Fatal(err)
	}
	job.Close()
	job.Close()
	if _, err := job.Finish(); !errors.Is(err, ErrBadState) {
		t.Fatalf("Finish after Close: %v", err)
	}
}

func TestHostBudget(t *testing.T) {
	p, circuits := fixture(t)
	// A job closed unfinished by an earlier test gives its memory back when
	// its worker notices the cancellation, which may be a moment later.
	for deadline := time.Now().Add(time.Minute); HostBudget().Jobs != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("jobs still hold the budget: %+v", HostBudget())
		}
		time.Sleep(10 * time.Millisecond)
	}
	def := HostBudget().LimitBytes
	if def == 0 {
		t.Fatal("no default budget")
	}
	// A budget smaller than any job still runs jobs one at a time.
	SetHostBudget(1)
	defer SetHostBudget(0)
	if got := HostBudget().LimitBytes; got != 1 {
		t.Fatalf("limit %d after SetHostBudget(1)", got)
	}
	job, err := ProveStart(p, circuits, WithNoWait(), WithDeviceMask(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := job.Finish(); err != nil {
		t.Fatal(err)
	}
	SetHostBudget(0)
	b := HostBudget()
	if b.LimitBytes != def || b.InUseBytes != 0 || b.Jobs != 0 {
		t.Fatalf("budget after the job and a reset: %+v (default %d)", b, def)
	}
}

func TestErrors(t *testing.T) {
	p, circuits := fixture(t)
	check := func(what string, err error, want *Error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Fatalf("%s: got %v, want status %v", what, err, want.Status)
		}
		var e *Error
		if !errors.As(err, &e) || e.Message == "" {
			t.Fatalf("%s: %v carries no message", what, err)
		}
	}
	_, err := LoadParams(filepath.Join(t.TempDir(), "missing.params"))
	check("missing file", err, ErrIO)

	data, err := os.ReadFile(paramsPath)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(t.TempDir(), "truncated.params")
	if err := os.WriteFile(truncated, data[:len(data)-100], 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadParams(truncated)
	check("truncated file", err, ErrParamsFormat)

	_, err = LoadParams(paramsPath, WithParamsOnGPU(ParamsOnGPU(7)))
	check("an unknown residency", err, ErrInvalidArgument)

	_, err = Prove(p, nil)
	check("no circuits", err, ErrInvalidArgument)
	r, s := blinding(1, 3)
	_, err = Prove(p, circuits, WithRS(r, s))
	check("one r for three circuits", err, ErrInvalidArgument)

	short := circuits[0]
	short.Aux = short.Aux[:len(short.Aux)-1]
	_, err = Prove(p, []Assignment{short})
	check("an aux vector one short", err, ErrSizeMismatch)
	shortC := circuits[0]
	shortC.C = shortC.C[:len(shortC.C)-1]
	_, err = Prove(p, []Assignment{shortC})
	check("C shorter than A", err, ErrSizeMismatch)
	shortBits := circuits[0]
	shortBits.BAuxDensity = shortBits.BAuxDensity[:len(shortBits.BAuxDensity)-1]
	_, err = Prove(p, []Assignment{shortBits})
	check("a B aux bitmap too short", err, ErrSizeMismatch)
	lying := append([]byte("C2PWIT01"), 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	_, err = ReadWitness(bytes.NewReader(lying))
	check("a header claiming 2^52 aux values", err, ErrInvalidArgument)
	_, err = ReadWitness(bytes.NewReader(append([]byte("C2PWIT01"), 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0)))
	check("a header claiming 2^24 aux values with no data", err, ErrInvalidArgument)

	unreduced := circuits[0]
	unreduced.Aux = append([]Scalar(nil), unreduced.Aux...)
	for j := range unreduced.Aux[0] {
		unreduced.Aux[len(unreduced.Aux)-1][j] = 0xff
	}
	_, err = Prove(p, []Assignment{unreduced})
	check("an aux value above the modulus", err, ErrInvalidArgument)
	if want := fmt.Sprintf("circuits[0].aux[%d] is not below the field modulus", len(unreduced.Aux)-1); !strings.Contains(err.Error(), want) {
		t.Fatalf("the message %q does not say %q", err.Error(), want)
	}

	_, err = Prove(p, circuits, WithSealProof(abi.RegisteredSealProof_StackedDrg32GiBV1_1))
	check("three circuits for a 32 GiB PoRep", err, ErrSizeMismatch)
	if n, err := PoRepPartitions(abi.RegisteredSealProof_StackedDrg64GiBV1_1); n != 10 || err != nil {
		t.Fatalf("64 GiB partitions: %d, %v", n, err)
	}
	_, err = PoRepPartitions(abi.RegisteredSealProof_StackedDrg32GiBV1_2_Feat_NiPoRep)
	check("NI-PoRep", err, ErrUnsupported)

	proofs, err := Prove(p, circuits[:1])
	if err != nil {
		t.Fatal(err)
	}
	_, err = Verify(p, publicInputs(circuits[0]), proofs[0][:100])
	check("a short proof", err, ErrSizeMismatch)
	_, err = Verify(p, publicInputs(circuits[0])[1:], proofs[0])
	check("too few public inputs", err, ErrSizeMismatch)

	_, err = ReadWitness(bytes.NewReader([]byte("not a witness file")))
	check("a witness file of garbage", err, ErrInvalidArgument)

	closed, err := LoadParams(paramsPath)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	closed.Close()
	_, err = Prove(closed, circuits)
	check("closed parameters", err, ErrBadState)
	_, err = closed.Info()
	check("Info on closed parameters", err, ErrBadState)
}

func TestConcurrentUse(t *testing.T) {
	p, circuits := fixture(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for k := 0; k < 3; k++ {
				c := circuits[(g+k)%len(circuits)]
				proofs, err := Prove(p, []Assignment{c})
				if err != nil {
					errs <- err
					return
				}
				if ok, err := Verify(p, publicInputs(c), proofs[0]); err != nil || !ok {
					errs <- errors.Join(errors.New("a proof made concurrently does not verify"), err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestStatusNames(t *testing.T) {
	for status, want := range map[Status]string{
		StatusNullPointer: "C2P_ERR_NULL_POINTER",
		StatusIO:          "C2P_ERR_IO",
		StatusUnsupported: "C2P_ERR_UNSUPPORTED",
		Status(99):        "C2P_UNKNOWN_STATUS",
	} {
		if got := status.String(); got != want {
			t.Errorf("Status(%d).String() = %q, want %q", int32(status), got, want)
		}
	}
	if !errors.Is(&Error{Status: StatusNullPointer, Message: "x"}, ErrNullPointer) {
		t.Error("ErrNullPointer matches a null-pointer error")
	}
}
