package natstest_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/natstest"
)

func TestStandalone(t *testing.T) {
	c := natstest.StartCluster(t, 1)
	assert.Equal(t, c.URL(0), c.URLs())
	js := connect(t, c.URLs())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}, Storage: jetstream.FileStorage})
	require.NoError(t, err)
	_, err = js.Publish(ctx, "s", []byte("hello"))
	require.NoError(t, err)
}

func TestClusterSurvivesOneServer(t *testing.T) {
	c := natstest.StartCluster(t, 3)
	assert.Len(t, c.URLList(), 3)
	js := connect(t, c.URLs())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}, Storage: jetstream.FileStorage, Replicas: 3})
	require.NoError(t, err)
	_, err = js.Publish(ctx, "s", []byte("one"))
	require.NoError(t, err)

	c.Shutdown(0)
	assert.Nil(t, c.Server(0))
	publish(ctx, t, js, "two")

	c.Restart(0)
	require.NotNil(t, c.Server(0))
	// The restarted server has the messages it stored before and after.
	js0 := connect(t, c.URL(0))
	info, err := js0.Stream(ctx, "S")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		si, err := info.Info(ctx)
		return err == nil && si.State.Msgs == 2
	}, 30*time.Second, 50*time.Millisecond)
}

func TestWithUser(t *testing.T) {
	c := natstest.StartCluster(t, 1, natstest.WithUser("ralph", "secret"))
	_, err := nats.Connect(c.URLs(), nats.NoReconnect())
	require.Error(t, err)
	nc, err := nats.Connect(c.URLs(), nats.UserInfo("ralph", "secret"))
	require.NoError(t, err)
	nc.Close()
}

// publish retries while the cluster elects new leaders after a server went
// away.
func publish(ctx context.Context, t *testing.T, js jetstream.JetStream, data string) {
	t.Helper()
	var err error
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err = js.Publish(pctx, "s", []byte(data))
		cancel()
		if err == nil {
			return
		}
		t.Logf("publish: %v (connected to %s, status %v)", err, js.Conn().ConnectedUrl(), js.Conn().Status())
		time.Sleep(100 * time.Millisecond)
	}
	require.NoError(t, err)
}

func connect(t *testing.T, urls string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(urls, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	return js
}
