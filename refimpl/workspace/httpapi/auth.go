package httpapi

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
)

// principal is an authenticated caller.
type principal struct {
	user  string
	admin bool
}

// tokenTable maps the SHA-256 of each token to its user. Looking tokens up
// by digest keeps the lookup's timing independent of how much of a guessed
// token matches a real one.
type tokenTable map[[sha256.Size]byte]principal

func newTokenTable(tokens map[string]string, admins map[string]bool) tokenTable {
	t := make(tokenTable, len(tokens))
	for tok, user := range tokens {
		if tok == "" || user == "" {
			continue
		}
		t[sha256.Sum256([]byte(tok))] = principal{user: user, admin: admins[user]}
	}
	return t
}

// authenticate reads "Authorization: Bearer <token>"; ok is false with the
// reason when the header is missing, malformed or names no user.
func (t tokenTable) authenticate(r *http.Request) (p principal, reason string, ok bool) {
	if len(r.Header.Values("Authorization")) > 1 {
		// Which one counts would be a guess: a proxy may have added one.
		return principal{}, "more than one Authorization header: send exactly one", false
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		return principal{}, "missing bearer token (Authorization: Bearer <token>)", false
	}
	scheme, tok, found := strings.Cut(h, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return principal{}, "malformed Authorization header: want Bearer <token>", false
	}
	p, ok = t[sha256.Sum256([]byte(strings.TrimSpace(tok)))]
	if !ok {
		return principal{}, "invalid bearer token", false
	}
	return p, "", true
}

// MinTokenLength is the shortest bearer token ParseTokens accepts: a short
// token is guessed (tokens are looked up in constant time, but nothing
// limits how often a client may try).
const MinTokenLength = 16

// ParseTokens parses a token list such as "tok1=alice,tok2=bob:admin":
// comma-separated entries token=user, a user followed by ":admin" having
// the admin role. Spaces around entries are ignored. Errors name the entry
// by position and never repeat a token.
func ParseTokens(spec string) (tokens map[string]string, admins map[string]bool, err error) {
	tokens, admins = map[string]string{}, map[string]bool{}
	roles := map[string]bool{} // user → admin, to catch a user given two roles
	for i, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		n := i + 1
		if entry == "" {
			return nil, nil, fmt.Errorf("entry %d is empty", n)
		}
		tok, user, found := strings.Cut(entry, "=")
		if !found {
			return nil, nil, fmt.Errorf("entry %d: want token=user or token=user:admin", n)
		}
		if tok == "" || strings.ContainsAny(tok, " \t\r\n") {
			return nil, nil, fmt.Errorf("entry %d: the token is empty or contains spaces", n)
		}
		if len(tok) < MinTokenLength {
			return nil, nil, fmt.Errorf("entry %d: the token has %d characters; a token needs at least %d (e.g. openssl rand -hex 16)", n, len(tok), MinTokenLength)
		}
		user, role, hasRole := strings.Cut(user, ":")
		if hasRole && role != "admin" {
			return nil, nil, fmt.Errorf("entry %d: unknown role %q (the only role is admin)", n, role)
		}
		if user == "" || strings.ContainsAny(user, " \t\r\n=") {
			return nil, nil, fmt.Errorf("entry %d: the user name is empty or contains spaces or '='", n)
		}
		if _, dup := tokens[tok]; dup {
			return nil, nil, fmt.Errorf("entry %d repeats the token of an earlier entry", n)
		}
		if was, seen := roles[user]; seen && was != hasRole {
			return nil, nil, fmt.Errorf("entry %d: user %q is given the admin role by one token and not by another", n, user)
		}
		roles[user] = hasRole
		tokens[tok] = user
		if hasRole {
			admins[user] = true
		}
	}
	return tokens, admins, nil
}
