package c2prover

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// ReadWitness reads circuits' assignments from c2prover's witness file
// format ("C2PWIT01", written by `c2prover gen-srs --witness-out`).
func ReadWitness(r io.Reader) ([]Assignment, error) {
	br := bufio.NewReader(r)
	var magic [8]byte
	if _, err := io.ReadFull(br, magic[:]); err != nil || string(magic[:]) != "C2PWIT01" {
		return nil, &Error{Status: StatusInvalidArgument, Message: "not a c2prover witness file"}
	}
	// Elements per vector: above any real circuit (PoRep: ~2^27), and
	// vectors grow as data arrives, so a lying header costs no memory.
	const limit = 1 << 32
	u64 := func() (uint64, error) {
		var b [8]byte
		_, err := io.ReadFull(br, b[:])
		return binary.LittleEndian.Uint64(b[:]), err
	}
	n, err := u64()
	if err != nil || n > 1<<20 {
		return nil, &Error{Status: StatusInvalidArgument, Message: "bad circuit count"}
	}
	const step = 1 << 16 // elements allocated ahead of the data
	words := func(count uint64) ([]uint64, error) {
		w := make([]uint64, 0, min(count, step))
		var b [8]byte
		for uint64(len(w)) < count {
			if _, err := io.ReadFull(br, b[:]); err != nil {
				return nil, err
			}
			w = append(w, binary.LittleEndian.Uint64(b[:]))
		}
		return w, nil
	}
	scalars := func(count uint64) ([]Scalar, error) {
		v := make([]Scalar, 0, min(count, step))
		var x Scalar
		for uint64(len(v)) < count {
			if _, err := io.ReadFull(br, x[:]); err != nil {
				return nil, err
			}
			v = append(v, x)
		}
		return v, nil
	}
	var circuits []Assignment
	for i := uint64(0); i < n; i++ {
		var sizes [3]uint64
		for j := range sizes {
			if sizes[j], err = u64(); err != nil || sizes[j] > limit {
				return nil, &Error{Status: StatusInvalidArgument, Message: fmt.Sprintf("circuit %d: bad sizes", i)}
			}
		}
		nInputs, nAux, abc := sizes[0], sizes[1], sizes[2]
		var c Assignment
		fail := func(err error) ([]Assignment, error) {
			return nil, &Error{Status: StatusInvalidArgument, Message: fmt.Sprintf("circuit %d: %v", i, err)}
		}
		if c.AAuxDensity, err = words((nAux + 63) / 64); err != nil {
			return fail(err)
		}
		if c.BInputDensity, err = words((nInputs + 63) / 64); err != nil {
			return fail(err)
		}
		if c.BAuxDensity, err = words((nAux + 63) / 64); err != nil {
			return fail(err)
		}
		for _, dst := range []*[]Scalar{&c.A, &c.B, &c.C} {
			if *dst, err = scalars(abc); err != nil {
				return fail(err)
			}
		}
		if c.Inputs, err = scalars(nInputs); err != nil {
			return fail(err)
		}
		if c.Aux, err = scalars(nAux); err != nil {
			return fail(err)
		}
		circuits = append(circuits, c)
	}
	return circuits, nil
}
