package backends

// ChainMember is one backend of a fallback chain as ralph doctor judges
// it: can it run (Readiness), and does it have credentials.
type ChainMember struct {
	Readiness
	// Credentials is "found", "none" or "unknown" (ralph does not know
	// where the program keeps them: the command backend).
	Credentials string        `json:"credentials"`
	Auth        []AuthSetting `json:"auth,omitempty"`
	AuthHint    string        `json:"auth_hint,omitempty"`
}

// Credential states of a ChainMember.
const (
	CredentialsFound   = "found"
	CredentialsNone    = "none"
	CredentialsUnknown = "unknown"
)

// JudgeMember judges one backend of a chain: Judge, and the auth
// settings Diagnose finds for it (names only, never a secret; no version
// probe).
func JudgeMember(u Use) ChainMember {
	m := ChainMember{Readiness: Judge(u), Credentials: CredentialsUnknown}
	name := Canonical(u.Opts.Name)
	if m.Picked != "" {
		name = m.Picked
	}
	if _, ok := authSpecs[name]; !ok {
		return m
	}
	d, err := Diagnose(name, DiagnoseOptions{Command: u.Opts.Command, Env: u.Opts.Env, SkipVersion: true})
	if err != nil {
		return m
	}
	m.Auth, m.AuthHint, m.Credentials = d.Auth, d.AuthHint, CredentialsNone
	if len(d.Auth) > 0 {
		m.Credentials = CredentialsFound
	}
	return m
}
