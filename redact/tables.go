package redact

// The word tables (pairTable) and the encoded token prefixes are data
// made from the word lists of this package by builtTables. They are kept
// in tables_gen.go as composite literals, which the linker lays out in
// the binary: nothing is built at process start (building them took
// 0.4 ms and 1134 allocations, at every start of every command).
// TestTablesGenerated fails when a list changes and tables_gen.go was not
// made again (E2ATAP_GENERATE=1 go test -run TestTablesGenerated
// ./redact/ writes it).

// builtTables makes the tables from their words.
func builtTables() (tables []namedTable, encoded []string) {
	n := b64Needles()
	encoded = n[:len(n):len(n)]
	vendor := vendorNeedles()
	var tok []string
	for _, w := range credNeedles {
		if w != "bearer" && w != "basic" {
			tok = append(tok, w)
		}
	}
	return []namedTable{
		{"specialTable", newPairTable(specialWords), "the special words of keys (mayBeSpecial)"},
		{"needleTable", makePairTable(append(append(append(append(append(append(append([]string(nil), specialWords...), credNeedles...), vendor...), cmdNeedles...), oracleNeedles...), cjkPctNeedles()...), holdNeedles...),
			append(append(append(append(append([]string(nil), encoded...), exactVendorNeedles()...), dsnNeedles...), cjkNeedles()...), cjkEscNeedles()...)), "MayHoldCredential's needles"},
		{"b64Table", newExactTable(encoded), "the encoded token prefixes (b64state.check)"},
		{"tokenTable", makePairTable(append(append(append(append(tok, vendor...), cmdNeedles...), oracleNeedles...), tailNeedles...), append(append(append([]string(nil), encoded...), digitNeedles...), dsnNeedles...)), "MayStartCredential's token needles"},
		{"keyTable", newPairTable(credWords), "MayStartCredential's key words"},
		{"cmdTable", makePairTable(cmdFolded, cmdExact), "the words of the commands cmdArg takes a value after (cmdMay)"},
	}, encoded
}

// namedTable is a table of builtTables and the name of its variable.
type namedTable struct {
	name string
	t    *pairTable
	doc  string
}
