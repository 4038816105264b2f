// Package c2prover makes Groth16 proofs over BLS12-381 for Filecoin (PoRep
// C2 and every bellperson circuit) with the c2prover library: on the GPU
// when the library was built with CUDA and a GPU is present, on the CPU
// otherwise. Proofs are bellperson's 192-byte encoding, byte-identical to
// bellperson's CPU prover for the same r and s.
//
// Build the library first (scripts/build-go.sh writes c2prover.pc here).
// Every handle has an explicit Close; finalizers only catch forgotten ones.
package c2prover

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"sync"
)

// ProofBytes is the size of one compressed proof.
const ProofBytes = 192

// Scalar is an element of the BLS12-381 scalar field: four little-endian
// 64-bit limbs in Montgomery form (blst's blst_fr, bellperson's witness
// values in memory), or a canonical little-endian integer with
// WithCanonicalScalars.
type Scalar [32]byte

// Assignment is one circuit's witness, as bellperson's prover records it:
// A, B and C evaluated at every constraint (the input constraints
// included), the input values (ONE first) and the aux values, and the
// density bitmaps (bit i of the vector in bit i%64 of word i/64): aux
// variables in A, inputs in B, aux variables in B.
type Assignment struct {
	AAuxDensity   []uint64
	BInputDensity []uint64
	BAuxDensity   []uint64
	A, B, C       []Scalar
	Inputs        []Scalar
	Aux           []Scalar
}

// checkLengths makes sure every vector the library reads through a pointer
// has the length it will read: B and C as long as A, and each density
// bitmap at least as long as its vector needs.
func (c *Assignment) checkLengths(i int) error {
	words := func(bits int) int { return (bits + 63) / 64 }
	switch {
	case len(c.B) != len(c.A) || len(c.C) != len(c.A):
		return &Error{Status: StatusSizeMismatch, Message: fmt.Sprintf("circuit %d: A, B and C have %d, %d and %d entries", i, len(c.A), len(c.B), len(c.C))}
	case len(c.AAuxDensity) < words(len(c.Aux)) || len(c.BAuxDensity) < words(len(c.Aux)):
		return &Error{Status: StatusSizeMismatch, Message: fmt.Sprintf("circuit %d: aux density bitmaps too short for %d aux values", i, len(c.Aux))}
	case len(c.BInputDensity) < words(len(c.Inputs)):
		return &Error{Status: StatusSizeMismatch, Message: fmt.Sprintf("circuit %d: input density bitmap too short for %d inputs", i, len(c.Inputs))}
	}
	return nil
}

func popcount(words []uint64) int {
	n := 0
	for _, w := range words {
		n += bits.OnesCount64(w)
	}
	return n
}

// Version is the c2prover library's version.
func Version() string { return libraryVersion() }

// ParamsInfo describes loaded parameters.
type ParamsInfo struct {
	DomainSize, NumInputs, NumAux           int
	ICLen, HLen, LLen, ALen, BG1Len, BG2Len int
	HostBytes, DeviceBytes                  uint64
}

// Params are loaded Groth16 parameters. Safe for concurrent use; Close
// waits for calls in progress.
type Params struct {
	mu  sync.RWMutex
	ptr *cParams
}

type paramsConfig struct {
	subgroup, cache bool
	onGPU           ParamsOnGPU
	deviceBudget    uint64
}

// ParamsOnGPU says where the parameters' points live when a GPU is used.
type ParamsOnGPU uint32

const (
	// ParamsOnGPUAuto keeps the points on the GPU when it has room and
	// streams them otherwise (C2P_PARAMS_ON_GPU in the environment may
	// choose instead).
	ParamsOnGPUAuto ParamsOnGPU = 0
	// ParamsOnGPUAlways uploads the points whatever the GPU's free memory.
	ParamsOnGPUAlways ParamsOnGPU = 1
	// ParamsOnGPUNever streams the points from host memory for every MSM.
	ParamsOnGPUNever ParamsOnGPU = 2
)

