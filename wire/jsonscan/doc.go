// Package jsonscan reads JSON text in place, without decoding it: whether
// a body is one valid JSON value (Valid, a strict reading of the grammar
// in front of encoding/json's), where the value of an object's member
// starts (LastMember), where the value at a path of keys starts, found in
// the pass that validates (Lookup), where a value ends, and a string's
// text when it has no escape. It answers only what it can read for certain and says false
// otherwise, so that a caller decodes with encoding/json instead.
//
// The oracle daemon and the oracle judge extract a value from every body a
// data source serves (ORACLE-SPEC 3.4). What the value is and how it is
// rendered is each one's own reading of the spec; finding it in the bytes
// is JSON syntax, which they share here, held to encoding/json by tests.
package jsonscan
