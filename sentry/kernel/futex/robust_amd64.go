package futex

import "encoding/binary"

// The layout of struct robust_list_head on amd64:
//
//	struct robust_list_head {
//		struct robust_list *list.next; // offset 0
//		long futex_offset;             // offset 8
//		struct robust_list *list_op_pending; // offset 16
//	};
const (
	// RobustListHeadSize is sizeof(struct robust_list_head), the only
	// length set_robust_list(2) accepts.
	RobustListHeadSize = 24

	robustWordSize      = 8
	robustOffsetOffset  = 8
	robustPendingOffset = 16
)

// decodeRobustWord decodes a pointer or long read from a robust list.
func decodeRobustWord(b []byte) uint64 {
	return binary.LittleEndian.Uint64(b)
}
