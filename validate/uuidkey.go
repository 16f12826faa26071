package validate

// Stream keys that end in a canonical UUID (8-4-4-4-12 lowercase hex, as
// Python's str(uuid4()) and Java's UUID.toString write it) keep it as its
// 16 bytes in the table's key; composite marks such a key by clearing
// packedUUID in its protocol byte ('e' → 'E', 'f' → 'F'), so that a packed
// key never equals a plain one. Uppercase or otherwise shaped ids are kept
// as they are.

const (
	uuidLen    = 36
	packedUUID = 0x20 // the bit of the protocol byte, set in a plain key
)

func isUUID(b []byte) bool {
	if len(b) != uuidLen {
		return false
	}
	for i, c := range b {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// appendUUIDBytes appends the 16 bytes of canonical UUID u.
func appendUUIDBytes(dst, u []byte) []byte {
	for i := 0; i < uuidLen; i++ {
		if u[i] == '-' {
			continue
		}
		dst = append(dst, unhex(u[i])<<4|unhex(u[i+1]))
		i++
	}
	return dst
}

// appendUUIDText appends the canonical text of the 16 bytes b.
func appendUUIDText(dst, b []byte) []byte {
	const digits = "0123456789abcdef"
	for i, x := range b[:16] {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, digits[x>>4], digits[x&15])
	}
	return dst
}
