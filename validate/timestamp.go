package validate

import (
	"encoding/binary"
	"math/bits"
)

// parseRFC3339 checks an RFC 3339 date-time without allocating:
// YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM), 'T' and 'Z' in either case. utc
// reports a Z or a zero offset (+00:00 or -00:00).
//
// Every response carries a timestamp of its own, so it is checked at
// every record: the date and time (19 bytes) as three words at once, the
// digits and separators of each by masks, then the values without a loop.
// FuzzParseRFC3339 holds it to the byte-at-a-time check it replaced.
func parseRFC3339(b []byte) (valid, utc bool) { return (*tsMemo)(nil).parse(b) }

// tsMemo is the date and time (the first 19 bytes, as parse reads them) of
// the last valid timestamp parse saw: the records of a file or a stream
// mostly share them (they differ in the fraction), and what they say
// depends on those bytes only, so a timestamp that repeats them has only
// its fraction and offset checked (the date's checks were half the cost).
// x is 0 when none was seen (a valid one has '-' in it). An engine keeps
// one; a nil *tsMemo keeps nothing.
type tsMemo struct{ x, y, z uint64 }

// parse is parseRFC3339, remembering in m.
func (m *tsMemo) parse(b []byte) (valid, utc bool) {
	if len(b) < 20 {
		return false, false
	}
	// Little-endian words: byte i of a word is bits 8i to 8i+7.
	x := binary.LittleEndian.Uint64(b[0:8])           // YYYY-MM-
	y := binary.LittleEndian.Uint64(b[8:16])          // DDTHH:MM
	z := uint64(binary.LittleEndian.Uint32(b[16:20])) // :SS and b[19], not checked here
	if m == nil || m.x == 0 || x != m.x || y != m.y || z&0xffffff != m.z {
		if !dateTime(x, y, z) {
			return false, false
		}
		if m != nil {
			m.x, m.y, m.z = x, y, z&0xffffff
		}
	}
	return timeRest(b[19:])
}

// dateTime checks YYYY-MM-DDTHH:MM:SS, the words x, y and the low three
// bytes of z.
func dateTime(x, y, z uint64) bool {
	const (
		xDigits = 0x00ffff00ffffffff // bytes 0-3, 5 and 6
		xSeps   = 0x2d00002d00000000 // '-' at bytes 4 and 7
		yDigits = 0xffff00ffff00ffff // bytes 0, 1, 3, 4, 6 and 7
		ySepsAt = 0x0000ff0000ff0000 // bytes 2 and 5
		ySeps   = 0x00003a0000740000 // ':' at byte 5, 't' at byte 2 (a 'T' with 0x20 set)
		zDigits = 0x00ffff00         // bytes 1 and 2
	)
	if !digits(x, xDigits) || !digits(y, yDigits) || !digits(z, zDigits) ||
		x&^xDigits != xSeps || (y|0x200000)&ySepsAt != ySeps || byte(z) != ':' {
		return false
	}
	// The digits' values, each in its byte (the separators' bytes are left
	// as they are, never read).
	const zeros = 0x3030303030303030
	dx, dy, dz := x-zeros&xDigits, y-zeros&yDigits, z-zeros&zDigits
	d := func(w uint64, k uint) int { return int(w >> (8 * k) & 0xff) }
	year := d(dx, 0)*1000 + d(dx, 1)*100 + d(dx, 2)*10 + d(dx, 3)
	month, day := d(dx, 5)*10+d(dx, 6), d(dy, 0)*10+d(dy, 1)
	hour, minute, sec := d(dy, 3)*10+d(dy, 4), d(dy, 6)*10+d(dy, 7), d(dz, 1)*10+d(dz, 2)
	return month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month) && hour <= 23 && minute <= 59 && sec <= 60
}

// timeRest checks what follows the seconds: [.frac](Z|±HH:MM), rest not
// empty.
func timeRest(rest []byte) (valid, utc bool) {
	if rest[0] == '.' {
		n := 1
		for ; len(rest)-n >= 8; n += 8 {
			if m := nonDigits(binary.LittleEndian.Uint64(rest[n:])); m != 0 {
				n += bits.TrailingZeros64(m) / 8
				goto frac
			}
		}
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
	frac:
		if n == 1 {
			return false, false
		}
		rest = rest[n:]
	}
	switch {
	case len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
		return true, true
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, okh := num2(rest[1], rest[2])
		om, okm := num2(rest[4], rest[5])
		if !okh || !okm || oh > 23 || om > 59 {
			return false, false
		}
		return true, oh == 0 && om == 0
	}
	return false, false
}

// digits says whether the bytes of w that mask selects (0xff each) are all
// ASCII digits: high nibble 3, low nibble below 10 (adding 6 to a low
// nibble carries into the high one from 10 up; no carry leaves a byte).
func digits(w, mask uint64) bool {
	const hi, lo, six = 0xf0f0f0f0f0f0f0f0, 0x0f0f0f0f0f0f0f0f, 0x0606060606060606
	return w&hi&mask == 0x3030303030303030&mask && ((w&lo&mask)+six&mask)&hi == 0
}

// nonDigits has the high bit of every byte of w that is not an ASCII
// digit set, and no other bit.
func nonDigits(w uint64) uint64 {
	const hi, lo, six, low7 = 0xf0f0f0f0f0f0f0f0, 0x0f0f0f0f0f0f0f0f, 0x0606060606060606, 0x7f7f7f7f7f7f7f7f
	bad := (w&hi ^ 0x3030303030303030) | (w&lo+six)&hi // non-zero bytes: not a digit
	return ((bad&low7 + low7) | bad) &^ low7
}

// num2 is the value of two ASCII digits.
func num2(a, b byte) (int, bool) {
	if a < '0' || a > '9' || b < '0' || b > '9' {
		return 0, false
	}
	return int(a-'0')*10 + int(b-'0'), true
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