// ParamsOption configures LoadParams.
type ParamsOption func(*paramsConfig)

// WithSubgroupCheck also checks that every point is in the prime-order
// subgroup (slow on large files; counts, flags and the curve equation are
// always checked).
func WithSubgroupCheck() ParamsOption { return func(c *paramsConfig) { c.subgroup = true } }

// WithCache keeps the parameters in the library's process-wide cache
// (keyed by path, length and modification time) and reuses them on later
// loads of the same file.
func WithCache() ParamsOption { return func(c *paramsConfig) { c.cache = true } }

// WithParamsOnGPU chooses where the points live (default ParamsOnGPUAuto).
func WithParamsOnGPU(where ParamsOnGPU) ParamsOption {
	return func(c *paramsConfig) { c.onGPU = where }
}

// WithParamsDeviceBudget sets every GPU's device budget, in bytes, before the
// load: the library's device memory stays within it, and what stays resident
// is chosen to fit (0, the default, leaves it: C2P_DEVICE_BUDGET in the
// environment, else the device's memory less max(1 GiB, 1/32 of it)).
func WithParamsDeviceBudget(bytes uint64) ParamsOption {
	return func(c *paramsConfig) { c.deviceBudget = bytes }
}

// LoadParams loads a parameters file in bellperson's Parameters::write
// format (Filecoin's .params files).
func LoadParams(path string, opts ...ParamsOption) (*Params, error) {
	var cfg paramsConfig
	for _, o := range opts {
		o(&cfg)
	}
	ptr, err := paramsLoad(path, cfg)
	if err != nil {
		return nil, err
	}
	p := &Params{ptr: ptr}
	runtime.SetFinalizer(p, (*Params).Close)
	return p, nil
}

// Close releases the parameters (jobs already started keep what they
// need). Closing twice is a no-op.
func (p *Params) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ptr != nil {
		paramsFree(p.ptr)
		p.ptr = nil
		runtime.SetFinalizer(p, nil)
	}
	return nil
}

var errClosed = &Error{Status: StatusBadState, Message: "the parameters are closed"}

