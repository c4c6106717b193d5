package serve

import (
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ipNet(t *testing.T, cidr string) net.Addr {
	t.Helper()
	ip, n, err := net.ParseCIDR(cidr)
	require.NoError(t, err)
	n.IP = ip
	return n
}

func TestOnEveryInterfaceItNamesTheAddressesThatOpenThePage(t *testing.T) {
	ifaces := []net.Addr{
		ipNet(t, "127.0.0.1/8"), ipNet(t, "::1/128"),
		ipNet(t, "192.168.1.5/24"), ipNet(t, "fe80::1/64"), ipNet(t, "2001:db8::5/64"), ipNet(t, "10.0.0.7/8"),
	}
	dual := &net.TCPAddr{IP: net.IPv6unspecified, Port: 7777}
	assert.Equal(t, []string{"127.0.0.1:7777", "192.168.1.5:7777", "10.0.0.7:7777", "[2001:db8::5]:7777"}, openableAt(dual, ifaces))
	v4 := &net.TCPAddr{IP: net.IPv4zero, Port: 7777}
	assert.Equal(t, []string{"127.0.0.1:7777", "192.168.1.5:7777", "10.0.0.7:7777"}, openableAt(v4, ifaces))
	assert.Equal(t, []string{"127.0.0.1:7777"}, openableAt(dual, nil), "loopback, whatever the interfaces")

	var out strings.Builder
	printAddresses(&out, dual, "T")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	assert.Equal(t, "ralph serve: listening on port 7777 of every interface: other hosts reach it, so every request needs the token", lines[0])
	assert.Equal(t, "ralph serve: open the page at http://127.0.0.1:7777/?token=T#token=T", lines[1])
	assert.NotContains(t, out.String(), "[::]", "no address no one can open")
}

func TestOnOneAddressItNamesIt(t *testing.T) {
	var out strings.Builder
	printAddresses(&out, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7777}, "T")
	assert.Equal(t, "ralph serve: listening on http://127.0.0.1:7777/#token=T\n", out.String())
	out.Reset()
	printAddresses(&out, &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 7777}, "T")
	assert.Contains(t, out.String(), "open the page at http://10.0.0.7:7777/?token=T#token=T\n")
}
