package c2prover

import (
	"fmt"

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
