package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/moby/moby/client"
)

// Owner labels: which process on which boot of which host started a
// container. Ryuk is off (no registry to pull it from), so a test binary
// killed by a timeout leaves its containers behind; the next process to
// probe Docker removes those whose owner is gone (Reap).
const (
	LabelOwnerPID  = Label + ".pid"
	LabelOwnerBoot = Label + ".boot"
	LabelOwnerHost = Label + ".host"
)

// ownerLabels are this process's owner labels.
func ownerLabels() map[string]string {
	host, _ := os.Hostname()
	return map[string]string{LabelOwnerPID: strconv.Itoa(os.Getpid()), LabelOwnerBoot: bootID(), LabelOwnerHost: host}
}

// bootID is this boot's id ("" where the kernel does not say).
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// orphaned reports whether a container with these labels was started by
// a process of this host and boot that no longer runs. A container of
// another host or boot, or one without owner labels, is never this
// process's to judge.
func orphaned(labels map[string]string, host, boot string, alive func(pid int) bool) bool {
	if boot == "" || labels[LabelOwnerBoot] != boot || labels[LabelOwnerHost] != host {
		return false
	}
	pid, err := strconv.Atoi(labels[LabelOwnerPID])
	if err != nil || pid <= 0 {
		return false
	}
	return !alive(pid)
}

// processAlive reports whether pid names a process (one of another user
// counts: only "no such process" is dead).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || !errors.Is(err, syscall.ESRCH)
}

// Reap removes the containers this package started (Label) in processes
// of this host and boot that have ended, with their anonymous volumes,
// and returns their names. It is best effort: the first error ends it.
func Reap(ctx context.Context) ([]string, error) {
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return nil, fmt.Errorf("reap: docker client: %w", err)
	}
	defer cli.Close()
	res, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", LabelOwnerPID)})
	if err != nil {
		return nil, fmt.Errorf("reap: list containers: %w", err)
	}
	host, _ := os.Hostname()
	boot := bootID()
	var removed []string
	for _, c := range res.Items {
		if !orphaned(c.Labels, host, boot, processAlive) {
			continue
		}
		if _, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			return removed, fmt.Errorf("reap: remove %s: %w", c.ID, err)
		}
		name := c.ID
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		removed = append(removed, name)
	}
	return removed, nil
}