// use runs f with the handle, holding off Close.
func (p *Params) use(f func(*cParams) error) error {
	if p == nil {
		return &Error{Status: StatusNullPointer, Message: "nil *Params"}
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.ptr == nil {
		return errClosed
	}
	return f(p.ptr)
}

// Info describes the parameters.
func (p *Params) Info() (ParamsInfo, error) {
	var info ParamsInfo
	err := p.use(func(c *cParams) (err error) {
		info, err = paramsInfo(c)
		return err
	})
	return info, err
}

type proveConfig struct {
	r, s      []Scalar
	canonical bool
	noWait    bool
	devices   uint64
	budget    uint64
	sealProof *sealProof
}

// ProveOption configures Prove and ProveStart.
type ProveOption func(*proveConfig)

// WithRS fixes the blinding factors, one r and one s per circuit
// (deterministic proofs); without it they come from the OS's RNG.
func WithRS(r, s []Scalar) ProveOption {
	return func(c *proveConfig) { c.r, c.s = r, s }
}

// WithCanonicalScalars says the witness values, r and s are canonical
// little-endian integers (each below the field modulus), not Montgomery form.
func WithCanonicalScalars() ProveOption { return func(c *proveConfig) { c.canonical = true } }

// WithNoWait makes ProveStart fail with ErrBusy when the library's host
// memory budget for jobs in flight is full, instead of waiting for running
// jobs to end (backpressure; see SetHostBudget).
func WithNoWait() ProveOption { return func(c *proveConfig) { c.noWait = true } }

// WithDeviceMask limits the job to the GPUs whose bits are set (bit d for
// GPU d; 0, the default, means all); its circuits spread over them.
func WithDeviceMask(mask uint64) ProveOption { return func(c *proveConfig) { c.devices = mask } }

// WithDeviceBudget sets the device budget, in bytes, of the GPUs the job may
// use before it starts (0, the default, leaves it). A budget below what any
// plan needs fails with ErrOutOfMemory, the size it needs in the message.
func WithDeviceBudget(bytes uint64) ProveOption { return func(c *proveConfig) { c.budget = bytes } }

// SetHostBudget sets the host memory budget, in bytes, that bounds the jobs
// in flight; 0 restores the default (C2P_HOST_BUDGET in the environment,
// else half of the machine's memory).
func SetHostBudget(bytes uint64) { setHostBudget(bytes) }

// Budget describes the host memory budget: its limit, the bytes held by
// jobs in flight, and their number.
type Budget struct {
	LimitBytes, InUseBytes, Jobs uint64
}

// HostBudget reports the host memory budget.
func HostBudget() Budget { return hostBudget() }

// Job is a proof in progress, started by ProveStart.
type Job struct {
	mu       sync.Mutex
	ptr      *cJob
	circuits int
}

// ProveStart validates the circuits and starts proving them. It returns
// once the library has taken what it needs: the caller may reuse the
// circuits' memory at once. Finish the job, or Close it to cancel.
func ProveStart(p *Params, circuits []Assignment, opts ...ProveOption) (*Job, error) {
	var cfg proveConfig
	for _, o := range opts {
		o(&cfg)
	}
	if len(circuits) == 0 {
		return nil, &Error{Status: StatusInvalidArgument, Message: "no circuits"}
	}
	if (cfg.r == nil) != (cfg.s == nil) || (cfg.r != nil && (len(cfg.r) != len(circuits) || len(cfg.s) != len(circuits))) {
		return nil, &Error{Status: StatusInvalidArgument, Message: "WithRS needs one r and one s per circuit"}
	}
	if cfg.sealProof != nil {
		if err := cfg.sealProof.check(len(circuits)); err != nil {
			return nil, err
		}
	}
	for i := range circuits {
		if err := circuits[i].checkLengths(i); err != nil {
			return nil, err
		}
	}
	var job *Job
	err := p.use(func(c *cParams) error {
		ptr, err := proveStart(c, circuits, cfg)
		if err != nil {
			return err
		}
		job = &Job{ptr: ptr, circuits: len(circuits)}
		runtime.SetFinalizer(job, (*Job).Close)
		return nil
	})
	return job, err
}

// Finish waits for the job and returns one 192-byte proof per circuit. A
// job is finished once; afterwards Finish reports ErrBadState.
func (j *Job) Finish() ([][]byte, error) {
	j.mu.Lock()
	if j.ptr == nil {
		j.mu.Unlock()
		return nil, &Error{Status: StatusBadState, Message: "the job is finished or closed"}
	}
	ptr := j.ptr
	j.ptr = nil // the library consumes the job whatever Finish returns
	runtime.SetFinalizer(j, nil)
	j.mu.Unlock() // a concurrent Close is a no-op now; it need not wait
	return proveFinish(ptr, j.circuits)
}

// Close cancels the job if it is still running and releases it. Closing a
// finished or closed job is a no-op.
func (j *Job) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.ptr != nil {
		jobFree(j.ptr)
		j.ptr = nil
		runtime.SetFinalizer(j, nil)
	}
	return nil
}

// Prove proves the circuits and returns one 192-byte proof per circuit.
func Prove(p *Params, circuits []Assignment, opts ...ProveOption) ([][]byte, error) {
	job, err := ProveStart(p, circuits, opts...)
	if err != nil {
		return nil, err
	}
	defer job.Close()
	return job.Finish()
}

// Verify checks a proof against the public inputs (without the leading
// ONE). A well-formed proof that does not verify is (false, nil).
func Verify(p *Params, publicInputs []Scalar, proof []byte) (bool, error) {
	var valid bool
	err := p.use(func(c *cParams) (err error) {
		valid, err = verify(c, publicInputs, proof)
		return err
	})
	return valid, err
}

// IsStatus reports whether err is a c2prover error with this status.
func IsStatus(err error, s Status) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == s
}
