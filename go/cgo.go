package c2prover

// The only file that imports "C". scripts/build-go.sh builds the static
// library and writes c2prover.pc next to this file (as filecoin-ffi does
// with filcrypto.pc).

/*
#cgo pkg-config: ${SRCDIR}/c2prover.pc
#include <stdlib.h>
#include "c2prover.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// The status codes, as the header names them (its enum C2P_ERR, generated
// from the library's one list).
const (
	StatusNullPointer     Status = C.C2P_ERR_NULL_POINTER
	StatusInvalidArgument Status = C.C2P_ERR_INVALID_ARGUMENT
	StatusIO              Status = C.C2P_ERR_IO
	StatusParamsFormat    Status = C.C2P_ERR_PARAMS_FORMAT
	StatusSizeMismatch    Status = C.C2P_ERR_SIZE_MISMATCH
	StatusOutOfMemory     Status = C.C2P_ERR_OUT_OF_MEMORY
	StatusGPU             Status = C.C2P_ERR_GPU
	StatusBusy            Status = C.C2P_ERR_BUSY
	StatusCancelled       Status = C.C2P_ERR_CANCELLED
	StatusBadState        Status = C.C2P_ERR_BAD_STATE
	StatusPanic           Status = C.C2P_ERR_PANIC
	StatusUnsupported     Status = C.C2P_ERR_UNSUPPORTED
)

// call runs f (one C call) on a locked OS thread and turns a non-zero
// status into an *Error with the library's message: the message is kept per
// thread, so the goroutine must not move between the call and the read.
func call(f func() C.int32_t) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	status := f()
	if status == C.C2P_OK {
		return nil
	}
	return &Error{Status: Status(status), Message: lastError()}
}

func lastError() string {
	n := C.c2p_last_error(nil, 0)
	if n == 0 {
		return ""
	}
	buf := make([]byte, int(n)+1)
	C.c2p_last_error((*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
	return string(buf[:n])
}

func statusName(s Status) string { return C.GoString(C.c2p_status_name(C.int32_t(s))) }

func libraryVersion() string { return C.GoString(C.c2p_version()) }

type cParams = C.struct_c2p_params
type cJob = C.struct_c2p_job

func paramsLoad(path string, cfg paramsConfig) (*cParams, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	opts := C.struct_c2p_params_options{
		check_subgroup: C.bool(cfg.subgroup),
		use_cache:      C.bool(cfg.cache),
		params_on_gpu:  C.uint32_t(cfg.onGPU),
		device_budget:  C.uint64_t(cfg.deviceBudget),
	}
	var out *cParams
	err := call(func() C.int32_t { return C.c2p_params_load(cpath, &opts, &out) })
	return out, err
}

func paramsFree(p *cParams) { C.c2p_params_free(p) }

func setHostBudget(bytes uint64) { C.c2p_set_host_budget(C.uint64_t(bytes)) }

func hostBudget() Budget {
	var info C.struct_c2p_budget_info
	C.c2p_host_budget(&info)
	return Budget{LimitBytes: uint64(info.limit_bytes), InUseBytes: uint64(info.in_use_bytes), Jobs: uint64(info.jobs)}
}

func paramsInfo(p *cParams) (ParamsInfo, error) {
	var info C.struct_c2p_params_info
	if err := call(func() C.int32_t { return C.c2p_params_info(p, &info) }); err != nil {
		return ParamsInfo{}, err
	}
	return ParamsInfo{
		DomainSize:  int(info.domain_size),
		NumInputs:   int(info.num_inputs),
		NumAux:      int(info.num_aux),
		ICLen:       int(info.ic_len),
		HLen:        int(info.h_len),
		LLen:        int(info.l_len),
		ALen:        int(info.a_len),
		BG1Len:      int(info.b_g1_len),
		BG2Len:      int(info.b_g2_len),
		HostBytes:   uint64(info.host_bytes),
		DeviceBytes: uint64(info.device_bytes),
	}, nil
}

// cAssignments lays the circuits out as C structures in C memory, pointing
// at the circuits' own Go slices, which the pinner keeps in place until the
// caller unpins it (after the C call: c2prover copies what it keeps).
func cAssignments(circuits []Assignment, pinner *runtime.Pinner) *C.struct_c2p_assignment {
	size := C.size_t(len(circuits)) * C.size_t(unsafe.Sizeof(C.struct_c2p_assignment{}))
	array := (*C.struct_c2p_assignment)(C.calloc(1, size))
	if array == nil {
		return nil
	}
	out := unsafe.Slice(array, len(circuits))
	words := func(w []uint64) *C.uint64_t {
		if len(w) == 0 {
			return nil
		}
		pinner.Pin(&w[0])
		return (*C.uint64_t)(unsafe.Pointer(&w[0]))
	}
	scalars := func(v []Scalar) *C.struct_c2p_fr {
		if len(v) == 0 {
			return nil
		}
		pinner.Pin(&v[0])
		return (*C.struct_c2p_fr)(unsafe.Pointer(&v[0]))
	}
	for i := range circuits {
		c := &circuits[i]
		out[i] = C.struct_c2p_assignment{
			a_aux_density:       words(c.AAuxDensity),
			a_aux_bit_len:       C.size_t(len(c.Aux)),
			a_aux_popcount:      C.size_t(popcount(c.AAuxDensity)),
			b_inp_density:       words(c.BInputDensity),
			b_inp_bit_len:       C.size_t(len(c.Inputs)),
			b_inp_popcount:      C.size_t(popcount(c.BInputDensity)),
			b_aux_density:       words(c.BAuxDensity),
			b_aux_bit_len:       C.size_t(len(c.Aux)),
			b_aux_popcount:      C.size_t(popcount(c.BAuxDensity)),
			a:                   scalars(c.A),
			b:                   scalars(c.B),
			c:                   scalars(c.C),
			abc_size:            C.size_t(len(c.A)),
			inp_assignment_data: scalars(c.Inputs),
			inp_assignment_size: C.size_t(len(c.Inputs)),
			aux_assignment_data: scalars(c.Aux),
			aux_assignment_size: C.size_t(len(c.Aux)),
		}
	}
	return array
}

func scalarPtr(v []Scalar) *C.uint8_t {
	if len(v) == 0 {
		return nil
	}
	return (*C.uint8_t)(unsafe.Pointer(&v[0]))
}

// proveStart validates the circuits and starts a job; the C side has copied
// every input it needs when it returns.
func proveStart(p *cParams, circuits []Assignment, cfg proveConfig) (*cJob, error) {
	r, s := cfg.r, cfg.s
	var pinner runtime.Pinner
	defer pinner.Unpin()
	array := cAssignments(circuits, &pinner)
	if array == nil {
		return nil, &Error{Status: StatusOutOfMemory, Message: "cannot allocate the circuit descriptors"}
	}
	defer C.free(unsafe.Pointer(array))
	opts := C.struct_c2p_prove_options{
		canonical_scalars: C.bool(cfg.canonical),
		no_wait:           C.bool(cfg.noWait),
		device_mask:       C.uint64_t(cfg.devices),
		device_budget:     C.uint64_t(cfg.budget),
	}
	var out *cJob
	err := call(func() C.int32_t {
		return C.c2p_prove_start(p, array, C.size_t(len(circuits)), scalarPtr(r), scalarPtr(s), &opts, &out)
	})
	runtime.KeepAlive(circuits)
	runtime.KeepAlive(r)
	runtime.KeepAlive(s)
	return out, err
}

func proveFinish(j *cJob, n int) ([][]byte, error) {
	buf := make([]byte, n*ProofBytes)
	var ptr *C.uint8_t
	if len(buf) > 0 {
		ptr = (*C.uint8_t)(unsafe.Pointer(&buf[0]))
	}
	if err := call(func() C.int32_t { return C.c2p_prove_finish(j, ptr, C.size_t(len(buf))) }); err != nil {
		return nil, err
	}
	proofs := make([][]byte, n)
	for i := range proofs {
		proofs[i] = buf[i*ProofBytes : (i+1)*ProofBytes : (i+1)*ProofBytes]
	}
	return proofs, nil
}

func jobFree(j *cJob) { C.c2p_job_free(j) }

func verify(p *cParams, publicInputs []Scalar, proof []byte) (bool, error) {
	var valid C.bool
	var proofPtr *C.uint8_t
	if len(proof) > 0 {
		proofPtr = (*C.uint8_t)(unsafe.Pointer(&proof[0]))
	}
	if len(proof) != ProofBytes {
		return false, &Error{Status: StatusSizeMismatch, Message: "a proof is 192 bytes"}
	}
	err := call(func() C.int32_t {
		return C.c2p_verify(p, scalarPtr(publicInputs), C.size_t(len(publicInputs)), proofPtr, &valid)
	})
	runtime.KeepAlive(publicInputs)
	runtime.KeepAlive(proof)
	return bool(valid), err
}

type cSealJob = C.struct_c2p_seal_job

// sealStart starts a C2 job; the library has copied the C1 output when it
// returns.
func sealStart(c1 []byte, proverID [32]byte, sectorID uint64, cfg sealConfig) (*cSealJob, error) {
	opts := C.struct_c2p_seal_options{
		device_mask: C.uint64_t(cfg.devices),
		no_wait:     C.bool(cfg.noWait),
		skip_verify: C.bool(cfg.skipVerify),
	}
	if cfg.paramsDir != "" {
		dir := C.CString(cfg.paramsDir)
		defer C.free(unsafe.Pointer(dir))
		opts.params_dir = dir
	}
	var json *C.uint8_t
	if len(c1) > 0 {
		json = (*C.uint8_t)(unsafe.Pointer(&c1[0]))
	}
	var out *cSealJob
	err := call(func() C.int32_t {
		return C.c2p_seal_start(json, C.size_t(len(c1)), (*C.uint8_t)(unsafe.Pointer(&proverID[0])), C.uint64_t(sectorID), &opts, &out)
	})
	runtime.KeepAlive(c1)
	return out, err
}

// sealFinish waits for a C2 job and copies its proof into Go memory.
func sealFinish(j *cSealJob) ([]byte, error) {
	var ptr *C.uint8_t
	var n C.size_t
	if err := call(func() C.int32_t { return C.c2p_seal_finish(j, &ptr, &n) }); err != nil {
		return nil, err
	}
	defer C.c2p_bytes_free(ptr, n)
	return C.GoBytes(unsafe.Pointer(ptr), C.int(n)), nil
}

func sealJobFree(j *cSealJob) { C.c2p_seal_job_free(j) }
