package serve

import (
	"fmt"
	"io"
	"net"
	"strconv"
)

// printAddresses says, once, where the server listens, with the token in
// each address, for a browser to open. On loopback the token is in the
// fragment, for the page's requests that change something; off loopback
// every request needs it, so it is in the query too. A server on every
// interface (0.0.0.0, [::]) names the addresses it can be opened at: the
// loopback's and each interface's, not the wildcard no browser can open.
func printAddresses(out io.Writer, addr *net.TCPAddr, token string) {
	switch {
	case addr.IP.IsLoopback():
		fmt.Fprintf(out, "ralph serve: listening on http://%s/#token=%s\n", addr, token)
	case addr.IP.IsUnspecified():
		fmt.Fprintf(out, "ralph serve: listening on port %d of every interface: other hosts reach it, so every request needs the token\n", addr.Port)
		ifaces, _ := net.InterfaceAddrs() // without them, the loopback's address still opens the page
		for _, host := range openableAt(addr, ifaces) {
			fmt.Fprintf(out, "ralph serve: open the page at http://%s/?token=%s#token=%s\n", host, token, token)
		}
	default:
		fmt.Fprintf(out, "ralph serve: listening on http://%s/#token=%s\n", addr, token)
		fmt.Fprintf(out, "ralph serve: %s is reachable from other hosts: every request needs the token; open the page at http://%s/?token=%s#token=%s\n",
			addr.IP, addr, token, token)
	}
}

// openableAt is the host:port addresses a server listening on every
// interface (addr) can be opened at: the loopback's first, then each
// interface address of ifaces a browser can use (no link-local address,
// which needs its interface named; no IPv6 one for an IPv4-only socket).
func openableAt(addr *net.TCPAddr, ifaces []net.Addr) []string {
	port := strconv.Itoa(addr.Port)
	ipv4Only := addr.IP.To4() != nil
	out := []string{net.JoinHostPort("127.0.0.1", port)}
	var v6 []string
	for _, a := range ifaces {
		ipnet, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip := ipnet.IP
		if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsUnspecified() || ip.IsMulticast() {
			continue
		}
		switch {
		case ip.To4() != nil:
			out = append(out, net.JoinHostPort(ip.String(), port))
		case !ipv4Only:
			v6 = append(v6, net.JoinHostPort(ip.String(), port))
		}
	}
	return append(out, v6...)
}
