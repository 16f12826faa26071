package frame

import "strconv"

// Code classifies a failure of this package. It is an error itself, so a
// caller tests for a class with errors.Is(err, frame.ErrBadMagic) whatever
// the concrete error type (*DecodeError, *EncodeError, *PackageError).
type Code uint8

// Frame decode failures, in the reference decoder's check order.
const (
	_                   Code = iota
	ErrTooShort              // fewer than 14 bytes
	ErrBadMagic              // byte 0 is not 0xEF
	ErrBadVersion            // byte 1 is not 1
	ErrAttrCount             // keyCount over 64 (decode and encode)
	ErrDataLength            // dataLen negative or over 8 MiB (decode and encode)
	ErrDataBeyondBuffer      // dataLen longer than everything after the header
	ErrNamePrefix            // attribute name length prefix cut off
	ErrStringLength          // name or value length beyond the remaining bytes
	ErrValuePrefix           // attribute value length prefix cut off
	ErrDataRemaining         // dataLen longer than what the attributes left

	// Encode-only limits.
	ErrNameLength  // attribute name over 256 bytes
	ErrValueLength // attribute value over 4096 bytes
	ErrFrameSize   // encoded frame over 16 MiB

	// Legacy MeshMessage TCP package failures.
	ErrPackageTruncated // fewer bytes than the package's length fields promise
	ErrPackageMagic     // magic is not "EventMesh" or version not "0000"
	ErrPackageLength    // inconsistent or negative length fields
	ErrPackageTooLarge  // over the 4 MiB frame limit
	ErrPackageHeader    // header is not the expected JSON object
	ErrPackageCommand   // cmd missing or not a known command name
	ErrPackageBody      // body is not the EventMeshMessage JSON the command implies
)

var codeText = [...]string{
	ErrTooShort:         "frame too short",
	ErrBadMagic:         "bad frame magic",
	ErrBadVersion:       "unsupported frame version",
	ErrAttrCount:        "frame attribute count exceeds limit",
	ErrDataLength:       "frame data length exceeds limit",
	ErrDataBeyondBuffer: "frame data length exceeds the provided buffer",
	ErrNamePrefix:       "truncated frame: attribute name length prefix",
	ErrStringLength:     "string length exceeds the remaining buffer",
	ErrValuePrefix:      "truncated frame: attribute value length prefix",
	ErrDataRemaining:    "frame data length exceeds the remaining buffer",
	ErrNameLength:       "attribute name length exceeds limit",
	ErrValueLength:      "attribute value length exceeds limit",
	ErrFrameSize:        "encoded frame size exceeds limit",
	ErrPackageTruncated: "truncated package",
	ErrPackageMagic:     "invalid package magic or version",
	ErrPackageLength:    "invalid package length",
	ErrPackageTooLarge:  "package size exceeds limit",
	ErrPackageHeader:    "invalid package header",
	ErrPackageCommand:   "invalid package command",
	ErrPackageBody:      "invalid package body",
}

func (c Code) Error() string {
	if int(c) < len(codeText) && codeText[c] != "" {
		return codeText[c]
	}
	return "frame error " + strconv.Itoa(int(c))
}

// DecodeError is a frame that Decode rejects. Reason says what the
// reference decoder's IllegalArgumentException says, in Go's words.
//
// Offset is the byte offset within the decoded buffer of the field that
// could not be read or whose value is rejected: 0 for a short header or bad
// magic, 1 for the version, 8 for keyCount, 10 for every data length check,
// and the start of the length prefix for attribute errors.
type DecodeError struct {
	Offset int
	Code   Code
	Reason string
}

func (e *DecodeError) Error() string {
	return "frame: " + e.Reason + " (offset " + strconv.Itoa(e.Offset) + ")"
}

// Unwrap exposes the Code for errors.Is.
func (e *DecodeError) Unwrap() error { return e.Code }

// EncodeError is a limit the reference encoder enforces.
type EncodeError struct {
	Code   Code
	Reason string
}

func (e *EncodeError) Error() string { return "frame: " + e.Reason }

// Unwrap exposes the Code for errors.Is.
func (e *EncodeError) Unwrap() error { return e.Code }

// PackageError is a legacy MeshMessage TCP package that DecodePackage
// rejects; Offset is the byte offset in the input of the offending field.
type PackageError struct {
	Offset int
	Code   Code
	Reason string
}

func (e *PackageError) Error() string {
	return "meshmessage package: " + e.Reason + " (offset " + strconv.Itoa(e.Offset) + ")"
}

// Unwrap exposes the Code for errors.Is.
func (e *PackageError) Unwrap() error { return e.Code }
