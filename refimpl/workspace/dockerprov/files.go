package dockerprov

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/archive"
)

// helperMountPath is where a file helper container mounts the volume.
const helperMountPath = contracts.StorageJobMountPath

// WriteFile writes data to path (relative, clean: archive.CheckPath) in
// the home volume of id, creating parent directories; files and
// directories it creates belong to Config.User. It works whether or not the
// workspace runs, through a created-but-never-started helper container and
// the copy-to-container API. Not part of the ports: tests and end-to-end
// checks use it to put bytes in a volume.
func (p *Provider) WriteFile(ctx context.Context, id, name string, data []byte) error {
	if err := archive.CheckPath(name); err != nil {
		return fmt.Errorf("write file into volume of %s: %w", id, err)
	}
	content, err := p.fileTar(name, data)
	if err != nil {
		return fmt.Errorf("write %s into volume of %s: %w", name, id, err)
	}
	return p.withHelper(ctx, id, func(ctr string) error {
		_, err := p.cli.CopyToContainer(ctx, ctr, client.CopyToContainerOptions{
			DestinationPath: helperMountPath,
			Content:         bytes.NewReader(content),
		})
		if err != nil {
			return fmt.Errorf("write %s into volume of %s: %w", name, id, err)
		}
		return nil
	})
}

// fileTar is a tar stream holding name's parent directories and the file.
func (p *Provider) fileTar(name string, data []byte) ([]byte, error) {
	uid, gid, err := parseUser(p.cfg.User)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	parts := strings.Split(name, "/")
	for i := 1; i < len(parts); i++ {
		hdr := &tar.Header{
			Typeflag: tar.TypeDir, Name: strings.Join(parts[:i], "/") + "/", Mode: 0o755,
			Uid: uid, Gid: gid, ModTime: now, Format: tar.FormatPAX,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("tar header: %w", err)
		}
	}
	hdr := &tar.Header{
		Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data)),
		Uid: uid, Gid: gid, ModTime: now, Format: tar.FormatPAX,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, fmt.Errorf("tar header: %w", err)
	}
	if _, err := tw.Write(data); err != nil {
		return nil, fmt.Errorf("tar body: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("tar close: %w", err)
	}
	return buf.Bytes(), nil
}

// ReadFiles returns every regular file of the home volume of id by its
// path relative to the volume's root (directories, links and special
// files are left out), through a never-started helper container and the
// copy-from-container API. Not part of the ports (see WriteFile).
func (p *Provider) ReadFiles(ctx context.Context, id string) (map[string][]byte, error) {
	var files map[string][]byte
	err := p.withHelper(ctx, id, func(ctr string) error {
		res, err := p.cli.CopyFromContainer(ctx, ctr, client.CopyFromContainerOptions{SourcePath: helperMountPath + "/."})
		if err != nil {
			return fmt.Errorf("read volume of %s: %w", id, err)
		}
		// The daemon holds the container's lock until the stream is read:
		// drain and close it whatever happens.
		defer func() {
			_, _ = io.Copy(io.Discard, res.Content)
			_ = res.Content.Close()
		}()
		files, err = readTar(res.Content)
		if err != nil {
			return fmt.Errorf("read volume of %s: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}

// readTar collects the regular files of a tar stream of "./"-relative
// entries.
func readTar(r io.Reader) (map[string][]byte, error) {
	files := make(map[string][]byte)
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("tar: %w", err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		name := strings.TrimPrefix(path.Clean(hdr.Name), "./")
		if archive.CheckPath(name) != nil {
			return nil, fmt.Errorf("tar: unexpected entry %q", hdr.Name)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("tar: read %s: %w", name, err)
		}
		files[name] = data
	}
}

// withHelper runs fn with a created, never-started container that mounts
// the volume of id at /data, and removes the container afterwards. The
// volume must exist: the mount would create it otherwise.
func (p *Provider) withHelper(ctx context.Context, id string, fn func(ctr string) error) error {
	if err := p.requireVolume(ctx, id); err != nil {
		return err
	}
	if _, err := p.ensureImage(ctx, p.cfg.StorageJobImage); err != nil {
		return err
	}
	res, err := p.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &container.Config{
			Image:  p.cfg.StorageJobImage,
			Labels: p.labels(id, roleFiles),
		},
		HostConfig: &container.HostConfig{
			Mounts:      []mount.Mount{volumeMount(id, helperMountPath)},
			NetworkMode: "none",
		},
	})
	if err != nil {
		return fmt.Errorf("create file helper for volume of %s: %w", id, err)
	}
	defer p.cleanupContainer(ctx, res.ID, "file access")
	if err := p.mountedOwnVolume(ctx, id, res.ID); err != nil {
		return err
	}
	return fn(res.ID)
}
