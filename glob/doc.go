// Package glob matches strings against Redis's glob-style patterns
// (stringmatchlen in util.c, Redis 7.0): * ? [abc] [^abc] [a-z] and \
// escapes, case-sensitive (Match) for KEYS, SCAN MATCH and ACL key
// patterns, or ignoring ASCII case (MatchFold) for CONFIG GET and COMMAND
// LIST FILTERBY PATTERN. Unlike Redis's recursive matcher it runs in one
// pass, and it gives up at the same star nesting so both answer alike.
package glob
