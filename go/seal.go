package c2prover

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/filecoin-project/go-address"
	"github.com/filecoin-project/go-state-types/abi"
)

// PoRepPartitions is the number of circuits (partitions) in one PoRep C2
// proof of this seal proof type: 10 for 32 and 64 GiB sectors, 1 for the
// small test sizes. Non-interactive PoRep types are not supported.
func PoRepPartitions(proof abi.RegisteredSealProof) (int, error) {
	if proof >= abi.RegisteredSealProof_StackedDrg2KiBV1_2_Feat_NiPoRep {
		return 0, &Error{Status: StatusUnsupported, Message: fmt.Sprintf("seal proof type %d (non-interactive PoRep)", proof)}
	}
	size, err := proof.SectorSize()
	if err != nil {
		return 0, &Error{Status: StatusInvalidArgument, Message: err.Error()}
	}
	if size >= 32<<30 {
		return 10, nil
	}
	return 1, nil
}

type sealProof struct{ proof abi.RegisteredSealProof }

func (s *sealProof) check(circuits int) error {
	want, err := PoRepPartitions(s.proof)
	if err != nil {
		return err
	}
	if circuits != want {
		return &Error{Status: StatusSizeMismatch, Message: fmt.Sprintf("a PoRep C2 proof of seal proof type %d has %d partitions, got %d circuits", s.proof, want, circuits)}
	}
	return nil
}

// WithSealProof says the circuits are the partitions of one PoRep C2 proof
// of this type; their number is checked before any work starts.
func WithSealProof(proof abi.RegisteredSealProof) ProveOption {
	return func(c *proveConfig) { c.sealProof = &sealProof{proof} }
}

// ProverID is filecoin-ffi's prover id for a miner: the payload of the
// miner's ID address, zero-padded to 32 bytes.
func ProverID(minerID abi.ActorID) ([32]byte, error) {
	var id [32]byte
	maddr, err := address.NewIDAddress(uint64(minerID))
	if err != nil {
		return id, &Error{Status: StatusInvalidArgument, Message: fmt.Sprintf("miner id %d: %v", minerID, err)}
	}
	copy(id[:], maddr.Payload())
	return id, nil
}

// SealOption changes how a C2 job runs (SealCommitPhase2With, SealStart).
type SealOption func(*sealConfig)

type sealConfig struct {
	paramsDir  string
	devices    uint64
	noWait     bool
	skipVerify bool
}

// WithParamsDir names the directory of the parameters and verifying keys
// (filecoin-proofs' file names). Default: $FIL_PROOFS_PARAMETER_CACHE, else
// /var/tmp/filecoin-proof-parameters.
func WithParamsDir(dir string) SealOption { return func(c *sealConfig) { c.paramsDir = dir } }

// WithSealDeviceMask limits the job to the GPUs of the mask (bit d for GPU
// d; 0, the default, means all).
func WithSealDeviceMask(mask uint64) SealOption { return func(c *sealConfig) { c.devices = mask } }

// WithSealNoWait fails with StatusBusy instead of waiting when the host
// memory budget cannot take the job's first partition now.
func WithSealNoWait() SealOption { return func(c *sealConfig) { c.noWait = true } }

// WithoutVerify skips verify-after-prove (by default every partition's proof
// is checked against the .vk beside the parameters before it is returned).
func WithoutVerify() SealOption { return func(c *sealConfig) { c.skipVerify = true } }

// SealCommitPhase2 is filecoin-ffi's SealCommitPhase2: the proof of a
// sector from its C1 output (filecoin-proofs-api's SealCommitPhase1Output
// as JSON), 192 bytes per partition.
func SealCommitPhase2(phase1Output []byte, sectorNum abi.SectorNumber, minerID abi.ActorID) ([]byte, error) {
	return SealCommitPhase2With(phase1Output, sectorNum, minerID)
}

// SealCommitPhase2With is SealCommitPhase2 with options.
func SealCommitPhase2With(phase1Output []byte, sectorNum abi.SectorNumber, minerID abi.ActorID, opts ...SealOption) ([]byte, error) {
	job, err := SealStart(phase1Output, sectorNum, minerID, opts...)
	if err != nil {
		return nil, err
	}
	defer job.Close()
	return job.Finish()
}

// SealJob is a C2 job of the split API.
type SealJob struct {
	mu        sync.Mutex
	ptr       *cSealJob
	finishing bool // a Finish is waiting for the library
}

// SealStart checks the C1 output and starts its C2 job. It returns once
// the library holds its own copy of the input: the caller may reuse
// phase1Output at once. Finish the job, or Close it to cancel.
func SealStart(phase1Output []byte, sectorNum abi.SectorNumber, minerID abi.ActorID, opts ...SealOption) (*SealJob, error) {
	var cfg sealConfig
	for _, o := range opts {
		o(&cfg)
	}
	if strings.IndexByte(cfg.paramsDir, 0) >= 0 {
		return nil, &Error{Status: StatusInvalidArgument, Message: "the parameters directory holds a NUL byte"}
	}
	proverID, err := ProverID(minerID)
	if err != nil {
		return nil, err
	}
	ptr, err := sealStart(phase1Output, proverID, uint64(sectorNum), cfg)
	if err != nil {
		return nil, err
	}
	job := &SealJob{ptr: ptr}
	runtime.SetFinalizer(job, (*SealJob).Close)
	return job, nil
}

// Finish waits for the proof. A job is finished once; afterwards Finish
// reports StatusBadState.
func (j *SealJob) Finish() ([]byte, error) {
	j.mu.Lock()
	if j.ptr == nil || j.finishing {
		j.mu.Unlock()
		return nil, &Error{Status: StatusBadState, Message: "the C2 job is finished, being finished or closed"}
	}
	j.finishing = true
	ptr := j.ptr
	runtime.SetFinalizer(j, nil)
	j.mu.Unlock() // Close may cancel the wait meanwhile
	proof, err := sealFinish(ptr)
	j.mu.Lock()
	j.ptr = nil // the library consumed the job whatever it returned
	j.mu.Unlock()
	return proof, err
}

// Close cancels the job if it is still running, even while another
// goroutine waits in Finish (which then reports StatusCancelled), and
// releases it. Closing a finished or closed job is a no-op.
func (j *SealJob) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.ptr == nil {
		return nil
	}
	sealJobFree(j.ptr) // during a Finish: cancels it; Finish releases the job
	if !j.finishing {
		j.ptr = nil
		runtime.SetFinalizer(j, nil)
	}
	return nil
}
